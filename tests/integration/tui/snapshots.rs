//! Snapshots of every view at 80×24 and 120×40, drawn from a real temporary store with
//! fixed ids and values.
//!
//! What depends on the wall clock is redacted: query and metric timings and the RU/s
//! meters (RU per wall-clock second) are zeroed in the state before drawing, so they
//! cannot shift the layout; `_ts`, the time part of `_etag`, feed event times and the
//! config path are replaced by filters. Request charges are deterministic and kept. The
//! Requests view's gateway runs for real on a free port, which the frame shows as 8081,
//! with its rate zeroed; its requests are recorded in its log with fixed times, clients
//! and latencies.

use std::time::Duration;

use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::error::StatusCode;
use cosmoscope::gateway::Exchange;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::View;
use cosmoscope::tui::state::requests::GatewayStatus;
use serde_json::json;

use crate::support::tui_store::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// Zeroes the figures that depend on the wall clock.
fn freeze(h: &mut Harness) {
    zero_query_timings(h);
    zero_range_meters(h);
    if let Some(report) = h.app.partitions.report.as_mut() {
        for l in &mut report.load {
            l.ru_last_second = 0.0;
            l.ru_peak = 0.0;
            l.samples.clear();
        }
    }
    h.app.gateway.rate = 0.0;
    if let GatewayStatus::Serving { info } = &mut h.app.gateway.status {
        info.addr = "127.0.0.1:8081".parse().expect("an address");
        info.endpoint = "http://127.0.0.1:8081/".into();
    }
}

/// Draws the frame and checks it against the stored snapshot `name_WxH`.
fn check(h: &mut Harness, name: &str) {
    freeze(h);
    let frame = h.render();
    let (w, ht) = {
        let lines: Vec<&str> = frame.lines().collect();
        (
            lines.iter().map(|l| l.chars().count()).max().unwrap_or(0),
            lines.len(),
        )
    };
    assert!(ht > 0 && w > 0);
    insta::with_settings!({
        filters => vec![
            (r#""_ts": \d{10}"#, r#""_ts": [redacted]"#),
            (r"(-0000-0000-0000-)[0-9a-f]{8}(0000)", "${1}tttttttt${2}"),
            (r"\b\d\d:\d\d:\d\d\b", "hh:mm:ss"),
            (r"Rebind keys in [^│]*", "Rebind keys in [config]"),
            // The gateway's confirmation (at a line's end) names the port it got.
            (r"(?m)(gateway serving on 127\.0\.0\.1:)\d+$", "${1}[port]"),
        ],
        omit_expression => true,
        // insta looks next to the asserting file by default; the snapshots stay in
        // tests/snapshots (this file is tests/integration/tui/snapshots.rs).
        snapshot_path => "../../snapshots",
    }, {
        insta::assert_snapshot!(name.to_string(), frame);
    });
}

fn each_size(name: &str, build: impl Fn(&mut Harness)) {
    for (w, ht) in SIZES {
        let mut s = store(w, ht);
        build(&mut s.h);
        check(&mut s.h, &format!("{name}_{w}x{ht}"));
    }
}

fn expand_orders(h: &mut Harness) {
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("<enter>");
}

#[test]
fn tree_with_a_container_expanded() {
    each_size("tree", |h| {
        expand_orders(h);
        select(h, "range 3");
        h.keys("<enter>");
        select(h, "c-1");
    });
}

#[test]
fn item_view() {
    each_size("item", |h| {
        expand_orders(h);
        select(h, "range 0");
        h.keys("<enter>");
        select(h, "c-2");
        h.keys("<enter>");
        select(h, "o-02");
        h.keys("<enter> <tab>");
        assert!(h.app.item.is_some());
    });
}

fn query(h: &mut Harness, sql: &str) {
    expand_orders(h);
    h.keys("<c-n> <c-a> <c-k>");
    h.type_text(sql);
    h.keys("<f5>");
}

#[test]
fn query_console_with_results_and_stats() {
    each_size("query", |h| {
        query(
            h,
            "SELECT c.id, c.pk, c.status, c.total FROM c WHERE c.total > 50",
        );
        assert!(h.app.query.run.is_some());
        assert!(h.app.query.error.is_none());
    });
}

/// The tree and the stats panel grow with the window (issue 23): the same query at
/// 80×24, 140×45 and 200×60.
#[test]
fn the_layout_grows_with_the_window() {
    for (w, ht) in [(80, 24), (140, 45), (200, 60)] {
        let mut s = store(w, ht);
        query(
            &mut s.h,
            "SELECT c.id, c.pk, c.status, c.total FROM c WHERE c.pk IN ('c-1', 'c-3')",
        );
        check(&mut s.h, &format!("layout_{w}x{ht}"));
    }
}

#[test]
fn query_completion_list() {
    each_size("query_completion", |h| {
        expand_orders(h);
        h.keys("<c-n> <c-a> <c-k>");
        h.type_text("SELECT * FROM c JOIN l IN c.lines WHERE c.total > 20 AND c.");
        assert!(h.app.query.completion.is_some());
    });
}

#[test]
fn single_partition_query_as_json() {
    each_size("query_json", |h| {
        query(h, "SELECT c.id, c.total FROM c WHERE c.pk = 'c-3'");
        h.keys("<tab> t");
        assert_eq!(h.app.view, View::Query);
    });
}

#[test]
fn query_error_with_its_position() {
    each_size("query_error", |h| {
        query(h, "SELECT c.id\nFROM c\nWHERE c.total >");
        assert!(h.app.query.error.is_some());
    });
}

#[test]
fn query_parameters_form() {
    each_size("query_params", |h| {
        query(h, "SELECT * FROM c WHERE c.pk = @pk AND c.total > @min");
        h.type_text("\"c-1\"");
    });
}

/// Waits for the start of a fresh wall-clock second, so writes made right after share
/// their `_ts`.
fn fresh_second() {
    let start = cosmoscope::engine::now_secs();
    while cosmoscope::engine::now_secs() == start {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn change_feed_with_events_and_detail() {
    for (w, ht) in SIZES {
        let mut s = store(w, ht);
        expand_orders(&mut s.h);
        s.h.keys("3");
        fresh_second();
        create(&s.engine, ORDERS, &order(13));
        let mut changed = order(13);
        changed["status"] = json!("Cancelled");
        let body = serde_json::to_vec(&changed).expect("JSON");
        s.engine
            .replace_item(DB, ORDERS, &body, None)
            .expect("replace");
        create(&s.engine, ORDERS, &order(14));
        s.h.poll_feeds();
        // The selection follows the newest event; the first row is the replace (the
        // latest version of o-13), with its previous image.
        assert_eq!(
            s.h.app.feed.tail.selected_row().map(|r| r.op.as_str()),
            Some("create")
        );
        s.h.keys("g");
        assert_eq!(
            s.h.app.feed.tail.selected_row().map(|r| r.op.as_str()),
            Some("replace")
        );
        check(&mut s.h, &format!("feed_{w}x{ht}"));
    }
}

#[test]
fn change_feed_waiting() {
    each_size("feed_waiting", |h| {
        expand_orders(h);
        h.keys("3");
    });
}

#[test]
fn partitions() {
    each_size("partitions", |h| {
        expand_orders(h);
        h.keys("4");
        assert!(h.app.partitions.report.is_some());
    });
}

#[test]
fn palette_open() {
    each_size("palette", |h| {
        h.keys("<c-p>");
        h.type_text("orders");
    });
}

#[test]
fn help_for_the_tree() {
    each_size("help", |h| {
        expand_orders(h);
        h.keys("?");
    });
}

#[test]
fn confirm_delete() {
    each_size("confirm_delete", |h| {
        expand_orders(h);
        select(h, "range 2");
        h.keys("<enter> j <enter> j d");
    });
}

/// The workbench table and a row's requests, from a recorded report (a real run is
/// covered by `engine::workbench`; its latencies are fixed here so the frame is stable).
#[test]
fn workbench_report() {
    let report: cosmoscope::workbench::Report =
        serde_json::from_str(include_str!("../../data/workbench_report.json"))
            .expect("the recorded report parses");
    each_size("workbench", |h| {
        h.keys("5");
        h.app.workbench.report = Some(report.clone());
        h.keys("j");
        assert_eq!(h.app.view, View::Workbench);
    });
}

// ---- the Requests view ----

#[test]
fn requests_without_a_gateway_say_how_to_start_one() {
    each_size("requests_off", |h| {
        h.keys("6");
        assert_eq!(h.app.view, View::Requests);
    });
}

/// Starts the gateway from the Requests view, on a free port.
fn serve(h: &mut Harness) {
    h.app.gateway.addr = "127.0.0.1:0".parse().expect("an address");
    h.keys("6 s");
    assert!(h.app.gateway.serving().is_some(), "{:?}", h.app.message);
}

#[test]
fn requests_waiting_with_the_gateway_serving() {
    each_size("requests_waiting", serve);
}

/// A request as the gateway logs it, at 10:00:0`second` from a fixed client.
fn exchange(second: i64, operation: &'static str, method: &str, path: &str) -> Exchange {
    Exchange {
        seq: 0,
        at_ms: 1_763_719_200_000 + second * 1000,
        client: "127.0.0.1:50400".parse().expect("an address"),
        operation,
        method: method.into(),
        path: path.into(),
        status: StatusCode::Ok,
        substatus: 0,
        request_charge: 1.0,
        ranges: vec!["0".into()],
        item_count: None,
        latency: Duration::from_micros(420 + second as u64 * 100),
        request_headers: vec![
            ("x-ms-version".into(), "2020-07-15".into()),
            ("x-ms-date".into(), "Fri, 21 Nov 2025 10:00:00 GMT".into()),
        ],
        request_body: String::new(),
        query: None,
    }
}

/// What a session against the orders container looks like: the account, a create, a
/// read that misses, a conflict, and a cross-partition query last (so it is selected).
fn traffic(s: &crate::support::tui_store::Store) -> Vec<Exchange> {
    let docs = "/dbs/shop/colls/orders/docs";
    let pk = |v: &str| {
        (
            "x-ms-documentdb-partitionkey".to_string(),
            format!("[\"{v}\"]"),
        )
    };
    let mut create = exchange(1, "Create", "POST", docs);
    create.status = StatusCode::Created;
    create.request_charge = 7.62;
    create.ranges = vec!["3".into()];
    create.request_body = order(13).to_string();
    create.request_headers.push(pk("c-1"));
    let mut missing = exchange(2, "Read", "GET", &format!("{docs}/o-99"));
    missing.status = StatusCode::NotFound;
    missing.ranges = vec!["2".into()];
    missing.request_headers.push(pk("c-3"));
    let mut conflict = exchange(3, "Create", "POST", docs);
    conflict.status = StatusCode::Conflict;
    conflict.request_charge = 1.24;
    conflict.ranges = vec!["3".into()];
    conflict.request_body = order(1).to_string();
    conflict.request_headers.push(pk("c-1"));
    let sql = "SELECT c.id, c.total FROM c WHERE c.total > @min";
    let mut page = s
        .engine
        .query(
            DB,
            ORDERS,
            sql,
            &QueryOptions {
                params: [("min".to_string(), json!(50))].into(),
                // As the gateway runs every query: its log shows them.
                index_metrics: true,
                ..Default::default()
            },
        )
        .expect("the query runs");
    let items = page.documents.len();
    // The gateway keeps a query's statistics, not its documents; timings are zeroed.
    page.documents.clear();
    let zero = |m: &mut cosmoscope::engine::QueryMetrics| {
        m.index_lookup_time_in_ms = 0.0;
        m.document_load_time_in_ms = 0.0;
        m.query_engine_execution_time_in_ms = 0.0;
    };
    zero(&mut page.metrics);
    for p in &mut page.partitions {
        zero(&mut p.metrics);
    }
    let mut query = exchange(4, "Query", "POST", docs);
    query.request_charge = page.request_charge;
    query.ranges = page.partitions.iter().map(|p| p.id.to_string()).collect();
    query.item_count = Some(items);
    query.request_body =
        json!({"query": sql, "parameters": [{"name": "@min", "value": 50}]}).to_string();
    query.request_headers.extend([
        ("x-ms-documentdb-isquery".into(), "True".into()),
        ("content-type".into(), "application/query+json".into()),
    ]);
    query.query = Some(Box::new(page));
    vec![
        exchange(0, "ReadDatabaseAccount", "GET", "/"),
        create,
        missing,
        conflict,
        query,
    ]
}

/// The store with the gateway serving and `traffic` in its log, read by the view.
fn with_traffic(width: u16, height: u16) -> crate::support::tui_store::Store {
    let mut s = store(width, height);
    serve(&mut s.h);
    let log = s.h.gateway_traffic().expect("the gateway serves");
    for e in traffic(&s) {
        log.record(e);
    }
    s.h.poll_traffic();
    s
}

/// Checks `name` at both sizes on the store with the gateway's traffic, after `build`.
fn each_size_with_traffic(name: &str, build: impl Fn(&mut Harness)) {
    for (w, ht) in SIZES {
        let mut s = with_traffic(w, ht);
        build(&mut s.h);
        check(&mut s.h, &format!("{name}_{w}x{ht}"));
    }
}

#[test]
fn requests_live_with_a_query_and_its_stats() {
    each_size_with_traffic("requests", |h| {
        assert_eq!(h.app.requests.tail.received, 5);
        // The newest request is selected: the query, whose strip knows the ranges.
        let selected = h.app.requests.tail.selected_row().expect("a selection");
        assert_eq!(selected.operation, "Query");
        assert_eq!(h.app.requests.ranges_of(DB, ORDERS).len(), 4);
    });
}

#[test]
fn requests_filtered_to_client_errors() {
    each_size_with_traffic("requests_filtered", |h| {
        h.keys("/");
        h.type_text("status:4xx");
        h.keys("<enter>");
        assert_eq!(h.app.requests.tail.visible().len(), 2);
        // Still following: the newest that passes, the conflict, with its body.
        assert_eq!(
            h.app.requests.tail.selected_row().map(|e| e.status),
            Some(StatusCode::Conflict)
        );
    });
}

#[test]
fn requests_detail_expanded() {
    each_size_with_traffic("requests_expanded", |h| {
        h.keys("<enter>");
        assert!(h.app.requests.expanded);
    });
}
