//! Time to live and unique keys through the engine.

use cosmoscope::engine::ContainerSettings;
use cosmoscope::engine::{Backend, FeedMode, FeedRequest};
use serde_json::{Value, json};

use crate::support::fixture::*;

fn ttl_settings(default_ttl: i64) -> ContainerSettings {
    ContainerSettings {
        default_ttl: Some(default_ttl),
        ..pk_settings()
    }
}

fn unique_settings(keys: &[&[&str]]) -> ContainerSettings {
    ContainerSettings {
        unique_keys: keys
            .iter()
            .map(|k| k.iter().map(|p| p.to_string()).collect())
            .collect(),
        ..pk_settings()
    }
}

// ---- TTL ----

#[test]
fn default_ttl_expires_items_and_the_purge_logs_a_ttl_delete() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", ttl_settings(1));
    let a = fx.create("c", &json!({"id": "a", "pk": "p"}));
    fx.create("c", &json!({"id": "forever", "pk": "p", "ttl": -1}));
    fx.create("c", &json!({"id": "later", "pk": "q", "ttl": 3600}));
    let ts = body(&a)["_ts"].as_i64().unwrap();
    wait_until_after(ts);

    assert_eq!(
        err(e.read_item(DB, "c", "a", &json!("p"))).status,
        404,
        "an expired item is gone for reads"
    );
    assert_eq!(
        fx.read_json("c", "forever", &json!("p"))["ttl"],
        -1,
        "ttl -1 never expires"
    );
    assert_eq!(fx.read_json("c", "later", &json!("q"))["ttl"], 3600);
    assert!(
        !export_all(e, "c").iter().any(|(v, _)| v["id"] == "a"),
        "exports skip expired items"
    );
    let latest = fx.drain_feed("c", FeedMode::LatestVersion);
    assert!(
        !latest.iter().any(|c| c.id == "a"),
        "latest-version feed drops expired items"
    );

    // The background purger may have run already; either way it is purged exactly once.
    let purged = e.purge_expired().unwrap();
    assert!(purged <= 1);
    assert_eq!(e.purge_expired().unwrap(), 0);
    assert_eq!(
        container_counts(e, "c").0,
        2,
        "statistics no longer count the purged item"
    );
    let changes = fx.drain_feed("c", FeedMode::AllVersions);
    let def = e
        .read_feed(DB, "c", &FeedRequest::default())
        .unwrap()
        .partition_key;
    let deletes: Vec<Value> = changes
        .iter()
        .filter(|c| c.operation.name() == "delete")
        .map(|c| c.to_json(FeedMode::AllVersions, &def))
        .collect();
    assert_eq!(deletes.len(), 1, "one TTL delete: {deletes:?}");
    let meta = &deletes[0]["metadata"];
    assert_eq!(meta["timeToLiveExpired"], true);
    assert_eq!(meta["id"], "a");
    assert_eq!(meta["partitionKey"], json!({"pk": "p"}));
    assert_eq!(meta["previousImageLSN"], a.lsn.unwrap());
    assert!(
        meta["crts"].as_i64().unwrap() > ts,
        "the delete is stamped when it was purged"
    );
    let info = e.container(DB, "c").unwrap();
    assert_eq!(info.statistics.operations["expire"], 1);
    assert_eq!(info.statistics.item_count, 2);
    let report = e.partitions(DB, "c", 10, 60).unwrap();
    let p = report
        .largest_logical_partitions
        .iter()
        .find(|l| l.partition_key == json!("p"))
        .unwrap();
    assert_eq!(p.statistics.item_count, 1);
}

#[test]
fn item_ttl_overrides_the_container_default() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", ttl_settings(-1));
    let short = fx.create("c", &json!({"id": "short", "pk": "p", "ttl": 1}));
    fx.create("c", &json!({"id": "default", "pk": "p"}));
    // Extending an item's ttl by replacing it keeps it alive.
    fx.create("c", &json!({"id": "extended", "pk": "p", "ttl": 1}));
    fx.replace("c", &json!({"id": "extended", "pk": "p", "ttl": 3600}));
    // Removing the ttl property falls back to the default (-1: never).
    fx.create("c", &json!({"id": "dropped", "pk": "p", "ttl": 1}));
    fx.upsert("c", &json!({"id": "dropped", "pk": "p"}));
    wait_until_after(body(&short)["_ts"].as_i64().unwrap());
    assert_eq!(err(e.read_item(DB, "c", "short", &json!("p"))).status, 404);
    assert_eq!(
        err(e.delete_item(DB, "c", "short", &json!("p"), None)).status,
        404,
        "an expired item cannot be deleted"
    );
    assert_eq!(
        err(e.replace_item(DB, "c", &bytes(&json!({"id": "short", "pk": "p"})), None)).status,
        404
    );
    fx.read("c", "default", &json!("p"));
    fx.read("c", "extended", &json!("p"));
    fx.read("c", "dropped", &json!("p"));
    e.purge_expired().unwrap();
    assert_eq!(container_counts(e, "c").0, 3);
    fx.read("c", "extended", &json!("p"));
}

#[test]
fn writing_over_an_expired_item_creates_it_anew() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", ttl_settings(-1));
    let old = fx.create("c", &json!({"id": "a", "pk": "p", "ttl": 1, "v": 1}));
    wait_until_after(body(&old)["_ts"].as_i64().unwrap());
    let new = e
        .create_item(DB, "c", &bytes(&json!({"id": "a", "pk": "p", "v": 2})))
        .expect("create over an expired item");
    assert_eq!(new.status, 201);
    assert_ne!(
        body(&new)["_rid"],
        body(&old)["_rid"],
        "a new item gets a new _rid"
    );
    assert_eq!(fx.read_json("c", "a", &json!("p"))["v"], 2);
    let changes = fx.drain_feed("c", FeedMode::AllVersions);
    let ops: Vec<(&str, bool)> = changes
        .iter()
        .map(|c| (c.operation.name(), c.ttl_expired))
        .collect();
    assert_eq!(
        ops,
        vec![("create", false), ("delete", true), ("create", false)]
    );
    assert_eq!(container_counts(e, "c").0, 1);
    e.purge_expired().unwrap();
    assert_eq!(
        fx.read_json("c", "a", &json!("p"))["v"],
        2,
        "the purger leaves the new item alone"
    );
}

#[test]
fn invalid_item_ttl_is_400_when_ttl_is_on() {
    let fx = open();
    let e = &fx.engine;
    fx.container("on", ttl_settings(-1));
    fx.container("default", ttl_settings(3600));
    fx.pk_container("off");
    let bad = [
        json!(0),
        json!(-5),
        json!(-2),
        json!("x"),
        json!("10"),
        json!(1.5),
        json!(null),
        json!(true),
        json!(2_147_483_648i64),
        json!({}),
    ];
    for ttl in &bad {
        for c in ["on", "default"] {
            let doc = bytes(&json!({"id": "a", "pk": "p", "ttl": ttl}));
            let r = err(e.create_item(DB, c, &doc));
            assert_eq!(r.status.as_u16(), 400, "ttl {ttl} in {c}: {r}");
            assert!(r.request_charge > 0.0);
            assert_eq!(
                err(e.upsert_item(DB, c, &doc, None)).status,
                400,
                "ttl {ttl} in {c}"
            );
        }
        // With TTL off the property is just data.
        let doc = json!({"id": format!("a{}", ttl.to_string().len()), "pk": format!("{ttl}"), "ttl": ttl});
        assert_eq!(
            e.create_item(DB, "off", &bytes(&doc)).unwrap().status,
            201,
            "ttl {ttl} ignored when TTL is off"
        );
    }
    assert_eq!(container_counts(e, "on").0, 0);
    for ok in [json!(1), json!(-1), json!(2_147_483_647i64)] {
        let doc = json!({"id": format!("ok{ok}"), "pk": "p", "ttl": ok});
        assert_eq!(
            e.create_item(DB, "on", &bytes(&doc)).unwrap().status,
            201,
            "ttl {ok}"
        );
    }
}

#[test]
fn items_in_a_container_without_ttl_never_expire() {
    let fx = open();
    let e = &fx.engine;
    fx.pk_container("off");
    let r = fx.create("off", &json!({"id": "a", "pk": "p", "ttl": 1}));
    wait_until_after(body(&r)["_ts"].as_i64().unwrap());
    e.purge_expired().unwrap();
    assert_eq!(fx.read_json("off", "a", &json!("p"))["ttl"], 1);
}

// ---- unique keys ----

#[test]
fn unique_keys_are_enforced_per_logical_partition() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", unique_settings(&[&["/email"]]));
    fx.create(
        "c",
        &json!({"id": "a", "pk": "p1", "email": "x@example.com"}),
    );

    let dup = json!({"id": "b", "pk": "p1", "email": "x@example.com"});
    let r = err(e.create_item(DB, "c", &bytes(&dup)));
    assert_eq!(r.status.as_u16(), 409, "{r}");
    assert!(r.request_charge > 0.0);
    assert_eq!(err(e.upsert_item(DB, "c", &bytes(&dup), None)).status, 409);
    assert_eq!(
        err(e.read_item(DB, "c", "b", &json!("p1"))).status,
        404,
        "nothing was written"
    );

    // Another logical partition may hold the same value; values are case-sensitive.
    fx.create(
        "c",
        &json!({"id": "b", "pk": "p2", "email": "x@example.com"}),
    );
    fx.create(
        "c",
        &json!({"id": "c", "pk": "p1", "email": "X@example.com"}),
    );

    // Replacing an item with its own value is fine.
    fx.replace(
        "c",
        &json!({"id": "a", "pk": "p1", "email": "x@example.com", "v": 2}),
    );
    fx.upsert(
        "c",
        &json!({"id": "a", "pk": "p1", "email": "x@example.com", "v": 3}),
    );
    // Taking another item's value by replace is a conflict.
    let take = json!({"id": "c", "pk": "p1", "email": "x@example.com"});
    assert_eq!(
        err(e.replace_item(DB, "c", &bytes(&take), None)).status,
        409
    );
    assert_eq!(
        fx.read_json("c", "c", &json!("p1"))["email"],
        "X@example.com"
    );

    // Changing a value frees the old one.
    fx.replace(
        "c",
        &json!({"id": "a", "pk": "p1", "email": "y@example.com"}),
    );
    fx.create(
        "c",
        &json!({"id": "d", "pk": "p1", "email": "x@example.com"}),
    );
    assert_eq!(
        err(e.create_item(
            DB,
            "c",
            &bytes(&json!({"id": "e", "pk": "p1", "email": "y@example.com"}))
        ))
        .status,
        409
    );

    // Deleting frees the value.
    fx.delete("c", "a", &json!("p1"));
    fx.create(
        "c",
        &json!({"id": "e", "pk": "p1", "email": "y@example.com"}),
    );
    assert_eq!(container_counts(e, "c").0, 4, "b, c, d, e");
}

#[test]
fn a_missing_unique_value_counts_as_null() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", unique_settings(&[&["/email"]]));
    fx.create("c", &json!({"id": "a", "pk": "p"}));
    assert_eq!(
        err(e.create_item(DB, "c", &bytes(&json!({"id": "b", "pk": "p"})))).status,
        409
    );
    assert_eq!(
        err(e.create_item(
            DB,
            "c",
            &bytes(&json!({"id": "b", "pk": "p", "email": null}))
        ))
        .status,
        409
    );
    fx.create("c", &json!({"id": "b", "pk": "q"}));
    fx.create("c", &json!({"id": "c", "pk": "p", "email": "z"}));
    // Different JSON types are different values.
    fx.create("c", &json!({"id": "d", "pk": "p", "email": 1}));
    fx.create("c", &json!({"id": "e", "pk": "p", "email": "1"}));
}

#[test]
fn composite_and_nested_unique_keys() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        unique_settings(&[&["/first", "/last"], &["/contact/email"]]),
    );
    fx.create("c", &json!({"id": "a", "pk": "p", "first": "Ada", "last": "Lovelace", "contact": {"email": "ada@x"}}));
    fx.create("c", &json!({"id": "b", "pk": "p", "first": "Ada", "last": "Byron", "contact": {"email": "b@x"}}));
    let same_name = json!({"id": "c", "pk": "p", "first": "Ada", "last": "Lovelace", "contact": {"email": "c@x"}});
    assert_eq!(
        err(e.create_item(DB, "c", &bytes(&same_name))).status,
        409,
        "both paths equal"
    );
    let same_email = json!({"id": "c", "pk": "p", "first": "Grace", "last": "Hopper", "contact": {"email": "ada@x"}});
    assert_eq!(
        err(e.create_item(DB, "c", &bytes(&same_email))).status,
        409,
        "nested path equal"
    );
    fx.create("c", &json!({"id": "c", "pk": "p", "first": "Grace", "last": "Hopper", "contact": {"email": "g@x"}}));
    assert_eq!(container_counts(e, "c").0, 3);
    // Unique key writes cost a little more than the same write without them.
    fx.pk_container("plain");
    let doc = json!({"id": "z", "pk": "p", "first": "Z", "last": "Z", "contact": {"email": "z@x"}});
    let with = fx.create("c", &doc).request_charge;
    let without = fx.create("plain", &doc).request_charge;
    assert!(
        with > without,
        "unique keys add to the charge: {with} vs {without}"
    );
}

#[test]
fn an_expired_and_purged_item_frees_its_unique_value() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        default_ttl: Some(-1),
        ..unique_settings(&[&["/email"]])
    };
    fx.container("c", settings);
    let r = fx.create("c", &json!({"id": "a", "pk": "p", "email": "x", "ttl": 1}));
    wait_until_after(body(&r)["_ts"].as_i64().unwrap());
    e.purge_expired().unwrap();
    assert_eq!(err(e.read_item(DB, "c", "a", &json!("p"))).status, 404);
    fx.create("c", &json!({"id": "b", "pk": "p", "email": "x"}));
}

#[test]
fn unique_numbers_compare_as_numbers() {
    let fx = open();
    let e = &fx.engine;
    fx.container("c", unique_settings(&[&["/n"]]));
    fx.create("c", &json!({"id": "a", "pk": "p", "n": 1}));
    let r = err(e.create_item(DB, "c", &bytes(&json!({"id": "b", "pk": "p", "n": 1.0}))));
    assert_eq!(r.status.as_u16(), 409, "1 and 1.0 are the same number");
}
