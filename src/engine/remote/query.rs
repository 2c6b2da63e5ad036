//! Queries the way the SDKs run them (reference/gateway.md §4–5): a query with a partition
//! key (or scoped to one range) goes to the account as it is; any other asks the account
//! for its query plan, then runs on each physical partition the plan reads, with
//! `x-ms-documentdb-partitionkeyrangeid`, paging each range by its own continuation, so
//! the result says which partitions were contacted, which returned results, and what each
//! charged (every page's `x-ms-request-charge`, with query and index metrics requested).
//!
//! Queries whose ranges' results merge by simple concatenation stream: a page continues
//! from the range and token where the last stopped (the continuation lists the ranges
//! still to read). Queries that merge (ORDER BY, aggregates, GROUP BY, DISTINCT,
//! OFFSET/LIMIT, TOP) over several ranges read each range to its end, merge
//! ([`super::merge`]), and page out of the merged result kept by the backend; its first
//! page carries the charge of every request made.
//!
//! A range that split while the query ran answers 410 (substatus 1002): the ranges are read
//! again and the range's children continue with its token, as the SDKs do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hyper::Method;
use serde_json::{Value, json};

use super::RemoteBackend;
use super::http::{Answer, Call};
use super::resources::container_path;
use super::wire;
use crate::engine::plan::QueryPlan;
use crate::engine::query::{
    AccessView, Document, IndexMetrics, PartitionResult, QueryMetrics, QueryOptions, QueryResult,
    RangeProgress, RoutingView,
};
use crate::engine::views::PartitionKeyRange;
use crate::error::{Error, Result};
use crate::store::partition_key::PartitionKeyDefinition;

/// The query features this client merges, offered with a plan request.
const SUPPORTED_FEATURES: &str = "Aggregate, CompositeAggregate, Distinct, GroupBy, \
     MultipleAggregates, MultipleOrderBy, NonValueAggregate, OffsetAndLimit, OrderBy, Top";

/// Results per page when the request names none (the engine's default).
const DEFAULT_PAGE: usize = 100;

/// Continuations this client makes, told apart from the service's own by their prefix.
const STREAM_TOKEN: &str = "cosmoscope-ranges:";
const MERGED_TOKEN: &str = "cosmoscope-merged:";

/// Merged results kept for their later pages; the oldest goes when full.
const KEPT_RESULTS: usize = 16;

/// How many times one range may answer 410 before the query gives up.
const SPLIT_RETRIES: usize = 3;

/// A complete merged result and what its first page reported.
pub(super) struct Merged {
    documents: Vec<Value>,
    routing: RoutingView,
    partitions: Vec<PartitionResult>,
    metrics: QueryMetrics,
    index_metrics: Option<IndexMetrics>,
}

/// The ranges a streaming query still has to read, each with its token (the children of
/// a range that split carry its token, as the SDKs hand it on).
#[derive(serde::Serialize, serde::Deserialize)]
struct StreamToken {
    ranges: Vec<(String, String, String, Option<String>)>,
}

/// One query as the client runs it: where, what, and the flag that cancels it.
struct Request<'a> {
    db: &'a str,
    name: &'a str,
    sql: &'a str,
    opts: &'a QueryOptions,
    key: PartitionKeyDefinition,
    cancel: &'a AtomicBool,
}

/// What one range gave a query so far.
struct RangeRun {
    range: PartitionKeyRange,
    rows: Vec<Value>,
    charge: f64,
    metrics: QueryMetrics,
    index_metrics: Option<IndexMetrics>,
    /// The range's next token; `None` once it is read to the end.
    token: Option<String>,
}

impl RangeRun {
    fn new(range: PartitionKeyRange, token: Option<String>) -> RangeRun {
        RangeRun {
            range,
            rows: Vec::new(),
            charge: 0.0,
            metrics: QueryMetrics::default(),
            index_metrics: None,
            token,
        }
    }

    fn absorb(&mut self, answer: &Answer, rows: Vec<Value>) {
        self.charge += answer.charge();
        if let Some(m) = answer.header("x-ms-documentdb-query-metrics") {
            self.metrics.add(&wire::query_metrics(m));
        }
        if self.index_metrics.is_none() {
            self.index_metrics = answer
                .header("x-ms-cosmos-index-utilization")
                .and_then(wire::index_metrics);
        }
        self.token = answer
            .header("x-ms-continuation")
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        self.rows.extend(rows);
    }
}

impl RemoteBackend {
    pub(super) fn run_query(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &AtomicBool,
    ) -> Result<QueryResult> {
        let max_items = opts.max_items.unwrap_or(DEFAULT_PAGE).max(1);
        let r = Request {
            db,
            name,
            sql,
            opts,
            key: self.key_of(db, name)?.partition_key,
            cancel,
        };
        if let Some(token) = opts.continuation.as_deref() {
            if let Some(rest) = token.strip_prefix(MERGED_TOKEN) {
                return self.merged_page(rest, max_items);
            }
            if let Some(rest) = token.strip_prefix(STREAM_TOKEN) {
                let t = decode_stream_token(rest)?;
                let ranges = t
                    .ranges
                    .into_iter()
                    .map(|(id, min_inclusive, max_exclusive, token)| {
                        let range = PartitionKeyRange {
                            id,
                            min_inclusive,
                            max_exclusive,
                            parents: Vec::new(),
                        };
                        (range, token)
                    })
                    .collect();
                let routing = RoutingView {
                    kind: "fan-out",
                    reason: "continues a query across the ranges its plan reads".into(),
                };
                return self.stream(&r, ranges, routing);
            }
        }
        if opts.partition_key.is_some() || opts.range.is_some() {
            return self.direct(&r, max_items);
        }
        let plan = self.plan(db, name, sql, opts)?;
        let all = self.ranges(db, name)?;
        let ranges: Vec<PartitionKeyRange> = all
            .iter()
            .filter(|r| plan.ranges.contains(&r.id))
            .cloned()
            .collect();
        let local = super::verdict::local_ranges(sql, opts, &r.key, &all);
        let routing = RoutingView {
            kind: if ranges.len() < all.len() {
                "targeted"
            } else {
                "fan-out"
            },
            reason: format!(
                "the account's query plan reads {} of the container's {} physical partitions; {}",
                ranges.len(),
                all.len(),
                super::verdict::sentence(&plan.ranges, &local)
            ),
        };
        if plan.query_info.needs_merge() && ranges.len() > 1 {
            return self.merge_ranges(&r, &plan, ranges, routing);
        }
        let ranges = ranges.into_iter().map(|range| (range, None)).collect();
        self.stream(&r, ranges, routing)
    }

    /// The account's plan for `sql`: its query info, EPK ranges and the live ranges those
    /// overlap.
    pub(super) fn plan(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
    ) -> Result<QueryPlan> {
        let mut call = query_call(db, name, sql, opts)
            .header("x-ms-cosmos-is-query-plan-request", "True")
            .header("x-ms-cosmos-query-version", "1.4")
            .header("x-ms-cosmos-supported-query-features", SUPPORTED_FEATURES);
        if let Some(pk) = &opts.partition_key {
            call = call.header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?);
        }
        let answer = self.send(&call)?;
        let doc = answer.json()?;
        let query_ranges = wire::query_ranges(&doc);
        let ranges = self
            .ranges(db, name)?
            .into_iter()
            .filter(|r| {
                query_ranges.iter().any(|q| {
                    overlaps(
                        &r.min_inclusive,
                        &r.max_exclusive,
                        &q.min,
                        &q.max,
                        q.is_max_inclusive,
                    )
                })
            })
            .map(|r| r.id)
            .collect();
        Ok(QueryPlan {
            query_info: wire::query_info(doc.get("queryInfo").unwrap_or(&Value::Null)),
            query_ranges,
            ranges,
        })
    }

    /// A query the account serves whole: one logical partition (the key header) or one
    /// range (the range header); the continuation is the account's own.
    fn direct(&self, r: &Request, max_items: usize) -> Result<QueryResult> {
        let (db, name, opts) = (r.db, r.name, r.opts);
        check_cancel(r.cancel)?;
        let mut call =
            query_call(db, name, r.sql, opts).header("x-ms-max-item-count", item_count(max_items));
        let (kind, reason) = if let Some(pk) = &opts.partition_key {
            call = call.header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?);
            ("single-partition", "the request names its partition key")
        } else {
            ("targeted", "the request names one physical partition")
        };
        if let Some(range) = &opts.range {
            call = call.header("x-ms-documentdb-partitionkeyrangeid", range.clone());
        }
        if let Some(token) = &opts.continuation {
            call = call.header("x-ms-continuation", token.clone());
        }
        let answer = self.send(&call)?;
        let rows = answer.feed("Documents")?;
        let id = answer
            .header("x-ms-documentdb-partitionkeyrangeid")
            .map(str::to_string)
            .or_else(|| opts.range.clone())
            .or_else(|| session_range(&answer))
            .unwrap_or_default();
        let range = self
            .ranges(db, name)?
            .into_iter()
            .find(|r| r.id == id)
            .unwrap_or(PartitionKeyRange {
                id,
                min_inclusive: String::new(),
                max_exclusive: String::new(),
                parents: Vec::new(),
            });
        let mut run = RangeRun::new(range, None);
        run.absorb(&answer, rows);
        let continuation = run.token.clone();
        let routing = RoutingView {
            kind,
            reason: reason.into(),
        };
        let keys = key_values(&r.key, &run.rows);
        let docs = std::mem::take(&mut run.rows);
        Ok(result(docs, continuation, routing, vec![(run, keys)]))
    }

    /// Streams `ranges` in order from `token` until the page is full.
    fn stream(
        &self,
        r: &Request,
        mut ranges: Vec<(PartitionKeyRange, Option<String>)>,
        routing: RoutingView,
    ) -> Result<QueryResult> {
        let max_items = r.opts.max_items.unwrap_or(DEFAULT_PAGE).max(1);
        let mut docs = Vec::new();
        let mut runs = Vec::new();
        while docs.len() < max_items && !ranges.is_empty() {
            let (range, token) = ranges.remove(0);
            let mut run = RangeRun::new(range, token);
            let want = max_items - docs.len();
            if let Some(children) = self.read_range(r, r.sql, &mut run, want)? {
                // The range split: its children take its place, each with its token.
                for (i, child) in children.into_iter().enumerate() {
                    ranges.insert(i, (child, run.token.clone()));
                }
                continue;
            }
            report_progress(r.opts, &run);
            let keys = key_values(&r.key, &run.rows);
            docs.append(&mut run.rows);
            if run.token.is_some() {
                ranges.insert(0, (run.range.clone(), run.token.clone()));
            }
            runs.push((run, keys));
        }
        let continuation = (!ranges.is_empty()).then(|| encode_stream_token(&ranges));
        Ok(result(docs, continuation, routing, runs))
    }

    /// Reads pages of `sql` (the query, or the plan's rewrite of it) on one range until
    /// `want` rows came back or the range is done; `Some` with the range's children when it
    /// split.
    fn read_range(
        &self,
        r: &Request,
        sql: &str,
        run: &mut RangeRun,
        want: usize,
    ) -> Result<Option<Vec<PartitionKeyRange>>> {
        let mut splits = 0;
        loop {
            check_cancel(r.cancel)?;
            let mut call = query_call(r.db, r.name, sql, r.opts)
                .header("x-ms-documentdb-partitionkeyrangeid", run.range.id.clone())
                .header("x-ms-max-item-count", page_size(want, run.rows.len()));
            if let Some(t) = &run.token {
                call = call.header("x-ms-continuation", t.clone());
            }
            match self.send(&call) {
                Ok(answer) => {
                    let rows = answer.feed("Documents")?;
                    run.absorb(&answer, rows);
                    if run.token.is_none() || run.rows.len() >= want {
                        return Ok(None);
                    }
                }
                Err(e) if super::is_split(&e) && splits < SPLIT_RETRIES => {
                    splits += 1;
                    let children = self.children_of(r.db, r.name, &run.range)?;
                    if !children.is_empty() {
                        return Ok(Some(children));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The live ranges covering what `range` covered.
    fn children_of(
        &self,
        db: &str,
        name: &str,
        range: &PartitionKeyRange,
    ) -> Result<Vec<PartitionKeyRange>> {
        Ok(self
            .ranges(db, name)?
            .into_iter()
            .filter(|r| {
                r.id != range.id
                    && overlaps(
                        &r.min_inclusive,
                        &r.max_exclusive,
                        &range.min_inclusive,
                        &range.max_exclusive,
                        false,
                    )
            })
            .collect())
    }

    /// Reads every range to its end with the plan's rewritten query, merges, keeps the
    /// result and returns its first page.
    fn merge_ranges(
        &self,
        r: &Request,
        plan: &QueryPlan,
        ranges: Vec<PartitionKeyRange>,
        routing: RoutingView,
    ) -> Result<QueryResult> {
        let range_sql = plan.range_query(r.sql);
        let mut pending = ranges;
        let mut runs: Vec<RangeRun> = Vec::new();
        while !pending.is_empty() {
            let range = pending.remove(0);
            let mut run = RangeRun::new(range, None);
            match self.read_range(r, &range_sql, &mut run, usize::MAX)? {
                Some(children) => {
                    // A split range is read again whole from its children.
                    for (i, child) in children.into_iter().enumerate() {
                        pending.insert(i, child);
                    }
                }
                None => {
                    report_progress(r.opts, &run);
                    runs.push(run);
                }
            }
        }
        let per_range: Vec<Vec<Value>> = runs.iter().map(|run| run.rows.clone()).collect();
        let documents = super::merge::merge(&plan.query_info, per_range);
        let runs = runs
            .into_iter()
            .map(|run| {
                let keys = key_values(&r.key, &payloads(&run.rows));
                (run, keys)
            })
            .collect();
        let first = result(Vec::new(), None, routing.clone(), runs);
        let merged = Merged {
            documents,
            routing,
            partitions: first.partitions.clone(),
            metrics: first.metrics.clone(),
            index_metrics: first.index_metrics.clone(),
        };
        let id = crate::engine::new_guid();
        let mut page = self.page_of(
            &merged,
            &id,
            0,
            r.opts.max_items.unwrap_or(DEFAULT_PAGE).max(1),
        );
        page.request_charge = first.request_charge;
        let mut kept = self.lock_results();
        if kept.len() >= KEPT_RESULTS {
            kept.clear();
        }
        kept.insert(id, merged);
        Ok(page)
    }

    fn merged_page(&self, rest: &str, max_items: usize) -> Result<QueryResult> {
        let expired = || {
            Error::bad_request(
                "the continuation names a merged result this session no longer keeps; run the \
                 query again from its first page",
            )
        };
        let (id, offset) = rest.split_once(':').ok_or_else(expired)?;
        let offset: usize = offset.parse().map_err(|_| expired())?;
        let kept = self.lock_results();
        let merged = kept.get(id).ok_or_else(expired)?;
        let mut page = self.page_of(merged, id, offset, max_items);
        // The requests were made, and charged, for the first page.
        for p in &mut page.partitions {
            p.request_charge = 0.0;
        }
        Ok(page)
    }

    fn page_of(&self, merged: &Merged, id: &str, offset: usize, max_items: usize) -> QueryResult {
        let end = (offset + max_items).min(merged.documents.len());
        let documents = merged
            .documents
            .get(offset..end)
            .unwrap_or_default()
            .iter()
            .cloned()
            .map(Document::from_value)
            .collect();
        QueryResult {
            documents,
            continuation: (end < merged.documents.len())
                .then(|| format!("{MERGED_TOKEN}{id}:{end}")),
            request_charge: 0.0,
            routing: merged.routing.clone(),
            partitions: merged.partitions.clone(),
            metrics: merged.metrics.clone(),
            access: remote_access(),
            index_metrics: merged.index_metrics.clone(),
        }
    }

    /// A partition key value as the key header takes it (a JSON array).
    pub(super) fn wire_key(&self, db: &str, name: &str, pk: &Value) -> Result<String> {
        let def = self.key_of(db, name)?.partition_key;
        Ok(def.parse_request_value(pk)?.to_json().to_string())
    }
}

/// A query POST with its body and the headers every query sends.
fn query_call(db: &str, name: &str, sql: &str, opts: &QueryOptions) -> Call {
    let mut params: Vec<Value> = opts
        .params
        .iter()
        .map(|(k, v)| json!({ "name": format!("@{k}"), "value": v }))
        .collect();
    params.extend(
        opts.undefined_params
            .iter()
            .map(|k| json!({ "name": format!("@{k}") })),
    );
    let body = json!({ "query": sql, "parameters": params });
    let call = Call::new(Method::POST, format!("{}/docs", container_path(db, name)))
        .body("application/query+json", body.to_string().into_bytes())
        .header("x-ms-documentdb-isquery", "True")
        .header("x-ms-documentdb-query-enablecrosspartition", "True")
        .header("x-ms-documentdb-populatequerymetrics", "True");
    // The service works the index metrics out only when asked, and they cost it too.
    if opts.index_metrics {
        call.header("x-ms-cosmos-populateindexmetrics", "True")
    } else {
        call
    }
}

/// `x-ms-max-item-count` for a range that should give `want` rows and gave `got` (`-1`, the
/// account decides, when the whole range is wanted).
fn page_size(want: usize, got: usize) -> String {
    item_count(want.saturating_sub(got).max(1))
}

/// `x-ms-max-item-count: n`, or `-1` for a count past what the header takes (no limit).
fn item_count(n: usize) -> String {
    if n > i32::MAX as usize {
        "-1".into()
    } else {
        n.to_string()
    }
}

fn check_cancel(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Acquire) {
        return Err(Error::cancelled("the query was cancelled between pages"));
    }
    Ok(())
}

fn report_progress(opts: &QueryOptions, run: &RangeRun) {
    if let Some(progress) = &opts.progress {
        (progress.0)(&RangeProgress {
            range: run.range.id.clone(),
            retrieved_document_count: run.metrics.retrieved_document_count,
            matched: run.rows.len() as u64,
        });
    }
}

/// The range id of a session token (`<range>:<version>#<lsn>`).
pub(super) fn session_range(answer: &Answer) -> Option<String> {
    let token = answer.header("x-ms-session-token")?;
    let (id, _) = token.split_once(':')?;
    Some(id.to_string())
}

/// The documents an ORDER BY range returned are its rows' payloads.
fn payloads(rows: &[Value]) -> Vec<Value> {
    rows.iter()
        .map(|r| r.get("payload").cloned().unwrap_or_else(|| r.clone()))
        .collect()
}

/// The page's result: documents, and the partitions contacted with what each charged and
/// the key values of the documents each returned.
fn result(
    docs: Vec<Value>,
    continuation: Option<String>,
    routing: RoutingView,
    runs: Vec<(RangeRun, Vec<Value>)>,
) -> QueryResult {
    let mut metrics = QueryMetrics::default();
    let mut charge = 0.0;
    let mut index_metrics = None;
    let mut partitions: Vec<PartitionResult> = Vec::new();
    for (run, logical) in runs {
        metrics.add(&run.metrics);
        charge += run.charge;
        if index_metrics.is_none() {
            index_metrics = run.index_metrics.clone();
        }
        // A range read over several pages of one request shows once.
        match partitions.iter_mut().find(|p| *p.id == *run.range.id) {
            Some(p) => {
                p.request_charge += run.charge;
                p.metrics.add(&run.metrics);
                for v in logical {
                    if !p.logical_partitions.contains(&v) {
                        p.logical_partitions.push(v);
                    }
                }
            }
            None => partitions.push(PartitionResult {
                id: Arc::from(run.range.id.as_str()),
                min_inclusive: Arc::from(run.range.min_inclusive.as_str()),
                max_exclusive: Arc::from(run.range.max_exclusive.as_str()),
                logical_partitions: logical,
                request_charge: run.charge,
                metrics: run.metrics.clone(),
            }),
        }
    }
    QueryResult {
        documents: docs.into_iter().map(Document::from_value).collect(),
        continuation,
        request_charge: crate::charge::round(charge),
        routing,
        partitions,
        metrics,
        access: remote_access(),
        index_metrics,
    }
}

/// The distinct partition key values of the documents that carry their key (a projection
/// without the key path says nothing of its partition).
fn key_values(key: &PartitionKeyDefinition, docs: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for doc in docs {
        let Some(obj) = doc.as_object() else { continue };
        let present = key
            .paths
            .iter()
            .all(|p| crate::store::partition_key::lookup(obj, p).is_some());
        if !present {
            continue;
        }
        if let Ok(v) = key.extract(obj) {
            let v = v.to_display_json();
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

fn remote_access() -> AccessView {
    AccessView {
        kind: "service",
        indexes: Vec::new(),
        reason: "the account chose its access path; its index metrics show which indexes it \
                 used and which it lacked"
            .into(),
    }
}

/// Whether `[a_min, a_max)` overlaps `[b_min, b_max)` (or `]` with `b_inclusive`), in EPK
/// hex where `""` is the start and `"FF"` the end.
fn overlaps(a_min: &str, a_max: &str, b_min: &str, b_max: &str, b_inclusive: bool) -> bool {
    let below_b_max = if b_inclusive {
        a_min <= b_max
    } else {
        a_min < b_max
    };
    below_b_max && b_min < a_max
}

fn encode_stream_token(ranges: &[(PartitionKeyRange, Option<String>)]) -> String {
    let t = StreamToken {
        ranges: ranges
            .iter()
            .map(|(r, t)| {
                let bounds = (r.min_inclusive.clone(), r.max_exclusive.clone());
                (r.id.clone(), bounds.0, bounds.1, t.clone())
            })
            .collect(),
    };
    let json = serde_json::to_vec(&t).unwrap_or_default();
    format!("{STREAM_TOKEN}{}", URL_SAFE_NO_PAD.encode(json))
}

fn decode_stream_token(text: &str) -> Result<StreamToken> {
    URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| {
            Error::bad_request("the continuation is not one this client made; run the query again")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_overlap_by_their_hex_bounds() {
        assert!(overlaps("", "80", "", "FF", false));
        assert!(!overlaps("80", "FF", "", "80", false));
        assert!(overlaps("80", "FF", "", "80", true));
        assert!(overlaps("40", "80", "7F", "7F", true));
    }

    #[test]
    fn stream_tokens_round_trip_and_foreign_ones_are_refused() {
        let r = PartitionKeyRange {
            id: "3".into(),
            min_inclusive: "".into(),
            max_exclusive: "80".into(),
            parents: vec![],
        };
        let t = encode_stream_token(&[(r, Some("abc".into()))]);
        let back = decode_stream_token(t.strip_prefix(STREAM_TOKEN).unwrap()).unwrap();
        assert_eq!(back.ranges[0].0, "3");
        assert_eq!(back.ranges[0].3.as_deref(), Some("abc"));
        assert!(decode_stream_token("!!").is_err());
    }
}
