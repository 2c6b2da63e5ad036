//! Index metrics on the query results that ask for them: the indexes a query used and the
//! ones it was missing, single and composite, in the shape of the service's
//! `x-ms-cosmos-index-utilization` header (reference/cosmos.md §3.5).

use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::engine::{IndexMetrics, QueryResult};
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
    let asking = QueryOptions {
        index_metrics: true,
        ..QueryOptions::default()
    };
    f.engine
        .query(DB, "c", sql, &asking)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn metrics(r: &QueryResult) -> &IndexMetrics {
    r.index_metrics
        .as_ref()
        .expect("index metrics were asked for")
}

#[test]
fn index_metrics_come_only_when_asked_for() {
    let f = fixture();
    let sql = "SELECT * FROM c WHERE c.age >= 4 ORDER BY c.age";
    let unasked = |continuation: Option<String>| {
        let opts = QueryOptions {
            max_items: Some(5),
            continuation,
            ..QueryOptions::default()
        };
        f.engine.query(DB, "c", sql, &opts).unwrap()
    };
    let first = unasked(None);
    assert_eq!(first.index_metrics, None);
    assert_eq!(
        serde_json::to_value(&first).unwrap()["indexMetrics"],
        json!(null)
    );
    // A later page that asks gets them, though the first page (whose result it continues)
    // did not work them out.
    let asking = QueryOptions {
        max_items: Some(5),
        continuation: first.continuation.clone(),
        index_metrics: true,
        ..QueryOptions::default()
    };
    let second = f.engine.query(DB, "c", sql, &asking).unwrap();
    assert_eq!(second.documents[0].value()["age"], json!(9));
    let m = second.index_metrics.as_ref().expect("asked for");
    assert_eq!(m.utilized_single_indexes[0].index_spec, "/age/?");
    // Asking changes nothing else: the same page, charge and continuation.
    let again = unasked(first.continuation.clone());
    assert_eq!(again.documents.len(), second.documents.len());
    assert_eq!(again.request_charge, second.request_charge);
    assert_eq!(again.continuation, second.continuation);
    assert_eq!(again.index_metrics, None);
}

#[test]
fn a_used_single_index_is_reported() {
    let f = fixture();
    let r = run(&f, "SELECT * FROM c WHERE c.age = 4");
    let m = metrics(&r);
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
    let m = metrics(&r);
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
    assert_eq!(metrics(&r).utilized_composite_indexes.len(), 1);
    assert_eq!(
        metrics(&r).utilized_composite_indexes[0].index_specs,
        ["/town ASC", "/age DESC"]
    );
    // Equality filter plus ORDER BY: a composite (filter path, sort path) would serve it.
    let r = run(&f, "SELECT * FROM c WHERE c.name = 'n3' ORDER BY c.age");
    assert_eq!(metrics(&r).potential_composite_indexes.len(), 1);
    assert_eq!(
        metrics(&r).potential_composite_indexes[0].index_specs,
        ["/name ASC", "/age ASC"]
    );
    let r = run(
        &f,
        "SELECT * FROM c WHERE c.town = 't1' ORDER BY c.age DESC",
    );
    assert_eq!(
        metrics(&r).utilized_composite_indexes[0].index_specs,
        ["/town ASC", "/age DESC"]
    );
    assert!(metrics(&r).potential_composite_indexes.is_empty());
}

#[test]
fn unfiltered_queries_report_no_single_indexes() {
    let f = fixture();
    let r = run(&f, "SELECT VALUE COUNT(1) FROM c");
    assert!(metrics(&r).utilized_single_indexes.is_empty());
    assert!(metrics(&r).potential_single_indexes.is_empty());
    let r = run(&f, "SELECT * FROM c WHERE UPPER(c.name) = 'N1'");
    assert!(metrics(&r).utilized_single_indexes.is_empty());
}
