//! The wire contract of reference/gateway.md, checked from the client's side: signatures,
//! body limits, error shapes, point operations with their headers, partition key ranges,
//! queries and the change feed, and that one stalled client holds up nobody.

use std::io::Write;
use std::time::Duration;

use cosmoscope::engine::Backend;
use cosmoscope::gateway::MasterKey;
use hyper::body::Bytes;
use serde_json::{Value, json};

use super::client::Server;

const PK: &str = "x-ms-documentdb-partitionkey";

fn docs(db: &str, c: &str) -> String {
    format!("/dbs/{db}/colls/{c}/docs")
}

#[test]
fn the_account_document_advertises_the_gateways_own_endpoint() {
    let s = Server::start();
    let r = s.send("GET", "/", &[], "");
    assert_eq!(r.status, 200, "{r:?}");
    let account = r.json();
    let host = s.base.trim_start_matches("http://");
    assert_eq!(
        account["writableLocations"][0]["databaseAccountEndpoint"],
        json!(format!("http://{host}/"))
    );
    assert_eq!(account["readableLocations"], account["writableLocations"]);
    assert_eq!(
        account["userConsistencyPolicy"]["defaultConsistencyLevel"],
        "Session"
    );
    assert!(r.header("x-ms-activity-id").is_some());
}

#[test]
fn requests_without_a_valid_signature_get_401_and_change_nothing() {
    let s = Server::start();
    let body = Bytes::from_static(br#"{"id":"sneaky"}"#);
    let date = Server::now();
    // No authorization at all.
    let r = s.send_raw("POST", "/dbs", &[("x-ms-date", &date)], body.clone());
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.json()["code"], "Unauthorized");
    // Signed with another key.
    let other = MasterKey::parse(&base64_key(9)).unwrap();
    let auth = Server::signature(&other, "POST", "/dbs", &date);
    let r = s.send_raw(
        "POST",
        "/dbs",
        &[("x-ms-date", &date), ("authorization", &auth)],
        body.clone(),
    );
    assert_eq!(r.status, 401);
    // The right key, but a date twenty minutes old.
    let old = (chrono::Utc::now() - chrono::Duration::minutes(20))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let auth = Server::signature(&s.key, "POST", "/dbs", &old);
    let r = s.send_raw(
        "POST",
        "/dbs",
        &[("x-ms-date", &old), ("authorization", &auth)],
        body.clone(),
    );
    assert_eq!(r.status, 401);
    assert!(
        r.json()["message"].as_str().unwrap().contains("away"),
        "{r:?}"
    );
    // A signature for another resource.
    let auth = Server::signature(&s.key, "POST", "/dbs/x", &date);
    let r = s.send_raw(
        "POST",
        "/dbs",
        &[("x-ms-date", &date), ("authorization", &auth)],
        body,
    );
    assert_eq!(r.status, 401);
    let list = s.send("GET", "/dbs", &[], "").json();
    assert_eq!(list["_count"], 0, "{list}");
}

fn base64_key(seed: u8) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode([seed; 64])
}

#[test]
fn bad_bodies_and_unknown_resources_get_clear_errors() {
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    let r = s.send("POST", &path, &[(PK, r#"["a"]"#)], "{not json");
    assert_eq!(r.status, 400);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{r:?}"
    );
    let binary = Bytes::from_static(&[0x80, 0x01, 0x02]);
    let date = Server::now();
    let auth = Server::signature(&s.key, "POST", &path, &date);
    let r = s.send_raw(
        "POST",
        &path,
        &[
            ("x-ms-date", &date),
            ("authorization", &auth),
            (PK, r#"["a"]"#),
        ],
        binary,
    );
    assert_eq!(r.status, 400);
    assert!(
        r.json()["message"].as_str().unwrap().contains("binary"),
        "{r:?}"
    );
    let r = s.send("GET", "/dbs/d/colls/c/nothing/here", &[], "");
    assert_eq!(r.status, 404, "{r:?}");
    // Scripts are served; users and permissions are not.
    let r = s.send("GET", "/dbs/d/colls/c/sprocs", &[], "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["StoredProcedures"], json!([]), "{r:?}");
    let r = s.send("GET", "/dbs/d/users", &[], "");
    assert_eq!(r.status, 400, "{r:?}");
    let r = s.send("GET", "/dbs/nope/colls/c", &[], "");
    assert_eq!(
        (r.status, r.json()["code"].clone()),
        (404, json!("NotFound"))
    );
    // The partition key header must be the body's.
    let r = s.send("POST", &path, &[(PK, r#"["b"]"#)], r#"{"id":"1","pk":"a"}"#);
    assert_eq!(
        (r.status, r.header("x-ms-substatus")),
        (400, Some("1001")),
        "{r:?}"
    );
}

#[test]
fn an_oversized_body_is_refused_before_it_is_read() {
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    let big = format!(
        r#"{{"id":"1","pk":"a","x":"{}"}}"#,
        "y".repeat(3 * 1024 * 1024)
    );
    let r = s.send("POST", &path, &[(PK, r#"["a"]"#)], &big);
    assert_eq!(r.status, 413, "{:?}", r.header("x-ms-substatus"));
    assert_eq!(r.json()["code"], "RequestEntityTooLarge");
    // Nothing was written.
    let q = s.send(
        "POST",
        &path,
        &[
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ],
        r#"{"query":"SELECT VALUE COUNT(1) FROM c"}"#,
    );
    assert_eq!(q.json()["Documents"], json!([0]), "{q:?}");
}

#[test]
fn point_operations_answer_with_the_services_statuses_and_headers() {
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    let pk = [(PK, r#"["a"]"#)];
    let r = s.send("POST", &path, &pk, r#"{"id":"1","pk":"a","n":1}"#);
    assert_eq!(r.status, 201, "{r:?}");
    let etag = r.header("etag").unwrap().to_string();
    assert_eq!(r.json()["_etag"], json!(etag));
    assert!(r.charge() > 0.0);
    assert!(r.header("x-ms-session-token").unwrap().contains('#'));
    let range = r
        .header("x-ms-documentdb-partitionkeyrangeid")
        .unwrap()
        .to_string();
    assert_eq!(
        s.send("POST", &path, &pk, r#"{"id":"1","pk":"a"}"#).status,
        409
    );
    let item = format!("{path}/1");
    let r = s.send("GET", &item, &pk, "");
    assert_eq!((r.status, r.json()["n"].clone()), (200, json!(1)));
    assert_eq!(
        r.header("x-ms-documentdb-partitionkeyrangeid"),
        Some(range.as_str())
    );
    let r = s.send("GET", &item, &[pk[0], ("if-none-match", &etag)], "");
    assert_eq!(r.status, 304);
    let r = s.send(
        "PUT",
        &item,
        &[pk[0], ("if-match", "\"stale\"")],
        r#"{"id":"1","pk":"a","n":2}"#,
    );
    assert_eq!(r.status, 412);
    let r = s.send(
        "PUT",
        &item,
        &[pk[0], ("if-match", &etag)],
        r#"{"id":"1","pk":"a","n":2}"#,
    );
    assert_eq!((r.status, r.json()["n"].clone()), (200, json!(2)));
    let r = s.send(
        "POST",
        &path,
        &[pk[0], ("x-ms-documentdb-is-upsert", "True")],
        r#"{"id":"1","pk":"a","n":3}"#,
    );
    assert_eq!((r.status, r.json()["n"].clone()), (200, json!(3)));
    let r = s.send(
        "PATCH",
        &item,
        &[pk[0], ("content-type", "application/json_patch+json")],
        r#"{"operations":[{"op":"incr","path":"/n","value":10}],"condition":"FROM c WHERE c.n = 3"}"#,
    );
    assert_eq!((r.status, r.json()["n"].clone()), (200, json!(13)), "{r:?}");
    let r = s.send(
        "PATCH",
        &item,
        &pk,
        r#"{"operations":[{"op":"incr","path":"/n","value":1}],"condition":"FROM c WHERE c.n = 3"}"#,
    );
    assert_eq!(r.status, 412);
    let r = s.send("DELETE", &item, &pk, "");
    assert_eq!((r.status, r.body.len()), (204, 0));
    let r = s.send("GET", &item, &pk, "");
    assert_eq!(
        (r.status, r.json()["code"].clone()),
        (404, json!("NotFound"))
    );
    assert!(r.charge() > 0.0, "a 404 is charged too");
    // Without a partition key a point read cannot be routed.
    assert_eq!(s.send("GET", &item, &[], "").status, 400);
}

#[test]
fn a_failed_batch_is_a_multi_status_with_each_operations_result() {
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    let batch = [
        (PK, r#"["a"]"#),
        ("x-ms-cosmos-is-batch-request", "True"),
        ("x-ms-cosmos-batch-atomic", "True"),
    ];
    let ok = json!([
        {"operationType": "Create", "resourceBody": {"id": "1", "pk": "a"}},
        {"operationType": "Upsert", "resourceBody": {"id": "2", "pk": "a"}, "partitionKey": "[\"a\"]"},
    ]);
    let r = s.send("POST", &path, &batch, &ok.to_string());
    assert_eq!(r.status, 200, "{r:?}");
    let results = r.json();
    assert_eq!(results[0]["statusCode"], 201);
    assert_eq!(results[1]["statusCode"], 201);
    let failing = json!([
        {"operationType": "Create", "resourceBody": {"id": "3", "pk": "a"}},
        {"operationType": "Create", "resourceBody": {"id": "1", "pk": "a"}},
    ]);
    let r = s.send("POST", &path, &batch, &failing.to_string());
    assert_eq!(r.status, 207, "{r:?}");
    let results = r.json();
    assert_eq!(
        (
            results[0]["statusCode"].clone(),
            results[1]["statusCode"].clone()
        ),
        (json!(424), json!(409))
    );
    assert_eq!(
        s.send("GET", &format!("{path}/3"), &batch[..1], "").status,
        404,
        "nothing committed"
    );
}

#[test]
fn partition_key_ranges_tile_the_key_space_and_answer_304_while_unchanged() {
    let s = Server::start();
    s.container("d", "c", 40_000);
    let r = s.send(
        "GET",
        "/dbs/d/colls/c/pkranges",
        &[("a-im", "Incremental feed")],
        "",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let ranges = r.json()["PartitionKeyRanges"].as_array().unwrap().clone();
    let engine = s.engine.partition_key_ranges("d", "c").unwrap();
    assert!(engine.len() > 1);
    assert_eq!(ranges.len(), engine.len());
    assert_eq!(ranges[0]["minInclusive"], "");
    assert_eq!(ranges[ranges.len() - 1]["maxExclusive"], "FF");
    for pair in ranges.windows(2) {
        assert_eq!(pair[0]["maxExclusive"], pair[1]["minInclusive"]);
    }
    assert!(
        ranges.iter().all(|r| r["id"].is_string()),
        "ids are strings"
    );
    let etag = r.header("etag").unwrap().to_string();
    let r = s.send(
        "GET",
        "/dbs/d/colls/c/pkranges",
        &[("a-im", "Incremental feed"), ("if-none-match", &etag)],
        "",
    );
    assert_eq!(r.status, 304);
}

#[test]
fn queries_run_in_one_partition_or_across_them_when_the_client_allows_it() {
    let s = Server::start();
    s.container("d", "c", 40_000);
    let path = docs("d", "c");
    for i in 0..40 {
        let pk = format!(r#"["k{}"]"#, i % 8);
        let r = s.send(
            "POST",
            &path,
            &[(PK, &pk)],
            &format!(r#"{{"id":"{i}","pk":"k{}","n":{i}}}"#, i % 8),
        );
        assert_eq!(r.status, 201);
    }
    let query = [
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-isquery", "True"),
    ];
    let body = r#"{"query":"SELECT VALUE c.n FROM c WHERE c.n >= @min","parameters":[{"name":"@min","value":10}]}"#;
    let r = s.send(
        "POST",
        &path,
        &[query[0], query[1], (PK, r#"["k1"]"#)],
        body,
    );
    assert_eq!(r.status, 200, "{r:?}");
    let mut got: Vec<i64> = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    got.sort();
    assert_eq!(got, [17, 25, 33]);
    assert_eq!(r.header("x-ms-item-count"), Some("3"));
    // Across partitions only when allowed.
    let r = s.send("POST", &path, &query, body);
    assert_eq!(r.status, 400, "{r:?}");
    let cross = [
        query[0],
        query[1],
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ("x-ms-max-item-count", "7"),
    ];
    let mut seen = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = cross.to_vec();
        if let Some(c) = &continuation {
            headers.push(("x-ms-continuation", c));
        }
        let r = s.send("POST", &path, &headers, body);
        assert_eq!(r.status, 200, "{r:?}");
        let page = r.json()["Documents"].as_array().unwrap().clone();
        assert!(page.len() <= 7);
        seen.extend(page.iter().map(|v| v.as_i64().unwrap()));
        continuation = r.header("x-ms-continuation").map(str::to_string);
        if continuation.is_none() {
            break;
        }
    }
    seen.sort();
    assert_eq!(seen, (10..40).collect::<Vec<_>>());
    let r = s.send(
        "POST",
        &path,
        &[query[0], (PK, r#"["k1"]"#)],
        r#"{"query":"SELECT * FROM c WHERE"}"#,
    );
    assert_eq!(r.status, 400);
    assert!(
        r.json()["message"].as_str().unwrap().contains("line 1"),
        "{r:?}"
    );
}

#[test]
fn index_metrics_come_back_only_when_the_request_asks_for_them() {
    use base64::Engine as _;
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    for i in 0..5 {
        let r = s.send(
            "POST",
            &path,
            &[(PK, r#"["k"]"#)],
            &format!(r#"{{"id":"{i}","pk":"k","n":{i}}}"#),
        );
        assert_eq!(r.status, 201);
    }
    let query = [
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-isquery", "True"),
        (PK, r#"["k"]"#),
    ];
    let body = r#"{"query":"SELECT * FROM c WHERE c.n = 3"}"#;
    let r = s.send("POST", &path, &query, body);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("x-ms-cosmos-index-utilization"), None);
    let mut asking = query.to_vec();
    asking.push(("x-ms-cosmos-populateindexmetrics", "True"));
    let r = s.send("POST", &path, &asking, body);
    assert_eq!(r.status, 200, "{r:?}");
    let header = r
        .header("x-ms-cosmos-index-utilization")
        .expect("asked for");
    let metrics: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(header)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        metrics["UtilizedSingleIndexes"][0]["IndexSpec"], "/n/?",
        "{metrics}"
    );
    assert_eq!(metrics["PotentialSingleIndexes"], json!([]));
}

#[test]
fn the_change_feed_resumes_from_its_etag_and_answers_304_when_nothing_is_new() {
    let s = Server::start();
    s.container("d", "c", 400);
    let path = docs("d", "c");
    for i in 0..3 {
        s.send(
            "POST",
            &path,
            &[(PK, r#"["a"]"#)],
            &format!(r#"{{"id":"{i}","pk":"a"}}"#),
        );
    }
    let feed = [
        ("a-im", "Incremental feed"),
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
    ];
    let r = s.send("GET", &path, &feed, "");
    assert_eq!(r.status, 200, "{r:?}");
    let ids: Vec<Value> = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].clone())
        .collect();
    assert_eq!(ids, [json!("0"), json!("1"), json!("2")]);
    let etag = r.header("etag").unwrap().to_string();
    let again = [feed[0], feed[1], ("if-none-match", etag.as_str())];
    let r = s.send("GET", &path, &again, "");
    assert_eq!(r.status, 304);
    assert!(
        r.header("etag").is_some(),
        "a 304 still says where to resume"
    );
    s.send("POST", &path, &[(PK, r#"["a"]"#)], r#"{"id":"3","pk":"a"}"#);
    let r = s.send("GET", &path, &again, "");
    assert_eq!(r.json()["Documents"][0]["id"], "3");
    // From now: nothing until the next write.
    let now = [feed[0], feed[1], ("if-none-match", "*")];
    assert_eq!(s.send("GET", &path, &now, "").status, 304);
}

#[test]
fn a_stalled_client_holds_up_nobody() {
    let s = Server::start();
    let addr = s.base.trim_start_matches("http://").to_string();
    // Half a request line and headers, then silence.
    let mut stalled = std::net::TcpStream::connect(&addr).unwrap();
    stalled
        .write_all(b"POST /dbs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"id\"")
        .unwrap();
    let mut idle = std::net::TcpStream::connect(&addr).unwrap();
    idle.write_all(b"GET / HT").unwrap();
    for _ in 0..20 {
        assert_eq!(s.send("GET", "/dbs", &[], "").status, 200);
    }
    std::thread::sleep(Duration::from_millis(10));
    drop((stalled, idle));
}

#[test]
fn every_exchange_is_logged_for_the_explorer_without_its_key() {
    let s = Server::start();
    s.container("d", "c", 400);
    s.send(
        "POST",
        &docs("d", "c"),
        &[(PK, r#"["a"]"#)],
        r#"{"id":"1","pk":"a"}"#,
    );
    let traffic = s.gateway.as_ref().unwrap().traffic();
    let log = traffic.since(0);
    let ops: Vec<&str> = log.iter().map(|e| e.operation).collect();
    assert_eq!(ops, ["CreateDatabase", "CreateContainer", "Create"]);
    let create = &log[2];
    assert_eq!(create.status.as_u16(), 201);
    assert!(create.request_charge > 0.0);
    assert_eq!(create.ranges, ["0"]);
    assert!(
        create
            .request_headers
            .iter()
            .all(|(k, _)| k != "authorization")
    );
    assert!(create.request_body.contains("\"pk\""));
}

#[test]
fn merging_queries_are_answered_with_their_plan_and_run_range_by_range() {
    let s = Server::start();
    s.container("d", "c", 40_000);
    let path = docs("d", "c");
    for i in 0..30 {
        let pk = format!(r#"["k{i}"]"#);
        s.send(
            "POST",
            &path,
            &[(PK, &pk)],
            &format!(r#"{{"id":"{i}","pk":"k{i}","n":{i}}}"#),
        );
    }
    let query = [
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-isquery", "True"),
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
    ];
    let body = r#"{"query":"SELECT c.n FROM c ORDER BY c.n DESC"}"#;
    // Directly: 400/1004 with the plan, as the service's gateway answers.
    let r = s.send("POST", &path, &query, body);
    assert_eq!(
        (r.status, r.header("x-ms-substatus")),
        (400, Some("1004")),
        "{r:?}"
    );
    let info: Value =
        serde_json::from_str(r.json()["additionalErrorInfo"].as_str().unwrap()).unwrap();
    assert_eq!(info["queryInfo"]["orderBy"], json!(["Descending"]));
    // The plan on request.
    let mut plan_headers = query.to_vec();
    plan_headers.push(("x-ms-cosmos-is-query-plan-request", "True"));
    plan_headers.push(("x-ms-cosmos-supported-query-features", "Aggregate, Distinct, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, CompositeAggregate, GroupBy, MultipleAggregates, NonValueAggregate"));
    let plan = s.send("POST", &path, &plan_headers, body).json();
    assert_eq!(plan["queryInfo"], info["queryInfo"]);
    assert_eq!(
        plan["queryRanges"],
        json!([{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}])
    );
    let rewritten = plan["queryInfo"]["rewrittenQuery"]
        .as_str()
        .unwrap()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    // Each range runs the rewritten query; the client merges by orderByItems.
    let ranges =
        s.send("GET", "/dbs/d/colls/c/pkranges", &[], "").json()["PartitionKeyRanges"].clone();
    let mut merged: Vec<i64> = Vec::new();
    for range in ranges.as_array().unwrap() {
        let id = range["id"].as_str().unwrap();
        let r = s.send(
            "POST",
            &path,
            &[
                query[0],
                query[1],
                ("x-ms-documentdb-partitionkeyrangeid", id),
            ],
            &json!({"query": rewritten}).to_string(),
        );
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.header("x-ms-documentdb-partitionkeyrangeid"), Some(id));
        for row in r.json()["Documents"].as_array().unwrap() {
            assert_eq!(row["orderByItems"][0]["item"], row["payload"]["n"]);
            merged.push(row["payload"]["n"].as_i64().unwrap());
        }
    }
    merged.sort_by(|a, b| b.cmp(a));
    assert_eq!(merged, (0..30).rev().collect::<Vec<_>>());
    // A range id the container does not have (any more) is gone: clients re-read pkranges.
    let r = s.send(
        "POST",
        &path,
        &[
            query[0],
            query[1],
            ("x-ms-documentdb-partitionkeyrangeid", "99"),
        ],
        body,
    );
    assert_eq!(
        (r.status, r.header("x-ms-substatus")),
        (410, Some("1002")),
        "{r:?}"
    );
    // A streaming query is served across the container directly.
    let r = s.send(
        "POST",
        &path,
        &query,
        r#"{"query":"SELECT VALUE c.id FROM c WHERE c.n < 5"}"#,
    );
    assert_eq!(
        (r.status, r.json()["_count"].clone()),
        (200, json!(5)),
        "{r:?}"
    );
}

#[test]
fn https_offers_http2_by_alpn_with_a_certificate_kept_in_the_data_directory() {
    use std::sync::Arc as StdArc;

    use cosmoscope::engine::Engine;
    use cosmoscope::gateway::{Gateway, Options};
    use http_body_util::{BodyExt, Empty};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};

    let dir = tempfile::tempdir().unwrap();
    let engine: StdArc<dyn Backend> = StdArc::new(Engine::open(dir.path()).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let options = Options {
        addr: "127.0.0.1:0".parse().unwrap(),
        key: None,
        tls: true,
        data_dir: dir.path().to_path_buf(),
        enforce_throughput: false,
    };
    let gateway = rt
        .block_on(Gateway::start(engine.clone(), options.clone()))
        .unwrap();
    let cert = gateway.certificate().unwrap().to_path_buf();
    assert!(cert.starts_with(dir.path()));
    assert!(gateway.endpoint().starts_with("https://"));
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&cert).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = StdArc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(StdArc::new(config));
    let addr = gateway.local_addr();
    let key = MasterKey::emulator();
    let (status, alpn) = rt.block_on(async move {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let tls = connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .expect("the certificate is valid for localhost");
        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        let (mut send, conn) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(tls),
        )
        .await
        .expect("HTTP/2");
        tokio::spawn(conn);
        let date = Server::now();
        let req = hyper::Request::get(format!("https://localhost:{}/dbs", addr.port()))
            .header("x-ms-date", &date)
            .header(
                "authorization",
                Server::signature(&key, "GET", "/dbs", &date),
            )
            .body(Empty::<Bytes>::new())
            .unwrap();
        let resp = send.send_request(req).await.unwrap();
        let status = resp.status().as_u16();
        let _ = resp.into_body().collect().await;
        (status, alpn)
    });
    assert_eq!((status, alpn.as_deref()), (200, Some(&b"h2"[..])));
    rt.block_on(gateway.stop());
    // The next start keeps the certificate clients already trust.
    let before = std::fs::read(&cert).unwrap();
    let again = rt.block_on(Gateway::start(engine, options)).unwrap();
    assert_eq!(std::fs::read(again.certificate().unwrap()).unwrap(), before);
    rt.block_on(again.stop());
}

#[test]
fn a_public_key_is_refused_off_loopback() {
    use cosmoscope::engine::Engine;
    use cosmoscope::gateway::{Gateway, Options};

    let dir = tempfile::tempdir().unwrap();
    let engine: std::sync::Arc<dyn Backend> =
        std::sync::Arc::new(Engine::open(dir.path()).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(Gateway::start(
            engine,
            Options {
                addr: "0.0.0.0:0".parse().unwrap(),
                key: None,
                tls: false,
                data_dir: dir.path().to_path_buf(),
                enforce_throughput: false,
            },
        ))
        .err()
        .expect("refused");
    assert!(err.message.contains("--key"), "{err}");
}

#[test]
fn a_range_scoped_query_reads_only_the_epk_span_it_is_given_and_a_read_feed_needs_no_permission() {
    let s = Server::start();
    let r = s.send("POST", "/dbs", &[], r#"{"id":"d"}"#);
    assert_eq!(r.status, 201);
    let def = r#"{"id":"h","partitionKey":{"paths":["/t","/u"],"kind":"MultiHash","version":2}}"#;
    let r = s.send(
        "POST",
        "/dbs/d/colls",
        &[("x-ms-offer-throughput", "40000")],
        def,
    );
    assert_eq!(r.status, 201, "{r:?}");
    let path = docs("d", "h");
    (0..60).for_each(|i| write_tenant_item(&s, i));
    // The prefix t1's EPK span and the range holding it, as the Python SDK sends them.
    let info = s.engine.epk("d", "h", &json!(["t1"])).unwrap();
    let (start, end) = info.epk_range.clone().expect("a prefix spans a range");
    let range = info.partitions[0].clone();
    let r = s.send(
        "POST",
        &path,
        &[
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", &range),
            ("x-ms-start-epk", &start),
            ("x-ms-end-epk", &end),
            ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
        ],
        r#"{"query":"SELECT VALUE c.t FROM c"}"#,
    );
    assert_eq!(r.status, 200, "{r:?}");
    let tenants = r.json()["Documents"].clone();
    assert_eq!(tenants.as_array().unwrap().len(), 10, "{tenants}");
    assert!(
        tenants.as_array().unwrap().iter().all(|t| t == "t1"),
        "{tenants}"
    );
    // A read feed across every range, without x-ms-documentdb-query-enablecrosspartition.
    let mut seen = 0;
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![("x-ms-max-item-count", "7")];
        if let Some(c) = &continuation {
            headers.push(("x-ms-continuation", c));
        }
        let r = s.send("GET", &path, &headers, "");
        assert_eq!(r.status, 200, "{r:?}");
        seen += r.json()["_count"].as_u64().unwrap();
        continuation = r.header("x-ms-continuation").map(str::to_string);
        if continuation.is_none() {
            break;
        }
    }
    assert_eq!(seen, 60);
}

#[test]
fn a_change_feed_for_an_epk_span_delivers_only_that_span_and_resumes_within_it() {
    let s = Server::start();
    let r = s.send("POST", "/dbs", &[], r#"{"id":"d"}"#);
    assert_eq!(r.status, 201);
    let def = r#"{"id":"h","partitionKey":{"paths":["/t","/u"],"kind":"MultiHash","version":2}}"#;
    let r = s.send("POST", "/dbs/d/colls", &[], def);
    assert_eq!(r.status, 201, "{r:?}");
    let path = docs("d", "h");
    let write = |i| write_tenant_item(&s, i);
    (0..60).for_each(write);
    // The feed range of the prefix t1: a span inside one physical partition, as the Python
    // SDK reads a feed range smaller than a partition.
    let info = s.engine.epk("d", "h", &json!(["t1"])).unwrap();
    let (start, end) = info.epk_range.clone().expect("a prefix spans a range");
    let range = info.partitions[0].clone();
    let span = [
        ("a-im", "Incremental feed"),
        ("x-ms-documentdb-partitionkeyrangeid", range.as_str()),
        ("x-ms-start-epk", start.as_str()),
        ("x-ms-end-epk", end.as_str()),
        ("x-ms-max-item-count", "4"),
    ];
    let tenants = |r: &super::client::Response| -> Vec<Value> {
        r.json()["Documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["t"].clone())
            .collect()
    };
    let mut seen = Vec::new();
    let mut etag: Option<String> = None;
    loop {
        let mut headers = span.to_vec();
        if let Some(e) = &etag {
            headers.push(("if-none-match", e));
        }
        let r = s.send("GET", &path, &headers, "");
        etag = Some(
            r.header("etag")
                .expect("every page has an etag")
                .to_string(),
        );
        if r.status == 304 {
            break;
        }
        assert_eq!(r.status, 200, "{r:?}");
        seen.extend(tenants(&r));
    }
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert!(seen.iter().all(|t| t == "t1"), "{seen:?}");
    // A new write in the span is the next page; one outside it is not.
    write(61); // t1
    write(62); // t2
    let mut headers = span.to_vec();
    let e = etag.unwrap();
    headers.push(("if-none-match", e.as_str()));
    let r = s.send("GET", &path, &headers, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(tenants(&r), [json!("t1")]);
    // A bound that is not hex is the client's mistake.
    let mut bad = span.to_vec();
    bad[2] = ("x-ms-start-epk", "not-hex");
    assert_eq!(s.send("GET", &path, &bad, "").status, 400);
}

/// Item `i` of container d/h (key `/t,/u`): tenant `t{i % 6}`, user `u{i}`.
fn write_tenant_item(s: &Server, i: usize) {
    let (t, u) = (format!("t{}", i % 6), format!("u{i}"));
    let pk = json!([t, u]).to_string();
    let r = s.send(
        "POST",
        &docs("d", "h"),
        &[(PK, &pk)],
        &json!({"id": i.to_string(), "t": t, "u": u}).to_string(),
    );
    assert_eq!(r.status, 201, "{r:?}");
}
