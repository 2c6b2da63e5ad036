//! Index-served filters return exactly what a scan returns: random documents, random
//! sargable filters (equality, ranges, IN, STARTSWITH, IS_DEFINED, ARRAY_CONTAINS, JOINs,
//! conjunctions, ORs), run on a container with the default index and on one with indexing
//! off, page by page. Also: the planner reports its choice, and excluding the path a filter
//! uses turns the index lookup into a scan, which the charge shows.

use std::collections::HashMap;

use cosmoscope::engine::IndexingPolicy;
use cosmoscope::engine::QueryResult;
use cosmoscope::engine::Throughput;
use cosmoscope::engine::{Backend, QueryOptions};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture, Rng, open, pk_settings};

const WORDS: [&str; 7] = ["", "a", "ab", "abc", "b", "B", "x\u{0}y"];

fn scalar(rng: &mut Rng) -> Value {
    match rng.below(9) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.below(7) as i64 - 3),
        3 => json!((rng.below(13) as f64 - 6.0) / 4.0),
        4 => json!(-0.0),
        5 => json!(format!(
            "{}{}",
            "l".repeat(520),
            WORDS[rng.below(7) as usize]
        )),
        _ => json!(WORDS[rng.below(7) as usize]),
    }
}

fn doc(rng: &mut Rng, i: u64) -> Value {
    let mut d = json!({"id": format!("d{i}"), "pk": format!("k{}", rng.below(5))});
    let o = d.as_object_mut().unwrap();
    for name in ["a", "b"] {
        match rng.below(6) {
            0 => {}
            1 => {
                o.insert(name.into(), json!([scalar(rng), scalar(rng)]));
            }
            2 => {
                o.insert(name.into(), json!({"v": scalar(rng)}));
            }
            _ => {
                o.insert(name.into(), scalar(rng));
            }
        }
    }
    if rng.below(3) > 0 {
        let tags: Vec<Value> = (0..rng.below(4))
            .map(|_| json!({"name": scalar(rng), "n": rng.below(4)}))
            .collect();
        o.insert("tags".into(), Value::Array(tags));
    }
    if rng.below(2) == 0 {
        let list: Vec<Value> = (0..rng.below(4)).map(|_| scalar(rng)).collect();
        o.insert("list".into(), Value::Array(list));
    }
    d
}

/// A random constant as query text.
fn constant(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => "@p".into(),
        1 => "[1, 2]".into(),
        _ => scalar(rng).to_string(),
    }
}

fn predicate(rng: &mut Rng) -> String {
    let path = [
        "c.a",
        "c.b",
        "c.a.v",
        "c.tags[0].name",
        "c.list[1]",
        "c[\"b\"]",
    ][rng.below(6) as usize];
    let ops = ["=", "<", "<=", ">", ">=", "!="];
    match rng.below(10) {
        0 => format!(
            "{path} IN ({}, {}, {})",
            constant(rng),
            constant(rng),
            constant(rng)
        ),
        1 => format!("{path} BETWEEN {} AND {}", constant(rng), constant(rng)),
        2 => format!(
            "STARTSWITH({path}, \"{}\"{})",
            WORDS[rng.below(6) as usize],
            if rng.below(2) == 0 { ", false" } else { "" }
        ),
        3 => format!("IS_DEFINED({path})"),
        4 => format!("ARRAY_CONTAINS(c.list, {})", constant(rng)),
        5 => format!("NOT ({path} = {})", constant(rng)),
        _ => {
            let op = ops[rng.below(6) as usize];
            if rng.below(4) == 0 {
                format!("{} {op} {path}", constant(rng))
            } else {
                format!("{path} {op} {}", constant(rng))
            }
        }
    }
}

fn filter(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!("{} AND {}", predicate(rng), predicate(rng)),
        1 => format!("({} OR {})", predicate(rng), predicate(rng)),
        2 => format!("{} AND UPPER(c.pk) = \"K1\"", predicate(rng)),
        _ => predicate(rng),
    }
}

fn query(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!(
            "SELECT c.id, t.name FROM c JOIN t IN c.tags WHERE t.name {} {} AND {}",
            ["=", ">=", "<"][rng.below(3) as usize],
            constant(rng),
            predicate(rng)
        ),
        1 => format!("SELECT VALUE COUNT(1) FROM c WHERE {}", filter(rng)),
        2 => format!("SELECT TOP 3 c.id FROM c WHERE {}", filter(rng)),
        _ => format!("SELECT * FROM c WHERE {}", filter(rng)),
    }
}

/// Every result of `sql`, following continuations with `page` items per page.
fn all(f: &Fixture, c: &str, sql: &str, p: &Value, page: usize) -> (Vec<Value>, f64) {
    let mut opts = QueryOptions {
        params: HashMap::from([("p".to_string(), p.clone())]),
        max_items: Some(page),
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut charge = 0.0;
    loop {
        let r = f
            .engine
            .query(DB, c, sql, &opts)
            .unwrap_or_else(|e| panic!("{sql} on {c}: {e}"));
        charge += r.request_charge;
        out.extend(r.documents.into_iter().map(Value::from));
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return (out, charge),
        }
    }
}

/// A result without the system properties (they differ between containers).
fn plain(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let kept: serde_json::Map<String, Value> = o
                .iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Value::Object(kept).to_string()
        }
        other => other.to_string(),
    }
}

fn sorted(v: Vec<Value>) -> Vec<String> {
    let mut s: Vec<String> = v.iter().map(plain).collect();
    s.sort();
    s
}

#[test]
fn index_served_filters_equal_scans() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(30_000);
    f.container("indexed", s.clone());
    s.indexing_policy = Some(IndexingPolicy::none());
    f.container("scanned", s);
    let mut rng = Rng(42);
    for i in 0..400 {
        let d = doc(&mut rng, i);
        f.create("indexed", &d);
        f.create("scanned", &d);
    }
    let mut served = 0;
    for round in 0..400 {
        let sql = query(&mut rng);
        let p = scalar(&mut rng);
        let page = [1000, 7, 1][round % 3];
        let (a, _) = all(&f, "indexed", &sql, &p, page);
        let (b, _) = all(&f, "scanned", &sql, &p, 1000);
        if sql.contains("TOP") {
            // TOP without ORDER BY takes any N matches: both take the first N in key order.
            let (a, b): (Vec<String>, Vec<String>) =
                (a.iter().map(plain).collect(), b.iter().map(plain).collect());
            assert!(
                a == b,
                "{sql} with @p = {p}: {} vs {} results",
                a.len(),
                b.len()
            );
        } else {
            let (a, b) = (sorted(a), sorted(b));
            assert!(
                a == b,
                "{sql} with @p = {p}: {} vs {} results",
                a.len(),
                b.len()
            );
        }
        let r = f
            .engine
            .query(
                DB,
                "indexed",
                &sql,
                &QueryOptions {
                    params: HashMap::from([("p".to_string(), p.clone())]),
                    ..Default::default()
                },
            )
            .unwrap();
        if r.access.kind == "index-lookup" {
            served += 1;
        }
    }
    assert!(served > 150, "the index served {served} of 400 queries");
}

fn run(f: &Fixture, c: &str, sql: &str) -> QueryResult {
    f.engine
        .query(DB, c, sql, &QueryOptions::default())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[test]
fn the_planner_reports_its_choice() {
    let f = open();
    f.pk_container("c");
    for i in 0..50 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": "p", "n": i, "s": format!("s{}", i % 5)}),
        );
    }
    let r = run(&f, "c", "SELECT * FROM c WHERE c.n = 7");
    assert_eq!(r.access.kind, "index-lookup");
    assert_eq!(r.access.indexes, vec!["/n/?".to_string()]);
    assert_eq!(r.documents.len(), 1);
    assert_eq!(r.metrics.retrieved_document_count, 1);

    let r = run(
        &f,
        "c",
        "SELECT * FROM c WHERE c.n >= 10 AND STARTSWITH(c.s, 's1')",
    );
    assert_eq!(r.access.kind, "index-lookup");
    assert_eq!(r.documents.len(), 8);

    let r = run(&f, "c", "SELECT * FROM c WHERE UPPER(c.s) = 'S1'");
    assert_eq!(r.access.kind, "scan");
    assert_eq!(r.metrics.retrieved_document_count, 50);

    // Partly served: the index narrows to c.n < 20 (20 documents), UPPER runs on those.
    let r = run(
        &f,
        "c",
        "SELECT * FROM c WHERE c.n < 20 AND UPPER(c.s) = 'S1'",
    );
    assert_eq!(r.access.kind, "index-lookup");
    assert_eq!(r.documents.len(), 4);
    assert_eq!(r.metrics.retrieved_document_count, 20);
    assert_eq!(r.metrics.index_hit_document_count, 4);

    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["access"]["kind"], "index-lookup");
}

#[test]
fn excluding_a_filtered_path_turns_the_lookup_into_a_scan() {
    let f = open();
    f.pk_container("on");
    let mut s = pk_settings();
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/customer/?"}]
        }))
        .unwrap(),
    );
    f.container("off", s);
    for i in 0..200 {
        let d = json!({"id": format!("{i}"), "pk": "p", "customer": format!("c{}", i % 50), "pad": "x".repeat(900)});
        f.create("on", &d);
        f.create("off", &d);
    }
    let sql = "SELECT * FROM c WHERE c.customer = 'c7'";
    let on = run(&f, "on", sql);
    let off = run(&f, "off", sql);
    let values = |docs: &[cosmoscope::engine::Document]| -> Vec<Value> {
        docs.iter().map(|d| d.value().clone()).collect()
    };
    assert!(sorted(values(&on.documents)) == sorted(values(&off.documents)));
    assert_eq!(on.documents.len(), 4);
    assert_eq!(on.access.kind, "index-lookup");
    assert_eq!(off.access.kind, "scan");
    assert_eq!(on.metrics.retrieved_document_count, 4);
    assert_eq!(off.metrics.retrieved_document_count, 200);
    assert!(
        off.request_charge > on.request_charge + 1.0,
        "scan {} vs lookup {}",
        off.request_charge,
        on.request_charge
    );
}

#[test]
fn paging_resumes_exactly_across_ranges_and_a_split() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(20_000);
    f.container("c", s);
    for i in 0..300 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": format!("k{}", i % 37), "n": i % 10}),
        );
    }
    let sql = "SELECT c.id FROM c WHERE c.n IN (3, 4)";
    let mut opts = QueryOptions {
        max_items: Some(7),
        ..Default::default()
    };
    let mut got = Vec::new();
    let mut pages = 0;
    loop {
        let r = f.engine.query(DB, "c", sql, &opts).unwrap();
        assert_eq!(r.access.kind, "index-lookup");
        got.extend(r.documents);
        pages += 1;
        if pages == 3 {
            // Split the ranges between pages: the continuation still resumes exactly.
            f.engine
                .set_throughput(DB, "c", Throughput::Manual(60_000))
                .unwrap();
        }
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => break,
        }
    }
    let ids: Vec<String> = got.iter().map(|d| d["id"].to_string()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "no duplicates");
    assert_eq!(ids.len(), 60);
}
