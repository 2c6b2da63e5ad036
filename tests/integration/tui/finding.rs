//! Finding things (issue 23): the tree filter searches the whole tree, the palette takes
//! several words and finds partition key values.

use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::Focus;
use cosmoscope::tui::state::palette::matcher::CHUNK;
use cosmoscope::tui::state::palette::{Entry, Target};
use serde_json::json;

use crate::support::tui_store::*;

#[test]
fn the_tree_filter_finds_containers_of_collapsed_databases() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    let frame = h.render();
    assert!(frame.contains("▸ shop 2 containers"), "collapsed:\n{frame}");
    h.keys("/");
    h.type_text("cust");
    let frame = h.render();
    assert!(frame.contains("Resources /cust"), "{frame}");
    assert!(frame.contains("customers /pk · 4 · "), "{frame}");
    assert!(!frame.contains("orders /pk"), "{frame}");
    h.keys("<enter>");
    // The match can be selected and opened.
    select(h, CUSTOMERS);
    assert_eq!(h.app.container, Some((DB.into(), CUSTOMERS.into())));
}

/// The palette's entries shown after typing `text`, best first.
fn palette_for(h: &mut cosmoscope::tui::harness::Harness, text: &str) -> Vec<String> {
    h.keys("<c-p>");
    h.type_text(text);
    h.app
        .palette
        .matches
        .iter()
        .map(|e| e.text.clone())
        .collect()
}

#[test]
fn the_palette_matches_several_words() {
    let mut s = store(120, 40);
    let found = palette_for(&mut s.h, "container shop/orders");
    assert_eq!(
        found.first().map(String::as_str),
        Some("orders · container shop/orders"),
        "{found:?}"
    );
    let frame = s.h.render();
    assert!(!frame.contains("Palette · 0/"), "{frame}");
}

#[test]
fn the_palette_finds_a_partition_key_value_and_jumps_to_it() {
    let mut s = store(120, 40);
    let found = palette_for(&mut s.h, "c-3 key orders");
    let first = s.h.app.palette.matches.first().cloned().expect("a match");
    assert_eq!(
        first.target,
        Target::Logical {
            db: DB.into(),
            c: ORDERS.into(),
            range: 3,
            pk: json!("c-3"),
        },
        "{found:?}"
    );
    s.h.keys("<enter>");
    assert_eq!(s.h.app.focus, Focus::Tree);
    assert_eq!(
        s.h.app.tree.selected_node().map(|n| n.label()).as_deref(),
        Some("c-3")
    );
    let frame = s.h.render();
    assert!(frame.contains("▾ range 3 "), "{frame}");
}

#[test]
fn an_item_saved_after_a_palette_jump_names_its_key() {
    let mut s = store(120, 40);
    s.h.keys("<c-p>");
    s.h.type_text("o-07");
    s.h.keys("<enter>");
    s.h.editor_results.push_back(Ok(
        r#"{"id": "o-07", "pk": "c-3", "status": "Cancelled", "total": 73.5}"#.into(),
    ));
    s.h.keys("e y");
    let frame = s.h.render();
    assert!(
        frame.contains("o-07 · shop/orders · pk c-3 · range 3"),
        "{frame}"
    );
}

/// Ids enough for several of the palette matcher's chunks, pushed as the id stream does.
fn inject_ids(h: &mut Harness, n: usize) {
    let mut injector = h.app.palette.injector();
    for i in 0..n {
        let id = format!("order-{i:07}");
        Entry {
            text: format!("{id} · {DB}/{ORDERS}"),
            kind: "item",
            target: Target::Item {
                db: DB.into(),
                c: ORDERS.into(),
                pk: json!(format!("c-{}", i % 4 + 1)),
                id,
            },
        }
        .push_into(&mut injector);
    }
    drop(injector);
    h.settle_palette();
}

fn shown(h: &Harness) -> Vec<String> {
    h.app
        .palette
        .matches
        .iter()
        .map(|e| e.text.clone())
        .collect()
}

/// Keystrokes into the palette over `2.5 × CHUNK` ids: characters typed, then a
/// backspace (which is not an append).
const TYPED: [&str; 4] = ["o", "r", "4", "<bs>"];

#[test]
fn the_palette_draws_partial_results_while_matching_goes_on_and_ends_with_the_complete_list() {
    let ids = CHUNK * 5 / 2;
    // The lists each keystroke ends with when matching runs freely.
    let mut s = store(120, 40);
    s.h.keys("<c-p>");
    inject_ids(&mut s.h, ids);
    let complete: Vec<Vec<String>> = TYPED
        .iter()
        .map(|k| {
            s.h.keys(k);
            assert!(!s.h.app.palette.running);
            shown(&s.h)
        })
        .collect();
    assert!(complete.iter().all(|l| l.len() == 200), "{complete:?}");
    assert_ne!(
        complete[2], complete[3],
        "the backspace changed the pattern"
    );
    assert_eq!(s.h.app.palette.input.text(), "or");

    // The same keystrokes with matching let through a chunk at a time.
    let mut s = store(120, 40);
    s.h.keys("<c-p>");
    inject_ids(&mut s.h, ids);
    for (n, key) in TYPED.iter().enumerate() {
        s.h.app.palette.pace(Some(0));
        s.h.keys(key);
        assert_eq!(
            s.h.app.palette.searched, 0,
            "held before the first chunk, after {key:?}"
        );
        // Chunk by chunk until ids are among the matches: a partial result.
        while !shown(&s.h).iter().any(|t| t.starts_with("order-")) {
            s.h.app.palette.pace(Some(1));
            s.h.settle_palette();
        }
        let p = &s.h.app.palette;
        assert!(p.running && p.searched < p.total, "matching goes on");
        let partial = shown(&s.h);
        let frame = s.h.render();
        assert!(frame.contains(" · matching…"), "{frame}");
        let first = partial.first().expect("a first result");
        assert!(frame.contains(first.as_str()), "{first}\n{frame}");
        if n == 0 {
            insta::assert_snapshot!("palette_partial_result_120x40", frame);
        }
        s.h.app.palette.pace(None);
        s.h.settle_palette();
        assert!(!s.h.app.palette.running);
        assert_eq!(shown(&s.h), complete[n], "after {key:?}");
        let frame = s.h.render();
        assert!(!frame.contains("matching…"), "{frame}");
    }
}
