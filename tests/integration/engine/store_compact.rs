//! Compaction: the data file rewritten without its free pages and with full ones keeps
//! every item, index entry and statistic; it is refused while the store is open anywhere, and skipped when little
//! is free.

use cosmoscope::engine::import::Record;
use cosmoscope::engine::{Backend, Engine, QueryOptions};
use cosmoscope::engine::{CompactOutcome as Outcome, CompactWhen as When};
use cosmoscope::engine::{ContainerSettings, Throughput};
use cosmoscope::store::LOCK_FILE;
use serde_json::{Value, json};

fn documents(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            serde_json::to_vec(&json!({
                "id": format!("d{i}"),
                "pk": format!("p{}", i % 97),
                "n": i,
                "text": "x".repeat(200 + i % 50),
            }))
            .unwrap()
        })
        .collect()
}

/// A store whose imports, thirty small ones that each write among the items and index
/// entries of the ones before and rewrite pages all over the index, left free pages
/// behind and pages part full.
fn store_with_free_pages(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let engine = Engine::open(dir).unwrap();
    engine.create_database("db").unwrap();
    let mut settings = ContainerSettings::new(vec!["/pk".into()]);
    settings.throughput = Throughput::Manual(40_000);
    engine.create_container("db", "c", settings).unwrap();
    let docs = documents(3000);
    let records: Vec<Record> = docs
        .iter()
        .enumerate()
        .map(|(line, json)| Record { line, json })
        .collect();
    for part in records.chunks(100) {
        engine
            .import_records_in_batches("db", "c", part, 100, &mut |_| {})
            .unwrap();
    }
    let (_, free) = engine.store().free_space().unwrap();
    assert!(free > 0);
    docs
}

fn count(engine: &Engine, sql: &str) -> Value {
    let r = engine
        .query("db", "c", sql, &QueryOptions::default())
        .unwrap();
    Value::from(r.documents[0].clone())
}

/// Every item of the container, as stored.
fn exported(engine: &Engine) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    engine
        .export("db", "c", None, &mut |j| {
            out.push(j.to_vec());
            Ok(())
        })
        .unwrap();
    out
}

#[test]
fn a_compacted_store_is_smaller_and_holds_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let docs = store_with_free_pages(dir.path());
    let (before_items, used_before) = {
        let engine = Engine::open(dir.path()).unwrap();
        let (file, free) = engine.store().free_space().unwrap();
        (exported(&engine), file - free)
    };
    assert_eq!(before_items.len(), docs.len());

    let Outcome::Compacted { before, after, .. } =
        Engine::compact(dir.path(), When::Always).unwrap()
    else {
        panic!("not compacted");
    };
    assert!(after < before, "{before} -> {after}");

    let engine = Engine::open(dir.path()).unwrap();
    let (file, free) = engine.store().free_space().unwrap();
    assert!(free * 10 < file, "{free} of {file} free after compaction");
    // Items and index entries were inserted in random key order (EPKs are hashes), which
    // leaves pages part full; rewritten in key order they fill them.
    let used_after = file - free;
    assert!(
        used_after * 4 < used_before * 3,
        "{used_before} bytes of pages in use before, {used_after} after"
    );
    assert_eq!(exported(&engine), before_items);
    // The index answers as before, and the store takes writes.
    assert_eq!(count(&engine, "SELECT VALUE COUNT(1) FROM c"), json!(3000));
    let r = engine
        .query(
            "db",
            "c",
            "SELECT VALUE c.id FROM c WHERE c.n = 1234",
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(r.access.kind, "index-lookup");
    assert_eq!(Value::from(r.documents[0].clone()), json!("d1234"));
    engine
        .upsert_item("db", "c", br#"{"id":"new","pk":"p1","n":-1}"#, None)
        .unwrap();
    assert_eq!(
        count(&engine, "SELECT VALUE COUNT(1) FROM c WHERE c.n < 0"),
        json!(1)
    );
}

#[test]
fn compaction_waits_for_no_one_and_skips_what_is_not_worth_it() {
    let dir = tempfile::tempdir().unwrap();
    store_with_free_pages(dir.path());
    {
        // Open here (in another process it is the same lock): compaction stands aside.
        let engine = Engine::open(dir.path()).unwrap();
        assert_eq!(
            Engine::compact(dir.path(), When::Always).unwrap(),
            Outcome::InUse { worthwhile: false }
        );
        assert_eq!(count(&engine, "SELECT VALUE COUNT(1) FROM c"), json!(3000));
    }
    assert!(dir.path().join(LOCK_FILE).exists());
    // A few megabytes free are not worth rewriting the file.
    match Engine::compact(dir.path(), When::Worthwhile).unwrap() {
        Outcome::NotWorthwhile { file, free } => assert!(free > 0 && free < file),
        other => panic!("{other:?}"),
    }
    // A copy a crashed compaction left behind is removed by the next open.
    let stale = dir.path().join("data.mdb.compacting");
    std::fs::write(&stale, b"partial").unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    assert!(!stale.exists());
    assert_eq!(count(&engine, "SELECT VALUE COUNT(1) FROM c"), json!(3000));
}
