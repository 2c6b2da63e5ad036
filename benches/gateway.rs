//! Gateway benchmark: point reads and upserts of 1 KB items over loopback HTTP/1.1 with
//! keep-alive, from 1 client and from 16 concurrent clients, each next to the same
//! operations through the engine in-process (the gateway's overhead is the difference).
//!
//! The server runs on its own two-worker tokio runtime, as `cosmoscope serve` does; the
//! clients on another, so on this two-core machine they compete for the same cores, as a
//! test suite hammering a local emulator does. Requests are signed like an SDK's. Targets
//! (issue 24): with 16 clients at least 10,000 point reads/s and 5,000 upserts/s, p99 under
//! 5 ms.
//!
//! Upserts also run against their physical floor: raw heed puts of the same 1 KB values into a
//! fresh env holding the same items, one durable write transaction per 1 client and per 16
//! puts for 16 clients (a group commit that is always full and costs nothing to gather). No
//! design that acknowledges each write only once it is on disk can beat that floor on the
//! machine's disk; what the engine adds on top is its index, feed and statistics pages.
//!
//! `cargo bench -p cosmoscope-bench --bench gateway` runs it (3 s per variant);
//! `cargo test -p cosmoscope-bench --benches` runs a short smoke version.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cosmoscope::engine::{Backend, ContainerSettings, Durability, Engine, Throughput};
use cosmoscope::gateway::auth::Signed;
use cosmoscope::gateway::{Gateway, MasterKey, Options};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

const DB: &str = "bench";
const CONTAINER: &str = "items";
const CLIENTS: [usize; 2] = [1, 16];

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Read,
    Upsert,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Read => "point read",
            Op::Upsert => "upsert",
        }
    }
}

/// A 1 KB item: its id, partition key and body.
struct Item {
    id: String,
    pk: String,
    json: Vec<u8>,
}

fn items(n: usize) -> Vec<Item> {
    let mut rng = Rng(0x6A7E_3A40_0001);
    (0..n)
        .map(|i| {
            let id = format!("item-{i}");
            let pk = format!("tenant-{}", rng.below(1000));
            let mut note = String::new();
            while note.len() < 850 {
                let word: &&str = rng.pick(&WORDS);
                note.push_str(word);
                note.push(' ');
            }
            let json = serde_json::to_vec(&json!({
                "id": id, "pk": pk, "n": i, "city": rng.pick(&CITIES).0, "note": note,
            }))
            .expect("serialize");
            Item { id, pk, json }
        })
        .collect()
}

/// Latencies of one variant's requests and how long it ran.
struct Run {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Run {
    fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    fn percentile(&mut self, p: f64) -> Duration {
        self.latencies.sort_unstable();
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies.get(i).copied().unwrap_or_default()
    }
}

/// Signs and sends requests like an SDK, over one keep-alive connection pool.
struct HttpClient {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    key: MasterKey,
}

impl HttpClient {
    async fn send(&self, op: Op, item: &Item) {
        let date = chrono::Utc::now()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let (method, path, rtype_link, body) = match op {
            Op::Read => (
                "GET",
                format!("/dbs/{DB}/colls/{CONTAINER}/docs/{}", item.id),
                format!("dbs/{DB}/colls/{CONTAINER}/docs/{}", item.id),
                Bytes::new(),
            ),
            Op::Upsert => (
                "POST",
                format!("/dbs/{DB}/colls/{CONTAINER}/docs"),
                format!("dbs/{DB}/colls/{CONTAINER}"),
                Bytes::from(item.json.clone()),
            ),
        };
        let auth = self.key.authorization(Signed {
            verb: method,
            resource_type: "docs",
            resource_link: &rtype_link,
            date: &date,
        });
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("x-ms-date", &date)
            .header("authorization", auth)
            .header("x-ms-version", "2020-07-15")
            .header("x-ms-documentdb-partitionkey", format!("[\"{}\"]", item.pk));
        if op == Op::Upsert {
            req = req
                .header("content-type", "application/json")
                .header("x-ms-documentdb-is-upsert", "True");
        }
        let resp = self
            .client
            .request(req.body(Full::new(body)).expect("request"))
            .await
            .expect("the gateway answers");
        let status = resp.status();
        let _ = resp.into_body().collect().await.expect("body");
        assert!(status.is_success(), "{} answered {status}", op.name());
    }
}

/// `clients` tasks each sending `op` back to back for `duration`.
fn over_http(
    rt: &tokio::runtime::Runtime,
    http: &Arc<HttpClient>,
    items: &Arc<Vec<Item>>,
    op: Op,
    clients: usize,
    duration: Duration,
) -> Run {
    rt.block_on(async {
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let http = http.clone();
            let items = items.clone();
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng(0xC11E_0000 + c as u64);
                let mut latencies = Vec::new();
                while started.elapsed() < duration {
                    let item = rng.pick(&items);
                    let t = Instant::now();
                    http.send(op, item).await;
                    latencies.push(t.elapsed());
                }
                latencies
            }));
        }
        let mut latencies = Vec::new();
        for t in tasks {
            latencies.extend(t.await.expect("client task"));
        }
        Run {
            latencies,
            elapsed: started.elapsed(),
        }
    })
}

/// The same operations through the engine in-process, from `clients` threads.
fn in_process(
    engine: &Arc<Engine>,
    items: &Arc<Vec<Item>>,
    op: Op,
    clients: usize,
    duration: Duration,
) -> Run {
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (engine, items, stop) = (engine.clone(), items.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(0x1E9E_0000 + c as u64);
                let mut latencies = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let item = rng.pick(&items);
                    let t = Instant::now();
                    match op {
                        Op::Read => {
                            engine
                                .read_item(DB, CONTAINER, &item.id, &json!(item.pk))
                                .expect("read");
                        }
                        Op::Upsert => {
                            engine
                                .upsert_item(DB, CONTAINER, &item.json, None)
                                .expect("upsert");
                        }
                    }
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    for t in threads {
        latencies.extend(t.join().expect("client thread"));
    }
    Run {
        latencies,
        elapsed: started.elapsed(),
    }
}

/// The physical floor of a durable upsert: raw heed puts of the items' bytes keyed by id, in
/// one durable write transaction per `clients` puts (each put's latency is its transaction's).
fn raw_floor(dir: &std::path::Path, items: &[Item], clients: usize, duration: Duration) -> Run {
    let (env, db) = open_raw(dir, false);
    let mut wtxn = env.write_txn().expect("write txn");
    for item in items {
        db.put(&mut wtxn, item.id.as_bytes(), &item.json)
            .expect("put");
    }
    wtxn.commit().expect("commit");
    let mut rng = Rng(0x0F10_0000 + clients as u64);
    let mut latencies = Vec::new();
    let started = Instant::now();
    while started.elapsed() < duration {
        let t = Instant::now();
        let mut wtxn = env.write_txn().expect("write txn");
        for _ in 0..clients {
            let item = rng.pick(items);
            db.put(&mut wtxn, item.id.as_bytes(), &item.json)
                .expect("put");
        }
        wtxn.commit().expect("commit");
        let took = t.elapsed();
        latencies.extend(std::iter::repeat_n(took, clients));
    }
    Run {
        latencies,
        elapsed: started.elapsed(),
    }
}

/// One table row: the gateway's rate and latencies next to the in-process ones.
fn row(label: &str, clients: usize, http: &mut Run, local: &mut Run) -> String {
    format!(
        "| {label} | {clients} | {:.0} | {} | {} | {:.0} | {} | {} |",
        http.rate(),
        ms(http.percentile(0.5)),
        ms(http.percentile(0.99)),
        local.rate(),
        ms(local.percentile(0.5)),
        ms(local.percentile(0.99)),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let n = item_count("GATEWAY_BENCH_ITEMS", 1_000, 10_000);
    let smoke = n < 10_000;
    let duration = if smoke {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(3)
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Arc::new(Engine::open(dir.path()).expect("open engine"));
    engine.create_database(DB).expect("database");
    let mut settings = ContainerSettings::new(vec!["/pk".into()]);
    // 10 physical partitions, as the store bench has.
    settings.throughput = Throughput::Manual(60_000);
    engine
        .create_container(DB, CONTAINER, settings)
        .expect("container");
    let items = Arc::new(items(n));
    let docs: Vec<Vec<u8>> = items.iter().map(|i| i.json.clone()).collect();
    import(&engine, DB, CONTAINER, &docs);

    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let backend: Arc<dyn Backend> = engine.clone();
    let gateway = server_rt
        .block_on(Gateway::start(
            backend,
            Options {
                addr: "127.0.0.1:0".parse().expect("address"),
                key: None,
                tls: false,
                data_dir: dir.path().to_path_buf(),
                enforce_throughput: false,
            },
        ))
        .expect("start the gateway");
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let http = Arc::new(HttpClient {
        client: client_rt.block_on(async {
            Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(32)
                .build_http()
        }),
        base: gateway.endpoint().trim_end_matches('/').to_string(),
        key: MasterKey::emulator(),
    });

    let mut rows = Vec::new();
    let mut floors = Vec::new();
    for op in [Op::Read, Op::Upsert] {
        for clients in CLIENTS {
            let mut http_run = over_http(&client_rt, &http, &items, op, clients, duration);
            let mut local = in_process(&engine, &items, op, clients, duration);
            rows.push(row(op.name(), clients, &mut http_run, &mut local));
            if op == Op::Upsert {
                let raw_dir = tempfile::tempdir().expect("temporary directory");
                let mut raw = raw_floor(raw_dir.path(), &items, clients, duration);
                floors.push(format!(
                    "| {clients} | {:.0} | {} | {} | {:.2} |",
                    raw.rate(),
                    ms(raw.percentile(0.5)),
                    ms(raw.percentile(0.99)),
                    local.rate() / raw.rate(),
                ));
            }
        }
    }
    // The same upserts with commits flushed by the store's flusher thread instead of at
    // each commit (`serve --sync periodic`).
    engine
        .set_durability(Durability::Periodic)
        .expect("periodic durability");
    for clients in CLIENTS {
        let mut http_run = over_http(&client_rt, &http, &items, Op::Upsert, clients, duration);
        let mut local = in_process(&engine, &items, Op::Upsert, clients, duration);
        rows.push(row(
            "upsert, --sync periodic",
            clients,
            &mut http_run,
            &mut local,
        ));
    }
    server_rt.block_on(gateway.stop());

    println!("\n## cosmoscope gateway benchmark summary\n");
    println!(
        "{n} items of {} B in a 10-range container; {:.1} s per variant; HTTP/1.1 keep-alive on loopback, requests signed.\n",
        items[0].json.len(),
        duration.as_secs_f64()
    );
    println!(
        "| operation | clients | gateway ops/s | p50 ms | p99 ms | in-process ops/s | p50 ms | p99 ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!(
        "\nThe upserts' floor: raw heed puts of the same values, one durable transaction per put (1 client) or per 16 puts (16 clients).\n"
    );
    println!("| clients | raw heed puts/s | p50 ms | p99 ms | in-process / raw |");
    println!("|---|---|---|---|---|");
    for r in floors {
        println!("{r}");
    }
    println!("\nTargets with 16 clients: ≥ 10,000 point reads/s, ≥ 5,000 upserts/s, p99 < 5 ms.");
}
