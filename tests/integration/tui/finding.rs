//! Finding things (issue 23): the tree filter searches the whole tree, the palette takes
//! several words and finds partition key values.

use cosmoscope::tui::state::Focus;
use cosmoscope::tui::state::palette::Target;
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
