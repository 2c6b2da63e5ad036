//! One signed request to the account and its answer, over hyper's pooled client with
//! rustls (the system's root certificates, plus a CA file for a private endpoint such as
//! `cosmoscope serve --tls`).
//!
//! Every request gets a fresh `x-ms-date` and signature (the service refuses dates more
//! than 15 minutes off, so a retried request is signed again). A 429 is retried after the
//! service's `x-ms-retry-after-ms` as the SDKs do ([`RetryPolicy`]: 9 retries, 30 s of
//! waiting); any other failure is returned as the engine's [`Error`] with the service's
//! status, substatus, message and charge. A request that gets no answer is a 408 (timeout)
//! or 503 (the endpoint cannot be reached) whose message says what is known of its outcome.
//!
//! The backend's operations are synchronous (front ends call them off their UI task), so
//! the client runs on a small runtime of its own and each request blocks on it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, Method};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::config::RemoteConfig;
use super::signing::{MasterKey, Signed, http_date, percent_encode, resource_of};
use crate::engine::retry::RetryPolicy;
use crate::error::{Error, Result, StatusCode};

/// The REST API version the SDKs send (reference/gateway.md §2).
pub const API_VERSION: &str = "2020-07-15";

/// A request: the verb, the resource path in unencoded segments (`dbs/D/colls/C/docs`), the
/// headers beyond the signature's, and the body.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
}

impl Call {
    pub fn new(method: Method, path: impl Into<String>) -> Call {
        Call {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.headers.push((name, value.into()));
        self
    }

    pub fn json(mut self, body: &Value) -> Call {
        self.body = Some(body.to_string().into_bytes());
        self.header("content-type", "application/json")
    }

    pub fn body(mut self, content_type: &'static str, body: Vec<u8>) -> Call {
        self.body = Some(body);
        self.header("content-type", content_type)
    }

    /// Whether the request changes the account (for what a timeout leaves unknown).
    fn writes(&self) -> bool {
        let query = self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("x-ms-documentdb-isquery"));
        !query && !matches!(self.method, Method::GET | Method::HEAD)
    }
}

/// A successful answer (2xx or 304).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// `x-ms-request-charge` (0 when absent, as on some 304s).
    pub fn charge(&self) -> f64 {
        charge_of(&self.headers)
    }

    pub fn json(&self) -> Result<Value> {
        serde_json::from_slice(&self.body).map_err(|e| {
            Error::internal(format!(
                "the account answered with a body that is not JSON ({e})"
            ))
        })
    }

    /// The resources of a feed answer (`{"Documents": [...]}`, `{"DocumentCollections":
    /// [...]}`, ...): the body's one array member.
    pub fn feed(&self, member: &str) -> Result<Vec<Value>> {
        match self.json()? {
            Value::Object(mut o) => match o.remove(member) {
                Some(Value::Array(items)) => Ok(items),
                _ => Err(Error::internal(format!(
                    "the account's answer has no {member} array"
                ))),
            },
            _ => Err(Error::internal("the account's answer is not a JSON object")),
        }
    }
}

fn charge_of(headers: &HeaderMap) -> f64 {
    headers
        .get("x-ms-request-charge")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

type HttpsClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The signing HTTP client of one account.
pub struct Http {
    /// Taken in `drop`: a runtime dropped on an async task panics, so it is shut down in
    /// the background instead.
    runtime: Option<tokio::runtime::Runtime>,
    client: HttpsClient,
    endpoint: String,
    key: MasterKey,
    timeout: Duration,
    retry: RetryPolicy,
    /// 429s received, retried or not.
    throttled: AtomicU64,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Http {
    pub fn new(config: &RemoteConfig) -> Result<Http> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cosmoscope-remote")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("could not start the HTTP client: {e}")))?;
        let tls = tls_config(config)?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build();
        let client = {
            let _guard = runtime.enter();
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector)
        };
        Ok(Http {
            runtime: Some(runtime),
            client,
            endpoint: config.endpoint.clone(),
            key: config.key.clone(),
            timeout: config.timeout,
            retry: RetryPolicy::default(),
            throttled: AtomicU64::new(0),
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// 429s received so far.
    pub fn throttled(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }

    /// Sends `call`, retrying 429s; a 2xx or 304 is an [`Answer`], anything else the
    /// service's error.
    pub fn send(&self, call: &Call) -> Result<Answer> {
        self.send_counting(call).0
    }

    /// [`Http::send`], and how many 429s the request met on the way (retried or not).
    pub fn send_counting(&self, call: &Call) -> (Result<Answer>, u64) {
        let mut throttled = 0;
        let result = self.retry.run(&mut throttled, || self.attempt(call));
        self.throttled.fetch_add(throttled, Ordering::Relaxed);
        (result, throttled)
    }

    fn attempt(&self, call: &Call) -> Result<Answer> {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| Error::internal("the HTTP client was shut down"))?;
        let request = self.request(call)?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| (e.is_connect(), Box::new(e) as BoxError))?;
            let (parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| (false, Box::new(e) as BoxError))?
                .to_bytes();
            Ok::<_, (bool, BoxError)>((parts, body))
        };
        // The timer is made inside the runtime, which drives it.
        let outcome =
            runtime.block_on(async { tokio::time::timeout(self.timeout, exchange).await });
        let (parts, body) = match outcome {
            Err(_) => return Err(self.timed_out(call)),
            Ok(Err((connect, e))) => return Err(self.unreachable(call, connect, &*e)),
            Ok(Ok(answer)) => answer,
        };
        let status = StatusCode::from_u16(parts.status.as_u16());
        match status {
            Some(status) if parts.status.is_success() || status == StatusCode::NotModified => {
                Ok(Answer {
                    status,
                    headers: parts.headers,
                    body,
                })
            }
            _ => Err(service_error(parts.status.as_u16(), &parts.headers, &body)),
        }
    }

    fn request(&self, call: &Call) -> Result<hyper::Request<Full<Bytes>>> {
        let (resource_type, resource_link) = resource_of(&call.path);
        let date = http_date(chrono::Utc::now());
        let authorization = self.key.authorization(Signed {
            verb: call.method.as_str(),
            resource_type: &resource_type,
            resource_link: &resource_link,
            date: &date,
        });
        let encoded: Vec<String> = call
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(percent_encode)
            .collect();
        let url = format!("{}/{}", self.endpoint, encoded.join("/"));
        let mut builder = hyper::Request::builder()
            .method(call.method.clone())
            .uri(&url)
            .header("x-ms-date", &date)
            .header("authorization", authorization)
            .header("x-ms-version", API_VERSION)
            .header("accept", "application/json")
            .header(
                "user-agent",
                concat!("cosmoscope/", env!("CARGO_PKG_VERSION")),
            );
        for (name, value) in &call.headers {
            builder = builder.header(*name, value);
        }
        let body = Full::new(Bytes::from(call.body.clone().unwrap_or_default()));
        builder.body(body).map_err(|e| {
            Error::bad_request(format!("cannot send {} {}: {e}", call.method, call.path))
        })
    }

    fn timed_out(&self, call: &Call) -> Error {
        let outcome = if call.writes() {
            " The write may or may not have been applied: read the resource to find out before \
             sending it again."
        } else {
            ""
        };
        Error::new(
            StatusCode::RequestTimeout,
            format!(
                "{} gave no answer to {} /{} within {} s.{outcome}",
                self.endpoint,
                call.method,
                call.path,
                self.timeout.as_secs()
            ),
        )
    }

    fn unreachable(
        &self,
        call: &Call,
        connect: bool,
        e: &(dyn std::error::Error + 'static),
    ) -> Error {
        // The client's own message is "client error (Connect)": the cause is in its sources.
        let mut causes = Vec::new();
        let mut source: Option<&dyn std::error::Error> = Some(e);
        while let Some(s) = source {
            causes.push(s.to_string());
            source = s.source();
        }
        let sent = if connect {
            "The request was not sent."
        } else if call.writes() {
            "The connection failed during the request: the write may or may not have been \
             applied; read the resource to find out before sending it again."
        } else {
            "The connection failed during the request."
        };
        Error::new(
            StatusCode::ServiceUnavailable,
            format!(
                "could not reach {} for {} /{}: {}. {sent}",
                self.endpoint,
                call.method,
                call.path,
                causes.join(": ")
            ),
        )
    }
}

/// rustls with the system's roots and the configured CA file.
fn tls_config(config: &RemoteConfig) -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    // A system without a certificate store still reaches endpoints the CA file covers.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &config.ca_cert {
        use rustls_pki_types::pem::PemObject;
        let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| {
                Error::bad_request(format!(
                    "--ca-cert {}: not a PEM certificate file ({e})",
                    path.display()
                ))
            })?;
        if certs.is_empty() {
            return Err(Error::bad_request(format!(
                "--ca-cert {}: the file holds no certificate",
                path.display()
            )));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| Error::bad_request(format!("--ca-cert {}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::internal(format!("TLS setup: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The engine's error for a failed answer: the service's status and substatus, its
/// `{code, message}` body's message, the charge and, on 429, the retry-after.
fn service_error(code: u16, headers: &HeaderMap, body: &[u8]) -> Error {
    let status = StatusCode::from_u16(code).unwrap_or(if code >= 500 {
        StatusCode::InternalServerError
    } else {
        StatusCode::BadRequest
    });
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_string());
    let message = match (status, message.is_empty()) {
        (StatusCode::Unauthorized, _) => format!(
            "the account refused the request's signature: check the key (--key, COSMOS_KEY or \
             the connection string) and this machine's clock. The service said: {message}"
        ),
        (_, true) => format!("the account answered HTTP {code}"),
        (_, false) if StatusCode::from_u16(code).is_none() => {
            format!("the account answered HTTP {code}: {message}")
        }
        _ => message,
    };
    let mut e = Error::new(status, message).with_charge(charge_of(headers));
    e.substatus = header("x-ms-substatus")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    e.retry_after_ms = header("x-ms-retry-after-ms")
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map(|ms| ms.ceil() as u64);
    e
}
