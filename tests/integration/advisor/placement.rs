//! Hierarchical and synthetic candidates are placed exactly as a real container with that
//! key places them: the same physical partitions (ids and EPK bounds, after storage
//! splits), each item in the same one, each range holding the same items and bytes.

use cosmoscope::advisor::candidates::{self, Candidate};
use cosmoscope::advisor::items::Items;
use cosmoscope::advisor::placement::{Limits, Placement};
use std::collections::HashMap;

use cosmoscope::engine::{Backend, PartitionKeyRange, Throughput};
use serde_json::{Map, Value};

use super::{container_with, import, skewed_items};
use crate::support::fixture::{self, DB};

/// Small enough that 1,500 items split the ranges several times.
const MAX_PARTITION_BYTES: u64 = 40_000;

#[test]
fn candidates_are_placed_as_a_container_with_that_key_places_them() {
    let f = fixture::open();
    let throughput = Throughput::Manual(12_000);
    container_with(
        &f,
        "source",
        &["/id"],
        throughput,
        Some(MAX_PARTITION_BYTES),
        &skewed_items(1500),
    );
    let key = f.engine.container(DB, "source").unwrap().partition_key;
    let items = Items::load(&f.engine, DB, "source", &key, &mut |_| {}).unwrap();
    let limits = Limits {
        throughput,
        max_partition_bytes: MAX_PARTITION_BYTES,
        max_logical_partition_bytes: 20 << 30,
    };
    let list = candidates::parse_list(
        "[/tenant,/userId],[/kind,/userId,/id],/tenant+/kind,/userId suffix 7 buckets,/n",
    )
    .unwrap();
    for (k, cand) in list.iter().enumerate() {
        let placed = Placement::compute(cand, &items, &limits).unwrap();
        assert!(
            placed.ranges.len() > 2,
            "{cand}: the data should split ranges"
        );
        let name = format!("c{k}");
        let paths = cand.container_paths();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        container_with(
            &f,
            &name,
            &paths,
            throughput,
            Some(MAX_PARTITION_BYTES),
            &[],
        );
        let stored: Vec<Value> = items.docs.iter().map(|d| prepared(cand, d)).collect();
        import(&f, &name, &stored);
        // The same ranges: EPK bounds (ids are labels the store hands out in the order it
        // happens to visit the ranges it splits).
        let real = f.engine.partition_key_ranges(DB, &name).unwrap();
        let bounds = |r: &PartitionKeyRange| (r.min_inclusive.clone(), r.max_exclusive.clone());
        let expected: Vec<_> = placed.range_table().iter().map(bounds).collect();
        assert_eq!(
            real.iter().map(bounds).collect::<Vec<_>>(),
            expected,
            "{cand}: the ranges"
        );
        let id_bounds: HashMap<String, (String, String)> =
            real.iter().map(|r| (r.id.clone(), bounds(r))).collect();
        let info = f.engine.container(DB, &name).unwrap();
        for (r, p) in info.partitions.unwrap().iter().zip(&placed.ranges) {
            assert_eq!(
                (r.statistics.item_count, r.statistics.size_bytes),
                (p.items, p.bytes),
                "{cand}: range {}",
                r.id
            );
        }
        for (i, doc) in stored.iter().enumerate() {
            let value = key_value(&cand.container_paths(), doc);
            let epk = f.engine.epk(DB, &name, &value).unwrap();
            let [owner] = epk.partitions.as_slice() else {
                panic!("{cand}: item {i} is owned by {:?}", epk.partitions)
            };
            let epk = cand.key_of(&placed.definition, &items.docs[i]).unwrap().epk;
            assert_eq!(
                id_bounds[owner],
                expected[placed.layout.owner(&epk).unwrap()],
                "{cand}: item {i}"
            );
        }
    }
}

/// The item as the candidate's container stores it (with its synthetic property).
fn prepared(cand: &Candidate, doc: &Map<String, Value>) -> Value {
    let mut doc = doc.clone();
    cand.prepare(&mut doc).unwrap();
    Value::Object(doc)
}

/// The item's key value in request form.
fn key_value(paths: &[String], doc: &Value) -> Value {
    let values: Vec<Value> = paths
        .iter()
        .map(|p| doc[p.trim_start_matches('/')].clone())
        .collect();
    match values.as_slice() {
        [one] => one.clone(),
        _ => Value::Array(values),
    }
}
