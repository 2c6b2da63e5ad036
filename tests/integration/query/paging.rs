//! Paging costs one page: an ORDER BY the index yields resumes after the last result (its
//! sort value and place among ties, in the continuation), and a result computed whole
//! (DISTINCT, GROUP BY, ORDER BY through a sort) is kept on disk so a later page in a new
//! process (here: a new engine on the same directory) reads its window. Either way the
//! pages add up to the unpaged result, ties and all.

use cosmoscope::engine::{Backend, ContainerSettings, Engine, QueryOptions, QueryResult};
use serde_json::{Value, json};

fn load(dir: &std::path::Path, n: usize) {
    let engine = Engine::open(dir).unwrap();
    engine.create_database("db").unwrap();
    let mut s = ContainerSettings::new(vec!["/pk".into()]);
    s.throughput = cosmoscope::engine::Throughput::Manual(24_000);
    engine.create_container("db", "c", s).unwrap();
    for i in 0..n {
        // Few distinct prices: long runs of ties across the four ranges.
        let doc = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 53), "price": 1 + i % 7,
                         "tag": format!("t{}", i % 41)});
        engine
            .upsert_item("db", "c", doc.to_string().as_bytes(), None)
            .unwrap();
    }
}

fn page(dir: &std::path::Path, sql: &str, max: usize, token: Option<String>) -> QueryResult {
    // A new engine per page, as a new process would open the store.
    let engine = Engine::open(dir).unwrap();
    let opts = QueryOptions {
        max_items: Some(max),
        continuation: token,
        ..QueryOptions::default()
    };
    engine
        .query("db", "c", sql, &opts)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every page of `sql` in pages of `max`, each from a new engine, and the tokens.
fn drain(dir: &std::path::Path, sql: &str, max: usize) -> (Vec<Value>, Vec<String>) {
    let (mut rows, mut tokens, mut token) = (Vec::new(), Vec::new(), None);
    loop {
        let r = page(dir, sql, max, token.take());
        rows.extend(r.documents.iter().map(|d| d.value().clone()));
        match r.continuation {
            Some(t) => {
                tokens.push(t.clone());
                token = Some(t);
            }
            None => return (rows, tokens),
        }
    }
}

#[test]
fn an_ordered_walk_resumes_after_its_last_result_across_engines() {
    let tmp = tempfile::tempdir().unwrap();
    load(tmp.path(), 300);
    for sql in [
        "SELECT c.id, c.price FROM c ORDER BY c.price DESC",
        "SELECT * FROM c ORDER BY c.price",
        "SELECT VALUE c.id FROM c ORDER BY c._ts",
    ] {
        let whole = page(tmp.path(), sql, 1000, None);
        let whole: Vec<Value> = whole.documents.iter().map(|d| d.value().clone()).collect();
        let (paged, tokens) = drain(tmp.path(), sql, 7);
        assert_eq!(paged, whole, "{sql}");
        assert!(
            tokens.iter().all(|t| t.contains("\"walk\"")),
            "{sql}: each page resumes at a place in the index"
        );
    }
}

#[test]
fn a_computed_result_is_read_back_from_disk_by_a_later_engine() {
    let tmp = tempfile::tempdir().unwrap();
    load(tmp.path(), 300);
    for sql in [
        "SELECT DISTINCT VALUE c.tag FROM c",
        "SELECT c.tag, COUNT(1) AS n FROM c GROUP BY c.tag",
        "SELECT c.id FROM c WHERE c.price >= 0 ORDER BY c.tag",
        "SELECT c.id FROM c ORDER BY c.price OFFSET 5 LIMIT 200",
    ] {
        let whole = page(tmp.path(), sql, 1000, None);
        let whole: Vec<Value> = whole.documents.iter().map(|d| d.value().clone()).collect();
        let (paged, _) = drain(tmp.path(), sql, 9);
        assert_eq!(paged, whole, "{sql}");
    }
    let kept = std::fs::read_dir(tmp.path().join("query-results"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert!(kept > 0, "the results were kept on disk");
    // A write changes the container: the next page computes the result afresh, still a
    // window of the (new) whole result.
    let sql = "SELECT DISTINCT VALUE c.tag FROM c";
    let first = page(tmp.path(), sql, 10, None);
    let engine = Engine::open(tmp.path()).unwrap();
    engine
        .upsert_item(
            "db",
            "c",
            br#"{"id": "new", "pk": "p0", "tag": "t00"}"#,
            None,
        )
        .unwrap();
    drop(engine);
    let second = page(tmp.path(), sql, 10, first.continuation);
    let values: Vec<Value> = second.documents.iter().map(|d| d.value().clone()).collect();
    assert_eq!(values.first(), Some(&json!("t17")), "{values:?}");
}

#[test]
fn an_index_lookup_of_hundreds_of_items_pages_like_a_scan() {
    // Hundreds of candidates: a helper thread reads the later ones beside the page (see
    // `store::split_read`), on a page that takes them all and on pages that take a few.
    let tmp = tempfile::tempdir().unwrap();
    load(tmp.path(), 600);
    let lookup = "SELECT c.id, c.price, c.pk FROM c WHERE c.price BETWEEN 2 AND 5";
    // `+ 0` keeps the filter off the index: the same documents by a scan.
    let scan = "SELECT c.id, c.price, c.pk FROM c WHERE c.price + 0 BETWEEN 2 AND 5";
    let sorted = |mut rows: Vec<Value>| {
        rows.sort_by_key(|r| r["id"].as_str().unwrap_or_default().to_string());
        rows
    };
    let whole = page(tmp.path(), lookup, 1000, None);
    assert_eq!(whole.access.kind, "index-lookup", "{:?}", whole.access);
    assert!(whole.continuation.is_none());
    let rows: Vec<Value> = whole.documents.iter().map(|d| d.value().clone()).collect();
    let want = (0..600).filter(|i| (2..=5).contains(&(1 + i % 7))).count();
    assert_eq!(rows.len(), want, "prices 2 to 5 of 1 to 7");
    let (scanned, _) = drain(tmp.path(), scan, 1000);
    assert_eq!(sorted(rows.clone()), sorted(scanned));
    for max in [7, 100, 333] {
        let (paged, _) = drain(tmp.path(), lookup, max);
        assert_eq!(paged, rows, "pages of {max}");
    }
    // `SELECT *` returns the stored documents themselves.
    let stars = page(
        tmp.path(),
        "SELECT * FROM c WHERE c.price BETWEEN 2 AND 5",
        1000,
        None,
    );
    let ids: Vec<&str> = stars
        .documents
        .iter()
        .map(|d| d.value()["id"].as_str().unwrap_or_default())
        .collect();
    let want: Vec<&str> = rows
        .iter()
        .map(|r| r["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, want);
    assert!(
        stars
            .documents
            .iter()
            .all(|d| d.value()["_etag"].is_string())
    );
}

#[test]
fn a_page_read_on_two_cores_sees_one_snapshot_while_writes_commit() {
    // Every write replaces all 300 items in one transaction with the next version, so a
    // page that read any item from another snapshot than the rest would mix versions. Its
    // 300 candidates are read on two cores (see `store::split_read`). A write rarely
    // commits in the microseconds between the page's transaction and its helper's, so this
    // checks the whole page under writes; the helper's own check of the snapshot is tested
    // in `store::split_read`.
    let tmp = tempfile::tempdir().unwrap();
    let engine = Engine::open(tmp.path()).unwrap();
    engine.create_database("db").unwrap();
    let mut s = ContainerSettings::new(vec!["/pk".into()]);
    s.throughput = cosmoscope::engine::Throughput::Manual(24_000);
    engine.create_container("db", "c", s).unwrap();
    let version = |v: u64| -> Vec<Vec<u8>> {
        (0..300)
            .map(|i| {
                let doc = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 53),
                                 "price": 2 + i % 4, "v": v});
                doc.to_string().into_bytes()
            })
            .collect()
    };
    let write = |engine: &Engine, v: u64| {
        let docs = version(v);
        let records: Vec<cosmoscope::engine::import::Record> = docs
            .iter()
            .enumerate()
            .map(|(line, json)| cosmoscope::engine::import::Record { line, json })
            .collect();
        engine
            .import_records("db", "c", &records, &mut |_| {})
            .unwrap();
    };
    write(&engine, 0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let sql = "SELECT c.id, c.v FROM c WHERE c.price BETWEEN 2 AND 5";
    let opts = QueryOptions {
        max_items: Some(1000),
        ..QueryOptions::default()
    };
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut v = 1;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                write(&engine, v);
                v += 1;
            }
            v
        });
        for _ in 0..150 {
            let page = engine.query("db", "c", sql, &opts).unwrap();
            assert_eq!(page.access.kind, "index-lookup");
            let versions: std::collections::BTreeSet<u64> = page
                .documents
                .iter()
                .map(|d| d.value()["v"].as_u64().unwrap())
                .collect();
            assert_eq!(page.documents.len(), 300);
            assert_eq!(versions.len(), 1, "one snapshot, one version: {versions:?}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            writer.join().unwrap() > 1,
            "writes committed while the pages were read"
        );
    });
}
