//! Item operations through the engine: CRUD, system properties, optimistic concurrency,
//! the service's limits and errors, partition key shapes, request charges, concurrency.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cosmoscope::engine::ContainerSettings;
use cosmoscope::engine::{Backend, Engine};
use serde_json::{Value, json};

use crate::support::fixture::*;

const C: &str = "items";

fn fixture() -> Fixture {
    let fx = open();
    fx.pk_container(C);
    fx
}

#[test]
fn engine_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
}

#[test]
fn create_read_replace_upsert_delete_round_trip() {
    let fx = fixture();
    let e = &fx.engine;

    let created = fx.create(C, &json!({"id": "a", "pk": "p", "n": 1}));
    assert_eq!(created.status, 201);
    let cbody = body(&created);
    assert_eq!(cbody["n"], 1);
    assert_eq!(
        created.etag.as_deref(),
        cbody["_etag"].as_str(),
        "response etag is the item's _etag"
    );

    let read = fx.read(C, "a", &json!("p"));
    assert_eq!(read.status, 200);
    assert_eq!(
        body(&read),
        cbody,
        "a read returns exactly what the create stored"
    );
    assert_eq!(read.etag, created.etag);

    let replaced = fx.replace(C, &json!({"id": "a", "pk": "p", "n": 2}));
    assert_eq!(replaced.status, 200);
    assert_eq!(fx.read_json(C, "a", &json!("p"))["n"], 2);

    let up_existing = fx.upsert(C, &json!({"id": "a", "pk": "p", "n": 3}));
    assert_eq!(
        up_existing.status, 200,
        "upsert of an existing item replaces it"
    );
    assert_eq!(fx.read_json(C, "a", &json!("p"))["n"], 3);

    let up_new = fx.upsert(C, &json!({"id": "b", "pk": "p", "n": 10}));
    assert_eq!(up_new.status, 201, "upsert of a new item creates it");
    assert_eq!(fx.read_json(C, "b", &json!("p"))["n"], 10);

    let deleted = fx.delete(C, "a", &json!("p"));
    assert_eq!(deleted.status, 204);
    assert!(deleted.body.is_none());
    assert_eq!(err(e.read_item(DB, C, "a", &json!("p"))).status, 404);
    // b is untouched
    assert_eq!(fx.read_json(C, "b", &json!("p"))["n"], 10);
    assert_eq!(container_counts(e, C).0, 1);

    // The id can be used again after a delete.
    assert_eq!(
        fx.create(C, &json!({"id": "a", "pk": "p", "n": 4})).status,
        201
    );
}

#[test]
fn system_properties_are_written() {
    let fx = fixture();
    let before = cosmoscope::engine::now_secs();
    let r = fx.create(
        C,
        &json!({"id": "a", "pk": "p", "_rid": "bogus", "_ts": 5, "_etag": "\"mine\"", "_self": "x", "_attachments": "y"}),
    );
    let after = cosmoscope::engine::now_secs();
    let b = body(&r);
    let rid = b["_rid"].as_str().expect("_rid is a string");
    assert!(
        !rid.is_empty() && rid != "bogus",
        "client-supplied _rid is replaced: {rid}"
    );
    let self_link = b["_self"].as_str().expect("_self is a string");
    assert!(self_link.starts_with("dbs/"), "{self_link}");
    assert!(self_link.contains("/colls/"), "{self_link}");
    assert!(
        self_link.ends_with(&format!("/docs/{rid}/")),
        "_self ends with docs/<_rid>/: {self_link}"
    );
    let etag = b["_etag"].as_str().expect("_etag is a string");
    assert!(
        etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'),
        "etag is quoted: {etag}"
    );
    assert_ne!(etag, "\"mine\"");
    assert_eq!(b["_attachments"], "attachments/");
    let ts = b["_ts"].as_i64().expect("_ts is an integer");
    assert!(
        ts >= before && ts <= after,
        "_ts {ts} is the write time in Unix seconds ({before}..={after})"
    );
}

#[test]
fn etag_changes_on_every_write_and_rid_is_stable() {
    let fx = fixture();
    let mut etags = Vec::new();
    let first = body(&fx.create(C, &json!({"id": "a", "pk": "p", "v": 0})));
    let rid = first["_rid"].clone();
    etags.push(first["_etag"].clone());
    for v in 1..=3 {
        let b = body(&fx.replace(C, &json!({"id": "a", "pk": "p", "v": v})));
        assert_eq!(b["_rid"], rid, "_rid is stable across replace");
        etags.push(b["_etag"].clone());
    }
    let b = body(&fx.upsert(C, &json!({"id": "a", "pk": "p", "v": 9})));
    assert_eq!(b["_rid"], rid, "_rid is stable across upsert");
    etags.push(b["_etag"].clone());
    // Replace with an identical body still changes the etag.
    let b = body(&fx.replace(C, &json!({"id": "a", "pk": "p", "v": 9})));
    etags.push(b["_etag"].clone());
    for (i, a) in etags.iter().enumerate() {
        for bb in &etags[i + 1..] {
            assert_ne!(a, bb, "every write produces a new etag: {etags:?}");
        }
    }
    // Another item gets another _rid.
    let other = body(&fx.create(C, &json!({"id": "b", "pk": "p"})));
    assert_ne!(other["_rid"], rid);
}

#[test]
fn conflict_only_within_the_same_logical_partition() {
    let fx = fixture();
    let e = &fx.engine;
    fx.create(C, &json!({"id": "x", "pk": "p1", "who": "first"}));
    let conflict = err(e.create_item(
        DB,
        C,
        &bytes(&json!({"id": "x", "pk": "p1", "who": "second"})),
    ));
    assert_eq!(conflict.status, 409);
    assert!(conflict.request_charge > 0.0, "409 is charged");
    assert_eq!(
        fx.read_json(C, "x", &json!("p1"))["who"],
        "first",
        "the failed create changed nothing"
    );

    let other = fx.create(C, &json!({"id": "x", "pk": "p2", "who": "other"}));
    assert_eq!(
        other.status, 201,
        "same id under another partition key value is another item"
    );
    assert_eq!(fx.read_json(C, "x", &json!("p1"))["who"], "first");
    assert_eq!(fx.read_json(C, "x", &json!("p2"))["who"], "other");
    assert_eq!(container_counts(e, C).0, 2);
}

#[test]
fn if_match_guards_replace_upsert_and_delete() {
    let fx = fixture();
    let e = &fx.engine;
    let v1 = fx
        .create(C, &json!({"id": "a", "pk": "p", "v": 1}))
        .etag
        .unwrap();
    let v2 = fx
        .replace(C, &json!({"id": "a", "pk": "p", "v": 2}))
        .etag
        .unwrap();
    assert_ne!(v1, v2);

    let doc = bytes(&json!({"id": "a", "pk": "p", "v": 3}));
    let stale = err(e.replace_item(DB, C, &doc, Some(&v1)));
    assert_eq!(stale.status, 412);
    assert!(stale.request_charge > 0.0);
    let stale = err(e.upsert_item(DB, C, &doc, Some(&v1)));
    assert_eq!(stale.status, 412);
    assert!(stale.request_charge > 0.0);
    let stale = err(e.delete_item(DB, C, "a", &json!("p"), Some(&v1)));
    assert_eq!(stale.status, 412);
    assert!(stale.request_charge > 0.0);
    assert_eq!(
        fx.read_json(C, "a", &json!("p"))["v"],
        2,
        "failed conditional writes changed nothing"
    );

    let r = e
        .replace_item(DB, C, &doc, Some(&v2))
        .expect("replace with the current etag");
    assert_eq!(r.status.as_u16(), 200);
    let v3 = r.etag.unwrap();
    let r = e
        .upsert_item(
            DB,
            C,
            &bytes(&json!({"id": "a", "pk": "p", "v": 4})),
            Some(&v3),
        )
        .expect("upsert with the current etag");
    assert_eq!(r.status.as_u16(), 200);
    let v4 = r.etag.unwrap();
    assert_eq!(
        err(e.delete_item(DB, C, "a", &json!("p"), Some(&v3))).status,
        412
    );
    let r = e
        .delete_item(DB, C, "a", &json!("p"), Some(&v4))
        .expect("delete with the current etag");
    assert_eq!(r.status.as_u16(), 204);
    assert_eq!(err(e.read_item(DB, C, "a", &json!("p"))).status, 404);
}

#[test]
fn items_over_two_megabytes_are_413() {
    let fx = fixture();
    let e = &fx.engine;
    let big = json!({"id": "big", "pk": "p", "blob": "x".repeat(2 * 1024 * 1024)});
    let r = err(e.create_item(DB, C, &bytes(&big)));
    assert_eq!(r.status.as_u16(), 413);
    assert!(r.request_charge > 0.0);
    assert_eq!(err(e.upsert_item(DB, C, &bytes(&big), None)).status, 413);
    // Just under the limit is accepted.
    let ok = json!({"id": "ok", "pk": "p", "blob": "x".repeat(2 * 1024 * 1024 - 200)});
    assert_eq!(e.create_item(DB, C, &bytes(&ok)).unwrap().status, 201);
    // Replacing it with an oversized image is refused and keeps the old one.
    let too_big = json!({"id": "ok", "pk": "p", "blob": "y".repeat(2 * 1024 * 1024)});
    assert_eq!(
        err(e.replace_item(DB, C, &bytes(&too_big), None)).status,
        413
    );
    assert!(
        fx.read_json(C, "ok", &json!("p"))["blob"]
            .as_str()
            .unwrap()
            .starts_with('x')
    );
    assert_eq!(container_counts(e, C).0, 1);
}

#[test]
fn malformed_items_are_400_and_charged() {
    let fx = fixture();
    let e = &fx.engine;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("malformed JSON", b"{\"id\": \"a\", \"pk\": ".to_vec()),
        (
            "trailing garbage",
            b"{\"id\": \"a\", \"pk\": \"p\"} x".to_vec(),
        ),
        ("array", b"[{\"id\": \"a\"}]".to_vec()),
        ("string", b"\"a\"".to_vec()),
        ("number", b"42".to_vec()),
        ("null", b"null".to_vec()),
        ("missing id", bytes(&json!({"pk": "p"}))),
        ("numeric id", bytes(&json!({"id": 5, "pk": "p"}))),
        ("empty id", bytes(&json!({"id": "", "pk": "p"}))),
        (
            "id over 1023 bytes",
            bytes(&json!({"id": "x".repeat(1024), "pk": "p"})),
        ),
        (
            "id over 1023 bytes (multibyte)",
            bytes(&json!({"id": "é".repeat(512), "pk": "p"})),
        ),
        ("id with /", bytes(&json!({"id": "a/b", "pk": "p"}))),
        ("id with \\", bytes(&json!({"id": "a\\b", "pk": "p"}))),
        (
            "pk is an object",
            bytes(&json!({"id": "a", "pk": {"x": 1}})),
        ),
        ("pk is an array", bytes(&json!({"id": "a", "pk": [1, 2]}))),
        (
            "pk string over 2048 bytes",
            bytes(&json!({"id": "a", "pk": "k".repeat(2049)})),
        ),
        (
            "pk string far over 2048 bytes",
            bytes(&json!({"id": "a", "pk": "k".repeat(5000)})),
        ),
    ];
    for (what, body) in &cases {
        for op in ["create", "upsert", "replace"] {
            let r = match op {
                "create" => e.create_item(DB, C, body),
                "upsert" => e.upsert_item(DB, C, body, None),
                _ => e.replace_item(DB, C, body, None),
            };
            let er = err(r);
            assert_eq!(er.status, 400, "{op} with {what}: {er}");
            assert!(er.request_charge > 0.0, "{op} with {what} is charged");
        }
    }
    assert_eq!(container_counts(e, C), (0, 0), "nothing was written");
    assert_eq!(e.feed_head(DB, C).unwrap(), 0, "nothing reached the feed");

    // The limits themselves are allowed.
    let id = "x".repeat(1023);
    fx.create(C, &json!({"id": id, "pk": "p"}));
    assert_eq!(fx.read_json(C, &id, &json!("p"))["id"], id.as_str());
    fx.create(C, &json!({"id": "unicode ✓ ok", "pk": "p"}));
    // Point operations with an invalid id are 400 too.
    assert_eq!(err(e.read_item(DB, C, "", &json!("p"))).status, 400);
    assert_eq!(err(e.read_item(DB, C, "a/b", &json!("p"))).status, 400);
    assert_eq!(err(e.delete_item(DB, C, "", &json!("p"), None)).status, 400);
    // A partition key value given with a request must be a scalar.
    assert_eq!(err(e.read_item(DB, C, "a", &json!({"x": 1}))).status, 400);
    assert_eq!(err(e.read_item(DB, C, "a", &json!([[1]]))).status, 400);
    assert_eq!(err(e.read_item(DB, C, "a", &json!(["a", "b"]))).status, 400);
}

#[test]
fn partition_key_string_of_exactly_2048_bytes_is_accepted() {
    let fx = fixture();
    let pk = "k".repeat(2048);
    fx.create(C, &json!({"id": "a", "pk": pk}));
    assert_eq!(fx.read_json(C, "a", &json!(pk))["id"], "a");
}

#[test]
fn missing_item_container_and_database_are_404() {
    let fx = fixture();
    let e = &fx.engine;
    let doc = bytes(&json!({"id": "a", "pk": "p"}));
    let r = err(e.read_item(DB, C, "nope", &json!("p")));
    assert_eq!(r.status.as_u16(), 404);
    assert!(r.request_charge > 0.0, "a 404 read is charged");
    let r = err(e.replace_item(DB, C, &doc, None));
    assert_eq!(r.status.as_u16(), 404, "replace of a missing item is 404");
    assert!(r.request_charge > 0.0);
    let r = err(e.delete_item(DB, C, "a", &json!("p"), None));
    assert_eq!(r.status.as_u16(), 404);
    assert!(r.request_charge > 0.0);

    for (db, c) in [(DB, "missing"), ("nodb", C)] {
        assert_eq!(
            err(e.read_item(db, c, "a", &json!("p"))).status,
            404,
            "{db}/{c}"
        );
        assert_eq!(err(e.create_item(db, c, &doc)).status, 404, "{db}/{c}");
        assert_eq!(
            err(e.upsert_item(db, c, &doc, None)).status,
            404,
            "{db}/{c}"
        );
        assert_eq!(
            err(e.replace_item(db, c, &doc, None)).status,
            404,
            "{db}/{c}"
        );
        assert_eq!(
            err(e.delete_item(db, c, "a", &json!("p"), None)).status,
            404,
            "{db}/{c}"
        );
        assert_eq!(err(e.container(db, c)).status, 404, "{db}/{c}");
    }
    // A deleted container answers 404 afterwards.
    fx.create(C, &json!({"id": "a", "pk": "p"}));
    e.delete_container(DB, C).unwrap();
    assert_eq!(err(e.read_item(DB, C, "a", &json!("p"))).status, 404);
    assert_eq!(err(e.delete_container(DB, C)).status, 404);
}

#[test]
fn requests_rejected_before_touching_data_are_charged() {
    let fx = fixture();
    let e = &fx.engine;
    let doc = bytes(&json!({"id": "a", "pk": "p"}));
    for (db, c) in [(DB, "missing"), ("nodb", C)] {
        assert!(
            err(e.read_item(db, c, "a", &json!("p"))).request_charge > 0.0,
            "read {db}/{c}"
        );
        assert!(
            err(e.create_item(db, c, &doc)).request_charge > 0.0,
            "create {db}/{c}"
        );
        assert!(
            err(e.upsert_item(db, c, &doc, None)).request_charge > 0.0,
            "upsert {db}/{c}"
        );
        assert!(
            err(e.replace_item(db, c, &doc, None)).request_charge > 0.0,
            "replace {db}/{c}"
        );
        assert!(
            err(e.delete_item(db, c, "a", &json!("p"), None)).request_charge > 0.0,
            "delete {db}/{c}"
        );
    }
    assert!(
        err(e.read_item(DB, C, "a", &json!({"x": 1}))).request_charge > 0.0,
        "read with an object pk"
    );
    assert!(
        err(e.delete_item(DB, C, "a", &json!([1, 2]), None)).request_charge > 0.0,
        "delete with a 2-component pk"
    );
}

#[test]
fn missing_partition_key_is_undefined_not_null() {
    let fx = fixture();
    let e = &fx.engine;
    fx.create(C, &json!({"id": "a", "who": "undefined"}));
    fx.create(C, &json!({"id": "a", "pk": null, "who": "null"}));
    assert_eq!(fx.read_json(C, "a", &json!({}))["who"], "undefined");
    assert_eq!(fx.read_json(C, "a", &json!([{}]))["who"], "undefined");
    assert_eq!(fx.read_json(C, "a", &json!(null))["who"], "null");
    assert_eq!(fx.read_json(C, "a", &json!([null]))["who"], "null");
    assert_eq!(err(e.read_item(DB, C, "a", &json!(""))).status, 404);

    let undefined = e.epk(DB, C, &json!({})).unwrap();
    let null = e.epk(DB, C, &json!(null)).unwrap();
    assert_ne!(
        undefined.epk, null.epk,
        "undefined and null are different logical partitions"
    );
    let parts = e.partitions(DB, C, 10, 60).unwrap();
    assert_eq!(parts.largest_logical_partitions.len(), 2);

    // The undefined partition holds several items and can be written and deleted through.
    fx.create(C, &json!({"id": "b"}));
    fx.replace(C, &json!({"id": "b", "v": 2}));
    assert_eq!(fx.read_json(C, "b", &json!({}))["v"], 2);
    assert_eq!(err(e.read_item(DB, C, "b", &json!(null))).status, 404);
    fx.delete(C, "a", &json!({}));
    assert_eq!(
        fx.read_json(C, "a", &json!(null))["who"],
        "null",
        "deleting the undefined item kept the null one"
    );
    assert_eq!(err(e.read_item(DB, C, "a", &json!({}))).status, 404);
}

#[test]
fn nested_partition_key_path() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "nested",
        ContainerSettings::new(vec!["/address/zip".into()]),
    );
    fx.create(
        "nested",
        &json!({"id": "a", "address": {"zip": "98052", "city": "Redmond"}}),
    );
    fx.create("nested", &json!({"id": "a", "address": {"zip": "10001"}}));
    fx.create(
        "nested",
        &json!({"id": "a", "address": {"city": "nowhere"}}),
    );
    assert_eq!(
        fx.read_json("nested", "a", &json!("98052"))["address"]["city"],
        "Redmond"
    );
    assert_eq!(
        fx.read_json("nested", "a", &json!("10001"))["address"]["zip"],
        "10001"
    );
    // Both `address` without zip and a top-level `zip` leave the path undefined: a second
    // item "a" there conflicts.
    let undefined = fx.read_json("nested", "a", &json!({}));
    assert_eq!(undefined["address"]["city"], "nowhere");
    let dup = bytes(&json!({"id": "a", "zip": "98052"}));
    assert_eq!(err(e.create_item(DB, "nested", &dup)).status, 409);
    let dup = bytes(&json!({"id": "a", "address": "not an object"}));
    assert_eq!(err(e.create_item(DB, "nested", &dup)).status, 409);
    assert_eq!(container_counts(e, "nested").0, 3);
    // The key value at the nested path must be a scalar.
    let bad = bytes(&json!({"id": "b", "address": {"zip": {"code": 1}}}));
    assert_eq!(err(e.create_item(DB, "nested", &bad)).status, 400);
    // Numbers and booleans are valid keys.
    fx.create("nested", &json!({"id": "n", "address": {"zip": 98052}}));
    fx.create("nested", &json!({"id": "t", "address": {"zip": true}}));
    assert_eq!(fx.read_json("nested", "n", &json!(98052))["id"], "n");
    assert_eq!(fx.read_json("nested", "t", &json!(true))["id"], "t");
    assert_eq!(
        err(e.read_item(DB, "nested", "n", &json!("98052"))).status,
        404,
        "98052 and \"98052\" differ"
    );
}

#[test]
fn the_top_level_zip_does_not_count_for_a_nested_path() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "nested",
        ContainerSettings::new(vec!["/address/zip".into()]),
    );
    fx.create("nested", &json!({"id": "a", "zip": "98052"}));
    assert_eq!(
        err(e.read_item(DB, "nested", "a", &json!("98052"))).status,
        404
    );
    assert_eq!(fx.read_json("nested", "a", &json!({}))["zip"], "98052");
}

#[test]
fn hierarchical_keys_with_two_and_three_levels() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "h2",
        ContainerSettings::new(vec!["/tenant".into(), "/user".into()]),
    );
    fx.container(
        "h3",
        ContainerSettings::new(vec!["/tenant".into(), "/user".into(), "/session".into()]),
    );

    fx.create(
        "h2",
        &json!({"id": "a", "tenant": "t1", "user": "u1", "v": 1}),
    );
    fx.create(
        "h2",
        &json!({"id": "a", "tenant": "t1", "user": "u2", "v": 2}),
    );
    fx.create(
        "h2",
        &json!({"id": "a", "tenant": "t2", "user": "u1", "v": 3}),
    );
    assert_eq!(fx.read_json("h2", "a", &json!(["t1", "u1"]))["v"], 1);
    assert_eq!(fx.read_json("h2", "a", &json!(["t1", "u2"]))["v"], 2);
    assert_eq!(fx.read_json("h2", "a", &json!(["t2", "u1"]))["v"], 3);
    assert_eq!(
        err(e.read_item(DB, "h2", "a", &json!(["t1", "u3"]))).status,
        404
    );
    // A point read needs the full key.
    assert_eq!(err(e.read_item(DB, "h2", "a", &json!("t1"))).status, 400);
    assert_eq!(err(e.read_item(DB, "h2", "a", &json!(["t1"]))).status, 400);
    assert_eq!(
        err(e.read_item(DB, "h2", "a", &json!(["t1", "u1", "x"]))).status,
        400
    );
    let conflict = err(e.create_item(
        DB,
        "h2",
        &bytes(&json!({"id": "a", "tenant": "t1", "user": "u1"})),
    ));
    assert_eq!(conflict.status, 409);

    // A full key's EPK is 64 hex chars (32 per level); a prefix spans a range.
    let full = e.epk(DB, "h2", &json!(["t1", "u1"])).unwrap();
    assert_eq!(full.epk.len(), 64);
    assert!(full.epk_range.is_none());
    let prefix = e.epk(DB, "h2", &json!(["t1"])).unwrap();
    let (min, max) = prefix.epk_range.clone().expect("a prefix has an EPK range");
    assert_eq!(min.len(), 32);
    assert!(
        full.epk.starts_with(&min),
        "the full key's EPK extends its prefix's"
    );
    assert!(range_contains(&min, &max, &full.epk));
    let other = e.epk(DB, "h2", &json!(["t2", "u1"])).unwrap();
    assert!(!range_contains(&min, &max, &other.epk));

    fx.create(
        "h3",
        &json!({"id": "a", "tenant": "t1", "user": "u1", "session": "s1", "v": 1}),
    );
    fx.create(
        "h3",
        &json!({"id": "a", "tenant": "t1", "user": "u1", "session": "s2", "v": 2}),
    );
    fx.create(
        "h3",
        &json!({"id": "a", "tenant": "t1", "session": "s1", "v": 3}),
    );
    assert_eq!(fx.read_json("h3", "a", &json!(["t1", "u1", "s1"]))["v"], 1);
    assert_eq!(fx.read_json("h3", "a", &json!(["t1", "u1", "s2"]))["v"], 2);
    assert_eq!(
        fx.read_json("h3", "a", &json!(["t1", {}, "s1"]))["v"],
        3,
        "a missing level is undefined"
    );
    assert_eq!(
        err(e.read_item(DB, "h3", "a", &json!(["t1", null, "s1"]))).status,
        404
    );
    assert_eq!(
        err(e.read_item(DB, "h3", "a", &json!(["t1", "u1"]))).status,
        400
    );
    assert_eq!(
        e.epk(DB, "h3", &json!(["t1", "u1", "s1"]))
            .unwrap()
            .epk
            .len(),
        96
    );
    let info = e.container(DB, "h3").unwrap();
    assert_eq!(info.partition_key.kind, "MultiHash");
    assert_eq!(info.partition_key.version, 2);

    fx.delete("h3", "a", &json!(["t1", "u1", "s2"]));
    assert_eq!(
        err(e.read_item(DB, "h3", "a", &json!(["t1", "u1", "s2"]))).status,
        404
    );
    assert_eq!(container_counts(e, "h3").0, 2);
}

#[test]
fn every_operation_reports_a_positive_charge() {
    let fx = fixture();
    let doc = json!({"id": "a", "pk": "p", "name": "x", "tags": ["a", "b"], "n": 1});
    let charges = [
        ("create", fx.create(C, &doc).request_charge),
        ("read", fx.read(C, "a", &json!("p")).request_charge),
        ("replace", fx.replace(C, &doc).request_charge),
        ("upsert (replace)", fx.upsert(C, &doc).request_charge),
        (
            "upsert (create)",
            fx.upsert(C, &json!({"id": "b", "pk": "p"})).request_charge,
        ),
        ("delete", fx.delete(C, "a", &json!("p")).request_charge),
    ];
    for (op, ru) in charges {
        assert!(ru > 0.0 && ru.is_finite(), "{op} charged {ru}");
    }
}

#[test]
fn one_kilobyte_read_costs_one_ru_and_reads_scale_with_size() {
    let fx = fixture();
    let small = fx.create(
        C,
        &json!({"id": "small", "pk": "p", "pad": "x".repeat(700)}),
    );
    let len = small.body.as_ref().unwrap().len();
    assert!(
        len > 700 && len <= 1024,
        "precondition: stored item is about 1 KB ({len})"
    );
    assert_eq!(fx.read(C, "small", &json!("p")).request_charge, 1.0);

    fx.create(
        C,
        &json!({"id": "big", "pk": "p", "pad": "x".repeat(100 * 1024 - 200)}),
    );
    let ru = fx.read(C, "big", &json!("p")).request_charge;
    assert!(
        (9.5..=10.5).contains(&ru),
        "a 100 KB read costs about 10 RU, got {ru}"
    );
}

#[test]
fn replace_costs_about_twice_a_create_of_the_same_item() {
    let fx = fixture();
    let doc =
        json!({"id": "a", "pk": "p", "name": "n", "city": "c", "n": 5, "pad": "x".repeat(900)});
    let create = fx.create(C, &doc).request_charge;
    let replace = fx.replace(C, &doc).request_charge;
    let ratio = replace / create;
    assert!(
        (1.9..=2.1).contains(&ratio),
        "replace {replace} vs create {create}"
    );
    // Upsert charges like the operation it turns into.
    let up_replace = fx.upsert(C, &doc).request_charge;
    assert!(
        (up_replace - replace).abs() < 0.05,
        "upsert over an item {up_replace} ≈ replace {replace}"
    );
    let mut doc_b = doc.clone();
    doc_b["id"] = json!("b");
    let up_create = fx.upsert(C, &doc_b).request_charge;
    assert!(
        (up_create - create).abs() < 0.05,
        "upsert of a new item {up_create} ≈ create {create}"
    );
    // Bigger items cost more to write.
    let big = fx
        .create(
            C,
            &json!({"id": "big", "pk": "p", "pad": "x".repeat(50 * 1024)}),
        )
        .request_charge;
    assert!(
        big > create * 3.0,
        "a 50 KB create ({big}) costs more than a 1 KB one ({create})"
    );
}

#[test]
fn failed_requests_are_charged() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        max_logical_partition_bytes: Some(2048),
        ..pk_settings()
    };
    fx.container("small", settings);
    let etag = fx
        .create("small", &json!({"id": "a", "pk": "p"}))
        .etag
        .unwrap();
    let mut errors = vec![
        ("400", err(e.create_item(DB, "small", b"nope"))),
        ("404 item", err(e.read_item(DB, "small", "zz", &json!("p")))),
        (
            "409",
            err(e.create_item(DB, "small", &bytes(&json!({"id": "a", "pk": "p"})))),
        ),
        (
            "412",
            err(e.replace_item(
                DB,
                "small",
                &bytes(&json!({"id": "a", "pk": "p"})),
                Some("\"stale\""),
            )),
        ),
        (
            "403",
            err(e.create_item(
                DB,
                "small",
                &bytes(&json!({"id": "b", "pk": "p", "pad": "x".repeat(3000)})),
            )),
        ),
    ];
    errors.push((
        "413",
        err(e.create_item(
            DB,
            "small",
            &bytes(&json!({"id": "c", "pk": "p", "pad": "x".repeat(3 * 1024 * 1024)})),
        )),
    ));
    for (what, er) in &errors {
        assert!(er.request_charge > 0.0, "{what} ({er}) carries a charge");
    }
    assert_eq!(errors[4].1.status, 403);
    assert_eq!(
        e.read_item(DB, "small", "a", &json!("p"))
            .unwrap()
            .etag
            .unwrap(),
        etag
    );
}

/// Readers in several threads see complete items while a writer upserts them.
#[test]
fn concurrent_readers_see_complete_items() {
    let fx = fixture();
    let engine = Arc::new(fx.engine);
    const IDS: usize = 8;
    let payload = |id: usize, v: u64| format!("{id}-{v}-").repeat(40);
    for id in 0..IDS {
        let doc = json!({"id": format!("i{id}"), "pk": format!("p{}", id % 3), "v": 0, "payload": payload(id, 0)});
        engine.create_item(DB, C, &bytes(&doc)).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for t in 0..4 {
        let (engine, stop) = (engine.clone(), stop.clone());
        readers.push(std::thread::spawn(move || {
            let mut last = [0u64; IDS];
            let mut reads = 0u64;
            while !stop.load(Ordering::Acquire) || reads < 50 {
                let id = (reads as usize + t) % IDS;
                let r = engine
                    .read_item(DB, C, &format!("i{id}"), &json!(format!("p{}", id % 3)))
                    .expect("a reader never fails");
                let item: Value =
                    serde_json::from_slice(r.body.as_deref().unwrap()).expect("complete JSON");
                let v = item["v"].as_u64().expect("v");
                assert_eq!(
                    item["payload"],
                    payload(id, v).as_str(),
                    "payload matches its version"
                );
                assert_eq!(r.etag.as_deref(), item["_etag"].as_str());
                assert!(
                    v >= last[id],
                    "versions never go backwards for one reader: {v} < {}",
                    last[id]
                );
                last[id] = v;
                reads += 1;
            }
            reads
        }));
    }
    let writer = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            for v in 1..=300u64 {
                let id = (v as usize) % IDS;
                let doc = json!({"id": format!("i{id}"), "pk": format!("p{}", id % 3), "v": v, "payload": payload(id, v)});
                engine
                    .upsert_item(DB, C, &bytes(&doc), None)
                    .expect("upsert");
            }
        })
    };
    writer.join().expect("writer");
    stop.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().expect("reader") >= 50);
    }
    // The final state is the writer's last version of each item.
    for id in 0..IDS {
        let r = engine
            .read_item(DB, C, &format!("i{id}"), &json!(format!("p{}", id % 3)))
            .unwrap();
        let item: Value = serde_json::from_slice(r.body.as_deref().unwrap()).unwrap();
        let last_v = (1..=300u64)
            .filter(|v| (*v as usize) % IDS == id)
            .max()
            .unwrap();
        assert_eq!(item["v"], last_v);
    }
    assert_eq!(container_counts(&engine, C).0, IDS as u64);
    drop(engine);
    drop(fx.dir);
}

#[test]
fn numeric_keys_are_doubles_and_types_do_not_mix() {
    let fx = fixture();
    let e = &fx.engine;
    fx.create(C, &json!({"id": "a", "pk": 5}));
    assert_eq!(
        fx.read_json(C, "a", &json!(5.0))["pk"],
        5,
        "5 and 5.0 are the same key"
    );
    assert_eq!(err(e.read_item(DB, C, "a", &json!("5"))).status, 404);
    fx.create(C, &json!({"id": "a", "pk": "5"}));
    fx.create(C, &json!({"id": "a", "pk": true}));
    fx.create(C, &json!({"id": "a", "pk": false}));
    fx.create(C, &json!({"id": "a", "pk": 0}));
    fx.create(C, &json!({"id": "a", "pk": ""}));
    assert_eq!(
        container_counts(e, C).0,
        6,
        "5, \"5\", true, false, 0 and \"\" are six logical partitions"
    );
    assert_eq!(fx.read_json(C, "a", &json!(false))["pk"], false);
    assert_eq!(fx.read_json(C, "a", &json!(""))["pk"], "");
    // Integers beyond 2^53 collapse to the same double, as on the service.
    fx.create(C, &json!({"id": "big", "pk": 9_007_199_254_740_992u64}));
    let dup = bytes(&json!({"id": "big", "pk": 9_007_199_254_740_993u64}));
    assert_eq!(err(e.create_item(DB, C, &dup)).status, 409);
}

#[test]
fn nesting_depth_is_limited() {
    let fx = fixture();
    let e = &fx.engine;
    let nested = |depth: usize| {
        let mut s = String::from("{\"id\": \"d\", \"pk\": \"p\", \"x\": ");
        s.push_str(&"[".repeat(depth));
        s.push_str(&"]".repeat(depth));
        s.push('}');
        s.into_bytes()
    };
    assert_eq!(e.create_item(DB, C, &nested(100)).unwrap().status, 201);
    assert_eq!(err(e.create_item(DB, C, &nested(300))).status, 400);
}

#[test]
fn hierarchical_items_without_any_key_property_are_undefined_at_every_level() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "h",
        ContainerSettings::new(vec!["/tenant".into(), "/user".into()]),
    );
    fx.create("h", &json!({"id": "a"}));
    fx.create("h", &json!({"id": "a", "tenant": null, "user": null}));
    assert!(
        fx.read_json("h", "a", &json!([{}, {}]))
            .get("tenant")
            .is_none()
    );
    assert_eq!(
        fx.read_json("h", "a", &json!([null, null]))["tenant"],
        Value::Null
    );
    assert_eq!(
        err(e.read_item(DB, "h", "a", &json!([{}, null]))).status,
        404
    );
    assert_eq!(container_counts(e, "h").0, 2);
}

/// A whole number written as a double (`690.00`, `1e2`) is stored, read and returned as the
/// service's query results print it, `690` (the docs' getting-started items have
/// `"price": 690.00` and their `SELECT *` shows `690`); `SELECT *`, which returns stored
/// bytes, agrees with a projection. Doubles that are not whole, beyond 2^53, or -0 keep
/// their form.
#[test]
fn whole_doubles_are_stored_as_integers() {
    let fx = fixture();
    let text = br#"{"id":"n","pk":"p","price":690.00,"r":1e2,"half":1.50,"big":1e300,"z":-0.0,"nested":[2.0,{"v":3.0}]}"#;
    let created = fx.engine.create_item(DB, C, text).unwrap();
    let stored = String::from_utf8(created.body.clone().unwrap()).unwrap();
    assert!(
        stored.starts_with(
            r#"{"id":"n","pk":"p","price":690,"r":100,"half":1.5,"big":1e+300,"z":-0.0,"nested":[2,{"v":3}],"#
        ),
        "{stored}"
    );
    let read = fx.read(C, "n", &json!("p"));
    assert_eq!(read.body, created.body);
    let opts = cosmoscope::engine::QueryOptions::default();
    let star = fx.engine.query(DB, C, "SELECT * FROM c", &opts).unwrap();
    let value = fx
        .engine
        .query(DB, C, "SELECT VALUE c FROM c", &opts)
        .unwrap();
    assert_eq!(star.documents[0].json(), value.documents[0].json());
}

/// Writes submitted without blocking (the gateway's path) commit in groups with writes made
/// by blocked callers, each with the outcome the blocking operation gives: 201, 200 for an
/// upsert, 409 for a second create, 400 for a body that is not an item. The committer
/// thread stops with the engine, so the store can be opened again in this process.
#[test]
fn submitted_writes_share_groups_with_blocking_ones_and_keep_their_outcomes() {
    use cosmoscope::engine::ItemWriteKind;
    use cosmoscope::error::StatusCode;
    let fx = fixture();
    let dir = fx.dir.path().to_path_buf();
    let engine = Arc::new(fx.engine);
    const N: usize = 200;
    let (tx, rx) = std::sync::mpsc::channel();
    let blocking = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            for i in 0..N {
                let doc = json!({"id": format!("b{i}"), "pk": format!("p{}", i % 7)});
                let r = engine
                    .create_item(DB, C, &bytes(&doc))
                    .expect("blocking create");
                assert_eq!(r.status, StatusCode::Created);
            }
        })
    };
    let submit = |kind: ItemWriteKind, body: Vec<u8>, tag: String| {
        let tx = tx.clone();
        engine
            .submit_item_write(
                DB,
                C,
                kind,
                &body,
                None,
                None,
                Box::new(move |r| tx.send((tag, r.map(|r| r.status))).expect("send")),
            )
            .unwrap_or_else(|_| panic!("the engine takes submitted writes"));
    };
    for i in 0..N {
        let doc = json!({"id": format!("s{i}"), "pk": format!("p{}", i % 7)});
        submit(ItemWriteKind::Create, bytes(&doc), format!("create s{i}"));
    }
    submit(
        ItemWriteKind::Create,
        bytes(&json!({"id": "s0", "pk": "p0"})),
        "again".into(),
    );
    submit(
        ItemWriteKind::Upsert,
        bytes(&json!({"id": "s1", "pk": "p1", "v": 2})),
        "upsert".into(),
    );
    submit(ItemWriteKind::Create, b"[1]".to_vec(), "not an item".into());
    drop(tx);
    blocking.join().expect("blocking writer");
    let outcomes: std::collections::HashMap<String, Result<StatusCode, u16>> = rx
        .iter()
        .map(|(tag, r)| (tag, r.map_err(|e| e.status as u16)))
        .collect();
    assert_eq!(
        outcomes.len(),
        N + 3,
        "every submitted write is answered once"
    );
    for i in 0..N {
        assert_eq!(outcomes[&format!("create s{i}")], Ok(StatusCode::Created));
    }
    assert_eq!(outcomes["again"], Err(409));
    assert_eq!(outcomes["upsert"], Ok(StatusCode::Ok));
    assert_eq!(outcomes["not an item"], Err(400));
    let count = engine
        .query(DB, C, "SELECT VALUE COUNT(1) FROM c", &Default::default())
        .expect("count");
    let count: Vec<Value> = count.documents.into_iter().map(Value::from).collect();
    assert_eq!(count, vec![json!(2 * N)]);
    let engine = Arc::into_inner(engine).expect("the only reference");
    drop(engine);
    let reopened = Engine::open(&dir).expect("the store opens again once the engine is gone");
    let r = reopened
        .read_item(DB, C, "s1", &json!("p1"))
        .expect("the upsert is there");
    let item: Value = serde_json::from_slice(r.body.as_deref().unwrap()).unwrap();
    assert_eq!(item["v"], 2);
}
