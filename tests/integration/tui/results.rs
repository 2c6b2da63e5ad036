//! The results workflow (issue 23): searching within the loaded results, sorting them,
//! the history draft, cancelling, and the column scroll of a new query.

use cosmoscope::tui::effect::Effect;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::{Focus, Layer, View};
use serde_json::json;

use super::update::{keys, page, run_ticket, with_container};
use crate::support::tui_store::*;

/// Types `sql` into a fresh console on `orders`, runs it, and moves focus to the results.
fn results_of(h: &mut Harness, sql: &str) {
    type_query(h, sql);
    h.keys("<f5> <esc>");
    assert_eq!((h.app.view, h.app.focus), (View::Query, Focus::View));
}

/// The ids in the results table, top to bottom.
fn ids(frame: &str) -> Vec<String> {
    frame
        .lines()
        .filter_map(|l| {
            let at = l.find("o-")?;
            Some(l[at..at + 4].to_string())
        })
        .collect()
}

#[test]
fn slash_searches_the_loaded_results_and_its_letters_are_not_commands() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    results_of(h, "SELECT c.id, c.status FROM c");
    let ticket = h.app.query.run.as_ref().map(|r| r.sql.clone());
    let runs = h
        .log
        .iter()
        .filter(|e| matches!(e, Effect::RunQuery { .. }))
        .count();

    // `t` would switch to JSON and `r` re-run the query: typed after `/`, they search.
    h.keys("/");
    assert!(matches!(h.app.layers.last(), Some(Layer::Prompt { .. })));
    h.type_text("shipped");
    let frame = h.render();
    assert!(
        frame.contains("Results · 4 of 12 match /shipped · table"),
        "{frame}"
    );
    assert_eq!(ids(&frame), ["o-10", "o-04", "o-01", "o-07"], "{frame}");
    h.keys("<enter>");
    assert!(h.app.layers.is_empty());
    let after = h
        .log
        .iter()
        .filter(|e| matches!(e, Effect::RunQuery { .. }))
        .count();
    assert_eq!(after, runs, "no query ran");
    assert_eq!(h.app.query.run.as_ref().map(|r| r.sql.clone()), ticket);

    // Enter opens the selected match, not the twelfth row's neighbour.
    h.keys("j <enter>");
    assert_eq!(h.app.item.as_ref().map(|i| i.id.as_str()), Some("o-04"));

    // Back in the results, esc clears the search.
    h.keys("2 <esc> <esc>");
    assert_eq!(h.app.focus, Focus::View);
    assert_eq!(h.app.query.filter, None);
    let frame = h.render();
    assert!(frame.contains("Results · 12 · table"), "{frame}");

    // A search nothing matches says so.
    h.keys("/");
    h.type_text("zebra");
    let frame = h.render();
    assert!(
        frame.contains("None of the 12 loaded results holds every word of /zebra"),
        "{frame}"
    );
}

#[test]
fn s_sorts_the_loaded_results_by_the_first_column_shown() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    results_of(h, "SELECT c.id, c.total FROM c WHERE c.pk = 'c-2'");
    assert_eq!(ids(&h.render()), ["o-02", "o-06", "o-10"]);
    // Scroll to `total`, sort descending (two presses).
    h.keys("l s s");
    let frame = h.render();
    assert!(
        frame.contains("sorted by total ↓ (loaded rows, not ORDER BY)"),
        "{frame}"
    );
    let message = h.app.message.clone().expect("a message").1;
    assert!(message.contains("not an ORDER BY"), "{message}");
    let totals: Vec<f64> = h
        .app
        .query
        .rows()
        .iter()
        .map(|&i| {
            h.app.query.run.as_ref().expect("a run").documents[i]["total"]
                .as_f64()
                .expect("a number")
        })
        .collect();
    assert_eq!(totals, [105.0, 63.0, 21.0]);
    // A third press goes back to the query's order.
    h.keys("s");
    assert_eq!(h.app.query.sort, None);
    assert_eq!(h.app.query.rows(), [0, 1, 2]);
}

#[test]
fn a_new_query_starts_at_its_first_column() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    results_of(h, "SELECT c.id, c.pk, c.status, c.total FROM c");
    h.keys("l l l");
    assert_eq!(h.app.query.hscroll, 3);
    h.keys("i <c-a> <c-k>");
    h.type_text("SELECT c.status AS type, COUNT(1) AS n FROM c GROUP BY c.status");
    h.keys("<f5>");
    assert_eq!(h.app.query.hscroll, 0);
    let frame = h.render();
    assert!(
        frame
            .lines()
            .any(|l| l.contains("type") && l.contains("│ n")),
        "{frame}"
    );
}

#[test]
fn walking_history_past_the_newest_entry_gives_back_the_draft() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    results_of(h, "SELECT VALUE c.id FROM c");
    h.keys("i <c-a> <c-k>");
    h.type_text("SELECT c.total FROM c WHERE c.to");
    h.keys("<c-up>");
    assert_eq!(h.app.query.editor.text(), "SELECT VALUE c.id FROM c");
    h.keys("<c-down>");
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT c.total FROM c WHERE c.to"
    );
    // Past the draft there is nothing more.
    h.keys("<c-down>");
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT c.total FROM c WHERE c.to"
    );
}

#[test]
fn cancelling_says_cancelled_with_the_charge_so_far_and_the_status_line_agrees() {
    let mut a = with_container();
    // A first query leaves 858.26 RU on the status line.
    let t0 = run_ticket(&keys(&mut a, "<c-n> <f5>"));
    cosmoscope::tui::update::update(
        &mut a,
        Msg::QueryPage {
            ticket: t0,
            result: Ok(page(vec![json!({"id": "x"})], None, 858.26)),
            elapsed_ms: 1.0,
        },
    );
    // The next query gets one page of two, then is cancelled while the second runs.
    let t1 = run_ticket(&keys(&mut a, "<f5>"));
    cosmoscope::tui::update::update(
        &mut a,
        Msg::QueryPage {
            ticket: t1,
            result: Ok(page(vec![json!({"id": "o-1"})], Some("next"), 3.5)),
            elapsed_ms: 1.0,
        },
    );
    let more = keys(&mut a, "<esc> m");
    let t2 = run_ticket(&more);
    assert_eq!(keys(&mut a, "<c-x>"), [Effect::CancelQuery { ticket: t2 }]);
    let frame = draw_app(&a, 120, 30);
    let status = frame.lines().nth(28).unwrap_or_default();
    assert!(
        status.contains("3.5 RU  query cancelled after 1 page: 3.5 RU spent, 1 document loaded"),
        "{frame}"
    );
    assert!(
        frame.contains("Results · 1+ (more on scroll) · table · cancelled"),
        "{frame}"
    );
    assert!(
        frame.contains("3.5 RU 1 doc · 1 page · 1.0 ms · cancelled"),
        "{frame}"
    );

    // Cancelled before its first page: no "No documents matched".
    let t3 = run_ticket(&keys(&mut a, "i <f5>"));
    keys(&mut a, "<c-x>");
    let late = cosmoscope::tui::update::update(
        &mut a,
        Msg::QueryPage {
            ticket: t3,
            result: Ok(page(vec![json!({"id": "late"})], None, 9.0)),
            elapsed_ms: 1.0,
        },
    );
    assert!(late.is_empty());
    let frame = draw_app(&a, 120, 30);
    assert!(!frame.contains("No documents matched"), "{frame}");
    assert!(
        frame.contains("Cancelled: 0 RU spent, no documents loaded."),
        "{frame}"
    );
    let status = frame.lines().nth(28).unwrap_or_default();
    assert!(
        status.contains(" 0 RU  query cancelled before its first page"),
        "{status}"
    );
}

#[test]
fn f4_edits_the_query_text_in_the_editor() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    type_query(h, "SELECT * FROM c");
    h.editor_results
        .push_back(Ok("SELECT VALUE c.id\nFROM c\nWHERE c.total > 100\n".into()));
    h.keys("<f4>");
    assert!(
        h.log.iter().any(|e| *e
            == Effect::EditQuery {
                text: "SELECT * FROM c".into()
            }),
        "the editor got the query"
    );
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT VALUE c.id\nFROM c\nWHERE c.total > 100"
    );
    h.keys("<f5>");
    assert_eq!(
        h.app.query.run.as_ref().map(|r| r.documents.clone()),
        Some(vec![json!("o-10"), json!("o-12"), json!("o-11")])
    );
    // An editor that fails leaves the text as it was, and says why.
    h.editor_results.push_back(Err("vi exited with 1".into()));
    h.keys("<f4>");
    assert_eq!(h.app.query.editor.lines.len(), 3);
    let (_, message) = h.app.message.clone().expect("a message");
    assert!(message.contains("vi exited with 1"), "{message}");
}
