//! The explorer's key-sequence flows, one test body run twice: on the embedded store and
//! on the same store behind the gateway through the remote backend (where a fan-out query
//! shows its estimated cost and waits for a yes, once per query). What differs (the
//! title, statistics the service does not report) is left out of the checks; what a
//! person does and sees in the tree, the item view and the query console is the same.

use std::sync::Arc;

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{Backend, Engine, QueryOptions};
use cosmoscope::gateway::EMULATOR_KEY;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::Focus;

use crate::support::tui_store::{DB, ORDERS, engine, select};

/// Tree → orders → range 0 → logical partition c-2 → item o-02; then a fan-out query.
fn flow(h: &mut Harness, local: &Engine) {
    let frame = h.render();
    assert!(frame.contains("shop"), "{frame}");
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("<enter>");
    let frame = h.render();
    for r in 0..4 {
        assert!(frame.contains(&format!("range {r} ")), "{frame}");
    }
    select(h, "range 0");
    h.keys("<enter>");
    select(h, "c-2");
    h.keys("<enter>");
    let frame = h.render();
    for id in ["o-02", "o-06", "o-10"] {
        assert!(frame.contains(id), "{frame}");
    }
    select(h, "o-02");
    h.keys("<enter>");
    let frame = h.render();
    assert!(frame.contains("\"id\": \"o-02\""), "{frame}");
    assert!(frame.contains("\"sku\": \"BK-M68B\""), "{frame}");
    assert_eq!(h.app.last_charge, Some(1.0));

    // The query console: a fan-out over every range, with the engine's documents and charge.
    assert_eq!(h.app.focus, Focus::Tree);
    select(h, ORDERS);
    h.keys("<c-n> <c-a> <c-k>");
    let sql = "SELECT c.id FROM c WHERE c.total > 50";
    h.type_text(sql);
    h.keys("<f5>");
    if h.app.ask_before_fan_out {
        // A billed account: the fan-out's estimate is shown and the query waits for a yes.
        assert!(h.app.query.run.is_none(), "nothing ran before the answer");
        let frame = h.render();
        assert!(
            frame.contains("reads 4 of orders's 4 physical partitions"),
            "{frame}"
        );
        assert!(frame.contains("RU"), "{frame}");
        h.keys("y");
    }
    let run = h.app.query.run.as_ref().expect("a run");
    let expected = local
        .query(DB, ORDERS, sql, &QueryOptions::default())
        .expect("the query runs");
    let mut got: Vec<String> = run.documents.iter().map(|d| d.to_string()).collect();
    let mut want: Vec<String> = expected.documents.iter().map(|d| d.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(run.partitions.len(), 4, "every range contacted");
    let frame = h.render();
    assert!(frame.contains("fan-out"), "{frame}");
    // Asked once per query: running it again runs at once.
    h.keys("<f5>");
    assert!(h.app.layers.is_empty(), "no second question");
    // A query on one logical partition reads one range: it never asks.
    h.keys("<c-a> <c-k>");
    h.type_text("SELECT * FROM c WHERE c.pk = 'c-3'");
    h.keys("<f5>");
    assert!(
        h.app.layers.is_empty(),
        "a single-range query runs without asking"
    );
    assert_eq!(h.app.query.run.as_ref().expect("a run").partitions.len(), 1);
}

#[test]
fn the_same_flows_run_on_the_embedded_store_and_a_remote_account() {
    let (local, dir) = engine();
    let mut h = Harness::new(local.clone(), dir.path().to_path_buf(), 120, 40);
    flow(&mut h, &local);
    drop(h);

    let (runtime, gateway) = super::serve(local.clone(), dir.path(), false);
    let config = RemoteConfig::new(&gateway.endpoint(), &Secret::new(EMULATOR_KEY)).unwrap();
    let remote: Arc<dyn Backend> = Arc::new(RemoteBackend::connect(&config).unwrap());
    let mut h = Harness::new(remote, dir.path().to_path_buf(), 120, 40);
    assert!(h.app.read_only, "a remote session starts read-only");
    flow(&mut h, &local);
    drop(h);
    runtime.block_on(gateway.stop());
}
