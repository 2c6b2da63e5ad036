//! Server-side JavaScript benchmarks (issue 26):
//!
//! 1. `sproc/create_one`: executing a trivial stored procedure that creates one item, next
//!    to the same create through `create_item` (the script's overhead: a context on a kept
//!    script thread, the server-side API loaded from bytecode, the body compiled, and a
//!    transaction of its own).
//! 2. `udf/...`: `SELECT VALUE COUNT(1) FROM c WHERE udf.up(c.city) = 'OSLO'` over N items
//!    (default 100,000; `SCRIPTS_BENCH_ITEMS`), next to the same query with the built-in
//!    `UPPER`. Both scan every item (a function of a path is not served by the index).
//! 3. `bulk/...`: 10,000 items imported through the documented bulk-import procedure
//!    (continuation pattern: executed again with the rest until all are in) next to the
//!    engine's import of the same records.
//!
//! `cargo bench -p cosmoscope-bench --bench scripts`; `cargo test -p cosmoscope-bench --bench
//! scripts` runs each once on small data.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Duration;

use cosmoscope::engine::import::Record;
use cosmoscope::engine::{
    Backend, ContainerSettings, Engine, ScriptKind, ScriptSpec, SprocRequest,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const CITIES: [&str; 8] = [
    "Oslo", "Bergen", "Paris", "Lyon", "Rome", "Milan", "Porto", "Lisbon",
];

const CREATE_ONE: &str = r#"function createOne(doc) {
    var c = getContext().getCollection();
    c.createDocument(c.getSelfLink(), doc, function (err, created) {
        if (err) throw err;
        getContext().getResponse().setBody(created.id);
    });
}"#;

const BULK: &str = r#"function bulkImport(items) {
    var c = getContext().getCollection(), count = 0;
    if (items.length == 0) { getContext().getResponse().setBody(0); return; }
    next();
    function next() {
        var accepted = c.upsertDocument(c.getSelfLink(), items[count], function (err) {
            if (err) throw err;
            count++;
            if (count >= items.length) getContext().getResponse().setBody(count);
            else next();
        });
        if (!accepted) getContext().getResponse().setBody(count);
    }
}"#;

/// Criterion's test mode (`cargo test`): anything but `cargo bench`, which passes `--bench`.
fn test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test" || a == "--list")
}

fn engine_with(dir: &std::path::Path, containers: &[&str]) -> Engine {
    let engine = Engine::open(dir).expect("open");
    engine.create_database("b").expect("db");
    for c in containers {
        engine
            .create_container("b", c, ContainerSettings::new(vec!["/pk".into()]))
            .expect("container");
    }
    engine
}

fn item(n: usize, pk: &str) -> Value {
    json!({"id": format!("i{n}"), "pk": pk, "n": n, "city": CITIES[n % CITIES.len()],
           "text": "a few words so the item has some weight to it"})
}

/// The items as import records (their JSON texts kept in `texts`).
fn records(texts: &[Vec<u8>]) -> Vec<Record<'_>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Record {
            json: t,
            line: i + 1,
        })
        .collect()
}

fn sproc(engine: &Engine, c: &str, id: &str, body: &str) {
    engine
        .create_script(
            "b",
            c,
            &ScriptSpec::new(ScriptKind::StoredProcedure, id, body),
        )
        .expect("sproc");
}

fn execute(engine: &Engine, c: &str, id: &str, pk: &str, params: Vec<Value>) -> Value {
    engine
        .execute_stored_procedure(
            "b",
            c,
            id,
            &SprocRequest {
                partition_key: json!(pk),
                params,
                enable_log: false,
            },
        )
        .expect("execute")
        .body
        .unwrap_or(Value::Null)
}

fn create_one(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(dir.path(), &["one"]);
    sproc(&engine, "one", "createOne", CREATE_ONE);
    let mut n = 0;
    let mut group = c.benchmark_group("sproc");
    group.bench_function("create_one", |b| {
        b.iter(|| {
            n += 1;
            black_box(execute(
                &engine,
                "one",
                "createOne",
                "p",
                vec![item(n, "p")],
            ))
        })
    });
    group.bench_function("create_item", |b| {
        b.iter(|| {
            n += 1;
            let bytes = serde_json::to_vec(&item(n, "p")).unwrap();
            black_box(engine.create_item("b", "one", &bytes).expect("create"))
        })
    });
    group.finish();
}

fn udf_query(c: &mut Criterion) {
    let items: usize = std::env::var("SCRIPTS_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if test_mode() { 2_000 } else { 100_000 });
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(dir.path(), &["q"]);
    let texts: Vec<Vec<u8>> = (0..items)
        .map(|n| serde_json::to_vec(&item(n, &format!("k{}", n % 1000))).unwrap())
        .collect();
    let records = records(&texts);
    engine
        .import_records("b", "q", &records, &mut |_| {})
        .expect("import");
    engine
        .create_script(
            "b",
            "q",
            &ScriptSpec::new(
                ScriptKind::UserDefinedFunction,
                "up",
                "function up(s) { return s.toUpperCase(); }",
            ),
        )
        .expect("udf");
    let count = |sql: &str| -> Value {
        let r = engine
            .query("b", "q", sql, &Default::default())
            .expect("query");
        r.documents[0].value().clone()
    };
    let udf = "SELECT VALUE COUNT(1) FROM c WHERE udf.up(c.city) = 'OSLO'";
    let builtin = "SELECT VALUE COUNT(1) FROM c WHERE UPPER(c.city) = 'OSLO'";
    assert_eq!(count(udf), count(builtin), "the same answer either way");
    let mut group = c.benchmark_group(format!("udf_{items}_items"));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("udf", |b| b.iter(|| black_box(count(udf))));
    group.bench_function("builtin", |b| b.iter(|| black_box(count(builtin))));
    group.finish();
}

fn bulk_import(c: &mut Criterion) {
    let items: Vec<Value> = (0..10_000).map(|n| item(n, "bulk")).collect();
    let texts: Vec<Vec<u8>> = items
        .iter()
        .map(|i| serde_json::to_vec(i).unwrap())
        .collect();
    let records = records(&texts);
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(dir.path(), &["bulk", "plain"]);
    sproc(&engine, "bulk", "bulkImport", BULK);
    let mut group = c.benchmark_group("bulk_10000");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("sproc", |b| {
        b.iter(|| {
            let mut done = 0;
            while done < items.len() {
                let n = execute(
                    &engine,
                    "bulk",
                    "bulkImport",
                    "bulk",
                    vec![Value::Array(items[done..].to_vec())],
                );
                done += n.as_u64().expect("a count") as usize;
            }
            black_box(done)
        })
    });
    group.bench_function("import", |b| {
        b.iter(|| {
            black_box(
                engine
                    .import_records("b", "plain", &records, &mut |_| {})
                    .expect("import"),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, create_one, udf_query, bulk_import);
criterion_main!(benches);
