//! Loading the bundled sample sets at their default scale (what first launch does), each
//! into a fresh temporary store: one benchmark per set and one for all of them together,
//! which must stay under 3 seconds in a release build.
//!
//! Opening the store and removing it afterwards are outside the timing. `cargo bench -p
//! cosmoscope-bench --bench samples` runs it; `cargo test -p cosmoscope-bench --benches`
//! runs each load once as a smoke test.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use cosmoscope::engine::Engine;
use cosmoscope::samples::{self, LoadOptions, registry};
use criterion::{BatchSize, Criterion, Throughput};
use tempfile::TempDir;

/// A fresh store; the engine is declared first so it closes before its directory goes.
struct Fresh {
    engine: Engine,
    _dir: TempDir,
}

fn fresh() -> Fresh {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::open(dir.path()).expect("open engine");
    Fresh { engine, _dir: dir }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = c.benchmark_group("sample_load");
    let mut all = 0;
    for set in registry::SETS {
        let items = samples::info(set).expect("sample info").default_item_count;
        all += items;
        group.throughput(Throughput::Elements(items));
        group.bench_function(*set, |b| {
            b.iter_batched(
                fresh,
                |store| {
                    samples::load(&store.engine, set, &LoadOptions::default(), &mut |_| true)
                        .expect("load");
                    store
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.throughput(Throughput::Elements(all));
    group.bench_function("all (first launch)", |b| {
        b.iter_batched(
            fresh,
            |store| {
                samples::load_all_defaults(&store.engine, &mut |_| true).expect("load all");
                store
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    c.final_summary();
}
