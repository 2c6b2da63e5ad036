//! Queries over documents (`POST .../docs` with `application/query+json`), and the
//! document read feed (`GET .../docs`), which is a query for everything.
//!
//! A query carries a partition key (one logical partition), a partition key range id (one
//! physical partition: how SDKs run each range of a cross-partition query), or neither. In
//! the last case the gateway behaves as the service's does: it runs a query across the
//! container itself when the client allowed a cross-partition query and the query streams
//! (filters and projections), and answers one that needs merging across ranges (ORDER BY,
//! aggregates, GROUP BY, DISTINCT, TOP, OFFSET/LIMIT) with 400, substatus 1004 and the
//! query plan, which the SDKs then run range by range. The plan itself is also served on
//! request (`x-ms-cosmos-is-query-plan-request`).

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::Context;
use crate::engine::{QueryMetrics, QueryOptions, QueryResult};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};

/// The query text and parameters of a query body: `{"query": "...", "parameters":
/// [{"name": "@n", "value": ...}]}` (names keep their `@` on the wire; the engine takes them
/// without).
pub fn query_spec(call: &Call) -> Result<(String, HashMap<String, Value>)> {
    let body = call.json_object()?;
    let sql = match body.get("query") {
        Some(Value::String(q)) => q.clone(),
        _ => return Err(Error::bad_request("a query body needs a string \"query\"")),
    };
    let mut params = HashMap::new();
    if let Some(list) = body.get("parameters").filter(|p| !p.is_null()) {
        let Value::Array(list) = list else {
            return Err(Error::bad_request(
                "\"parameters\" must be an array of {name, value}",
            ));
        };
        for p in list {
            let name = p.get("name").and_then(Value::as_str).ok_or_else(|| {
                Error::bad_request("each query parameter needs a string \"name\" such as \"@id\"")
            })?;
            let name = name.strip_prefix('@').unwrap_or(name);
            // A parameter without a value is undefined in the query, which the engine's
            // parameter map expresses by leaving it out.
            if let Some(v) = p.get("value") {
                params.insert(name.to_string(), v.clone());
            }
        }
    }
    Ok((sql, params))
}

/// The names (without `@`) of the query body's parameters given without a value, which
/// are undefined in the query (the engine refuses a query naming a parameter the request
/// does not give at all).
fn valueless_params(call: &Call) -> Result<Vec<String>> {
    let body = call.json_object()?;
    let Some(Value::Array(list)) = body.get("parameters") else {
        return Ok(Vec::new());
    };
    Ok(list
        .iter()
        .filter(|p| p.get("value").is_none())
        .filter_map(|p| p.get("name").and_then(Value::as_str))
        .map(|name| name.strip_prefix('@').unwrap_or(name).to_string())
        .collect())
}

/// The options every document query and read feed takes from the headers.
fn options(call: &Call, params: HashMap<String, Value>) -> Result<QueryOptions> {
    Ok(QueryOptions {
        params,
        partition_key: call.partition_key()?,
        range: call.range_id(),
        epk_range: call.epk_range(),
        max_items: call.max_items()?,
        continuation: call.continuation(),
        // Always worked out, though sent only when asked for: the explorer's request log
        // shows them with each query (their cost is small beside the request's).
        index_metrics: true,
        ..QueryOptions::default()
    })
}

pub fn query(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    let mut opts = options(call, params)?;
    opts.undefined_params = valueless_params(call)?;
    if opts.partition_key.is_none()
        && opts.range.is_none()
        && let Some(refusal) = check_cross_partition(ctx, call, db, container, &sql, &opts)?
    {
        return Ok(refusal);
    }
    run(ctx, call, db, container, &sql, opts)
}

/// `GET .../docs`: every document (of one logical or physical partition, or of the whole
/// container: a read feed needs no cross-partition permission), paged like a query and
/// charged like one.
pub fn read_feed(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let opts = options(call, HashMap::new())?;
    run(ctx, call, db, container, "SELECT * FROM root", opts)
}

/// `x-ms-cosmos-is-query-plan-request`: the plan, once the client's supported features
/// (`x-ms-cosmos-supported-query-features`) cover what the query needs.
pub fn plan(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    let mut opts = options(call, params)?;
    opts.undefined_params = valueless_params(call)?;
    let plan = ctx.backend.query_plan(db, container, &sql, &opts)?;
    if let Some(features) = call.header(header::SUPPORTED_QUERY_FEATURES) {
        plan.check_features(features)?;
    }
    Ok(Reply::json(StatusCode::Ok, &plan.to_json()))
}

fn run(
    ctx: &Context,
    call: &Call,
    db: &str,
    container: &str,
    sql: &str,
    opts: QueryOptions,
) -> Result<Reply> {
    let result = ctx.backend.query(db, container, sql, &opts)?;
    let rid = ctx.backend.container_key(db, container)?.rid;
    Ok(result_reply(call, &rid, result))
}

/// A query with neither a partition key nor a range: refused when it reads several ranges
/// and the client did not allow that, and answered with its plan (400, substatus 1004, the
/// plan in `additionalErrorInfo`) when those ranges' results need merging on the client.
/// A query the planner refuses (one no per-range merge can answer) is run here whole, as
/// the engine can.
fn check_cross_partition(
    ctx: &Context,
    call: &Call,
    db: &str,
    container: &str,
    sql: &str,
    opts: &QueryOptions,
) -> Result<Option<Reply>> {
    let Ok(plan) = ctx.backend.query_plan(db, container, sql, opts) else {
        return Ok(None);
    };
    if plan.ranges.len() > 1 && !call.flag(header::ENABLE_CROSS_PARTITION) {
        return Err(Error::bad_request(format!(
            "Cross partition query is required but disabled. Please set {}: True, specify {}, \
             or revise your query to avoid this exception.",
            header::ENABLE_CROSS_PARTITION,
            header::PARTITION_KEY
        )));
    }
    if !plan.needs_client_pipeline() {
        return Ok(None);
    }
    let e = plan.not_servable();
    let body = serde_json::json!({
        "code": e.code(),
        "message": e.message,
        "additionalErrorInfo": plan.to_json().to_string(),
    });
    Ok(Some(Reply::error_body(&e, body)))
}

/// A page of results in the service's shape, with its continuation, charge, metrics.
fn result_reply(call: &Call, rid: &str, mut r: QueryResult) -> Reply {
    let documents = std::mem::take(&mut r.documents);
    let docs: Vec<&[u8]> = documents.iter().map(|d| d.json_bytes()).collect();
    let mut reply = Reply::feed(rid, "Documents", &docs)
        .charge(r.request_charge)
        .header(out::ITEM_COUNT, docs.len().to_string());
    if let Some(c) = &r.continuation {
        reply = reply.header(out::CONTINUATION, c.clone());
    }
    if let [only] = r.partitions.as_slice() {
        reply = reply.header(out::RANGE_ID, only.id.to_string());
    }
    if call.flag(header::POPULATE_QUERY_METRICS) {
        reply = reply.header(out::QUERY_METRICS, metrics_header(&r.metrics));
    }
    if let Some(index_metrics) = r
        .index_metrics
        .as_ref()
        .filter(|_| call.flag(header::POPULATE_INDEX_METRICS))
    {
        let json = serde_json::to_vec(index_metrics).unwrap_or_default();
        reply = reply.header(out::INDEX_UTILIZATION, STANDARD.encode(json));
    }
    reply.ranges = r.partitions.iter().map(|p| p.id.to_string()).collect();
    reply.query = Some(Box::new(r));
    reply
}

/// `x-ms-documentdb-query-metrics`: `name=value` pairs joined by `;`, the service's names.
/// Phases this engine does not time separately (compilation, plan building) are 0.
fn metrics_header(m: &QueryMetrics) -> String {
    let total = m.index_lookup_time_in_ms
        + m.document_load_time_in_ms
        + m.query_engine_execution_time_in_ms;
    let ratio = if m.retrieved_document_count == 0 {
        0.0
    } else {
        m.index_hit_document_count as f64 / m.retrieved_document_count as f64
    };
    [
        ("totalExecutionTimeInMs", format!("{total:.2}")),
        ("queryCompileTimeInMs", "0.00".into()),
        ("queryLogicalPlanBuildTimeInMs", "0.00".into()),
        ("queryPhysicalPlanBuildTimeInMs", "0.00".into()),
        ("queryOptimizationTimeInMs", "0.00".into()),
        (
            "VMExecutionTimeInMs",
            format!("{:.2}", m.query_engine_execution_time_in_ms),
        ),
        (
            "indexLookupTimeInMs",
            format!("{:.2}", m.index_lookup_time_in_ms),
        ),
        (
            "documentLoadTimeInMs",
            format!("{:.2}", m.document_load_time_in_ms),
        ),
        ("systemFunctionExecuteTimeInMs", "0.00".into()),
        ("userFunctionExecuteTimeInMs", "0.00".into()),
        (
            "retrievedDocumentCount",
            m.retrieved_document_count.to_string(),
        ),
        (
            "retrievedDocumentSize",
            m.retrieved_document_size.to_string(),
        ),
        ("outputDocumentCount", m.output_document_count.to_string()),
        ("outputDocumentSize", m.output_document_size.to_string()),
        ("writeOutputTimeInMs", "0.00".into()),
        ("indexUtilizationRatio", format!("{ratio:.2}")),
    ]
    .iter()
    .map(|(k, v)| format!("{k}={v}"))
    .collect::<Vec<_>>()
    .join(";")
}
