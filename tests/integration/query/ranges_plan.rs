//! Queries scoped to one physical partition (the REST API's
//! `x-ms-documentdb-partitionkeyrangeid`, `QueryOptions::range`) and the query plan SDKs
//! run cross-partition queries with (`Backend::query_plan`): every shape the plan rewrites
//! is run range by range with the rewritten query, the ranges' results merged the way the
//! SDKs merge them (azure-sdk-for-js `queryExecutionContext/`, azure-sdk-for-python
//! `_execution_context/`), and compared with the engine running the whole query itself.

use std::collections::{HashMap, HashSet};

use cosmoscope::engine::{
    Backend, ContainerSettings, Engine, IndexingPolicy, QueryOptions, QueryPlan, Throughput,
};
use cosmoscope::error::substatus;
use serde_json::{Value, json};

use crate::support::fixture::{self, DB, Fixture, err};
use crate::support::query_db::normalize;

/// Items per range page: small, so every range's query continues over several pages.
const PAGE: usize = 7;

/// A `/pk` container with four physical partitions and 240 items: `n` unique, `g` a group
/// (0-4), `s` a string, `opt` on every third item only.
fn store() -> Fixture {
    let fx = fixture::open();
    let policy: IndexingPolicy = serde_json::from_value(json!({
        "compositeIndexes": [[{"path": "/g", "order": "ascending"},
                              {"path": "/n", "order": "descending"}]]
    }))
    .expect("indexing policy");
    let settings = ContainerSettings {
        throughput: Throughput::Manual(24_000),
        indexing_policy: Some(policy),
        ..fixture::pk_settings()
    };
    fx.container("c", settings);
    for i in 0..240 {
        let mut doc = json!({
            "id": format!("i{i}"),
            "pk": format!("k{}", i % 37),
            "n": (i * 7919) % 240,
            "g": i % 5,
            "s": format!("s{:03}", (i * 13) % 97),
        });
        if i % 3 == 0 {
            doc["opt"] = json!(i % 4);
        }
        fx.create("c", &doc);
    }
    assert_eq!(ranges(&fx.engine).len(), 4, "precondition: four ranges");
    fx
}

fn ranges(engine: &Engine) -> Vec<String> {
    engine
        .partition_key_ranges(DB, "c")
        .expect("pkranges")
        .into_iter()
        .map(|r| r.id)
        .collect()
}

fn options(params: &[(&str, Value)]) -> QueryOptions {
    QueryOptions {
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        max_items: Some(PAGE),
        ..Default::default()
    }
}

/// Every result of `sql` with `opts`, following continuations.
fn drain(engine: &Engine, sql: &str, mut opts: QueryOptions) -> Vec<Value> {
    let mut out = Vec::new();
    for _ in 0..1000 {
        let page = engine
            .query(DB, "c", sql, &opts)
            .unwrap_or_else(|e| panic!("{sql} on range {:?}: {e}", opts.range));
        out.extend(page.documents.into_iter().map(Value::from));
        match page.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return out,
        }
    }
    panic!("{sql}: the pages never ended");
}

/// The ranges a client queries for `plan`: those of the container's pkranges that overlap
/// its `queryRanges`, as the SDKs' routing map providers pick them.
fn overlapping(engine: &Engine, plan: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for r in engine.partition_key_ranges(DB, "c").expect("pkranges") {
        let hits = plan["queryRanges"]
            .as_array()
            .expect("queryRanges")
            .iter()
            .any(|q| {
                let (min, max) = (q["min"].as_str().unwrap(), q["max"].as_str().unwrap());
                let max_incl = q["isMaxInclusive"].as_bool().unwrap();
                let starts_before_end = if max_incl {
                    r.min_inclusive.as_str() <= max
                } else {
                    r.min_inclusive.as_str() < max
                };
                starts_before_end && min < r.max_exclusive.as_str()
            });
        if hits {
            out.push(r.id);
        }
    }
    out
}

/// Runs `sql` the way an SDK runs a cross-partition query with a plan: the rewritten query
/// on each range the plan names, merged on the client.
fn run_with_plan(engine: &Engine, sql: &str, params: &[(&str, Value)]) -> (QueryPlan, Vec<Value>) {
    let plan = engine
        .query_plan(DB, "c", sql, &options(params))
        .unwrap_or_else(|e| panic!("plan of {sql}: {e}"));
    let json = plan.to_json();
    assert_eq!(
        overlapping(engine, &json),
        plan.ranges,
        "{sql}: the plan's ranges are those its queryRanges overlap"
    );
    let per_range: Vec<Vec<Value>> = plan
        .ranges
        .iter()
        .map(|id| {
            let opts = QueryOptions {
                range: Some(id.clone()),
                ..options(params)
            };
            drain(engine, &plan.range_query(sql), opts)
        })
        .collect();
    let merged = merge(&json["queryInfo"], per_range);
    (plan, merged)
}

// ---- the SDKs' client-side pipeline, small ----

/// Cosmos type order for ORDER BY items and MIN/MAX: undefined < null < false < true <
/// numbers < strings (both SDKs' comparators).
fn cmp_values(a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
    fn rank(v: Option<&Value>) -> u8 {
        match v {
            None => 0,
            Some(Value::Null) => 1,
            Some(Value::Bool(_)) => 2,
            Some(Value::Number(_)) => 4,
            Some(Value::String(_)) => 5,
            Some(_) => 6,
        }
    }
    match (a, b) {
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x.cmp(y),
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x.partial_cmp(&y).unwrap()
        }
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Merges the ranges' ORDER BY rows by `orderByItems` (ties to the earlier range, as both
/// SDKs' document producer comparators break them), yielding each row's `payload`.
fn merge_ordered(
    orders: &[Value],
    mut ranges: Vec<std::collections::VecDeque<Value>>,
) -> Vec<Value> {
    let key_order = |a: &Value, b: &Value| {
        for (i, o) in orders.iter().enumerate() {
            let c = cmp_values(
                a["orderByItems"][i].get("item"),
                b["orderByItems"][i].get("item"),
            );
            let c = if o == "Descending" { c.reverse() } else { c };
            if c.is_ne() {
                return c;
            }
        }
        std::cmp::Ordering::Equal
    };
    let mut out = Vec::new();
    loop {
        let mut best: Option<usize> = None;
        for (i, r) in ranges.iter().enumerate() {
            let Some(head) = r.front() else { continue };
            match best {
                Some(b) if key_order(head, &ranges[b][0]).is_ge() => {}
                _ => best = Some(i),
            }
        }
        let Some(b) = best else { return out };
        let row = ranges[b].pop_front().unwrap();
        out.push(
            row.get("payload")
                .cloned()
                .expect("every ORDER BY row has a payload"),
        );
    }
}

/// One aggregate's running value across ranges (Node's aggregators, which read `item2`
/// where the rewrite gives it).
#[derive(Default)]
struct Agg {
    kind: String,
    count: f64,
    sum: Option<f64>,
    best: Option<Value>,
    undefined: bool,
    seen: bool,
}

impl Agg {
    fn new(kind: &str) -> Agg {
        Agg {
            kind: kind.to_string(),
            ..Agg::default()
        }
    }

    fn add(&mut self, cell: &Value) {
        let partial = cell.get("item2").or_else(|| cell.get("item"));
        match self.kind.as_str() {
            "Count" => self.count += partial.and_then(Value::as_f64).unwrap_or(0.0),
            "Sum" => {
                if let Some(n) = partial.and_then(Value::as_f64) {
                    self.sum = Some(self.sum.unwrap_or(0.0) + n);
                }
            }
            "Average" => {
                if let Some(p) = partial.filter(|p| p.get("sum").is_some()) {
                    self.sum = Some(self.sum.unwrap_or(0.0) + p["sum"].as_f64().unwrap());
                    self.count += p["count"].as_f64().unwrap();
                }
            }
            "Min" | "Max" => {
                let p = partial.expect("MIN/MAX partial");
                if p["count"].as_f64() == Some(0.0) {
                    return;
                }
                let key = if self.kind == "Min" { "min" } else { "max" };
                match p.get(key) {
                    None => self.undefined = true,
                    Some(v) => {
                        let better = match &self.best {
                            None => true,
                            Some(b) => {
                                let c = cmp_values(Some(v), Some(b));
                                if self.kind == "Min" {
                                    c.is_lt()
                                } else {
                                    c.is_gt()
                                }
                            }
                        };
                        if better {
                            self.best = Some(v.clone());
                        }
                    }
                }
            }
            other => panic!("unknown aggregate {other}"),
        }
        self.seen = true;
    }

    /// `None` for undefined.
    fn result(&self) -> Option<Value> {
        match self.kind.as_str() {
            "Count" => Some(json!(self.count)),
            "Sum" => self.sum.map(|s| json!(s)),
            "Average" if self.count > 0.0 => self.sum.map(|s| json!(s / self.count)),
            "Average" => None,
            _ if self.undefined => None,
            _ => self.best.clone(),
        }
    }
}

/// One payload member of a group: its aggregate, or the first value seen (Node's static
/// value aggregator).
struct Member {
    alias: String,
    agg: Option<Agg>,
    first: Option<Value>,
}

/// One group's state: a VALUE aggregate, or a VALUE without one (its first value), or the
/// members of an object payload.
#[derive(Default)]
struct Group {
    value_agg: Option<Agg>,
    value: Option<Value>,
    members: Vec<Member>,
}

/// GROUP BY and aggregates: rows grouped by `groupByItems` (one group without them), each
/// payload member aggregated by its type, in first-seen order of the groups.
fn merge_grouped(info: &Value, rows: Vec<Value>) -> Vec<Value> {
    let value = info["hasSelectValue"].as_bool().unwrap();
    let kinds = info["groupByAliasToAggregateType"].as_object().unwrap();
    let value_kind = info["aggregates"].as_array().unwrap().first().cloned();
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Group> = HashMap::new();
    for row in rows {
        let (key, payload) = match row.get("groupByItems") {
            Some(items) => (items.to_string(), row["payload"].clone()),
            None if value => (String::new(), row.clone()),
            None => (String::new(), row["payload"].clone()),
        };
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        let group = groups.entry(key).or_default();
        if value {
            match &value_kind {
                Some(kind) => group
                    .value_agg
                    .get_or_insert_with(|| Agg::new(kind.as_str().unwrap()))
                    .add(&payload[0]),
                None => {
                    group.value.get_or_insert(payload);
                }
            }
            continue;
        }
        for (alias, kind) in kinds {
            let member = payload.get(alias);
            let slot = match group.members.iter().position(|m| &m.alias == alias) {
                Some(i) => i,
                None => {
                    group.members.push(Member {
                        alias: alias.clone(),
                        agg: kind.as_str().map(Agg::new),
                        first: member.cloned(),
                    });
                    group.members.len() - 1
                }
            };
            if let (Some(agg), Some(m)) = (&mut group.members[slot].agg, member) {
                agg.add(m);
            }
        }
    }
    let mut out = Vec::new();
    for key in order {
        let group = &groups[&key];
        if value {
            match &group.value_agg {
                Some(a) => out.extend(a.result()),
                None => out.extend(group.value.clone()),
            }
            continue;
        }
        let mut obj = serde_json::Map::new();
        for m in &group.members {
            let v = match &m.agg {
                Some(a) => a.result(),
                None => m.first.clone(),
            };
            if let Some(v) = v {
                obj.insert(m.alias.clone(), v);
            }
        }
        out.push(Value::Object(obj));
    }
    out
}

/// The SDKs' pipeline over the ranges' results: ORDER BY merge (or the ranges in order),
/// then groups and aggregates, DISTINCT, OFFSET, TOP and LIMIT.
fn merge(info: &Value, per_range: Vec<Vec<Value>>) -> Vec<Value> {
    let orders = info["orderBy"].as_array().unwrap();
    let mut rows = if orders.is_empty() {
        per_range.into_iter().flatten().collect()
    } else {
        merge_ordered(orders, per_range.into_iter().map(Into::into).collect())
    };
    let grouped = !info["groupByExpressions"].as_array().unwrap().is_empty()
        || !info["aggregates"].as_array().unwrap().is_empty()
        || info["groupByAliasToAggregateType"]
            .as_object()
            .unwrap()
            .values()
            .any(|v| !v.is_null());
    if grouped {
        rows = merge_grouped(info, rows);
    }
    match info["distinctType"].as_str().unwrap() {
        "Ordered" => rows.dedup_by(|a, b| normalize(a) == normalize(b)),
        "Unordered" => {
            let mut seen = HashSet::new();
            rows.retain(|r| seen.insert(normalize(r).to_string()));
        }
        _ => {}
    }
    if let Some(offset) = info["offset"].as_u64() {
        rows.drain(..(offset as usize).min(rows.len()));
    }
    for count in [&info["top"], &info["limit"]] {
        if let Some(n) = count.as_u64() {
            rows.truncate(n as usize);
        }
    }
    rows
}

fn canonical(rows: &[Value]) -> Vec<String> {
    rows.iter().map(|r| normalize(r).to_string()).collect()
}

/// The SDK-style run of `sql` gives what the engine gives for the whole query: in the same
/// order when `ordered`, else as the same multiset.
fn agrees(engine: &Engine, sql: &str, params: &[(&str, Value)], ordered: bool) -> QueryPlan {
    let (plan, merged) = run_with_plan(engine, sql, params);
    let whole = drain(engine, sql, options(params));
    let (mut got, mut want) = (canonical(&merged), canonical(&whole));
    if !ordered {
        got.sort();
        want.sort();
    }
    assert!(
        !want.is_empty() || sql.contains("missing"),
        "{sql}: a test needs results"
    );
    assert_eq!(
        got, want,
        "{sql}\nrewritten: {}",
        plan.query_info.rewritten_query
    );
    plan
}

#[test]
fn every_item_is_read_once_across_the_ranges() {
    let fx = store();
    let e = &fx.engine;
    let mut seen = HashSet::new();
    for id in ranges(e) {
        let opts = QueryOptions {
            range: Some(id.clone()),
            ..options(&[])
        };
        for doc in drain(e, "SELECT c.id, c.pk FROM c", opts) {
            let info = e.epk(DB, "c", &doc["pk"]).expect("epk");
            assert_eq!(
                info.partitions,
                vec![id.clone()],
                "{doc} read on range {id}"
            );
            assert!(seen.insert(doc["id"].to_string()), "{doc} read twice");
        }
    }
    assert_eq!(seen.len(), 240);
}

#[test]
fn a_range_intersects_the_partition_key_and_the_filter() {
    let fx = store();
    let e = &fx.engine;
    let owner = e.epk(DB, "c", &json!("k5")).expect("epk").partitions[0].clone();
    let other = ranges(e).into_iter().find(|r| *r != owner).unwrap();
    let sql = "SELECT VALUE c.id FROM c WHERE c.pk = 'k5'";
    let on = |range: &str, pk: Option<Value>| {
        let opts = QueryOptions {
            range: Some(range.to_string()),
            partition_key: pk,
            ..options(&[])
        };
        drain(e, sql, opts)
    };
    let all = drain(e, sql, options(&[]));
    assert!(!all.is_empty());
    assert_eq!(on(&owner, None), all);
    assert_eq!(on(&owner, Some(json!("k5"))), all);
    assert!(
        on(&other, None).is_empty(),
        "k5 lives on range {owner} only"
    );
    // The request's partition key and the range intersect too.
    let opts = QueryOptions {
        range: Some(other.clone()),
        partition_key: Some(json!("k5")),
        ..options(&[])
    };
    assert!(drain(e, "SELECT * FROM c", opts).is_empty());
    // A scoped page reports that one range.
    let opts = QueryOptions {
        range: Some(owner.clone()),
        ..options(&[])
    };
    let page = e.query(DB, "c", "SELECT * FROM c", &opts).expect("page");
    let touched: Vec<&str> = page.partitions.iter().map(|p| &*p.id).collect();
    assert_eq!(touched, vec![owner.as_str()]);
    assert!(page.routing.reason.contains(&format!("range {owner}")));
}

#[test]
fn a_split_or_unknown_range_is_gone() {
    let fx = fixture::open();
    let e = &fx.engine;
    fx.container(
        "c",
        ContainerSettings {
            throughput: Throughput::Manual(12_000),
            ..fixture::pk_settings()
        },
    );
    for i in 0..40 {
        fx.create("c", &json!({"id": format!("i{i}"), "pk": format!("k{i}")}));
    }
    let before = ranges(e);
    e.set_throughput(DB, "c", Throughput::Manual(40_000))
        .expect("split");
    let after = ranges(e);
    let gone: Vec<&String> = before.iter().filter(|r| !after.contains(r)).collect();
    assert!(
        !gone.is_empty(),
        "precondition: a range split ({before:?} -> {after:?})"
    );
    for id in gone.into_iter().map(String::as_str).chain(["999"]) {
        let opts = QueryOptions {
            range: Some(id.to_string()),
            ..Default::default()
        };
        let error = err(e.query(DB, "c", "SELECT * FROM c", &opts));
        assert_eq!(error.status, 410, "range {id}: {}", error.message);
        assert_eq!(
            error.substatus,
            substatus::PARTITION_KEY_RANGE_GONE,
            "range {id}"
        );
    }
    let opts = QueryOptions {
        range: Some("zero".into()),
        ..Default::default()
    };
    assert_eq!(err(e.query(DB, "c", "SELECT * FROM c", &opts)).status, 400);
    // The children between them hold every item once.
    let mut n = 0;
    for id in after {
        let opts = QueryOptions {
            range: Some(id),
            ..Default::default()
        };
        n += drain(e, "SELECT * FROM c", opts).len();
    }
    assert_eq!(n, 40);
}

#[test]
fn order_by_merges_like_the_whole_query() {
    let fx = store();
    let e = &fx.engine;
    for sql in [
        "SELECT * FROM c ORDER BY c.n",
        "SELECT c.id, c.n FROM c ORDER BY c.n DESC",
        "SELECT VALUE c.n FROM c WHERE c.g = 2 ORDER BY c.n",
        "SELECT VALUE c.opt FROM c ORDER BY c.n",
        "SELECT c.id, c.g, c.n FROM c ORDER BY c.g, c.n DESC",
        "SELECT c.id, c.s FROM c ORDER BY c.s",
        "SELECT TOP 7 c.id FROM c ORDER BY c.n DESC",
        "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 10",
    ] {
        let plan = agrees(e, sql, &[], true);
        assert!(plan.needs_client_pipeline(), "{sql}");
        assert!(
            plan.query_info.rewritten_query.contains("orderByItems"),
            "{sql}"
        );
    }
    agrees(
        e,
        "SELECT TOP @t c.id FROM c WHERE c.g = @g ORDER BY c.n",
        &[("t", json!(6)), ("g", json!(3))],
        true,
    );
}

#[test]
fn aggregates_combine_like_the_whole_query() {
    let fx = store();
    let e = &fx.engine;
    for sql in [
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE SUM(c.n) FROM c WHERE c.g = 1",
        "SELECT VALUE AVG(c.n) FROM c",
        "SELECT VALUE MIN(c.s) FROM c",
        "SELECT VALUE MAX(c.n) FROM c",
        "SELECT VALUE MAX(c.opt) FROM c",
        "SELECT COUNT(1) AS n, SUM(c.n) AS total, AVG(c.n), MIN(c.s) AS lo FROM c",
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk IN ('k1', 'k2', 'k3', 'k4', 'k5', 'k6')",
    ] {
        let plan = agrees(e, sql, &[], true);
        assert_eq!(plan.needs_client_pipeline(), plan.ranges.len() > 1, "{sql}");
    }
    // An aggregate over nothing: undefined, no result either way.
    let (_, merged) = run_with_plan(e, "SELECT VALUE AVG(c.missing) FROM c", &[]);
    assert!(merged.is_empty());
    assert!(drain(e, "SELECT VALUE AVG(c.missing) FROM c", options(&[])).is_empty());
}

#[test]
fn group_by_combines_like_the_whole_query() {
    let fx = store();
    let e = &fx.engine;
    for sql in [
        "SELECT c.g, COUNT(1) AS n, AVG(c.n) AS avg, MIN(c.n) AS lo, MAX(c.s) AS hi FROM c GROUP BY c.g",
        "SELECT VALUE c.g FROM c GROUP BY c.g",
        "SELECT VALUE COUNT(1) FROM c GROUP BY c.g",
        "SELECT c.opt, COUNT(1) AS n FROM c GROUP BY c.opt",
        "SELECT c.g, c.opt, SUM(c.n) AS total FROM c WHERE c.n > 30 GROUP BY c.g, c.opt",
        "SELECT TOP 2 c.g FROM c GROUP BY c.g",
    ] {
        // Groups come in no specified order.
        let plan = if sql.contains("TOP") {
            let (plan, merged) = run_with_plan(e, sql, &[]);
            assert_eq!(merged.len(), 2, "{sql}");
            plan
        } else {
            agrees(e, sql, &[], false)
        };
        assert!(!plan.query_info.group_by_expressions.is_empty(), "{sql}");
        assert!(plan.needs_client_pipeline(), "{sql}");
    }
}

#[test]
fn distinct_top_and_offset_limit_like_the_whole_query() {
    let fx = store();
    let e = &fx.engine;
    for (sql, ordered) in [
        ("SELECT DISTINCT c.g FROM c", false),
        ("SELECT DISTINCT VALUE c.opt FROM c", false),
        ("SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g", true),
        ("SELECT DISTINCT c.g FROM c ORDER BY c.g", true),
        ("SELECT TOP 10 c.id FROM c", true),
        ("SELECT TOP 5 * FROM c WHERE c.g = 3", true),
        ("SELECT c.id FROM c OFFSET 20 LIMIT 15", true),
        (
            "SELECT VALUE c.n FROM c WHERE c.g = 4 OFFSET 3 LIMIT 100",
            true,
        ),
    ] {
        let plan = agrees(e, sql, &[], ordered);
        assert!(plan.needs_client_pipeline(), "{sql}");
    }
    let (plan, merged) = run_with_plan(e, "SELECT DISTINCT TOP 3 VALUE c.g FROM c", &[]);
    assert_eq!(plan.query_info.top, Some(3));
    assert_eq!(merged.len(), 3);
}

#[test]
fn the_gateway_serves_plain_and_single_range_queries_itself() {
    let fx = store();
    let e = &fx.engine;
    let plan = |sql: &str| e.query_plan(DB, "c", sql, &options(&[])).expect("plan");
    // Nothing to merge: the engine pages through every range itself.
    assert!(!plan("SELECT * FROM c WHERE c.n > 3").needs_client_pipeline());
    // One logical partition: one range does it all.
    let single = plan("SELECT * FROM c WHERE c.pk = 'k1' ORDER BY c.n");
    assert!(!single.needs_client_pipeline());
    assert_eq!(single.ranges.len(), 1);
    // A partition key with the request routes the plan as a filter does.
    let opts = QueryOptions {
        partition_key: Some(json!("k1")),
        ..options(&[])
    };
    let keyed = e
        .query_plan(DB, "c", "SELECT VALUE COUNT(1) FROM c", &opts)
        .expect("plan");
    assert_eq!(keyed.ranges, single.ranges);
    // Across ranges, the direct query is answered 400/1004 with the plan.
    let cross = plan("SELECT VALUE COUNT(1) FROM c");
    assert!(cross.needs_client_pipeline());
    let not_servable = cross.not_servable();
    assert_eq!(not_servable.status, 400);
    assert_eq!(
        not_servable.substatus,
        substatus::CROSS_PARTITION_QUERY_NOT_SERVABLE
    );
    let json = cross.to_json();
    assert_eq!(json["partitionedQueryExecutionInfoVersion"], 2);
    assert_eq!(json["queryInfo"]["aggregates"], json!(["Count"]));
    assert_eq!(
        json["queryRanges"],
        json!([{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}])
    );
}

#[test]
fn a_bad_query_gets_no_plan() {
    let fx = store();
    let e = &fx.engine;
    let error = err(e.query_plan(DB, "c", "SELECT * FROM c\nWHERE c.n = = 1", &options(&[])));
    assert_eq!(error.status, 400);
    assert_eq!(error.line, Some(2), "{}", error.message);
    assert!(error.column.is_some());
    assert_eq!(
        err(e.query_plan(DB, "nope", "SELECT * FROM c", &options(&[]))).status,
        404
    );
}

#[test]
fn the_placeholder_made_true_plans_and_costs_as_if_absent() {
    // Both SDKs send the ORDER BY rewrite with its filter placeholder made `true`: the
    // range's query must walk its index and be charged as the query without it.
    let fx = store();
    let e = &fx.engine;
    let range = ranges(e).remove(0);
    let run = |sql: &str| {
        let opts = QueryOptions {
            range: Some(range.clone()),
            ..options(&[])
        };
        e.query(DB, "c", sql, &opts)
            .unwrap_or_else(|err| panic!("{sql}: {err}"))
    };
    let pairs = [
        (
            "SELECT TOP 3 c.id FROM c WHERE (true) ORDER BY c.n",
            "SELECT TOP 3 c.id FROM c ORDER BY c.n",
        ),
        (
            "SELECT c.id FROM c WHERE ((c.g = 1) AND (true)) ORDER BY c.n",
            "SELECT c.id FROM c WHERE c.g = 1 ORDER BY c.n",
        ),
    ];
    for (with, without) in pairs {
        let (a, b) = (run(with), run(without));
        assert_eq!(a.request_charge, b.request_charge, "{with}");
        assert_eq!(a.access.kind, b.access.kind, "{with}");
        let docs = |r: &cosmoscope::engine::QueryResult| -> Vec<Value> {
            r.documents.iter().map(|d| d.value().clone()).collect()
        };
        assert_eq!(docs(&a), docs(&b), "{with}");
    }
}
