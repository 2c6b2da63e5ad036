//! The workbench end to end and the simulator's sustained rate, at the samples' default
//! scale (what first launch loads).
//!
//! - `workbench/blog` and `workbench/webstore`: `workbench::run` of the bundled suite with
//!   the default iterations per pattern and design, processors on, on designs loaded once
//!   before timing (loading is `benches/samples.rs`'s subject). Each run adds the items its
//!   commands create, as a real run does.
//! - `simulate/blog-v3`: `simulate::run` of a fixed number of operations as fast as the
//!   store answers, with the change feed processors running and drained at the end — the
//!   rate the design sustains with its denormalization keeping up. Criterion reports it
//!   as elements (operations) per second; a summary line adds RU/s and processor work.
//!
//! `cargo bench -p cosmoscope-bench --bench workbench` runs it; `cargo test -p
//! cosmoscope-bench --benches` runs a smoke version.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use cosmoscope::engine::Engine;
use cosmoscope::samples::{self, LoadOptions};
use cosmoscope::simulate::{self, SimOptions};
use cosmoscope::workbench::{self, RunOptions, Suite};
use criterion::{Criterion, Throughput};

fn smoke() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test" || a == "--list")
}

fn main() {
    let smoke = smoke();
    let (iterations, operations) = if smoke {
        (1, 200)
    } else {
        (workbench::DEFAULT_ITERATIONS, 3000)
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::open(dir.path()).expect("open engine");
    for set in [
        "blog-v1",
        "blog-v2",
        "blog-v3",
        "webstore-relational",
        "webstore",
    ] {
        samples::load(&engine, set, &LoadOptions::default(), &mut |_| true).expect("load");
    }

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .configure_from_args();

    let mut group = c.benchmark_group("workbench");
    let options = RunOptions {
        iterations,
        ..RunOptions::default()
    };
    for name in ["blog", "webstore"] {
        let suite = Suite::builtin(name).expect("suite");
        group.bench_function(name, |b| {
            b.iter(|| workbench::run(&engine, &suite, &options, &mut |_| true).expect("run"))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("simulate");
    group.throughput(Throughput::Elements(operations));
    let sim = SimOptions {
        rate: None,
        operations: Some(operations),
        ..SimOptions::new("blog-v3")
    };
    let stop = AtomicBool::new(false);
    let mut last = None;
    group.bench_function("blog-v3 (processors on)", |b| {
        b.iter(|| {
            let r = simulate::run(&engine, &sim, &stop, &mut |_| {}).expect("simulate");
            last = Some(r);
        })
    });
    group.finish();
    c.final_summary();

    if let Some(r) = last {
        println!(
            "simulate blog-v3: {} ops in {:.2} s = {:.0} ops/s, {:.0} RU/s, {} requests; \
             processors: {} changes, {} writes, {:.0} RU (the workload loop alone; criterion's \
             figure also waits for the processors to catch up)",
            r.operations,
            r.seconds,
            r.ops_per_second,
            r.ru_per_second,
            r.requests,
            r.processors.changes,
            r.processors.writes,
            r.processors.request_charge
        );
    }
    drop(engine);
}
