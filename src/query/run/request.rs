//! What a query request asks for besides its text: parameters, a partition key, the one
//! physical partition to run on, the page size, where to continue, and whom to tell as
//! each range finishes.

use std::collections::HashMap;

use serde_json::Value;

use crate::query::eval::budget::Limits;
use crate::query::eval::value::Val;
use crate::query::run::result::RangeProgress;

/// One query request as the query engine runs it (the engine facade builds it from its
/// own `QueryOptions`).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub params: HashMap<String, Val>,
    /// Partition key (or hierarchical prefix) given with the request.
    pub partition_key: Option<Value>,
    /// The id of the one physical partition (partition key range) to run on, as the
    /// service's `x-ms-documentdb-partitionkeyrangeid` scopes a query: only that range is
    /// read (and of it, only what the partition key or the filter routes to), and the
    /// continuation continues on it. See `run::scope` for ids that are not live.
    pub range: Option<String>,
    /// Within `range`, only this EPK span `[start, end)` (hex), as the service's
    /// `x-ms-start-epk` and `x-ms-end-epk` give it.
    pub epk_range: Option<(String, String)>,
    /// Results per page (default 100).
    pub max_items: Option<usize>,
    pub continuation: Option<String>,
    /// Called as each physical partition finishes, so a front end can show a long
    /// fan-out query filling in range by range.
    pub progress: Option<Progress>,
    /// What a page may spend (the service's 5 s by default; tests bound rows instead).
    pub limits: Limits,
    /// Report the indexes the query used and those that would have served it (the
    /// service's `x-ms-cosmos-populateindexmetrics`).
    pub index_metrics: bool,
}

/// A progress callback (see `Request::progress`).
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(&RangeProgress) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}
