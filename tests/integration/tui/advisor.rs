//! The advisor view (issue 27): opened on a container from the tree, its workload and
//! candidates typed in prompts, the advisor run as a job whose advice is the very value
//! `advise --json` prints on the same data, snapshots of the comparison, and a candidate
//! picked to create a re-partitioned copy that the tree shows and a point read by the new
//! key finds. Cancelling the advisor or a copy leaves no container behind.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cosmoscope::engine::{Backend, Engine};
use cosmoscope::error::StatusCode;
use cosmoscope::tui::effect::JobKind;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::View;
use cosmoscope::tui::worker;
use serde_json::{Value, json};

use crate::support::cli::ok;
use crate::support::tui_store::select;

const WORKLOAD: &str = "[[operations]]\nid = \"mine\"\nrate = 10\nquery = \"SELECT * FROM c WHERE c.customer = @c\"\nparams = { c = \"/customer\" }\n\n[[operations]]\nid = \"read\"\nrate = 4\nread = true\n\n[[operations]]\nid = \"new\"\nrate = 2\ncreate = true\n";

/// `shop/orders` keyed by `/id` over two physical partitions, `n` orders of 50 customers
/// (made through the CLI, so no engine holds the directory), and the workload file.
fn setup(dir: &Path, n: usize) -> String {
    ok(dir, &["db", "create", "shop"]);
    ok(
        dir,
        &[
            "container",
            "create",
            "shop/orders",
            "--partition-key",
            "/id",
            "--throughput",
            "12000",
        ],
    );
    let items: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\":\"o{i}\",\"customer\":\"c{}\",\"status\":\"s{}\",\"total\":{i}}}\n",
                i % 50,
                i % 2
            )
        })
        .collect();
    let file = dir.join("orders.ndjson");
    std::fs::write(&file, items).expect("write items");
    ok(
        dir,
        &["import", "shop/orders", file.to_str().expect("a path")],
    );
    let workload = dir.join("workload.toml");
    std::fs::write(&workload, WORKLOAD).expect("write workload");
    workload.to_string_lossy().into_owned()
}

fn harness(dir: &Path, width: u16, height: u16) -> Harness {
    let engine = Arc::new(Engine::open(dir).expect("open engine"));
    Harness::new(engine, dir.to_path_buf(), width, height)
}

/// Opens the view on shop/orders from the tree, types the workload and candidates, runs.
fn advise_in_view(h: &mut Harness, workload: &str, candidates: &str) {
    h.keys("<enter>");
    select(h, "orders");
    h.keys("A");
    assert_eq!(h.app.view, View::Advisor);
    h.keys("w");
    h.type_text(workload);
    h.keys("<enter> c");
    h.type_text(candidates);
    h.keys("<enter> r");
}

#[test]
fn the_view_shows_the_advice_advise_json_prints() {
    let tmp = tempfile::tempdir().expect("a directory");
    let dir = tmp.path();
    let workload = setup(dir, 300);
    let cli = ok(
        dir,
        &[
            "advise",
            "shop/orders",
            "--workload",
            &workload,
            "--candidates",
            "/customer,/status",
            "--json",
        ],
    );
    let mut h = harness(dir, 120, 40);
    advise_in_view(&mut h, &workload, "/customer,/status");
    let advice = h.app.advisor.advice.as_ref().expect("advice in the view");
    assert_eq!(serde_json::to_value(advice).expect("JSON"), cli);
    // The ranking the guides give: the key the main query binds, then today's key (it
    // fans out), then the two-valued one.
    let keys: Vec<&str> = advice.candidates.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["/customer", "/id", "/status"]);
    let frame = h.render();
    for want in [
        "1 good",
        "2 workable (now)",
        "3 poor",
        "fan-out 2",
        "single 1",
    ] {
        assert!(frame.contains(want), "{want:?} missing:\n{frame}");
    }
    // The advisor's own copies are gone.
    only_shop(&*h.engine);
}

#[test]
fn the_advisor_view_at_two_sizes() {
    let tmp = tempfile::tempdir().expect("a directory");
    let dir = tmp.path();
    let workload = setup(dir, 200);
    for (w, ht) in [(80, 24), (120, 40)] {
        let mut h = harness(dir, w, ht);
        advise_in_view(&mut h, &workload, "/customer,/status");
        // The second column is selected: its partitions are the ones drawn.
        h.keys("l");
        let frame = h.render();
        insta::with_settings!({
            filters => vec![(r"workload /[^ │]*", "workload [file]")],
            omit_expression => true,
            snapshot_path => "../../snapshots",
        }, {
            insta::assert_snapshot!(format!("advisor_{w}x{ht}"), frame);
        });
        // The last pattern's row is reached by scrolling, and scrolling comes back.
        h.keys("G");
        let bottom = h.render();
        assert!(bottom.contains("new 2.0/s"), "{bottom}");
        h.keys("g");
        assert!(h.render().contains("rank "), "{frame}");
    }
}

#[test]
fn a_picked_candidate_becomes_a_copy_keyed_by_it() {
    let tmp = tempfile::tempdir().expect("a directory");
    let dir = tmp.path();
    let workload = setup(dir, 300);
    let mut h = harness(dir, 120, 40);
    advise_in_view(&mut h, &workload, "/customer");
    // The best candidate is selected; C asks for the name, filled with the default.
    assert_eq!(
        h.app.advisor.selected_candidate().map(|a| a.key.as_str()),
        Some("/customer")
    );
    h.keys("C");
    let frame = h.render();
    assert!(frame.contains("orders-by-customer"), "{frame}");
    h.keys("<enter>");
    let copy = h
        .engine
        .container("shop", "orders-by-customer")
        .expect("the copy exists");
    assert_eq!(copy.partition_key.paths, ["/customer"]);
    let source = h.engine.container("shop", "orders").expect("the source");
    assert_eq!(copy.statistics.item_count, 300);
    assert_eq!(copy.statistics.item_count, source.statistics.item_count);
    // A point read by the new key finds the item; by the old one it does not.
    let read = h
        .engine
        .read_item("shop", "orders-by-customer", "o7", &json!("c7"))
        .expect("read by the new key");
    let body: Value = serde_json::from_slice(read.body.as_deref().expect("a body")).expect("JSON");
    assert_eq!(body["total"], 7);
    let miss = h
        .engine
        .read_item("shop", "orders-by-customer", "o7", &json!("o7"))
        .expect_err("the old key addresses nothing");
    assert_eq!(miss.status, StatusCode::NotFound);
    // The tree shows both containers, so both can be queried.
    let labels: Vec<String> = h.app.tree.nodes.iter().map(|n| n.label()).collect();
    assert!(
        labels.iter().any(|l| l == "orders-by-customer"),
        "{labels:?}"
    );
    assert!(labels.iter().any(|l| l == "orders"), "{labels:?}");
}

/// The store holds database `shop` alone: no copy the advisor made is left.
fn only_shop(engine: &dyn Backend) {
    let dbs: Vec<String> = engine
        .list_databases()
        .expect("databases")
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(dbs, ["shop"]);
}

/// The containers of database `shop`.
fn containers(engine: &Engine) -> Vec<String> {
    engine
        .list_containers(Some("shop"))
        .expect("containers")
        .into_iter()
        .map(|c| c.id)
        .collect()
}

/// Runs `job` on the worker, setting its stop flag once `stop_when` says so.
fn run_stopped(engine: &Engine, job: &JobKind, stop_when: impl Fn(&Msg) -> bool) -> Msg {
    let stop = AtomicBool::new(false);
    worker::run_job(engine, engine.data_dir(), 7, job, &stop, &|m| {
        if stop_when(&m) {
            stop.store(true, Ordering::Release);
        }
    })
}

fn cancelled(msg: &Msg) -> bool {
    matches!(msg, Msg::JobDone { result: Err(e), .. } if e.status == StatusCode::Cancelled)
}

#[test]
fn a_cancelled_copy_or_advice_leaves_no_container_behind() {
    let tmp = tempfile::tempdir().expect("a directory");
    let dir = tmp.path();
    // More items than one copy batch, so the copy is stopped part way.
    let workload = setup(dir, 5_000);
    let engine = Engine::open(dir).expect("open engine");
    let copy = JobKind::Repartition {
        db: "shop".into(),
        c: "orders".into(),
        candidate: cosmoscope::advisor::Candidate::Path {
            path: "/customer".into(),
        },
        target: "half".into(),
    };
    let done = run_stopped(&engine, &copy, |m| matches!(m, Msg::JobProgress { .. }));
    assert!(cancelled(&done), "{done:?}");
    assert_eq!(containers(&engine), ["orders"]);

    let advise = JobKind::Advise {
        db: "shop".into(),
        c: "orders".into(),
        workload: Some(workload),
        candidates: Some("/customer".into()),
    };
    // Stopped while it replays on its first copy.
    let done = run_stopped(&engine, &advise, |m| {
        matches!(
            m,
            Msg::AdvisorProgress {
                progress: cosmoscope::advisor::Progress::Replaying { .. },
                ..
            }
        )
    });
    assert!(cancelled(&done), "{done:?}");
    only_shop(&engine);
}

#[test]
fn the_view_advises_on_the_requests_the_gateway_recorded() {
    use cosmoscope::recorded_requests::{Recordings, Request};
    let tmp = tempfile::tempdir().expect("a directory");
    let dir = tmp.path();
    setup(dir, 200);
    // What a gateway on this directory would have kept: a query by customer sent 9 times,
    // 3 reads of o5.
    let mut recorded = Recordings::default();
    for k in 0..9 {
        let parameters = vec![("c".to_string(), json!(format!("c{k}")))];
        let text = "SELECT * FROM c WHERE c.customer = @c".to_string();
        let weight = 1.0;
        let query = Request::Query {
            text,
            parameters,
            weight,
        };
        recorded.add("shop", "orders", query, k);
    }
    for k in 0..3 {
        let read = Request::Read {
            id: "o5".into(),
            pk: json!("o5"),
        };
        recorded.add("shop", "orders", read, 10 + k);
    }
    recorded.save(dir).expect("save the recordings");
    let mut h = harness(dir, 120, 40);
    advise_in_view(&mut h, "recorded", "/customer");
    let advice = h.app.advisor.advice.as_ref().expect("advice in the view");
    assert_eq!(advice.workload.as_deref(), Some("recorded"));
    let best = &advice.candidates[0];
    assert_eq!(best.key, "/customer");
    let rates: Vec<(&str, f64)> = best
        .figures
        .patterns
        .iter()
        .map(|p| (p.id.as_str(), p.rate))
        .collect();
    assert_eq!(rates, [("q1", 75.0), ("read", 25.0)]);
}

#[test]
fn a_copy_that_would_lose_items_is_refused_and_removed() {
    let tmp = tempfile::tempdir().expect("a directory");
    let engine = Engine::open(tmp.path()).expect("open engine");
    engine.create_database("shop").expect("database");
    let settings = cosmoscope::engine::ContainerSettings::new(vec!["/customer".into()]);
    engine
        .create_container("shop", "dup", settings)
        .expect("container");
    // Id x in two logical partitions of today's key: under /status they would meet.
    for (id, customer) in [("x", "c1"), ("x", "c2"), ("y", "c1")] {
        let body = json!({"id": id, "customer": customer, "status": "s"});
        engine
            .create_item("shop", "dup", &serde_json::to_vec(&body).expect("JSON"))
            .expect("create");
    }
    let copy = JobKind::Repartition {
        db: "shop".into(),
        c: "dup".into(),
        candidate: cosmoscope::advisor::Candidate::Path {
            path: "/status".into(),
        },
        target: "dup-by-status".into(),
    };
    let done = run_stopped(&engine, &copy, |_| false);
    let Msg::JobDone { result: Err(e), .. } = &done else {
        panic!("the copy went through: {done:?}");
    };
    assert_eq!(e.status, StatusCode::Conflict);
    assert!(e.message.contains("share an id"), "{}", e.message);
    assert_eq!(containers(&engine), ["dup"]);
}
