//! The change feed through the engine: both modes, start points, paging, continuations
//! across splits, per-range reads and the feed head.

use std::collections::{BTreeMap, BTreeSet};

use cosmoscope::engine::{Backend, FeedChange, FeedMode, FeedRequest, FeedStart};
use cosmoscope::engine::{ContainerSettings, Throughput};
use serde_json::{Value, json};

use crate::support::fixture::*;

const ALL: FeedMode = FeedMode::AllVersions;
const LATEST: FeedMode = FeedMode::LatestVersion;

/// A container keyed on `/pk` with three physical partitions.
fn three_ranges(fx: &Fixture, c: &str) {
    fx.container(
        c,
        ContainerSettings {
            throughput: Throughput::Manual(18000),
            ..pk_settings()
        },
    );
}

fn req(start: FeedStart, mode: FeedMode, max_items: usize) -> FeedRequest {
    FeedRequest {
        start,
        mode,
        range: None,
        max_items,
        epk_range: None,
    }
}

/// `(op, id, pk, step)` of a change; `step` comes from the current image (None for deletes).
fn describe(c: &FeedChange) -> (String, String, Value, Option<u64>) {
    let pk = c.partition_key();
    let step = c
        .current
        .as_ref()
        .map(|_| current(c)["step"].as_u64().unwrap());
    (c.operation.name().to_string(), c.id.clone(), pk, step)
}

/// A workload step that was written, as the feed should describe it.
type Expected = (String, String, Value, Option<u64>);

struct Writer<'f> {
    fx: &'f Fixture,
    c: &'static str,
    step: u64,
    log: Vec<Expected>,
}

impl<'f> Writer<'f> {
    fn new(fx: &'f Fixture, c: &'static str) -> Self {
        Writer {
            fx,
            c,
            step: 0,
            log: Vec::new(),
        }
    }

    fn upsert(&mut self, id: &str, key: &str, pad: usize) {
        self.step += 1;
        let r = self.fx.upsert(
            self.c,
            &json!({"id": id, "pk": key, "step": self.step, "pad": "x".repeat(pad)}),
        );
        let op = if r.status == 201 { "create" } else { "replace" };
        self.log
            .push((op.into(), id.into(), json!([key]), Some(self.step)));
    }

    fn delete(&mut self, id: &str, key: &str) {
        self.fx.delete(self.c, id, &json!(key));
        self.log
            .push(("delete".into(), id.into(), json!([key]), None));
    }
}

#[test]
fn latest_version_mode_returns_each_item_once_at_its_newest_version() {
    let fx = open();
    fx.pk_container("c");
    let a1 = fx.create("c", &json!({"id": "a", "pk": "p", "v": 1}));
    fx.create("c", &json!({"id": "b", "pk": "p", "v": 1}));
    let a2 = fx.replace("c", &json!({"id": "a", "pk": "p", "v": 2}));
    let c1 = fx.create("c", &json!({"id": "c", "pk": "q", "v": 1}));
    fx.delete("c", "b", &json!("p"));
    let changes = fx.drain_feed("c", LATEST);
    let ids: Vec<&str> = changes.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["a", "c"],
        "each live item once, deletes absent, in modification order"
    );
    let def = fx
        .engine
        .read_feed(DB, "c", &FeedRequest::default())
        .unwrap()
        .partition_key;
    let a = changes[0].to_json(LATEST, &def);
    assert_eq!(a["v"], 2, "the newest version");
    assert_eq!(a["_etag"].as_str(), a2.etag.as_deref());
    assert_eq!(a["_lsn"], a2.lsn.unwrap());
    assert_eq!(a["_ts"], body(&a2)["_ts"]);
    assert_eq!(changes[1].to_json(LATEST, &def)["_lsn"], c1.lsn.unwrap());
    assert_ne!(a1.lsn, a2.lsn);

    // Deleting and re-creating an item delivers it once, as the new item.
    fx.delete("c", "a", &json!("p"));
    fx.create("c", &json!({"id": "a", "pk": "p", "v": 3}));
    let changes = fx.drain_feed("c", LATEST);
    let items: Vec<(String, Value)> = changes
        .iter()
        .map(|c| (c.id.clone(), current(c)["v"].clone()))
        .collect();
    assert_eq!(
        items,
        vec![("c".to_string(), json!(1)), ("a".to_string(), json!(3))]
    );
}

#[test]
fn all_versions_mode_returns_every_change_with_metadata() {
    let fx = open();
    fx.pk_container("c");
    let a1 = fx.create("c", &json!({"id": "a", "pk": "p", "v": 1}));
    let b1 = fx.create("c", &json!({"id": "b", "pk": 7, "v": 1}));
    let a2 = fx.replace("c", &json!({"id": "a", "pk": "p", "v": 2}));
    let a3 = fx.upsert("c", &json!({"id": "a", "pk": "p", "v": 3}));
    let bd = fx.delete("c", "b", &json!(7));
    let ud = {
        fx.create("c", &json!({"id": "u"}));
        fx.delete("c", "u", &json!({}))
    };
    let changes = fx.drain_feed("c", ALL);
    let def = fx
        .engine
        .read_feed(DB, "c", &FeedRequest::default())
        .unwrap()
        .partition_key;
    let json: Vec<Value> = changes.iter().map(|c| c.to_json(ALL, &def)).collect();
    let ops: Vec<&str> = json
        .iter()
        .map(|j| j["metadata"]["operationType"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        vec![
            "create", "create", "replace", "replace", "delete", "create", "delete"
        ]
    );

    let meta = |i: usize| &json[i]["metadata"];
    assert_eq!(json[0]["current"]["v"], 1);
    assert_eq!(meta(0)["lsn"], a1.lsn.unwrap());
    assert_eq!(meta(0)["crts"], body(&a1)["_ts"]);
    assert_eq!(meta(0)["previousImageLSN"], 0);
    assert_eq!(meta(0)["timeToLiveExpired"], false);
    assert!(
        meta(0).get("id").is_none(),
        "only deletes carry id in metadata"
    );
    assert_eq!(json[2]["current"]["v"], 2);
    assert_eq!(meta(2)["lsn"], a2.lsn.unwrap());
    assert_eq!(
        meta(2)["previousImageLSN"],
        a1.lsn.unwrap(),
        "a replace points at the version it replaced"
    );
    assert_eq!(json[3]["current"]["v"], 3);
    assert_eq!(meta(3)["previousImageLSN"], a2.lsn.unwrap());
    assert_eq!(meta(3)["lsn"], a3.lsn.unwrap());
    assert!(
        json[2].get("previous").is_none(),
        "no previous image without the container opt-in"
    );

    let del = &json[4];
    assert!(
        del.get("current").is_none(),
        "a delete has no current image"
    );
    assert_eq!(del["metadata"]["id"], "b");
    assert_eq!(del["metadata"]["partitionKey"], json!({"pk": 7}));
    assert_eq!(del["metadata"]["lsn"], bd.lsn.unwrap());
    assert_eq!(del["metadata"]["previousImageLSN"], b1.lsn.unwrap());
    assert_eq!(del["metadata"]["timeToLiveExpired"], false);
    let udel = &json[6];
    assert_eq!(udel["metadata"]["id"], "u");
    assert_eq!(
        udel["metadata"]["partitionKey"],
        json!({}),
        "an undefined key has no property"
    );
    assert_eq!(udel["metadata"]["lsn"], ud.lsn.unwrap());
    let lsns: Vec<u64> = changes.iter().map(|c| c.lsn).collect();
    assert!(
        lsns.windows(2).all(|w| w[0] < w[1]),
        "one range: LSNs increase: {lsns:?}"
    );
}

#[test]
fn previous_images_when_the_container_asks_for_them() {
    let fx = open();
    fx.container(
        "c",
        ContainerSettings {
            feed_previous_images: true,
            ..pk_settings()
        },
    );
    fx.container(
        "h",
        ContainerSettings::new(vec!["/tenant".into(), "/user".into()]),
    );
    fx.create("c", &json!({"id": "a", "pk": "p", "v": 1}));
    fx.replace("c", &json!({"id": "a", "pk": "p", "v": 2}));
    fx.delete("c", "a", &json!("p"));
    let changes = fx.drain_feed("c", ALL);
    let def = fx
        .engine
        .read_feed(DB, "c", &FeedRequest::default())
        .unwrap()
        .partition_key;
    let json: Vec<Value> = changes.iter().map(|c| c.to_json(ALL, &def)).collect();
    assert!(
        json[0].get("previous").is_none(),
        "a create has no previous image"
    );
    assert_eq!(json[1]["previous"]["v"], 1);
    assert_eq!(json[1]["current"]["v"], 2);
    assert_eq!(json[2]["previous"]["v"], 2);

    // Deletes in a hierarchical container name every level.
    fx.create("h", &json!({"id": "a", "tenant": "t", "user": "u"}));
    fx.delete("h", "a", &json!(["t", "u"]));
    let changes = fx.drain_feed("h", ALL);
    let def = fx
        .engine
        .read_feed(DB, "h", &FeedRequest::default())
        .unwrap()
        .partition_key;
    let del = changes[1].to_json(ALL, &def);
    assert_eq!(
        del["metadata"]["partitionKey"],
        json!({"tenant": "t", "user": "u"})
    );
}

#[test]
fn start_now_time_and_continuation() {
    let fx = open();
    let e = &fx.engine;
    three_ranges(&fx, "c");
    for i in 0..6 {
        fx.create(
            "c",
            &json!({"id": format!("old{i}"), "pk": format!("k{i}")}),
        );
    }
    // Now: nothing yet, and the token picks up only later writes.
    let page = e
        .read_feed(DB, "c", &req(FeedStart::Now, ALL, 100))
        .unwrap();
    assert!(page.changes.is_empty());
    let now_token = page.continuation;
    let page = e
        .read_feed(DB, "c", &req(FeedStart::Now, LATEST, 100))
        .unwrap();
    assert!(page.changes.is_empty());
    let now_token_latest = page.continuation;

    let first = fx.create("c", &json!({"id": "new0", "pk": "k0"}));
    let ts = body(&first)["_ts"].as_i64().unwrap();
    wait_until_after(ts);
    let second = fx.create("c", &json!({"id": "new1", "pk": "k1"}));
    let ts2 = body(&second)["_ts"].as_i64().unwrap();
    assert!(ts2 > ts);

    let ids = |changes: &[FeedChange]| changes.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    let (from_now, _) = drain(e, "c", FeedStart::Continuation(now_token), ALL, 100);
    assert_eq!(ids(&from_now), vec!["new0", "new1"]);
    let (from_now, _) = drain(
        e,
        "c",
        FeedStart::Continuation(now_token_latest),
        LATEST,
        100,
    );
    assert_eq!(ids(&from_now), vec!["new0", "new1"]);

    // A point in time: changes at or after that second.
    let (since, _) = drain(e, "c", FeedStart::Time(ts2), ALL, 100);
    assert_eq!(ids(&since), vec!["new1"]);
    let (since, _) = drain(e, "c", FeedStart::Time(ts2), LATEST, 100);
    assert_eq!(ids(&since), vec!["new1"]);
    let (since, _) = drain(e, "c", FeedStart::Time(ts), ALL, 100);
    assert!(ids(&since).ends_with(&["new0".to_string(), "new1".to_string()]));
    let (since, _) = drain(e, "c", FeedStart::Time(0), ALL, 100);
    assert_eq!(since.len(), 8);
    let (since, _) = drain(e, "c", FeedStart::Time(ts2 + 100), ALL, 100);
    assert!(since.is_empty());

    // Beginning: everything; its final token resumes after everything.
    let (all, token) = drain(e, "c", FeedStart::Beginning, ALL, 100);
    assert_eq!(all.len(), 8);
    fx.create("c", &json!({"id": "new2", "pk": "k2"}));
    let (rest, _) = drain(e, "c", FeedStart::Continuation(token.clone()), ALL, 100);
    assert_eq!(ids(&rest), vec!["new2"]);
    // A token can be read again: it is a position, not a cursor.
    let (again, _) = drain(e, "c", FeedStart::Continuation(token), ALL, 100);
    assert_eq!(ids(&again), vec!["new2"]);
}

#[test]
fn bad_continuations_are_400() {
    let fx = open();
    let e = &fx.engine;
    fx.pk_container("c");
    fx.pk_container("d");
    fx.create("c", &json!({"id": "a", "pk": "p"}));
    let (_, token) = drain(e, "c", FeedStart::Beginning, ALL, 10);
    assert_eq!(
        err(e.read_feed(
            DB,
            "c",
            &req(FeedStart::Continuation("garbage".into()), ALL, 10)
        ))
        .status,
        400
    );
    assert_eq!(
        err(e.read_feed(
            DB,
            "d",
            &req(FeedStart::Continuation(token.clone()), ALL, 10)
        ))
        .status,
        400
    );
    // A container deleted and recreated under the same name is another container.
    e.delete_container(DB, "c").unwrap();
    fx.pk_container("c");
    assert_eq!(
        err(e.read_feed(DB, "c", &req(FeedStart::Continuation(token), ALL, 10))).status,
        400
    );
    assert_eq!(
        err(e.read_feed(DB, "missing", &FeedRequest::default())).status,
        404
    );
}

#[test]
fn paging_resumes_exactly() {
    let fx = open();
    let e = &fx.engine;
    three_ranges(&fx, "c");
    let mut w = Writer::new(&fx, "c");
    for i in 0..40 {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 13), 10);
    }
    for i in (0..40).step_by(3) {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 13), 20);
    }
    for i in (0..40).step_by(7) {
        w.delete(&format!("i{i}"), &format!("k{}", i % 13));
    }
    assert_eq!(e.container(DB, "c").unwrap().partition_count, 3);
    let (full_all, _) = drain(e, "c", FeedStart::Beginning, ALL, 10_000);
    let described: Vec<Expected> = full_all.iter().map(describe).collect();
    assert_eq!(
        described, w.log,
        "all versions: every write once, in commit order"
    );
    let (full_latest, _) = drain(e, "c", FeedStart::Beginning, LATEST, 10_000);
    let live = 40 - (0..40).step_by(7).count();
    assert_eq!(full_latest.len(), live);

    for page in [1, 2, 3, 5, 7, 16] {
        let (paged, _) = drain(e, "c", FeedStart::Beginning, ALL, page);
        assert_eq!(paged, full_all, "all versions, pages of {page}");
        let (paged, _) = drain(e, "c", FeedStart::Beginning, LATEST, page);
        assert_eq!(paged, full_latest, "latest version, pages of {page}");
    }
}

#[test]
fn paging_with_writes_between_pages_has_no_gaps_or_duplicates() {
    let fx = open();
    let e = &fx.engine;
    three_ranges(&fx, "c");
    let mut w = Writer::new(&fx, "c");
    for i in 0..20 {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 7), 10);
    }
    let mut seen = Vec::new();
    let mut start = FeedStart::Beginning;
    let mut rng = Rng(42);
    let mut next = 20;
    for _ in 0..200 {
        let page = e.read_feed(DB, "c", &req(start.clone(), ALL, 4)).unwrap();
        let done = page.changes.is_empty() && next >= 60;
        seen.extend(page.changes.iter().map(describe));
        start = FeedStart::Continuation(page.continuation);
        if done {
            break;
        }
        // A few writes after each page, some to items already delivered.
        for _ in 0..rng.below(4) {
            if next < 60 {
                let i = if rng.below(2) == 0 {
                    next
                } else {
                    rng.below(next)
                };
                w.upsert(&format!("i{i}"), &format!("k{}", i % 7), 10);
                next += 1;
            }
        }
    }
    assert_eq!(
        seen.len(),
        w.log.len(),
        "every change delivered exactly once"
    );
    let expected: BTreeSet<String> = w.log.iter().map(|x| format!("{x:?}")).collect();
    let got: BTreeSet<String> = seen.iter().map(|x| format!("{x:?}")).collect();
    assert_eq!(got, expected);
    assert_per_partition_order(&seen, &w.log);
}

/// Within each logical partition the changes come in write order.
fn assert_per_partition_order(got: &[Expected], written: &[Expected]) {
    let group = |v: &[Expected]| {
        let mut m: BTreeMap<String, Vec<Expected>> = BTreeMap::new();
        for x in v {
            m.entry(x.2.to_string()).or_default().push(x.clone());
        }
        m
    };
    assert_eq!(
        group(got),
        group(written),
        "order within each logical partition is preserved"
    );
}

#[test]
fn a_continuation_taken_before_splits_resumes_exactly_after_them() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        throughput: Throughput::Manual(6000),
        max_partition_bytes: Some(16 * 1024),
        ..pk_settings()
    };
    fx.container("c", settings);
    let mut w = Writer::new(&fx, "c");
    for i in 0..20 {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 10), 400);
    }
    assert_eq!(
        e.container(DB, "c").unwrap().partition_count,
        1,
        "precondition: no split yet"
    );
    let (before, t0) = drain(e, "c", FeedStart::Beginning, ALL, 1000);
    assert_eq!(before.len(), 20);
    let (_, t0_latest) = drain(e, "c", FeedStart::Beginning, LATEST, 1000);
    let mark0 = w.log.len();

    // W1: growth that forces storage splits, with replaces and deletes.
    for i in 20..60 {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 10), 600);
    }
    for i in (0..20).step_by(4) {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 10), 100);
    }
    w.delete("i1", "k1");
    let after_w1 = e.container(DB, "c").unwrap().partition_count;
    assert!(
        after_w1 > 1,
        "precondition: storage splits happened ({after_w1})"
    );
    let (_, t1) = drain(e, "c", FeedStart::Beginning, ALL, 1000);
    let mark1 = w.log.len();

    // Then a throughput split, and W2.
    e.set_throughput(DB, "c", Throughput::Manual(60000))
        .unwrap();
    let after_split = e.container(DB, "c").unwrap().partition_count;
    assert!(after_split >= 6 && after_split > after_w1);
    for i in (0..60).step_by(5) {
        w.upsert(&format!("i{i}"), &format!("k{}", i % 10), 50);
    }
    w.delete("i2", "k2");
    w.upsert("i1", "k1", 10);

    for page in [1, 3, 1000] {
        let (from_t0, _) = drain(e, "c", FeedStart::Continuation(t0.clone()), ALL, page);
        let got: Vec<Expected> = from_t0.iter().map(describe).collect();
        assert_eq!(
            got.len(),
            w.log.len() - mark0,
            "pages of {page}: nothing twice, nothing missed"
        );
        assert_per_partition_order(&got, &w.log[mark0..]);
        assert_eq!(
            got,
            w.log[mark0..].to_vec(),
            "pages of {page}: commit order across ranges"
        );

        let (from_t1, _) = drain(e, "c", FeedStart::Continuation(t1.clone()), ALL, page);
        let got: Vec<Expected> = from_t1.iter().map(describe).collect();
        assert_eq!(
            got,
            w.log[mark1..].to_vec(),
            "token taken between splits, pages of {page}"
        );
    }

    // Latest version from the old token: each item changed since, once, at its newest version.
    let (latest, _) = drain(e, "c", FeedStart::Continuation(t0_latest), LATEST, 7);
    let mut newest: BTreeMap<String, Option<u64>> = BTreeMap::new();
    for (op, id, _, step) in &w.log[mark0..] {
        newest.insert(id.clone(), if op == "delete" { None } else { *step });
    }
    let expected: BTreeMap<String, u64> = newest
        .into_iter()
        .filter_map(|(id, s)| s.map(|s| (id, s)))
        .collect();
    let got: BTreeMap<String, u64> = latest
        .iter()
        .map(|c| (c.id.clone(), current(c)["step"].as_u64().unwrap()))
        .collect();
    assert_eq!(latest.len(), got.len(), "each item once");
    assert_eq!(got, expected);

    // From the beginning after all splits, the whole history is still there, in order.
    let (everything, _) = drain(e, "c", FeedStart::Beginning, ALL, 9);
    let got: Vec<Expected> = everything.iter().map(describe).collect();
    assert_eq!(got, w.log);
}

#[test]
fn order_within_a_logical_partition_survives_splits() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        max_partition_bytes: Some(8 * 1024),
        ..pk_settings()
    };
    fx.container("c", settings);
    let mut w = Writer::new(&fx, "c");
    let mut rng = Rng(7);
    for round in 0..8 {
        for _ in 0..15 {
            let k = rng.below(8);
            let i = rng.below(4);
            w.upsert(&format!("i{i}"), &format!("k{k}"), 500);
        }
        if round == 4 {
            e.set_throughput(DB, "c", Throughput::Manual(40000))
                .unwrap();
        }
    }
    let info = e.container(DB, "c").unwrap();
    assert!(info.partition_count >= 4, "precondition: splits happened");
    assert!(
        info.partitions
            .unwrap()
            .iter()
            .any(|p| p.parents.len() >= 2),
        "precondition: a child split again"
    );
    let (all, _) = drain(e, "c", FeedStart::Beginning, ALL, 5);
    let got: Vec<Expected> = all.iter().map(describe).collect();
    assert_per_partition_order(&got, &w.log);
    // Per item, LSNs and versions increase.
    let mut last: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for c in &all {
        let key = (c.id.clone(), c.partition_key_json.clone());
        let step = current(c)["step"].as_u64().unwrap();
        if let Some((lsn, s)) = last.get(&key) {
            assert!(
                c.lsn > *lsn && step > *s,
                "{key:?}: lsn {} after {lsn}, step {step} after {s}",
                c.lsn
            );
            assert_eq!(
                c.previous_image_lsn, *lsn,
                "previousImageLSN chains the versions of {key:?}"
            );
        }
        last.insert(key, (c.lsn, step));
    }
}

#[test]
fn feed_head_moves_on_every_write_only() {
    let fx = open();
    let e = &fx.engine;
    fx.pk_container("c");
    let head = || e.feed_head(DB, "c").unwrap();
    assert_eq!(head(), 0);
    let h0 = head();
    let etag = fx.create("c", &json!({"id": "a", "pk": "p"})).etag.unwrap();
    assert_eq!(head(), h0 + 1);
    fx.replace("c", &json!({"id": "a", "pk": "p", "v": 2}));
    assert_eq!(head(), h0 + 2);
    fx.upsert("c", &json!({"id": "a", "pk": "p", "v": 3}));
    assert_eq!(head(), h0 + 3);
    fx.upsert("c", &json!({"id": "b", "pk": "p"}));
    assert_eq!(head(), h0 + 4);
    fx.read("c", "a", &json!("p"));
    let _ = drain(e, "c", FeedStart::Beginning, ALL, 10);
    assert_eq!(head(), h0 + 4, "reads do not move the head");
    assert_eq!(
        err(e.create_item(DB, "c", &bytes(&json!({"id": "a", "pk": "p"})))).status,
        409
    );
    assert_eq!(
        err(e.replace_item(DB, "c", &bytes(&json!({"id": "zz", "pk": "p"})), None)).status,
        404
    );
    assert_eq!(
        err(e.delete_item(DB, "c", "a", &json!("p"), Some(&etag))).status,
        412
    );
    assert_eq!(head(), h0 + 4, "failed writes do not move the head");
    fx.delete("c", "a", &json!("p"));
    assert_eq!(head(), h0 + 5);
    // The head is per container.
    fx.pk_container("d");
    assert_eq!(e.feed_head(DB, "d").unwrap(), 0);
    assert_eq!(head(), h0 + 5);
}

#[test]
fn reading_one_range_and_a_split_away_parent() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            throughput: Throughput::Manual(6000),
            ..pk_settings()
        },
    );
    let mut w = Writer::new(&fx, "c");
    for i in 0..30 {
        w.upsert(&format!("i{i}"), &format!("k{i}"), 10);
    }
    let parent = e.container(DB, "c").unwrap().partitions.unwrap()[0]
        .id
        .clone();
    let page = e
        .read_feed(
            DB,
            "c",
            &FeedRequest {
                range: Some(parent.clone()),
                max_items: 100,
                ..FeedRequest::default()
            },
        )
        .unwrap();
    assert_eq!(page.changes.len(), 30);
    let parent_token = page.continuation;

    let info = e
        .set_throughput(DB, "c", Throughput::Manual(20000))
        .unwrap();
    assert_eq!(info.partition_count, 2);
    let gone = err(e.read_feed(
        DB,
        "c",
        &FeedRequest {
            range: Some(parent.clone()),
            ..FeedRequest::default()
        },
    ));
    assert_eq!(gone.status, 410, "{gone}");
    assert_eq!(gone.substatus, 1002);
    let missing = err(e.read_feed(
        DB,
        "c",
        &FeedRequest {
            range: Some("999".into()),
            ..FeedRequest::default()
        },
    ));
    assert_eq!(missing.status, 404);

    for i in 30..50 {
        w.upsert(&format!("i{i}"), &format!("k{i}"), 10);
    }
    let mut per_child = 0;
    let mut from_token = 0;
    for r in info.partitions.as_ref().unwrap() {
        let id = r.id.clone();
        assert_eq!(r.parents, vec![parent.clone()]);
        let page = e
            .read_feed(
                DB,
                "c",
                &FeedRequest {
                    range: Some(id.clone()),
                    max_items: 1000,
                    ..FeedRequest::default()
                },
            )
            .unwrap();
        for c in &page.changes {
            assert_eq!(c.range, id);
            let epk = e.epk(DB, "c", &json!(c.id.replace('i', "k"))).unwrap();
            assert!(
                range_contains(&r.min_inclusive, &r.max_exclusive, &epk.epk),
                "the change belongs to range {id}"
            );
        }
        per_child += page.changes.len();
        // The parent's token resumes each child after the pre-split changes.
        let req = FeedRequest {
            start: FeedStart::Continuation(parent_token.clone()),
            mode: LATEST,
            range: Some(id.clone()),
            max_items: 1000,
            epk_range: None,
        };
        let page = e.read_feed(DB, "c", &req).unwrap();
        assert!(
            page.changes
                .iter()
                .all(|c| c.id.trim_start_matches('i').parse::<u32>().unwrap() >= 30)
        );
        from_token += page.changes.len();
    }
    assert_eq!(
        per_child, 50,
        "the children together hold the whole history"
    );
    assert_eq!(from_token, 20, "only changes after the parent's token");
}

#[test]
fn feed_reads_are_charged_per_range_and_by_size() {
    let fx = open();
    let e = &fx.engine;
    three_ranges(&fx, "c");
    let empty = e
        .read_feed(DB, "c", &req(FeedStart::Beginning, ALL, 100))
        .unwrap();
    assert!(empty.changes.is_empty());
    assert!(
        empty.request_charge >= 3.0,
        "each of 3 ranges visited costs at least 1 RU: {}",
        empty.request_charge
    );
    assert_eq!(empty.ranges.len(), 3);
    for i in 0..30 {
        fx.create(
            "c",
            &json!({"id": format!("i{i}"), "pk": format!("k{i}"), "pad": "x".repeat(5000)}),
        );
    }
    let full = e
        .read_feed(DB, "c", &req(FeedStart::Beginning, ALL, 100))
        .unwrap();
    assert_eq!(full.changes.len(), 30);
    assert!(
        full.request_charge > empty.request_charge + 5.0,
        "150 KB of changes cost more: {}",
        full.request_charge
    );
}

#[test]
fn a_continuation_is_read_in_the_mode_that_issued_it() {
    let fx = open();
    fx.pk_container("c");
    fx.engine
        .create_item(DB, "c", br#"{"id":"a","pk":"x"}"#)
        .unwrap();
    let req = FeedRequest {
        start: FeedStart::Beginning,
        mode: FeedMode::LatestVersion,
        range: None,
        max_items: 10,
        epk_range: None,
    };
    let page = fx.engine.read_feed(DB, "c", &req).unwrap();
    let other = FeedRequest {
        start: FeedStart::Continuation(page.continuation),
        mode: FeedMode::AllVersions,
        ..req
    };
    let err = fx.engine.read_feed(DB, "c", &other).unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
    assert!(err.message.contains("latest-version"), "{}", err.message);
}

/// An import writes each batch in item-key order (its changes share one `_ts`, which the
/// service delivers in any order among themselves), and the feed reader follows those
/// items instead of seeking each: the feed must still hold every write once, each item's
/// versions in the order they were given, the last one winning — across deletes (items the
/// reader finds gone), later replacements (versions it finds superseded) and items it has
/// to seek back for.
#[test]
fn an_imported_batch_is_logged_whole_and_its_last_version_wins() {
    let fx = open();
    let e = &fx.engine;
    three_ranges(&fx, "c");
    // 300 records over 40 ids in batches of 70: most batches hold two versions of an id,
    // and an id's versions also span batches.
    let docs: Vec<Vec<u8>> = (0..300)
        .map(|i| {
            let id = (i * 7) % 40;
            serde_json::to_vec(
                &json!({"id": format!("i{id}"), "pk": format!("k{}", id % 11), "v": i}),
            )
            .unwrap()
        })
        .collect();
    let records = records_of(&docs);
    let summary = e
        .import_records_in_batches(DB, "c", &records, 70, &mut |_| {})
        .unwrap();
    assert_eq!(
        (summary.items, summary.created, summary.batches),
        (300, 40, 5)
    );
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    let mut versions: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for i in 0..300u64 {
        let id = format!("i{}", (i * 7) % 40);
        last.insert(id.clone(), i);
        versions.entry(id).or_default().push(i);
    }
    // Later writes: deletes and replacements scattered over the imported keys.
    for id in (0..40).step_by(9) {
        fx.delete("c", &format!("i{id}"), &json!(format!("k{}", id % 11)));
        last.remove(&format!("i{id}"));
    }
    for id in (4..40).step_by(3) {
        let id = format!("i{id}");
        if last.contains_key(&id) {
            let pk = format!("k{}", id[1..].parse::<u64>().unwrap() % 11);
            fx.upsert("c", &json!({"id": id, "pk": pk, "v": 1000}));
            last.insert(id.clone(), 1000);
            versions.get_mut(&id).unwrap().push(1000);
        }
    }

    for page in [1000, 7] {
        let (latest, _) = drain(e, "c", FeedStart::Beginning, LATEST, page);
        let got: BTreeMap<String, u64> = latest
            .iter()
            .map(|c| (c.id.clone(), current(c)["v"].as_u64().unwrap()))
            .collect();
        assert_eq!(latest.len(), got.len(), "each item once (pages of {page})");
        assert_eq!(
            got, last,
            "each live item at its last version (pages of {page})"
        );

        let (all, _) = drain(e, "c", FeedStart::Beginning, ALL, page);
        let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for c in all.iter().filter(|c| c.operation.name() != "delete") {
            seen.entry(c.id.clone())
                .or_default()
                .push(current(c)["v"].as_u64().unwrap());
        }
        assert_eq!(
            seen, versions,
            "every version, in the order given (pages of {page})"
        );
    }
}
