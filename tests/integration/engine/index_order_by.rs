//! ORDER BY from the index: single paths and composite indexes walk the index in order
//! (TOP N reads about N entries), results equal a full sort, paging resumes exactly, and
//! documents whose ORDER BY path is undefined are still returned (order-by.md: "Queries
//! with ORDER BY return all items, including items where the property ... isn't defined").

use cosmoscope::engine::QueryResult;
use cosmoscope::engine::Throughput;
use cosmoscope::engine::{Backend, QueryOptions};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture, Rng, open, pk_settings};

fn run(f: &Fixture, c: &str, sql: &str, page: usize) -> (Vec<Value>, Vec<QueryResult>) {
    let mut opts = QueryOptions {
        max_items: Some(page),
        ..Default::default()
    };
    let mut docs = Vec::new();
    let mut pages = Vec::new();
    loop {
        let r = f
            .engine
            .query(DB, c, sql, &opts)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        docs.extend(r.documents.iter().map(|d| d.value().clone()));
        let next = r.continuation.clone();
        pages.push(r);
        match next {
            Some(t) => opts.continuation = Some(t),
            None => return (docs, pages),
        }
    }
}

fn numbers(docs: &[Value], field: &str) -> Vec<f64> {
    docs.iter().map(|d| d[field].as_f64().unwrap()).collect()
}

fn fixture() -> Fixture {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(40_000);
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "compositeIndexes": [[{"path": "/g"}, {"path": "/n", "order": "descending"}]]
        }))
        .unwrap(),
    );
    f.container("c", s);
    let mut rng = Rng(5);
    for i in 0..300 {
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": format!("k{}", rng.below(50)), "n": rng.below(1000), "g": rng.below(4)}),
        );
    }
    f
}

#[test]
fn top_n_desc_walks_the_index_and_equals_a_sort() {
    let f = fixture();
    let (all, _) = run(&f, "c", "SELECT c.n FROM c", 1000);
    let mut expected = numbers(&all, "n");
    expected.sort_by(|a, b| b.total_cmp(a));
    let (docs, pages) = run(&f, "c", "SELECT TOP 10 c.n FROM c ORDER BY c.n DESC", 100);
    assert_eq!(numbers(&docs, "n"), expected[..10]);
    let r = &pages[0];
    assert_eq!(r.access.kind, "index-order");
    assert_eq!(r.access.indexes, vec!["/n/?".to_string()]);
    // Charged like the service: each range streams at most 10 documents.
    assert_eq!(
        r.metrics.retrieved_document_count,
        10 * r.partitions.len() as u64
    );

    let (docs, pages) = run(&f, "c", "SELECT c.n FROM c ORDER BY c.n", 17);
    expected.reverse();
    assert_eq!(numbers(&docs, "n"), expected, "paged ascending order");
    assert!(pages.iter().all(|p| p.access.kind == "index-order"));
}

#[test]
fn single_partition_order_by_uses_the_index_within_the_partition() {
    let f = fixture();
    let (all, _) = run(&f, "c", "SELECT c.n FROM c WHERE c.pk = 'k7'", 1000);
    let mut expected = numbers(&all, "n");
    expected.sort_by(f64::total_cmp);
    let mut opts = QueryOptions {
        partition_key: Some(json!("k7")),
        ..Default::default()
    };
    opts.max_items = Some(1000);
    let r = f
        .engine
        .query(DB, "c", "SELECT c.n FROM c ORDER BY c.n", &opts)
        .unwrap();
    assert_eq!(r.access.kind, "index-order");
    let docs: Vec<Value> = r.documents.into_iter().map(Value::from).collect();
    assert_eq!(numbers(&docs, "n"), expected);
}

#[test]
fn composite_order_by_walks_the_composite_index_both_ways() {
    let f = fixture();
    let (all, _) = run(&f, "c", "SELECT c.g, c.n FROM c", 1000);
    let mut expected: Vec<(f64, f64)> = all
        .iter()
        .map(|d| (d["g"].as_f64().unwrap(), d["n"].as_f64().unwrap()))
        .collect();
    expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let pairs = |docs: &[Value]| -> Vec<(f64, f64)> {
        docs.iter()
            .map(|d| (d["g"].as_f64().unwrap(), d["n"].as_f64().unwrap()))
            .collect()
    };
    let (docs, pages) = run(
        &f,
        "c",
        "SELECT TOP 25 c.g, c.n FROM c ORDER BY c.g, c.n DESC",
        100,
    );
    assert_eq!(pairs(&docs), expected[..25]);
    assert_eq!(pages[0].access.kind, "index-order");
    assert_eq!(pages[0].access.indexes, vec!["/g ASC, /n DESC".to_string()]);

    let (docs, pages) = run(
        &f,
        "c",
        "SELECT c.g, c.n FROM c ORDER BY c.g DESC, c.n ASC",
        40,
    );
    expected.reverse();
    assert_eq!(pairs(&docs), expected);
    assert_eq!(pages[0].access.kind, "index-order");

    let err = f
        .engine
        .query(
            DB,
            "c",
            "SELECT * FROM c ORDER BY c.g, c.n",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
    assert!(
        err.message.contains("corresponding composite index"),
        "{}",
        err.message
    );
}

#[test]
fn documents_without_the_path_are_found_by_a_scan() {
    let f = fixture();
    f.create("c", &json!({"id": "none", "pk": "k1", "g": 1}));
    let (docs, pages) = run(&f, "c", "SELECT c.id, c.n FROM c ORDER BY c.n", 1000);
    assert_eq!(docs.len(), 301);
    assert_eq!(docs[0]["id"], "none", "undefined sorts first");
    assert_eq!(pages[0].access.kind, "scan");
    // Descending, it sorts last: a walk that finds all the results it needs among the
    // documents defining the path serves them; a page that reaches past them scans.
    let (all_desc, pages) = run(&f, "c", "SELECT c.id, c.n FROM c ORDER BY c.n DESC", 1000);
    assert_eq!(all_desc.len(), 301);
    assert_eq!(all_desc[300]["id"], "none", "undefined sorts last");
    assert_eq!(pages[0].access.kind, "scan");
    let (docs, pages) = run(
        &f,
        "c",
        "SELECT TOP 12 c.id, c.n FROM c ORDER BY c.n DESC",
        1000,
    );
    assert_eq!(docs, all_desc[..12]);
    assert_eq!(pages[0].access.kind, "index-order");
    let (docs, pages) = run(&f, "c", "SELECT c.id, c.n FROM c ORDER BY c.n DESC", 70);
    assert_eq!(docs, all_desc, "pages of 70");
    let kinds: Vec<&str> = pages.iter().map(|p| p.access.kind).collect();
    assert_eq!(
        kinds,
        [
            "index-order",
            "index-order",
            "index-order",
            "index-order",
            "scan"
        ]
    );
    // The composite index holds every document, undefined components included.
    let (docs, pages) = run(
        &f,
        "c",
        "SELECT c.id FROM c ORDER BY c.g DESC, c.n ASC",
        1000,
    );
    assert_eq!(docs.len(), 301);
    assert_eq!(pages[0].access.kind, "index-order");
    // Once the document defines the path, the walk serves again.
    f.upsert("c", &json!({"id": "none", "pk": "k1", "g": 1, "n": -1}));
    let (docs, pages) = run(&f, "c", "SELECT TOP 1 c.id FROM c ORDER BY c.n", 1000);
    assert_eq!(docs, vec![json!({"id": "none"})]);
    assert_eq!(pages[0].access.kind, "index-order");
}

#[test]
fn order_by_an_excluded_path_is_rejected() {
    let f = open();
    let mut s = pk_settings();
    s.indexing_policy = Some(
        serde_json::from_value(
            json!({"excludedPaths": [{"path": "/n/?"}], "includedPaths": [{"path": "/*"}]}),
        )
        .unwrap(),
    );
    f.container("x", s);
    f.create("x", &json!({"id": "1", "pk": "a", "n": 1}));
    let err = f
        .engine
        .query(
            DB,
            "x",
            "SELECT * FROM c ORDER BY c.n",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
}

/// `SELECT *` ordered by the index takes its order from the index entries without reading
/// the items' values (when every entry is exact); projections sort the values read from the
/// items. Both must give the same items in the same order, pages and charges included, for
/// ties, zeros, long strings cut in the index, mixed types and composite indexes.
#[test]
fn select_star_in_index_order_equals_the_sorted_projection() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(40_000);
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "compositeIndexes": [[{"path": "/g"}, {"path": "/v", "order": "descending"}]]
        }))
        .unwrap(),
    );
    f.container("mixed", s.clone());
    f.container("plain", s);
    let long = "x".repeat(600);
    let mut rng = Rng(11);
    for i in 0..240 {
        let v = match rng.below(12) {
            0 => json!(null),
            1 => json!(rng.below(2) == 0),
            2 => json!(0),
            3 => json!(-0.0),
            4 => json!(format!("{long}{}", rng.below(3))),
            5 => json!([rng.below(3)]),
            6 => json!({"a": rng.below(3)}),
            7 => json!(format!("s{}", rng.below(5))),
            _ => json!(rng.below(20) as f64 - 7.5),
        };
        let doc = json!({"id": format!("{i}"), "pk": format!("k{}", rng.below(40)), "v": v, "g": rng.below(3)});
        f.create("mixed", &doc);
        // Only exact values: the presorted path serves these whole.
        let plain = json!({"id": format!("{i}"), "pk": doc["pk"], "v": format!("s{}", rng.below(30)), "g": doc["g"]});
        f.create("plain", &plain);
    }
    let ids = |docs: &[Value]| -> Vec<String> {
        docs.iter()
            .map(|d| d["id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    for c in ["mixed", "plain"] {
        for (order, window) in [
            ("c.v", ""),
            ("c.v DESC", ""),
            ("c.v", "TOP 7"),
            ("c.v DESC", "TOP 50"),
            ("c.g, c.v DESC", "TOP 30"),
            ("c.g DESC, c.v", ""),
        ] {
            for tail in ["", " OFFSET 5 LIMIT 11"] {
                if !window.is_empty() && !tail.is_empty() {
                    continue;
                }
                let star = format!("SELECT {window} * FROM c ORDER BY {order}{tail}");
                let projected = format!("SELECT {window} c.id, c.v FROM c ORDER BY {order}{tail}");
                // A filter the index cannot answer: the rows are read, then sorted, with
                // ties broken by the same rule (range, then document order in the scan's
                // direction) through a different path.
                let sorted = format!(
                    "SELECT {window} c.id, c.v FROM c WHERE LOWER(c.id) != '#' ORDER BY {order}{tail}"
                );
                for page in [6, 1000] {
                    let (a, pa) = run(&f, c, &star, page);
                    let (b, pb) = run(&f, c, &projected, page);
                    assert_eq!(ids(&a), ids(&b), "{c}: {star} (pages of {page})");
                    {
                        let (sorted_docs, sorted_pages) = run(&f, c, &sorted, page);
                        assert_ne!(sorted_pages[0].access.kind, "index-order", "{sorted}");
                        assert_eq!(
                            ids(&b),
                            ids(&sorted_docs),
                            "{c}: {sorted} (pages of {page})"
                        );
                        assert_eq!(
                            b.iter().map(|d| d["v"].clone()).collect::<Vec<_>>(),
                            sorted_docs
                                .iter()
                                .map(|d| d["v"].clone())
                                .collect::<Vec<_>>()
                        );
                    }
                    assert!(pa.iter().all(|p| p.access.kind == "index-order"), "{star}");
                    assert!(
                        pb.iter().all(|p| p.access.kind == "index-order"),
                        "{projected}"
                    );
                    assert_eq!(pa.len(), pb.len(), "{star}");
                    for (x, y) in pa.iter().zip(&pb) {
                        assert_eq!(
                            x.metrics.retrieved_document_count,
                            y.metrics.retrieved_document_count
                        );
                        assert_eq!(
                            x.metrics.output_document_count,
                            y.metrics.output_document_count
                        );
                        let lp = |r: &QueryResult| -> Vec<Vec<Value>> {
                            r.partitions
                                .iter()
                                .map(|p| p.logical_partitions.clone())
                                .collect()
                        };
                        assert_eq!(lp(x), lp(y), "{star}");
                    }
                    // The documents are the stored items.
                    for d in &a {
                        assert!(d["_etag"].is_string() && d["_ts"].is_number(), "{d}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_bounded_order_by_credits_each_range_with_its_results_on_every_path() {
    // The service streams each range in index order and merges: a range's output, index
    // hits and logical partitions are those of its documents among the first k, whether the
    // engine walked the index or read every match and sorted.
    let f = fixture();
    let pk_of: std::collections::HashMap<String, Value> =
        run(&f, "c", "SELECT c.id, c.pk FROM c", 1000)
            .0
            .into_iter()
            .map(|d| (d["id"].as_str().unwrap().to_string(), d["pk"].clone()))
            .collect();
    let per_range = |r: &QueryResult| -> Vec<(u64, u64, Vec<Value>)> {
        r.partitions
            .iter()
            .map(|p| {
                (
                    p.metrics.output_document_count,
                    p.metrics.index_hit_document_count,
                    p.logical_partitions.clone(),
                )
            })
            .collect()
    };
    for (window, order, tail, k) in [
        ("TOP 7", "c.n DESC", "", 7),
        ("TOP 30", "c.g, c.n DESC", "", 30),
        ("", "c.n", " OFFSET 5 LIMIT 11", 16),
    ] {
        let walked = format!("SELECT {window} c.id FROM c ORDER BY {order}{tail}");
        let sorted =
            format!("SELECT {window} c.id FROM c WHERE LOWER(c.id) != '#' ORDER BY {order}{tail}");
        let (_, walked_pages) = run(&f, "c", &walked, 1000);
        let (_, sorted_pages) = run(&f, "c", &sorted, 1000);
        let (w, s) = (&walked_pages[0], &sorted_pages[0]);
        assert_eq!(w.access.kind, "index-order", "{walked}");
        assert_ne!(s.access.kind, "index-order", "{sorted}");
        assert_eq!(per_range(w), per_range(s), "{walked} / {sorted}");
        // The first k in result order (the OFFSET's skipped rows included): their count
        // and logical partitions.
        let (first_k, _) = run(
            &f,
            "c",
            &format!("SELECT TOP {k} c.id FROM c ORDER BY {order}"),
            1000,
        );
        let output: u64 = s
            .partitions
            .iter()
            .map(|p| p.metrics.output_document_count)
            .sum();
        assert_eq!(output, k as u64, "{sorted}");
        let mut expected: Vec<String> = first_k
            .iter()
            .map(|d| pk_of[d["id"].as_str().unwrap()].to_string())
            .collect();
        expected.sort();
        expected.dedup();
        let mut logical: Vec<String> = s
            .partitions
            .iter()
            .flat_map(|p| p.logical_partitions.iter().map(Value::to_string))
            .collect();
        logical.sort();
        assert_eq!(logical, expected, "{sorted}");
    }
}

#[test]
fn an_equality_filter_with_order_by_walks_the_composite_index_under_its_value() {
    let f = fixture();
    let (all, _) = run(&f, "c", "SELECT c.id, c.g, c.n FROM c", 1000);
    let mut expected: Vec<f64> = all
        .iter()
        .filter(|d| d["g"] == json!(2))
        .map(|d| d["n"].as_f64().unwrap())
        .collect();
    expected.sort_by(|a, b| b.total_cmp(a));
    assert!(expected.len() > 40, "enough matches to page");

    // The composite (/g ASC, /n DESC) with g fixed yields n descending, and ascending when
    // walked backwards; pages resume exactly.
    for (sql, descending) in [
        (
            "SELECT c.id, c.n FROM c WHERE c.g = 2 ORDER BY c.n DESC",
            true,
        ),
        (
            "SELECT c.id, c.n FROM c WHERE 2 = c.g ORDER BY c.n ASC",
            false,
        ),
        ("SELECT * FROM c WHERE c.g = 2 ORDER BY c.n DESC", true),
    ] {
        let (docs, pages) = run(&f, "c", sql, 7);
        let mut want = expected.clone();
        if !descending {
            want.reverse();
        }
        assert_eq!(numbers(&docs, "n"), want, "{sql}");
        assert!(docs.iter().all(|d| d.get("id").is_some()));
        assert!(
            pages.iter().all(|p| p.access.kind == "index-order"),
            "{sql}"
        );
        assert_eq!(pages[0].access.indexes, vec!["/g ASC, /n DESC".to_string()]);
    }

    // TOP k: each range is charged for at most k of its matching documents, as a lookup of
    // the filter would count them.
    let (_, matches) = run(&f, "c", "SELECT c.id FROM c WHERE c.g = 2", 1000);
    let (docs, pages) = run(
        &f,
        "c",
        "SELECT TOP 5 c.n FROM c WHERE c.g = 2 ORDER BY c.n DESC",
        100,
    );
    assert_eq!(numbers(&docs, "n"), expected[..5]);
    assert_eq!(pages[0].access.kind, "index-order");
    for p in &pages[0].partitions {
        let in_range = matches[0]
            .partitions
            .iter()
            .find(|m| m.id == p.id)
            .map_or(0, |m| m.metrics.output_document_count);
        assert_eq!(
            p.metrics.retrieved_document_count,
            in_range.min(5),
            "range {}",
            p.id
        );
    }

    // A filter the composite does not fix is answered as before: found, then sorted.
    let (docs, pages) = run(
        &f,
        "c",
        "SELECT c.n FROM c WHERE c.g = 2 AND c.n > 500 ORDER BY c.n DESC",
        1000,
    );
    let above: Vec<f64> = expected.iter().copied().filter(|n| *n > 500.0).collect();
    assert_eq!(numbers(&docs, "n"), above);
    assert_ne!(pages[0].access.kind, "index-order");
}

#[test]
fn a_tie_at_the_kth_place_goes_to_the_first_range_then_the_latest_documents() {
    // 60 items share the top value (as a bulk load shares one `_ts`). As on the service, ties
    // go to the range with the lowest EPKs first, then within a range in `_rid` (creation)
    // order in the index scan's direction: descending here, so the latest created first.
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(40_000);
    f.container("ties", s);
    let mut rng = Rng(11);
    // (range, EPK, creation order, id) of each item with the top value.
    let mut top = Vec::new();
    for i in 0..120 {
        let t = if i % 2 == 0 { 9 } else { rng.below(9) };
        let pk = format!("k{}", rng.below(40));
        f.create("ties", &json!({"id": format!("{i}"), "pk": pk, "t": t}));
        if t == 9 {
            let info = f.engine.epk(DB, "ties", &json!(pk)).unwrap();
            top.push((info.partitions[0].clone(), info.epk, i, format!("{i}")));
        }
    }
    // Ranges hold contiguous EPKs: the range of the lowest EPK comes first.
    let lowest: std::collections::HashMap<String, String> =
        top.iter().fold(Default::default(), |mut m, t| {
            let e = m.entry(t.0.clone()).or_insert_with(|| t.1.clone());
            if t.1 < *e {
                *e = t.1.clone();
            }
            m
        });
    top.sort_by(|a, b| lowest[&a.0].cmp(&lowest[&b.0]).then(b.2.cmp(&a.2)));
    let expected: Vec<Value> = top.iter().take(3).map(|t| json!(t.3)).collect();
    let sorted = "SELECT TOP 3 c.id, c.t FROM c WHERE LOWER(c.id) != '#' ORDER BY c.t DESC";
    for sql in [
        sorted,
        "SELECT TOP 3 * FROM c ORDER BY c.t DESC",
        "SELECT TOP 3 c.id, c.t FROM c ORDER BY c.t DESC",
    ] {
        let (docs, pages) = run(&f, "ties", sql, 100);
        let ids: Vec<Value> = docs.iter().map(|d| d["id"].clone()).collect();
        assert_eq!(ids, expected, "{sql}");
        let r = &pages[0];
        assert!(r.partitions.len() > 1, "the items span several ranges");
        if sql != sorted {
            assert_eq!(r.access.kind, "index-order", "{sql}");
        }
        // Whichever path served it: the ranges' output is the results, not every match.
        let output: u64 = r
            .partitions
            .iter()
            .map(|p| p.metrics.output_document_count)
            .sum();
        assert_eq!(output, 3, "{sql}");
        let logical: usize = r
            .partitions
            .iter()
            .map(|p| p.logical_partitions.len())
            .sum();
        assert!(logical <= 3, "{sql}: the results' logical partitions");
    }
    // Pages over the tie resume exactly: range and document number are a total order.
    let (paged, _) = run(&f, "ties", "SELECT c.id FROM c ORDER BY c.t DESC", 7);
    let (whole, _) = run(
        &f,
        "ties",
        "SELECT c.id FROM c WHERE LOWER(c.id) != '#' ORDER BY c.t DESC",
        1000,
    );
    assert_eq!(paged, whole);
}

/// The index keeps every element of an array under one path, so ordering by one position
/// (`c.lines[0].price`) cannot be read from it: an item whose later element is the largest
/// must not come first, and paging still returns every item once, in order.
#[test]
fn order_by_an_array_position_sorts_by_that_position() {
    let f = open();
    let mut s = pk_settings();
    s.throughput = Throughput::Manual(40_000);
    f.container("c", s);
    let mut rng = Rng(9);
    for i in 0..200 {
        let first = rng.below(1000);
        // The other elements are larger than any first one.
        let lines: Vec<Value> = std::iter::once(first)
            .chain((0..rng.below(3)).map(|_| 1000 + rng.below(1000)))
            .map(|price| json!({"price": price}))
            .collect();
        f.create(
            "c",
            &json!({"id": format!("{i}"), "pk": format!("k{}", rng.below(40)), "lines": lines}),
        );
    }
    for (dir, page) in [("DESC", 7), ("ASC", 50)] {
        let sql =
            format!("SELECT c.id, c.lines[0].price AS p FROM c ORDER BY c.lines[0].price {dir}");
        let (docs, _) = run(&f, "c", &sql, page);
        let got = numbers(&docs, "p");
        let mut want = got.clone();
        want.sort_by(f64::total_cmp);
        if dir == "DESC" {
            want.reverse();
        }
        assert_eq!(docs.len(), 200, "{sql}");
        assert_eq!(got, want, "{sql}");
        let (top, _) = run(
            &f,
            "c",
            &format!(
                "SELECT TOP 5 c.id, c.lines[0].price AS p FROM c ORDER BY c.lines[0].price {dir}"
            ),
            100,
        );
        assert_eq!(numbers(&top, "p"), want[..5].to_vec(), "TOP 5 {dir}");
    }
}
