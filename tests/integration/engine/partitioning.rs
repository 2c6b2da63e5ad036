//! The catalog, physical partitions and their splits, statistics and throttling, through
//! the engine.

use std::collections::{BTreeMap, HashMap};

use cosmoscope::engine::Engine;
use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::{Backend, FeedMode, FeedRequest, FeedStart};
use cosmoscope::engine::{ContainerSettings, Throughput};
use cosmoscope::store::Epk;
use serde_json::{Value, json};

use crate::support::fixture::*;

const GB: u64 = 1024 * 1024 * 1024;

fn bounds(engine: &Engine, c: &str) -> Vec<(String, String)> {
    let info = engine.container(DB, c).unwrap();
    info.partitions
        .unwrap()
        .iter()
        .map(|r| (r.min_inclusive.clone(), r.max_exclusive.clone()))
        .collect()
}

fn range_ids(engine: &Engine, c: &str) -> Vec<String> {
    engine
        .container(DB, c)
        .unwrap()
        .partitions
        .unwrap()
        .iter()
        .map(|r| r.id.clone())
        .collect()
}

/// Asserts that per-range statistics add up to the container's.
fn assert_ranges_sum_to_container(engine: &Engine, c: &str) {
    let info = engine.container(DB, c).unwrap();
    let parts = info.partitions.as_ref().unwrap();
    let items: u64 = parts.iter().map(|r| r.statistics.item_count).sum();
    let bytes: u64 = parts.iter().map(|r| r.statistics.size_bytes).sum();
    assert_eq!(
        items, info.statistics.item_count,
        "range item counts sum to the container's"
    );
    assert_eq!(
        bytes, info.statistics.size_bytes,
        "range sizes sum to the container's"
    );
}

/// Every item is readable through its partition key, from a live range that contains its EPK.
fn assert_items_routable(fx: &Fixture, c: &str, items: &[(String, Value)]) {
    let live = range_ids(&fx.engine, c);
    let info = fx.engine.container(DB, c).unwrap();
    let parts = info.partitions.unwrap();
    for (id, pk) in items {
        let r = fx.read(c, id, pk);
        assert!(
            live.contains(&r.range),
            "read of {id} served by live range {} ({live:?})",
            r.range
        );
        let epk = fx.engine.epk(DB, c, pk).unwrap();
        assert_eq!(
            epk.partitions,
            vec![r.range.clone()],
            "epk() and the read agree on the owner of {pk}"
        );
        let range = parts.iter().find(|p| p.id == r.range).unwrap();
        assert!(
            range_contains(&range.min_inclusive, &range.max_exclusive, &epk.epk),
            "range {} [{}, {}) contains EPK {} of {pk}",
            range.id,
            range.min_inclusive,
            range.max_exclusive,
            epk.epk
        );
    }
}

// ---- catalog ----

#[test]
fn every_setting_round_trips() {
    let fx = open();
    let e = &fx.engine;
    let policy: IndexingPolicy = serde_json::from_value(json!({
        "indexingMode": "consistent",
        "automatic": true,
        "includedPaths": [{"path": "/name/?"}, {"path": "/address/*"}],
        "excludedPaths": [{"path": "/*"}, {"path": "/\"_etag\"/?"}],
        "compositeIndexes": [[{"path": "/name", "order": "ascending"}, {"path": "/age", "order": "descending"}]]
    }))
    .unwrap();
    let settings = ContainerSettings {
        partition_key_paths: vec!["/tenant".into(), "/user".into()],
        throughput: Throughput::Manual(12000),
        max_partition_bytes: Some(1024 * 1024),
        max_logical_partition_bytes: Some(256 * 1024),
        default_ttl: Some(3600),
        unique_keys: vec![vec!["/email".into()], vec!["/first".into(), "/last".into()]],
        indexing_policy: Some(policy.clone()),
        enforce_throughput: true,
        feed_previous_images: true,
        vector_embedding_policy: None,
        full_text_policy: None,
    };
    let created = e.create_container(DB, "full", settings).unwrap();
    let autoscale = ContainerSettings {
        throughput: Throughput::Autoscale(40000),
        default_ttl: Some(-1),
        ..pk_settings()
    };
    e.create_container(DB, "auto", autoscale).unwrap();
    e.create_container(DB, "plain", pk_settings()).unwrap();

    let check = |e: &Engine| {
        let full = e.container(DB, "full").unwrap();
        assert_eq!(full.id, "full");
        assert_eq!(full.database, DB);
        assert_eq!(full.partition_key.paths, vec!["/tenant", "/user"]);
        assert_eq!(full.partition_key.kind, "MultiHash");
        assert_eq!(full.partition_key.version, 2);
        assert_eq!(full.throughput.manual, Some(12000));
        assert_eq!(full.throughput.autoscale_max, None);
        assert!(full.throughput.enforced);
        assert_eq!(full.throughput.per_partition_budget, 6000.0);
        assert_eq!(full.partition_count, 2);
        assert_eq!(full.max_partition_bytes, 1024 * 1024);
        assert_eq!(full.max_logical_partition_bytes, 256 * 1024);
        assert_eq!(full.default_ttl, Some(3600));
        let uk: Vec<Vec<String>> = full
            .unique_key_policy
            .unique_keys
            .iter()
            .map(|k| k.paths.clone())
            .collect();
        assert_eq!(
            uk,
            vec![
                vec!["/email".to_string()],
                vec!["/first".to_string(), "/last".to_string()]
            ]
        );
        assert_eq!(full.indexing_policy, policy);
        assert!(full.feed_previous_images);

        let auto = e.container(DB, "auto").unwrap();
        assert_eq!(auto.partition_key.paths, vec!["/pk"]);
        assert_eq!(auto.partition_key.kind, "Hash");
        assert_eq!(auto.partition_key.version, 2);
        assert_eq!(auto.throughput.manual, None);
        assert_eq!(auto.throughput.autoscale_max, Some(40000));
        assert_eq!(auto.throughput.per_partition_budget, 10000.0);
        assert_eq!(auto.partition_count, 4);
        assert_eq!(auto.default_ttl, Some(-1));

        let plain = e.container(DB, "plain").unwrap();
        assert_eq!(plain.throughput.manual, Some(400));
        assert!(!plain.throughput.enforced);
        assert_eq!(plain.default_ttl, None);
        assert!(plain.unique_key_policy.unique_keys.is_empty());
        assert_eq!(plain.indexing_policy, IndexingPolicy::default());
        assert_eq!(plain.max_partition_bytes, 50 * GB);
        assert_eq!(plain.max_logical_partition_bytes, 20 * GB);
        assert!(!plain.feed_previous_images);
        assert_eq!(plain.partition_count, 1);

        let listed = e.list_containers(Some(DB)).unwrap();
        let mut names: Vec<&str> = listed.iter().map(|c| c.id.as_str()).collect();
        names.sort();
        assert_eq!(names, vec!["auto", "full", "plain"]);
        let listed_full = listed.iter().find(|c| c.id == "full").unwrap();
        assert_eq!(listed_full.indexing_policy, policy);
        assert_eq!(listed_full.default_ttl, Some(3600));
    };
    assert_eq!(created.indexing_policy, policy);
    check(e);

    // Settings persist across reopening the data directory.
    let Fixture { engine, dir } = fx;
    drop(engine);
    let reopened = Engine::open(dir.path()).unwrap();
    check(&reopened);
    assert_eq!(reopened.list_databases().unwrap()[0].container_count, 3);
}

#[test]
fn indexing_policy_reads_back_normalized_like_the_service() {
    let fx = open();
    let policy: IndexingPolicy = serde_json::from_value(json!({
        "indexingMode": "consistent",
        "includedPaths": [{"path": "/*"}],
        "excludedPaths": [{"path": "/secret/?"}]
    }))
    .unwrap();
    let settings = ContainerSettings {
        indexing_policy: Some(policy.clone()),
        ..pk_settings()
    };
    let info = fx.engine.create_container(DB, "c", settings).unwrap();
    assert_eq!(info.indexing_policy, policy.normalized());
    let excluded: Vec<&str> = info
        .indexing_policy
        .excluded_paths
        .iter()
        .map(|p| p.path.as_str())
        .collect();
    assert!(excluded.contains(&"/\"_etag\"/?"), "{excluded:?}");
}

#[test]
fn invalid_names_and_settings_are_rejected() {
    let fx = open();
    let e = &fx.engine;
    let long = "x".repeat(256);
    let bad = ["", "a/b", "a\\b", "a#b", "a?b", "trailing ", long.as_str()];
    for name in bad {
        let r = err(e.create_database(name));
        assert_eq!(r.status.as_u16(), 400, "database {name:?}: {r}");
        let r = err(e.create_container(DB, name, pk_settings()));
        assert_eq!(r.status.as_u16(), 400, "container {name:?}: {r}");
    }
    assert_eq!(e.list_databases().unwrap().len(), 1);
    assert!(e.list_containers(Some(DB)).unwrap().is_empty());
    let ok = "x".repeat(255);
    e.create_database(&ok).unwrap();
    e.create_container(DB, &ok, pk_settings()).unwrap();
    e.create_container(DB, "with space inside-and_dash.dot", pk_settings())
        .unwrap();

    assert_eq!(err(e.create_database(DB)).status, 409);
    assert_eq!(err(e.create_container(DB, &ok, pk_settings())).status, 409);
    assert_eq!(
        err(e.create_container("nodb", "c", pk_settings())).status,
        404
    );

    let invalid: Vec<(&str, ContainerSettings)> = vec![
        ("pk without /", ContainerSettings::new(vec!["pk".into()])),
        ("no pk path", ContainerSettings::new(vec![])),
        (
            "4 pk paths",
            ContainerSettings::new(vec!["/a".into(), "/b".into(), "/c".into(), "/d".into()]),
        ),
        (
            "duplicate pk path",
            ContainerSettings::new(vec!["/a".into(), "/a".into()]),
        ),
        ("wildcard pk", ContainerSettings::new(vec!["/a/*".into()])),
        (
            "manual 300",
            ContainerSettings {
                throughput: Throughput::Manual(300),
                ..pk_settings()
            },
        ),
        (
            "manual 450",
            ContainerSettings {
                throughput: Throughput::Manual(450),
                ..pk_settings()
            },
        ),
        (
            "manual 6001",
            ContainerSettings {
                throughput: Throughput::Manual(6001),
                ..pk_settings()
            },
        ),
        (
            "manual over 1M",
            ContainerSettings {
                throughput: Throughput::Manual(1_000_100),
                ..pk_settings()
            },
        ),
        (
            "autoscale 500",
            ContainerSettings {
                throughput: Throughput::Autoscale(500),
                ..pk_settings()
            },
        ),
        (
            "autoscale 4500",
            ContainerSettings {
                throughput: Throughput::Autoscale(4500),
                ..pk_settings()
            },
        ),
        (
            "ttl 0",
            ContainerSettings {
                default_ttl: Some(0),
                ..pk_settings()
            },
        ),
        (
            "ttl -2",
            ContainerSettings {
                default_ttl: Some(-2),
                ..pk_settings()
            },
        ),
        (
            "ttl too big",
            ContainerSettings {
                default_ttl: Some(i32::MAX as i64 + 1),
                ..pk_settings()
            },
        ),
        (
            "unique path without /",
            ContainerSettings {
                unique_keys: vec![vec!["email".into()]],
                ..pk_settings()
            },
        ),
        (
            "empty unique key",
            ContainerSettings {
                unique_keys: vec![vec![]],
                ..pk_settings()
            },
        ),
        (
            "11 unique keys",
            ContainerSettings {
                unique_keys: vec![vec!["/a".into()]; 11],
                ..pk_settings()
            },
        ),
        (
            "zero range limit",
            ContainerSettings {
                max_partition_bytes: Some(0),
                ..pk_settings()
            },
        ),
        (
            "zero logical limit",
            ContainerSettings {
                max_logical_partition_bytes: Some(0),
                ..pk_settings()
            },
        ),
    ];
    for (what, settings) in invalid {
        let r = err(e.create_container(DB, "c", settings));
        assert_eq!(r.status.as_u16(), 400, "{what}: {r}");
    }
    assert_eq!(
        err(e.container(DB, "c")).status,
        404,
        "no rejected container was created"
    );
}

#[test]
fn deleting_a_container_removes_items_statistics_and_feed() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        max_partition_bytes: Some(4096),
        default_ttl: Some(-1),
        ..pk_settings()
    };
    fx.container("c", settings.clone());
    for i in 0..20 {
        fx.create("c", &json!({"id": format!("i{i}"), "pk": format!("k{}", i % 5), "pad": "x".repeat(300), "ttl": 3600}));
    }
    fx.read("c", "i0", &json!("k0"));
    e.flush_metrics().unwrap();
    let store = e.store();
    let old = {
        let txn = store.read_txn().unwrap();
        store.container(&txn, DB, "c").unwrap()
    };
    assert!(old.ranges.len() > 1, "precondition: the container split");
    {
        let txn = store.read_txn().unwrap();
        let (items, _) = store
            .scan_items(&txn, &old, &Epk::min(), &Epk::max(), None, 1000)
            .unwrap();
        assert_eq!(items.len(), 20, "precondition: the scan sees the items");
    }

    e.delete_container(DB, "c").unwrap();
    assert_eq!(err(e.container(DB, "c")).status, 404);
    assert_eq!(err(e.read_item(DB, "c", "i0", &json!("k0"))).status, 404);
    assert_eq!(err(e.feed_head(DB, "c")).status, 404);

    // Nothing of the old container is left under its id.
    {
        let txn = store.read_txn().unwrap();
        let (items, _) = store
            .scan_items(&txn, &old, &Epk::min(), &Epk::max(), None, 1000)
            .unwrap();
        assert!(items.is_empty(), "items of a deleted container are removed");
        let stats = store.container_stats(&txn, &old).unwrap();
        assert_eq!(
            (stats.counters.items, stats.counters.bytes, stats.seq),
            (0, 0, 0),
            "container statistics removed"
        );
        for (r, s) in store.ranges_with_stats(&txn, &old).unwrap() {
            assert_eq!(
                (s.counters.items, s.counters.bytes, s.lsn),
                (0, 0, 0),
                "range {} statistics removed",
                r.id
            );
            assert!(
                store
                    .meter_history(&txn, old.rid, r.id, 0)
                    .unwrap()
                    .is_empty(),
                "meter history removed"
            );
        }
        let logical = store
            .logical_partitions(&txn, &old, &Epk::min(), &Epk::max(), None, 1000)
            .unwrap();
        assert!(logical.is_empty(), "logical partition statistics removed");
        let req = cosmoscope::store::testing::FeedRequest {
            start: FeedStart::Beginning,
            mode: FeedMode::AllVersions,
            range: None,
            max_items: 1000,
            span: None,
        };
        assert!(
            store
                .read_feed(&txn, &old, &req)
                .unwrap()
                .changes
                .is_empty(),
            "the feed is removed"
        );
    }
    assert_eq!(e.purge_expired().unwrap(), 0);

    // A container recreated under the same name starts empty.
    fx.container("c", settings);
    let info = e.container(DB, "c").unwrap();
    assert_eq!(
        (info.statistics.item_count, info.statistics.size_bytes),
        (0, 0)
    );
    assert_eq!(info.partition_count, 1);
    assert_eq!(e.feed_head(DB, "c").unwrap(), 0);
    assert!(fx.drain_feed("c", FeedMode::AllVersions).is_empty());
    assert!(fx.drain_feed("c", FeedMode::LatestVersion).is_empty());
    assert_eq!(err(e.read_item(DB, "c", "i0", &json!("k0"))).status, 404);
    assert!(export_all(e, "c").is_empty());
    assert!(
        e.partitions(DB, "c", 10, 60)
            .unwrap()
            .largest_logical_partitions
            .is_empty()
    );
    fx.create("c", &json!({"id": "i0", "pk": "k0"}));
    assert_eq!(container_counts(e, "c").0, 1);
}

#[test]
fn deleting_a_database_removes_its_containers() {
    let fx = open();
    let e = &fx.engine;
    e.create_database("other").unwrap();
    e.create_container("other", "c", pk_settings()).unwrap();
    e.create_item("other", "c", &bytes(&json!({"id": "a", "pk": "p"})))
        .unwrap();
    fx.pk_container("keep");
    fx.create("keep", &json!({"id": "a", "pk": "p"}));
    let store = e.store();
    let old = {
        let txn = store.read_txn().unwrap();
        store.container(&txn, "other", "c").unwrap()
    };
    e.delete_database("other").unwrap();
    assert_eq!(err(e.container("other", "c")).status, 404);
    assert_eq!(err(e.list_containers(Some("other"))).status, 404);
    assert_eq!(e.list_databases().unwrap().len(), 1);
    {
        let txn = store.read_txn().unwrap();
        let (items, _) = store
            .scan_items(&txn, &old, &Epk::min(), &Epk::max(), None, 10)
            .unwrap();
        assert!(items.is_empty());
    }
    e.create_database("other").unwrap();
    e.create_container("other", "c", pk_settings()).unwrap();
    assert_eq!(err(e.read_item("other", "c", "a", &json!("p"))).status, 404);
    assert_eq!(
        fx.read_json("keep", "a", &json!("p"))["id"],
        "a",
        "other databases are untouched"
    );
    assert_eq!(err(e.delete_database("nodb")).status, 404);
}

#[test]
fn initial_range_counts_follow_the_service() {
    let fx = open();
    let e = &fx.engine;
    let cases = [
        (Throughput::Manual(400), 1),
        (Throughput::Manual(6000), 1),
        (Throughput::Manual(6100), 2),
        (Throughput::Manual(12000), 2),
        (Throughput::Manual(12100), 3),
        (Throughput::Manual(60000), 10),
        (Throughput::Autoscale(1000), 1),
        (Throughput::Autoscale(10000), 1),
        (Throughput::Autoscale(11000), 2),
        (Throughput::Autoscale(40000), 4),
    ];
    for (i, (throughput, n)) in cases.iter().enumerate() {
        let name = format!("c{i}");
        let info = e
            .create_container(
                DB,
                &name,
                ContainerSettings {
                    throughput: *throughput,
                    ..pk_settings()
                },
            )
            .unwrap();
        assert_eq!(info.partition_count, *n, "{throughput:?}");
        let parts = info.partitions.as_ref().unwrap();
        assert_eq!(parts.len(), *n, "{throughput:?}");
        assert_tiles(&bounds(e, &name));
        let widths: f64 = parts.iter().map(|p| p.key_space_fraction).sum();
        assert!(
            (widths - 1.0).abs() < 1e-3,
            "ranges cover the whole key space: {widths}"
        );
        for p in parts {
            assert!(
                (p.key_space_fraction - 1.0 / *n as f64).abs() < 1e-3,
                "initial ranges are even"
            );
            assert!((p.throughput_fraction - 1.0 / *n as f64).abs() < 1e-9);
            assert!(p.parents.is_empty());
        }
        let mut ids: Vec<&String> = parts.iter().map(|p| &p.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), *n, "range ids are distinct");
        let expected_budget = throughput.max_ru() as f64 / *n as f64;
        assert!((info.throughput.per_partition_budget - expected_budget).abs() < 0.01);
    }
}

// ---- splits ----

#[test]
fn throughput_split_makes_only_as_many_ranges_as_needed() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            throughput: Throughput::Manual(10000),
            ..pk_settings()
        },
    );
    assert_eq!(
        range_ids(e, "c").len(),
        2,
        "ceil(10000 / 6000) = 2 ranges at creation"
    );
    let mut items = Vec::new();
    for i in 0..60 {
        let pk = json!(format!("k{}", i % 30));
        fx.create("c", &json!({"id": format!("i{i}"), "pk": pk, "n": i}));
        items.push((format!("i{i}"), pk));
    }
    let before = range_ids(e, "c");

    let info = e
        .set_throughput(DB, "c", Throughput::Manual(30000))
        .unwrap();
    assert_eq!(info.partition_count, 3, "30,000 RU/s needs 3 ranges");
    assert_eq!(info.throughput.manual, Some(30000));
    let parts = info.partitions.as_ref().unwrap();
    let kept: Vec<&String> = parts
        .iter()
        .map(|p| &p.id)
        .filter(|id| before.contains(id))
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "one parent split, the other range is untouched"
    );
    let children: Vec<_> = parts.iter().filter(|p| !before.contains(&p.id)).collect();
    assert_eq!(children.len(), 2);
    assert_eq!(children[0].parents, children[1].parents);
    assert_eq!(children[0].parents.len(), 1);
    assert!(before.contains(&children[0].parents[0]));
    assert_tiles(&bounds(e, "c"));
    assert_items_routable(&fx, "c", &items);
    assert_ranges_sum_to_container(e, "c");
    assert_eq!(container_counts(e, "c").0, 60);

    // Scaling down never merges.
    let info = e
        .set_throughput(DB, "c", Throughput::Manual(20000))
        .unwrap();
    assert_eq!(info.partition_count, 3);
    assert_eq!(info.throughput.manual, Some(20000));
    // Within ranges × 10,000 no split happens.
    assert_eq!(
        e.set_throughput(DB, "c", Throughput::Manual(30000))
            .unwrap()
            .partition_count,
        3
    );
    // Invalid throughput is refused and changes nothing.
    assert_eq!(
        err(e.set_throughput(DB, "c", Throughput::Manual(100))).status,
        400
    );
    assert_eq!(e.container(DB, "c").unwrap().throughput.manual, Some(30000));
    // Autoscale maximum counts at 10,000 per range.
    let info = e
        .set_throughput(DB, "c", Throughput::Autoscale(50000))
        .unwrap();
    assert_eq!(info.partition_count, 5);
    assert_eq!(info.throughput.autoscale_max, Some(50000));
    assert_tiles(&bounds(e, "c"));
    assert_items_routable(&fx, "c", &items);
    assert_ranges_sum_to_container(e, "c");
    assert_eq!(
        err(e.set_throughput(DB, "missing", Throughput::Manual(400))).status,
        404
    );
}

#[test]
fn throughput_split_from_one_and_from_three_ranges() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "one",
        ContainerSettings {
            throughput: Throughput::Manual(6000),
            ..pk_settings()
        },
    );
    assert_eq!(range_ids(e, "one").len(), 1);
    assert_eq!(
        e.set_throughput(DB, "one", Throughput::Manual(30000))
            .unwrap()
            .partition_count,
        3
    );
    assert_tiles(&bounds(e, "one"));

    // 3 → 5 ranges for 45,000 RU/s: two parents split, one is untouched.
    fx.container(
        "three",
        ContainerSettings {
            throughput: Throughput::Manual(18000),
            ..pk_settings()
        },
    );
    let before = range_ids(e, "three");
    assert_eq!(before.len(), 3);
    let info = e
        .set_throughput(DB, "three", Throughput::Manual(45000))
        .unwrap();
    assert_eq!(info.partition_count, 5);
    let parts = info.partitions.unwrap();
    assert_eq!(parts.iter().filter(|p| before.contains(&p.id)).count(), 1);
    assert_eq!(parts.iter().filter(|p| p.parents.len() == 1).count(), 4);
    assert_tiles(&bounds(e, "three"));
    // Budget per range follows the range count.
    assert_eq!(
        e.container(DB, "three")
            .unwrap()
            .throughput
            .per_partition_budget,
        9000.0
    );
}

#[test]
fn storage_split_keeps_every_item_reachable() {
    let fx = open();
    let e = &fx.engine;
    let limit = 64 * 1024;
    fx.container(
        "c",
        ContainerSettings {
            max_partition_bytes: Some(limit),
            ..pk_settings()
        },
    );
    let mut items = Vec::new();
    for i in 0..300 {
        let pk = json!(format!("key-{}", i % 50));
        let r = fx.create(
            "c",
            &json!({"id": format!("item-{i}"), "pk": pk, "pad": "x".repeat(800)}),
        );
        assert_eq!(r.status.as_u16(), 201);
        items.push((format!("item-{i}"), pk));
    }
    let info = e.container(DB, "c").unwrap();
    assert!(
        info.partition_count >= 4,
        "about 300 KB over a 64 KB limit splits several times: {}",
        info.partition_count
    );
    assert_tiles(&bounds(e, "c"));
    assert_items_routable(&fx, "c", &items);
    assert_ranges_sum_to_container(e, "c");
    assert_eq!(info.statistics.item_count, 300);

    let report = e.partitions(DB, "c", 1000, 60).unwrap();
    let logical = &report.largest_logical_partitions;
    assert_eq!(logical.len(), 50, "one logical partition per key");
    assert_eq!(
        logical.iter().map(|l| l.statistics.item_count).sum::<u64>(),
        300
    );
    assert_eq!(
        logical.iter().map(|l| l.statistics.size_bytes).sum::<u64>(),
        info.statistics.size_bytes
    );
    for l in logical {
        assert_eq!(l.statistics.item_count, 6);
        let epk = e.epk(DB, "c", &l.partition_key).unwrap();
        assert_eq!(l.epk, epk.epk);
        assert_eq!(vec![l.range.clone()], epk.partitions);
    }
    for p in info.partitions.as_ref().unwrap() {
        let held = logical.iter().filter(|l| l.range == p.id).count() as u64;
        let items_in: u64 = logical
            .iter()
            .filter(|l| l.range == p.id)
            .map(|l| l.statistics.item_count)
            .sum();
        assert_eq!(
            items_in, p.statistics.item_count,
            "range {} items = its logical partitions' items",
            p.id
        );
        assert!(
            p.statistics.size_bytes <= limit || held == 1,
            "range {} holds {} bytes in {held} logical partitions; it should have split",
            p.id,
            p.statistics.size_bytes
        );
        assert!(held >= 1, "a storage split never leaves an empty child");
        assert!(!p.parents.is_empty(), "every live range came from a split");
    }
    // The feed of a split-away range is gone.
    let gone = err(e.read_feed(
        DB,
        "c",
        &FeedRequest {
            range: Some("0".into()),
            ..FeedRequest::default()
        },
    ));
    assert_eq!(gone.status, 410);
}

#[test]
fn a_full_logical_partition_is_403_1014_and_nothing_is_written() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            max_logical_partition_bytes: Some(4096),
            ..pk_settings()
        },
    );
    let mut written = 0;
    let failure = loop {
        let doc = json!({"id": format!("i{written}"), "pk": "full", "pad": "x".repeat(900)});
        match e.create_item(DB, "c", &bytes(&doc)) {
            Ok(_) => written += 1,
            Err(er) => break er,
        }
        assert!(
            written < 10,
            "the 4 KB logical partition limit was never reached"
        );
    };
    assert_eq!(failure.status, 403);
    assert_eq!(failure.substatus, 1014);
    assert!(failure.request_charge > 0.0);
    assert!(written >= 2, "a few items fit first ({written})");
    let head = e.feed_head(DB, "c").unwrap();
    let counts = container_counts(e, "c");
    assert_eq!(
        err(e.read_item(DB, "c", &format!("i{written}"), &json!("full"))).status,
        404,
        "nothing was written"
    );
    // Upserting a grown image is refused too; nothing changes.
    let grown = json!({"id": "i0", "pk": "full", "pad": "y".repeat(3000)});
    let r = err(e.upsert_item(DB, "c", &bytes(&grown), None));
    assert_eq!((r.status.as_u16(), r.substatus), (403, 1014));
    assert!(
        fx.read_json("c", "i0", &json!("full"))["pad"]
            .as_str()
            .unwrap()
            .starts_with('x')
    );
    assert_eq!(
        e.feed_head(DB, "c").unwrap(),
        head,
        "failed writes do not reach the feed"
    );
    assert_eq!(
        container_counts(e, "c"),
        counts,
        "failed writes do not change statistics"
    );
    // Shrinking an item and writing other partitions still work.
    fx.replace("c", &json!({"id": "i0", "pk": "full"}));
    fx.create(
        "c",
        &json!({"id": "i0", "pk": "other", "pad": "x".repeat(900)}),
    );
    // After the shrink there is room for one more.
    fx.create(
        "c",
        &json!({"id": format!("i{written}"), "pk": "full", "pad": "x".repeat(500)}),
    );
    let full = e.partitions(DB, "c", 10, 60).unwrap();
    let l = full
        .largest_logical_partitions
        .iter()
        .find(|l| l.partition_key == json!("full"))
        .unwrap();
    assert!(l.statistics.size_bytes <= 4096);
}

#[test]
fn a_range_never_splits_a_single_logical_partition() {
    let fx = open();
    let e = &fx.engine;
    let limit = 8 * 1024;
    fx.container(
        "c",
        ContainerSettings {
            max_partition_bytes: Some(limit),
            ..pk_settings()
        },
    );
    for i in 0..30 {
        fx.create(
            "c",
            &json!({"id": format!("h{i}"), "pk": "huge", "pad": "x".repeat(900)}),
        );
    }
    let info = e.container(DB, "c").unwrap();
    assert_eq!(
        info.partition_count, 1,
        "one logical partition cannot be split"
    );
    assert!(info.statistics.size_bytes > 3 * limit);

    fx.create("c", &json!({"id": "s", "pk": "small"}));
    let info = e.container(DB, "c").unwrap();
    assert_eq!(
        info.partition_count, 2,
        "a second logical partition lets the range split once"
    );
    for i in 30..40 {
        fx.create(
            "c",
            &json!({"id": format!("h{i}"), "pk": "huge", "pad": "x".repeat(900)}),
        );
    }
    let info = e.container(DB, "c").unwrap();
    assert_eq!(
        info.partition_count, 2,
        "the range holding only the huge partition does not split again"
    );
    let huge_range = fx.read("c", "h0", &json!("huge")).range;
    let small_range = fx.read("c", "s", &json!("small")).range;
    assert_ne!(huge_range, small_range);
    for i in 0..40 {
        assert_eq!(
            fx.read("c", &format!("h{i}"), &json!("huge")).range,
            huge_range
        );
    }
    let parts = info.partitions.unwrap();
    let huge = parts.iter().find(|p| p.id == huge_range).unwrap();
    assert_eq!(huge.statistics.item_count, 40);
    assert!(huge.statistics.size_bytes > limit);
    assert_tiles(&bounds(e, "c"));
    assert_ranges_sum_to_container(e, "c");
}

// ---- statistics ----

#[test]
fn statistics_equal_a_recount_after_a_random_workload() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        throughput: Throughput::Manual(12000),
        max_partition_bytes: Some(12 * 1024),
        ..pk_settings()
    };
    fx.container("c", settings);
    let mut rng = Rng(0x5EED_CAFE);
    let mut model: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut ok_writes = 0u64;
    for step in 0..600u64 {
        let key = format!("k{}", rng.below(12));
        let id = format!("i{}", rng.below(15));
        let pk = json!(key);
        let doc =
            json!({"id": id, "pk": key, "step": step, "pad": "z".repeat(rng.below(700) as usize)});
        let exists = model.contains_key(&(key.clone(), id.clone()));
        match rng.below(10) {
            0..=3 => match e.create_item(DB, "c", &bytes(&doc)) {
                Ok(_) => {
                    assert!(!exists);
                    model.insert((key, id), step);
                    ok_writes += 1;
                }
                Err(er) => assert!(exists && er.status == 409, "{er}"),
            },
            4..=5 => {
                let r = e.upsert_item(DB, "c", &bytes(&doc), None).unwrap();
                assert_eq!(r.status.as_u16(), if exists { 200 } else { 201 });
                model.insert((key, id), step);
                ok_writes += 1;
            }
            6..=7 => match e.replace_item(DB, "c", &bytes(&doc), None) {
                Ok(_) => {
                    assert!(exists);
                    model.insert((key, id), step);
                    ok_writes += 1;
                }
                Err(er) => assert!(!exists && er.status == 404, "{er}"),
            },
            _ => match e.delete_item(DB, "c", &id, &pk, None) {
                Ok(_) => {
                    assert!(exists);
                    model.remove(&(key, id));
                    ok_writes += 1;
                }
                Err(er) => assert!(!exists && er.status == 404, "{er}"),
            },
        }
    }
    assert_eq!(
        e.feed_head(DB, "c").unwrap(),
        ok_writes,
        "the feed head counts successful writes"
    );
    let info = e.container(DB, "c").unwrap();
    assert!(
        info.partition_count > 2,
        "precondition: the workload split ranges ({})",
        info.partition_count
    );

    // Recount from an export.
    let exported = export_all(e, "c");
    let live: BTreeMap<(String, String), u64> = exported
        .iter()
        .map(|(v, _)| {
            let key = (
                v["pk"].as_str().unwrap().to_string(),
                v["id"].as_str().unwrap().to_string(),
            );
            (key, v["step"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        live, model,
        "the store holds exactly the model's items at their last versions"
    );
    assert_eq!(info.statistics.item_count, exported.len() as u64);
    assert_eq!(
        info.statistics.size_bytes,
        exported.iter().map(|(_, n)| n).sum::<u64>()
    );

    let mut by_range: HashMap<String, (u64, u64)> = HashMap::new();
    let mut by_key: HashMap<String, (u64, u64)> = HashMap::new();
    for (v, n) in &exported {
        let pk = v["pk"].clone();
        let owner = e.epk(DB, "c", &pk).unwrap().partitions[0].clone();
        let r = by_range.entry(owner).or_default();
        r.0 += 1;
        r.1 += n;
        let l = by_key.entry(pk.as_str().unwrap().to_string()).or_default();
        l.0 += 1;
        l.1 += n;
    }
    for p in info.partitions.as_ref().unwrap() {
        let expected = by_range.get(&p.id).copied().unwrap_or_default();
        assert_eq!(
            (p.statistics.item_count, p.statistics.size_bytes),
            expected,
            "range {}",
            p.id
        );
    }
    let report = e.partitions(DB, "c", 1000, 60).unwrap();
    let stats: HashMap<String, (u64, u64)> = report
        .largest_logical_partitions
        .iter()
        .map(|l| {
            (
                l.partition_key.as_str().unwrap().to_string(),
                (l.statistics.item_count, l.statistics.size_bytes),
            )
        })
        .collect();
    assert_eq!(
        stats, by_key,
        "logical partition statistics equal the recount (empty partitions are gone)"
    );
    assert_items_routable(
        &fx,
        "c",
        &model
            .keys()
            .map(|(k, id)| (id.clone(), json!(k)))
            .collect::<Vec<_>>(),
    );
}

#[test]
fn partitions_report_lists_largest_and_hottest_logical_partitions() {
    let fx = open();
    let e = &fx.engine;
    fx.pk_container("c");
    for i in 0..5 {
        fx.create(
            "c",
            &json!({"id": format!("b{i}"), "pk": "big", "pad": "x".repeat(2000)}),
        );
    }
    for i in 0..3 {
        fx.create(
            "c",
            &json!({"id": format!("m{i}"), "pk": "mid", "pad": "x".repeat(1000)}),
        );
    }
    fx.create("c", &json!({"id": "s", "pk": "small"}));
    for _ in 0..100 {
        fx.read("c", "s", &json!("small"));
    }
    e.flush_metrics().unwrap();
    let report = e.partitions(DB, "c", 2, 60).unwrap();
    assert_eq!(report.container, format!("{DB}/c"));
    let largest: Vec<&Value> = report
        .largest_logical_partitions
        .iter()
        .map(|l| &l.partition_key)
        .collect();
    assert_eq!(
        largest,
        vec![&json!("big"), &json!("mid")],
        "top 2 by size, largest first"
    );
    assert_eq!(
        report.hottest_logical_partitions[0].partition_key,
        json!("small"),
        "100 reads make it the hottest"
    );
    for l in report
        .largest_logical_partitions
        .iter()
        .chain(&report.hottest_logical_partitions)
    {
        let epk = e.epk(DB, "c", &l.partition_key).unwrap();
        assert_eq!(l.epk, epk.epk);
        assert_eq!(l.range, epk.partitions[0]);
    }
    let big = &report.largest_logical_partitions[0];
    assert_eq!(big.statistics.item_count, 5);
    let hot = &report.hottest_logical_partitions[0];
    assert_eq!(hot.statistics.operations["read"], 100);
    assert!(hot.statistics.request_charge_total >= 100.0);
    assert_eq!(report.partitions.len(), 1);
    assert_eq!(report.load.len(), 1);
    assert!(
        report.load[0].requests >= 109,
        "9 writes and 100 reads are metered: {}",
        report.load[0].requests
    );
    assert_eq!(report.load[0].throttled, 0);
}

#[test]
fn read_charges_reach_statistics_after_flush() {
    let fx = open();
    let e = &fx.engine;
    fx.pk_container("c");
    fx.create("c", &json!({"id": "a", "pk": "p", "pad": "x".repeat(5000)}));
    e.flush_metrics().unwrap();
    let before = e.container(DB, "c").unwrap();
    let mut read_ru = 0.0;
    for _ in 0..10 {
        read_ru += fx.read("c", "a", &json!("p")).request_charge;
    }
    assert_eq!(
        err(e.read_item(DB, "c", "missing", &json!("p"))).status,
        404
    );
    e.flush_metrics().unwrap();
    let after = e.container(DB, "c").unwrap();
    let delta = after.statistics.request_charge_total - before.statistics.request_charge_total;
    assert!(
        (delta - (read_ru + 1.0)).abs() < 0.05,
        "container RU grew by the reads' charges: {delta} vs {read_ru} + 1"
    );
    assert_eq!(after.statistics.operations["read"], 11);
    let range = &after.partitions.as_ref().unwrap()[0];
    assert_eq!(range.statistics.operations["read"], 11);
    let report = e.partitions(DB, "c", 5, 60).unwrap();
    let l = &report.largest_logical_partitions[0];
    assert_eq!(
        l.statistics.operations["read"], 10,
        "the 404 belongs to no logical partition"
    );
    assert_eq!(l.statistics.operations["create"], 1);
}

// ---- throttling ----

#[test]
fn enforced_throughput_answers_429_with_retry_after() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        throughput: Throughput::Manual(400),
        enforce_throughput: true,
        ..pk_settings()
    };
    fx.container("c", settings);
    let mut throttled = Vec::new();
    let mut accepted_ru = 0.0;
    for i in 0..5000 {
        let doc = json!({"id": format!("i{}", i % 20), "pk": "p", "pad": "x".repeat(500)});
        let head = e.feed_head(DB, "c").unwrap();
        match e.upsert_item(DB, "c", &bytes(&doc), None) {
            Ok(r) => accepted_ru += r.request_charge,
            Err(er) => {
                assert_eq!(er.status, 429, "{er}");
                assert_eq!(er.substatus, 3200);
                let ms = er.retry_after_ms.expect("a 429 says when to retry");
                assert!((1..=1000).contains(&ms), "retry after {ms} ms");
                assert_eq!(er.request_charge, 0.0, "a throttled request costs nothing");
                assert_eq!(
                    e.feed_head(DB, "c").unwrap(),
                    head,
                    "a throttled write writes nothing"
                );
                throttled.push(er);
                if throttled.len() == 3 {
                    break;
                }
            }
        }
    }
    assert_eq!(
        throttled.len(),
        3,
        "a burst over 400 RU in a second is throttled"
    );
    assert!(accepted_ru > 0.0);
    e.flush_metrics().unwrap();
    let report = e.partitions(DB, "c", 5, 120).unwrap();
    assert_eq!(report.load[0].budget_per_second, 400.0);
    assert_eq!(
        report.load.iter().map(|l| l.throttled).sum::<u64>(),
        3,
        "every 429 is counted"
    );
    for s in &report.load[0].samples {
        assert!(
            s.ru <= 400.0 + 1e-6,
            "no second went over budget with enforcement on: {}",
            s.ru
        );
    }
    // After the retry-after interval a new second's budget is available.
    std::thread::sleep(std::time::Duration::from_millis(
        throttled[2].retry_after_ms.unwrap() + 20,
    ));
    let r = e.upsert_item(DB, "c", &bytes(&json!({"id": "after", "pk": "p"})), None);
    assert!(r.is_ok(), "the write succeeds after waiting: {:?}", r.err());
}

#[test]
fn unenforced_throughput_records_load_without_throttling() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            throughput: Throughput::Manual(400),
            ..pk_settings()
        },
    );
    let mut total = 0.0;
    for i in 0..120 {
        let doc = json!({"id": format!("i{}", i % 10), "pk": "p", "pad": "x".repeat(500)});
        total += e
            .upsert_item(DB, "c", &bytes(&doc), None)
            .expect("never throttled")
            .request_charge;
    }
    assert!(
        total > 400.0,
        "precondition: the workload used more than one second's budget"
    );
    e.flush_metrics().unwrap();
    let report = e.partitions(DB, "c", 5, 120).unwrap();
    let metered: f64 = report.load[0].samples.iter().map(|s| s.ru).sum();
    assert!(
        (metered - total).abs() < 0.5,
        "meter holds every write's RU: {metered} vs {total}"
    );
    assert_eq!(report.load[0].requests, 120);
    assert_eq!(report.load[0].throttled, 0);
}

#[test]
fn hierarchical_keys_split_inside_a_first_level_prefix() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        max_partition_bytes: Some(16 * 1024),
        ..ContainerSettings::new(vec!["/tenant".into(), "/user".into()])
    };
    fx.container("h", settings);
    let mut items = Vec::new();
    for i in 0..120 {
        let (tenant, user) = if i % 6 == 0 {
            ("small", format!("u{i}"))
        } else {
            ("big", format!("u{}", i % 40))
        };
        let pk = json!([tenant, user]);
        fx.create(
            "h",
            &json!({"id": format!("i{i}"), "tenant": tenant, "user": user, "pad": "x".repeat(500)}),
        );
        items.push((format!("i{i}"), pk));
    }
    let info = e.container(DB, "h").unwrap();
    assert!(
        info.partition_count >= 3,
        "precondition: storage splits ({})",
        info.partition_count
    );
    assert_tiles(&bounds(e, "h"));
    assert_items_routable(&fx, "h", &items);
    assert_ranges_sum_to_container(e, "h");
    let prefix = e.epk(DB, "h", &json!(["big"])).unwrap();
    assert!(
        prefix.partitions.len() >= 2,
        "the big tenant spans several ranges: {:?}",
        prefix.partitions
    );
    let (min, max) = prefix.epk_range.unwrap();
    for (id, pk) in items.iter().filter(|(_, pk)| pk[0] == "big") {
        let r = fx.read("h", id, pk);
        assert!(
            prefix.partitions.contains(&r.range),
            "{id} is served by a range overlapping its prefix"
        );
        assert!(range_contains(&min, &max, &e.epk(DB, "h", pk).unwrap().epk));
    }
    // A throughput split on long (hierarchical) bounds still tiles and routes.
    let target = (info.partition_count as u64 + 2) * 10000;
    let after = e
        .set_throughput(DB, "h", Throughput::Manual(target))
        .unwrap();
    assert_eq!(after.partition_count, info.partition_count + 2);
    assert_tiles(&bounds(e, "h"));
    assert_items_routable(&fx, "h", &items);
    assert_ranges_sum_to_container(e, "h");
    let (all, _) = drain(e, "h", FeedStart::Beginning, FeedMode::AllVersions, 7);
    assert_eq!(all.len(), 120, "the feed still holds every create once");
}

#[test]
fn reopening_keeps_items_statistics_feed_and_read_metering() {
    let fx = open();
    fx.container(
        "c",
        ContainerSettings {
            max_partition_bytes: Some(8 * 1024),
            ..pk_settings()
        },
    );
    let mut rids = Vec::new();
    for i in 0..30 {
        let r = fx.create(
            "c",
            &json!({"id": format!("i{i}"), "pk": format!("k{}", i % 6), "pad": "x".repeat(400)}),
        );
        rids.push(body(&r)["_rid"].clone());
    }
    for _ in 0..5 {
        fx.read("c", "i0", &json!("k0"));
    }
    let info_before = fx.engine.container(DB, "c").unwrap();
    let head_before = fx.engine.feed_head(DB, "c").unwrap();
    let (_, token) = drain(
        &fx.engine,
        "c",
        FeedStart::Beginning,
        FeedMode::AllVersions,
        100,
    );

    // Dropping the engine flushes pending read metering.
    let Fixture { engine, dir } = fx;
    drop(engine);
    let fx = Fixture {
        engine: Engine::open(dir.path()).unwrap(),
        dir,
    };
    let e = &fx.engine;
    let info = e.container(DB, "c").unwrap();
    assert_eq!(info.partition_count, info_before.partition_count);
    assert_eq!(info.statistics.item_count, 30);
    assert_eq!(
        info.statistics.size_bytes,
        info_before.statistics.size_bytes
    );
    assert_eq!(
        info.statistics.operations["read"], 5,
        "reads metered before closing were flushed"
    );
    assert_eq!(e.feed_head(DB, "c").unwrap(), head_before);
    assert_eq!(fx.read_json("c", "i7", &json!("k1"))["_rid"], rids[7]);

    // Sequences continue: new items get new _rids and the feed resumes from the old token.
    let r = fx.create("c", &json!({"id": "new", "pk": "k0"}));
    assert!(
        !rids.contains(&body(&r)["_rid"]),
        "a new _rid after reopening"
    );
    assert_eq!(e.feed_head(DB, "c").unwrap(), head_before + 1);
    let (rest, _) = drain(
        e,
        "c",
        FeedStart::Continuation(token),
        FeedMode::AllVersions,
        100,
    );
    let ids: Vec<&str> = rest.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["new"]);
}

#[test]
fn concurrent_writers_with_splits_lose_nothing() {
    let fx = open();
    fx.container(
        "c",
        ContainerSettings {
            max_partition_bytes: Some(16 * 1024),
            ..pk_settings()
        },
    );
    let engine = std::sync::Arc::new(fx.engine);
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                for i in 0..60 {
                    let doc = json!({"id": format!("t{t}-{i}"), "pk": format!("k{}", i % 12), "pad": "x".repeat(300)});
                    engine.create_item(DB, "c", &bytes(&doc)).expect("create");
                    if i % 5 == 0 {
                        let doc = json!({"id": format!("t{t}-{i}"), "pk": format!("k{}", i % 12), "v": 2});
                        engine.replace_item(DB, "c", &bytes(&doc), None).expect("replace");
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    let e = &*engine;
    let info = e.container(DB, "c").unwrap();
    assert!(info.partition_count > 2, "precondition: splits happened");
    assert_eq!(info.statistics.item_count, 240);
    assert_eq!(e.feed_head(DB, "c").unwrap(), 240 + 4 * 12);
    assert_tiles(&bounds(e, "c"));
    assert_ranges_sum_to_container(e, "c");
    let exported = export_all(e, "c");
    assert_eq!(exported.len(), 240);
    assert_eq!(
        exported.iter().map(|(_, n)| n).sum::<u64>(),
        info.statistics.size_bytes
    );
    let (all, _) = drain(e, "c", FeedStart::Beginning, FeedMode::AllVersions, 50);
    assert_eq!(all.len(), 288, "every write reached the feed exactly once");
    // The container's commit sequence, which the store's merged feed follows.
    let seqs: Vec<u64> = {
        let store = e.store();
        let txn = store.read_txn().unwrap();
        let def = store.container(&txn, DB, "c").unwrap();
        let req = cosmoscope::store::testing::FeedRequest {
            start: FeedStart::Beginning,
            mode: FeedMode::AllVersions,
            range: None,
            max_items: 1000,
            span: None,
        };
        let page = store.read_feed(&txn, &def, &req).unwrap();
        assert_eq!(page.changes.len(), all.len(), "one page holds them all");
        page.changes.iter().map(|c| c.seq).collect()
    };
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "commit order");
    let (latest, _) = drain(e, "c", FeedStart::Beginning, FeedMode::LatestVersion, 50);
    assert_eq!(latest.len(), 240);
}

#[test]
fn a_tiny_range_limit_gives_each_logical_partition_its_own_range() {
    let fx = open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            max_partition_bytes: Some(1),
            ..pk_settings()
        },
    );
    let mut items = Vec::new();
    for i in 0..20 {
        let pk = json!(format!("k{i}"));
        fx.create("c", &json!({"id": "a", "pk": pk}));
        fx.create("c", &json!({"id": "b", "pk": pk}));
        items.push(("a".to_string(), pk.clone()));
        items.push(("b".to_string(), pk));
    }
    let info = e.container(DB, "c").unwrap();
    assert_eq!(
        info.partition_count, 20,
        "ranges split down to one logical partition each"
    );
    for p in info.partitions.as_ref().unwrap() {
        assert_eq!(
            p.statistics.item_count, 2,
            "range {} holds one logical partition",
            p.id
        );
    }
    assert_tiles(&bounds(e, "c"));
    assert_items_routable(&fx, "c", &items);
    assert_ranges_sum_to_container(e, "c");
    let (all, _) = drain(e, "c", FeedStart::Beginning, FeedMode::AllVersions, 3);
    assert_eq!(all.len(), 40);
}

#[test]
fn a_request_larger_than_the_budget_is_not_throttled_forever() {
    let fx = open();
    let e = &fx.engine;
    let settings = ContainerSettings {
        throughput: Throughput::Manual(400),
        enforce_throughput: true,
        ..pk_settings()
    };
    fx.container("c", settings);
    // About 1 MB: a create of it costs more than 400 RU.
    let doc = bytes(&json!({"id": "big", "pk": "p", "pad": "x".repeat(1024 * 1024)}));
    let mut last = None;
    for _ in 0..2 {
        match e.create_item(DB, "c", &doc) {
            Ok(r) => {
                assert!(r.request_charge > 400.0);
                return;
            }
            Err(er) => {
                assert_eq!(er.status, 429, "{er}");
                std::thread::sleep(std::time::Duration::from_millis(
                    er.retry_after_ms.unwrap_or(1000) + 20,
                ));
                last = Some(er);
            }
        }
    }
    panic!(
        "still throttled after waiting the retry-after twice: {}",
        last.unwrap()
    );
}
