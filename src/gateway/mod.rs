//! The gateway: an HTTP server speaking the Azure Cosmos DB for NoSQL REST API (gateway
//! mode) over the engine, so applications built on the official SDKs run unchanged against
//! the embedded store, and the explorer shows their requests live (DESIGN.md §9).
//!
//! It is a front end like the CLI and the explorer: every operation goes through the
//! engine facade ([`Backend`]), charges come from the engine's RU model, and nothing here
//! touches the store. The parts, in the order a request meets them:
//!
//! - `server`: connections (HTTP/1.1 and HTTP/2, optionally TLS from [`tls`]), body
//!   limits and timeouts, the response headers every answer carries;
//! - `resource` and [`auth`]: what the path names, and the master-key signature over it;
//! - `call`: the request's headers read the service's way;
//! - `ops`: one module per resource, turning calls into engine operations;
//! - `reply`: status, headers and body, errors in the service's `{code, message}` form;
//! - [`traffic`]: the log of exchanges the explorer's Requests view reads;
//! - [`recording`]: the queries and point operations served, per container, kept in the data
//!   directory for `advise --workload recorded`.

pub mod auth;
mod call;
mod ops;
pub mod recording;
mod reply;
mod resource;
mod server;
pub mod tls;
pub mod traffic;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::engine::Backend;
use crate::error::{Error, Result};
pub use auth::{EMULATOR_KEY, MasterKey};
pub use server::MAX_BODY_BYTES;
pub use traffic::{Exchange, Traffic};

/// The port Microsoft's emulator listens on, which SDK samples default to.
pub const DEFAULT_PORT: u16 = 8081;

/// Async workers for a runtime that serves the gateway: one per core but one, at least one.
///
/// The workers only speak HTTP; the engine's work runs beside them on threads of its own (the
/// committer that writes every create and upsert, the blocking pool that serves the rest,
/// the flusher). A worker per core left those threads queuing behind the workers for a core.
/// On 2 cores (gateway bench, 16 clients, interleaved pairs, two workers against one):
/// - upserts with `--sync periodic`, ten pairs: 5,897–7,104/s against 6,576–8,468/s (more
///   in eight pairs), 230–256 µs of CPU per upsert against 193–243 (less in all ten); the
///   p99 no better (lower in five pairs);
/// - point reads, five pairs: 11.9–13.7k/s against 11.8–13.6k/s; p99 3.3–5.4 ms against
///   2.8–4.5 (lower in all five).
pub fn runtime_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// How to run the gateway.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    /// The account key clients sign with; `None` for the emulator's well-known key, which
    /// is only accepted on a loopback address.
    pub key: Option<String>,
    /// Serve HTTPS with the data directory's certificate (created on first use).
    pub tls: bool,
    /// Where the certificate is kept.
    pub data_dir: PathBuf,
    /// Containers created through the gateway enforce their throughput (429s), as the
    /// service always does; off by default, as in the emulator and the rest of cosmoscope.
    pub enforce_throughput: bool,
}

/// A running gateway; [`Gateway::stop`] shuts it down gracefully.
pub struct Gateway {
    local_addr: SocketAddr,
    scheme: &'static str,
    certificate: Option<PathBuf>,
    custom_key: bool,
    traffic: Arc<Traffic>,
    recorder: Arc<recording::Recorder>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Gateway {
    /// Binds and starts serving on the current tokio runtime.
    pub async fn start(backend: Arc<dyn Backend>, options: Options) -> Result<Gateway> {
        let key = match &options.key {
            Some(text) => MasterKey::parse(text).map_err(Error::bad_request)?,
            None => MasterKey::emulator(),
        };
        if !options.addr.ip().is_loopback() && key.is_emulator_key() {
            return Err(Error::bad_request(format!(
                "binding to {} exposes the store beyond this machine: give --key with a key of \
                 your own (the emulator's key is public)",
                options.addr
            )));
        }
        let (tls, certificate) = if options.tls {
            let files = tls::certificate(&options.data_dir)?;
            (Some(tls::acceptor(&files)?), Some(files.cert))
        } else {
            (None, None)
        };
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|e| Error::bad_request(format!("cannot listen on {}: {e}", options.addr)))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| Error::internal(format!("cannot read the listening address: {e}")))?;
        let scheme = if options.tls { "https" } else { "http" };
        let traffic = Arc::new(Traffic::new());
        let recorder = Arc::new(recording::Recorder::open(options.data_dir.clone()));
        let shared = Arc::new(server::Shared {
            ctx: ops::Context {
                backend,
                scheme,
                authority: local_addr.to_string(),
                enforce_throughput: options.enforce_throughput,
            },
            key,
            traffic: traffic.clone(),
            recorder: recorder.clone(),
        });
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(server::serve(listener, tls, shared, stopped));
        Ok(Gateway {
            local_addr,
            scheme,
            certificate,
            custom_key: options.key.is_some(),
            traffic,
            recorder,
            stop,
            task,
        })
    }

    /// The address it listens on (with the port chosen when asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL clients connect to.
    pub fn endpoint(&self) -> String {
        format!("{}://{}/", self.scheme, self.local_addr)
    }

    /// The certificate clients should trust, when serving HTTPS.
    pub fn certificate(&self) -> Option<&std::path::Path> {
        self.certificate.as_deref()
    }

    /// Whether clients sign with a key the user gave (which is never printed) rather than
    /// the emulator's public one.
    pub fn has_custom_key(&self) -> bool {
        self.custom_key
    }

    /// The log of requests served.
    pub fn traffic(&self) -> Arc<Traffic> {
        self.traffic.clone()
    }

    /// Stops accepting connections and waits (a few seconds at most) for requests under way.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        // What was served since the last save reaches the data directory.
        self.recorder.flush();
    }
}
