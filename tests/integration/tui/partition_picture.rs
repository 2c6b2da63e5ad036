//! The partition picture can be trusted (issue 23): every range a query touched is lit on
//! the key-space strip whatever its width, hot marks follow measured recent activity, and
//! long key values leave the counts in the tree row.

use cosmoscope::engine::Backend;
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::query::RangeSpan;
use cosmoscope::tui::ui::theme::theme;
use serde_json::json;

use super::update::{keys, page, run_ticket, with_container};
use crate::support::tui_store::*;

fn span(id: &str, start: f64, end: f64) -> RangeSpan {
    RangeSpan {
        id: id.into(),
        start,
        end,
    }
}

#[test]
fn a_touched_range_too_narrow_for_a_cell_is_still_drawn_and_lit() {
    let mut a = with_container();
    let t = run_ticket(&keys(&mut a, "<c-n> <f5>"));
    // Range 2 holds a sliver of the key space (one hot key split off), and did the work.
    cosmoscope::tui::update::update(
        &mut a,
        Msg::Ranges {
            ticket: t,
            db: "shop".into(),
            c: "orders".into(),
            pk_paths: vec!["/pk".into()],
            ranges: vec![
                span("0", 0.0, 0.5),
                span("1", 0.5, 0.9995),
                span("2", 0.9995, 1.0),
            ],
        },
    );
    cosmoscope::tui::update::update(
        &mut a,
        Msg::QueryPage {
            ticket: t,
            result: Ok(page(vec![json!({"id": "o-1"})], None, 2.5)),
            elapsed_ms: 1.0,
        },
    );
    for (width, height) in [(80, 24), (120, 40), (200, 60)] {
        let buf = frame_of(&a, width, height);
        let text = text_of(&buf);
        let (y, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains("▏─"))
            .unwrap_or_else(|| panic!("no strip:\n{text}"));
        let strip = line.split('│').rev().nth(1).unwrap_or_default();
        assert!(strip.ends_with("▏2"), "{width}×{height}: {strip:?}\n{text}");
        // The id's cell (just inside the panel's right border) is lit; range 1's are not.
        let chars: Vec<char> = line.chars().collect();
        let x = chars.iter().rposition(|c| *c == '│').unwrap_or_default() - 1;
        let cell = &buf[(x as u16, y as u16)];
        assert_eq!(cell.symbol(), "2");
        assert_eq!(cell.style().fg, theme().lit.fg, "{width}×{height}");
        assert_ne!(theme().lit.fg, theme().unlit.fg);
    }
}

#[test]
fn hot_marks_show_only_where_rus_were_measured_since_the_last_look() {
    let mut s = store(120, 40);
    expand(&mut s.h, &[DB, ORDERS, "range 3"]);
    let frame = s.h.render();
    assert!(frame.contains("c-1 3 · "), "{frame}");
    assert!(!frame.contains('🔥'), "nothing measured yet:\n{frame}");

    // Writes to c-1, then a refresh: c-1 took the RU, c-3 none.
    for n in 0..5 {
        let mut doc = order(1);
        doc["total"] = json!(n);
        let body = serde_json::to_vec(&doc).expect("serialize");
        s.engine
            .upsert_item(DB, ORDERS, &body, None)
            .expect("an upsert");
    }
    s.h.keys("r");
    let frame = s.h.render();
    let row = |id: &str| {
        frame
            .lines()
            .find(|l| l.contains(&format!("{id} 3 · ")))
            .unwrap_or_else(|| panic!("no {id}:\n{frame}"))
            .to_string()
    };
    assert!(row("c-1").contains("🔥c-1"), "{frame}");
    assert!(!row("c-3").contains('🔥'), "{frame}");

    // Idle again: the next look marks nothing.
    s.h.keys("r");
    let frame = s.h.render();
    assert!(!frame.contains('🔥'), "{frame}");
}

#[test]
fn a_guid_key_leaves_room_for_the_counts_in_the_tree_row() {
    let mut s = store(80, 24);
    let guid = "3f2b8c1e-9a4d-4f6e-8b7a-2c1d0e9f8a7b";
    create(&s.engine, CUSTOMERS, &json!({"id": "g", "pk": guid}));
    expand(&mut s.h, &[DB, CUSTOMERS, "range 0"]);
    let frame = s.h.render();
    let row = frame
        .lines()
        .find(|l| l.contains("3f2b8"))
        .unwrap_or_else(|| panic!("no GUID row:\n{frame}"));
    let tree_cell = row.split('│').nth(1).unwrap_or_default();
    assert!(tree_cell.contains('…'), "the key is cut: {tree_cell:?}");
    assert!(
        tree_cell.trim_end().ends_with(" B"),
        "the count and size stay: {tree_cell:?}"
    );
    assert!(tree_cell.contains(" 1 · "), "{tree_cell:?}");
}
