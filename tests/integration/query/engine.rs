//! Queries through the engine on a real store: routing verdicts, paging continuity (also
//! across a split), cross-range results equal to a single-range run, charge determinism and
//! additivity, the undefined/null truth tables, type ordering and error positions.

use std::collections::HashMap;

use cosmoscope::engine::{Backend, Engine, QueryOptions, QueryResult};
use cosmoscope::engine::{ContainerSettings, Throughput};
use cosmoscope::store::testing;
use serde_json::{Value, json};

fn engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path()).unwrap();
    engine.create_database("db").unwrap();
    (dir, engine)
}

fn container(e: &Engine, name: &str, paths: &[&str], ru: u64) {
    let mut s = ContainerSettings::new(paths.iter().map(|p| p.to_string()).collect());
    s.throughput = Throughput::Manual(ru);
    e.create_container("db", name, s).unwrap();
}

fn load(e: &Engine, name: &str, docs: &[Value]) {
    for d in docs {
        e.upsert_item("db", name, d.to_string().as_bytes(), None)
            .unwrap();
    }
}

const STATUSES: [&str; 3] = ["new", "paid", "shipped"];

fn orders() -> Vec<Value> {
    (0..120)
        .map(|i| {
            json!({
                "id": format!("o{i}"),
                "customerId": format!("c{}", i % 12),
                "total": (i * 37 % 101) as f64 + 0.5,
                "status": STATUSES[i % 3],
                "tags": (0..(i % 4)).map(|t| format!("t{t}")).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// An engine with [`orders`] in container `orders`, partitioned by `/customerId` over
/// several ranges.
fn orders_engine() -> (tempfile::TempDir, Engine) {
    let (dir, e) = engine();
    container(&e, "orders", &["/customerId"], 30_000);
    load(&e, "orders", &orders());
    (dir, e)
}

fn q(e: &Engine, c: &str, sql: &str) -> QueryResult {
    q_with(e, c, sql, QueryOptions::default())
}

fn q_with(e: &Engine, c: &str, sql: &str, opts: QueryOptions) -> QueryResult {
    e.query("db", c, sql, &opts)
        .unwrap_or_else(|err| panic!("{sql}: {err}"))
}

/// What a result's ranges report, summed: documents output and retrieved, and the logical
/// partitions listed (sorted).
struct RangeReport {
    output: u64,
    retrieved: u64,
    logical: Vec<Value>,
}

impl RangeReport {
    fn of(r: &QueryResult) -> RangeReport {
        let mut logical: Vec<Value> = r
            .partitions
            .iter()
            .flat_map(|p| p.logical_partitions.clone())
            .collect();
        logical.sort_by_key(Value::to_string);
        RangeReport {
            output: r
                .partitions
                .iter()
                .map(|p| p.metrics.output_document_count)
                .sum(),
            retrieved: r
                .partitions
                .iter()
                .map(|p| p.metrics.retrieved_document_count)
                .sum(),
            logical,
        }
    }
}

/// Every page of a query, following continuations.
fn all_pages(e: &Engine, c: &str, sql: &str, page: usize) -> (Vec<Value>, f64, usize) {
    let mut opts = QueryOptions {
        max_items: Some(page),
        ..Default::default()
    };
    let mut docs = Vec::new();
    let mut charge = 0.0;
    let mut pages = 0;
    loop {
        let r = q_with(e, c, sql, opts.clone());
        pages += 1;
        assert!(r.documents.len() <= page);
        docs.extend(r.documents.into_iter().map(Value::from));
        charge += r.request_charge;
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return (docs, charge, pages),
        }
    }
}

#[test]
fn routing_verdicts_explain_themselves() {
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 60_000); // 10 ranges
    load(&e, "orders", &orders());

    let r = q(&e, "orders", "SELECT * FROM c WHERE c.customerId = 'c3'");
    assert_eq!(r.routing.kind, "single-partition");
    assert!(
        r.routing.reason.contains("binds the partition key"),
        "{}",
        r.routing.reason
    );
    assert_eq!(r.partitions.len(), 1);
    assert_eq!(r.documents.len(), 10);
    assert_eq!(r.partitions[0].logical_partitions, vec![json!("c3")]);

    let mut params = HashMap::new();
    params.insert("id".to_string(), json!("c4"));
    let r = q_with(
        &e,
        "orders",
        "SELECT * FROM c WHERE c.customerId = @id AND c.total > 0",
        QueryOptions {
            params,
            ..Default::default()
        },
    );
    assert_eq!(r.routing.kind, "single-partition");
    assert!(r.routing.reason.contains("@id"), "{}", r.routing.reason);

    let r = q(
        &e,
        "orders",
        "SELECT * FROM c WHERE c.customerId IN ('c1', 'c2')",
    );
    assert_eq!(r.routing.kind, "targeted");
    assert!(r.partitions.len() <= 2);
    assert_eq!(r.documents.len(), 20);

    let r = q(
        &e,
        "orders",
        "SELECT * FROM c WHERE c.customerId = 'c1' OR c.customerId = 'c5'",
    );
    assert_eq!(r.routing.kind, "targeted");
    assert_eq!(r.documents.len(), 20);

    let r = q(&e, "orders", "SELECT * FROM c WHERE c.status = 'paid'");
    assert_eq!(r.routing.kind, "fan-out");
    assert!(
        r.routing.reason.contains("all 10 ranges"),
        "{}",
        r.routing.reason
    );
    assert_eq!(r.partitions.len(), 10);

    let r = q(
        &e,
        "orders",
        "SELECT * FROM c WHERE c.customerId = 'c1' OR c.status = 'new'",
    );
    assert_eq!(
        r.routing.kind, "fan-out",
        "an OR across other properties cannot route"
    );

    // An explicit key narrows to one partition whatever the filter says.
    let r = q_with(
        &e,
        "orders",
        "SELECT VALUE c.id FROM c",
        QueryOptions {
            partition_key: Some(json!("c7")),
            ..Default::default()
        },
    );
    assert_eq!(r.routing.kind, "single-partition");
    assert_eq!(r.documents.len(), 10);
}

#[test]
fn hierarchical_prefixes_are_targeted() {
    let (_d, e) = engine();
    container(&e, "events", &["/tenant", "/user"], 60_000);
    let docs: Vec<Value> = (0..60).map(|i| json!({"id": format!("e{i}"), "tenant": format!("t{}", i % 3), "user": format!("u{}", i % 7)})).collect();
    load(&e, "events", &docs);
    let r = q(
        &e,
        "events",
        "SELECT * FROM c WHERE c.tenant = 't1' AND c.user = 'u2'",
    );
    assert_eq!(r.routing.kind, "single-partition");
    let r = q(&e, "events", "SELECT * FROM c WHERE c.tenant = 't1'");
    assert_eq!(r.routing.kind, "targeted");
    assert!(r.routing.reason.contains("prefix"), "{}", r.routing.reason);
    assert_eq!(r.documents.len(), 20);
    let r = q(&e, "events", "SELECT * FROM c WHERE c.user = 'u2'");
    assert_eq!(
        r.routing.kind, "fan-out",
        "a filter on a later level alone fans out"
    );
}

#[test]
fn ands_and_ors_route_as_alternatives() {
    // The query plan reads the filter as a union of alternatives (the .NET SDK's baselines:
    // `(a = 2 AND b = 4) OR (a = "2" AND b = "4")` gives two point ranges).
    let (_d, e) = engine();
    container(&e, "events", &["/tenant", "/user"], 60_000);
    let docs: Vec<Value> = (0..60).map(|i| json!({"id": format!("e{i}"), "tenant": format!("t{}", i % 3), "user": format!("u{}", i % 7)})).collect();
    load(&e, "events", &docs);
    let count = |tenant: &str, users: &[&str]| {
        docs.iter()
            .filter(|d| d["tenant"] == tenant && users.iter().any(|u| d["user"] == *u))
            .count()
    };

    // Each case: the filter, the routing it gets, the words its reason holds, and the items.
    let cases = [
        // Whole keys in each alternative: those keys only.
        (
            "(c.tenant = 't1' AND c.user = 'u2') OR (c.tenant = 't2' AND c.user IN ('u3', 'u4'))",
            "targeted",
            "binds 3 partition key values",
            count("t1", &["u2"]) + count("t2", &["u3", "u4"]),
        ),
        // A prefix and a key inside it: the prefix's ranges, each item once.
        (
            "c.tenant = 't1' OR (c.tenant = 't1' AND c.user = 'u2')",
            "targeted",
            "1 key prefix and 1 whole key",
            20,
        ),
        // Conditions beside the key in an alternative narrow nothing.
        (
            "(c.tenant = 't0' AND c.user = 'u3') OR c.tenant = 't2'",
            "targeted",
            "1 key prefix and 1 whole key",
            count("t0", &["u3"]) + 20,
        ),
        // A branch without the key reads everything.
        (
            "c.tenant = 't0' OR c.user = 'u1'",
            "fan-out",
            "an OR branch does not bind /tenant",
            20 + docs
                .iter()
                .filter(|d| d["tenant"] != "t0" && d["user"] == "u1")
                .count(),
        ),
    ];
    for (filter, kind, words, items) in cases {
        let r = q(&e, "events", &format!("SELECT * FROM c WHERE {filter}"));
        assert_eq!(r.routing.kind, kind, "{filter}");
        assert!(
            r.routing.reason.contains(words),
            "{filter}: {}",
            r.routing.reason
        );
        assert_eq!(r.documents.len(), items, "{filter}");
    }
}

#[test]
fn a_key_named_twice_is_read_once() {
    let (_d, e) = orders_engine();
    for sql in [
        "SELECT * FROM c WHERE c.customerId IN ('c1', 'c1') OR c.customerId = 'c1'",
        "SELECT * FROM c WHERE c.customerId = 'c1' OR c.customerId = 'c1'",
    ] {
        let r = q(&e, "orders", sql);
        assert_eq!(r.routing.kind, "single-partition", "{sql}");
        assert_eq!(r.documents.len(), 10, "{sql}");
    }
    // Thousands of keys, most of them absent: each key is a span the index lookup places by
    // binary search (it used to try every span for every value).
    let mut keys: Vec<String> = (0..3_000).map(|i| format!("'x{i}'")).collect();
    keys.extend(["'c1'".into(), "'c3'".into(), "'c1'".into()]);
    let sql = format!(
        "SELECT * FROM c WHERE c.customerId IN ({})",
        keys.join(", ")
    );
    let r = q(&e, "orders", &sql);
    assert_eq!(r.routing.kind, "targeted");
    assert_eq!(r.documents.len(), 20);
}

#[test]
fn pages_add_up_to_the_unpaged_result_and_charge() {
    let (_d, e) = orders_engine();
    for sql in [
        "SELECT * FROM c",
        "SELECT c.id, c.total FROM c WHERE c.total > 20 ORDER BY c.total DESC",
        "SELECT VALUE t FROM c JOIN t IN c.tags",
        "SELECT DISTINCT VALUE c.status FROM c",
    ] {
        let whole = q_with(
            &e,
            "orders",
            sql,
            QueryOptions {
                max_items: Some(10_000),
                ..Default::default()
            },
        );
        assert!(whole.continuation.is_none());
        let (docs, charge, pages) = all_pages(&e, "orders", sql, 7);
        assert_eq!(docs, whole.documents, "{sql}");
        assert!(
            (charge - whole.request_charge).abs() < 0.005,
            "{sql}: pages {charge} vs whole {}",
            whole.request_charge
        );
        assert!(pages >= whole.documents.len() / 7, "{sql}");
        // Determinism: the same query costs the same.
        let again = q_with(
            &e,
            "orders",
            sql,
            QueryOptions {
                max_items: Some(10_000),
                ..Default::default()
            },
        );
        assert_eq!(again.request_charge, whole.request_charge);
    }
}

/// [`orders`] in container `sparse`, where only the orders `noted` picks (by position and
/// document) have a `note` (their id).
fn sparse_engine(noted: impl Fn(usize, &Value) -> bool) -> (tempfile::TempDir, Engine) {
    let (dir, e) = engine();
    container(&e, "sparse", &["/customerId"], 30_000);
    let docs: Vec<Value> = orders()
        .into_iter()
        .enumerate()
        .map(|(i, mut d)| {
            if noted(i, &d) {
                d["note"] = d["id"].clone();
            }
            d
        })
        .collect();
    load(&e, "sparse", &docs);
    (dir, e)
}

#[test]
fn undefined_values_take_no_place_on_a_page() {
    // `SELECT VALUE` of a property most items lack: the items without it make no result,
    // so they neither fill a page nor end the paging early (ORDER BY walks the index).
    let (_d, e) = sparse_engine(|i, _| i % 5 == 0);
    for sql in [
        "SELECT VALUE c.note FROM c ORDER BY c.total",
        "SELECT VALUE c.note FROM c ORDER BY c.total DESC",
        "SELECT VALUE c.note FROM c",
        "SELECT TOP 7 VALUE c.note FROM c",
        "SELECT TOP 7 VALUE c.note FROM c ORDER BY c.total",
    ] {
        let whole = q_with(
            &e,
            "sparse",
            sql,
            QueryOptions {
                max_items: Some(10_000),
                ..Default::default()
            },
        );
        let expected = if sql.contains("TOP 7") { 7 } else { 24 };
        assert_eq!(whole.documents.len(), expected, "{sql}");
        for page in [1, 2, 5] {
            let (docs, charge, _) = all_pages(&e, "sparse", sql, page);
            assert_eq!(docs, whole.documents, "{sql}: pages of {page}");
            assert!(
                (charge - whole.request_charge).abs() < 0.011,
                "{sql}: pages of {page} cost {charge}, the whole {}",
                whole.request_charge
            );
        }
    }
}

#[test]
fn undefined_values_are_no_range_output() {
    // Each range reports as output, and among its logical partitions, only what made a
    // result: an item whose `SELECT VALUE` is undefined was read, not output. Only the
    // orders of customers c0 and c1 carry a note.
    let (_d, e) = sparse_engine(|_, d| d["customerId"] == "c0" || d["customerId"] == "c1");
    for sql in [
        "SELECT VALUE c.note FROM c ORDER BY c.total",
        "SELECT VALUE c.note FROM c ORDER BY c.total DESC",
        "SELECT VALUE c.note FROM c WHERE c.total > 0 ORDER BY c.total",
        "SELECT VALUE c.note FROM c",
    ] {
        let r = q_with(
            &e,
            "sparse",
            sql,
            QueryOptions {
                max_items: Some(10_000),
                ..Default::default()
            },
        );
        assert_eq!(r.documents.len(), 20, "{sql}");
        let ranges = RangeReport::of(&r);
        assert_eq!(ranges.output, 20, "{sql}");
        assert_eq!(ranges.retrieved, 120, "{sql}");
        assert_eq!(ranges.logical, vec![json!("c0"), json!("c1")], "{sql}");
    }
}

#[test]
fn an_outer_query_over_a_subquery_filters_before_top_and_range_output() {
    // `FROM (subquery)` whose subquery works item by item: each of its results goes through
    // the outer query at once, as the service runs the whole query in each partition. So
    // TOP counts the outer query's results (it used to stop after TOP + 1 subquery rows and
    // then filter them), and a range outputs, and lists the logical partitions of, those.
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 30_000);
    let docs = orders();
    load(&e, "orders", &docs);
    let high: Vec<&Value> = docs
        .iter()
        .filter(|d| d["total"].as_f64().unwrap() > 90.0)
        .collect();
    assert!(high.len() > 5);
    let inner = "(SELECT VALUE {t: c.total, k: c.customerId} FROM c) s WHERE s.t > 90";
    let top = q(
        &e,
        "orders",
        &format!("SELECT TOP 5 VALUE s.t FROM {inner}"),
    );
    assert_eq!(top.documents.len(), 5);
    assert!(top.documents.iter().all(|t| t.as_f64().unwrap() > 90.0));

    let all = q(&e, "orders", &format!("SELECT VALUE s.k FROM {inner}"));
    assert_eq!(all.documents.len(), high.len());
    let ranges = RangeReport::of(&all);
    assert_eq!(ranges.output, high.len() as u64);
    let mut keys: Vec<Value> = high.iter().map(|d| d["customerId"].clone()).collect();
    keys.sort_by_key(Value::to_string);
    keys.dedup();
    assert_eq!(ranges.logical, keys);
}

#[test]
fn a_cancelled_query_stops_before_its_next_document() {
    // The TUI cancels a running query: the engine polls the flag between documents (and so
    // between ranges). Here it is set as the first range finishes, so the scan stops in the
    // second with 499; the flag unset, the same query runs to the end.
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_d, e) = orders_engine();
    let sql = "SELECT * FROM c WHERE UPPER(c.status) != ''";
    let run = |cancel_after_first: bool| {
        let cancel = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (Arc::clone(&cancel), Arc::clone(&finished));
        let opts = QueryOptions {
            progress: Some(cosmoscope::engine::Progress(Arc::new(move |_| {
                count.fetch_add(1, Ordering::SeqCst);
                if cancel_after_first {
                    flag.store(true, Ordering::SeqCst);
                }
            }))),
            max_items: Some(1_000),
            ..Default::default()
        };
        let result = e.query_cancellable("db", "orders", sql, &opts, &cancel);
        (result, finished.load(Ordering::SeqCst))
    };
    let (whole, ranges) = run(false);
    assert_eq!(whole.expect("uncancelled").documents.len(), 120);
    assert!(ranges > 1, "the test needs several ranges, got {ranges}");
    let (cancelled, finished) = run(true);
    let err = cancelled.expect_err("cancelled");
    assert_eq!(err.status.as_u16(), 499, "{}", err.message);
    assert_eq!(finished, 1, "no range finishes after the flag is set");
}

#[test]
fn pages_stop_at_the_service_response_size() {
    // concepts-limits.md: a query page is at most 4 MB; past it the page ends with a
    // continuation. Nine items of about 0.9 MB, each with two tags (two JOIN rows).
    let (_d, e) = engine();
    container(&e, "big", &["/pk"], 12_000); // 2 ranges
    let big = "x".repeat(900_000);
    let docs: Vec<Value> = (0..9)
        .map(|i| json!({"id": format!("b{i}"), "pk": format!("p{i}"), "n": i, "tags": [1, 2], "big": big}))
        .collect();
    load(&e, "big", &docs);
    let limit = cosmoscope::query::MAX_PAGE_BYTES;
    for sql in [
        "SELECT * FROM c",
        "SELECT c.id, c.big FROM c",
        "SELECT * FROM c ORDER BY c.n",
        "SELECT c.big, t FROM c JOIN t IN c.tags",
    ] {
        // Pages of up to 100 results: cut by size, each within the limit.
        let mut opts = QueryOptions {
            max_items: Some(100),
            ..Default::default()
        };
        let (mut sized, mut sized_charge, mut pages) = (Vec::new(), 0.0, 0);
        loop {
            let r = q_with(&e, "big", sql, opts.clone());
            pages += 1;
            let bytes: usize = r.documents.iter().map(|d| d.json().len()).sum();
            assert!(bytes <= limit, "{sql}: page of {bytes} bytes");
            assert!(!r.documents.is_empty(), "{sql}: an empty page");
            sized.extend(r.documents.into_iter().map(Value::from));
            sized_charge += r.request_charge;
            match r.continuation {
                Some(t) => opts.continuation = Some(t),
                None => break,
            }
        }
        // The same results and charge as pages of one result each.
        let (single, single_charge, _) = all_pages(&e, "big", sql, 1);
        assert_eq!(sized, single, "{sql}");
        assert!(
            (sized_charge - single_charge).abs() < 0.005,
            "{sql}: {sized_charge} vs {single_charge}"
        );
        let expected = if sql.contains("JOIN") { 18 } else { 9 };
        assert_eq!(sized.len(), expected, "{sql}");
        assert!(pages >= expected.div_ceil(4), "{sql}: {pages} pages");
    }
}

#[test]
fn later_pages_of_a_computed_result_see_writes_made_between_pages() {
    let (_d, e) = orders_engine();
    let sql = "SELECT c.status, COUNT(1) AS n FROM c GROUP BY c.status";
    let page = |continuation: Option<String>| {
        q_with(
            &e,
            "orders",
            sql,
            QueryOptions {
                max_items: Some(1),
                continuation,
                ..Default::default()
            },
        )
    };
    // Unchanged data: later pages come from the first page's result.
    let first = page(None);
    let second = page(first.continuation.clone());
    let whole = q(&e, "orders", sql).documents;
    assert_eq!(first.documents[..], whole[..1]);
    assert_eq!(second.documents[..], whole[1..2]);
    // A write between pages: the next page is cut from the result as it is now.
    load(
        &e,
        "orders",
        &STATUSES.map(|s| json!({"id": format!("late-{s}"), "customerId": "c0", "status": s})),
    );
    let third = page(second.continuation.clone());
    let now = q(&e, "orders", sql).documents;
    assert_ne!(now, whole, "the write changed every group's count");
    assert_eq!(third.documents[..], now[2..3]);
    assert!(third.continuation.is_none());
}

#[test]
fn a_continuation_survives_a_split() {
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 6_000);
    load(&e, "orders", &orders());
    let sql = "SELECT c.id FROM c ORDER BY c.id";
    let whole = q_with(
        &e,
        "orders",
        sql,
        QueryOptions {
            max_items: Some(1000),
            ..Default::default()
        },
    )
    .documents;
    let first = q_with(
        &e,
        "orders",
        sql,
        QueryOptions {
            max_items: Some(50),
            ..Default::default()
        },
    );
    e.set_throughput("db", "orders", Throughput::Manual(40_000))
        .unwrap();
    assert_eq!(e.container("db", "orders").unwrap().partition_count, 4);
    let rest = q_with(
        &e,
        "orders",
        sql,
        QueryOptions {
            max_items: Some(1000),
            continuation: first.continuation,
            ..Default::default()
        },
    );
    let mut all = first.documents;
    all.extend(rest.documents);
    assert_eq!(all, whole);
}

#[test]
fn a_computed_result_pages_on_through_a_split() {
    // Results computed whole (ties of an ORDER BY, DISTINCT, GROUP BY, FROM a subquery) are
    // in an order that depends on the ranges: a split between pages must not make later
    // pages repeat or skip rows. Each query pages through its own container, which splits
    // after the first page.
    let (_d, e) = engine();
    for (i, sql) in [
        "SELECT c.id, c.status FROM c ORDER BY c.status",
        "SELECT DISTINCT VALUE c.total FROM c",
        "SELECT c.customerId, COUNT(1) AS n FROM c GROUP BY c.customerId",
        "SELECT VALUE s.id FROM (SELECT c.id, c.total FROM c WHERE c.total > 10) s",
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("t{i}");
        container(&e, &name, &["/customerId"], 400);
        load(&e, &name, &orders());
        let whole = q_with(
            &e,
            &name,
            sql,
            QueryOptions {
                max_items: Some(1000),
                ..Default::default()
            },
        )
        .documents;
        let mut opts = QueryOptions {
            max_items: Some(7),
            ..Default::default()
        };
        let mut all = Vec::new();
        loop {
            let page = q_with(&e, &name, sql, opts.clone());
            all.extend(page.documents);
            let Some(token) = page.continuation else {
                break;
            };
            opts.continuation = Some(token);
            if e.container("db", &name).unwrap().partition_count == 1 {
                e.set_throughput("db", &name, Throughput::Manual(40_000))
                    .unwrap();
            }
        }
        assert_eq!(
            e.container("db", &name).unwrap().partition_count,
            4,
            "{sql}"
        );
        assert_eq!(all, whole, "{sql}");
    }
}

#[test]
fn cross_range_results_equal_a_single_range_run() {
    let (_d, e) = engine();
    container(&e, "one", &["/customerId"], 400);
    container(&e, "many", &["/customerId"], 60_000);
    load(&e, "one", &orders());
    load(&e, "many", &orders());
    for sql in [
        "SELECT c.id, c.total FROM c ORDER BY c.total DESC, c.id",
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE AVG(c.total) FROM c",
        "SELECT VALUE MAX(c.total) FROM c WHERE c.status = 'paid'",
        "SELECT c.status, COUNT(1) AS n, SUM(c.total) AS s, MIN(c.id) AS first FROM c GROUP BY c.status",
        "SELECT DISTINCT VALUE c.customerId FROM c",
        "SELECT TOP 5 c.id FROM c ORDER BY c.id",
        "SELECT c.id FROM c ORDER BY c.id OFFSET 10 LIMIT 5",
    ] {
        if sql.contains(", c.id") && sql.contains("ORDER BY c.total") {
            continue; // two ORDER BY keys need a composite index (tested below)
        }
        let mut a = q_with(
            &e,
            "one",
            sql,
            QueryOptions {
                max_items: Some(1000),
                ..Default::default()
            },
        )
        .documents;
        let mut b = q_with(
            &e,
            "many",
            sql,
            QueryOptions {
                max_items: Some(1000),
                ..Default::default()
            },
        )
        .documents;
        if !sql.contains("ORDER BY") {
            let key = |v: &cosmoscope::engine::Document| v.to_string();
            a.sort_by_key(key);
            b.sort_by_key(key);
        }
        assert_eq!(a, b, "{sql}");
    }
}

#[test]
fn order_by_on_two_paths_needs_a_composite_index() {
    let (_d, e) = engine();
    let mut s = ContainerSettings::new(vec!["/customerId".into()]);
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "indexingMode": "consistent",
            "includedPaths": [{"path": "/*"}],
            "compositeIndexes": [[{"path": "/status", "order": "ascending"}, {"path": "/total", "order": "descending"}]]
        }))
        .unwrap(),
    );
    e.create_container("db", "orders", s).unwrap();
    container(&e, "plain", &["/customerId"], 400);
    load(&e, "orders", &orders());
    let r = q_with(
        &e,
        "orders",
        "SELECT c.status, c.total FROM c ORDER BY c.status ASC, c.total DESC",
        QueryOptions {
            max_items: Some(1000),
            ..Default::default()
        },
    );
    assert_eq!(r.documents.len(), 120);
    // All directions reversed is served by the same index.
    assert!(
        e.query(
            "db",
            "orders",
            "SELECT * FROM c ORDER BY c.status DESC, c.total ASC",
            &QueryOptions::default()
        )
        .is_ok()
    );
    let err = e
        .query(
            "db",
            "orders",
            "SELECT * FROM c ORDER BY c.status ASC, c.total ASC",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
    assert!(err.message.contains("corresponding composite index"));
    assert!(
        e.query(
            "db",
            "plain",
            "SELECT * FROM c ORDER BY c.a, c.b",
            &QueryOptions::default()
        )
        .is_err()
    );
}

#[test]
fn undefined_and_null_follow_the_truth_tables() {
    let (_d, e) = engine();
    container(&e, "t", &["/id"], 400);
    load(
        &e,
        "t",
        &[json!({"id": "x", "a": null, "t": true, "f": false})],
    );
    let one = |expr: &str| -> Option<Value> {
        let r = q(&e, "t", &format!("SELECT VALUE {expr} FROM c"));
        r.documents.into_iter().next().map(Value::from)
    };
    assert_eq!(one("c.f AND c.missing"), Some(json!(false)));
    assert_eq!(one("c.missing AND c.f"), Some(json!(false)));
    assert_eq!(
        one("c.t AND c.missing"),
        None,
        "true AND undefined is undefined (dropped)"
    );
    assert_eq!(one("c.t OR c.missing"), Some(json!(true)));
    assert_eq!(one("c.f OR c.missing"), None);
    assert_eq!(one("NOT c.missing"), None);
    assert_eq!(one("c.a = null"), Some(json!(true)));
    assert_eq!(one("c.missing = null"), None, "undefined is not null");
    assert_eq!(one("1 = '1'"), None, "cross-type equality is undefined");
    assert_eq!(one("NOT (1 = '1')"), None);
    assert_eq!(one("IS_DEFINED(c.missing)"), Some(json!(false)));
    assert_eq!(one("c.missing ?? 'fallback'"), Some(json!("fallback")));
    assert_eq!(one("c.a ?? 'fallback'"), Some(json!(null)));
    assert_eq!(one("{'m': c.missing, 'a': c.a}"), Some(json!({"a": null})));
    assert_eq!(one("[1, c.missing, 2]"), Some(json!([1, 2])));
    // WHERE keeps exactly true.
    assert_eq!(
        q(&e, "t", "SELECT * FROM c WHERE c.missing")
            .documents
            .len(),
        0
    );
    assert_eq!(q(&e, "t", "SELECT * FROM c WHERE 1").documents.len(), 0);
    assert_eq!(q(&e, "t", "SELECT * FROM c WHERE c.t").documents.len(), 1);
}

#[test]
fn order_by_min_and_max_follow_the_type_order_and_min_max_refuse_arrays_and_objects() {
    let (_d, e) = engine();
    container(&e, "mixed", &["/id"], 400);
    let values = [
        json!("b"),
        json!(2),
        json!(null),
        json!(true),
        json!(false),
        json!([1]),
        json!({"k": 1}),
        json!("a"),
        json!(-1),
    ];
    let docs: Vec<Value> = values
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"id": format!("d{i}"), "v": v}))
        .collect();
    load(&e, "mixed", &docs);
    let sorted = q(&e, "mixed", "SELECT VALUE c.v FROM c ORDER BY c.v").documents;
    assert_eq!(
        sorted,
        vec![
            json!(null),
            json!(false),
            json!(true),
            json!(-1),
            json!(2),
            json!("a"),
            json!("b"),
            json!([1]),
            json!({"k": 1})
        ]
    );
    // MIN and MAX compare primitives in the same type order...
    let primitives = "FROM c WHERE IS_PRIMITIVE(c.v)";
    assert_eq!(
        q(&e, "mixed", &format!("SELECT VALUE MIN(c.v) {primitives}")).documents,
        vec![json!(null)]
    );
    assert_eq!(
        q(&e, "mixed", &format!("SELECT VALUE MAX(c.v) {primitives}")).documents,
        vec![json!("b")]
    );
    // ...and an array or object among their inputs makes them undefined (the .NET SDK's
    // reference interpreter and cross-partition merge): no value, and `{}` in an object.
    for agg in ["MIN", "MAX"] {
        assert_eq!(
            q(&e, "mixed", &format!("SELECT VALUE {agg}(c.v) FROM c")).documents,
            Vec::<Value>::new()
        );
        assert_eq!(
            q(&e, "mixed", &format!("SELECT {agg}(c.v) AS m FROM c")).documents,
            vec![json!({})]
        );
    }
    // Undefined inputs are skipped, not poisoning.
    assert_eq!(
        q(
            &e,
            "mixed",
            "SELECT VALUE MAX(IS_STRING(c.v) ? c.v : undefined) FROM c"
        )
        .documents,
        vec![json!("b")]
    );
}

#[test]
fn errors_point_at_the_offending_token_and_cost_a_little() {
    let (_d, e) = engine();
    container(&e, "t", &["/id"], 400);
    let err = e
        .query(
            "db",
            "t",
            "SELECT *\nFROM c\nWHERE c.x = = 1",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!((err.status.as_u16(), err.line), (400, Some(3)));
    assert!(err.column.is_some());
    assert!(err.request_charge > 0.0);
    let err = e
        .query(
            "db",
            "t",
            "SELECT NOSUCHFN(c.x) FROM c",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        (err.status.as_u16(), err.line, err.column),
        (400, Some(1), Some(8))
    );
    let err = e
        .query("db", "t", "SELECT VALUE * FROM c", &QueryOptions::default())
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
    let err = e
        .query("db", "missing", "SELECT * FROM c", &QueryOptions::default())
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 404);
}

#[test]
fn index_served_filters_load_only_matches_and_scans_load_everything() {
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 400);
    load(&e, "orders", &orders());
    let indexed = q(&e, "orders", "SELECT * FROM c WHERE c.status = 'paid'");
    assert_eq!(indexed.metrics.retrieved_document_count, 40);
    let scan = q(
        &e,
        "orders",
        "SELECT * FROM c WHERE UPPER(c.status) = 'PAID'",
    );
    assert_eq!(scan.metrics.retrieved_document_count, 120);
    assert_eq!(scan.documents, indexed.documents);
    assert!(scan.request_charge > indexed.request_charge);
    let top = q(
        &e,
        "orders",
        "SELECT TOP 3 * FROM c WHERE c.status = 'paid'",
    );
    assert_eq!(top.documents.len(), 3);
    assert_eq!(top.metrics.retrieved_document_count, 4, "TOP N loads N+1");
    let count = q(&e, "orders", "SELECT VALUE COUNT(1) FROM c");
    assert_eq!(count.documents, vec![json!(120)]);
    assert_eq!(
        count.metrics.retrieved_document_count, 0,
        "COUNT is answered from the index"
    );
}

#[test]
fn joins_subqueries_and_constructors() {
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 400);
    load(&e, "orders", &orders());
    let r = q(
        &e,
        "orders",
        "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags",
    );
    assert_eq!(r.documents, vec![json!(180)]);
    let r = q(
        &e,
        "orders",
        "SELECT c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 't2')",
    );
    assert_eq!(r.documents.len(), 30);
    let r = q(
        &e,
        "orders",
        "SELECT c.id, ARRAY(SELECT VALUE UPPER(t) FROM t IN c.tags) AS up FROM c WHERE c.id = 'o3'",
    );
    assert_eq!(
        r.documents,
        vec![json!({"id": "o3", "up": ["T0", "T1", "T2"]})]
    );
    let r = q(
        &e,
        "orders",
        "SELECT c.id, (SELECT VALUE COUNT(1) FROM t IN c.tags) AS n FROM c WHERE c.id = 'o7'",
    );
    assert_eq!(r.documents, vec![json!({"id": "o7", "n": 3})]);
    let r = q(
        &e,
        "orders",
        "SELECT VALUE t FROM t IN c.tags WHERE t = 't1'",
    );
    assert_eq!(r.documents.len(), 60);
    let r = q(
        &e,
        "orders",
        "SELECT 1 AS one, 'a' || 'b' AS ab, 5 & 3 AS band, -1 >>> 28 AS shr",
    );
    assert_eq!(
        r.documents,
        vec![json!({"one": 1, "ab": "ab", "band": 1, "shr": 15})]
    );
    let r = q(
        &e,
        "orders",
        "SELECT c.id, c.total * 2 FROM c WHERE c.id = 'o1'",
    );
    assert_eq!(r.documents[0]["$1"], json!(75));
}

#[test]
fn a_streaming_scan_resumes_where_it_stopped_even_after_a_split() {
    let (_d, e) = engine();
    container(&e, "orders", &["/customerId"], 6_000);
    load(&e, "orders", &orders());
    let sql = "SELECT c.id, t FROM c JOIN t IN c.tags";
    let whole = q_with(
        &e,
        "orders",
        sql,
        QueryOptions {
            max_items: Some(1000),
            ..Default::default()
        },
    );
    let first = q_with(
        &e,
        "orders",
        sql,
        QueryOptions {
            max_items: Some(25),
            ..Default::default()
        },
    );
    assert_eq!(first.documents.len(), 25);
    e.set_throughput("db", "orders", Throughput::Manual(40_000))
        .unwrap();
    let mut docs = first.documents.clone();
    let mut opts = QueryOptions {
        max_items: Some(25),
        continuation: first.continuation,
        ..Default::default()
    };
    while opts.continuation.is_some() {
        let page = q_with(&e, "orders", sql, opts.clone());
        // Later pages load only what they scan, never the whole container again.
        assert!(
            page.metrics.retrieved_document_count < 120,
            "{:?}",
            page.metrics
        );
        docs.extend(page.documents);
        opts.continuation = page.continuation;
    }
    // Each range is read in document order (it is small): the split range's children each
    // continue that order after the page's last item, one child after the other, so the
    // rows after the split come in another order but none is lost or repeated.
    assert_eq!(docs[..25], whole.documents[..25]);
    let sorted = |rows: &[cosmoscope::engine::Document]| {
        let mut rows: Vec<String> = rows.iter().map(|d| d.to_string()).collect();
        rows.sort();
        rows
    };
    assert_eq!(sorted(&docs), sorted(&whole.documents));
    // TOP across pages stops at N results in total.
    let mut opts = QueryOptions {
        max_items: Some(4),
        ..Default::default()
    };
    let mut n = 0;
    loop {
        let page = q_with(&e, "orders", "SELECT TOP 10 c.id FROM c", opts.clone());
        n += page.documents.len();
        match page.continuation {
            Some(t) => opts.continuation = Some(t),
            None => break,
        }
    }
    assert_eq!(n, 10);
}

#[test]
fn items_read_through_their_member_directory_and_by_walking_the_text_agree() {
    // Compact items carry a directory of their top-level members; items over 64 KB, and
    // items with an escaped member name, are stored without one and read by walking the
    // text. Partial reads of both kinds give the same answers.
    let (_dir, e) = engine();
    container(&e, "mixed", &["/customerId"], 12_000);
    let docs: Vec<Value> = (0..40)
        .map(|i| {
            let mut d = json!({
                "id": format!("m{i}"),
                "customerId": format!("c{}", i % 5),
                "n": i,
                "o": {"x": i % 7, "y": [i, "},\""]},
                "s": format!("s\"{i}"),
            });
            match i % 4 {
                1 => d["big"] = json!("z".repeat(70_000)),
                2 => d["a\"b"] = json!(i),
                _ => {}
            }
            d
        })
        .collect();
    load(&e, "mixed", &docs);
    let r = q(
        &e,
        "mixed",
        "SELECT c.id, c.o.x, c.s, c['a\"b'] AS q FROM c WHERE c.n >= 3 AND c.o.x > 2",
    );
    let mut expected: Vec<Value> = docs
        .iter()
        .filter(|d| d["n"].as_i64().unwrap() >= 3 && d["o"]["x"].as_i64().unwrap() > 2)
        .map(|d| {
            let mut row = json!({"id": d["id"], "x": d["o"]["x"], "s": d["s"]});
            if let Some(q) = d.get("a\"b") {
                row["q"] = q.clone();
            }
            row
        })
        .collect();
    let mut got: Vec<Value> = r.documents.into_iter().map(Value::from).collect();
    let by_id = |v: &Value| v["id"].as_str().unwrap().to_string();
    expected.sort_by_key(by_id);
    got.sort_by_key(by_id);
    assert_eq!(got, expected);
    // The partition key read for the logical-partition list, from both kinds of items.
    let r = q(
        &e,
        "mixed",
        "SELECT VALUE c.id FROM c WHERE UPPER(c.id) IN ('M1', 'M2', 'M4')",
    );
    let mut logical: Vec<Value> = r
        .partitions
        .iter()
        .flat_map(|p| p.logical_partitions.clone())
        .collect();
    logical.sort_by_key(|v| v.to_string());
    assert_eq!(logical, [json!("c1"), json!("c2"), json!("c4")]);
    let r = q(&e, "mixed", "SELECT VALUE SUM(LENGTH(c.big)) FROM c");
    assert_eq!(r.documents[0], json!(70_000 * 10));
}

/// Without ORDER BY, a range's documents come in document order (`_rid`, creation), as the
/// docs' examples show them: a replace keeps an item's place, a delete and re-create moves it
/// to the end, pages follow the same order, and sums add up in it (average.md's example is
/// 29.2 only in that order).
#[test]
fn results_without_order_by_come_in_document_order() {
    let (_d, e) = engine();
    container(&e, "products", &["/id"], 400);
    let prices = [
        ("b", 20.28),
        ("c", 5.11),
        ("a", 62.21),
        ("e", 1.0),
        ("d", 2.0),
    ];
    for (id, price) in prices {
        let category = if price > 3.0 { "small-bags" } else { "other" };
        load(
            &e,
            "products",
            &[json!({"id": id, "price": price, "category": category})],
        );
    }
    let ids = |sql: &str, page: usize| -> Vec<String> {
        let (docs, _, _) = all_pages(&e, "products", sql, page);
        docs.iter()
            .map(|d| d["id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let sql = "SELECT c.id FROM c";
    assert_eq!(ids(sql, 100), ["b", "c", "a", "e", "d"]);
    assert_eq!(ids(sql, 2), ["b", "c", "a", "e", "d"]);
    assert_eq!(
        ids("SELECT c.id FROM c WHERE c.price > 3", 1),
        ["b", "c", "a"]
    );
    assert_eq!(ids("SELECT TOP 2 c.id FROM c", 100), ["b", "c"]);
    let avg = q(
        &e,
        "products",
        "SELECT VALUE AVG(p.price) FROM products p WHERE p.category = 'small-bags'",
    );
    assert_eq!(avg.documents, vec![json!(29.2)]);

    e.replace_item(
        "db",
        "products",
        json!({"id": "b", "price": 20.28, "category": "small-bags", "v": 2})
            .to_string()
            .as_bytes(),
        None,
    )
    .unwrap();
    e.delete_item("db", "products", "c", &json!("c"), None)
        .unwrap();
    load(&e, "products", &[json!({"id": "c", "price": 5.11})]);
    assert_eq!(ids(sql, 100), ["b", "a", "e", "d", "c"]);
    assert_eq!(ids(sql, 3), ["b", "a", "e", "d", "c"]);
}

/// A range above `DOCUMENT_ORDER_MAX_ITEMS` streams in key order instead of being sorted on
/// every page; its pages still resume exactly, across a split too. An index lookup with few
/// candidates in it still returns them in document order.
#[test]
fn a_large_range_streams_in_key_order() {
    let (_d, e) = engine();
    container(&e, "big", &["/pk"], 400);
    // Enough that both children of the split below stay large.
    let n = 3 * cosmoscope::query::DOCUMENT_ORDER_MAX_ITEMS as usize;
    let lines: Vec<String> = (0..n)
        .map(|i| {
            json!({"id": format!("i{i:05}"), "pk": format!("p{}", i % 97), "g": i % 50}).to_string()
        })
        .collect();
    let records: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(line, json)| cosmoscope::engine::import::Record {
            line,
            json: json.as_bytes(),
        })
        .collect();
    e.import_records("db", "big", &records, &mut |_| {})
        .unwrap();
    let sql = "SELECT VALUE c.id FROM c";
    let whole = q_with(
        &e,
        "big",
        sql,
        QueryOptions {
            max_items: Some(n + 1),
            ..Default::default()
        },
    );
    let whole: Vec<Value> = whole.documents.iter().map(|d| d.value().clone()).collect();
    assert_eq!(whole.len(), n);
    let created: Vec<Value> = (0..n).map(|i| json!(format!("i{i:05}"))).collect();
    assert!(
        whole != created,
        "a large range is not sorted by document number"
    );
    let looked_up = q_with(
        &e,
        "big",
        "SELECT VALUE c.id FROM c WHERE c.g = 7",
        QueryOptions {
            max_items: Some(n),
            ..Default::default()
        },
    );
    assert_eq!(looked_up.access.kind, "index-lookup");
    let looked_up: Vec<Value> = looked_up
        .documents
        .iter()
        .map(|d| d.value().clone())
        .collect();
    let expected: Vec<Value> = (7..n)
        .step_by(50)
        .map(|i| json!(format!("i{i:05}")))
        .collect();
    assert_eq!(looked_up, expected);
    // Pages, with a split after the first: the same rows, each once, in the same order
    // (key order is one order across the split range's children).
    let mut opts = QueryOptions {
        max_items: Some(1000),
        ..Default::default()
    };
    let mut paged = Vec::new();
    loop {
        let page = q_with(&e, "big", sql, opts.clone());
        paged.extend(page.documents.iter().map(|d| d.value().clone()));
        if paged.len() == 1000 {
            e.set_throughput("db", "big", Throughput::Manual(20_000))
                .unwrap();
        }
        match page.continuation {
            Some(t) => opts.continuation = Some(t),
            None => break,
        }
    }
    // (Both children are large, else the later one would be read in document order.)
    let counts = q(&e, "big", "SELECT VALUE COUNT(1) FROM c");
    assert_eq!(counts.partitions.len(), 2);
    for p in &counts.partitions {
        assert!(p.metrics.output_document_count > cosmoscope::query::DOCUMENT_ORDER_MAX_ITEMS);
    }
    assert_eq!(paged.len(), whole.len());
    assert!(paged == whole, "the pages differ from the unpaged result");
}

/// Pages of ranges read in document order stay exact when the range splits between pages,
/// twice, whatever the page size: every row once (rows of one item may straddle pages).
#[test]
fn document_order_pages_survive_repeated_splits() {
    let sql = "SELECT c.id, t FROM c JOIN t IN c.tags";
    for page in [1, 2, 3, 7] {
        let (_d, e) = engine();
        container(&e, "orders", &["/pk"], 6_000);
        let items: Vec<Value> = (0..40)
            .map(|i| {
                let tags: Vec<String> = (0..=i % 3).map(|t| format!("t{t}")).collect();
                json!({"id": format!("o{i}"), "pk": format!("k{}", i % 7), "tags": tags})
            })
            .collect();
        load(&e, "orders", &items);
        let whole: Vec<String> = q(&e, "orders", sql)
            .documents
            .iter()
            .map(|d| d.to_string())
            .collect();
        let mut opts = QueryOptions {
            max_items: Some(page),
            ..Default::default()
        };
        let mut rows = Vec::new();
        let mut pages = 0;
        loop {
            let r = q_with(&e, "orders", sql, opts.clone());
            rows.extend(r.documents.iter().map(|d| d.to_string()));
            pages += 1;
            if pages == 1 || pages == 3 {
                let ru = if pages == 1 { 40_000 } else { 100_000 };
                e.set_throughput("db", "orders", Throughput::Manual(ru))
                    .unwrap();
            }
            match r.continuation {
                Some(t) => opts.continuation = Some(t),
                None => break,
            }
        }
        assert_eq!(rows[..page], whole[..page], "page size {page}");
        let (mut rows, mut whole) = (rows, whole);
        rows.sort();
        whole.sort();
        assert_eq!(rows, whole, "page size {page}");
    }
}

/// The pages of an index lookup read in document order continue from what the page that
/// entered each range read and sorted (the engine keeps it between pages): they return and
/// charge exactly what pages from an engine that keeps nothing do, and a write between
/// pages is seen by the pages after it.
#[test]
fn pages_of_an_index_lookup_continue_the_order_a_page_kept() {
    let dir = tempfile::tempdir().unwrap();
    let setup = Engine::open(dir.path()).unwrap();
    setup.create_database("db").unwrap();
    container(&setup, "orders", &["/customerId"], 24_000); // 4 ranges
    // Created in id order; keys follow the customer's hash, so document order is another.
    let docs: Vec<Value> = (0..400)
        .map(|i| json!({"id": format!("o{i:03}"), "customerId": format!("c{}", (i * 7) % 61), "g": i % 4}))
        .collect();
    load(&setup, "orders", &docs);
    drop(setup);
    let sql = "SELECT c.id, c.v FROM c WHERE c.g = 1";
    let page = |e: &Engine, continuation: Option<String>| {
        let opts = QueryOptions {
            max_items: Some(9),
            continuation,
            ..Default::default()
        };
        q_with(e, "orders", sql, opts)
    };
    let report = |r: &QueryResult| {
        (
            r.documents
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>(),
            r.continuation.clone(),
            r.request_charge,
            r.metrics.retrieved_document_count,
            r.metrics.output_document_count,
            r.metrics.index_hit_document_count,
        )
    };
    // One engine for every page, against a fresh engine for each page.
    let kept = Engine::open(dir.path()).unwrap();
    let mut with_kept = Vec::new();
    let mut token = None;
    loop {
        let r = page(&kept, token);
        assert_eq!(r.access.kind, "index-lookup", "{:?}", r.access);
        with_kept.push(report(&r));
        token = r.continuation;
        if token.is_none() {
            break;
        }
    }
    drop(kept);
    let mut afresh = Vec::new();
    let mut token = None;
    loop {
        let e = Engine::open(dir.path()).unwrap();
        let r = page(&e, token);
        afresh.push(report(&r));
        token = r.continuation;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(with_kept, afresh);
    let ids: Vec<String> = with_kept
        .iter()
        .flat_map(|p| p.0.iter())
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 100);
    assert!(
        !ids.is_sorted(),
        "document order within each range, ranges in key order: not the ids' order overall"
    );
    // A write between pages: the pages after it return what a query run after it does
    // from there on, although the first page kept its lookup and the order of the range
    // it stopped in. A replace keeps the item's place; an insert comes last in its range.
    let e = Engine::open(dir.path()).unwrap();
    let after_write = |write: &dyn Fn(&str)| {
        let first = page(&e, None);
        let delivered = first.documents.len();
        write(&ids[delivered + 1]);
        let mut rest = Vec::new();
        let mut token = first.continuation;
        while let Some(t) = token {
            let r = page(&e, Some(t));
            rest.extend(r.documents.iter().map(|d| d.value().clone()));
            token = r.continuation;
        }
        let opts = QueryOptions {
            max_items: Some(1_000),
            ..Default::default()
        };
        let whole = q_with(&e, "orders", sql, opts);
        assert!(whole.continuation.is_none());
        let whole: Vec<Value> = whole.documents.iter().map(|d| d.value().clone()).collect();
        assert_eq!(rest, whole[delivered..]);
        rest
    };
    let original = |id: &str| docs.iter().find(|d| d["id"] == json!(id)).unwrap().clone();
    let rest = after_write(&|id| {
        let mut doc = original(id);
        doc["v"] = json!(2);
        load(&e, "orders", &[doc]);
    });
    assert_eq!(rest[1]["v"], json!(2), "{}", rest[1]);
    let rest = after_write(&|id| {
        e.delete_item("db", "orders", id, &original(id)["customerId"], None)
            .unwrap();
    });
    assert_eq!(rest.len(), 100 - 10, "one of 100 gone, 9 on the first page");
    let rest = after_write(&|_| {
        load(
            &e,
            "orders",
            &[json!({"id": "new", "customerId": "c5", "g": 1, "v": 3})],
        );
    });
    assert!(rest.iter().any(|d| d["id"] == json!("new")));
}

/// A filter whose conjuncts the index answers exactly is not evaluated again on the items
/// a lookup selects; wherever the index holds less than the value (a cut string, an
/// array's positions, zero's sign), the filter still decides. Each query keeps on the
/// indexed containers exactly the items a scan keeps on an unindexed one: on one whose
/// index cuts strings at this build's length, and on one a build from before generations
/// kept their own length left (cut at 512 bytes), with strings of 301 bytes exact in one
/// and cut in the other.
#[test]
fn an_index_lookup_keeps_exactly_what_the_filter_keeps() {
    let (_dir, e) = engine();
    let long = |end: &str| format!("{}{end}", "a".repeat(600));
    let mid = |end: &str| format!("{}{end}", "m".repeat(300));
    let values = [
        json!(0),
        json!(-0.0),
        json!(1),
        json!(1.5),
        json!(-3),
        json!(true),
        json!(false),
        Value::Null,
        json!("a"),
        json!(long("x")),
        json!(long("y")),
        json!("a".repeat(512)),
        json!(mid("x")),
        json!(mid("y")),
        json!([1]),
        json!([0, 1]),
        json!({"w": 1}),
        json!({"w": [1]}),
    ];
    let docs: Vec<Value> = (0..64)
        .map(|i| {
            let mut d = json!({"id": format!("d{i:02}"), "pk": format!("p{}", i % 5), "g": i % 3});
            if i % 17 != 16 {
                d["v"] = values[i % values.len()].clone();
            }
            d
        })
        .collect();
    let all = json!({"indexingMode": "consistent", "includedPaths": [{"path": "/*"}]});
    for (name, policy) in [
        ("idx", all.clone()),
        ("legacy", all),
        (
            "scan",
            json!({"indexingMode": "consistent", "includedPaths": [{"path": "/none/?"}], "excludedPaths": [{"path": "/*"}]}),
        ),
    ] {
        let mut s = ContainerSettings::new(vec!["/pk".into()]);
        s.throughput = Throughput::Manual(400);
        s.indexing_policy = Some(serde_json::from_value(policy).unwrap());
        e.create_container("db", name, s).unwrap();
        if name == "legacy" {
            e.store()
                .write_as_before_string_lengths("db", name)
                .unwrap();
        }
        load(&e, name, &docs);
    }
    let string_bytes = |name: &str| {
        let store = e.store();
        let txn = store.read_txn().unwrap();
        store
            .container(&txn, "db", name)
            .unwrap()
            .index_string_bytes
    };
    assert_eq!(string_bytes("idx"), testing::STRING_BYTES);
    assert_eq!(string_bytes("legacy"), testing::LEGACY_STRING_BYTES);
    let params: HashMap<String, Value> = [
        ("long", json!(long("x"))),
        ("cut", json!("a".repeat(512))),
        ("mid", json!(mid("x"))),
        ("zero", json!(-0.0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let queries = [
        "c.v = 0",
        "c.v = @zero",
        "c.v > 0",
        "c.v >= 0 AND c.g = 1",
        "c.v < 1",
        "1 > c.v",
        "c.v BETWEEN 0 AND 1",
        "c.v BETWEEN -0 AND 1.5 AND c.g != 2",
        "c.v IN (0, 1, 'a', null)",
        "c.v = true",
        "c.v > false",
        "c.v = null",
        "c.v = 'a'",
        "c.v = @long",
        "c.v = @cut",
        "c.v > @cut",
        "c.v IN (@long, 'a')",
        "c.v = @mid",
        "c.v > @mid",
        "c.v <= @mid AND c.g = 1",
        "c.v IN (@mid, @cut)",
        "STARTSWITH(c.v, @mid)",
        "c.v[0] = 1",
        "c.v[1] = 1",
        "c.v.w = 1",
        "c.v = 1 AND c.g = 1",
        "c.v = 1 OR c.v = 'a'",
        "STARTSWITH(c.v, 'aa') AND c.g = 0",
        "c.pk = 'p1' AND c.v >= 0",
    ];
    let selects = [
        "SELECT c.id FROM c",
        "SELECT * FROM c",
        "SELECT VALUE c.g FROM c",
    ];
    for (filter, select) in queries.iter().flat_map(|f| selects.map(|s| (f, s))) {
        let sql = format!("{select} WHERE {filter}");
        let ids = |container: &str| {
            let opts = QueryOptions {
                params: params.clone(),
                max_items: Some(1000),
                ..Default::default()
            };
            let r = q_with(&e, container, &sql, opts);
            // A whole item by its id: `_rid` and `_self` name the container.
            let mut ids: Vec<String> = r
                .documents
                .iter()
                .map(|d| {
                    if select.contains('*') {
                        d["id"].to_string()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            ids.sort();
            (ids, r.access.kind)
        };
        let (scanned, scan_access) = ids("scan");
        assert_eq!(scan_access, "scan", "{sql}");
        for container in ["idx", "legacy"] {
            let (indexed, access) = ids(container);
            assert_eq!(access, "index-lookup", "{container}: {sql}");
            assert_eq!(indexed, scanned, "{container}: {sql}");
        }
    }
}

/// Each range's logical partitions, as a query lists them, name every key the way its items
/// hold it: a top-level string read straight from the stored JSON, and every other key (a
/// number, `true`, `null`, an escaped string, a missing one as `{}`, a nested path, a
/// hierarchical key) through an extractor of the key's paths.
#[test]
fn logical_partitions_name_each_key_as_its_items_hold_it() {
    let (_dir, e) = engine();
    // Container, partition key paths, items, and the partitions they name.
    type Case = (
        &'static str,
        &'static [&'static str],
        Vec<Value>,
        Vec<Value>,
    );
    let cases: [Case; 3] = [
        (
            "flat",
            &["/pk"],
            vec![
                json!({"id": "a", "pk": "s"}),
                json!({"id": "b", "pk": 7}),
                json!({"id": "c", "pk": true}),
                json!({"id": "d", "pk": null}),
                json!({"id": "e"}),
                json!({"id": "f", "pk": "say \"hi\""}),
            ],
            vec![
                json!("s"),
                json!(7),
                json!(true),
                json!(null),
                json!({}),
                json!("say \"hi\""),
            ],
        ),
        (
            "nested",
            &["/a/b"],
            vec![
                json!({"id": "a", "a": {"b": "x"}}),
                json!({"id": "b", "a": {"b": 2}}),
                json!({"id": "c", "a": {}}),
            ],
            vec![json!("x"), json!(2), json!({})],
        ),
        (
            "hierarchical",
            &["/t", "/u"],
            vec![
                json!({"id": "a", "t": "x", "u": 1}),
                json!({"id": "b", "t": "y"}),
            ],
            vec![json!(["x", 1]), json!(["y", {}])],
        ),
    ];
    for (name, paths, docs, mut want) in cases {
        container(&e, name, paths, 400);
        load(&e, name, &docs);
        let r = q(&e, name, "SELECT c.id FROM c");
        assert_eq!(r.documents.len(), docs.len(), "{name}");
        let mut got = RangeReport::of(&r).logical;
        want.sort_by_key(Value::to_string);
        got.sort_by_key(Value::to_string);
        assert_eq!(got, want, "{name}");
    }
}

/// A range read in document order meets its logical partitions out of key order, and each
/// is listed once, in the order the range first produced it: for a few partitions (found by
/// looking at each) and for many (found through a map), by a scan and by an index lookup.
#[test]
fn a_range_in_document_order_lists_each_logical_partition_once() {
    let (_dir, e) = engine();
    for partitions in [5, 40] {
        let name = format!("p{partitions}");
        container(&e, &name, &["/pk"], 400);
        // Items go in round after round, so document order visits the partitions in turn.
        let docs: Vec<Value> = (0..partitions * 4)
            .map(|i| json!({"id": format!("i{i}"), "pk": format!("k{}", i % partitions), "n": i}))
            .collect();
        load(&e, &name, &docs);
        for sql in [
            "SELECT c.id FROM c",
            "SELECT c.id FROM c WHERE c.n >= 0",
            "SELECT c.id FROM c WHERE c.n >= 2",
        ] {
            let r = q(&e, &name, sql);
            let access = if sql.contains("WHERE") {
                "index-lookup"
            } else {
                "scan"
            };
            assert_eq!(r.access.kind, access, "{name}: {sql}");
            let listed: Vec<Value> = r
                .partitions
                .iter()
                .flat_map(|p| p.logical_partitions.clone())
                .collect();
            let first_seen: Vec<Value> = (0..partitions)
                .map(|i| json!(format!("k{}", i)))
                .cycle()
                .skip(if sql.ends_with(">= 2") { 2 } else { 0 })
                .take(partitions)
                .collect();
            assert_eq!(listed, first_seen, "{name}: {sql}");
        }
    }
}
