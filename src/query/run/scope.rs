//! The physical partition a request scopes a query to: the service's
//! `x-ms-documentdb-partitionkeyrangeid` header, with which the SDKs run a cross-partition
//! query range by range (each with its own continuation) and merge the ranges' results
//! themselves.
//!
//! A range id must name a live range. One that was split away answers 410 Gone with
//! substatus 1002 (PartitionKeyRangeGone), as the change feed does for a feed request (see
//! `store::feed`): the SDKs react by re-reading `pkranges` and querying the children. An id
//! that never existed gets the same 410/1002 here, unlike the feed's 404: that is what the
//! service answers for a range id it does not know (its gateway cannot tell a range it
//! never had from one its routing cache has not seen yet), and it sends the SDKs down the
//! same recovery path, re-reading `pkranges`, instead of failing the query. Only an id that
//! is not a range id at all (not a number) is a 400.

use crate::error::{Error, Result, StatusCode, substatus};
use crate::store::catalog::ContainerDef;
use crate::store::keys::RangeId;
use crate::store::ranges::{PkRange, span_from_hex};

/// The live range `id` names on `def`.
pub fn resolve(def: &ContainerDef, id: &str) -> Result<PkRange> {
    let Ok(rid) = id.trim().parse::<RangeId>() else {
        return Err(Error::bad_request(format!(
            "{id:?} is not a partition key range id; take one from the container's pkranges"
        )));
    };
    if let Some(r) = def.range(rid) {
        return Ok(r.clone());
    }
    let children: Vec<String> = def
        .ranges
        .iter()
        .filter(|r| r.parents.contains(&rid))
        .map(|r| r.id.to_string())
        .collect();
    let message = if children.is_empty() {
        format!(
            "partition key range {rid} is not a range of container {}; re-read its pkranges \
             and query the ranges listed there",
            def.full_name()
        )
    } else {
        format!(
            "partition key range {rid} is gone: it was split into {}; re-read the container's \
             pkranges and query those ranges",
            children.join(", ")
        )
    };
    Err(Error::new(StatusCode::Gone, message).with_substatus(substatus::PARTITION_KEY_RANGE_GONE))
}

/// The scope narrowed to the EPK span `[start, end)` a request gives with it (the
/// service's `x-ms-start-epk` and `x-ms-end-epk`, as hex): what the Python SDK sends to run
/// a hierarchical-key prefix, or a feed range smaller than a physical partition, on the
/// range holding it. Only that span of the range is read; a span that misses the range
/// leaves nothing to read.
pub fn narrow(range: PkRange, start: &str, end: &str) -> Result<PkRange> {
    let (start, end) = span_from_hex(start, end)?;
    Ok(range.narrowed(&start, &end).unwrap_or_else(|| PkRange {
        max_exclusive: range.min_inclusive.clone(),
        ..range
    }))
}
