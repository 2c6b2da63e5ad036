//! The gateway's request log: every exchange with its client, operation, status, charge,
//! the physical partitions it touched and how long it took, kept in a bounded ring for the
//! explorer's Requests view (which polls it by sequence number) and counted for the status
//! line's request rate. Authorization headers are never kept.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::QueryResult;
use crate::error::StatusCode;

/// Exchanges kept; older ones are dropped first.
pub const CAPACITY: usize = 10_000;
/// Bytes of a request body kept for display.
pub const BODY_KEPT: usize = 16 * 1024;
/// The window the request rate is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(5);

/// One request and its answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Position in the log, from 1.
    pub seq: u64,
    /// When the request arrived (Unix milliseconds).
    pub at_ms: i64,
    pub client: SocketAddr,
    /// The service's name for the operation (`ReadDocument`, `Query`, `ChangeFeed`, ...).
    pub operation: &'static str,
    pub method: String,
    /// The request path and query string, as sent.
    pub path: String,
    pub status: StatusCode,
    pub substatus: u32,
    pub request_charge: f64,
    pub ranges: Vec<String>,
    pub item_count: Option<usize>,
    pub latency: Duration,
    /// Request headers, without `authorization`.
    pub request_headers: Vec<(String, String)>,
    /// The request body as text (its first [`BODY_KEPT`] bytes).
    pub request_body: String,
    /// For a query: its result's statistics (routing, ranges, metrics), without documents.
    pub query: Option<Box<QueryResult>>,
}

/// The log, shared between the server's tasks and the explorer.
#[derive(Debug, Default)]
pub struct Traffic {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    exchanges: VecDeque<std::sync::Arc<Exchange>>,
    next_seq: u64,
    /// Arrival times of recent requests, for the rate.
    recent: VecDeque<Instant>,
}

impl Traffic {
    pub fn new() -> Traffic {
        Traffic::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an exchange, numbering it.
    pub fn record(&self, mut exchange: Exchange) {
        let mut inner = self.lock();
        inner.next_seq += 1;
        exchange.seq = inner.next_seq;
        if inner.exchanges.len() == CAPACITY {
            inner.exchanges.pop_front();
        }
        inner.exchanges.push_back(std::sync::Arc::new(exchange));
        let now = Instant::now();
        inner.recent.push_back(now);
        while inner
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) > RATE_WINDOW)
        {
            inner.recent.pop_front();
        }
    }

    /// Exchanges after `seq` (0 for all kept), oldest first.
    pub fn since(&self, seq: u64) -> Vec<std::sync::Arc<Exchange>> {
        let inner = self.lock();
        let skip = inner.exchanges.partition_point(|e| e.seq <= seq);
        inner.exchanges.iter().skip(skip).cloned().collect()
    }

    /// The number of the last exchange recorded (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.lock().next_seq
    }

    /// Requests per second over the last few seconds.
    pub fn rate(&self) -> f64 {
        let inner = self.lock();
        let now = Instant::now();
        let n = inner
            .recent
            .iter()
            .filter(|t| now.duration_since(**t) <= RATE_WINDOW)
            .count();
        n as f64 / RATE_WINDOW.as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(path: &str) -> Exchange {
        Exchange {
            seq: 0,
            at_ms: 0,
            client: "127.0.0.1:1".parse().unwrap(),
            operation: "Read",
            method: "GET".into(),
            path: path.into(),
            status: StatusCode::Ok,
            substatus: 0,
            request_charge: 1.0,
            ranges: vec!["0".into()],
            item_count: None,
            latency: Duration::from_millis(1),
            request_headers: Vec::new(),
            request_body: String::new(),
            query: None,
        }
    }

    #[test]
    fn numbers_exchanges_and_reads_them_after_a_position() {
        let t = Traffic::new();
        for i in 0..3 {
            t.record(exchange(&format!("/{i}")));
        }
        assert_eq!(t.last_seq(), 3);
        let after_one: Vec<_> = t.since(1).iter().map(|e| e.path.clone()).collect();
        assert_eq!(after_one, ["/1", "/2"]);
        assert!(t.since(3).is_empty());
        assert!(t.rate() > 0.0);
    }

    #[test]
    fn keeps_the_newest_when_full() {
        let t = Traffic::new();
        for i in 0..CAPACITY + 5 {
            t.record(exchange(&format!("/{i}")));
        }
        let all = t.since(0);
        assert_eq!(all.len(), CAPACITY);
        assert_eq!(all[0].seq, 6);
    }
}
