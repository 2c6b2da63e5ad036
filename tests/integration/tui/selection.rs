//! Views follow the selection: the change feed, the query console and the tree itself
//! show the container the user is on, and say so (issue 23).

use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::View;
use serde_json::json;

use crate::support::tui_store::*;

/// The status line of a frame (the row above the hints).
fn status_line(frame: &str) -> String {
    let lines: Vec<&str> = frame.lines().collect();
    lines[lines.len() - 2].to_string()
}

#[test]
fn the_change_feed_follows_the_container_selected_in_the_tree() {
    let mut s = store(120, 40);
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.keys("3");
    let frame = s.h.render();
    assert!(frame.contains("Change feed · shop/orders"), "{frame}");

    // Back to the tree, onto customers, and the feed again: it follows at once.
    s.h.keys("<tab>");
    select(&mut s.h, CUSTOMERS);
    s.h.keys("3");
    let frame = s.h.render();
    assert!(frame.contains("Change feed · shop/customers"), "{frame}");
    create(
        &s.engine,
        CUSTOMERS,
        &json!({"id": "c-9", "pk": "c-9", "name": "Noor Laine"}),
    );
    create(&s.engine, ORDERS, &order(13));
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("c-9"), "{frame}");
    assert!(!frame.contains("o-13"), "{frame}");

    // Moving in the tree while the feed is shown follows too.
    s.h.keys("<tab>");
    select(&mut s.h, ORDERS);
    let frame = s.h.render();
    assert!(frame.contains("Change feed · shop/orders"), "{frame}");
}

#[test]
fn the_query_console_follows_the_selection_and_keeps_its_text() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    type_query(h, "SELECT VALUE c.id FROM c WHERE c.pk = 'c-1'");
    h.keys("<f5>");
    assert_eq!(h.app.query.run.as_ref().map(|r| r.documents.len()), Some(3));

    // Back in the tree onto customers: the console is bound to it, the text stays.
    h.keys("<esc> <esc>");
    select(h, CUSTOMERS);
    h.keys("2");
    assert_eq!(h.app.view, View::Query);
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT VALUE c.id FROM c WHERE c.pk = 'c-1'"
    );
    let frame = h.render();
    assert!(frame.contains("Query · shop/customers"), "{frame}");
    assert!(status_line(&frame).contains(" shop/customers "), "{frame}");
    // The results on screen say where they came from.
    assert!(frame.contains("· from shop/orders"), "{frame}");

    // Run: it runs on customers, and everything agrees.
    h.keys("<f5>");
    let run = h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.target, (DB.to_string(), CUSTOMERS.to_string()));
    assert_eq!(run.documents, vec![json!("c-1")]);
    let frame = h.render();
    assert!(!frame.contains("· from "), "{frame}");
    assert!(status_line(&frame).contains(" shop/customers "), "{frame}");

    // ctrl-n asks for a new query: the starter replaces the text, which history keeps.
    h.keys("<c-n>");
    assert_eq!(h.app.query.editor.text(), "SELECT * FROM c");
    h.keys("<c-up>");
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT VALUE c.id FROM c WHERE c.pk = 'c-1'"
    );
}

#[test]
fn the_tree_refreshes_by_itself_when_another_process_changes_the_counts() {
    let mut s = store(120, 40);
    s.h.keys("<enter>");
    let frame = s.h.render();
    assert!(frame.contains("customers /pk · 4 · "), "{frame}");

    // Another process imports items and creates a container.
    let file = s.dir.path().join("more.ndjson");
    let lines: Vec<String> = (10..40)
        .map(|n| json!({"id": format!("c-{n}"), "pk": format!("c-{n}")}).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n")).expect("write the import");
    let out = crate::support::cli::run(
        s.dir.path(),
        &["import", "shop/customers", file.to_str().expect("a path")],
    );
    assert!(out.status.success(), "{out:?}");
    let out = crate::support::cli::run(
        s.dir.path(),
        &[
            "container",
            "create",
            "shop/returns",
            "--partition-key",
            "/pk",
        ],
    );
    assert!(out.status.success(), "{out:?}");

    // Nothing is pressed; a few seconds pass.
    let now = s.h.app.now;
    for t in 1..=3 {
        s.h.send(Msg::Tick { now: now + t });
    }
    let frame = s.h.render();
    assert!(frame.contains("customers /pk · 34 · "), "{frame}");
    assert!(frame.contains("returns /pk · 0 · "), "{frame}");
    assert!(frame.contains("shop 3 containers"), "{frame}");
}
