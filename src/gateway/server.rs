//! The HTTP side: accepting connections (plain or TLS, HTTP/1.1 and HTTP/2 by ALPN or
//! prior knowledge), bounding what a client may send, checking every request's signature,
//! running the operation off the async workers, and writing the headers every response
//! of the service carries. Each connection is its own task, so a slow or stalled client
//! holds up nobody else; headers must arrive within [`HEADER_TIMEOUT`] and a body within
//! [`BODY_TIMEOUT`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderName, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::auth::{MasterKey, Signed, Verify};
use super::call::{Call, header};
use super::ops::{self, Context};
use super::reply::{Reply, header as out};
use super::resource::Target;
use super::traffic::{BODY_KEPT, Exchange, Traffic};
use crate::error::{Error, StatusCode};

/// The largest request body accepted: the service's 2 MB document limit plus room for a
/// batch's or a query's framing. A larger body is refused from its `Content-Length`, or as
/// soon as it passes the limit, without being read whole.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024 + 64 * 1024;
/// How long a client may take to send a request's headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client may take to send a request's body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// What the gateway says it is, in the service's version headers.
const GATEWAY_VERSION: &str = "version=2.14.0";

/// What every request's handling shares.
pub struct Shared {
    pub ctx: Context,
    pub key: MasterKey,
    pub traffic: Arc<Traffic>,
    /// Queries and point operations served, for `advise --workload recorded`.
    pub recorder: Arc<super::recording::Recorder>,
}

/// Accepts connections until `stop` turns true, then lets open requests finish.
pub async fn serve(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: wait instead of spinning.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue; }
            },
            _ = stop.changed() => break,
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let service = service_fn(move |req| {
            let shared = shared.clone();
            async move { Ok::<_, Infallible>(respond(&shared, peer, req).await) }
        });
        let builder = connection_builder();
        match &tls {
            None => {
                let conn = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .into_owned();
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    let conn = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .into_owned();
                    let _ = watcher.watch(conn).await;
                });
            }
        }
    }
    drop(listener);
    // Requests under way get a few seconds to finish.
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}

fn connection_builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(256);
    builder
}

/// What the workload recorder does with each answered request (run where the reply is
/// made: it may read the store).
fn observer(shared: &Arc<Shared>) -> impl FnOnce(&Call, &Reply) + Send + 'static {
    let shared = shared.clone();
    move |call, reply| shared.recorder.observe(&*shared.ctx.backend, call, reply)
}

/// One request from arrival to response, recorded in the traffic log.
async fn respond(
    shared: &Arc<Shared>,
    peer: SocketAddr,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let at_ms = chrono::Utc::now().timestamp_millis();
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let activity = parts
        .headers
        .get(header::ACTIVITY_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .unwrap_or_else(crate::engine::new_guid);
    let outcome = match read_body(&parts.headers, body).await {
        Ok(bytes) => authorize(shared, &parts, bytes),
        Err(e) => Err(e),
    };
    let (reply, operation, call) = match outcome {
        Err(e) => (Reply::error(&e), "Rejected", None),
        Ok(call) => {
            let operation = ops::operation_name(&call);
            let call = Arc::new(call);
            let reply = match ops::submit(&shared.ctx, &call, observer(shared)) {
                // A create or upsert waits for its commit without holding a thread.
                Some(ops::Submitted::Pending(reply)) => reply.await.unwrap_or_else(|_| {
                    Reply::error(&Error::internal("the write's commit ended without a reply"))
                }),
                Some(ops::Submitted::Refused(reply)) => reply,
                None => {
                    let (shared2, call2) = (shared.clone(), call.clone());
                    tokio::task::spawn_blocking(move || {
                        let reply = ops::handle(&shared2.ctx, &call2);
                        observer(&shared2)(&call2, &reply);
                        reply
                    })
                    .await
                    .unwrap_or_else(|e| {
                        Reply::error(&Error::internal(format!("the operation failed: {e}")))
                    })
                }
            };
            (reply, operation, Some(call))
        }
    };
    let response = build_response(&reply, &activity);
    let request_body = call
        .as_ref()
        .map(|c| String::from_utf8_lossy(&c.body[..c.body.len().min(BODY_KEPT)]).into_owned())
        .unwrap_or_default();
    shared.traffic.record(Exchange {
        seq: 0,
        at_ms,
        client: peer,
        operation,
        method: parts.method.to_string(),
        path,
        status: reply.status,
        substatus: reply.substatus,
        request_charge: reply.request_charge,
        ranges: reply.ranges,
        item_count: reply.item_count,
        latency: started.elapsed(),
        request_headers: parts
            .headers
            .iter()
            .filter(|(k, _)| *k != hyper::header::AUTHORIZATION)
            .map(|(k, v)| {
                (
                    k.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        request_body,
        query: reply.query,
    });
    response
}

/// The body, refused when it is larger than [`MAX_BODY_BYTES`] or slower than
/// [`BODY_TIMEOUT`].
/// Oversized bodies up to this size are read and dropped before the 413 is sent.
const DRAIN_MAX_BYTES: u64 = 16 * 1024 * 1024;

async fn read_body(headers: &hyper::HeaderMap, body: Incoming) -> Result<Bytes, Error> {
    let too_large = || {
        Error::too_large(format!(
            "the request body is larger than {MAX_BODY_BYTES} bytes; a document may be at most 2 MB"
        ))
    };
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > MAX_BODY_BYTES as u64) {
        // Read and drop what the client is sending (never holding it), up to a bound, so
        // it gets the 413 instead of a connection reset mid-upload; past the bound, the
        // connection closes unread.
        if n <= DRAIN_MAX_BYTES {
            let mut body = body;
            let drain = async { while let Some(Ok(_)) = body.frame().await {} };
            let _ = tokio::time::timeout(BODY_TIMEOUT, drain).await;
        }
        return Err(too_large());
    }
    match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, MAX_BODY_BYTES).collect()).await {
        Err(_) => Err(Error::new(
            StatusCode::RequestTimeout,
            "the request body did not arrive in time",
        )),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(Error::bad_request(format!(
            "the request body could not be read: {e}"
        ))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// The request as a [`Call`] once its path parses and its signature is the key's.
fn authorize(
    shared: &Shared,
    parts: &hyper::http::request::Parts,
    body: Bytes,
) -> Result<Call, Error> {
    let target = Target::parse(parts.uri.path())
        .ok_or_else(|| Error::bad_request("the request path is not valid percent-encoded UTF-8"))?;
    let text = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let date = text(header::DATE).or_else(|| text("date")).unwrap_or("");
    let signed = Signed {
        verb: parts.method.as_str(),
        resource_type: &target.resource_type,
        resource_link: &target.resource_link,
        date,
    };
    shared
        .key
        .verify(text(header::AUTHORIZATION), signed, chrono::Utc::now())
        .map_err(|refused| Error::new(StatusCode::Unauthorized, refused.0))?;
    Ok(Call::new(
        parts.method.clone(),
        target,
        parts.headers.clone(),
        body,
    ))
}

/// The reply with the headers every response of the service carries.
fn build_response(reply: &Reply, activity: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(reply.body.clone()));
    *response.status_mut() = hyper::StatusCode::from_u16(reply.status.as_u16())
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    let mut put = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::from_str(value)) {
            headers.append(n, v);
        }
    };
    if !reply.body.is_empty() {
        put("content-type", "application/json");
    }
    put(out::ACTIVITY_ID, activity);
    put(out::REQUEST_CHARGE, &format_charge(reply.request_charge));
    put("x-ms-gatewayversion", GATEWAY_VERSION);
    put("x-ms-serviceversion", GATEWAY_VERSION);
    put("x-ms-schemaversion", "1.19");
    if reply.substatus != 0 {
        put(out::SUBSTATUS, &reply.substatus.to_string());
    }
    for (name, value) in &reply.headers {
        put(name, value);
    }
    response
}

/// Charges as the service prints them: up to two decimals, no trailing zeros.
fn format_charge(ru: f64) -> String {
    let s = format!("{:.2}", crate::charge::round(ru));
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
