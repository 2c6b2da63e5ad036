//! Index maintenance: after any sequence of creates, upserts, replaces, deletes, TTL
//! purges and container deletes, the stored index equals a rebuild from the items.

use cosmoscope::engine::Backend;
use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::Throughput;
use cosmoscope::store::testing::{IndexLayout, rebuild_from_items, stored_entries};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture, Rng, open, pk_settings, records_of};

fn random_doc(rng: &mut Rng, id: u64) -> Value {
    let words = ["red", "green", "blue", "", "x\u{0}y", "long"];
    let mut doc = json!({
        "id": format!("i{id}"),
        "pk": format!("p{}", rng.below(7)),
    });
    let o = doc.as_object_mut().unwrap();
    if rng.below(3) > 0 {
        o.insert("n".into(), json!(rng.below(20) as f64 / 2.0 - 3.0));
    }
    if rng.below(2) == 0 {
        o.insert("s".into(), json!(words[rng.below(6) as usize]));
    }
    if rng.below(2) == 0 {
        let tags: Vec<Value> = (0..rng.below(4))
            .map(|_| json!({"name": words[rng.below(6) as usize], "w": rng.below(3)}))
            .collect();
        o.insert("tags".into(), Value::Array(tags));
    }
    if rng.below(4) == 0 {
        o.insert(
            "nested".into(),
            json!({"a": {"b": rng.below(2) == 0, "c": null}}),
        );
    }
    if rng.below(5) == 0 {
        o.insert("big".into(), json!("z".repeat(600 + rng.below(3) as usize)));
    }
    doc
}

fn assert_index_matches_items(f: &Fixture, c: &str) {
    let store = f.engine.store();
    let txn = store.read_txn().unwrap();
    let def = store.container(&txn, DB, c).unwrap();
    let layout = IndexLayout::current(&def);
    let (expected, expected_counts) = rebuild_from_items(store, &txn, &def, &layout).unwrap();
    let (stored, stored_counts) =
        stored_entries(store, &txn, def.rid, def.index_generation).unwrap();
    assert_eq!(stored.len(), expected.len(), "entry count");
    assert!(stored == expected, "entries differ from a rebuild");
    assert_eq!(stored_counts, expected_counts, "per-path document counts");
}

fn churn(f: &Fixture, c: &str, seed: u64, ops: u64) {
    let mut rng = Rng(seed);
    let mut live: Vec<Value> = Vec::new();
    for step in 0..ops {
        match rng.below(5) {
            0 | 1 => {
                let doc = random_doc(&mut rng, step);
                f.create(c, &doc);
                live.push(doc);
            }
            2 if !live.is_empty() => {
                // Replace keeps id and key, changes everything else.
                let i = rng.below(live.len() as u64) as usize;
                let mut doc = random_doc(&mut rng, 0);
                doc["id"] = live[i]["id"].clone();
                doc["pk"] = live[i]["pk"].clone();
                f.replace(c, &doc);
                live[i] = doc;
            }
            3 if !live.is_empty() => {
                let i = rng.below(live.len() as u64) as usize;
                let doc = live.swap_remove(i);
                f.delete(c, doc["id"].as_str().unwrap(), &doc["pk"]);
            }
            _ => {
                let mut doc = random_doc(&mut rng, step % 13);
                doc["id"] = json!(format!("u{}", step % 11));
                f.upsert(c, &doc);
            }
        }
    }
}

#[test]
fn index_equals_a_rebuild_after_random_writes() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(20_000);
    f.container("c", s);
    churn(&f, "c", 7, 600);
    assert_index_matches_items(&f, "c");
}

#[test]
fn restrictive_and_composite_policies_are_maintained_too() {
    let f = open();
    let mut s = pk_settings();
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "includedPaths": [{"path": "/tags/[]/name/?"}, {"path": "/n/?"}],
            "excludedPaths": [{"path": "/*"}],
            "compositeIndexes": [[{"path": "/s"}, {"path": "/n", "order": "descending"}]]
        }))
        .unwrap(),
    );
    f.container("c", s);
    churn(&f, "c", 11, 400);
    assert_index_matches_items(&f, "c");
}

#[test]
fn no_index_with_indexing_off_and_nothing_left_after_container_delete() {
    let f = open();
    let mut s = pk_settings();
    s.indexing_policy = Some(IndexingPolicy::none());
    f.container("off", s);
    f.pk_container("on");
    churn(&f, "off", 3, 100);
    churn(&f, "on", 3, 100);
    let store = f.engine.store();
    let (off_rid, on_rid) = {
        let txn = store.read_txn().unwrap();
        (
            store.container(&txn, DB, "off").unwrap().rid,
            store.container(&txn, DB, "on").unwrap().rid,
        )
    };
    {
        let txn = store.read_txn().unwrap();
        assert!(
            stored_entries(store, &txn, off_rid, 0)
                .unwrap()
                .0
                .is_empty()
        );
        assert!(!stored_entries(store, &txn, on_rid, 0).unwrap().0.is_empty());
    }
    f.engine.delete_container(DB, "on").unwrap();
    let txn = store.read_txn().unwrap();
    let (keys, counts) = stored_entries(store, &txn, on_rid, 0).unwrap();
    assert!(keys.is_empty() && counts.is_empty());
}

#[test]
fn ttl_purge_removes_index_entries() {
    let f = open();
    let mut s = pk_settings();
    s.default_ttl = Some(-1);
    f.container("t", s);
    for i in 0..20 {
        let mut doc = json!({"id": format!("t{i}"), "pk": "a", "v": i});
        if i % 2 == 0 {
            doc["ttl"] = json!(1);
        }
        f.create("t", &doc);
    }
    std::thread::sleep(std::time::Duration::from_millis(2100));
    f.engine.purge_expired().unwrap();
    assert_index_matches_items(&f, "t");
}

#[test]
fn indexing_makes_writes_cost_more() {
    let f = open();
    let mut s = pk_settings();
    s.indexing_policy = Some(IndexingPolicy::none());
    f.container("off", s);
    f.pk_container("on");
    let doc = json!({"id": "1", "pk": "a", "a": 1, "b": [1, 2, 3], "c": {"d": "e"}});
    let off = f.create("off", &doc).request_charge;
    let on = f.create("on", &doc).request_charge;
    assert!(on > off, "{on} > {off}");
}

/// One write transaction that writes the same items again and again (an import upserts
/// repeated ids in one batch): the index changes it buffers must end as the last write left
/// them, whatever order they are applied in.
#[test]
fn repeated_writes_in_one_transaction_leave_the_index_of_the_last() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(40_000);
    f.container("c", s);
    let mut rng = Rng(23);
    let docs: Vec<Vec<u8>> = (0..400)
        .map(|i| {
            let mut doc = random_doc(&mut rng, i % 37);
            doc["pk"] = json!(format!("p{}", i % 37 % 5));
            serde_json::to_vec(&doc).unwrap()
        })
        .collect();
    let records = records_of(&docs);
    let summary = f
        .engine
        .import_records(DB, "c", &records, &mut |_| {})
        .unwrap();
    assert_eq!(summary.batches, 1);
    assert_index_matches_items(&f, "c");
}

/// An import that overruns its container's RU budget commits what it wrote, waits for the
/// retry-after and goes on in the next transaction, where the documents prepared ahead of
/// the refused writes no longer match their stamps and are encoded again: every item is
/// stored once, numbered apart from the others, and indexed.
#[test]
fn a_throttled_import_goes_on_and_indexes_every_item() {
    let f = open();
    let settings = cosmoscope::engine::ContainerSettings {
        enforce_throughput: true,
        ..pk_settings()
    };
    f.container("c", settings);
    let docs: Vec<Vec<u8>> = (0..100)
        .map(|i| {
            let doc = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 7), "n": i,
                             "text": "word ".repeat(200)});
            serde_json::to_vec(&doc).unwrap()
        })
        .collect();
    let records = records_of(&docs);
    let summary = f
        .engine
        .import_records_in_batches(DB, "c", &records, 1_000, &mut |_| {})
        .unwrap();
    assert!(summary.throttled > 0, "the budget was overrun: {summary:?}");
    assert!(summary.batches > 1, "{summary:?}");
    assert_eq!((summary.items, summary.created), (100, 100));
    assert_index_matches_items(&f, "c");
    let rids = f
        .engine
        .query(DB, "c", "SELECT VALUE c._rid FROM c", &Default::default())
        .unwrap()
        .documents;
    let distinct: std::collections::BTreeSet<_> = rids.iter().map(|r| r.to_string()).collect();
    assert_eq!((rids.len(), distinct.len()), (100, 100));
}
