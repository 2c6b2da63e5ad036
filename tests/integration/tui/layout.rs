//! The screen as a modeller uses it (issue 23): a pane zoomed to the whole screen, the
//! message log, and the change feed following new events and filtering whole documents.

use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::Focus;
use serde_json::json;

use crate::support::tui_store::*;

#[test]
fn z_zooms_the_focused_pane_and_back() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    type_query(h, "SELECT * FROM c");
    h.keys("<f5> <esc>");
    assert_eq!(h.app.focus, Focus::View);
    h.keys("z");
    let frame = h.render();
    assert!(!frame.contains("Resources"), "{frame}");
    assert!(frame.starts_with("┌ Query · shop/orders"), "{frame}");
    // Focus moves to the tree: zoomed, the tree has the screen.
    h.keys("<tab>");
    let frame = h.render();
    assert!(frame.starts_with("┌ Resources"), "{frame}");
    assert!(!frame.contains("Query · shop/orders"), "{frame}");
    h.keys("z");
    let frame = h.render();
    assert!(
        frame.contains("Resources") && frame.contains("Query · shop/orders"),
        "{frame}"
    );
}

#[test]
fn the_message_log_holds_every_message_whole() {
    let mut s = store(80, 24);
    let h = &mut s.h;
    type_query(
        h,
        "SELECT * FROM c WHERE c.pk = @customer AND c.status = @status",
    );
    h.keys("<f5>");
    // A long error, cut on the status line at 80 columns.
    let long = h.app.message.clone().expect("a message").1;
    assert!(long.contains("@customer has no value"), "{long}");
    h.keys("<esc> <esc> y");
    let last = h.app.message.clone().expect("a message").1;
    h.keys("M");
    let frame = h.render();
    assert!(frame.contains("Messages · 2 this session"), "{frame}");
    let flat: String = frame
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains(&long), "the whole error:\n{frame}");
    assert!(flat.contains(&last), "{frame}");
    h.keys("<esc>");
    assert!(h.app.layers.is_empty());
}

#[test]
fn the_feed_follows_new_events_at_the_bottom_and_filters_whole_documents() {
    let mut s = store(120, 30);
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.keys("3");
    for n in 13..=50 {
        create(&s.engine, ORDERS, &order(n));
    }
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("o-50"), "the newest is on screen:\n{frame}");
    // One more arrives: it shows too.
    create(&s.engine, ORDERS, &order(51));
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("o-51"), "{frame}");

    // Words match the whole document: `delivered` is a status, not in any id.
    s.h.keys("/");
    s.h.type_text("delivered");
    s.h.keys("<enter>");
    let visible = s.h.app.feed.tail.visible();
    assert!(!visible.is_empty());
    for &i in &visible {
        let doc = s.h.app.feed.tail.rows[i]
            .current
            .clone()
            .unwrap_or_default();
        assert_eq!(doc["status"], json!("Delivered"), "{doc}");
    }
    // A filter that hides everything says how many events it hides.
    s.h.keys("/ <c-u>");
    s.h.type_text("zebra");
    s.h.keys("<enter>");
    let frame = s.h.render();
    assert!(
        frame.contains("the filter /zebra hides all 39 events"),
        "{frame}"
    );
}

/// The screen line of the first frame row holding `text`, and the column it starts at.
fn where_is(frame: &str, text: &str) -> (u16, u16) {
    frame
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let at = l.find(text)?;
            Some((l[..at].chars().count() as u16, y as u16))
        })
        .unwrap_or_else(|| panic!("no {text:?}:\n{frame}"))
}

#[test]
fn clicks_and_the_wheel_go_through_the_same_actions_as_keys() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    type_query(h, "SELECT c.id, c.total FROM c");
    h.keys("<f5>");
    assert_eq!(h.app.focus, Focus::Editor);

    // A click on a result row focuses the results and selects it.
    let frame = h.render();
    let (x, y) = where_is(&frame, "o-07");
    h.click(x, y);
    assert_eq!(h.app.focus, Focus::View);
    let selected = h.app.query.selected_document().cloned().unwrap_or_default();
    assert_eq!(selected["id"], json!("o-07"));
    // The wheel moves the selection three rows, as three presses of j.
    let before = h.app.query.selected;
    assert!(before >= 3, "{before}");
    h.wheel(false, x, y);
    assert_eq!(h.app.query.selected, before - 3);
    h.wheel(true, x, y);
    assert_eq!(h.app.query.selected, before);

    // A click in the tree focuses it and selects the row; the console follows.
    let frame = h.render();
    let (x, y) = where_is(&frame, "customers /pk");
    h.click(x, y);
    assert_eq!(h.app.focus, Focus::Tree);
    assert_eq!(h.app.container, Some((DB.into(), CUSTOMERS.into())));
    assert_eq!(h.app.query.target, Some((DB.into(), CUSTOMERS.into())));

    // A click in the editor gives it the keys.
    let frame = h.render();
    let (x, y) = where_is(&frame, "SELECT c.id");
    h.click(x, y);
    assert_eq!(h.app.focus, Focus::Editor);
    // Outside any pane (the status line) nothing changes.
    h.click(0, 38);
    assert_eq!(h.app.focus, Focus::Editor);
}

#[test]
fn a_read_only_store_says_so_on_the_status_line() {
    use cosmoscope::engine::{Backend, Engine};
    let (engine, dir) = engine();
    drop(engine);
    let engine = std::sync::Arc::new(
        Engine::open_read_only(dir.path(), "opened read-only by the test").expect("open"),
    );
    let mut h = Harness::new(engine.clone(), dir.path().to_path_buf(), 120, 30);
    let frame = h.render();
    // The status line sits above the key hints.
    let status = frame.lines().rev().nth(1).unwrap_or_default().to_string();
    assert!(status.contains("read-only"), "{frame}");
    // Reading works; a write says why it cannot happen.
    assert_eq!(engine.list_databases().expect("list").len(), 1);
    let err = engine.create_database("more").expect_err("a write");
    assert_eq!(err.status.as_u16(), 403);
    assert!(
        err.message.contains("opened read-only by the test"),
        "{}",
        err.message
    );
}

#[test]
fn a_click_selects_a_row_in_the_feed_and_partitions_lists_too() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("3");
    for n in 1..=4 {
        create(
            &s.engine,
            ORDERS,
            &json!({"id": format!("new-{n}"), "pk": "c-1"}),
        );
    }
    let h = &mut s.h;
    h.poll_feeds();
    h.keys("<tab>");
    assert_eq!(h.app.focus, Focus::Tree);
    let frame = h.render();
    let (x, y) = where_is(&frame, "new-2");
    h.click(x, y);
    assert_eq!(h.app.focus, Focus::View);
    let id = h.app.feed.tail.selected_row().map(|r| r.id.clone());
    assert_eq!(id.as_deref(), Some("new-2"), "{frame}");

    // The partitions view: a click on a range's row selects it.
    h.keys("4");
    let frame = h.render();
    // The range rows start right after the tree's border: `││2 `.
    let (x, y) = where_is(&frame, "││2   ");
    let row = frame
        .lines()
        .nth(usize::from(y))
        .unwrap_or_default()
        .to_string();
    h.keys("<tab>");
    h.click(x + 2, y);
    assert_eq!(h.app.focus, Focus::View);
    assert_eq!(h.app.partitions.selected, 2, "{row}\n{frame}");
}

#[test]
fn a_first_launch_draws_at_once_and_loads_the_samples_as_a_job_behind_it() {
    use cosmoscope::tui::effect::{Effect, JobKind};
    use cosmoscope::tui::state::App;
    let dir = tempfile::tempdir().expect("a directory");
    let mut app = App::new(
        "<data-dir>".into(),
        std::sync::Arc::new(cosmoscope::tui::keymap::Keymap::defaults()),
    );
    app.first_launch = Some(dir.path().to_path_buf());
    let effects = cosmoscope::tui::update::start(&mut app);
    // The tree is asked for first; the load is a job, so the first frame needs neither.
    assert!(matches!(
        effects.first(),
        Some(Effect::LoadDatabases { .. })
    ));
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::StartJob { job: JobKind::FirstLaunch { dir: d }, .. } if d == dir.path()
        )),
        "{effects:?}"
    );
    let frame = draw_app(&app, 120, 24);
    assert!(
        frame.contains("first launch: loading the bundled samples"),
        "{frame}"
    );
    assert!(frame.contains("ctrl-x cancels"), "{frame}");
}
