//! The Requests view's state: the gateway the explorer runs (off, starting, serving,
//! stopping) and every request it served as a live [`Tail`], with the view's filter and the
//! physical partitions of the containers queried (for the stats panel's key-space strip).
//!
//! The account key is not here: the runtime keeps it, so nothing drawn can show it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use super::query::RangeSpan;
use super::tail::{RowFilter, Tail};
use crate::gateway::{DEFAULT_PORT, Exchange};

/// A gateway that is serving, as the explorer shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayInfo {
    /// The URL clients connect to (`http://127.0.0.1:8081/`).
    pub endpoint: String,
    pub addr: SocketAddr,
    /// Clients sign with a key the user gave, which is never shown; otherwise with the
    /// emulator's public key.
    pub custom_key: bool,
    /// The certificate clients must trust, when it serves HTTPS.
    pub certificate: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum GatewayStatus {
    #[default]
    Off,
    Starting {
        ticket: u64,
    },
    Serving {
        info: GatewayInfo,
    },
    Stopping {
        ticket: u64,
    },
}

/// The gateway the explorer runs in its own process.
#[derive(Debug, Clone)]
pub struct GatewayState {
    /// Where the palette's action starts it (`--serve ADDR` or 127.0.0.1:8081).
    pub addr: SocketAddr,
    /// Start it with the session (`--serve`).
    pub at_launch: bool,
    pub status: GatewayStatus,
    /// Requests per second over the last few seconds.
    pub rate: f64,
    /// Why the last start failed (a port in use), until one succeeds.
    pub failed: Option<String>,
}

impl Default for GatewayState {
    fn default() -> GatewayState {
        GatewayState {
            addr: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            at_launch: false,
            status: GatewayStatus::Off,
            rate: 0.0,
            failed: None,
        }
    }
}

impl GatewayState {
    pub fn serving(&self) -> Option<&GatewayInfo> {
        match &self.status {
            GatewayStatus::Serving { info } => Some(info),
            _ => None,
        }
    }

    /// What the palette's gateway entry does now.
    pub fn action_title(&self) -> String {
        match &self.status {
            GatewayStatus::Off => format!("Start gateway on {}", self.addr),
            GatewayStatus::Starting { .. } => format!("Start gateway on {} (starting…)", self.addr),
            GatewayStatus::Serving { info } => format!("Stop gateway on {}", info.addr),
            GatewayStatus::Stopping { .. } => "Stop gateway (stopping…)".into(),
        }
    }
}

/// Parsed `/` filter: `status:4xx op:query range:3 client:127.0.0.1 method:post` and free
/// words matching the operation or the resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestFilter {
    pub text: String,
    status: Option<String>,
    op: Option<String>,
    range: Option<String>,
    client: Option<String>,
    method: Option<String>,
    words: Vec<String>,
}

impl RequestFilter {
    /// Whether the filter lets every request through.
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.op.is_none()
            && self.range.is_none()
            && self.client.is_none()
            && self.method.is_none()
            && self.words.is_empty()
    }
}

impl RowFilter<Arc<Exchange>> for RequestFilter {
    fn parse(text: &str) -> RequestFilter {
        let mut f = RequestFilter {
            text: text.to_string(),
            ..Default::default()
        };
        for word in text.split_whitespace() {
            match word.split_once(':') {
                Some(("status", v)) => f.status = Some(v.to_ascii_lowercase()),
                Some(("op", v)) => f.op = Some(v.to_lowercase()),
                Some(("range", v)) => f.range = Some(v.to_string()),
                Some(("client", v)) => f.client = Some(v.to_string()),
                Some(("method", v)) => f.method = Some(v.to_ascii_uppercase()),
                _ => f.words.push(word.to_lowercase()),
            }
        }
        f
    }

    fn matches(&self, e: &Arc<Exchange>) -> bool {
        if self.is_empty() {
            return true;
        }
        let resource = if self.words.is_empty() {
            String::new()
        } else {
            resource_label(&e.path).to_lowercase()
        };
        let op = e.operation.to_lowercase();
        self.status
            .as_ref()
            .is_none_or(|s| status_matches(s, e.status.as_u16(), e.substatus))
            && self.op.as_ref().is_none_or(|o| op.contains(o.as_str()))
            && self.range.as_ref().is_none_or(|r| e.ranges.contains(r))
            && self
                .client
                .as_ref()
                .is_none_or(|c| e.client.to_string().contains(c.as_str()))
            && self.method.as_ref().is_none_or(|m| e.method == *m)
            && self
                .words
                .iter()
                .all(|w| resource.contains(w.as_str()) || op.contains(w.as_str()))
    }

    fn text(&self) -> &str {
        &self.text
    }
}

/// `4xx`, `40x`, `404`, or `404/1003` with a substatus.
fn status_matches(pattern: &str, status: u16, substatus: u32) -> bool {
    let (code, sub) = match pattern.split_once('/') {
        Some((c, s)) => (c, Some(s)),
        None => (pattern, None),
    };
    let digits = status.to_string();
    code.len() == digits.len()
        && code
            .chars()
            .zip(digits.chars())
            .all(|(p, d)| p == 'x' || p == d)
        && sub.is_none_or(|s| s == substatus.to_string())
}

/// The database and container a request path names, if it names one
/// (`/dbs/shop/colls/orders/docs/o1` → `shop`, `orders`).
pub fn container_of(path: &str) -> Option<(String, String)> {
    let path = path.split('?').next().unwrap_or_default();
    let mut parts = path.split('/').filter(|s| !s.is_empty());
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("dbs"), Some(db), Some("colls"), Some(c)) => Some((decode(db), decode(c))),
        _ => None,
    }
}

/// A request path the way the explorer names resources: `shop/orders/docs/o1` for
/// `/dbs/shop/colls/orders/docs/o1`, names percent-decoded, the query string kept.
pub fn resource_label(path: &str) -> String {
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let parts: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let named = matches!(parts[i].as_str(), "dbs" | "colls") && i + 1 < parts.len();
        if named {
            i += 1;
        }
        out.push(&parts[i]);
        i += 1;
    }
    let mut label = if out.is_empty() {
        "/".to_string()
    } else {
        out.join("/")
    };
    if let Some(q) = query {
        label.push('?');
        label.push_str(q);
    }
    label
}

/// Percent-decodes a path segment (invalid escapes are kept as they are).
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A container's physical partitions for the strip, as of a moment of the request log.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownRanges {
    /// When the newest request seen when they were asked for arrived (Unix milliseconds).
    pub as_of_ms: i64,
    pub spans: Vec<RangeSpan>,
}

/// Ranges being read for the strip.
#[derive(Debug, Clone, PartialEq)]
pub struct RangesLoading {
    pub ticket: u64,
    pub db: String,
    pub c: String,
    pub as_of_ms: i64,
}

#[derive(Debug, Clone, Default)]
pub struct RequestsState {
    /// Every request served, oldest first, with the view's filter, pause and selection.
    pub tail: Tail<Arc<Exchange>, RequestFilter>,
    /// The selected request's detail takes most of the view.
    pub expanded: bool,
    /// The charge of every request received.
    pub request_charge: f64,
    /// Physical partitions of the containers whose queries were looked at, by container.
    pub ranges: HashMap<(String, String), KnownRanges>,
    pub ranges_loading: Option<RangesLoading>,
    /// The Unix second the application's writes last reloaded the tree.
    pub tree_reloaded_at: Option<i64>,
    /// The application wrote items since the tree last reloaded.
    pub tree_stale: bool,
}

impl RequestsState {
    pub fn push(&mut self, exchanges: Vec<Arc<Exchange>>) {
        let charge: f64 = exchanges.iter().map(|e| e.request_charge).sum();
        self.request_charge = crate::charge::round(self.request_charge + charge);
        self.tail.push(exchanges);
    }

    /// When the newest request kept arrived (Unix milliseconds; 0 before any).
    pub fn newest_ms(&self) -> i64 {
        self.tail.rows.back().map_or(0, |e| e.at_ms)
    }

    pub fn clear(&mut self) {
        self.tail.clear();
        self.request_charge = 0.0;
    }

    /// The key-space strip's ranges for a query on `db/c`, when known.
    pub fn ranges_of(&self, db: &str, c: &str) -> &[RangeSpan] {
        self.ranges
            .get(&(db.to_string(), c.to_string()))
            .map_or(&[], |k| k.spans.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StatusCode;
    use std::time::Duration;

    fn exchange(op: &'static str, path: &str, status: StatusCode, substatus: u32) -> Arc<Exchange> {
        Arc::new(Exchange {
            seq: 1,
            at_ms: 0,
            client: "127.0.0.1:50000".parse().unwrap(),
            operation: op,
            method: "POST".into(),
            path: path.into(),
            status,
            substatus,
            request_charge: 1.0,
            ranges: vec!["3".into()],
            item_count: None,
            latency: Duration::from_millis(1),
            request_headers: Vec::new(),
            request_body: String::new(),
            query: None,
        })
    }

    #[test]
    fn paths_name_resources_the_explorer_way() {
        assert_eq!(
            resource_label("/dbs/shop/colls/orders/docs/o%201"),
            "shop/orders/docs/o 1"
        );
        assert_eq!(resource_label("/dbs"), "dbs");
        assert_eq!(resource_label("/dbs/shop/colls"), "shop/colls");
        assert_eq!(resource_label("/"), "/");
        assert_eq!(resource_label("/offers?x=1"), "offers?x=1");
        assert_eq!(
            container_of("/dbs/shop/colls/my%20c/docs"),
            Some(("shop".into(), "my c".into()))
        );
        assert_eq!(container_of("/dbs/shop"), None);
    }

    #[test]
    fn filters_combine() {
        let q = exchange("Query", "/dbs/shop/colls/orders/docs", StatusCode::Ok, 0);
        let gone = exchange(
            "Read",
            "/dbs/shop/colls/orders/docs/o1",
            StatusCode::NotFound,
            0,
        );
        let f = RequestFilter::parse("status:2xx op:query range:3 orders");
        assert!(f.matches(&q));
        assert!(!f.matches(&gone));
        assert!(RequestFilter::parse("status:4xx o1").matches(&gone));
        assert!(RequestFilter::parse("status:404").matches(&gone));
        assert!(!RequestFilter::parse("status:404/1002").matches(&gone));
        assert!(!RequestFilter::parse("range:2").matches(&q));
        assert!(RequestFilter::parse("client:127.0.0.1 method:post").matches(&q));
    }
}
