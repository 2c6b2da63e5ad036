//! The change feed per physical partition, as the SDKs read it (reference/gateway.md §4.6):
//! `GET .../docs` with `A-IM: Incremental feed` (latest version) or `Full-Fidelity Feed`
//! (all versions and deletes) and `x-ms-documentdb-partitionkeyrangeid`, started by
//! `If-None-Match: *` (now), `If-Modified-Since` (a time) or nothing (the beginning), and
//! continued with `If-None-Match: <etag of the range's last answer>`. A 304 means the
//! range has nothing new; its etag still moves the range's position.
//!
//! The continuation of a page lists every range with its position, so a follower resumes
//! each where it stopped; a range that split (410, substatus 1002) hands its position to its
//! children. Following is polling: [`RemoteBackend::feed_head`] advances a container's poll
//! tick no more often than its interval, which doubles (from 250 ms to 2 s) while reads find
//! nothing and drops back when they find changes, so an idle follower costs a bounded,
//! small number of requests.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hyper::Method;
use serde_json::Value;

use super::RemoteBackend;
use super::http::{Answer, Call};
use super::resources::container_path;
use crate::engine::feed::{FeedChange, FeedMode, FeedOp, FeedPage, FeedRequest, FeedStart};
use crate::engine::query::Document;
use crate::engine::views::PartitionKeyRange;
use crate::error::{Error, Result, StatusCode};
use crate::store::partition_key::PartitionKeyDefinition;

const FEED_TOKEN: &str = "cosmoscope-feed:";
/// The follower's poll interval while changes keep coming, and its ceiling when idle.
pub const POLL_MIN: Duration = Duration::from_millis(250);
pub const POLL_MAX: Duration = Duration::from_secs(2);

/// One range's position: `""` the beginning, `"*"` now, `"@<secs>"` a time, otherwise the
/// etag of its last answer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Position {
    id: String,
    min: String,
    max: String,
    at: String,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct FeedToken {
    ranges: Vec<Position>,
    /// The range the next page starts with, so pages go round the ranges.
    next: usize,
}

/// A container's poll tick and its interval.
#[derive(Debug, Clone)]
pub(super) struct Poll {
    tick: u64,
    due: Instant,
    interval: Duration,
}

impl RemoteBackend {
    pub(super) fn feed_page(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage> {
        let key = self.key_of(db, name)?.partition_key;
        let mut token = match &req.start {
            FeedStart::Continuation(t) => decode(t)?,
            start => {
                let at = match start {
                    FeedStart::Beginning => String::new(),
                    FeedStart::Now => "*".into(),
                    FeedStart::Time(t) => format!("@{t}"),
                    FeedStart::Continuation(_) => unreachable!("matched above"),
                };
                let ranges = self
                    .ranges(db, name)?
                    .into_iter()
                    .filter(|r| req.range.as_ref().is_none_or(|id| *id == r.id))
                    .map(|r| Position {
                        id: r.id,
                        min: r.min_inclusive,
                        max: r.max_exclusive,
                        at: at.clone(),
                    })
                    .collect::<Vec<_>>();
                if ranges.is_empty() {
                    return Err(Error::not_found(format!(
                        "container {db}/{name} has no partition key range {:?}",
                        req.range.as_deref().unwrap_or_default()
                    )));
                }
                FeedToken { ranges, next: 0 }
            }
        };
        let mut changes = Vec::new();
        let mut charge = 0.0;
        let mut read = Vec::new();
        let mut visited = 0;
        let max_items = req.max_items.max(1);
        while visited < token.ranges.len() && changes.len() < max_items {
            let at = token.next % token.ranges.len();
            let pos = token.ranges[at].clone();
            match self.range_feed(db, name, req.mode, &pos, max_items - changes.len()) {
                Ok(answer) => {
                    charge += answer.charge();
                    if let Some(etag) = answer.header("etag") {
                        token.ranges[at].at = etag.to_string();
                    }
                    if answer.status != StatusCode::NotModified {
                        for row in answer.feed("Documents")? {
                            changes.push(change_of(&pos.id, req.mode, &key, row));
                        }
                    }
                    read.push(pos.id.clone());
                    token.next = at + 1;
                    visited += 1;
                }
                Err(e) if super::is_split(&e) => {
                    let children = self.children(db, name, &pos)?;
                    if children.is_empty() {
                        return Err(e);
                    }
                    token.ranges.splice(at..=at, children);
                }
                Err(e) => return Err(e),
            }
        }
        token.next %= token.ranges.len().max(1);
        self.polled(db, name, !changes.is_empty());
        Ok(FeedPage {
            changes,
            continuation: encode(&token),
            request_charge: crate::charge::round(charge),
            ranges: read,
            partition_key: key,
        })
    }

    fn range_feed(
        &self,
        db: &str,
        name: &str,
        mode: FeedMode,
        pos: &Position,
        max_items: usize,
    ) -> Result<Answer> {
        let a_im = match mode {
            FeedMode::LatestVersion => "Incremental feed",
            FeedMode::AllVersions => "Full-Fidelity Feed",
        };
        let mut call = Call::new(Method::GET, format!("{}/docs", container_path(db, name)))
            .header("a-im", a_im)
            .header("x-ms-documentdb-partitionkeyrangeid", pos.id.clone())
            .header("x-ms-max-item-count", max_items.to_string());
        if let Some(secs) = pos.at.strip_prefix('@') {
            let t = secs
                .parse::<i64>()
                .ok()
                .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                .unwrap_or_default();
            call = call.header("if-modified-since", super::signing::http_date(t));
        } else if !pos.at.is_empty() {
            call = call.header("if-none-match", pos.at.clone());
        }
        self.send(&call)
    }

    /// The live ranges that cover a split range, each starting where it stopped.
    fn children(&self, db: &str, name: &str, pos: &Position) -> Result<Vec<Position>> {
        Ok(self
            .ranges(db, name)?
            .into_iter()
            .filter(|r: &PartitionKeyRange| {
                r.id != pos.id && r.min_inclusive < pos.max && pos.min < r.max_exclusive
            })
            .map(|r| Position {
                id: r.id,
                min: r.min_inclusive,
                max: r.max_exclusive,
                at: pos.at.clone(),
            })
            .collect())
    }

    /// The container's poll tick (see the module comment).
    pub(super) fn poll_tick(&self, db: &str, name: &str) -> u64 {
        let now = Instant::now();
        let mut polls = self.lock_polls();
        let p = polls
            .entry((db.to_string(), name.to_string()))
            .or_insert(Poll {
                tick: 0,
                due: now,
                interval: POLL_MIN,
            });
        if now >= p.due {
            p.tick += 1;
            p.due = now + p.interval;
        }
        p.tick
    }

    fn polled(&self, db: &str, name: &str, found: bool) {
        if let Some(p) = self
            .lock_polls()
            .get_mut(&(db.to_string(), name.to_string()))
        {
            p.interval = if found {
                POLL_MIN
            } else {
                (p.interval * 2).min(POLL_MAX)
            };
        }
    }
}

/// One row of a feed answer as the engine's change. Latest-version rows carry no operation
/// (the service does not say whether an item was created or replaced): they are reported as
/// creates, as the service's own feed has only "a newest version" for them.
fn change_of(range: &str, mode: FeedMode, key: &PartitionKeyDefinition, row: Value) -> FeedChange {
    let (current, previous, meta) = match mode {
        FeedMode::LatestVersion => (Some(row), None, Value::Null),
        FeedMode::AllVersions => {
            let mut row = row;
            (
                row.get_mut("current").map(Value::take),
                row.get_mut("previous").map(Value::take),
                row.get_mut("metadata")
                    .map(Value::take)
                    .unwrap_or(Value::Null),
            )
        }
    };
    let num = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let lsn = match mode {
        FeedMode::LatestVersion => num(current.as_ref().and_then(|c| c.get("_lsn"))),
        FeedMode::AllVersions => num(meta.get("lsn")),
    };
    let operation = match meta.get("operationType").and_then(Value::as_str) {
        Some(op) if op.eq_ignore_ascii_case("delete") => FeedOp::Delete,
        Some(op) if op.eq_ignore_ascii_case("replace") => FeedOp::Replace,
        _ => FeedOp::Create,
    };
    let image = current.as_ref().or(previous.as_ref());
    let id = image
        .and_then(|d| d.get("id"))
        .or_else(|| meta.get("id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let partition_key_json = image
        .and_then(Value::as_object)
        .and_then(|o| key.extract(o).ok())
        .map(|v| v.to_json().to_string())
        .unwrap_or_else(|| {
            meta.get("partitionKey")
                .map(|pk| {
                    let values: Vec<Value> = key
                        .paths
                        .iter()
                        .map(|p| {
                            pk.get(p.rsplit('/').next().unwrap_or(p))
                                .cloned()
                                .unwrap_or_default()
                        })
                        .collect();
                    Value::Array(values).to_string()
                })
                .unwrap_or_else(|| "[]".into())
        });
    let timestamp = meta
        .get("crts")
        .and_then(Value::as_i64)
        .or_else(|| image.and_then(|d| d.get("_ts")).and_then(Value::as_i64))
        .unwrap_or(0);
    FeedChange {
        range: range.to_string(),
        lsn,
        operation,
        timestamp,
        previous_image_lsn: num(meta.get("previousImageLSN")),
        ttl_expired: meta
            .get("timeToLiveExpired")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        id,
        partition_key_json,
        current: current.map(Document::from_value),
        previous: previous.map(Document::from_value),
    }
}

fn encode(token: &FeedToken) -> String {
    let json = serde_json::to_vec(token).unwrap_or_default();
    format!("{FEED_TOKEN}{}", URL_SAFE_NO_PAD.encode(json))
}

fn decode(text: &str) -> Result<FeedToken> {
    text.strip_prefix(FEED_TOKEN)
        .and_then(|t| URL_SAFE_NO_PAD.decode(t).ok())
        .and_then(|b| serde_json::from_slice::<FeedToken>(&b).ok())
        .filter(|t| !t.ranges.is_empty())
        .ok_or_else(|| {
            Error::bad_request(
                "the change feed continuation is not one this client made for a remote account; \
                 start from the beginning, now or a time",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_round_trip_and_foreign_ones_are_refused() {
        let t = FeedToken {
            ranges: vec![Position {
                id: "1".into(),
                min: "".into(),
                max: "FF".into(),
                at: "\"42\"".into(),
            }],
            next: 0,
        };
        let back = decode(&encode(&t)).unwrap();
        assert_eq!(back.ranges[0].at, "\"42\"");
        assert!(decode("eyJ4Ijox").is_err());
        assert!(decode("cosmoscope-feed:!!").is_err());
    }

    #[test]
    fn all_versions_rows_keep_their_operation_and_key() {
        let key = PartitionKeyDefinition::new(vec!["/pk".into()]).unwrap();
        let row = json!({"metadata": {"operationType": "delete", "lsn": 9, "crts": 5,
            "previousImageLSN": 7, "timeToLiveExpired": false, "id": "a",
            "partitionKey": {"pk": "p1"}}});
        let c = change_of("2", FeedMode::AllVersions, &key, row);
        assert_eq!(
            (c.operation, c.lsn, c.id.as_str()),
            (FeedOp::Delete, 9, "a")
        );
        assert_eq!(c.partition_key(), json!(["p1"]));
        let row = json!({"id": "b", "pk": 3, "_lsn": 4, "_ts": 10});
        let c = change_of("2", FeedMode::LatestVersion, &key, row);
        assert_eq!((c.lsn, c.timestamp), (4, 10));
        assert_eq!(c.partition_key(), json!([3]));
    }
}
