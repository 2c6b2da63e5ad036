//! The engine's words for a query request and its result. A request's parameters are JSON
//! values, as the REST API's `parameters` are; the result types are the query engine's own,
//! named here so that front ends never reach into the query engine.

use std::collections::HashMap;

use serde_json::Value;

pub use crate::query::eval::budget::{Limits as QueryLimits, MEMORY_LIMIT_BYTES, PAGE_TIME_LIMIT};
use crate::query::eval::value::Val;
pub use crate::query::read::document::Document;
use crate::query::run::Request;
pub use crate::query::run::{
    AccessView, IndexMetrics, PartitionResult, Progress, QueryMetrics, QueryResult, RangeProgress,
    RoutingView,
};

/// Options of one query request.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// The query's parameters by name, without the `@` (`@id` is `"id"`).
    pub params: HashMap<String, Value>,
    /// Parameters given without a value (the REST API's `{"name": "@x"}`): undefined in
    /// the query. A parameter the query names that is in neither list fails with 400.
    pub undefined_params: Vec<String>,
    /// Partition key (or hierarchical prefix) given with the request.
    pub partition_key: Option<Value>,
    /// Run on this physical partition only: a partition key range id as
    /// [`super::PartitionKeyRange::id`] gives it (the REST API's
    /// `x-ms-documentdb-partitionkeyrangeid`). Intersected with the partition key and the
    /// filter's routing; the continuation continues on the same range. A range that split
    /// away (or that the container never had) fails with 410 Gone, substatus 1002, so a
    /// client re-reads the ranges and queries the children.
    pub range: Option<String>,
    /// Within `range`, only the EPK span `[start, end)` (upper-case hex): the service's
    /// `x-ms-start-epk` and `x-ms-end-epk`, with which the Python SDK runs a hierarchical
    /// prefix or a feed range smaller than a physical partition.
    pub epk_range: Option<(String, String)>,
    /// Results per page (default 100).
    pub max_items: Option<usize>,
    pub continuation: Option<String>,
    /// Called as each physical partition finishes, so a front end can show a long
    /// fan-out query filling in range by range.
    pub progress: Option<Progress>,
    /// What one page may spend: the service's 5 s per-page execution limit and a memory
    /// budget by default; a page that reaches its time limit returns what it has with a
    /// continuation. Tests bound the rows evaluated instead of time.
    pub limits: QueryLimits,
    /// Report which indexes the query used and which would have served it
    /// ([`QueryResult::index_metrics`]). As with the service's `PopulateIndexMetrics`,
    /// they are worked out only when asked for: rendering them costs a small query a few
    /// percent of its time.
    pub index_metrics: bool,
}

impl QueryOptions {
    /// The request as the query engine runs it.
    pub(super) fn request(&self) -> Request {
        Request {
            params: self
                .params
                .iter()
                .map(|(k, v)| (k.clone(), Val::from_json(v)))
                .chain(
                    self.undefined_params
                        .iter()
                        .map(|k| (k.clone(), Val::Undefined)),
                )
                .collect(),
            partition_key: self.partition_key.clone(),
            range: self.range.clone(),
            epk_range: self.epk_range.clone(),
            max_items: self.max_items,
            continuation: self.continuation.clone(),
            progress: self.progress.clone(),
            limits: self.limits,
            index_metrics: self.index_metrics,
        }
    }
}

/// Runs a query over JSON documents held in memory (a resource feed: databases, containers,
/// offers), with the same dialect as a container's queries but no index, paging or charge.
pub fn query_values(
    sql: &str,
    params: &HashMap<String, Value>,
    docs: &[Value],
) -> crate::error::Result<Vec<Value>> {
    crate::query::run::over_values(sql, params, docs)
}
