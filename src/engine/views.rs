//! What the engine hands to front ends: plain, serializable views of store state.
//!
//! Field names follow the service's REST resources (`minInclusive`, `partitionKey`,
//! `indexingPolicy`, ...) so output reads like what a Cosmos DB user already knows.

use serde::Serialize;
use serde_json::Value;

use crate::error::StatusCode;

use crate::store::catalog::{ContainerDef, DatabaseDef, Throughput};
use crate::store::indexing::IndexingPolicy;
use crate::store::item;
use crate::store::meter::MeterSample;
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::ranges::PkRange;
use crate::store::read::LogicalPartitionInfo;
use crate::store::search_policy::{FullTextPolicy, VectorEmbeddingPolicy};
use crate::store::stats::{RangeStats, StatsView};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseInfo {
    pub id: String,
    #[serde(rename = "_rid")]
    pub rid: String,
    #[serde(rename = "_ts")]
    pub ts: i64,
    pub container_count: usize,
}

impl DatabaseInfo {
    pub fn new(def: &DatabaseDef, container_count: usize) -> DatabaseInfo {
        DatabaseInfo {
            id: def.id.clone(),
            rid: item::database_rid(def.rid),
            ts: def.ts,
            container_count,
        }
    }
}

/// Where per-range item counts and storage and the largest logical partitions come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StatisticsSource {
    /// Kept by the store in every write transaction: exact.
    Exact,
    /// The service's partition statistics (`x-ms-documentdb-populatepartitionstatistics`):
    /// its own per-range counts and storage, and the largest logical partitions of each
    /// range from a sample of keys (approximate; small keys may be left out).
    Sampled,
    /// Not reported: the server answers without partition statistics, so counts and sizes
    /// read zero.
    Unreported,
}

impl StatisticsSource {
    /// How a front end labels figures from this source ("" for exact ones).
    pub fn label(self) -> &'static str {
        match self {
            StatisticsSource::Exact => "",
            StatisticsSource::Sampled => "the service's statistics (sampled)",
            StatisticsSource::Unreported => "the service reports no partition statistics",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThroughputView {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manual: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscale_max: Option<u64>,
    /// RU/s one physical partition may use per second.
    pub per_partition_budget: f64,
    pub enforced: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerInfo {
    pub id: String,
    pub database: String,
    #[serde(rename = "_rid")]
    pub rid: String,
    #[serde(rename = "_ts")]
    pub ts: i64,
    pub partition_key: PartitionKeyDefinition,
    pub throughput: ThroughputView,
    pub default_ttl: Option<i64>,
    pub unique_key_policy: crate::store::catalog::UniqueKeyPolicy,
    pub indexing_policy: IndexingPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_embedding_policy: Option<VectorEmbeddingPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_text_policy: Option<FullTextPolicy>,
    /// Percent of the index built under the current policy (100 when no transformation
    /// runs), as the service's `x-ms-documentdb-collection-index-transformation-progress`.
    pub index_transformation_progress: u8,
    /// How many bytes of a string the index queries read keeps: longer strings that share
    /// them are one index value, which a lookup selects as a whole. Not known of an
    /// account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_string_bytes: Option<usize>,
    pub max_partition_bytes: u64,
    pub max_logical_partition_bytes: u64,
    pub feed_previous_images: bool,
    pub statistics: StatsView,
    /// Where the partitions' statistics come from.
    pub statistics_source: StatisticsSource,
    pub partition_count: usize,
    /// Present in `container show`; omitted from listings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<RangeInfo>>,
}

impl ContainerInfo {
    pub fn new(
        def: &ContainerDef,
        stats: StatsView,
        partitions: Option<Vec<RangeInfo>>,
    ) -> ContainerInfo {
        let (manual, autoscale_max) = match def.throughput {
            Throughput::Manual(ru) => (Some(ru), None),
            Throughput::Autoscale(max) => (None, Some(max)),
        };
        ContainerInfo {
            id: def.id.clone(),
            database: def.database.clone(),
            rid: item::container_rid(def),
            ts: def.ts,
            partition_key: def.partition_key.clone(),
            throughput: ThroughputView {
                manual,
                autoscale_max,
                per_partition_budget: crate::charge::round(def.range_budget()),
                enforced: def.enforce_throughput,
            },
            default_ttl: def.default_ttl,
            unique_key_policy: def.unique_key_policy.clone(),
            indexing_policy: def.indexing_policy.clone(),
            vector_embedding_policy: def.vector_embedding_policy.clone(),
            full_text_policy: def.full_text_policy.clone(),
            index_transformation_progress: def.index_build.as_ref().map_or(100, |b| b.progress()),
            indexed_string_bytes: Some(def.ready_index().string_bytes),
            max_partition_bytes: def.max_partition_bytes,
            max_logical_partition_bytes: def.max_logical_partition_bytes,
            feed_previous_images: def.feed_previous_images,
            statistics: stats,
            statistics_source: StatisticsSource::Exact,
            partition_count: def.ranges.len(),
            partitions,
        }
    }
}

/// A physical partition (partition key range) with its statistics.
/// A physical partition as the service's `pkranges` resource lists it: its id, the EPK
/// range it owns (`minInclusive`, `maxExclusive`: upper-case hex, whose text order is the
/// EPKs' byte order) and the ranges it split from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionKeyRange {
    pub id: String,
    pub min_inclusive: String,
    pub max_exclusive: String,
    pub parents: Vec<String>,
}

impl PartitionKeyRange {
    pub fn new(range: &PkRange) -> PartitionKeyRange {
        PartitionKeyRange {
            id: range.id.to_string(),
            min_inclusive: range.min_inclusive.to_hex(),
            max_exclusive: range.max_exclusive.to_hex(),
            parents: range.parents.iter().map(|p| p.to_string()).collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeInfo {
    pub id: String,
    pub min_inclusive: String,
    pub max_exclusive: String,
    pub parents: Vec<String>,
    pub lsn: u64,
    pub throughput_fraction: f64,
    /// Share of the EPK space this range spans.
    pub key_space_fraction: f64,
    pub statistics: StatsView,
    /// Share of the container's per-partition storage limit in use.
    pub storage_fraction: f64,
}

impl RangeInfo {
    pub fn new(def: &ContainerDef, range: &PkRange, stats: &RangeStats) -> RangeInfo {
        RangeInfo {
            id: range.id.to_string(),
            min_inclusive: range.min_inclusive.to_hex(),
            max_exclusive: range.max_exclusive.to_hex(),
            parents: range.parents.iter().map(|p| p.to_string()).collect(),
            lsn: stats.lsn,
            throughput_fraction: 1.0 / def.ranges.len().max(1) as f64,
            key_space_fraction: (range.width() * 1e6).round() / 1e6,
            statistics: StatsView::from(&stats.counters),
            storage_fraction: stats.counters.bytes as f64 / def.max_partition_bytes.max(1) as f64,
        }
    }
}

/// A logical partition with its statistics.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogicalPartitionView {
    /// The key value (bare for one-level keys, an array for hierarchical keys).
    pub partition_key: Value,
    pub epk: String,
    pub range: String,
    pub statistics: StatsView,
}

impl LogicalPartitionView {
    pub fn new(def: &ContainerDef, info: &LogicalPartitionInfo) -> LogicalPartitionView {
        let partition_key = match &info.key {
            Value::Array(a) if a.len() == 1 => a[0].clone(),
            other => other.clone(),
        };
        let range = def
            .owner(info.epk.as_bytes())
            .map(|r| r.id.to_string())
            .unwrap_or_default();
        LogicalPartitionView {
            partition_key,
            epk: info.epk.to_hex(),
            range,
            statistics: StatsView::from(&info.counters),
        }
    }
}

/// RU use of one range over recent seconds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeLoad {
    pub id: String,
    pub budget_per_second: f64,
    /// RU consumed in the last complete second.
    pub ru_last_second: f64,
    /// Peak RU in any second of the window.
    pub ru_peak: f64,
    pub throttled: u64,
    pub requests: u64,
    /// Per-second samples, oldest first (seconds with no activity omitted).
    pub samples: Vec<SampleView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SampleView {
    pub second: u64,
    pub ru: f64,
    pub requests: u64,
    pub throttled: u64,
}

impl From<&MeterSample> for SampleView {
    fn from(s: &MeterSample) -> SampleView {
        SampleView {
            second: s.second,
            ru: crate::charge::round(s.ru),
            requests: s.requests,
            throttled: s.throttled,
        }
    }
}

/// `partitions DB/C`: ranges, their load, and the extreme logical partitions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionsReport {
    pub container: String,
    pub partitions: Vec<RangeInfo>,
    pub load: Vec<RangeLoad>,
    pub window_seconds: u64,
    /// Where the ranges' counts and sizes and the largest logical partitions come from.
    pub statistics_source: StatisticsSource,
    pub largest_logical_partitions: Vec<LogicalPartitionView>,
    pub hottest_logical_partitions: Vec<LogicalPartitionView>,
}

/// One page of the logical partitions of a range.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogicalPartitionPage {
    pub range: String,
    pub logical_partitions: Vec<LogicalPartitionView>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// `epk DB/C JSON`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EpkInfo {
    pub partition_key: Value,
    pub epk: String,
    /// For a hierarchical prefix: the EPK range it spans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epk_range: Option<(String, String)>,
    pub partitions: Vec<String>,
}

/// The result of an item operation.
#[derive(Debug, Clone)]
pub struct ItemResponse {
    pub status: StatusCode,
    /// The item's JSON as stored (system properties included); `None` for deletes.
    pub body: Option<Vec<u8>>,
    pub etag: Option<String>,
    pub request_charge: f64,
    /// The physical partition that served the request.
    pub range: String,
    pub lsn: Option<u64>,
}

impl ItemResponse {
    /// `{"statusCode", "requestCharge", "partitionKeyRangeId", "etag"?, "resource"?}`.
    pub fn to_json(&self) -> Value {
        let mut obj = serde_json::Map::new();
        obj.insert("statusCode".into(), self.status.as_u16().into());
        obj.insert("requestCharge".into(), json_f64(self.request_charge));
        obj.insert("partitionKeyRangeId".into(), self.range.clone().into());
        if let Some(etag) = &self.etag {
            obj.insert("etag".into(), etag.clone().into());
        }
        if let Some(lsn) = self.lsn {
            obj.insert("lsn".into(), lsn.into());
        }
        if let Some(body) = &self.body {
            obj.insert(
                "resource".into(),
                serde_json::from_slice(body).unwrap_or(Value::Null),
            );
        }
        Value::Object(obj)
    }
}

pub fn json_f64(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `import` summary.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSummary {
    pub items: u64,
    pub created: u64,
    pub replaced: u64,
    pub bytes: u64,
    pub request_charge: f64,
    pub batches: u64,
    pub throttled: u64,
    pub seconds: f64,
}

impl ImportSummary {
    /// Adds another import's (a later chunk's) figures to these.
    pub fn add(&mut self, o: &ImportSummary) {
        self.items += o.items;
        self.created += o.created;
        self.replaced += o.replaced;
        self.bytes += o.bytes;
        self.request_charge += o.request_charge;
        self.batches += o.batches;
        self.throttled += o.throttled;
        self.seconds += o.seconds;
    }
}

/// A size for people: `830 B`, `1.2 MB` (binary units, one decimal).
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
