//! Index metrics on every query result: the indexes a query used and the ones it was
//! missing, single and composite, in the shape of the service's
//! `x-ms-cosmos-index-utilization` header (reference/cosmos.md §3.5).

use cosmoscope::engine::QueryResult;
use cosmoscope::engine::{Backend, QueryOptions};
use serde_json::json;

use crate::support::fixture::{DB, Fixture, open, pk_settings};

fn fixture() -> Fixture {
    let f = open();
    let mut s = pk_settings();
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/customer/?"}],
            "compositeIndexes": [[{"path": "/town"}, {"path": "/age", "order": "descending"}]]
        }))
        .unwrap(),
    );
    f.container("c", s);
    for i in 0..20 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": "p", "customer": format!("c{}", i % 4), "town": format!("t{}", i % 3), "age": i, "name": format!("n{i}")}),
        );
    }
    f
}

fn run(f: &Fixture, sql: &str) -> QueryResult {
    f.engine
        .query(DB, "c", sql, &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[test]
fn a_used_single_index_is_reported() {
    let f = fixture();
    let r = run(&f, "SELECT * FROM c WHERE c.age = 4");
    let m = &r.index_metrics;
    assert_eq!(m.utilized_single_indexes.len(), 1);
    assert_eq!(m.utilized_single_indexes[0].index_spec, "/age/?");
    assert_eq!(
        m.utilized_single_indexes[0].filter_expression,
        "(c.age = 4)"
    );
    assert!(m.potential_single_indexes.is_empty());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["indexMetrics"]["UtilizedSingleIndexes"][0],
        json!({
            "FilterExpression": "(c.age = 4)",
            "IndexSpec": "/age/?",
            "FilterPreciseSet": true,
            "IndexPreciseSet": true,
            "IndexImpactScore": "High"
        })
    );
    assert_eq!(v["indexMetrics"]["PotentialCompositeIndexes"], json!([]));
}

#[test]
fn a_missing_single_index_is_suggested() {
    let f = fixture();
    let r = run(&f, "SELECT * FROM c WHERE c.customer = 'c1' AND c.age > 3");
    let m = &r.index_metrics;
    let potential: Vec<&str> = m
        .potential_single_indexes
        .iter()
        .map(|i| i.index_spec.as_str())
        .collect();
    let utilized: Vec<&str> = m
        .utilized_single_indexes
        .iter()
        .map(|i| i.index_spec.as_str())
        .collect();
    assert_eq!(potential, ["/customer/?"]);
    assert_eq!(utilized, ["/age/?"]);
    assert_eq!(r.documents.len(), 4);
}

#[test]
fn composite_indexes_used_and_missing() {
    let f = fixture();
    let r = run(&f, "SELECT * FROM c ORDER BY c.town ASC, c.age DESC");
    assert_eq!(r.index_metrics.utilized_composite_indexes.len(), 1);
    assert_eq!(
        r.index_metrics.utilized_composite_indexes[0].index_specs,
        ["/town ASC", "/age DESC"]
    );
    // Equality filter plus ORDER BY: a composite (filter path, sort path) would serve it.
    let r = run(&f, "SELECT * FROM c WHERE c.name = 'n3' ORDER BY c.age");
    assert_eq!(r.index_metrics.potential_composite_indexes.len(), 1);
    assert_eq!(
        r.index_metrics.potential_composite_indexes[0].index_specs,
        ["/name ASC", "/age ASC"]
    );
    let r = run(
        &f,
        "SELECT * FROM c WHERE c.town = 't1' ORDER BY c.age DESC",
    );
    assert_eq!(
        r.index_metrics.utilized_composite_indexes[0].index_specs,
        ["/town ASC", "/age DESC"]
    );
    assert!(r.index_metrics.potential_composite_indexes.is_empty());
}

#[test]
fn unfiltered_queries_report_no_single_indexes() {
    let f = fixture();
    let r = run(&f, "SELECT VALUE COUNT(1) FROM c");
    assert!(r.index_metrics.utilized_single_indexes.is_empty());
    assert!(r.index_metrics.potential_single_indexes.is_empty());
    let r = run(&f, "SELECT * FROM c WHERE UPPER(c.name) = 'N1'");
    assert!(r.index_metrics.utilized_single_indexes.is_empty());
}
