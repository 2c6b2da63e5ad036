//! The gateway run from the explorer: started from the palette or the Requests view on a
//! free loopback port, over the explorer's engine, with an application's signed HTTP
//! requests (signed as the gateway tests sign them) showing in the Requests view with the
//! charges the responses carried, and its writes reaching the tree, the change feed and
//! the partitions view. A port in use is an error message; a key of the user's own is
//! never drawn.

use cosmoscope::gateway::{EMULATOR_KEY, MasterKey};
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::requests::GatewayStatus;
use cosmoscope::tui::state::{Level, View};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use crate::gateway::client::Server;
use crate::support::tui_store::*;

/// An application: signed requests to the gateway at `endpoint`, on a runtime of its own.
struct App {
    runtime: tokio::runtime::Runtime,
    http: HttpClient<HttpConnector, Full<Bytes>>,
    base: String,
    key: MasterKey,
}

/// A response: status, charge header and body.
struct Answer {
    status: u16,
    charge: f64,
    body: Value,
}

impl App {
    fn new(endpoint: &str, key: MasterKey) -> App {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let http =
            runtime.block_on(async { HttpClient::builder(TokioExecutor::new()).build_http() });
        App {
            runtime,
            http,
            base: endpoint.trim_end_matches('/').to_string(),
            key,
        }
    }

    fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let date = Server::now();
        let auth = Server::signature(&self.key, method, path, &date);
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("x-ms-version", "2020-07-15")
            .header("x-ms-date", &date)
            .header("authorization", &auth);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request");
        self.runtime.block_on(async {
            let resp = self.http.request(req).await.expect("the gateway answers");
            let (parts, body) = resp.into_parts();
            let body = body.collect().await.expect("body").to_bytes();
            Answer {
                status: parts.status.as_u16(),
                charge: parts
                    .headers
                    .get("x-ms-request-charge")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse().ok())
                    .expect("a charge header"),
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            }
        })
    }

    /// Whether anything still listens at the endpoint.
    fn connects(&self) -> bool {
        let addr = self.base.trim_start_matches("http://").to_string();
        std::net::TcpStream::connect(addr).is_ok()
    }
}

/// Starts the gateway from the palette on a free port; returns its endpoint.
fn serve_from_palette(h: &mut Harness) -> String {
    h.app.gateway.addr = "127.0.0.1:0".parse().expect("an address");
    h.keys("<c-p>");
    h.type_text("gateway");
    let frame = h.render();
    assert!(
        frame.contains("gateway — Start gateway on 127.0.0.1:0"),
        "{frame}"
    );
    h.keys("<enter>");
    match &h.app.gateway.status {
        GatewayStatus::Serving { info } => info.endpoint.clone(),
        other => panic!("the gateway is {other:?}: {:?}", h.app.message),
    }
}

const DOCS: &str = "/dbs/shop/colls/orders/docs";

#[test]
fn an_applications_requests_show_live_and_its_writes_reach_the_other_views() {
    let mut s = store(120, 40);
    // Follow the orders' change feed from now, as someone watching would.
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.keys("3");
    let endpoint = serve_from_palette(&mut s.h);
    let frame = s.h.render();
    let status_line = frame.lines().nth(38).expect("a status line");
    let addr = endpoint.trim_start_matches("http://").trim_end_matches('/');
    assert!(
        status_line.contains(&format!("⇄ {addr} ")) && status_line.contains(" req/s"),
        "{status_line}"
    );

    let app = App::new(&endpoint, MasterKey::emulator());
    let created = app.send(
        "POST",
        DOCS,
        &[("x-ms-documentdb-partitionkey", r#"["c-1"]"#)],
        &json!({"id": "o-20", "pk": "c-1", "total": 99.5}).to_string(),
    );
    assert_eq!(created.status, 201);
    let read = app.send(
        "GET",
        &format!("{DOCS}/o-20"),
        &[("x-ms-documentdb-partitionkey", r#"["c-1"]"#)],
        "",
    );
    assert_eq!(read.status, 200);
    let missing = app.send(
        "GET",
        &format!("{DOCS}/o-99"),
        &[("x-ms-documentdb-partitionkey", r#"["c-1"]"#)],
        "",
    );
    assert_eq!(missing.status, 404);
    let query = app.send(
        "POST",
        DOCS,
        &[
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-isquery", "True"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ],
        r#"{"query":"SELECT c.id FROM c WHERE c.total > 90","parameters":[]}"#,
    );
    assert_eq!(query.status, 200);
    let returned = query.body["Documents"].as_array().map_or(0, Vec::len);

    s.h.keys("6");
    s.h.poll_traffic();
    let r = &s.h.app.requests;
    let rows: Vec<(&str, u16, f64)> = r
        .tail
        .rows
        .iter()
        .map(|e| (e.operation, e.status.as_u16(), e.request_charge))
        .collect();
    assert_eq!(
        rows,
        [
            ("Create", 201, created.charge),
            ("Read", 200, read.charge),
            ("Read", 404, missing.charge),
            ("Query", 200, query.charge),
        ]
    );
    // The query is selected (the newest) with its statistics and all four ranges.
    let q = r.tail.selected_row().expect("a selection");
    assert_eq!(q.item_count, Some(returned));
    assert_eq!(q.ranges.len(), 4);
    assert!(q.query.is_some());
    assert_eq!(r.ranges_of(DB, ORDERS).len(), 4);
    let frame = s.h.render();
    assert!(frame.contains("┌ Stats"), "{frame}");
    assert!(frame.contains("fan-out"), "{frame}");
    assert!(
        frame.contains("SELECT c.id FROM c WHERE c.total > 90"),
        "{frame}"
    );

    // The application's write reached the tree (reloaded while the tree is not in use),
    // the change feed and the partitions view.
    assert!(frame.contains("orders /pk · 13 · "), "{frame}");
    s.h.poll_feeds();
    assert!(
        s.h.app.feed.tail.rows.iter().any(|e| e.id == "o-20"),
        "the feed saw the gateway's create"
    );
    s.h.keys("4");
    let report = s.h.app.partitions.report.as_ref().expect("a report");
    let items: u64 = report
        .partitions
        .iter()
        .map(|p| p.statistics.item_count)
        .sum();
    assert_eq!(items, 13);
}

#[test]
fn a_database_an_application_creates_appears_in_the_tree() {
    let mut s = store(120, 40);
    s.h.keys("6");
    let endpoint = serve_from_palette(&mut s.h);
    let app = App::new(&endpoint, MasterKey::emulator());
    let r = app.send("POST", "/dbs", &[], r#"{"id":"appdb"}"#);
    assert_eq!(r.status, 201);
    s.h.poll_traffic();
    assert!(
        s.h.app
            .tree
            .nodes
            .iter()
            .any(|n| n.label().starts_with("appdb")),
        "{:?}",
        s.h.app
            .tree
            .nodes
            .iter()
            .map(|n| n.label())
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_port_in_use_is_an_error_message_not_a_crash() {
    let mut s = store(80, 24);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    s.h.app.gateway.addr = taken.local_addr().expect("its address");
    s.h.keys("6 s");
    assert_eq!(s.h.app.gateway.status, GatewayStatus::Off);
    let (level, text) = s.h.app.message.clone().expect("a message");
    assert_eq!(level, Level::Error);
    assert!(
        text.starts_with("gateway not started: cannot listen on"),
        "{text}"
    );
    let frame = s.h.render();
    assert!(frame.contains("The gateway is not running."), "{frame}");
    assert!(
        frame.contains("It did not start: cannot listen on"),
        "{frame}"
    );
}

#[test]
fn stopping_the_gateway_closes_its_port() {
    let mut s = store(120, 40);
    s.h.keys("6");
    let endpoint = serve_from_palette(&mut s.h);
    let app = App::new(&endpoint, MasterKey::emulator());
    assert!(app.connects());
    assert_eq!(s.h.app.view, View::Requests);
    s.h.keys("s");
    assert_eq!(s.h.app.gateway.status, GatewayStatus::Off);
    assert!(!app.connects(), "nothing listens on {endpoint} any more");
    let frame = s.h.render();
    assert!(!frame.contains("⇄"), "{frame}");
    // And it starts again.
    s.h.keys("s");
    assert!(s.h.app.gateway.serving().is_some());
}

#[test]
fn a_key_of_the_users_own_is_never_shown() {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD.encode([7u8; 64]);
    let mut s = store(200, 40);
    s.h.set_gateway_key(&key);
    s.h.keys("6");
    let endpoint = serve_from_palette(&mut s.h);
    let frame = s.h.render();
    assert!(!frame.contains(&key[..20]), "{frame}");
    assert!(!frame.contains(&EMULATOR_KEY[..20]), "{frame}");
    assert!(
        frame.contains("AccountKey=<the key in $COSMOSCOPE_GATEWAY_KEY>;"),
        "{frame}"
    );
    // The emulator's key no longer signs; the user's does.
    let stranger = App::new(&endpoint, MasterKey::emulator());
    assert_eq!(stranger.send("GET", "/", &[], "").status, 401);
    let owner = App::new(&endpoint, MasterKey::parse(&key).expect("a key"));
    assert_eq!(owner.send("GET", "/", &[], "").status, 200);
    s.h.poll_traffic();
    let statuses: Vec<u16> =
        s.h.app
            .requests
            .tail
            .rows
            .iter()
            .map(|e| e.status.as_u16())
            .collect();
    assert_eq!(statuses, [401, 200]);
    let frame = s.h.render();
    assert!(!frame.contains(&key[..20]), "{frame}");
}

#[test]
fn with_tls_the_explorers_gateway_serves_https_and_says_which_certificate_to_trust() {
    let mut s = store(200, 40);
    s.h.set_gateway_options(cosmoscope::tui::Options {
        tls: true,
        ..Default::default()
    });
    s.h.keys("6");
    let endpoint = serve_from_palette(&mut s.h);
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let GatewayStatus::Serving { info } = s.h.app.gateway.status.clone() else {
        panic!("the gateway is {:?}", s.h.app.gateway.status)
    };
    let cert = info
        .certificate
        .expect("an HTTPS gateway names its certificate");
    assert!(cert.is_file(), "{}", cert.display());
    let frame = s.h.render();
    assert!(
        frame.contains("have the client trust") && frame.contains("gateway-cert"),
        "{frame}"
    );
}
