//! Memory of the CLI's streaming commands and of an import, as the size of the data grows.
//!
//! `query --all`, `feed --all` and `export` write their documents page by page, so what they
//! hold should not grow with the result (issue 29); an import should hold its batch, not the
//! container (issue 28). Each command runs as a child process (this binary re-executed as the
//! CLI) on a store of N items and of 4 × N items, and its memory is sampled from
//! `/proc/PID/smaps_rollup` every few milliseconds until it exits: the peak of anonymous
//! memory (the heap: what the process holds) and of file-backed resident memory (pages of the
//! memory-mapped data file the kernel keeps in memory while they are read, which it can drop
//! at any time) are reported apart. A bounded command has the same heap peak at both sizes.
//!
//! `cargo bench -p cosmoscope-bench --bench memory` runs it over 50,000 and 200,000 orders
//! of about 1 KB; in test mode (`cargo test -p cosmoscope-bench --benches`) over 1,000 and
//! 4,000. Linux only (it reads /proc).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::*;

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Set in a child's environment: the child runs the CLI instead of the benchmark.
const AS_CLI: &str = "COSMOSCOPE_BENCH_AS_CLI";
const TARGET: &str = "bench/orders";

/// The peaks of one command's memory, in bytes.
#[derive(Default, Clone, Copy)]
struct Peak {
    anonymous: u64,
    file: u64,
    seconds: f64,
}

/// Reads `Anonymous:` and `Rss:` (kB) of a live process; `None` once it is gone.
fn sample(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    let (rss, anon) = (field("Rss:")?, field("Anonymous:")?);
    Some((anon * 1024, rss.saturating_sub(anon) * 1024))
}

/// Runs the CLI with `args` on `dir`, stdout discarded, sampling its memory until it exits.
fn measure(dir: &Path, args: &[&str]) -> Peak {
    let exe = std::env::current_exe().expect("this benchmark's path");
    let started = Instant::now();
    let mut child = Command::new(exe)
        .env(AS_CLI, "1")
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the CLI");
    let mut peak = Peak::default();
    loop {
        if let Some((anon, file)) = sample(child.id()) {
            peak.anonymous = peak.anonymous.max(anon);
            peak.file = peak.file.max(file);
        }
        match child.try_wait().expect("wait for the CLI") {
            Some(status) => {
                if !status.success() {
                    let out = child.wait_with_output().expect("the CLI's errors");
                    panic!(
                        "cosmoscope {} failed: {}",
                        args.join(" "),
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                break;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    peak.seconds = started.elapsed().as_secs_f64();
    peak
}

/// An NDJSON file of `n` orders of about 1 KB over `n / 10` customers.
fn write_orders(path: &Path, n: usize) {
    let mut rng = Rng(0x3E3_0000 + n as u64);
    let customers: Vec<String> = (0..(n / 10).max(1)).map(|_| rng.uuid()).collect();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create input"));
    for i in 0..n {
        let lines: Vec<_> = (0..rng.range(1, 4))
            .map(|_| {
                let (sku, name) = *rng.pick(&PRODUCTS);
                json!({"sku": sku, "name": name, "price": rng.range(499, 339_999) as f64 / 100.0,
                       "quantity": rng.range(1, 6)})
            })
            .collect();
        let (city, country) = *rng.pick(&CITIES);
        let doc = json!({
            "id": rng.uuid(),
            "customerId": rng.pick(&customers),
            "orderNumber": format!("SO{i:07}"),
            "orderDate": rng.date(),
            "status": rng.pick(&STATUSES),
            "shipTo": {"name": format!("{} {}", rng.pick(&FIRST), rng.pick(&LAST)),
                       "street": format!("{} {}", rng.range(1, 9999), rng.pick(&STREETS)),
                       "city": city, "country": country},
            "details": lines,
            "comment": (0..rng.range(20, 60)).map(|_| *rng.pick(&WORDS)).collect::<Vec<_>>().join(" "),
        });
        serde_json::to_writer(&mut out, &doc).expect("write order");
        out.write_all(b"\n").expect("write order");
    }
    out.flush().expect("write input");
}

/// One store of `n` orders, loaded through the CLI's import (measured too).
struct Loaded {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    import: Peak,
}

fn load(n: usize) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("data");
    let input = dir.path().join("orders.ndjson");
    write_orders(&input, n);
    measure(&path, &["db", "create", "bench"]);
    measure(
        &path,
        &[
            "container",
            "create",
            TARGET,
            "--partition-key",
            "/customerId",
            "--throughput",
            "60000",
        ],
    );
    let import = measure(
        &path,
        &["import", TARGET, input.to_str().expect("utf-8 path")],
    );
    Loaded {
        _dir: dir,
        path,
        import,
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

fn main() -> ExitCode {
    if std::env::var_os(AS_CLI).is_some() {
        return cosmoscope::cli::run();
    }
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let small = if full { 50_000 } else { 1_000 };
    let sizes = [small, small * 4];
    let commands: [(&str, &[&str]); 4] = [
        (
            "query --all",
            &["query", TARGET, "SELECT * FROM c", "--all"],
        ),
        (
            "query --all (JOIN)",
            &[
                "query",
                TARGET,
                "SELECT c.id, d.sku FROM c JOIN d IN c.details",
                "--all",
            ],
        ),
        ("feed --all", &["feed", TARGET, "--all"]),
        ("export", &["export", TARGET]),
    ];
    let mut rows = Vec::new();
    for &n in &sizes {
        eprintln!("loading {n} orders ...");
        let store = load(n);
        rows.push(("import".to_string(), n, store.import));
        for (name, args) in &commands {
            rows.push((name.to_string(), n, measure(&store.path, args)));
        }
    }
    println!();
    println!("| command | items | heap peak (MB) | mapped file peak (MB) | seconds |");
    println!("|---|---:|---:|---:|---:|");
    for (name, n, p) in &rows {
        println!(
            "| {name} | {} | {} | {} | {:.2} |",
            thousands(*n as f64),
            mb(p.anonymous),
            mb(p.file),
            p.seconds
        );
    }
    println!();
    println!("Heap growth from {} to {} items:", sizes[0], sizes[1]);
    for name in rows.iter().filter(|r| r.1 == sizes[0]).map(|r| &r.0) {
        let at = |n: usize| {
            rows.iter()
                .find(|r| &r.0 == name && r.1 == n)
                .map_or(0, |r| r.2.anonymous)
        };
        println!(
            "  {name}: {} MB -> {} MB ({:.2}x for 4x the items)",
            mb(at(sizes[0])),
            mb(at(sizes[1])),
            at(sizes[1]) as f64 / at(sizes[0]).max(1) as f64
        );
    }
    ExitCode::SUCCESS
}
