//! What a handler answers: a status, the service's response headers and a JSON body, plus
//! what the Requests view shows about it (charge, ranges, items). Errors become the
//! service's `{code, message}` body with its status, substatus and charge headers
//! (reference/gateway.md §3).

use hyper::body::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::engine::QueryResult;
use crate::error::{Error, StatusCode};

/// Response header names the gateway sends.
pub mod header {
    pub const REQUEST_CHARGE: &str = "x-ms-request-charge";
    pub const ACTIVITY_ID: &str = "x-ms-activity-id";
    pub const SESSION_TOKEN: &str = "x-ms-session-token";
    pub const CONTINUATION: &str = "x-ms-continuation";
    pub const ITEM_COUNT: &str = "x-ms-item-count";
    pub const RANGE_ID: &str = "x-ms-documentdb-partitionkeyrangeid";
    pub const SUBSTATUS: &str = "x-ms-substatus";
    pub const RETRY_AFTER_MS: &str = "x-ms-retry-after-ms";
    pub const LSN: &str = "lsn";
    pub const ITEM_LSN: &str = "x-ms-item-lsn";
    pub const ETAG: &str = "etag";
    pub const QUERY_METRICS: &str = "x-ms-documentdb-query-metrics";
    pub const INDEX_UTILIZATION: &str = "x-ms-cosmos-index-utilization";
    pub const RESOURCE_QUOTA: &str = "x-ms-resource-quota";
    pub const RESOURCE_USAGE: &str = "x-ms-resource-usage";
    /// A stored procedure's `console.log` output, percent-encoded.
    pub const SCRIPT_LOG: &str = "x-ms-documentdb-script-log-results";
    pub const INDEX_PROGRESS: &str = "x-ms-documentdb-collection-index-transformation-progress";
}

/// A handler's answer, before the server adds what every response carries (activity id,
/// date, versions).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub substatus: u32,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
    pub request_charge: f64,
    /// Physical partitions that served the request, for the Requests view.
    pub ranges: Vec<String>,
    /// Items (documents, changes, resources) in the body.
    pub item_count: Option<usize>,
    /// For a query: its statistics (routing, ranges, metrics), documents taken out.
    pub query: Option<Box<QueryResult>>,
}

impl Reply {
    pub fn new(status: StatusCode) -> Reply {
        Reply {
            status,
            substatus: 0,
            headers: Vec::new(),
            body: Bytes::new(),
            request_charge: 0.0,
            ranges: Vec::new(),
            item_count: None,
            query: None,
        }
    }

    /// A JSON body.
    pub fn json(status: StatusCode, body: &impl Serialize) -> Reply {
        let bytes = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
        Reply::raw(status, bytes)
    }

    /// A body that is already JSON text.
    pub fn raw(status: StatusCode, body: Vec<u8>) -> Reply {
        Reply {
            body: Bytes::from(body),
            ..Reply::new(status)
        }
    }

    /// A feed page in the service's shape: `{"_rid", "<Kind>": [...], "_count"}`, built
    /// from items already rendered as JSON text (so documents are not parsed again).
    pub fn feed(rid: &str, kind: &str, items: &[&[u8]]) -> Reply {
        let mut body = Vec::with_capacity(64 + items.iter().map(|i| i.len() + 1).sum::<usize>());
        body.extend_from_slice(b"{\"_rid\":");
        body.extend_from_slice(&serde_json::to_vec(rid).unwrap_or_default());
        body.extend_from_slice(b",\"");
        body.extend_from_slice(kind.as_bytes());
        body.extend_from_slice(b"\":[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(item);
        }
        body.extend_from_slice(b"],\"_count\":");
        body.extend_from_slice(items.len().to_string().as_bytes());
        body.push(b'}');
        Reply::raw(StatusCode::Ok, body).with_items(items.len())
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    pub fn charge(mut self, ru: f64) -> Reply {
        self.request_charge = ru;
        self
    }

    pub fn ranges(mut self, ranges: Vec<String>) -> Reply {
        self.ranges = ranges;
        self
    }

    pub fn with_items(mut self, n: usize) -> Reply {
        self.item_count = Some(n);
        self
    }

    /// The service's error response for `e`: `{"code", "message"}` with its status and
    /// substatus, the charge it cost and, for 429, when to retry.
    pub fn error(e: &Error) -> Reply {
        let mut message = e.message.clone();
        if let (Some(line), Some(column)) = (e.line, e.column) {
            message.push_str(&format!(" (line {line}, column {column})"));
        }
        Reply::error_body(
            e,
            serde_json::json!({ "code": e.code(), "message": message }),
        )
    }

    /// An error with extra members in its body (the query plan of a query the gateway
    /// cannot serve across partitions goes in `additionalErrorInfo`).
    pub fn error_body(e: &Error, body: Value) -> Reply {
        let mut reply = Reply::json(e.status, &body).charge(e.request_charge);
        reply.substatus = e.substatus;
        if let Some(ms) = e.retry_after_ms {
            reply = reply.header(header::RETRY_AFTER_MS, ms.to_string());
        }
        reply
    }
}
