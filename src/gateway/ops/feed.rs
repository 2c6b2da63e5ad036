//! The change feed (`GET .../docs` with `A-IM: Incremental feed`): from the beginning (no
//! `If-None-Match`), from now (`If-None-Match: *`), from a time (`If-Modified-Since`) or
//! after a page (`If-None-Match: <etag of that page>`); for one physical partition
//! (`x-ms-documentdb-partitionkeyrangeid`), one logical partition (the partition key header)
//! or the whole container. The etag of every answer, 304 Not Modified included, is where
//! the next request resumes; tokens survive splits, and a request for a range that was split
//! gets 410 with substatus 1002 so the client re-reads the ranges.

use std::time::{Duration, Instant};

use chrono::DateTime;
use serde_json::Value;

use super::Context;
use crate::engine::{FeedMode, FeedPage, FeedRequest, FeedStart};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};

/// Changes per page when the client leaves it to the server.
const DEFAULT_PAGE: usize = 100;
/// How long a logical partition's feed may read past other keys' changes looking for its
/// own before it answers with what it has (an empty page is a 304).
const KEY_SCAN_BUDGET: Duration = Duration::from_millis(500);

/// `A-IM: Incremental feed` (latest version) or `Full-Fidelity Feed` (all versions and
/// deletes), compared case-insensitively as clients vary.
pub fn is_change_feed(call: &Call) -> bool {
    mode(call).is_some()
}

fn mode(call: &Call) -> Option<FeedMode> {
    let a_im = call.header(header::A_IM)?.to_ascii_lowercase();
    if a_im.contains("full-fidelity") {
        Some(FeedMode::AllVersions)
    } else if a_im.contains("incremental") {
        Some(FeedMode::LatestVersion)
    } else {
        None
    }
}

fn start(call: &Call) -> Result<FeedStart> {
    if let Some(etag) = call.etag(header::IF_NONE_MATCH) {
        return Ok(if etag == "*" {
            FeedStart::Now
        } else {
            FeedStart::Continuation(etag.to_string())
        });
    }
    if let Some(since) = call.header(header::IF_MODIFIED_SINCE) {
        let t = DateTime::parse_from_rfc2822(since).map_err(|_| {
            Error::bad_request(format!(
                "{} must be an RFC 1123 date such as \"Thu, 27 Apr 2017 00:51:12 GMT\", not {since:?}",
                header::IF_MODIFIED_SINCE
            ))
        })?;
        return Ok(FeedStart::Time(t.timestamp()));
    }
    Ok(FeedStart::Beginning)
}

pub fn read(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let mode = mode(call).unwrap_or(FeedMode::LatestVersion);
    let mut req = FeedRequest {
        start: start(call)?,
        mode,
        range: call.range_id(),
        epk_range: call.epk_range(),
        max_items: call.max_items()?.unwrap_or(DEFAULT_PAGE),
    };
    let key = call.partition_key()?;
    let page = match &key {
        None => ctx.backend.read_feed(db, container, &req)?,
        Some(key) => {
            // One logical partition: read its physical partition and keep its changes.
            let epk = ctx.backend.epk(db, container, key)?;
            req.range = epk.partitions.into_iter().next();
            read_key(ctx, db, container, req, &wire_key(key))?
        }
    };
    let rid = ctx.backend.container_key(db, container)?.rid;
    Ok(page_reply(&rid, mode, page))
}

/// A key as changes carry it: one JSON value per key path.
fn wire_key(key: &Value) -> Value {
    match key {
        Value::Array(_) => key.clone(),
        other => Value::Array(vec![other.clone()]),
    }
}

/// Pages of one range, filtered to `key`, until some change of the key turns up, the range
/// is caught up, or the budget is spent; the charge is every page's.
fn read_key(
    ctx: &Context,
    db: &str,
    container: &str,
    mut req: FeedRequest,
    key: &Value,
) -> Result<FeedPage> {
    let began = Instant::now();
    let mut charge = 0.0;
    loop {
        let mut page = ctx.backend.read_feed(db, container, &req)?;
        charge += page.request_charge;
        let read = page.changes.len();
        page.changes.retain(|c| &c.partition_key() == key);
        if !page.changes.is_empty() || read < req.max_items || began.elapsed() > KEY_SCAN_BUDGET {
            page.request_charge = charge;
            return Ok(page);
        }
        req.start = FeedStart::Continuation(page.continuation);
    }
}

fn page_reply(rid: &str, mode: FeedMode, page: FeedPage) -> Reply {
    let etag = page.continuation.clone();
    let mut reply = if page.changes.is_empty() {
        Reply::new(StatusCode::NotModified).with_items(0)
    } else {
        let texts: Vec<Vec<u8>> = page
            .changes
            .iter()
            .map(|c| {
                c.to_json(mode, &page.partition_key)
                    .to_string()
                    .into_bytes()
            })
            .collect();
        let slices: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
        let lsn = page.changes.iter().map(|c| c.lsn).max().unwrap_or(0);
        Reply::feed(rid, "Documents", &slices)
            .header(out::LSN, lsn.to_string())
            .header(out::ITEM_COUNT, slices.len().to_string())
    };
    if let [only] = page.ranges.as_slice() {
        reply = reply.header(out::RANGE_ID, only.clone());
    }
    reply
        .header(out::ETAG, etag)
        .charge(page.request_charge)
        .ranges(page.ranges)
}
