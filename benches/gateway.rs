//! Gateway benchmark: point reads and upserts of 1 KB items over loopback HTTP/1.1 with
//! keep-alive, from 1 client and from 16 concurrent clients, each next to the same
//! operations through the engine in-process (the gateway's overhead is the difference).
//!
//! The server runs on its own tokio runtime with as many workers as `cosmoscope serve` gives
//! it (one per core but one); the clients on another with two, so on this two-core machine
//! they compete for the same cores, as a test suite hammering a local emulator does.
//! Requests are signed like an SDK's. Targets (issue 24): with 16 clients at least 10,000
//! point reads/s and 5,000 upserts/s, p99 under 5 ms. Latencies are the clients' (request sent to response read); the "served" columns
//! are the gateway's own for the same requests (arrival to reply ready, from its traffic
//! log), so what the clients' side of each round trip adds on the shared cores shows apart.
//!
//! Upserts also run against their physical floor: raw heed puts of the same 1 KB values into a
//! fresh env holding the same items, one durable write transaction per 1 client and per 16
//! puts for 16 clients (a group commit that is always full and costs nothing to gather). No
//! design that acknowledges each write only once it is on disk can beat that floor on the
//! machine's disk; what the engine adds on top is its index, feed and statistics pages.
//!
//! `cargo bench -p cosmoscope-bench --bench gateway` runs it (3 s per variant, or
//! `GATEWAY_BENCH_SECS`; `-- WORD` runs only the variants whose label holds WORD, and
//! `GATEWAY_BENCH_CLIENTS=N` only those with N clients);
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
use cosmoscope::gateway::{Gateway, MasterKey, Options, Traffic};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;

const DB: &str = "bench";
const CONTAINER: &str = "items";
/// Where upserts are posted, and the link they are signed with.
const DOCS_PATH: &str = "/dbs/bench/colls/items/docs";
const CONTAINER_LINK: &str = "dbs/bench/colls/items";
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

/// A 1 KB item: its id, partition key and body, and what a client sends to address it.
struct Item {
    id: String,
    pk: String,
    json: Bytes,
    /// `/dbs/…/docs/{id}`, whose tail after the `/` is also its signed resource link.
    path: String,
    /// The partition key header's value.
    pk_header: String,
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
            Item {
                path: format!("{DOCS_PATH}/{id}"),
                pk_header: format!("[\"{pk}\"]"),
                id,
                pk,
                json: Bytes::from(json),
            }
        })
        .collect()
}

/// Latencies of one variant's requests, how long it ran and what it wrote to disk.
struct Run {
    latencies: Vec<Duration>,
    /// Over HTTP: each request's latency as the gateway measured it (arrival to reply
    /// ready, from its traffic log), without the clients' side of the round trip.
    served: Vec<Duration>,
    elapsed: Duration,
    /// Bytes this process caused to be written to storage while the variant ran.
    written: u64,
    /// CPU time of the whole process (server, clients, flusher) while the variant ran.
    cpu: Duration,
}

impl Run {
    /// Bytes written to storage per operation: the pages each commit flushes, shared out.
    fn written_per_op(&self) -> f64 {
        self.written as f64 / self.latencies.len().max(1) as f64
    }

    /// CPU time per operation, in microseconds: what the machine's cores spent on each.
    fn cpu_per_op(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.latencies.len().max(1) as f64
    }

    fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    fn percentile(&mut self, p: f64) -> Duration {
        percentile(&mut self.latencies, p)
    }
}

fn percentile(latencies: &mut [Duration], p: f64) -> Duration {
    latencies.sort_unstable();
    let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
    latencies.get(i).copied().unwrap_or_default()
}

/// Follows the gateway's traffic log while a variant runs, keeping each request's latency
/// as the gateway measured it. The log keeps the last 10,000 requests; it is read every
/// 20 ms, well before that many more arrive.
struct ServedLatencies {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
}

impl ServedLatencies {
    fn follow(traffic: Arc<Traffic>) -> ServedLatencies {
        let stop = Arc::new(AtomicBool::new(false));
        let done = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seq = traffic.last_seq();
            let mut served = Vec::new();
            loop {
                let finished = done.load(Ordering::Relaxed);
                for exchange in traffic.since(seq) {
                    seq = exchange.seq;
                    served.push(exchange.latency);
                }
                if finished {
                    return served;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        ServedLatencies { stop, thread }
    }

    fn finish(self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the traffic follower")
    }
}

/// Bytes this process has caused to be written to storage (`write_bytes` of
/// `/proc/self/io`): LMDB's page writes and flushes count here, page-cache reads do not.
fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("write_bytes:"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time this process has used, all threads, user and system (`/proc/self/stat`, in
/// clock ticks of 10 ms: coarse, but a variant runs for seconds).
fn cpu_used() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) closes with ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// One client: signs and sends requests like an SDK over its own keep-alive connection, as
/// each of an application's clients holds one. Kept lean (a direct HTTP/1.1 connection, the
/// date formatted once a second, item bodies shared) so the cores it shares with the
/// server go to the server.
struct HttpClient {
    sender: SendRequest<Full<Bytes>>,
    key: MasterKey,
    /// The `x-ms-date` of the current second, and that second.
    date: (i64, String),
}

impl HttpClient {
    async fn connect(addr: std::net::SocketAddr, key: MasterKey) -> HttpClient {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connect to the gateway");
        stream.set_nodelay(true).expect("nodelay");
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
        tokio::spawn(connection);
        HttpClient {
            sender,
            key,
            date: (0, String::new()),
        }
    }

    fn date(&mut self) -> String {
        let now = chrono::Utc::now();
        if now.timestamp() != self.date.0 {
            self.date = (
                now.timestamp(),
                now.format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
            );
        }
        self.date.1.clone()
    }

    async fn send(&mut self, op: Op, item: &Item) {
        let date = self.date();
        let (method, path, link, body) = match op {
            Op::Read => ("GET", item.path.as_str(), &item.path[1..], Bytes::new()),
            Op::Upsert => ("POST", DOCS_PATH, CONTAINER_LINK, item.json.clone()),
        };
        let auth = self.key.authorization(Signed {
            verb: method,
            resource_type: "docs",
            resource_link: link,
            date: &date,
        });
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "127.0.0.1")
            .header("x-ms-date", date)
            .header("authorization", auth)
            .header("x-ms-version", "2020-07-15")
            .header("x-ms-documentdb-partitionkey", &item.pk_header);
        if op == Op::Upsert {
            req = req
                .header("content-type", "application/json")
                .header("x-ms-documentdb-is-upsert", "True");
        }
        self.sender.ready().await.expect("connection ready");
        let resp = self
            .sender
            .send_request(req.body(Full::new(body)).expect("request"))
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
    gateway: &Gateway,
    items: &Arc<Vec<Item>>,
    op: Op,
    clients: usize,
    duration: Duration,
) -> Run {
    eprintln!("{} over HTTP, {clients} clients", op.name());
    let address = gateway.local_addr();
    let follower = ServedLatencies::follow(gateway.traffic());
    let mut run = rt.block_on(async {
        let (written, cpu) = (bytes_written(), cpu_used());
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let items = items.clone();
            tasks.push(tokio::spawn(async move {
                let mut http = HttpClient::connect(address, MasterKey::emulator()).await;
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
            served: Vec::new(),
            elapsed: started.elapsed(),
            written: bytes_written() - written,
            cpu: cpu_used().saturating_sub(cpu),
        }
    });
    run.served = follower.finish();
    run
}

/// The same operations through the engine in-process, from `clients` threads.
fn in_process(
    engine: &Arc<Engine>,
    items: &Arc<Vec<Item>>,
    op: Op,
    clients: usize,
    duration: Duration,
) -> Run {
    let (written, cpu) = (bytes_written(), cpu_used());
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
        served: Vec::new(),
        elapsed: started.elapsed(),
        written: bytes_written() - written,
        cpu: cpu_used().saturating_sub(cpu),
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
    let (written, cpu) = (bytes_written(), cpu_used());
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
        served: Vec::new(),
        elapsed: started.elapsed(),
        written: bytes_written() - written,
        cpu: cpu_used().saturating_sub(cpu),
    }
}

/// One table row: the gateway's rate and latencies next to the in-process ones.
fn row(label: &str, clients: usize, http: &mut Run, local: &mut Run) -> String {
    format!(
        "| {label} | {clients} | {:.0} | {} | {} | {} | {} | {:.0} | {:.0} | {} | {} | {:.0} | {} |",
        http.rate(),
        ms(http.percentile(0.5)),
        ms(http.percentile(0.99)),
        ms(percentile(&mut http.served, 0.5)),
        ms(percentile(&mut http.served, 0.99)),
        http.cpu_per_op(),
        local.rate(),
        ms(local.percentile(0.5)),
        ms(local.percentile(0.99)),
        local.cpu_per_op(),
        kb(local.written_per_op()),
    )
}

fn kb(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let n = item_count("GATEWAY_BENCH_ITEMS", 1_000, 10_000);
    let smoke = n < 10_000;
    // GATEWAY_BENCH_SECS runs each variant longer, for steadier A/B figures.
    let duration = match std::env::var("GATEWAY_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(secs) => Duration::from_secs_f64(secs),
        None if smoke => Duration::from_millis(300),
        None => Duration::from_secs(3),
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
    let docs: Vec<Vec<u8>> = items.iter().map(|i| i.json.to_vec()).collect();
    import(&engine, DB, CONTAINER, &docs);

    // Named so a profile tells the server's threads (workers and blocking pool) from the
    // load generator's.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cosmoscope::gateway::runtime_workers())
        .thread_name("gw-server")
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
        .thread_name("gw-client")
        .enable_all()
        .build()
        .expect("runtime");
    assert_eq!(DOCS_PATH, format!("/dbs/{DB}/colls/{CONTAINER}/docs"));
    assert_eq!(
        CONTAINER_LINK,
        &DOCS_PATH[1..DOCS_PATH.len() - "/docs".len()]
    );

    // `cargo bench ... --bench gateway -- WORD` runs only the variants whose label holds WORD
    // ("read", "upsert", "periodic", "floor"), e.g. to profile one of them alone.
    let only = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    let wanted = |label: &str| label.contains(only.as_str());
    // `GATEWAY_BENCH_CLIENTS=16` runs only that client count (to profile one variant).
    let client_counts: Vec<usize> = match std::env::var("GATEWAY_BENCH_CLIENTS") {
        Ok(n) => vec![n.parse().expect("GATEWAY_BENCH_CLIENTS is a number")],
        Err(_) => CLIENTS.to_vec(),
    };
    let mut rows = Vec::new();
    let mut floors = Vec::new();
    for op in [Op::Read, Op::Upsert] {
        for &clients in &client_counts {
            if wanted(op.name()) {
                let mut http_run = over_http(&client_rt, &gateway, &items, op, clients, duration);
                let mut local = in_process(&engine, &items, op, clients, duration);
                rows.push(row(op.name(), clients, &mut http_run, &mut local));
            }
            if op == Op::Upsert && wanted("upsert floor") {
                let raw_dir = tempfile::tempdir().expect("temporary directory");
                let mut raw = raw_floor(raw_dir.path(), &items, clients, duration);
                floors.push(format!(
                    "| {clients} | {:.0} | {} | {} | {} |",
                    raw.rate(),
                    ms(raw.percentile(0.5)),
                    ms(raw.percentile(0.99)),
                    kb(raw.written_per_op()),
                ));
            }
        }
    }
    // The same upserts with commits flushed by the store's flusher thread instead of at
    // each commit (`serve --sync periodic`).
    const PERIODIC: &str = "upsert, --sync periodic";
    if wanted(PERIODIC) {
        engine
            .set_durability(Durability::Periodic)
            .expect("periodic durability");
        for &clients in &client_counts {
            let mut http_run =
                over_http(&client_rt, &gateway, &items, Op::Upsert, clients, duration);
            let mut local = in_process(&engine, &items, Op::Upsert, clients, duration);
            rows.push(row(PERIODIC, clients, &mut http_run, &mut local));
        }
    }
    server_rt.block_on(gateway.stop());

    println!("\n## cosmoscope gateway benchmark summary\n");
    println!(
        "{n} items of {} B in a 10-range container; {:.1} s per variant; HTTP/1.1 keep-alive on loopback, requests signed.\n",
        items[0].json.len(),
        duration.as_secs_f64()
    );
    println!(
        "| operation | clients | gateway ops/s | p50 ms | p99 ms | served p50 ms | served p99 ms | CPU µs/op | in-process ops/s | p50 ms | p99 ms | CPU µs/op | KB written/op |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!(
        "\nThe upserts' floor: raw heed puts of the same values, one durable transaction per put (1 client) or per 16 puts (16 clients).\n"
    );
    println!("| clients | raw heed puts/s | p50 ms | p99 ms | KB written/put |");
    println!("|---|---|---|---|---|");
    for r in floors {
        println!("{r}");
    }
    println!("\nTargets with 16 clients: ≥ 10,000 point reads/s, ≥ 5,000 upserts/s, p99 < 5 ms.");
}
