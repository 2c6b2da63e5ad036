//! One authorized request as the handlers see it: the resource it names, its headers read
//! the way the service reads them (reference/gateway.md §2), and its body.

use std::sync::OnceLock;

use hyper::body::Bytes;
use hyper::{HeaderMap, Method};
use serde_json::Value;

use super::resource::Target;
use crate::error::{Error, Result, json_type_name};

/// Request header names the handlers read.
pub mod header {
    pub const PARTITION_KEY: &str = "x-ms-documentdb-partitionkey";
    pub const PARTITION_KEY_RANGE_ID: &str = "x-ms-documentdb-partitionkeyrangeid";
    pub const IS_QUERY: &str = "x-ms-documentdb-isquery";
    pub const IS_QUERY_PLAN: &str = "x-ms-cosmos-is-query-plan-request";
    pub const SUPPORTED_QUERY_FEATURES: &str = "x-ms-cosmos-supported-query-features";
    pub const START_EPK: &str = "x-ms-start-epk";
    pub const END_EPK: &str = "x-ms-end-epk";
    pub const ENABLE_CROSS_PARTITION: &str = "x-ms-documentdb-query-enablecrosspartition";
    pub const MAX_ITEM_COUNT: &str = "x-ms-max-item-count";
    pub const CONTINUATION: &str = "x-ms-continuation";
    pub const IS_UPSERT: &str = "x-ms-documentdb-is-upsert";
    pub const IS_BATCH: &str = "x-ms-cosmos-is-batch-request";
    pub const PRE_TRIGGER: &str = "x-ms-documentdb-pre-trigger-include";
    pub const POST_TRIGGER: &str = "x-ms-documentdb-post-trigger-include";
    pub const A_IM: &str = "a-im";
    pub const IF_MATCH: &str = "if-match";
    pub const IF_NONE_MATCH: &str = "if-none-match";
    pub const IF_MODIFIED_SINCE: &str = "if-modified-since";
    pub const OFFER_THROUGHPUT: &str = "x-ms-offer-throughput";
    pub const OFFER_AUTOPILOT: &str = "x-ms-cosmos-offer-autopilot-settings";
    pub const POPULATE_QUERY_METRICS: &str = "x-ms-documentdb-populatequerymetrics";
    pub const POPULATE_INDEX_METRICS: &str = "x-ms-cosmos-populateindexmetrics";
    pub const POPULATE_QUOTA_INFO: &str = "x-ms-documentdb-populatequotainfo";
    pub const POPULATE_PARTITION_STATISTICS: &str = "x-ms-documentdb-populatepartitionstatistics";
    pub const CONTENT_TYPE: &str = "content-type";
    pub const ACTIVITY_ID: &str = "x-ms-activity-id";
    pub const DATE: &str = "x-ms-date";
    pub const AUTHORIZATION: &str = "authorization";
}

/// A request that passed authorization.
#[derive(Debug)]
pub struct Call {
    pub method: Method,
    pub target: Target,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The body parsed, once: a write's handler checks its partition key and the recorder
    /// reads its id, and each parse of a 1 KB document costs more than the HTTP parsing.
    parsed: OnceLock<Result<Value>>,
}

impl Call {
    pub fn new(method: Method, target: Target, headers: HeaderMap, body: Bytes) -> Call {
        Call {
            method,
            target,
            headers,
            body,
            parsed: OnceLock::new(),
        }
    }

    /// A header's value as text; `None` when absent or not visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A `True`/`False` header (the SDKs send both cases).
    pub fn flag(&self, name: &str) -> bool {
        self.header(name)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// `x-ms-documentdb-partitionkey`: a JSON array of one value per key path.
    pub fn partition_key(&self) -> Result<Option<Value>> {
        let Some(text) = self.header(header::PARTITION_KEY) else {
            return Ok(None);
        };
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Error::bad_request(format!(
                "the {} header must be a JSON array such as [\"value\"] ({e})",
                header::PARTITION_KEY
            ))
        })?;
        match value {
            Value::Array(items) => Ok(Some(match items.len() {
                // The engine takes a bare value for single-path keys.
                1 => items.into_iter().next().unwrap_or(Value::Null),
                _ => Value::Array(items),
            })),
            other => Err(Error::bad_request(format!(
                "the {} header must be a JSON array, not {}",
                header::PARTITION_KEY,
                json_type_name(&other)
            ))),
        }
    }

    /// `x-ms-max-item-count`: `None` for absent or `-1` (the server decides).
    pub fn max_items(&self) -> Result<Option<usize>> {
        match self.header(header::MAX_ITEM_COUNT).map(str::trim) {
            None | Some("") | Some("-1") => Ok(None),
            Some(v) => match v.parse::<i64>() {
                Ok(n) if n > 0 => Ok(Some(n as usize)),
                _ => Err(Error::bad_request(format!(
                    "{} must be a positive number or -1, not {v:?}",
                    header::MAX_ITEM_COUNT
                ))),
            },
        }
    }

    pub fn continuation(&self) -> Option<String> {
        self.header(header::CONTINUATION)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
    }

    pub fn range_id(&self) -> Option<String> {
        self.header(header::PARTITION_KEY_RANGE_ID)
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
    }

    /// `x-ms-start-epk` and `x-ms-end-epk`: an EPK span within the scoped range.
    pub fn epk_range(&self) -> Option<(String, String)> {
        let start = self.header(header::START_EPK)?.trim();
        let end = self.header(header::END_EPK)?.trim();
        Some((start.to_ascii_uppercase(), end.to_ascii_uppercase()))
    }

    /// An etag header value, as clients send it (quoted).
    pub fn etag(&self, name: &str) -> Option<&str> {
        self.header(name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// The body as JSON. A body in the service's binary encoding (which the Rust SDK sends
    /// unless told otherwise) is refused by name rather than as garbled text.
    pub fn json(&self) -> Result<Value> {
        self.json_ref().cloned()
    }

    /// The body as JSON, parsed on first use.
    pub fn json_ref(&self) -> Result<&Value> {
        self.parsed
            .get_or_init(|| self.parse_body())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn parse_body(&self) -> Result<Value> {
        if self.body.first().is_some_and(|b| *b == 0x80 || *b < 0x09) {
            return Err(Error::bad_request(
                "the body is in Cosmos binary encoding, which this gateway does not read; send \
                 JSON text (for the Rust SDK: AZURE_COSMOS_BINARY_ENCODING_ENABLED=false)",
            ));
        }
        if self.body.is_empty() {
            return Err(Error::bad_request("the request needs a JSON body"));
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| Error::bad_request(format!("the body is not valid JSON: {e}")))
    }

    /// The body as a JSON object.
    pub fn json_object(&self) -> Result<&serde_json::Map<String, Value>> {
        match self.json_ref()? {
            Value::Object(o) => Ok(o),
            other => Err(Error::bad_request(format!(
                "the body must be a JSON object, not {}",
                json_type_name(other)
            ))),
        }
    }
}
