//! Partition key ranges (`GET .../pkranges`): the container's physical partitions with
//! string ids and their EPK bounds, which clients cache to route by key and to run a
//! cross-partition query range by range. The etag names the set of ranges, so a client
//! holding it (`If-None-Match`) gets 304 until a split changes them.

use serde_json::json;

use super::Context;
use super::databases::feed_of;
use crate::engine::PartitionKeyRange;
use crate::error::{Result, StatusCode};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};

pub fn list(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let info = ctx.backend.container(db, container)?;
    let ranges = ctx.backend.partition_key_ranges(db, container)?;
    let etag = etag_of(&info.rid, &ranges);
    if call.etag(header::IF_NONE_MATCH) == Some(etag.as_str()) {
        return Ok(Reply::new(StatusCode::NotModified).header(out::ETAG, etag));
    }
    let share = 1.0 / ranges.len().max(1) as f64;
    let docs: Vec<_> = ranges
        .iter()
        .map(|r| {
            let id_number: u64 = r.id.parse().unwrap_or(0);
            json!({
                "_rid": format!("{}{}", info.rid, r.id),
                "id": r.id,
                "_etag": format!("\"{}\"", r.id),
                "minInclusive": r.min_inclusive,
                "maxExclusive": r.max_exclusive,
                "ridPrefix": id_number,
                "_self": format!("{}pkranges/{}/", super::containers::self_link(&info), r.id),
                "throughputFraction": share,
                "status": "online",
                "parents": r.parents,
                "_ts": info.ts,
                "_lsn": 0,
            })
        })
        .collect();
    Ok(feed_of("PartitionKeyRanges", &info.rid, &docs).header(out::ETAG, etag))
}

/// The container's rid and its ranges' ids in order: a split retires ids and adds new
/// ones, so the set changes exactly when the ranges do.
fn etag_of(rid: &str, ranges: &[PartitionKeyRange]) -> String {
    let ids: Vec<&str> = ranges.iter().map(|r| r.id.as_str()).collect();
    format!("\"{rid}:{}\"", ids.join("."))
}
