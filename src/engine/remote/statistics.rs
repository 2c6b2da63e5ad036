//! The service's partition statistics: per physical partition, its storage, its document
//! count and the largest logical partitions of a sample of its keys, read into the engine's
//! views (the same ones the explorer's partitions pane, strip and tree draw).
//!
//! ## The wire shape, as confirmed from the SDKs
//!
//! A container read (`GET dbs/D/colls/C`) with `x-ms-documentdb-populatepartitionstatistics:
//! True` (the header name in azure-sdk-for-python's `http_constants`
//! `PopulatePartitionKeyRangeStatistics`, azure-cosmos-dotnet-v3's `HttpConstants`
//! `PopulatePartitionStatistics`, sent by the Python SDK's
//! `read(populate_partition_key_range_statistics=True)` and the .NET `RequestOptions.
//! PopulatePartitionKeyRangeStatistics`) answers with the container's body plus a
//! `statistics` array, one element per physical partition (.NET `PartitionKeyRangeStatistics`):
//!
//! ```json
//! "statistics": [
//!   {"id": "0", "sizeInKB": 1410184, "documentCount": 42807, "partitionKeys": []},
//!   {"id": "1", "sizeInKB": 3803113, "documentCount": 150530,
//!    "sampledDistinctPartitionKeyCount": 12,
//!    "partitionKeys": [{"partitionKey": ["4009696"], "sizeInKB": 3731654}]}
//! ]
//! ```
//!
//! `id` is the range id (a string), `sizeInKB` and `documentCount` are numbers,
//! `sampledDistinctPartitionKeyCount` is optional (a nullable long in .NET), and each
//! `partitionKeys` element (.NET `PartitionKeyStatistics`) carries the key in its internal
//! form (a JSON array, one value per key path) and its size in KB. The SDK documents the
//! keys as "reported based on a sub-sampling of partition keys within the collection and
//! hence these are approximate. If your partition keys are below 1GB of storage, they may
//! not show up in the reported statistics" (the example above is the SDK's own, where a
//! key's sampled size even exceeds its range's). Azure Data Explorer sums the ranges'
//! `sizeInKB` for a container's usage. The container totals come in the
//! `x-ms-resource-usage` header when `x-ms-documentdb-populatequotainfo: True` is sent
//! (`functions=0;storedProcedures=0;triggers=0;documentSize=10178;documentsSize=5781669;
//! documentsCount=17151514;collectionSize=10422760`, sizes in KB but `documentSize` in MB),
//! and `x-ms-resource-quota` the limits in the same form (`documentsCount=-1`: unlimited).
//!
//! What the service does not say: how many keys it lists per range. This client takes every
//! key it is given.

use serde_json::Value;

use crate::engine::views::{LogicalPartitionView, RangeInfo};
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::stats::StatsView;

/// The request header that asks a container read for its partition statistics.
pub(super) const POPULATE: &str = "x-ms-documentdb-populatepartitionstatistics";

/// One physical partition's statistics, as the service reports them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RangeStatistics {
    pub id: String,
    pub size_kb: u64,
    pub documents: u64,
    /// The sampled largest logical partitions: the key as the wire writes it (an array of
    /// one value per key path) and its size in KB, largest first.
    pub keys: Vec<(Value, u64)>,
}

/// The `statistics` member of a container's body; `None` when the server sent none (it
/// ignored the header, as servers other than the service may).
pub(super) fn parse(doc: &Value) -> Option<Vec<RangeStatistics>> {
    let ranges = doc.get("statistics")?.as_array()?;
    Some(
        ranges
            .iter()
            .map(|r| {
                let mut keys: Vec<(Value, u64)> = r
                    .get("partitionKeys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| {
                        Some((k.get("partitionKey")?.clone(), number(k.get("sizeInKB"))))
                    })
                    .collect();
                keys.sort_by_key(|k| std::cmp::Reverse(k.1));
                RangeStatistics {
                    id: super::wire::scalar_text(r.get("id")),
                    size_kb: number(r.get("sizeInKB")),
                    documents: number(r.get("documentCount")),
                    keys,
                }
            })
            .collect(),
    )
}

/// A non-negative whole number, or 0.
fn number(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Puts each range's reported count and storage on its view; a range the statistics do
/// not name (one just split, say) keeps zeros. `limit` is the per-range storage limit.
pub(super) fn apply(stats: &[RangeStatistics], ranges: &mut [RangeInfo], limit: u64) {
    for r in ranges {
        if let Some(s) = stats.iter().find(|s| s.id == r.id) {
            r.statistics.item_count = s.documents;
            r.statistics.size_bytes = s.size_kb.saturating_mul(1024);
            r.storage_fraction = r.statistics.size_bytes as f64 / limit.max(1) as f64;
        }
    }
}

/// The sampled logical partitions of one range as the engine's views, largest first.
pub(super) fn logical(
    def: &PartitionKeyDefinition,
    s: &RangeStatistics,
) -> Vec<LogicalPartitionView> {
    s.keys
        .iter()
        .map(|(key, size_kb)| {
            // The engine's views hold a one-path key bare, a hierarchical one as its array.
            let partition_key = match key {
                Value::Array(a) if a.len() == 1 => a[0].clone(),
                other => other.clone(),
            };
            // Hashed here, with the container's definition; a key the definition does not
            // take (levels that do not match its paths) is still listed, without its EPK.
            let epk = def
                .parse_request_value(&partition_key)
                .map(|v| v.epk(def).to_hex())
                .unwrap_or_default();
            LogicalPartitionView {
                partition_key,
                epk,
                range: s.id.clone(),
                statistics: StatsView {
                    // The service reports a key's size, not its documents.
                    item_count: 0,
                    size_bytes: size_kb.saturating_mul(1024),
                    request_charge_total: 0.0,
                    operations: Value::Object(Default::default()),
                },
            }
        })
        .collect()
}

/// The `top` largest sampled logical partitions over every range, largest first.
pub(super) fn largest(
    def: &PartitionKeyDefinition,
    stats: &[RangeStatistics],
    top: usize,
) -> Vec<LogicalPartitionView> {
    let mut all: Vec<LogicalPartitionView> = stats.iter().flat_map(|s| logical(def, s)).collect();
    all.sort_by_key(|l| std::cmp::Reverse(l.statistics.size_bytes));
    all.truncate(top);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The .NET SDK's documented example, parsed.
    #[test]
    fn reads_the_sdk_documented_example() {
        let doc = json!({"id": "c", "statistics": [
            {"id":"0","sizeInKB":1410184,"documentCount":42807,"partitionKeys":[]},
            {"id":"2","sizeInKB":1447855,"documentCount":59056,"partitionKeys":[
                {"partitionKey":["4004207"],"sizeInKB":2293163},
                {"partitionKey":["4009633"],"sizeInKB":2861210}]}
        ]});
        let stats = parse(&doc).expect("statistics");
        assert_eq!(stats.len(), 2);
        assert_eq!((stats[0].size_kb, stats[0].documents), (1410184, 42807));
        assert_eq!(
            stats[1].keys[0],
            (json!(["4009633"]), 2861210),
            "largest first"
        );
        let def = PartitionKeyDefinition::new(vec!["/pk".into()]).unwrap();
        let top = largest(&def, &stats, 1);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].partition_key, json!("4009633"));
        assert_eq!(top[0].range, "2");
        assert_eq!(top[0].statistics.size_bytes, 2861210 * 1024);
        assert_eq!(top[0].epk.len(), 32, "hashed with the container's key");
    }

    #[test]
    fn a_body_without_statistics_has_none() {
        assert_eq!(parse(&json!({"id": "c"})), None);
        // A malformed element reads as zeros rather than failing the container.
        let stats = parse(&json!({"statistics": [{"id": 1, "sizeInKB": "x"}]})).unwrap();
        assert_eq!((stats[0].id.as_str(), stats[0].size_kb), ("1", 0));
    }
}
