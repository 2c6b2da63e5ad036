//! Vector and full-text search through the query engine: VectorDistance as a value and as an
//! ORDER BY (most similar first without a direction), FullTextContains/All/Any filters,
//! `ORDER BY RANK` with FullTextScore (BM25 over the whole container's statistics) and RRF,
//! the rules on where scores may appear, paging and charges. Every query runs on a one-range
//! and a four-range container, which must agree (vectordistance.md, fulltextcontains*.md,
//! fulltextscore.md, rrf.md, order-by-rank.md).

use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::engine::{FullTextPolicy, VectorEmbeddingPolicy};
use serde_json::{Value, json};

use crate::support::query_db::{DB, Db, empty, value_of};

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["id"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Runs `sql` on both containers; both must give these ids in this order.
fn assert_ids(db: &Db, sql: &str, expected: &[&str]) {
    for rows in db.each(sql, &[]) {
        assert_eq!(ids(&rows), expected, "{sql}");
    }
}

#[test]
fn vector_distance_values() {
    let db = empty();
    let close = |expr: &str, expected: f64| {
        let v = value_of(&db, expr).unwrap_or_else(|| panic!("{expr} is undefined"));
        let got = v.as_f64().expect("a number");
        assert!(
            (got - expected).abs() < 1e-6,
            "{expr} = {got}, not {expected}"
        );
    };
    close("VectorDistance([1, 2, 3], [2, 4, 6])", 1.0);
    close("VectorDistance([1, 0], [0, 1])", 0.0);
    close(
        "VectorDistance([1, 0], [-1, 0], false, {'distanceFunction': 'cosine'})",
        -1.0,
    );
    close(
        "VectorDistance([0, 0], [3, 4], false, {'distanceFunction': 'euclidean'})",
        5.0,
    );
    close(
        "VectorDistance([1, 2], [3, 4], true, {'distanceFunction': 'dotproduct'})",
        11.0,
    );
    // Not vectors, or vectors that can't be compared: undefined (no result).
    for expr in [
        "VectorDistance([1, 2], [1, 2, 3])",
        "VectorDistance('a', [1])",
        "VectorDistance([1, 'x'], [1, 2])",
        "VectorDistance([1, 2], [3, 4], false, {'distanceFunction': 'manhattan'})",
    ] {
        assert_eq!(value_of(&db, expr), None, "{expr}");
    }
}

fn vectors() -> Vec<Value> {
    vec![
        json!({"id": "east", "v": [1.0, 0.0]}),
        json!({"id": "north-east", "v": [0.7, 0.7]}),
        json!({"id": "north", "v": [0.0, 1.0]}),
        json!({"id": "far-east", "v": [5.0, 0.1]}),
        json!({"id": "west", "v": [-1.0, 0.0]}),
        json!({"id": "no-vector"}),
    ]
}

#[test]
fn order_by_vector_distance_puts_the_most_similar_first() {
    let db = Db::new(&vectors());
    // Cosine (the default): similarity descending; the item without a vector comes last.
    assert_ids(
        &db,
        "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])",
        &[
            "east",
            "far-east",
            "north-east",
            "north",
            "west",
            "no-vector",
        ],
    );
    // Euclidean: distance ascending.
    assert_ids(
        &db,
        "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 0], false, {'distanceFunction': 'euclidean'})",
        &[
            "east",
            "north-east",
            "north",
            "west",
            "far-east",
            "no-vector",
        ],
    );
    // TOP k of the same order, with the score projected.
    let rows = db.rows(
        "SELECT TOP 2 c.id, VectorDistance(c.v, [1, 0]) AS score FROM c \
         ORDER BY VectorDistance(c.v, [1, 0])",
    );
    assert_eq!(ids(&rows), ["east", "far-east"]);
    assert!((rows[0]["score"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // ORDER BY RANK VectorDistance is the same order.
    assert_ids(
        &db,
        "SELECT TOP 3 c.id FROM c ORDER BY RANK VectorDistance(c.v, [1, 0])",
        &["east", "far-east", "north-east"],
    );
    // With an explicit direction, the score sorts like any value.
    assert_ids(
        &db,
        "SELECT TOP 2 c.id FROM c WHERE IS_DEFINED(c.v) ORDER BY VectorDistance(c.v, [1, 0]) ASC",
        &["west", "north"],
    );
}

fn texts() -> Vec<Value> {
    vec![
        json!({"id": "a", "text": "Red bicycles and a red skateboard", "v": [1.0, 0.0]}),
        json!({"id": "b", "text": "The mountain bicycle climbs the mountain", "v": [0.0, 1.0]}),
        json!({"id": "c", "text": "A blue skateboard", "v": [0.6, 0.8]}),
        json!({"id": "d", "text": "Running shoes for the road", "v": [-1.0, -0.1]}),
        json!({"id": "e", "title": "no text here"}),
    ]
}

#[test]
fn full_text_contains_matches_analyzed_terms() {
    let db = Db::new(&texts());
    // Case-insensitive, and "bicycle" matches "bicycles" through the stemmer.
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'bicycle') ORDER BY c.id",
        &["a", "b"],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContainsAll(c.text, 'red', 'bicycle') ORDER BY c.id",
        &["a"],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'skateboard', 'shoe') ORDER BY c.id",
        &["a", "c", "d"],
    );
    // full-text-search.md's combination of the two.
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'red') \
         AND FullTextContainsAny(c.text, 'bicycle', 'skateboard') ORDER BY c.id",
        &["a"],
    );
    // An item without the property does not match.
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE NOT FullTextContains(c.text, 'bicycle') ORDER BY c.id",
        &["c", "d"],
    );
    // A multi-word string is a phrase (full-text-search.md: "the phrase *red bicycle*"),
    // while FullTextContainsAll takes its keywords "not necessarily together".
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'red bicycle') ORDER BY c.id",
        &["a"],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'red mountain') ORDER BY c.id",
        &[],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'skateboard red') ORDER BY c.id",
        &[],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContainsAll(c.text, 'skateboard', 'red') ORDER BY c.id",
        &["a"],
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContainsAny(c.text, 'blue bicycle', 'mountain bicycle') \
         ORDER BY c.id",
        &["b"],
    );
}

#[test]
fn order_by_rank_full_text_score_puts_the_most_relevant_first() {
    let db = Db::new(&texts());
    // "mountain" twice in b; "bicycle" in a and b.
    assert_ids(
        &db,
        "SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, ['bicycle', 'mountain'])",
        &["b", "a"],
    );
    // The terms as separate arguments (fulltextscore.md shows both forms).
    assert_ids(
        &db,
        "SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'bicycle', 'mountain')",
        &["b", "a"],
    );
    // Filtered by FullTextContains; items scoring nothing come after those that score.
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'skateboard') \
         ORDER BY RANK FullTextScore(c.text, ['blue'])",
        &["c", "a"],
    );
}

#[test]
fn rrf_fuses_the_ranks_of_its_scores() {
    let db = Db::new(&texts());
    // Text ranks for "skateboard red": a 1, c 2. Vector ranks for [0, 1]: b 1, c 2, a 3, d 4.
    // Fused with k = 60: c = 1/62 + 1/62, a = 1/61 + 1/63, b = 1/61, d = 1/64.
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE IS_DEFINED(c.text) \
         ORDER BY RANK RRF(FullTextScore(c.text, ['skateboard', 'red']), VectorDistance(c.v, [0, 1]))",
        &["a", "c", "b", "d"],
    );
    // Weights scale each score's share: with the vector weighed 40 times the text, b (first
    // by vector, unmatched by text) passes a (first by text, third by vector).
    assert_ids(
        &db,
        "SELECT c.id FROM c WHERE IS_DEFINED(c.text) \
         ORDER BY RANK RRF(FullTextScore(c.text, ['skateboard', 'red']), VectorDistance(c.v, [0, 1]), [1, 40])",
        &["c", "b", "a", "d"],
    );
}

#[test]
fn scores_are_only_for_ranking() {
    let db = Db::new(&texts());
    for (sql, needle) in [
        (
            "SELECT FullTextScore(c.text, ['red']) AS s FROM c",
            "FULLTEXTSCORE can only be used in an ORDER BY RANK clause",
        ),
        (
            "SELECT * FROM c WHERE FullTextScore(c.text, ['red']) > 1",
            "can only be used in an ORDER BY RANK clause",
        ),
        (
            "SELECT * FROM c ORDER BY FullTextScore(c.text, ['red'])",
            "can only be used in an ORDER BY RANK clause",
        ),
        (
            "SELECT * FROM c ORDER BY RANK UPPER(c.text)",
            "ORDER BY RANK takes a scoring function",
        ),
        (
            "SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['red']))",
            "RRF takes at least 2 arguments",
        ),
        (
            "SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['red']), [2])",
            "RRF fuses two or more scoring functions",
        ),
        (
            "SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['red']), c.v)",
            "each argument of RRF is a scoring function",
        ),
        (
            "SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['a']), VectorDistance(c.v, [1, 0]), [1])",
            "2 scoring functions but 1 weights",
        ),
        (
            "SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.text, ['a']), VectorDistance(c.v, [1, 0]), ['x', 1])",
            "RRF's weights are numbers",
        ),
        (
            "SELECT * FROM c ORDER BY RANK FullTextScore(c.text, [1])",
            "FullTextScore searches for string terms",
        ),
        (
            "SELECT * FROM c ORDER BY RANK FullTextScore(c.text, ['a']), c.id",
            "it ranks by one function, without ASC or DESC; fuse several with RRF",
        ),
        (
            "SELECT * FROM c ORDER BY RANK FullTextScore(c.text, ['a']) DESC",
            "found 'DESC'",
        ),
    ] {
        let e = db.bad_request(sql);
        assert!(e.message.contains(needle), "{sql}: {}", e.message);
        assert!(e.line.is_some() && e.column.is_some(), "{sql}: no position");
    }
    // `rank` alone is still a property name.
    db.ordered(
        "SELECT VALUE c.id FROM c WHERE c.id = 'a' ORDER BY c.rank",
        json!(["a"]),
    );
}

#[test]
fn ranked_pages_add_up_to_the_whole_result_and_charge() {
    let db = Db::new(&texts());
    let sql = "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ['skateboard', 'bicycle'])";
    for container in ["one", "many"] {
        let whole = db
            .engine
            .query(DB, container, sql, &QueryOptions::default())
            .expect("query");
        let mut opts = QueryOptions {
            max_items: Some(2),
            ..Default::default()
        };
        let mut rows: Vec<Value> = Vec::new();
        let mut charge = 0.0;
        loop {
            let page = db.engine.query(DB, container, sql, &opts).expect("page");
            charge += page.request_charge;
            rows.extend(page.documents.into_iter().map(Value::from));
            match page.continuation {
                Some(t) => opts.continuation = Some(t),
                None => break,
            }
        }
        let all: Vec<Value> = whole.documents.into_iter().map(Value::from).collect();
        assert_eq!(rows, all, "{container}");
        assert!(
            (charge - whole.request_charge).abs() < 0.011,
            "{container}: pages charge {charge}, the whole query {}",
            whole.request_charge
        );
        // The same query on the same data costs the same; the statistics pass makes it cost
        // more than ordering by a property.
        let again = db
            .engine
            .query(DB, container, sql, &QueryOptions::default())
            .expect("query");
        assert_eq!(again.request_charge, whole.request_charge);
        let plain = db
            .engine
            .query(
                DB,
                container,
                "SELECT c.id FROM c ORDER BY c.id",
                &QueryOptions::default(),
            )
            .expect("query");
        assert!(whole.request_charge > plain.request_charge, "{container}");
    }
}

/// Settings with a vector policy on `/v` (`distance`), optionally a flat vector index on it,
/// and a full-text policy on `/text` with, optionally, a full-text index.
fn search_settings(
    distance: &'static str,
    vector_index: bool,
    full_text_index: bool,
) -> impl Fn(&mut cosmoscope::engine::ContainerSettings) {
    move |s| {
        s.vector_embedding_policy = Some(
            VectorEmbeddingPolicy::from_json(json!({"vectorEmbeddings": [
                {"path": "/v", "dataType": "float32", "dimensions": 2, "distanceFunction": distance}
            ]}))
            .expect("vector policy"),
        );
        s.full_text_policy = Some(
            FullTextPolicy::from_json(json!({
                "defaultLanguage": "en-US",
                "fullTextPaths": [{"path": "/text", "language": "en-US"}]
            }))
            .expect("full-text policy"),
        );
        let mut policy = json!({"indexingMode": "consistent", "automatic": true,
            "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/v/*"}]});
        if vector_index {
            policy["vectorIndexes"] = json!([{"path": "/v", "type": "flat"}]);
        }
        if full_text_index {
            policy["fullTextIndexes"] = json!([{"path": "/text"}]);
        }
        s.indexing_policy = Some(serde_json::from_value(policy).expect("indexing policy"));
    }
}

#[test]
fn the_vector_policy_sets_the_metric_of_its_path() {
    let db = Db::with(&vectors(), search_settings("euclidean", false, false));
    // Euclidean from the policy: a distance, sorted ascending.
    db.ordered(
        "SELECT VALUE VectorDistance(c.v, [4, 4]) FROM c WHERE c.id = 'east'",
        json!([5]),
    );
    assert_ids(
        &db,
        "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])",
        &[
            "east",
            "north-east",
            "north",
            "west",
            "far-east",
            "no-vector",
        ],
    );
    // The call's own options win over the policy.
    assert_ids(
        &db,
        "SELECT TOP 2 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0], false, {'distanceFunction': 'cosine'})",
        &["east", "far-east"],
    );
    // Vectors that are not the policy's path keep the function's defaults (cosine).
    db.ordered(
        "SELECT VALUE VectorDistance([1, 0], [2, 0]) FROM c WHERE c.id = 'east'",
        json!([1]),
    );
}

fn retrieved(db: &Db, container: &str, sql: &str) -> (u64, f64) {
    let r = db
        .engine
        .query(DB, container, sql, &QueryOptions::default())
        .expect("query");
    (r.metrics.retrieved_document_count, r.request_charge)
}

/// Forty unit vectors around the circle.
fn compass() -> Vec<Value> {
    (0..40)
        .map(|i| {
            let a = f64::from(i) * std::f64::consts::TAU / 40.0;
            json!({"id": format!("p{i:02}"), "v": [a.cos(), a.sin()]})
        })
        .collect()
}

#[test]
fn a_vector_index_loads_only_the_nearest_documents() {
    let indexed = Db::with(&compass(), search_settings("cosine", true, false));
    let plain = Db::with(&compass(), search_settings("cosine", false, false));
    let sql = "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])";
    for container in ["one", "many"] {
        let r = indexed
            .engine
            .query(DB, container, sql, &QueryOptions::default())
            .expect("query");
        // At most TOP 1 per range.
        assert!(
            r.metrics.retrieved_document_count <= r.partitions.len() as u64,
            "{container}: {}",
            r.metrics.retrieved_document_count
        );
        assert_eq!(r.access.kind, "vector-index");
        let (without, without_ru) = retrieved(&plain, container, sql);
        assert_eq!(without, 40, "{container}");
        assert!(r.request_charge < without_ru, "{container}");
        // bruteForce true bypasses the index.
        let (brute, _) = retrieved(
            &indexed,
            container,
            "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0], true)",
        );
        assert_eq!(brute, 40, "{container}");
    }
    // Same results either way.
    assert_ids(&indexed, sql, &["p00"]);
    assert_ids(&plain, sql, &["p00"]);
}

/// A full-text index serves FullTextContains (only the matching documents are loaded) and
/// BM25's statistics pass (read from the index instead of every document).
#[test]
fn a_full_text_index_serves_filters_and_statistics() {
    let indexed = Db::with(&texts(), search_settings("cosine", false, true));
    let plain = Db::with(&texts(), search_settings("cosine", false, false));
    let filter = "SELECT c.id FROM c WHERE FullTextContains(c.text, 'bicycle')";
    let ranked = "SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.text, ['bicycle'])";
    for container in ["one", "many"] {
        let (with_index, _) = retrieved(&indexed, container, filter);
        let (without, _) = retrieved(&plain, container, filter);
        assert_eq!((with_index, without), (2, 5), "{container}");
        let (_, with_index) = retrieved(&indexed, container, ranked);
        let (_, without) = retrieved(&plain, container, ranked);
        assert!(
            with_index < without,
            "{container}: {with_index} vs {without}"
        );
    }
    indexed.unordered(filter, json!([{"id": "a"}, {"id": "b"}]));
    assert_ids(&indexed, ranked, &["b", "a"]);
}

/// A page computed again (the container changed since the first page, so the cached result
/// is stale) still ranks with the full-text statistics, gathered again.
#[test]
fn a_later_page_computed_again_still_ranks() {
    let db = Db::new(&texts());
    let sql = "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ['mountain', 'skateboard'])";
    for container in ["one", "many"] {
        let first = db
            .engine
            .query(
                DB,
                container,
                sql,
                &QueryOptions {
                    max_items: Some(2),
                    ..Default::default()
                },
            )
            .expect("first page");
        let doc = json!({"id": "z", "text": "nothing to see"});
        db.engine
            .upsert_item(DB, container, doc.to_string().as_bytes(), None)
            .expect("upsert");
        let second = db
            .engine
            .query(
                DB,
                container,
                sql,
                &QueryOptions {
                    max_items: Some(2),
                    continuation: first.continuation,
                    ..Default::default()
                },
            )
            .expect("second page");
        let whole = db
            .engine
            .query(DB, container, sql, &QueryOptions::default())
            .expect("whole");
        let rows = |docs: Vec<cosmoscope::engine::Document>| -> Vec<Value> {
            docs.into_iter().map(Value::from).collect()
        };
        assert_eq!(
            rows(second.documents),
            rows(whole.documents)[2..4],
            "{container}"
        );
    }
}
