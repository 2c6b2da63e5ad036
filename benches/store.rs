//! Store benchmarks, each next to its physical floor measured in the same run.
//!
//! - `point_read`: `Engine::read_item` on random keys of a 10-range container holding
//!   100,000 sales orders of about 1 KB, next to a raw heed get of the same stored bytes
//!   (one read txn per get, as the engine opens one per read) and that get plus a
//!   `serde_json::Value` parse. Target: engine ≤ 2 × (raw get + parse).
//! - `import`: `Engine::import_records` of 20,000 items into a fresh 10-range container,
//!   next to raw heed puts of the same bytes (1,000 per durable write txn) into a fresh env.
//!   Setup (temp dir, env, container) is outside the timing. Target: engine ≥ 0.5 × raw;
//!   the same import into a container whose indexing mode is none: ≥ 0.8 × raw (summary
//!   table only).
//! - footprint (summary only): the data file after the 20,000-item import and after the
//!   100,000-item container's, part by part, next to the same item records and index
//!   entries copied in key order into fresh raw heed environments. Target: ≤ 1.5 × raw.
//! - `change_feed`: draining the 100,000 events of the point-read container from the
//!   beginning in pages of 1,000 with the continuation token, in latest-version and
//!   all-versions mode, next to a raw cursor walk copying out the same 100,000 values.
//!
//! After criterion's report a summary table prints medians measured here with `Instant`
//! over fixed operation counts, the engine and floor variants interleaved round by round so
//! that machine noise hits them alike, and the engine/floor ratios.
//!
//! `cargo bench -p cosmoscope-bench --bench store` runs the full benchmark; `cargo test -p
//! cosmoscope-bench --benches` (criterion's test mode) runs a small smoke version of
//! everything.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use cosmoscope::engine::Engine;
use cosmoscope::engine::import::Record;
use cosmoscope::engine::{Backend, FeedMode, FeedRequest, FeedStart};
use cosmoscope::engine::{ContainerSettings, IndexingPolicy, Throughput};
use criterion::{Criterion, SamplingMode, Throughput as Rate};
use heed::{Env, WithoutTls};
use serde_json::{Value, json};

const DB: &str = "bench";
const CONTAINER: &str = "orders";
/// Manual 60,000 RU/s gives a new container 10 physical partitions.
const RANGES: usize = 10;
const PUTS_PER_TXN: usize = 1000;
const FEED_PAGE: usize = 1000;

/// Sizes of one run: the full benchmark, or a smoke run in criterion's test mode.
struct Sizes {
    items: usize,
    customers: usize,
    import_items: usize,
    read_rounds: usize,
    reads_per_round: usize,
    import_rounds: usize,
    feed_rounds: usize,
}

impl Sizes {
    fn for_args() -> Sizes {
        let args: Vec<String> = std::env::args().collect();
        let bench = args.iter().any(|a| a == "--bench");
        let smoke = !bench || args.iter().any(|a| a == "--test" || a == "--list");
        if smoke {
            Sizes {
                items: 2_000,
                customers: 200,
                import_items: 1_000,
                read_rounds: 1,
                reads_per_round: 1_000,
                import_rounds: 1,
                feed_rounds: 1,
            }
        } else {
            Sizes {
                items: 100_000,
                customers: 10_000,
                import_items: 20_000,
                read_rounds: 7,
                reads_per_round: 50_000,
                import_rounds: 7,
                feed_rounds: 5,
            }
        }
    }
}

// ---- deterministic data: see benches/common ----

/// One sales order shaped like perf.md's data set (without system properties; the engine
/// adds `_rid`, `_self`, `_etag`, `_attachments` and `_ts`).
struct Order {
    id: String,
    customer_id: String,
    json: Vec<u8>,
}

fn generate(sizes: &Sizes) -> Vec<Order> {
    let mut customers_rng = Rng(0xC05_0500_0001);
    let customers: Vec<String> = (0..sizes.customers).map(|_| customers_rng.uuid()).collect();
    let mut rng = Rng(0x5A1E_5000_0002);
    (0..sizes.items)
        .map(|i| {
            let id = rng.uuid();
            let customer_id = rng.pick(&customers).clone();
            let doc = sales_order(&mut rng, i, (&id, &customer_id), |rng| {
                let person = format!("{} {}", rng.pick(&FIRST), rng.pick(&LAST));
                vec![("salesPerson", json!(person))]
            });
            let json = serde_json::to_vec(&doc).expect("serialize order");
            Order {
                id,
                customer_id,
                json,
            }
        })
        .collect()
}

fn records(orders: &[Order]) -> Vec<Record<'_>> {
    orders
        .iter()
        .enumerate()
        .map(|(i, o)| Record {
            line: i + 1,
            json: &o.json,
        })
        .collect()
}

// ---- engine and raw heed setup ----

fn open_engine(dir: &Path) -> Engine {
    open_engine_indexed(dir, None)
}

/// [`open_engine`] with an indexing policy (`None`: the default one).
fn open_engine_indexed(dir: &Path, policy: Option<IndexingPolicy>) -> Engine {
    let engine = Engine::open(dir).expect("open engine");
    engine.create_database(DB).expect("create database");
    let mut settings = ContainerSettings::new(vec!["/customerId".to_string()]);
    settings.throughput = Throughput::Manual(60_000);
    settings.indexing_policy = policy;
    let info = engine
        .create_container(DB, CONTAINER, settings)
        .expect("create container");
    assert_eq!(
        info.partition_count, RANGES,
        "Manual(60000) should give {RANGES} ranges"
    );
    engine
}

/// Puts `(key, value)` pairs, 1,000 per durable write txn.
fn raw_put_all<'a>(
    env: &Env<WithoutTls>,
    db: RawDb,
    pairs: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
) {
    let mut pairs = pairs.into_iter().peekable();
    while pairs.peek().is_some() {
        let mut wtxn = env.write_txn().expect("write txn");
        for (k, v) in pairs.by_ref().take(PUTS_PER_TXN) {
            db.put(&mut wtxn, k, v).expect("put");
        }
        wtxn.commit().expect("commit");
    }
}

// ---- the measured operations ----

fn engine_read(engine: &Engine, order: &Order) -> usize {
    let r = engine
        .read_item(DB, CONTAINER, &order.id, &json!(order.customer_id))
        .expect("read_item");
    black_box(r).body.map_or(0, |b| b.len())
}

/// One read txn per get, touching the value (length and a middle byte) like perf.md.
fn raw_get(env: &Env<WithoutTls>, db: RawDb, order: &Order) -> usize {
    let rtxn = env.read_txn().expect("read txn");
    let v = db
        .get(&rtxn, order.id.as_bytes())
        .expect("get")
        .expect("present");
    v.len() + v[v.len() / 2] as usize
}

fn raw_get_parse(env: &Env<WithoutTls>, db: RawDb, order: &Order) -> usize {
    let rtxn = env.read_txn().expect("read txn");
    let v = db
        .get(&rtxn, order.id.as_bytes())
        .expect("get")
        .expect("present");
    let value: Value = serde_json::from_slice(v).expect("parse");
    black_box(value).as_object().map_or(0, |o| o.len())
}

/// Imports into a fresh container in a fresh temp dir; only the import is timed.
fn engine_import(records: &[Record]) -> Duration {
    engine_import_indexed(records, None).0
}

/// [`engine_import`] under an indexing policy (`None`: the default one); also returns the
/// directory, holding the data file as the import left it.
fn engine_import_indexed(
    records: &[Record],
    policy: Option<IndexingPolicy>,
) -> (Duration, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = open_engine_indexed(dir.path(), policy);
    let started = Instant::now();
    let summary = engine
        .import_records(DB, CONTAINER, records, &mut |_| {})
        .expect("import");
    let elapsed = started.elapsed();
    assert_eq!(summary.items as usize, records.len());
    drop(engine);
    (elapsed, dir)
}

/// The footprint section of the report for the data file in `dir` (no engine has it open).
fn footprint_report(what: &str, dir: &Path) -> Vec<String> {
    let (footprint, raw_items, raw_index) = footprint_against_raw(dir);
    let mb = |b: u64| b as f64 / 1e6;
    let mut report = vec![
        format!("### Footprint: the data file after {what}, default indexing, no compaction"),
        "| part | entries | MB |".into(),
        "|---|---|---|".into(),
    ];
    for part in footprint.parts.iter().filter(|p| p.bytes > 0) {
        report.push(format!(
            "| {} | {} | {:.1} |",
            part.name,
            thousands(part.entries as f64),
            mb(part.bytes)
        ));
    }
    report.push(format!(
        "| free pages | | {:.1} |",
        mb(footprint.free_bytes)
    ));
    report.push(format!("| file | | {:.1} |", mb(footprint.file_bytes)));
    report.push(String::new());
    let raw = raw_items + raw_index;
    report.push(format!(
        "- raw heed, the same item records and index entries copied in key order into fresh envs: items {:.1} MB + index {:.1} MB = {:.1} MB",
        mb(raw_items),
        mb(raw_index),
        mb(raw)
    ));
    report.push(format!(
        "- file / raw (items + index): **{:.2}×**; target ≤ 1.5×",
        footprint.file_bytes as f64 / raw as f64
    ));
    report.push(String::new());
    report
}

/// The data file an import left next to its floor: the same item records and index
/// entries copied, in key order, into fresh raw heed environments (one per database), whose
/// pages are then full. Returns the data file's parts and the raw files' sizes.
fn footprint_against_raw(dir: &Path) -> (cosmoscope::engine::Footprint, u64, u64) {
    let footprint = Engine::open(dir)
        .expect("open engine")
        .footprint()
        .expect("footprint");
    let mut options = heed::EnvOpenOptions::new().read_txn_without_tls();
    options.map_size(1 << 36).max_dbs(16);
    // SAFETY: the engine that had this env open is dropped; it is opened once here.
    let env = unsafe { options.open(dir) }.expect("open data file");
    let wtxn = env.write_txn().expect("write txn");
    let [items, index]: [RawDb; 2] = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let items = opener.create_database(wtxn, Some("items"))?;
            let index = opener.create_database(wtxn, Some("index"))?;
            Ok(heed::CommitOrAbort::<_, ()>::Commit([items, index]))
        })
        .expect("open the data file's databases")
        .unwrap_commit();
    let rtxn = env.read_txn().expect("read txn");
    let copy = |db: RawDb| -> u64 {
        let raw_dir = tempfile::tempdir().expect("temp dir");
        let (raw_env, raw_db) = open_raw(raw_dir.path(), true);
        let mut wtxn = raw_env.write_txn().expect("write txn");
        for entry in db.iter(&rtxn).expect("iter") {
            let (k, v) = entry.expect("entry");
            raw_db
                .put_with_flags(&mut wtxn, heed::PutFlags::APPEND, k, v)
                .expect("append");
        }
        wtxn.commit().expect("commit");
        raw_env.force_sync().expect("sync");
        std::fs::metadata(raw_dir.path().join("data.mdb"))
            .expect("raw data file")
            .len()
    };
    (footprint, copy(items), copy(index))
}

/// Raw heed puts of the same bytes keyed by id into a fresh env; only the puts are timed.
fn raw_import(orders: &[Order]) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let (env, db) = open_raw(dir.path(), false);
    let started = Instant::now();
    raw_put_all(
        &env,
        db,
        orders.iter().map(|o| (o.id.as_bytes(), o.json.as_slice())),
    );
    let elapsed = started.elapsed();
    drop(env);
    elapsed
}

/// Reads the whole feed from the beginning, following continuation tokens; returns the
/// number of changes delivered.
fn drain_feed(engine: &Engine, mode: FeedMode) -> usize {
    let mut req = FeedRequest {
        start: FeedStart::Beginning,
        mode,
        range: None,
        max_items: FEED_PAGE,
        epk_range: None,
    };
    let mut delivered = 0;
    loop {
        let page = engine.read_feed(DB, CONTAINER, &req).expect("read_feed");
        if page.changes.is_empty() {
            return delivered;
        }
        delivered += page.changes.len();
        black_box(&page.changes);
        req.start = FeedStart::Continuation(page.continuation);
    }
}

/// Drains each physical partition on its own (`FeedRequest::range`), one after another;
/// returns the number of changes delivered. Shows what the container-wide merge costs.
fn drain_feed_per_range(engine: &Engine, mode: FeedMode) -> usize {
    let mut delivered = 0;
    for range in 0..RANGES as u32 {
        let mut req = FeedRequest {
            start: FeedStart::Beginning,
            mode,
            range: Some(range.to_string()),
            max_items: FEED_PAGE,
            epk_range: None,
        };
        loop {
            let page = engine.read_feed(DB, CONTAINER, &req).expect("read_feed");
            if page.changes.is_empty() {
                break;
            }
            delivered += page.changes.len();
            black_box(&page.changes);
            req.start = FeedStart::Continuation(page.continuation);
        }
    }
    delivered
}

/// The floor for a drain: one cursor walk over the same stored values, copying each out.
fn raw_walk(env: &Env<WithoutTls>, db: RawDb) -> usize {
    let rtxn = env.read_txn().expect("read txn");
    let mut n = 0;
    for entry in db.iter(&rtxn).expect("iter") {
        let (_, v) = entry.expect("entry");
        black_box(v.to_vec());
        n += 1;
    }
    n
}

// ---- summary ----

/// Timings of one variant over several rounds.
#[derive(Default)]
struct Samples(Vec<f64>);

impl Samples {
    fn push(&mut self, v: f64) {
        self.0.push(v);
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }

    fn n(&self) -> usize {
        self.0.len()
    }
}

/// Per-round ratios `a[i] / b[i]`.
fn ratios(a: &Samples, b: &Samples) -> Samples {
    Samples(a.0.iter().zip(&b.0).map(|(x, y)| x / y).collect())
}

fn ns_row(name: &str, s: &Samples) -> String {
    format!(
        "| {name} | {} ({}–{}) | {} |",
        thousands(s.median()),
        thousands(s.min()),
        thousands(s.max()),
        thousands(1e9 / s.median())
    )
}

fn rate_row(name: &str, seconds: &Samples, ops: usize) -> String {
    format!(
        "| {name} | {:.1} ({:.1}–{:.1}) | {} ({}–{}) |",
        seconds.median() * 1e3,
        seconds.min() * 1e3,
        seconds.max() * 1e3,
        thousands(ops as f64 / seconds.median()),
        thousands(ops as f64 / seconds.max()),
        thousands(ops as f64 / seconds.min())
    )
}

fn ratio_line(name: &str, r: &Samples, target: &str) -> String {
    format!(
        "- {name}: **{:.2}×** per-round {:.2}–{:.2} (n={}); {target}",
        r.median(),
        r.min(),
        r.max(),
        r.n()
    )
}

// ---- benchmarks ----

fn main() {
    let sizes = Sizes::for_args();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut report: Vec<String> = Vec::new();

    let orders = generate(&sizes);
    let avg_input = orders.iter().map(|o| o.json.len()).sum::<usize>() as f64 / orders.len() as f64;

    // One 10-range container with all items, serving the point reads and the feed.
    let engine_dir = tempfile::tempdir().expect("temp dir");
    let engine = open_engine(engine_dir.path());
    let all_records = records(&orders);
    let started = Instant::now();
    engine
        .import_records(DB, CONTAINER, &all_records, &mut |_| {})
        .expect("populate");
    let populate_engine = started.elapsed();

    // The raw floor holds exactly the bytes the engine's read returns, keyed by id.
    let stored: Vec<Vec<u8>> = orders
        .iter()
        .map(|o| {
            let r = engine
                .read_item(DB, CONTAINER, &o.id, &json!(o.customer_id))
                .expect("read back");
            r.body.expect("body")
        })
        .collect();
    let avg_stored = stored.iter().map(Vec::len).sum::<usize>() as f64 / stored.len() as f64;
    let raw_dir = tempfile::tempdir().expect("temp dir");
    let (raw_env, raw_db) = open_raw(raw_dir.path(), false);
    let started = Instant::now();
    raw_put_all(
        &raw_env,
        raw_db,
        orders
            .iter()
            .zip(&stored)
            .map(|(o, v)| (o.id.as_bytes(), v.as_slice())),
    );
    let populate_raw = started.elapsed();

    let mut shuffle = Rng(0x0BAD_5EED);
    let mut keys: Vec<usize> = (0..orders.len()).collect();
    shuffle.shuffle(&mut keys);
    // Warm both: one pass over every key.
    for &k in &keys {
        black_box(engine_read(&engine, &orders[k]));
        black_box(raw_get(&raw_env, raw_db, &orders[k]));
    }

    // 1. Point reads.
    {
        let mut g = c.benchmark_group("point_read");
        g.throughput(Rate::Elements(1));
        let mut i = 0;
        g.bench_function("engine_read_item", |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                engine_read(&engine, &orders[keys[i]])
            })
        });
        g.bench_function("raw_get_txn_per_get", |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                raw_get(&raw_env, raw_db, &orders[keys[i]])
            })
        });
        g.bench_function("raw_get_plus_serde_json_value", |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                raw_get_parse(&raw_env, raw_db, &orders[keys[i]])
            })
        });
        g.finish();
    }
    {
        let (mut e, mut r, mut p) = (Samples::default(), Samples::default(), Samples::default());
        let n = sizes.reads_per_round;
        for round in 0..sizes.read_rounds {
            let batch: Vec<&Order> = (0..n)
                .map(|j| &orders[keys[(round * n + j) % keys.len()]])
                .collect();
            for v in 0..3 {
                let started = Instant::now();
                match (v + round) % 3 {
                    0 => batch.iter().for_each(|o| {
                        black_box(engine_read(&engine, o));
                    }),
                    1 => batch.iter().for_each(|o| {
                        black_box(raw_get(&raw_env, raw_db, o));
                    }),
                    _ => batch.iter().for_each(|o| {
                        black_box(raw_get_parse(&raw_env, raw_db, o));
                    }),
                }
                let ns = started.elapsed().as_nanos() as f64 / n as f64;
                match (v + round) % 3 {
                    0 => e.push(ns),
                    1 => r.push(ns),
                    _ => p.push(ns),
                }
            }
        }
        report.push(format!(
            "### 1. Point read: {} items of {:.0} B stored ({:.0} B input), {RANGES} ranges, pk /customerId",
            thousands(orders.len() as f64),
            avg_stored,
            avg_input
        ));
        report.push(format!(
            "{} rounds × {} random reads per variant, variants interleaved per round.",
            sizes.read_rounds,
            thousands(n as f64)
        ));
        report.push(String::new());
        report.push("| Variant | ns/op median (min–max) | ops/s at median |".into());
        report.push("|---|---|---|".into());
        report.push(ns_row("`engine.read_item` (returns stored JSON bytes)", &e));
        report.push(ns_row("raw heed get, one RoTxn per get", &r));
        report.push(ns_row("raw get + `serde_json::from_slice::<Value>`", &p));
        report.push(String::new());
        report.push(ratio_line(
            "engine / (raw get + parse)",
            &ratios(&e, &p),
            "target ≤ 2×",
        ));
        report.push(ratio_line(
            "engine / raw get",
            &ratios(&e, &r),
            "information",
        ));
        report.push(String::new());
    }

    // 2. Import.
    let import_orders = &orders[..sizes.import_items.min(orders.len())];
    let import_records = records(import_orders);
    {
        let mut g = c.benchmark_group("import");
        g.throughput(Rate::Elements(import_orders.len() as u64));
        g.sampling_mode(SamplingMode::Flat);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(8));
        g.bench_function("engine_import_records", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| engine_import(&import_records)).sum())
        });
        g.bench_function("raw_heed_put_1000_per_txn", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| raw_import(import_orders)).sum())
        });
        g.finish();
    }
    {
        let (mut e, mut r, mut u) = (Samples::default(), Samples::default(), Samples::default());
        let unindexed = || {
            engine_import_indexed(&import_records, Some(IndexingPolicy::none()))
                .0
                .as_secs_f64()
        };
        for round in 0..sizes.import_rounds {
            if round % 2 == 0 {
                e.push(engine_import(&import_records).as_secs_f64());
                r.push(raw_import(import_orders).as_secs_f64());
                u.push(unindexed());
            } else {
                u.push(unindexed());
                r.push(raw_import(import_orders).as_secs_f64());
                e.push(engine_import(&import_records).as_secs_f64());
            }
        }
        let n = import_orders.len();
        report.push(format!(
            "### 2. Import: {} items ({:.0} B input) per run into a fresh {RANGES}-range container / fresh env",
            thousands(n as f64),
            avg_input
        ));
        report.push(format!(
            "{} runs per variant, interleaved; durable sync; the engine commits up to {} items per write txn (its import batch), the raw floor {PUTS_PER_TXN} per txn as in perf.md.",
            sizes.import_rounds,
            cosmoscope::engine::IMPORT_BATCH_ITEMS
        ));
        report.push(String::new());
        report.push("| Variant | ms median (min–max) | items/s at median (range) |".into());
        report.push("|---|---|---|".into());
        report.push(rate_row("`engine.import_records`", &e, n));
        report.push(rate_row(
            "`engine.import_records`, indexing mode none",
            &u,
            n,
        ));
        report.push(rate_row("raw heed puts, 1,000 per txn", &r, n));
        report.push(String::new());
        report.push(ratio_line(
            "engine items/s / raw items/s",
            &ratios(&r, &e),
            "target ≥ 0.5×",
        ));
        report.push(ratio_line(
            "engine with indexing off items/s / raw items/s",
            &ratios(&r, &u),
            "target ≥ 0.8×",
        ));
        report.push(format!(
            "- setup, one run each: populating the {}-item container took {:.2} s ({} items/s) through \
             `import_records`; raw puts of the same stored bytes {:.2} s ({} items/s)",
            thousands(orders.len() as f64),
            populate_engine.as_secs_f64(),
            thousands(orders.len() as f64 / populate_engine.as_secs_f64()),
            populate_raw.as_secs_f64(),
            thousands(orders.len() as f64 / populate_raw.as_secs_f64()),
        ));
        report.push(String::new());
    }
    let (_, import_dir) = engine_import_indexed(&import_records, None);
    report.extend(footprint_report(
        &format!(
            "one import of {} items into a new container (one transaction)",
            thousands(import_orders.len() as f64)
        ),
        import_dir.path(),
    ));

    // 3. Change feed.
    let events = orders.len();
    assert_eq!(drain_feed(&engine, FeedMode::LatestVersion), events);
    assert_eq!(drain_feed(&engine, FeedMode::AllVersions), events);
    assert_eq!(raw_walk(&raw_env, raw_db), events);
    {
        let mut g = c.benchmark_group("change_feed");
        g.throughput(Rate::Elements(events as u64));
        g.sampling_mode(SamplingMode::Flat);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(5));
        g.bench_function("drain_latest_version_pages_of_1000", |b| {
            b.iter(|| drain_feed(&engine, FeedMode::LatestVersion))
        });
        g.bench_function("drain_all_versions_pages_of_1000", |b| {
            b.iter(|| drain_feed(&engine, FeedMode::AllVersions))
        });
        g.bench_function("raw_cursor_walk_copy_values", |b| {
            b.iter(|| raw_walk(&raw_env, raw_db))
        });
        g.finish();
    }
    {
        type Drain<'a> = (&'a str, Box<dyn Fn() -> usize + 'a>);
        let variants: Vec<Drain> = vec![
            (
                "latest-version mode",
                Box::new(|| drain_feed(&engine, FeedMode::LatestVersion)),
            ),
            (
                "all-versions mode",
                Box::new(|| drain_feed(&engine, FeedMode::AllVersions)),
            ),
            (
                "latest-version, each range drained on its own (`range: Some(id)`)",
                Box::new(|| drain_feed_per_range(&engine, FeedMode::LatestVersion)),
            ),
            (
                "all-versions, each range drained on its own",
                Box::new(|| drain_feed_per_range(&engine, FeedMode::AllVersions)),
            ),
            (
                "floor: raw cursor walk copying the same values",
                Box::new(|| raw_walk(&raw_env, raw_db)),
            ),
        ];
        let mut seconds: Vec<Samples> = variants.iter().map(|_| Samples::default()).collect();
        for round in 0..sizes.feed_rounds {
            for v in 0..variants.len() {
                let which = (v + round) % variants.len();
                let started = Instant::now();
                let n = (variants[which].1)();
                seconds[which].push(started.elapsed().as_secs_f64());
                assert_eq!(
                    n, events,
                    "{} delivered {n} of {events} events",
                    variants[which].0
                );
            }
        }
        report.push(format!(
            "### 3. Change feed: drain {} events (one create per item) from the beginning, pages of {FEED_PAGE}, \
             continuation tokens",
            thousands(events as f64)
        ));
        report.push(format!(
            "{} drains per variant, interleaved.",
            sizes.feed_rounds
        ));
        report.push(String::new());
        report.push("| Variant | ms median (min–max) | events/s at median (range) |".into());
        report.push("|---|---|---|".into());
        for ((name, _), s) in variants.iter().zip(&seconds) {
            report.push(rate_row(name, s, events));
        }
        report.push(String::new());
        let raw = seconds.last().expect("raw walk samples");
        report.push(ratio_line(
            "latest-version / raw walk (time)",
            &ratios(&seconds[0], raw),
            "information",
        ));
        report.push(ratio_line(
            "all-versions / raw walk (time)",
            &ratios(&seconds[1], raw),
            "information",
        ));
    }

    c.final_summary();
    drop(engine);
    report.extend(footprint_report(
        &format!(
            "the {}-item container of sections 1 and 3, imported {} items per transaction",
            thousands(orders.len() as f64),
            thousands(cosmoscope::engine::IMPORT_BATCH_ITEMS as f64)
        ),
        engine_dir.path(),
    ));

    println!();
    println!("## cosmoscope store benchmark summary (Instant-timed medians, this run)");
    println!();
    for line in &report {
        println!("{line}");
    }
}
