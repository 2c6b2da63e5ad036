//! Index benchmarks: index-served queries next to the same queries on a scan-only container
//! (the baseline) and on SQLite with JSON expression indexes (the peer), and the import rate
//! with default indexing next to indexing off — medians and ratios from one run.
//!
//! Data: `QUERY_BENCH_ITEMS` (default 1,000,000 under `cargo bench`, 5,000 in criterion's
//! test mode) documents of about 1 KB in a 10-range container partitioned by `/customerId`:
//! `salesPerson` (items/10 values, ~10 items each), `amount` (0..items/10, ~10 items per
//! value), `code` and `batch` (1,000 values each, independent), `creationDate`, padding.
//!
//! Containers: `idx` (default policy) and `scan` (only `/creationDate/?` indexed, plus one
//! document without `creationDate`, so filters scan and ORDER BY sorts every document — the
//! engine's behaviour without these indexes). SQLite: `docs(id, doc)` with expression
//! indexes on `json_extract(doc, '$.salesPerson' | '$.amount' | '$.code' | '$.batch' |
//! '$.creationDate')`, WAL, `synchronous=NORMAL`.
//!
//! Queries:
//! 1. fan-out equality `c.salesPerson = @p` (~10 items)
//! 2. `SELECT TOP 100 * FROM c ORDER BY c.creationDate DESC`
//! 3. range `c.amount BETWEEN @lo AND @lo + 99` (~1,000 items)
//! 4. conjunction `c.code = @a AND c.batch = @b` (each 0.1%, together ~items/10⁶)
//!
//! Import: the first min(items, 100,000) documents into a fresh default-indexed container
//! and into one with `indexingMode: none`, through `Engine::import_records`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::hint::black_box;
use std::time::{Duration, Instant};

use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::{Backend, Engine};
use cosmoscope::engine::{ContainerSettings, Throughput};
use criterion::Criterion;
use rusqlite::Connection;
use serde_json::{Value, json};

const DB: &str = "bench";

fn items() -> usize {
    item_count("QUERY_BENCH_ITEMS", 5_000, 1_000_000)
}

fn documents(n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x1DE5);
    let values = (n / 10).max(1) as u64;
    (0..n)
        .map(|i| {
            let mut comment = String::new();
            while comment.len() < 700 {
                let word: &&str = rng.pick(&WORDS);
                comment.push_str(word);
                comment.push(' ');
            }
            let doc = json!({
                "id": format!("o{i:07}"),
                "customerId": format!("c{}", rng.below(values)),
                "salesPerson": format!("p{}", rng.below(values)),
                "amount": rng.below(values),
                "code": rng.below(1000),
                "batch": rng.below(1000),
                "creationDate": rng.date(),
                "status": rng.pick(&STATUSES),
                "shipTo": {"city": rng.pick(&CITIES).0, "street": rng.pick(&STREETS)},
                "comment": comment,
            });
            serde_json::to_vec(&doc).expect("serialize")
        })
        .collect()
}

fn container(engine: &Engine, name: &str, policy: Option<IndexingPolicy>) {
    let mut s = ContainerSettings::new(vec!["/customerId".into()]);
    s.throughput = Throughput::Manual(60_000);
    s.indexing_policy = policy;
    engine.create_container(DB, name, s).expect("container");
}

fn query(
    engine: &Engine,
    c: &str,
    sql: &str,
    params: &[(&str, Value)],
) -> (usize, f64, &'static str) {
    let mut opts = options_with(params);
    let mut n = 0;
    let mut charge = 0.0;
    let mut kind = "";
    loop {
        let r = engine.query(DB, c, sql, &opts).expect("query");
        n += r.documents.len();
        charge += r.request_charge;
        kind = if kind.is_empty() { r.access.kind } else { kind };
        black_box(&r.documents);
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return (n, charge, kind),
        }
    }
}

fn sqlite(conn: &Connection, sql: &str, args: &[Value]) -> usize {
    let mut stmt = conn.prepare_cached(sql).expect("prepare");
    let params: Vec<rusqlite::types::Value> = args
        .iter()
        .map(|v| match v {
            Value::Number(n) => rusqlite::types::Value::Integer(n.as_i64().unwrap_or(0)),
            other => rusqlite::types::Value::Text(other.as_str().unwrap_or("").to_string()),
        })
        .collect();
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params))
        .expect("query");
    let mut n = 0;
    while let Some(row) = rows.next().expect("row") {
        black_box(row.get_ref(0).expect("doc").as_str().expect("text").len());
        n += 1;
    }
    n
}

type Params = Vec<(&'static str, Value)>;
/// A benchmarked query: name, cosmoscope SQL, SQLite SQL, parameters of run `i`.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    Box<dyn Fn(u64) -> Params>,
);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fmt(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

fn main() {
    let n = items();
    let docs = documents(n);
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::open(dir.path()).expect("engine");
    engine.create_database(DB).expect("db");

    // Import rates on a subset: default indexing next to indexing off.
    let subset = &docs[..n.min(100_000)];
    container(&engine, "import-on", None);
    container(&engine, "import-off", Some(IndexingPolicy::none()));
    let rate_off = import(&engine, DB, "import-off", subset);
    let rate_on = import(&engine, DB, "import-on", subset);
    engine.delete_container(DB, "import-on").expect("delete");
    engine.delete_container(DB, "import-off").expect("delete");

    container(&engine, "idx", None);
    let scan_policy: IndexingPolicy = serde_json::from_value(json!({
        "includedPaths": [{"path": "/creationDate/?"}],
        "excludedPaths": [{"path": "/*"}]
    }))
    .expect("policy");
    container(&engine, "scan", Some(scan_policy));
    let t = Instant::now();
    import(&engine, DB, "idx", &docs);
    let load_idx = t.elapsed();
    import(&engine, DB, "scan", &docs);
    engine
        .create_item(DB, "scan", br#"{"id": "undated", "customerId": "c0"}"#)
        .expect("undated");
    let (engine, compaction) = reopen_compacted(engine);

    let sqlite_dir = tempfile::tempdir().expect("temp dir");
    let mut conn = Connection::open(sqlite_dir.path().join("docs.db")).expect("sqlite");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-262144;
         CREATE TABLE docs(id TEXT PRIMARY KEY, doc TEXT NOT NULL);",
    )
    .expect("schema");
    {
        let tx = conn.transaction().expect("txn");
        {
            let mut ins = tx
                .prepare("INSERT INTO docs VALUES (?1, ?2)")
                .expect("insert");
            for (i, d) in docs.iter().enumerate() {
                ins.execute((format!("o{i:07}"), std::str::from_utf8(d).expect("utf8")))
                    .expect("row");
            }
        }
        tx.commit().expect("commit");
    }
    conn.execute_batch(
        "CREATE INDEX ix_sp ON docs(json_extract(doc,'$.salesPerson'));
         CREATE INDEX ix_amount ON docs(json_extract(doc,'$.amount'));
         CREATE INDEX ix_code ON docs(json_extract(doc,'$.code'));
         CREATE INDEX ix_batch ON docs(json_extract(doc,'$.batch'));
         CREATE INDEX ix_created ON docs(json_extract(doc,'$.creationDate'));
         ANALYZE;",
    )
    .expect("indexes");

    let values = (n / 10).max(1) as u64;
    let cases: Vec<Case> = vec![
        (
            "fan-out equality (~10 items)",
            "SELECT * FROM c WHERE c.salesPerson = @p",
            "SELECT doc FROM docs WHERE json_extract(doc,'$.salesPerson') = ?1",
            Box::new(move |i| vec![("p", json!(format!("p{}", i % values)))]),
        ),
        (
            "TOP 100 ORDER BY creationDate DESC",
            "SELECT TOP 100 * FROM c ORDER BY c.creationDate DESC",
            "SELECT doc FROM docs ORDER BY json_extract(doc,'$.creationDate') DESC LIMIT 100",
            Box::new(|_| vec![]),
        ),
        (
            "range, ~1,000 items",
            "SELECT * FROM c WHERE c.amount BETWEEN @lo AND @hi",
            "SELECT doc FROM docs WHERE json_extract(doc,'$.amount') BETWEEN ?1 AND ?2",
            Box::new(move |i| {
                let lo = (i * 7919) % values.saturating_sub(100).max(1);
                vec![("lo", json!(lo)), ("hi", json!(lo + 99))]
            }),
        ),
        (
            "conjunction of two 0.1% filters",
            "SELECT * FROM c WHERE c.code = @a AND c.batch = @b",
            "SELECT doc FROM docs WHERE json_extract(doc,'$.code') = ?1 AND json_extract(doc,'$.batch') = ?2",
            Box::new(|i| vec![("a", json!(i % 1000)), ("b", json!((i * 31) % 1000))]),
        ),
    ];

    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    let mut rows = Vec::new();
    for (name, sql, lite, params) in &cases {
        let sqlite_args =
            |i: u64| -> Vec<Value> { params(i).into_iter().map(|(_, v)| v).collect() };
        // Correctness first: every variant returns the same number of documents.
        let (a, charge_idx, kind) = query(&engine, "idx", sql, &params(1));
        let (b, charge_scan, scan_kind) = query(&engine, "scan", sql, &params(1));
        let c = sqlite(&conn, lite, &sqlite_args(1));
        assert_eq!(a, c, "{sql}: engine {a} vs SQLite {c}");
        assert_eq!(a, b, "{sql}: index {a} vs scan {b}");
        let time = |f: &dyn Fn(u64), reps: u64| {
            median(
                (0..reps)
                    .map(|i| {
                        let t = Instant::now();
                        f(i + 2);
                        t.elapsed().as_secs_f64()
                    })
                    .collect(),
            )
        };
        let t_idx = time(
            &|i| {
                black_box(query(&engine, "idx", sql, &params(i)));
            },
            31,
        );
        let scan_reps = if n > 200_000 { 3 } else { 7 };
        let t_scan = time(
            &|i| {
                black_box(query(&engine, "scan", sql, &params(i)));
            },
            scan_reps,
        );
        let t_lite = time(
            &|i| {
                black_box(sqlite(&conn, lite, &sqlite_args(i)));
            },
            31,
        );
        criterion.bench_function(&format!("index/{name}"), |bench| {
            let mut i = 0;
            bench.iter(|| {
                i += 1;
                query(&engine, "idx", sql, &params(i))
            })
        });
        rows.push((
            name.to_string(),
            a,
            kind,
            scan_kind,
            t_idx,
            t_scan,
            t_lite,
            charge_idx,
            charge_scan,
        ));
    }
    criterion.final_summary();

    println!(
        "\n{n} items, 10 ranges; loaded the indexed container in {:.1} s; {compaction}",
        load_idx.as_secs_f64()
    );
    println!(
        "{:<36} {:>6} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9} {:>9}",
        "query", "items", "index", "scan", "SQLite", "scan/idx", "idx/SQL", "RU idx", "RU scan"
    );
    for (name, count, kind, scan_kind, ti, ts, tl, ci, cs) in rows {
        println!(
            "{name:<36} {count:>6} {:>12} {:>12} {:>12} {:>8.0}x {:>9.2} {ci:>9.2} {cs:>9.2}   ({kind} / {scan_kind})",
            fmt(ti),
            fmt(ts),
            fmt(tl),
            ts / ti,
            ti / tl,
        );
    }
    println!(
        "import of {} items: {:.0} docs/s with default indexing, {:.0} docs/s with indexing off ({:.2}x)",
        subset.len(),
        rate_on,
        rate_off,
        rate_off / rate_on
    );
}
