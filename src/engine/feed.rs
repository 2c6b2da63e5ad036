//! The change feed in the engine's words. A request names where to start, the mode and,
//! optionally, one physical partition; a page holds each change with the partition it came
//! from, its LSN, operation, timestamp, key and images, and the continuation to resume after
//! it. A change renders itself in the service's wire shape for either mode.

use serde_json::{Map, Value};

use super::query::Document;
use crate::error::{Error, Result};
pub use crate::store::feed::{FeedMode, FeedOp, FeedStart};
use crate::store::keys::RangeId;
use crate::store::partition_key::PartitionKeyDefinition;

/// What to read of a container's change feed.
#[derive(Debug, Clone)]
pub struct FeedRequest {
    pub start: FeedStart,
    pub mode: FeedMode,
    /// Read one physical partition (by its id) instead of the whole container.
    pub range: Option<String>,
    /// Read only the changes in this EPK span (hex bounds, min inclusive, max exclusive):
    /// a feed range smaller than a physical partition, as the service's `x-ms-start-epk`
    /// and `x-ms-end-epk` headers give one.
    pub epk_range: Option<(String, String)>,
    pub max_items: usize,
}

impl Default for FeedRequest {
    fn default() -> FeedRequest {
        FeedRequest {
            start: FeedStart::Beginning,
            mode: FeedMode::LatestVersion,
            range: None,
            epk_range: None,
            max_items: 100,
        }
    }
}

impl FeedRequest {
    /// The store's request; a range id that no range can have is a 404, as an unknown one is.
    pub(super) fn to_store(&self, container: &str) -> Result<crate::store::feed::FeedRequest> {
        let range = match &self.range {
            Some(id) => Some(id.parse::<RangeId>().map_err(|_| {
                Error::not_found(format!(
                    "container {container} has no partition key range {id:?}"
                ))
            })?),
            None => None,
        };
        let span = match &self.epk_range {
            Some((min, max)) => Some(crate::store::ranges::span_from_hex(min, max)?),
            None => None,
        };
        Ok(crate::store::feed::FeedRequest {
            start: self.start.clone(),
            mode: self.mode,
            range,
            span,
            max_items: self.max_items,
        })
    }
}

/// One change, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedChange {
    /// The physical partition that logged it.
    pub range: String,
    pub lsn: u64,
    pub operation: FeedOp,
    /// The change's conflict-resolved timestamp (Unix seconds): the `_ts` it wrote.
    pub timestamp: i64,
    /// LSN of the version this change replaced or deleted; 0 for creates.
    pub previous_image_lsn: u64,
    /// A delete by time-to-live expiry.
    pub ttl_expired: bool,
    pub id: String,
    /// The item's partition key value in wire form, as JSON text (one value per key path);
    /// [`FeedChange::partition_key`] parses it. Kept as text because most readers of a page
    /// never look at it, and parsing it for each change was a tenth of a feed drain's time.
    pub partition_key_json: String,
    /// The new image (absent for deletes).
    pub current: Option<Document>,
    /// The prior image, when the container keeps previous images.
    pub previous: Option<Document>,
}

impl FeedChange {
    pub(super) fn from_store(c: crate::store::feed::FeedChange) -> FeedChange {
        FeedChange {
            range: c.range.to_string(),
            lsn: c.lsn,
            operation: c.op,
            timestamp: c.crts,
            previous_image_lsn: c.previous_image_lsn,
            ttl_expired: c.ttl_expired,
            partition_key_json: String::from_utf8(c.pk).unwrap_or_default(),
            id: c.id,
            current: c.current.map(Document::from_stored),
            previous: c.previous.map(Document::from_stored),
        }
    }

    /// The item's partition key value in wire form: one JSON value per key path.
    pub fn partition_key(&self) -> Value {
        serde_json::from_str(&self.partition_key_json).unwrap_or(Value::Null)
    }

    /// Bytes of the images delivered.
    pub fn size(&self) -> usize {
        self.current.as_ref().map_or(0, Document::json_len)
            + self.previous.as_ref().map_or(0, Document::json_len)
    }

    /// The change in the service's wire shape for `mode`, for a container keyed by `key`:
    /// the image with its `_lsn` (latest version), or `current`, `previous` and `metadata`
    /// (all versions and deletes).
    pub fn to_json(&self, mode: FeedMode, key: &PartitionKeyDefinition) -> Value {
        // Parsed straight from the text: each image is rendered once.
        let parse = |d: &Document| serde_json::from_slice(d.json_bytes()).unwrap_or(Value::Null);
        match mode {
            FeedMode::LatestVersion => {
                let mut v = self.current.as_ref().map_or(Value::Null, parse);
                if let Value::Object(o) = &mut v {
                    o.insert("_lsn".into(), self.lsn.into());
                }
                v
            }
            FeedMode::AllVersions => {
                let mut meta = Map::new();
                meta.insert("operationType".into(), self.operation.name().into());
                meta.insert("lsn".into(), self.lsn.into());
                meta.insert("crts".into(), self.timestamp.into());
                meta.insert("previousImageLSN".into(), self.previous_image_lsn.into());
                meta.insert("timeToLiveExpired".into(), self.ttl_expired.into());
                if self.operation == FeedOp::Delete {
                    meta.insert("id".into(), self.id.clone().into());
                    let value = key.metadata_object_from_wire(&self.partition_key());
                    meta.insert("partitionKey".into(), value);
                }
                let mut out = Map::new();
                if let Some(c) = &self.current {
                    out.insert("current".into(), parse(c));
                }
                out.insert("metadata".into(), Value::Object(meta));
                if let Some(p) = &self.previous {
                    out.insert("previous".into(), parse(p));
                }
                Value::Object(out)
            }
        }
    }
}

/// A page of changes and the token to continue after it.
#[derive(Debug, Clone)]
pub struct FeedPage {
    pub changes: Vec<FeedChange>,
    pub continuation: String,
    pub request_charge: f64,
    /// The physical partitions read for this page.
    pub ranges: Vec<String>,
    /// The container's partition key, which renders changes ([`FeedChange::to_json`]).
    pub partition_key: PartitionKeyDefinition,
}
