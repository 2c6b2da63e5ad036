//! What a container read adds when asked: the service's partition statistics
//! (`x-ms-documentdb-populatepartitionstatistics`) and its usage and quota headers
//! (`x-ms-documentdb-populatequotainfo`), served from the engine's own statistics. The
//! shapes are the service's, as the SDKs read them (see `engine::remote::statistics`).

use serde_json::{Value, json};

use super::Context;
use crate::engine::{ContainerInfo, StatisticsSource};
use crate::error::Result;

/// How many of each range's largest logical partitions the statistics list. The service
/// lists a sample of keys and leaves small ones out (the SDK's own example shows zero to
/// two per range; the cut-off is not documented); the gateway lists the few largest of
/// every range, by their exact size, so that small data still shows some.
pub const KEYS_PER_RANGE: usize = 3;

/// Whole KB, rounded up: a range or key with anything in it is never reported as empty
/// (the service's rounding is not documented).
fn kb(bytes: u64) -> u64 {
    bytes.div_ceil(1024)
}

/// The `statistics` array of a container's body: per physical partition its id, size in
/// KB, document count and largest logical partitions (`partitionKey` in the wire's array
/// form). `sampledDistinctPartitionKeyCount`, optional on the service, is left out: the
/// engine keeps no count of a range's keys it could answer with without a listing. `None`
/// when the backend keeps no statistics to answer with.
pub fn partition_statistics(ctx: &Context, info: &ContainerInfo) -> Result<Option<Value>> {
    if ctx.backend.capabilities().range_statistics == StatisticsSource::Unreported {
        return Ok(None);
    }
    let one_path = info.partition_key.paths.len() == 1;
    let mut out = Vec::new();
    for r in info.partitions.iter().flatten() {
        let largest = ctx.backend.largest_logical_partitions(
            &info.database,
            &info.id,
            &r.id,
            0,
            KEYS_PER_RANGE,
        )?;
        let keys: Vec<Value> = largest
            .logical_partitions
            .iter()
            .map(|l| {
                let key = if one_path {
                    json!([l.partition_key])
                } else {
                    l.partition_key.clone()
                };
                json!({ "partitionKey": key, "sizeInKB": kb(l.statistics.size_bytes) })
            })
            .collect();
        out.push(json!({
            "id": r.id,
            "sizeInKB": kb(r.statistics.size_bytes),
            "documentCount": r.statistics.item_count,
            "partitionKeys": keys,
        }));
    }
    Ok(Some(Value::Array(out)))
}

/// `x-ms-resource-usage`: the container's documents' size (KB), count and total size (KB),
/// as the service names them.
pub fn usage(info: &ContainerInfo) -> String {
    let s = &info.statistics;
    format!(
        "documentsSize={};documentsCount={};collectionSize={}",
        kb(s.size_bytes),
        s.item_count,
        kb(s.size_bytes)
    )
}

/// `x-ms-resource-quota`: the service's answer for a container (`documentsCount=-1`:
/// unlimited), in KB.
pub const QUOTA: &str = "documentsSize=10485760;documentsCount=-1;collectionSize=10485760";
