//! On data with known skew, the advisor ranks keys in the modelling guides' order and names
//! the reason: a key the main query binds with many even values first, then one the main
//! query fans out on, then one with a hot value, then one with three values.

use cosmoscope::advisor::{self, AdviseOptions};
use cosmoscope::engine::Throughput;

use super::{container_with, skewed_items};
use crate::support::fixture::{self, DB};

/// The main query by user, point reads, and writes shaped like the data (half to tenant
/// "big").
const WORKLOAD: &str = r#"
[[operations]]
id = "byUser"
title = "A user's items"
weight = 6
query = "SELECT * FROM c WHERE c.userId = @u"
params = { u = "/userId" }

[[operations]]
id = "read"
weight = 2
read = true

[[operations]]
id = "write"
weight = 2
create = true
"#;

#[test]
fn ranks_keys_in_the_guides_order_with_reasons() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(12_000),
        None,
        &skewed_items(2000),
    );
    let file = f.dir.path().join("workload.toml");
    std::fs::write(&file, WORKLOAD).unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        candidates: Some("/userId,/tenant,/kind".into()),
        iterations: 30,
        ..AdviseOptions::new(DB, "c")
    };
    let advice = advisor::advise(&f.engine, &opts, &mut |_| true).unwrap();
    let order: Vec<&str> = advice.candidates.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(
        order,
        ["/userId", "/id", "/tenant", "/kind"],
        "{}",
        advice.to_table()
    );
    let kinds = |key: &str| -> Vec<&str> {
        let a = advice.candidates.iter().find(|a| a.key == key).unwrap();
        a.findings.iter().map(|f| f.kind).collect()
    };
    assert!(kinds("/userId").is_empty(), "{}", advice.to_table());
    assert!(advice.candidates[0].verdict.starts_with("good"));
    assert_eq!(kinds("/id"), ["fan-out"]);
    assert!(
        kinds("/tenant").contains(&"hot-key"),
        "{:?}",
        kinds("/tenant")
    );
    assert!(!kinds("/tenant").contains(&"low-cardinality"));
    assert!(
        kinds("/kind").contains(&"low-cardinality"),
        "{:?}",
        kinds("/kind")
    );
    // Today's key is marked, and its main query really fans out over both ranges.
    let id = advice.candidates.iter().find(|a| a.key == "/id").unwrap();
    assert!(id.current);
    let main = id
        .figures
        .patterns
        .iter()
        .find(|p| p.id == "byUser")
        .unwrap();
    assert_eq!((main.routing.as_str(), main.ranges_touched), ("fan-out", 2));
    let best = &advice.candidates[0].figures;
    let by_user = best.patterns.iter().find(|p| p.id == "byUser").unwrap();
    assert_eq!(
        (by_user.routing.as_str(), by_user.ranges_touched),
        ("single-partition", 1)
    );
    // The single-partition query is cheaper than the fan-out one.
    assert!(by_user.request_charge < main.request_charge);
    // The copies are gone.
    let dbs: Vec<String> = cosmoscope::engine::Backend::list_databases(&f.engine)
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(dbs, [DB]);
}

#[test]
fn proposes_the_properties_the_workload_filters_on() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(400),
        None,
        &skewed_items(600),
    );
    let file = f.dir.path().join("workload.toml");
    std::fs::write(&file, WORKLOAD).unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        iterations: 3,
        ..AdviseOptions::new(DB, "c")
    };
    let advice = advisor::advise(&f.engine, &opts, &mut |_| true).unwrap();
    let mut keys: Vec<&str> = advice.candidates.iter().map(|a| a.key.as_str()).collect();
    keys.sort();
    // userId: in every item, 200 values, bound by the main query. tenant and kind are
    // never filtered on; n and note are not either.
    assert_eq!(keys, ["/id", "/userId"]);
}

#[test]
fn a_key_under_which_two_items_share_an_id_is_fatal() {
    let f = fixture::open();
    // The same id in two logical partitions of today's key: under /kind they would meet.
    let items: Vec<serde_json::Value> = (0..40)
        .map(|i| serde_json::json!({"id": format!("o{}", i % 20), "userId": format!("u{}", i / 20), "kind": "a"}))
        .collect();
    container_with(&f, "c", &["/userId"], Throughput::Manual(400), None, &items);
    let opts = AdviseOptions {
        candidates: Some("/kind".into()),
        ..AdviseOptions::new(DB, "c")
    };
    let advice = advisor::advise(&f.engine, &opts, &mut |_| true).unwrap();
    let kind = advice.candidates.iter().find(|a| a.key == "/kind").unwrap();
    assert_eq!(kind.figures.id_collisions, 20);
    assert_eq!(kind.findings[0].kind, "id-collision");
    assert!(kind.verdict.starts_with("avoid"), "{}", kind.verdict);
    assert_eq!(advice.candidates[0].key, "/userId");
    assert!(advice.notes.iter().any(|n| n.starts_with("no workload")));
}

#[test]
fn synthetic_keys_route_as_the_application_would_address_them() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(40_000),
        None,
        &skewed_items(800),
    );
    let file = f.dir.path().join("workload.toml");
    std::fs::write(
        &file,
        r#"
[[operations]]
id = "byUserKind"
weight = 5
query = "SELECT * FROM c WHERE c.userId = @u AND c.kind = @k"
params = { u = "/userId", k = "/kind" }

[[operations]]
id = "byUser"
weight = 3
query = "SELECT * FROM c WHERE c.userId = @u"
params = { u = "/userId" }

[[operations]]
id = "read"
weight = 2
read = true
"#,
    )
    .unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        candidates: Some("/userId+/kind,/userId suffix 4 buckets".into()),
        iterations: 5,
        ..AdviseOptions::new(DB, "c")
    };
    let advice = advisor::advise(&f.engine, &opts, &mut |_| true).unwrap();
    let pattern = |key: &str, id: &str| {
        let a = advice.candidates.iter().find(|a| a.key == key).unwrap();
        a.figures
            .patterns
            .iter()
            .find(|p| p.id == id)
            .unwrap()
            .clone()
    };
    // The concatenation is bound when both its paths are; with one of them it fans out.
    let both = pattern("/userId+/kind", "byUserKind");
    assert_eq!(
        (both.routing.as_str(), both.ranges_touched),
        ("single-partition", 1)
    );
    assert_eq!(pattern("/userId+/kind", "byUser").routing, "fan-out");
    // The bucketed key: the application sends the query once per bucket.
    let buckets = pattern("/userId suffix 4 buckets", "byUser");
    assert_eq!(buckets.routing, "targeted");
    assert!((2..=4).contains(&buckets.ranges_touched), "{buckets:?}");
    // A point read computes the key from the item, under every candidate.
    for key in ["/userId+/kind", "/userId suffix 4 buckets", "/id"] {
        let read = pattern(key, "read");
        assert_eq!(
            (read.routing.as_str(), read.ranges_touched, read.error),
            ("single-partition", 1, None)
        );
    }
}

#[test]
fn a_cancelled_advice_leaves_no_copy_behind() {
    let f = fixture::open();
    container_with(
        &f,
        "c",
        &["/id"],
        Throughput::Manual(400),
        None,
        &skewed_items(300),
    );
    let file = f.dir.path().join("workload.toml");
    std::fs::write(&file, WORKLOAD).unwrap();
    let opts = AdviseOptions {
        workload: Some(file.to_string_lossy().into_owned()),
        candidates: Some("/userId".into()),
        ..AdviseOptions::new(DB, "c")
    };
    let mut replays = 0;
    let e = advisor::advise(&f.engine, &opts, &mut |p| {
        replays += usize::from(matches!(p, advisor::Progress::Replaying { .. }));
        replays < 3
    })
    .unwrap_err();
    assert_eq!(e.status, 499);
    let dbs: Vec<String> = cosmoscope::engine::Backend::list_databases(&f.engine)
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(dbs, [DB]);
}
