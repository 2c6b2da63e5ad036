//! The projection: at N = 1 the workbench's table is the measured one; at scale, fan-out
//! queries pay for every range the split rules give, and projected range counts are the
//! counts the store reaches when the data or the throughput really grows.

use cosmoscope::engine::{Backend, ContainerInfo, Throughput};
use cosmoscope::workbench::projection::{self, ContainerScale};
use cosmoscope::workbench::{self, RunOptions, Suite};
use serde_json::Value;

use super::{container_with, import, skewed_items};
use crate::support::fixture::{self, DB};

#[test]
fn projection_at_one_is_the_measured_workbench_table() {
    let f = fixture::open();
    let suite = Suite::builtin("blog").unwrap();
    let options = RunOptions {
        scale: 0.05,
        iterations: 3,
        ..RunOptions::default()
    };
    let report = workbench::run(&f.engine, &suite, &options, &mut |_| true).unwrap();
    let at_one = projection::project(&f.engine, &report, 1.0).unwrap();
    assert_eq!(at_one.report, report);
    assert_eq!(at_one.report.to_table(), report.to_table());
    assert!(
        at_one
            .containers
            .iter()
            .all(|c| c.projected_ranges == c.ranges)
    );

    let at_ten = projection::project(&f.engine, &report, 10.0).unwrap();
    let posts = at_ten
        .containers
        .iter()
        .find(|c| c.database == "blog-v1" && c.container == "posts")
        .unwrap();
    // 40,000 RU/s autoscale × 10: 40 ranges of 10,000 RU/s.
    assert_eq!((posts.ranges, posts.projected_ranges), (4, 40));
    let q6 = |r: &workbench::Report| r.patterns.iter().find(|p| p.id == "Q6").unwrap().clone();
    let (now, later) = (q6(&report), q6(&at_ten.report));
    let v1 = |p: &workbench::PatternReport| p.design("v1").unwrap().clone();
    assert!(v1(&later).request_charge > v1(&now).request_charge);
    assert_eq!(
        v1(&later).partitions_touched,
        40 + v1(&now).partitions_touched - 4
    );
    // v3 reads one logical partition of the feed container: nothing grows.
    let v3 = |p: &workbench::PatternReport| p.design("v3").unwrap().request_charge;
    assert_eq!(v3(&later), v3(&now));
    assert!(
        at_ten
            .notes
            .iter()
            .any(|n| n.starts_with("Q6 on v1") && n.contains("fan-out over 40 ranges"))
    );
}

#[test]
fn projected_range_counts_follow_the_split_rules() {
    let f = fixture::open();
    let limit = 30_000;
    let items = skewed_items(800);
    container_with(
        &f,
        "now",
        &["/id"],
        Throughput::Manual(400),
        Some(limit),
        &items,
    );
    let now = f.engine.container(DB, "now").unwrap();
    assert!(
        now.partition_count > 1,
        "the data should have split the range"
    );
    assert_eq!(
        ContainerScale::of(&now, 1.0).projected_ranges,
        now.partition_count
    );

    // Four times the data, as more items of the same shape: the store's own splits.
    let more: Vec<Value> = (0..4)
        .flat_map(|k| {
            items.iter().map(move |v| {
                let mut v = v.clone();
                v["id"] = Value::String(format!("{}-{k}", v["id"].as_str().unwrap()));
                v
            })
        })
        .collect();
    container_with(
        &f,
        "later",
        &["/id"],
        Throughput::Manual(400),
        Some(limit),
        &[],
    );
    import(&f, "later", &more);
    let later = f.engine.container(DB, "later").unwrap();
    assert_eq!(
        ContainerScale::of(&now, 4.0).projected_ranges,
        later.partition_count
    );

    // Five times the throughput: raising it splits ranges until each serves 10,000 RU/s.
    container_with(&f, "busy", &["/id"], Throughput::Manual(6000), None, &items);
    let busy = f.engine.container(DB, "busy").unwrap();
    let projected = ContainerScale::of(&busy, 5.0).projected_ranges;
    let raised: ContainerInfo = f
        .engine
        .set_throughput(DB, "busy", Throughput::Manual(30_000))
        .unwrap();
    assert_eq!(
        (busy.partition_count, projected),
        (1, raised.partition_count)
    );
    assert_eq!(projected, 3);
}
