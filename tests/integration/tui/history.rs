//! The query history per container (issue 23): walking it stays on the console's
//! container and brings back the parameter values a query ran with; searching it; kept in
//! the data directory across sessions, the older file form still read.

use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::Layer;
use cosmoscope::tui::worker::{history_path, load_history};
use serde_json::Value;

use crate::support::tui_store::*;

const BY_KEY: &str = "SELECT c.id FROM c WHERE c.pk = @pk";

/// A query with a parameter on `orders`, then one on `customers`.
fn two_containers(h: &mut Harness) {
    type_query(h, BY_KEY);
    // The form asks for @pk.
    h.keys("<f5>");
    assert!(matches!(h.app.layers.last(), Some(Layer::Params { .. })));
    h.type_text("\"c-1\"");
    h.keys("<enter>");
    assert_eq!(h.app.query.run.as_ref().map(|r| r.documents.len()), Some(3));
    h.keys("<esc> <esc>");
    select(h, CUSTOMERS);
    h.keys("<c-n> <c-a> <c-k>");
    h.type_text("SELECT c.name FROM c");
    h.keys("<f5>");
}

#[test]
fn walking_the_history_stays_on_the_container_and_brings_back_its_parameters() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    two_containers(h);
    // On customers: its own query only.
    h.keys("<c-up>");
    assert_eq!(h.app.query.editor.text(), "SELECT c.name FROM c");
    h.keys("<c-up>");
    assert_eq!(h.app.query.editor.text(), "SELECT c.name FROM c");
    h.keys("<c-down> <esc> <esc>");
    // Back on orders, with @pk changed since: the query comes back with its value.
    h.app.query.params.insert("pk".into(), "\"c-4\"".into());
    select(h, ORDERS);
    h.keys("<c-n> <c-up>");
    assert_eq!(h.app.query.editor.text(), BY_KEY);
    assert_eq!(
        h.app.query.params.get("pk").map(String::as_str),
        Some("\"c-1\"")
    );
}

#[test]
fn the_history_search_finds_a_query_by_its_words_and_parameters() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    two_containers(h);
    h.keys("<esc> <esc>");
    select(h, ORDERS);
    h.keys("<c-n> <c-a> <c-k>");
    h.type_text("SELECT VALUE COUNT(1) FROM c");
    h.keys("<f5> <a-r>");
    assert!(matches!(h.app.layers.last(), Some(Layer::History { .. })));
    let frame = h.render();
    assert!(frame.contains("History · shop/orders · 2/2"), "{frame}");
    assert!(
        frame.contains("SELECT c.id FROM c WHERE c.pk = @pk  @pk=\"c-1\""),
        "{frame}"
    );
    // Customers' query is not in orders' history.
    assert!(!frame.contains("c.name"), "{frame}");
    h.type_text("c-1");
    let frame = h.render();
    assert!(frame.contains("History · shop/orders · 1/2"), "{frame}");
    h.keys("<enter>");
    assert!(h.app.layers.is_empty());
    assert_eq!(h.app.query.editor.text(), BY_KEY);
}

#[test]
fn the_history_is_kept_in_the_data_directory_with_containers_and_parameters() {
    let mut s = store(120, 40);
    two_containers(&mut s.h);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(history_path(s.dir.path())).expect("written"))
            .expect("JSON");
    assert_eq!(
        saved,
        serde_json::json!([
            {"container": "shop/orders", "sql": BY_KEY, "params": {"pk": "\"c-1\""}},
            {"container": "shop/customers", "sql": "SELECT c.name FROM c"},
        ])
    );

    // A new session reads it back.
    let entries = load_history(s.dir.path());
    let mut h = Harness::new(s.engine.clone(), s.dir.path().to_path_buf(), 120, 40);
    h.send(Msg::History(entries));
    h.keys("<enter>");
    select(&mut h, ORDERS);
    h.keys("<c-n> <c-up>");
    assert_eq!(h.app.query.editor.text(), BY_KEY);
}

#[test]
fn the_older_history_file_of_plain_texts_still_loads() {
    let s = store(120, 40);
    std::fs::write(
        history_path(s.dir.path()),
        r#"["SELECT * FROM c WHERE c.total > 100"]"#,
    )
    .expect("write");
    let mut h = Harness::new(s.engine.clone(), s.dir.path().to_path_buf(), 120, 40);
    h.send(Msg::History(load_history(s.dir.path())));
    h.keys("<enter>");
    select(&mut h, CUSTOMERS);
    h.keys("<c-n> <c-up>");
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT * FROM c WHERE c.total > 100"
    );
}
