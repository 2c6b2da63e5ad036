//! A gateway on a temporary store, started in-process on a free loopback port, and a small
//! signing client for it (hyper's own), so tests speak HTTP exactly as an SDK does.

use std::sync::Arc;

use cosmoscope::engine::{Backend, Engine};
use cosmoscope::gateway::{Gateway, MasterKey, Options};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tempfile::TempDir;

/// A response as a test reads it.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn charge(&self) -> f64 {
        self.header("x-ms-request-charge")
            .expect("every response has a charge")
            .parse()
            .expect("the charge is a number")
    }
}

pub struct Server {
    pub runtime: tokio::runtime::Runtime,
    pub engine: Arc<Engine>,
    pub gateway: Option<Gateway>,
    pub base: String,
    pub key: MasterKey,
    client: Client<HttpConnector, Full<Bytes>>,
    // Dropped last: the store lives in it.
    _dir: TempDir,
}

impl Server {
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("temporary directory");
        let engine = Arc::new(Engine::open(dir.path()).expect("open engine"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let backend: Arc<dyn Backend> = engine.clone();
        let gateway = runtime
            .block_on(Gateway::start(
                backend,
                Options {
                    addr: "127.0.0.1:0".parse().unwrap(),
                    key: None,
                    tls: false,
                    data_dir: dir.path().to_path_buf(),
                    enforce_throughput: false,
                },
            ))
            .expect("start the gateway");
        let base = gateway.endpoint().trim_end_matches('/').to_string();
        let client = runtime.block_on(async { Client::builder(TokioExecutor::new()).build_http() });
        Server {
            runtime,
            engine,
            gateway: Some(gateway),
            base,
            key: MasterKey::emulator(),
            client,
            _dir: dir,
        }
    }

    /// The signature headers for `method` on `path`, signed with `key` at `date`.
    pub fn signature(key: &MasterKey, method: &str, path: &str, date: &str) -> String {
        let (rtype, link) = cosmoscope::engine::remote::signing::resource_of(path);
        key.authorization(cosmoscope::gateway::auth::Signed {
            verb: method,
            resource_type: &rtype,
            resource_link: &link,
            date,
        })
    }

    pub fn now() -> String {
        chrono::Utc::now()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string()
    }

    /// Sends a request signed with the server's key, plus `headers`.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        let date = Server::now();
        let auth = Server::signature(&self.key, method, path, &date);
        let mut all = vec![
            ("x-ms-date", date.as_str()),
            ("authorization", auth.as_str()),
        ];
        all.extend_from_slice(headers);
        self.send_raw(method, path, &all, Bytes::from(body.to_string()))
    }

    /// Sends exactly the given headers and body.
    pub fn send_raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Response {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("x-ms-version", "2020-07-15");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(body)).expect("request");
        self.runtime.block_on(async {
            let resp = self.client.request(req).await.expect("the gateway answers");
            let (parts, body) = resp.into_parts();
            let body = body.collect().await.expect("body").to_bytes();
            Response {
                status: parts.status.as_u16(),
                headers: parts.headers,
                body,
            }
        })
    }

    /// A database and a container partitioned on `/pk` with `throughput` RU/s.
    pub fn container(&self, db: &str, c: &str, throughput: u64) {
        let r = self.send("POST", "/dbs", &[], &format!(r#"{{"id":"{db}"}}"#));
        assert!(r.status == 201 || r.status == 409, "{r:?}");
        let body = format!(
            r#"{{"id":"{c}","partitionKey":{{"paths":["/pk"],"kind":"Hash","version":2}}}}"#
        );
        let t = throughput.to_string();
        let r = self.send(
            "POST",
            &format!("/dbs/{db}/colls"),
            &[("x-ms-offer-throughput", &t)],
            &body,
        );
        assert_eq!(r.status, 201, "{r:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(g) = self.gateway.take() {
            self.runtime.block_on(g.stop());
        }
    }
}
