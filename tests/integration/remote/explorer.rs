//! The explorer's key-sequence flows, one test body run twice: on the embedded store and
//! on the same store behind the gateway through the remote backend (where a fan-out query
//! shows its estimated cost and waits for a yes, once per query). What differs (the
//! title, statistics the service does not report) is left out of the checks; what a
//! person does and sees in the tree, the item view and the query console is the same.
//!
//! Then what only a remote account has: the partitions view filled from the service's
//! partition statistics and labelled as such, and writes turned on from inside the
//! explorer after a confirmation naming the account.

use std::sync::Arc;

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{Backend, Engine, QueryOptions, StatisticsSource};
use cosmoscope::gateway::EMULATOR_KEY;
use cosmoscope::tui::effect::Effect;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::{Focus, Layer, Level};
use serde_json::json;

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
    if h.app.ask_before_fan_out {
        // A billed account: listing the range's keys is a query, priced first from the
        // range's statistics, and asked once.
        let frame = h.render();
        assert!(
            frame.contains("Listing the logical partitions of range 0 runs a GROUP BY"),
            "{frame}"
        );
        assert!(frame.contains("3 items"), "{frame}");
        h.keys("y");
        h.keys("<left> <enter>");
        assert!(h.app.layers.is_empty(), "asked once per range");
    }
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

/// A snapshot stored in tests/snapshots, as the explorer's other snapshots are.
fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        omit_expression => true,
        snapshot_path => "../../snapshots",
    }, {
        insta::assert_snapshot!(name.to_string(), text);
    });
}

/// The explorer on `local` behind a gateway, through the remote backend: the gateway's
/// runtime (stop it with the gateway), the gateway, and the harness.
fn remote_explorer(
    local: &Arc<Engine>,
    dir: &std::path::Path,
) -> (
    tokio::runtime::Runtime,
    cosmoscope::gateway::Gateway,
    Harness,
) {
    let (runtime, gateway) = super::serve(local.clone(), dir, false);
    let config = RemoteConfig::new(&gateway.endpoint(), &Secret::new(EMULATOR_KEY)).unwrap();
    let remote: Arc<dyn Backend> = Arc::new(RemoteBackend::connect(&config).unwrap());
    let h = Harness::new(remote, dir.to_path_buf(), 120, 40);
    (runtime, gateway, h)
}

#[test]
fn the_partitions_view_shows_the_services_statistics_on_a_remote_account() {
    let (local, dir) = engine();
    let (runtime, gateway, mut h) = remote_explorer(&local, dir.path());
    h.keys("<enter>");
    select(&mut h, ORDERS);
    h.keys("<enter> 4");
    let report = h.app.partitions.report.as_mut().expect("the report");
    assert_eq!(report.statistics_source, StatisticsSource::Sampled);
    // Each range's count is the engine's; the largest keys are there.
    let want = local.partitions(DB, ORDERS, 10, 0).unwrap();
    let counts = |p: &[cosmoscope::engine::RangeInfo]| -> Vec<u64> {
        p.iter().map(|r| r.statistics.item_count).collect()
    };
    assert_eq!(counts(&report.partitions), counts(&want.partitions));
    assert_eq!(report.largest_logical_partitions.len(), 4);
    // This session's own RU per second depends on the clock: zeroed, as the other
    // snapshots do.
    for l in &mut report.load {
        l.ru_last_second = 0.0;
        l.ru_peak = 0.0;
        l.samples.clear();
    }
    let frame = h.render();
    assert!(
        frame.contains("items and sizes: the service's statistics (sampled)"),
        "{frame}"
    );
    assert!(
        frame.contains("largest logical partitions, sampled"),
        "{frame}"
    );
    snapshot("remote_partitions_120x40", &frame);
    drop(h);
    runtime.block_on(gateway.stop());
}

/// A create refused while read-only says how to allow writes; the toggle asks, naming the
/// account; then the create goes through, and the status line says read-write.
#[test]
fn writes_are_turned_on_from_the_explorer_after_a_confirmation_naming_the_account() {
    let (local, dir) = engine();
    let (runtime, gateway, mut h) = remote_explorer(&local, dir.path());
    let endpoint = gateway.endpoint().trim_end_matches('/').to_string();
    let status = |h: &mut Harness| -> String {
        let frame = h.render();
        let lines: Vec<&str> = frame.lines().collect();
        lines[lines.len() - 2].to_string()
    };
    assert!(h.app.read_only && h.app.write_switch);
    assert!(status(&mut h).contains(" read-only "));
    h.keys("<enter>");
    select(&mut h, ORDERS);

    // A create while read-only: refused before the editor opens, with the key to press.
    h.keys("n");
    assert!(
        !h.log.iter().any(|e| matches!(e, Effect::Edit { .. })),
        "no editor opened"
    );
    let (level, text) = h.app.message.clone().expect("a message");
    assert_eq!(level, Level::Error);
    assert!(text.contains("press W"), "{text}");
    assert!(text.contains(&endpoint), "{text}");

    // The toggle asks first, naming the endpoint; no leaves it read-only.
    h.keys("W");
    let frame = h.render();
    assert!(frame.contains("Allow writes to"), "{frame}");
    assert!(
        matches!(h.app.layers.last(), Some(Layer::Confirm { text, .. }) if text.contains(&endpoint)),
        "{:?}",
        h.app.layers
    );
    assert!(!frame.contains(EMULATOR_KEY), "the key is never shown");
    h.keys("n");
    assert!(h.app.read_only);
    h.keys("W y");
    assert!(!h.app.read_only, "{:?}", h.app.message);
    h.app.message = None;
    let writable = status(&mut h);
    assert!(writable.contains(" read-write "), "{writable}");
    snapshot("remote_read_write_status", &writable);

    // The create goes through to the account.
    h.editor_results
        .push_back(Ok(r#"{"id": "o-99", "pk": "c-1", "total": 1.5}"#.into()));
    h.keys("n y");
    let stored = local.read_item(DB, ORDERS, "o-99", &json!("c-1"));
    assert!(stored.is_ok(), "{:?} {:?}", h.app.message, stored.err());

    // And back to read-only at once.
    h.keys("W");
    assert!(h.app.read_only);
    assert!(status(&mut h).contains(" read-only "));
    h.keys("d");
    assert!(h.app.layers.is_empty(), "no delete asked for");
    drop(h);
    runtime.block_on(gateway.stop());
}

/// While another client writes, the tree notices and reloads its levels on its own; on a
/// billed account it does not run the listings that are queries again (a range's logical
/// partitions) until the user refreshes.
#[test]
fn the_trees_own_reloads_run_no_query_on_a_remote_account() {
    let (local, dir) = engine();
    let (runtime, gateway, mut h) = remote_explorer(&local, dir.path());
    h.keys("<enter>");
    select(&mut h, ORDERS);
    h.keys("<enter>");
    select(&mut h, "range 0");
    h.keys("<enter> y");
    assert!(h.render().contains("c-2"));
    let listings = |h: &Harness| {
        h.log
            .iter()
            .filter(|e| {
                matches!(e, Effect::LoadChildren { node, .. }
                    if matches!(node, cosmoscope::tui::state::tree::NodeKind::Range { .. }))
            })
            .count()
    };
    let before = listings(&h);
    // Another client adds an item: the next probe finds the counts changed and reloads.
    local
        .upsert_item(
            DB,
            ORDERS,
            json!({"id": "o-50", "pk": "c-9"}).to_string().as_bytes(),
            None,
        )
        .unwrap();
    let generation = h.app.tree.generation;
    let now = h.app.now;
    h.send(Msg::Tick { now: now + 10 });
    assert!(h.app.tree.generation > generation, "the tree reloaded");
    assert_eq!(listings(&h), before, "no range listed again on its own");
    assert!(h.render().contains("c-2"), "the listing shown stays");
    // `r` is the user asking: the listing runs again.
    h.keys("r");
    assert_eq!(listings(&h), before + 1);
    drop(h);
    runtime.block_on(gateway.stop());
}

/// On the embedded store the write toggle has nothing to switch, and says so.
#[test]
fn the_write_toggle_explains_itself_on_the_embedded_store() {
    let (local, dir) = engine();
    let mut h = Harness::new(local, dir.path().to_path_buf(), 120, 40);
    assert!(!h.app.read_only && !h.app.write_switch);
    h.keys("W");
    assert!(h.app.layers.is_empty(), "nothing to confirm");
    let (_, text) = h.app.message.clone().expect("a message");
    assert!(
        text.contains("only a remote account is read-only"),
        "{text}"
    );
    assert!(!h.render().contains(" read-write "));
}
