//! The client against a server that answers what each test scripts: 429 with a
//! retry-after, 404, 401, a split's 410, a connection dropped mid-request and a request
//! never answered. A plain hyper server on a loopback port this test picks, so each fault
//! is exactly what the service would send.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cosmoscope::engine::Backend;
use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::error::StatusCode;
use cosmoscope::gateway::EMULATOR_KEY;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One scripted answer.
#[derive(Clone)]
enum Fault {
    /// Status, headers, body.
    Answer(u16, Vec<(&'static str, String)>, String),
    /// Close the connection without answering.
    Drop,
    /// Never answer.
    Hang,
}

struct Script {
    runtime: tokio::runtime::Runtime,
    base: String,
    /// What was asked, as "METHOD path".
    seen: Arc<Mutex<Vec<String>>>,
}

/// A server answering `faults` in order (then 500 for anything more).
fn script(faults: Vec<Fault>) -> Script {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let queue = Arc::new(Mutex::new(VecDeque::from(faults)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (q, s) = (queue.clone(), seen.clone());
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (q, s) = (q.clone(), s.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<Incoming>| {
                    let (q, s) = (q.clone(), s.clone());
                    async move {
                        s.lock()
                            .unwrap()
                            .push(format!("{} {}", req.method(), req.uri().path()));
                        let next = q.lock().unwrap().pop_front();
                        match next {
                            Some(Fault::Answer(status, headers, body)) => {
                                let mut resp = hyper::Response::builder().status(status);
                                for (k, v) in headers {
                                    resp = resp.header(k, v);
                                }
                                Ok(resp.body(Full::new(Bytes::from(body))).unwrap())
                            }
                            // A service error makes hyper close the connection unanswered.
                            Some(Fault::Drop) => Err(std::io::Error::other("dropped on purpose")),
                            Some(Fault::Hang) => {
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                                unreachable!()
                            }
                            None => Ok::<_, std::io::Error>(
                                hyper::Response::builder()
                                    .status(500)
                                    .body(Full::new(Bytes::from("{}")))
                                    .unwrap(),
                            ),
                        }
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Script {
        runtime,
        base,
        seen,
    }
}

fn client(s: &Script, timeout: Duration) -> RemoteBackend {
    let mut config = RemoteConfig::new(&s.base, &Secret::new(EMULATOR_KEY)).unwrap();
    config.timeout = timeout;
    RemoteBackend::connect(&config).unwrap()
}

fn ok_dbs() -> Fault {
    Fault::Answer(
        200,
        vec![("x-ms-request-charge", "1".into())],
        r#"{"_rid":"","Databases":[],"_count":0}"#.into(),
    )
}

fn throttled(ms: u64) -> Fault {
    Fault::Answer(
        429,
        vec![
            ("x-ms-retry-after-ms", ms.to_string()),
            ("x-ms-substatus", "3200".into()),
        ],
        r#"{"code":"TooManyRequests","message":"Request rate is large."}"#.into(),
    )
}

#[test]
fn a_429_is_retried_after_the_services_retry_after() {
    let s = script(vec![throttled(20), throttled(20), ok_dbs()]);
    let r = client(&s, Duration::from_secs(10));
    assert!(r.list_databases().unwrap().is_empty());
    assert_eq!(
        s.seen.lock().unwrap().len(),
        3,
        "two retries, then the answer"
    );
    drop(s.runtime);
}

#[test]
fn throttling_past_the_retry_budget_is_a_429_with_its_retry_after() {
    let s = script((0..12).map(|_| throttled(1)).collect());
    let r = client(&s, Duration::from_secs(10));
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::TooManyRequests);
    assert_eq!((e.substatus, e.retry_after_ms), (3200, Some(1)));
    assert_eq!(
        s.seen.lock().unwrap().len(),
        10,
        "the first try and nine retries"
    );
}

#[test]
fn service_errors_keep_their_status_substatus_and_message() {
    let s = script(vec![
        Fault::Answer(
            404,
            vec![("x-ms-request-charge", "1.24".into())],
            r#"{"code":"NotFound","message":"Resource Not Found. Learn more: https://aka.ms/cosmosdb-tsg-not-found"}"#.into(),
        ),
        Fault::Answer(
            401,
            vec![],
            r#"{"code":"Unauthorized","message":"The input authorization token can't serve the request."}"#.into(),
        ),
    ]);
    let r = client(&s, Duration::from_secs(10));
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::NotFound);
    assert!(e.message.starts_with("Resource Not Found"), "{e}");
    assert_eq!(e.request_charge, 1.24);
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::Unauthorized);
    assert!(
        e.message.contains("check the key") && e.message.contains("authorization token"),
        "{e}"
    );
    assert!(!e.message.contains(EMULATOR_KEY));
}

#[test]
fn a_dropped_connection_and_a_silent_server_are_reported_not_hung_on() {
    let s = script(vec![Fault::Drop, Fault::Hang]);
    let r = client(&s, Duration::from_millis(500));
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::ServiceUnavailable);
    assert!(e.message.contains("could not reach"), "{e}");
    let e = r.list_databases().unwrap_err();
    assert_eq!(e.status, StatusCode::RequestTimeout);
    assert!(e.message.contains("gave no answer"), "{e}");
    // A write that got no answer says its outcome is unknown.
    let s = script(vec![Fault::Hang]);
    let mut config = RemoteConfig::new(&s.base, &Secret::new(EMULATOR_KEY)).unwrap();
    config.timeout = Duration::from_millis(500);
    config.read_write = true;
    let r = RemoteBackend::connect(&config).unwrap();
    let e = r.create_database("x").unwrap_err();
    assert!(
        e.message.contains("may or may not have been applied"),
        "{e}"
    );
}

#[test]
fn nothing_listens_is_a_clear_503() {
    // A port just bound and released: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = RemoteConfig::new(
        &format!("http://127.0.0.1:{port}"),
        &Secret::new(EMULATOR_KEY),
    )
    .unwrap();
    let e = RemoteBackend::connect(&config)
        .unwrap()
        .list_databases()
        .unwrap_err();
    assert_eq!(e.status, StatusCode::ServiceUnavailable);
    assert!(e.message.contains("The request was not sent"), "{e}");
}
