//! Queries are bounded: subqueries stop as soon as their answer is known (EXISTS at its
//! first row, ARRAY_CONTAINS over `ARRAY(subquery)` at its first match, a scalar subquery
//! at its first value, TOP and OFFSET/LIMIT at the end of their window), and every page
//! runs under a budget — the service's per-page execution limit, a memory budget, the
//! caller's cancellation.
//!
//! Work is measured in evaluated rows, never in time: each test gives the page a row limit
//! (and a time limit no machine reaches), so a query that does more work than the bound
//! fails (408) or ends its page early, the same way on every run.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use cosmoscope::engine::{Backend, Engine, QueryLimits, QueryOptions, QueryResult};
use cosmoscope::engine::{ContainerSettings, Throughput};
use serde_json::{Value, json};

use crate::support::fixture::Rng;

const ITEMS: usize = 1_000;
const ARRAY: usize = 10;

/// A store whose container `c` holds `n` items, each with a 10-element array `arr`
/// (0..10 shifted by the item's number) and a kind.
fn store(n: usize) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    engine.create_database("db").unwrap();
    let mut s = ContainerSettings::new(vec!["/pk".into()]);
    s.throughput = Throughput::Manual(400);
    engine.create_container("db", "c", s).unwrap();
    for i in 0..n {
        let doc = json!({
            "id": format!("i{i}"),
            "pk": format!("p{}", i % 37),
            "kind": if i % 2 == 0 { "even" } else { "odd" },
            "arr": (0..ARRAY).map(|k| k + i % 3).collect::<Vec<_>>(),
        });
        engine
            .upsert_item("db", "c", doc.to_string().as_bytes(), None)
            .unwrap();
    }
    (dir, engine)
}

/// Options bounding a page to `rows` evaluated rows (and an hour, which no test reaches).
fn bounded(rows: u64) -> QueryOptions {
    QueryOptions {
        limits: QueryLimits {
            rows: Some(rows),
            time: Duration::from_secs(3600),
            ..QueryLimits::default()
        },
        max_items: Some(usize::MAX),
        ..QueryOptions::default()
    }
}

fn run(engine: &Engine, sql: &str, opts: &QueryOptions) -> cosmoscope::Result<QueryResult> {
    engine.query("db", "c", sql, opts)
}

fn values(r: &QueryResult) -> Vec<Value> {
    r.documents.iter().map(|d| d.value().clone()).collect()
}

/// `EXISTS(SELECT VALUE 1 FROM a1 IN c.arr WHERE EXISTS(... FROM a<depth> IN c.arr WHERE
/// a<depth> >= a1))`: true for every item, found at the first element of each level.
fn nested_exists(depth: usize) -> String {
    let mut inner = format!("a{depth} >= a1");
    for level in (1..=depth).rev() {
        inner = format!("EXISTS(SELECT VALUE 1 FROM a{level} IN c.arr WHERE {inner})");
    }
    inner
}

#[test]
fn nested_exists_at_depth_eight_does_bounded_work() {
    let (_dir, engine) = store(ITEMS);
    let sql = format!("SELECT VALUE COUNT(1) FROM c WHERE {}", nested_exists(8));
    // Stopping at the first row, each item costs a row per level and its own: 10 per item.
    // Evaluating each subquery whole would cost 10^8 rows per item.
    let bound = (ITEMS * (8 + 2)) as u64;
    let r = run(&engine, &sql, &bounded(bound)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(values(&r), vec![json!(ITEMS)]);
    // And a streamed query pages through them all in one page under the same bound.
    let sql = format!("SELECT VALUE c.id FROM c WHERE {}", nested_exists(8));
    let r = run(&engine, &sql, &bounded(bound)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.documents.len(), ITEMS);
    assert!(r.continuation.is_none());
}

#[test]
fn array_contains_in_and_windows_over_subqueries_stop_early() {
    let (_dir, engine) = store(200);
    let per_item = |levels: usize| (200 * (levels + 2)) as u64;
    let cases = [
        // ARRAY_CONTAINS over ARRAY(subquery) stops at the first match (element 0 or 1).
        (
            "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(ARRAY(SELECT VALUE a FROM a IN \
             c.arr), 2)",
            3,
        ),
        // The partial match of an object.
        (
            "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(ARRAY(SELECT VALUE {v: a, w: 1} \
             FROM a IN c.arr), {v: 2}, true)",
            3,
        ),
        // IN over scalar subqueries: each reads its first value only.
        (
            "SELECT VALUE COUNT(1) FROM c WHERE 2 IN ((SELECT VALUE a FROM a IN c.arr WHERE a \
             >= 2), (SELECT VALUE a FROM a IN c.arr))",
            2,
        ),
        // TOP and OFFSET/LIMIT under a subquery end at their window.
        (
            "SELECT VALUE COUNT(1) FROM c WHERE EXISTS(SELECT TOP 1 VALUE a FROM a IN c.arr) \
             AND ARRAY_LENGTH(ARRAY(SELECT VALUE a FROM a IN c.arr OFFSET 1 LIMIT 2)) = 2",
            4,
        ),
    ];
    for (sql, levels) in cases {
        let r =
            run(&engine, sql, &bounded(per_item(levels))).unwrap_or_else(|e| panic!("{sql}: {e}"));
        // Each case holds for every item (arrays start at 0, 1 or 2 and run 10 long).
        assert_eq!(values(&r), vec![json!(200)], "{sql}");
        // The same answer with no bound.
        let unbounded = run(&engine, sql, &QueryOptions::default()).unwrap();
        assert_eq!(values(&unbounded), values(&r), "{sql}");
    }
}

#[test]
fn short_circuits_give_the_answers_of_whole_evaluation() {
    let (_dir, engine) = store(60);
    // Results that need more than the first row: the subquery reads on until it knows.
    for (sql, expected) in [
        (
            "SELECT VALUE COUNT(1) FROM c WHERE ARRAY_CONTAINS(ARRAY(SELECT VALUE a FROM a IN \
             c.arr), 11)",
            json!(20), // only arrays starting at 2 reach 11
        ),
        (
            "SELECT VALUE COUNT(1) FROM c WHERE NOT EXISTS(SELECT VALUE a FROM a IN c.arr \
             WHERE a = 0)",
            json!(40),
        ),
        (
            "SELECT VALUE COUNT(1) FROM c WHERE (SELECT VALUE a FROM a IN c.arr WHERE a > 4 \
             OFFSET 2 LIMIT 1) = 7",
            json!(60),
        ),
        // EXISTS over an undefined projection is false, over `{}` true (subquery.md).
        (
            "SELECT VALUE COUNT(1) FROM c WHERE EXISTS(SELECT VALUE a.missing FROM a IN c.arr)",
            json!(0),
        ),
        (
            "SELECT VALUE COUNT(1) FROM c WHERE EXISTS(SELECT a.missing FROM a IN c.arr)",
            json!(60),
        ),
        // An ordered subquery is computed whole: its first value is the largest.
        (
            "SELECT VALUE COUNT(1) FROM c WHERE (SELECT VALUE a FROM a IN c.arr ORDER BY a \
             DESC) = ARRAY_LENGTH(c.arr) - 1 + c.arr[0]",
            json!(60),
        ),
    ] {
        let r = run(&engine, sql, &QueryOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(values(&r), vec![expected], "{sql}");
    }
}

#[test]
fn a_streamed_page_out_of_budget_returns_what_it_has_with_a_continuation() {
    let (_dir, engine) = store(200);
    let sql = format!("SELECT VALUE c.id FROM c WHERE {}", nested_exists(3));
    // About 5 rows per item: a budget of 150 rows ends each page after some 30 items.
    let opts = bounded(150);
    let mut seen = Vec::new();
    let mut pages = 0;
    let mut continuation = None;
    loop {
        let page_opts = QueryOptions {
            continuation: continuation.take(),
            ..opts.clone()
        };
        let r = run(&engine, &sql, &page_opts).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.documents.len() < 200, "a page ended by its budget");
        seen.extend(values(&r));
        pages += 1;
        match r.continuation {
            Some(c) => continuation = Some(c),
            None => break,
        }
        assert!(pages < 100, "the pages do not advance");
    }
    assert!(pages >= 5, "only {pages} pages");
    let mut ids: Vec<String> = seen
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut expected: Vec<String> = (0..200).map(|i| format!("i{i}")).collect();
    expected.sort();
    assert_eq!(ids, expected, "every item exactly once");
    // The same rows as one unbounded page.
    let whole = run(
        &engine,
        &sql,
        &QueryOptions {
            max_items: Some(usize::MAX),
            ..QueryOptions::default()
        },
    )
    .unwrap();
    assert_eq!(whole.documents.len(), 200);
}

#[test]
fn a_page_that_cannot_finish_one_item_fails_with_408() {
    let (_dir, engine) = store(20);
    // No element is negative: each level reads all 10 elements, 10^6 rows per item.
    let never = {
        let mut inner = "a6 < 0".to_string();
        for level in (1..=6).rev() {
            inner = format!("EXISTS(SELECT VALUE 1 FROM a{level} IN c.arr WHERE {inner})");
        }
        inner
    };
    let e = run(
        &engine,
        &format!("SELECT c.id FROM c WHERE {never}"),
        &bounded(100_000),
    )
    .unwrap_err();
    assert_eq!(e.status, 408, "{e}");
    assert!(e.message.contains("single item"), "{e}");
    assert!(e.message.contains("100000 evaluated rows"), "{e}");
}

/// Drains `sql` page by page under `opts`, returning the pages.
fn drain(engine: &Engine, sql: &str, opts: &QueryOptions) -> Vec<QueryResult> {
    let mut pages = Vec::new();
    let mut continuation = None;
    loop {
        let page_opts = QueryOptions {
            continuation: continuation.take(),
            ..opts.clone()
        };
        let r = run(engine, sql, &page_opts).unwrap_or_else(|e| panic!("{sql}: {e}"));
        continuation = r.continuation.clone();
        pages.push(r);
        if continuation.is_none() {
            return pages;
        }
        assert!(pages.len() < 1_000, "the pages do not advance");
    }
}

#[test]
fn a_computed_result_past_the_page_limit_goes_on_computing_and_the_next_page_delivers_it() {
    let (_dir, engine) = store(200);
    for sql in [
        format!("SELECT VALUE COUNT(1) FROM c WHERE {}", nested_exists(2)),
        format!(
            "SELECT c.pk, COUNT(1) AS n FROM c WHERE {} GROUP BY c.pk",
            nested_exists(2)
        ),
        format!(
            "SELECT c.id FROM c WHERE {} ORDER BY c.id DESC",
            nested_exists(2)
        ),
    ] {
        let whole = run(&engine, &sql, &bounded(u64::MAX)).unwrap_or_else(|e| panic!("{e}"));
        // A page of 30 rows cannot compute a result of some 800; it returns nothing, with a
        // continuation, and no charge.
        let opts = QueryOptions {
            max_items: Some(7),
            ..bounded(30)
        };
        let pages = drain(&engine, &sql, &opts);
        assert!(pages[0].still_computing(), "{sql}");
        assert!(pages[0].documents.is_empty());
        assert_eq!(pages[0].request_charge, 0.0);
        assert_eq!(pages[0].access.kind, "computing");
        // The next page waits for it (the row limit is what a page spends, not the
        // computation) and delivers the first results; the rest page as usual.
        assert!(!pages[1].still_computing(), "{sql}");
        assert!(!pages[1].documents.is_empty(), "{sql}");
        let delivered: Vec<Value> = pages.iter().flat_map(values).collect();
        assert_eq!(delivered, values(&whole), "{sql}");
        let charged: f64 = pages.iter().map(|p| p.request_charge).sum();
        assert!(
            (charged - whole.request_charge).abs() < 0.011,
            "{sql}: pages charged {charged}, one page {}",
            whole.request_charge
        );
    }
}

#[test]
fn a_computation_past_its_own_limit_fails_with_408_and_advice() {
    let (_dir, engine) = store(200);
    let sql = format!("SELECT VALUE COUNT(1) FROM c WHERE {}", nested_exists(2));
    // One row a page: the computation may evaluate 24 rows, far fewer than it needs.
    let first = run(&engine, &sql, &bounded(1)).unwrap();
    assert!(first.still_computing());
    // The CLI learns it as it waits before it exits ...
    let e = engine.settle().unwrap_err();
    assert_eq!(e.status, 408, "{e}");
    // ... and the next page in this process as it picks the computation up.
    let e = run(
        &engine,
        &sql,
        &QueryOptions {
            continuation: first.continuation,
            ..bounded(1)
        },
    )
    .unwrap_err();
    assert_eq!(e.status, 408, "{e}");
    assert!(
        e.message.contains("still being computed after 24 pages"),
        "{e}"
    );
}

#[test]
fn a_later_process_continues_a_result_computed_past_the_page_limit() {
    let dir = {
        let (dir, engine) = store(200);
        drop(engine);
        dir
    };
    let sql = format!(
        "SELECT c.pk, COUNT(1) AS n FROM c WHERE {} GROUP BY c.pk",
        nested_exists(2)
    );
    let (first, whole) = {
        let engine = Engine::open(dir.path()).unwrap();
        let whole = run(&engine, &sql, &bounded(u64::MAX)).unwrap();
        let first = run(&engine, &sql, &bounded(30)).unwrap();
        assert!(first.still_computing());
        // What the CLI does before it exits: the result is kept once it is whole.
        assert!(engine.settle().unwrap(), "a computation was running");
        (first, whole)
    };
    let engine = Engine::open(dir.path()).unwrap();
    let next = run(
        &engine,
        &sql,
        &QueryOptions {
            continuation: first.continuation,
            ..bounded(30)
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!next.still_computing());
    assert_eq!(values(&next), values(&whole));
}

#[test]
fn a_result_over_the_memory_budget_fails_saying_what_to_change() {
    let (_dir, engine) = store(200);
    let opts = QueryOptions {
        limits: QueryLimits {
            memory_bytes: 4096,
            ..QueryLimits::default()
        },
        ..QueryOptions::default()
    };
    let e = run(&engine, "SELECT DISTINCT c.id, c.arr FROM c", &opts).unwrap_err();
    assert_eq!(e.status, 400, "{e}");
    assert!(e.message.contains("maximum allowed memory"), "{e}");
    assert!(e.message.contains("TOP"), "{e}");
    // A streamed query holds one page, whatever the container holds.
    let r = run(&engine, "SELECT * FROM c", &opts).unwrap();
    assert!(!r.documents.is_empty());
}

#[test]
fn cancelling_stops_a_query_inside_its_subqueries() {
    let (_dir, engine) = store(1);
    // No item to stop between: one evaluation of 10^6 rows, which only a check inside the
    // subqueries stops.
    let mut inner = "a6 < 0".to_string();
    for level in (1..=6).rev() {
        inner = format!(
            "EXISTS(SELECT VALUE 1 FROM a{level} IN [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] WHERE {inner})"
        );
    }
    let cancel = AtomicBool::new(true);
    let e = engine
        .query_cancellable(
            "db",
            "c",
            &format!("SELECT VALUE {inner}"),
            &QueryOptions::default(),
            &cancel,
        )
        .unwrap_err();
    assert_eq!(e.status, 499, "{e}");
}

/// A random nested subquery of `depth` levels whose every level has its answer at its
/// first row: the innermost condition holds for every element.
fn nested(rng: &mut Rng, depth: usize) -> String {
    let mut inner = "true".to_string();
    for level in (1..=depth).rev() {
        let v = format!("v{level}");
        let source = ["c.arr", "[1, 2, 3]", "c.arr"][rng.index(3)];
        inner = match rng.index(6) {
            0 => format!("EXISTS(SELECT VALUE {v} FROM {v} IN {source} WHERE {inner})"),
            1 => format!("ARRAY_CONTAINS(ARRAY(SELECT VALUE {inner} FROM {v} IN {source}), true)"),
            2 => format!("(SELECT VALUE {inner} FROM {v} IN {source})"),
            3 => format!("(SELECT TOP 1 VALUE {inner} FROM {v} IN {source})"),
            4 => format!(
                "EXISTS(SELECT VALUE {v} FROM {v} IN {source} WHERE {inner} OFFSET 0 LIMIT 1)"
            ),
            _ => format!("true IN ((SELECT VALUE {inner} FROM {v} IN {source}), false)"),
        };
    }
    inner
}

#[test]
fn fuzzed_nested_subqueries_stay_within_a_bound_on_work() {
    const N: usize = 50;
    let (_dir, engine) = store(N);
    for i in 0..300 {
        let mut rng = Rng(0xB0_0DED ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let depth = 1 + rng.index(8);
        let condition = nested(&mut rng, depth);
        let sql = match rng.index(3) {
            0 => format!("SELECT VALUE COUNT(1) FROM c WHERE {condition}"),
            1 => format!("SELECT c.id, {condition} AS x FROM c"),
            _ => format!("SELECT VALUE c.id FROM c WHERE {condition} ORDER BY c.id"),
        };
        // Each level stops at its first row: a row per level per item, plus the item's own.
        let bound = (N * (depth + 2)) as u64;
        let r = run(&engine, &sql, &bounded(bound))
            .unwrap_or_else(|e| panic!("case {i}: more work than {bound} rows: {sql}: {e}"));
        assert!(r.continuation.is_none(), "case {i}: {sql}");
        let count = match values(&r).as_slice() {
            [Value::Number(n)] if sql.contains("COUNT") => n.as_u64().unwrap() as usize,
            rows => rows.len(),
        };
        assert_eq!(count, N, "case {i}: every item passes: {sql}");
    }
}
