//! User data the explorer prints as it is, whatever it holds (issue 29): control and
//! bidirectional-override characters appear as escapes instead of vanishing or reordering
//! the screen, and CJK and emoji count two columns, so rows keep their columns.

use cosmoscope::engine::Backend;
use serde_json::json;
use unicode_width::UnicodeWidthChar;

use crate::support::tui_store::*;

const SPOOFED_ID: &str = "o-\u{202E}fdp.exe";
const WIDE_KEY: &str = "c-東京🙂";

/// The display column of every `│` on a frame line.
fn separators(line: &str) -> Vec<usize> {
    let mut column = 0;
    let mut out = Vec::new();
    for c in line.chars() {
        if c == '│' {
            out.push(column);
        }
        column += c.width().unwrap_or(0);
    }
    out
}

#[test]
fn results_show_controls_and_overrides_as_escapes_and_keep_their_columns() {
    let mut s = store(120, 40);
    create(
        &s.engine,
        ORDERS,
        &json!({
            "id": SPOOFED_ID,
            "pk": WIDE_KEY,
            "status": "a\nb\u{1b}[31m",
            "total": 999,
        }),
    );
    let h = &mut s.h;
    type_query(
        h,
        "SELECT c.pk, c.id, c.status, c.total FROM c WHERE c.total >= 126",
    );
    h.keys("<f5>");
    let frame = h.render();
    let header = frame
        .lines()
        .find(|l| l.contains("pk ") && l.contains("status"))
        .unwrap_or_else(|| panic!("no result header:\n{frame}"));
    let row = frame
        .lines()
        .find(|l| l.contains("東京"))
        .unwrap_or_else(|| panic!("no row with the wide key:\n{frame}"));
    assert!(row.contains("o-\\u202efdp.exe"), "{row}");
    assert!(row.contains("a\\nb\\u001b[31m"), "{row}");
    assert!(
        !frame.contains('\u{202E}') && !frame.contains('\u{1b}'),
        "{frame}"
    );
    // The row's column separators (and the pane's borders) stand where the header's do.
    let (head, cells) = (separators(header), separators(row));
    assert!(head.len() >= 4, "{header}");
    assert_eq!(head, cells, "\n{header}\n{row}");
}

#[test]
fn a_long_wide_key_in_the_tree_is_cut_by_columns_and_keeps_its_counts() {
    let mut s = store(100, 30);
    let key = "東京都渋谷区神宮前一丁目🙂";
    create(
        &s.engine,
        ORDERS,
        &json!({"id": "o-wide", "pk": key, "total": 1}),
    );
    let info = s
        .engine
        .epk(DB, ORDERS, &json!(key))
        .expect("the key's range");
    let range = format!("range {}", info.partitions[0]);
    expand(&mut s.h, &[DB, ORDERS, &range]);
    let frame = s.h.render();
    let row = frame
        .lines()
        .find(|l| l.contains("東京"))
        .unwrap_or_else(|| panic!("no tree row for the key:\n{frame}"));
    // The key is cut (it is wider than the pane) and its counts follow it whole.
    let pane = row.split('│').nth(1).unwrap_or_default().trim_end();
    assert!(pane.contains('…'), "{row}");
    assert!(pane.ends_with(" B"), "the counts are cut:\n{row}");
    assert!(pane.contains(" 1 · "), "{row}");
    // The pane's borders stand where they do on the range's row.
    let above = frame
        .lines()
        .find(|l| l.contains(&range))
        .unwrap_or_else(|| panic!("no range row:\n{frame}"));
    assert_eq!(separators(row), separators(above), "\n{above}\n{row}");
}
