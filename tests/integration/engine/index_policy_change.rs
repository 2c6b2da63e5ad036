//! Replacing an indexing policy: the new index builds in the background while writes go
//! on, queries stay correct throughout (and use only paths both policies index), the
//! finished index equals a rebuild from the items, and invalid policies get the service's
//! 400 messages.

use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::QueryResult;
use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::store::testing::{
    IndexLayout, LEGACY_STRING_BYTES, STRING_BYTES, rebuild_from_items, stored_entries,
};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture, Rng, open, open_manual, pk_settings};

fn policy(v: Value) -> IndexingPolicy {
    serde_json::from_value(v).unwrap()
}

fn excluding_n() -> IndexingPolicy {
    policy(json!({"includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/n/?"}]}))
}

fn query(f: &Fixture, sql: &str) -> QueryResult {
    f.engine
        .query(
            DB,
            "c",
            sql,
            &QueryOptions {
                max_items: Some(10_000),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn ids(r: &QueryResult) -> Vec<String> {
    let mut v: Vec<String> = r.documents.iter().map(|d| d.to_string()).collect();
    v.sort();
    v
}

/// `c.n = x` (sargable) against `c.n + 0 = x` (never index-served): same documents.
fn check_consistent(f: &Fixture, x: u64) -> &'static str {
    let served = query(f, &format!("SELECT VALUE c.id FROM c WHERE c.n = {x}"));
    let scanned = query(f, &format!("SELECT VALUE c.id FROM c WHERE c.n + 0 = {x}"));
    assert_eq!(ids(&served), ids(&scanned), "c.n = {x}");
    served.access.kind
}

/// Asserts that container `c`'s index, with no build under way, holds exactly the entries
/// and counts a rebuild from its items gives; returns its layout.
fn assert_index_equals_a_rebuild(f: &Fixture) -> IndexLayout {
    let store = f.engine.store();
    let txn = store.read_txn().unwrap();
    let def = store.container(&txn, DB, "c").unwrap();
    assert!(def.index_build.is_none());
    let layout = IndexLayout::current(&def);
    let (expected, expected_counts) = rebuild_from_items(store, &txn, &def, &layout).unwrap();
    let (stored, counts) = stored_entries(store, &txn, def.rid, def.index_generation).unwrap();
    assert!(
        stored == expected,
        "{} stored vs {} rebuilt",
        stored.len(),
        expected.len()
    );
    assert_eq!(counts, expected_counts);
    layout
}

#[test]
fn rebuild_after_a_policy_change_while_writes_continue() {
    // No background builder: the test advances the build itself, one batch per round, so
    // it always sees the half-built index.
    let f = open_manual();
    let mut s = pk_settings();
    s.indexing_policy = Some(excluding_n());
    f.container("c", s);
    let mut rng = Rng(9);
    for i in 0..2500 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": format!("k{}", i % 40), "n": rng.below(50)}),
        );
    }
    assert_eq!(check_consistent(&f, 7), "scan");

    let info = f
        .engine
        .set_indexing_policy(DB, "c", IndexingPolicy::default())
        .unwrap();
    assert_eq!(info.index_transformation_progress, 0);
    let mut next = 2500;
    let mut finished = false;
    let mut saw_progress = false;
    for round in 0..200 {
        // Writes between builder batches: new items, replacements, deletions.
        for _ in 0..15 {
            let id = rng.below(next);
            match rng.below(3) {
                0 => {
                    f.create("c", &json!({"id": format!("{next}"), "pk": format!("k{}", next % 40), "n": rng.below(50)}));
                    next += 1;
                }
                1 => {
                    f.upsert("c", &json!({"id": format!("{id}"), "pk": format!("k{}", id % 40), "n": rng.below(50)}));
                }
                _ => {
                    let _ = f.engine.delete_item(
                        DB,
                        "c",
                        &format!("{id}"),
                        &json!(format!("k{}", id % 40)),
                        None,
                    );
                }
            }
        }
        // Queries stay correct, served by a scan until the new index is complete.
        let kind = check_consistent(&f, rng.below(50));
        let progress = f
            .engine
            .container(DB, "c")
            .unwrap()
            .index_transformation_progress;
        if progress > 0 && progress < 100 {
            saw_progress = true;
            assert_eq!(
                kind, "scan",
                "round {round}: the half-built index must not serve"
            );
        }
        if finished {
            break;
        }
        finished = f.engine.advance_index_build(DB, "c", 1).unwrap();
    }
    assert!(finished && saw_progress);
    assert_eq!(
        f.engine
            .container(DB, "c")
            .unwrap()
            .index_transformation_progress,
        100
    );
    assert_eq!(check_consistent(&f, 3), "index-lookup");

    // The finished generation equals a rebuild; the old one is gone.
    let layout = assert_index_equals_a_rebuild(&f);
    let store = f.engine.store();
    let txn = store.read_txn().unwrap();
    assert!(
        stored_entries(store, &txn, layout.cid, 0)
            .unwrap()
            .0
            .is_empty()
    );
}

#[test]
fn removing_a_path_stops_serving_at_once_and_the_charge_shows_it() {
    let f = open();
    f.pk_container("c");
    for i in 0..300 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": "p", "n": i % 30, "pad": "y".repeat(500)}),
        );
    }
    let before = query(&f, "SELECT * FROM c WHERE c.n = 4");
    assert_eq!(before.access.kind, "index-lookup");
    f.engine
        .set_indexing_policy(DB, "c", excluding_n())
        .unwrap();
    let during = query(&f, "SELECT * FROM c WHERE c.n = 4");
    assert_eq!(during.access.kind, "scan");
    while !f.engine.advance_index_build(DB, "c", 4).unwrap() {}
    let after = query(&f, "SELECT * FROM c WHERE c.n = 4");
    assert_eq!(after.access.kind, "scan");
    assert_eq!(ids(&before), ids(&after));
    assert_eq!(before.metrics.retrieved_document_count, 10);
    assert_eq!(after.metrics.retrieved_document_count, 300);
    assert!(after.request_charge > before.request_charge * 2.0);
    // Excluded paths also cost less to write.
    let doc = json!({"id": "w", "pk": "p", "n": 1, "pad": "y"});
    let excluded = f.create("c", &doc).request_charge;
    f.engine
        .set_indexing_policy(DB, "c", IndexingPolicy::default())
        .unwrap();
    let doc2 = json!({"id": "w2", "pk": "p", "n": 1, "pad": "y"});
    let included = f.create("c", &doc2).request_charge;
    assert!(included > excluded, "{included} > {excluded}");
}

#[test]
fn invalid_policies_get_the_service_messages() {
    let f = open();
    f.pk_container("c");
    let cases = [
        (
            json!({"includedPaths": [{"path": "/a/?"}]}),
            "The special mandatory indexing path",
        ),
        (
            json!({"indexingMode": "none", "automatic": true}),
            "Indexing mode value cannot be 'none'",
        ),
        (json!({"indexingMode": "lazy"}), "lazy"),
        (
            json!({"includedPaths": [{"path": "/*"}, {"path": "a/?"}]}),
            "could not be accepted",
        ),
        (
            json!({"compositeIndexes": [[{"path": "/a"}]]}),
            "it must have at least 2 paths",
        ),
    ];
    for (p, message) in cases {
        let err = f
            .engine
            .set_indexing_policy(DB, "c", policy(p.clone()))
            .unwrap_err();
        assert_eq!(err.status.as_u16(), 400, "{p}");
        assert!(err.message.contains(message), "{p}: {}", err.message);
    }
    let mut s = pk_settings();
    s.default_ttl = Some(-1);
    f.container("ttl", s);
    let err = f
        .engine
        .set_indexing_policy(DB, "ttl", IndexingPolicy::none())
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
}

#[test]
fn indexing_off_then_on_again() {
    let f = open();
    f.pk_container("c");
    for i in 0..50 {
        f.create("c", &json!({"id": format!("{i}"), "pk": "p", "n": i % 5}));
    }
    f.engine
        .set_indexing_policy(DB, "c", IndexingPolicy::none())
        .unwrap();
    while !f.engine.advance_index_build(DB, "c", 4).unwrap() {}
    assert_eq!(check_consistent(&f, 2), "scan");
    f.engine
        .set_indexing_policy(DB, "c", IndexingPolicy::default())
        .unwrap();
    while !f.engine.advance_index_build(DB, "c", 4).unwrap() {}
    assert_eq!(check_consistent(&f, 2), "index-lookup");
}

/// A store written before index generations kept their own string length: its index
/// (strings cut at 512 bytes) keeps serving while a replacement builds, and the
/// replacement cuts at this build's length. Strings of 303 bytes are exact in the old
/// generation and cut in the new one (they differ in their first bytes, so a cut one still
/// selects few); lookups on them select exactly what a scan does before, during and after
/// the build, and the finished index equals a rebuild.
#[test]
fn an_index_from_before_string_lengths_serves_until_its_replacement_is_built() {
    let f = open_manual();
    f.container("c", pk_settings());
    f.engine
        .store()
        .write_as_before_string_lengths(DB, "c")
        .unwrap();
    let text = |i: u64| format!("{i:03}{}", "s".repeat(300));
    let doc = |i: u64, n: u64| json!({"id": format!("{i}"), "pk": format!("k{}", i % 40), "n": n, "s": text(i % 30)});
    let mut rng = Rng(17);
    for i in 0..2500 {
        f.create("c", &doc(i, rng.below(50)));
    }
    let string_bytes = || {
        let store = f.engine.store();
        let txn = store.read_txn().unwrap();
        store.container(&txn, DB, "c").unwrap().index_string_bytes
    };
    assert_eq!(string_bytes(), LEGACY_STRING_BYTES);
    assert!((STRING_BYTES..LEGACY_STRING_BYTES).contains(&text(0).len()));
    let check = |f: &Fixture, x: u64| {
        let served = query(
            f,
            &format!("SELECT VALUE c.id FROM c WHERE c.s = '{}'", text(x)),
        );
        let scanned = query(
            f,
            &format!(
                "SELECT VALUE c.id FROM c WHERE CONCAT(c.s, '') = '{}'",
                text(x)
            ),
        );
        assert_eq!(ids(&served), ids(&scanned), "c.s = text({x})");
        assert!(!served.documents.is_empty());
        assert_eq!(served.access.kind, "index-lookup", "{:?}", served.access);
    };
    check(&f, 3);

    f.engine
        .set_indexing_policy(DB, "c", excluding_n())
        .unwrap();
    assert_eq!(string_bytes(), STRING_BYTES);
    let mut next = 2500;
    let mut finished = false;
    let mut rounds = 0;
    while !finished {
        for _ in 0..15 {
            f.upsert("c", &doc(rng.below(next), rng.below(50)));
            f.create("c", &doc(next, rng.below(50)));
            next += 1;
        }
        // The old generation serves: `/s/?` is in both policies.
        check(&f, rng.below(30));
        finished = f.engine.advance_index_build(DB, "c", 1).unwrap();
        rounds += 1;
        assert!(rounds < 200, "the build never finished");
    }
    assert!(
        rounds > 1,
        "the build took one batch: nothing was read while it ran"
    );
    for x in [0, 7, 29] {
        check(&f, x);
    }

    assert_eq!(assert_index_equals_a_rebuild(&f).string_bytes, STRING_BYTES);
}
