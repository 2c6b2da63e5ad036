//! A deterministic store for the terminal UI tests: database `shop` with `orders` (four
//! physical partitions, partitioned on `/pk`) and `customers` (one), fixed ids and values,
//! and a headless [`Harness`] on it.

use std::sync::Arc;

use cosmoscope::engine::{Backend, Engine};
use cosmoscope::engine::{ContainerSettings, Throughput};
use cosmoscope::tui::harness::Harness;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::fixture::{Fixture, open_database};

pub const DB: &str = "shop";
pub const ORDERS: &str = "orders";
pub const CUSTOMERS: &str = "customers";

/// The harness, the engine it drives and the directory they live in. Fields drop in
/// declaration order: the UI and the engine (joining its background thread) go before the
/// directory is removed.
pub struct Store {
    pub h: Harness,
    pub engine: Arc<Engine>,
    pub dir: TempDir,
}

/// The order documents: ids `o-01`..`o-12` over customers `c-1`..`c-4`.
pub fn order(n: u32) -> Value {
    let statuses = ["Shipped", "Pending", "Delivered"];
    let status = statuses[(n as usize - 1) % 3];
    json!({
        "id": format!("o-{n:02}"),
        "pk": format!("c-{}", (n - 1) % 4 + 1),
        "status": status,
        "total": f64::from(n) * 10.5,
        "lines": [{"sku": "BK-M68B", "qty": n % 3 + 1}],
    })
}

pub fn customer(n: u32) -> Value {
    let i = (n as usize - 1) % 4;
    let name = ["Ana Berg", "Chen Dahl", "Farah Ito", "Lars Costa"][i];
    let city = ["Oslo", "Lyon", "Tokyo", "Lisbon"][i];
    json!({"id": format!("c-{n}"), "pk": format!("c-{n}"), "name": name, "city": city})
}

/// Creates the data set in a fresh directory.
pub fn engine() -> (Arc<Engine>, TempDir) {
    let Fixture { engine, dir } = open_database(DB);
    let mut orders = ContainerSettings::new(vec!["/pk".into()]);
    orders.throughput = Throughput::Manual(24_000);
    orders.feed_previous_images = true;
    engine
        .create_container(DB, ORDERS, orders)
        .expect("create orders");
    engine
        .create_container(DB, CUSTOMERS, ContainerSettings::new(vec!["/pk".into()]))
        .expect("create customers");
    for n in 1..=12 {
        create(&engine, ORDERS, &order(n));
    }
    for n in 1..=4 {
        create(&engine, CUSTOMERS, &customer(n));
    }
    (Arc::new(engine), dir)
}

pub fn create(engine: &Engine, c: &str, doc: &Value) {
    let body = serde_json::to_vec(doc).expect("serialize");
    engine
        .create_item(DB, c, &body)
        .unwrap_or_else(|e| panic!("create {doc}: {e}"));
}

/// The data set behind a `width`×`height` UI with the tree loaded.
pub fn store(width: u16, height: u16) -> Store {
    let (engine, dir) = engine();
    let h = Harness::new(engine.clone(), dir.path().to_path_buf(), width, height);
    Store { h, engine, dir }
}

/// The row of the tree whose label is `label`.
pub fn tree_row(h: &Harness, label: &str) -> usize {
    (0..h.app.tree.row_count())
        .find(|&r| {
            h.app
                .tree
                .row_index(r)
                .is_some_and(|i| h.app.tree.nodes[i].label() == label)
        })
        .unwrap_or_else(|| panic!("no tree row {label:?}"))
}

/// Moves the tree selection onto `label` with `j`/`k` keys.
pub fn select(h: &mut Harness, label: &str) {
    let target = tree_row(h, label);
    while h.app.tree.selected < target {
        h.keys("j");
    }
    while h.app.tree.selected > target {
        h.keys("k");
    }
    assert_eq!(
        h.app.tree.selected_node().map(|n| n.label()),
        Some(label.to_string())
    );
}

/// Draws `app` on a `width`×`height` test terminal (no harness: for states built by hand).
pub fn frame_of(app: &cosmoscope::tui::state::App, width: u16, height: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    term.draw(|f| {
        cosmoscope::tui::ui::draw(f, app);
    })
    .expect("a frame");
    term.backend().buffer().clone()
}

/// A frame as text, one line per row, trailing blanks trimmed.
pub fn text_of(buf: &Buffer) -> String {
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`frame_of`] as text.
pub fn draw_app(app: &cosmoscope::tui::state::App, width: u16, height: u16) -> String {
    text_of(&frame_of(app, width, height))
}

/// Expands the tree along `labels` from the top (`shop`, `orders`, `range 3`): each is
/// selected with `j`/`k` and opened with Enter.
pub fn expand(h: &mut Harness, labels: &[&str]) {
    for label in labels {
        select(h, label);
        h.keys("<enter>");
    }
}

/// Opens the query console on `orders` with `sql` typed in place of the starter query.
pub fn type_query(h: &mut Harness, sql: &str) {
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("<c-n> <c-a> <c-k>");
    h.type_text(sql);
}

/// Zeroes the query console's timings (wall-clock figures) so a frame can be a snapshot.
pub fn zero_query_timings(h: &mut Harness) {
    let Some(run) = h.app.query.run.as_mut() else {
        return;
    };
    run.elapsed_ms = 0.0;
    let zero = |m: &mut cosmoscope::engine::QueryMetrics| {
        m.index_lookup_time_in_ms = 0.0;
        m.document_load_time_in_ms = 0.0;
        m.query_engine_execution_time_in_ms = 0.0;
    };
    zero(&mut run.metrics);
    for p in run.partitions.values_mut() {
        zero(&mut p.metrics);
    }
}

/// Zeroes the tree's RU/s meters (RU per wall-clock second).
pub fn zero_range_meters(h: &mut Harness) {
    for n in &mut h.app.tree.nodes {
        if let cosmoscope::tui::state::tree::NodeKind::Range { ru_now, .. } = &mut n.kind {
            *ru_now = 0.0;
        }
    }
}
