//! What running a query produces: a page of documents with its charge, continuation,
//! routing, per-partition results and metrics, the access path taken and the index metrics;
//! and, while it runs, each range's progress. Named as the service names them.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::query::read::document::Document;
use crate::store::ContainerDef;
use crate::store::keys::RangeId;
use crate::store::ranges::{PkRange, RangeNames};

/// The service's response size limit: a page ends before the result that would take its
/// documents past 4 MB, and continues on the next (concepts-limits.md: "Maximum response size
/// (for example, paginated query) | 4 MB"). A page has at least one result, whatever its size.
pub const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// What is known about one range when it finishes, before the page is assembled.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeProgress {
    pub range: String,
    pub retrieved_document_count: u64,
    pub matched: u64,
}

/// Per-partition metrics, named as the service names them.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QueryMetrics {
    pub retrieved_document_count: u64,
    pub retrieved_document_size: u64,
    pub output_document_count: u64,
    pub output_document_size: u64,
    pub index_hit_document_count: u64,
    pub index_lookup_time_in_ms: f64,
    pub document_load_time_in_ms: f64,
    pub query_engine_execution_time_in_ms: f64,
}

impl QueryMetrics {
    /// Adds another range's (or page's) metrics to these.
    pub fn add(&mut self, o: &QueryMetrics) {
        self.retrieved_document_count += o.retrieved_document_count;
        self.retrieved_document_size += o.retrieved_document_size;
        self.output_document_count += o.output_document_count;
        self.output_document_size += o.output_document_size;
        self.index_hit_document_count += o.index_hit_document_count;
        self.index_lookup_time_in_ms += o.index_lookup_time_in_ms;
        self.document_load_time_in_ms += o.document_load_time_in_ms;
        self.query_engine_execution_time_in_ms += o.query_engine_execution_time_in_ms;
    }
}

/// One physical partition's part in a query.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionResult {
    pub id: Arc<str>,
    pub min_inclusive: Arc<str>,
    pub max_exclusive: Arc<str>,
    /// Key values of the logical partitions whose documents matched.
    pub logical_partitions: Vec<Value>,
    pub request_charge: f64,
    pub metrics: QueryMetrics,
}

/// A physical partition as a query's result names it: its id and its bounds in the service's
/// hex ([`RangeNames`], kept with the container's definition), moved into its
/// [`PartitionResult`].
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RangeLabel {
    pub id: RangeId,
    pub names: RangeNames,
}

impl RangeLabel {
    /// `range`, one of `def`'s live ranges.
    pub fn of(def: &ContainerDef, range: &PkRange) -> RangeLabel {
        RangeLabel {
            id: range.id,
            names: def.range_names(range),
        }
    }
}

/// What one physical partition contributed to a query's complete result.
#[derive(Debug, Clone)]
pub struct RangePart {
    pub range: RangeLabel,
    pub metrics: QueryMetrics,
    pub logical: Vec<Value>,
    /// A resumed scan entered this range on an earlier page.
    pub visited_before: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoutingView {
    pub kind: &'static str,
    pub reason: String,
}

/// A page of results with everything the query console shows about it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryResult {
    pub documents: Vec<Document>,
    pub continuation: Option<String>,
    pub request_charge: f64,
    pub routing: RoutingView,
    pub partitions: Vec<PartitionResult>,
    pub metrics: QueryMetrics,
    /// How the documents were found: the planner's choice between the index and a scan.
    pub access: AccessView,
    /// Indexes the query used and indexes that would have served it (the service's
    /// `x-ms-cosmos-index-utilization`), when the request asked for them.
    pub index_metrics: Option<IndexMetrics>,
}

impl QueryResult {
    /// Whether this page returned while its result was still being computed: it holds no
    /// documents, and its continuation takes the result up when it is done.
    pub fn still_computing(&self) -> bool {
        self.access.kind == AccessView::COMPUTING
    }
}

impl AccessView {
    /// The kind of a page that returned while its result was still being computed.
    pub const COMPUTING: &'static str = "computing";
}

/// The access path a query used, for the result and the stats panel.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AccessView {
    /// `index-lookup`, `index-order`, `scan` or `statistics`; `computing` on a page that
    /// returned while its result was still being computed.
    pub kind: &'static str,
    /// The index specs the lookup or walk read (empty for a scan).
    pub indexes: Vec<String>,
    /// Why the planner chose it.
    pub reason: String,
}

// ---------------------------------------------------------------------------------------
// Index metrics (the content of `x-ms-cosmos-index-utilization`)
// ---------------------------------------------------------------------------------------

/// A single-path index a filter used or would use.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SingleIndexMetric {
    pub filter_expression: String,
    pub index_spec: String,
    pub filter_precise_set: bool,
    pub index_precise_set: bool,
    pub index_impact_score: &'static str,
}

/// A composite index an ORDER BY (with or without a filter) used or would use.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CompositeIndexMetric {
    pub index_specs: Vec<String>,
    pub index_precise_set: bool,
    pub index_impact_score: &'static str,
}

/// Which indexes a query used and which ones it was missing, as the service reports them
/// with `x-ms-cosmos-populateindexmetrics: true`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct IndexMetrics {
    pub utilized_single_indexes: Vec<SingleIndexMetric>,
    pub potential_single_indexes: Vec<SingleIndexMetric>,
    pub utilized_composite_indexes: Vec<CompositeIndexMetric>,
    pub potential_composite_indexes: Vec<CompositeIndexMetric>,
}
