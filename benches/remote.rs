//! Remote backend benchmark: the same operations through the embedded engine and through
//! the remote backend against `cosmoscope serve` on loopback (the gateway in this process
//! on its own runtime), so the difference is the network, HTTP, signing and JSON round
//! trip: a 1 KB point read, a 10-page fan-out query (100 results a page over three
//! physical partitions) and a change feed drain (100,000 small items, 1,000 a page).
//!
//! `cargo bench -p cosmoscope-bench --bench remote` runs it; `cargo test -p
//! cosmoscope-bench --benches` a short smoke version; `COSMOSCOPE_BENCH_FEED=N` sets the
//! feed's length.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{
    Backend, ContainerSettings, Engine, FeedRequest, FeedStart, QueryOptions, Throughput,
};
use cosmoscope::gateway::{EMULATOR_KEY, Gateway, Options};
use serde_json::json;

const DB: &str = "bench";
const ITEMS: &str = "items";
const FEED: &str = "feed";

/// Runs `op` for about `budget` (at least `min` times); the mean time per run.
fn time(budget: Duration, min: usize, mut op: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut n = 0;
    while n < min || start.elapsed() < budget {
        op();
        n += 1;
    }
    start.elapsed() / n as u32
}

fn row(name: &str, embedded: Duration, remote: Duration) {
    println!(
        "{name:<34} embedded {:>10.3} ms   remote {:>10.3} ms   ratio {:>6.1}x",
        embedded.as_secs_f64() * 1e3,
        remote.as_secs_f64() * 1e3,
        remote.as_secs_f64() / embedded.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let feed_items = item_count("COSMOSCOPE_BENCH_FEED", 2_000, 100_000);
    let budget = if feed_items < 10_000 {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(2)
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Arc::new(Engine::open(dir.path()).expect("open"));
    engine.create_database(DB).expect("database");
    for (name, ru) in [(ITEMS, 18_000), (FEED, 18_000)] {
        let mut s = ContainerSettings::new(vec!["/pk".into()]);
        s.throughput = Throughput::Manual(ru);
        engine.create_container(DB, name, s).expect("container");
    }
    let note = "x".repeat(900);
    let docs: Vec<Vec<u8>> = (0..1_000)
        .map(|i| {
            json!({"id": format!("i{i}"), "pk": format!("p{}", i % 97), "n": i, "note": note})
                .to_string()
                .into_bytes()
        })
        .collect();
    import(&engine, DB, ITEMS, &docs);
    let events: Vec<Vec<u8>> = (0..feed_items)
        .map(|i| {
            json!({"id": format!("e{i}"), "pk": format!("p{}", i % 997), "n": i})
                .to_string()
                .into_bytes()
        })
        .collect();
    import(&engine, DB, FEED, &events);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let backend: Arc<dyn Backend> = engine.clone();
    let gateway = runtime
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
        .expect("gateway");
    let config =
        RemoteConfig::new(&gateway.endpoint(), &Secret::new(EMULATOR_KEY)).expect("config");
    let remote = RemoteBackend::connect(&config).expect("remote");

    let backends: [(&str, &dyn Backend); 2] = [("embedded", &*engine), ("remote", &remote)];
    let mut results = Vec::new();
    for (_, b) in backends {
        let read = time(budget, 50, || {
            b.read_item(DB, ITEMS, "i17", &json!("p17")).expect("read");
        });
        let query = time(budget, 3, || {
            let mut opts = QueryOptions {
                max_items: Some(100),
                ..QueryOptions::default()
            };
            let mut pages = 0;
            loop {
                let page = b.query(DB, ITEMS, "SELECT * FROM c", &opts).expect("query");
                pages += 1;
                match page.continuation {
                    Some(c) => opts.continuation = Some(c),
                    None => break,
                }
            }
            assert_eq!(pages, 10);
        });
        let drain = time(Duration::ZERO, 1, || {
            let mut req = FeedRequest {
                max_items: 1_000,
                ..FeedRequest::default()
            };
            let mut n = 0;
            loop {
                let page = b.read_feed(DB, FEED, &req).expect("feed");
                if page.changes.is_empty() {
                    break;
                }
                n += page.changes.len();
                req.start = FeedStart::Continuation(page.continuation);
            }
            assert_eq!(n, feed_items);
        });
        results.push((read, query, drain));
    }
    let (e, r) = (results[0], results[1]);
    println!("remote backend vs embedded (loopback HTTP/1.1, this process's gateway):");
    row("point read (1 KB)", e.0, r.0);
    row("query, 10 pages of 100 (fan-out)", e.1, r.1);
    row(&format!("feed drain, {feed_items} events"), e.2, r.2);
    runtime.block_on(gateway.stop());
}
