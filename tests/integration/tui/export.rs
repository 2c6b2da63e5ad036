//! The results workflow's export and value view (issue 23): a result written to a file the
//! user names, as JSON, NDJSON or CSV (the loaded rows, or every page run again in the
//! worker), with a message saying where and how many rows; and a selected cell or document
//! shown whole, scrollable and copied as the rest of the explorer copies.

use std::sync::atomic::AtomicBool;

use cosmoscope::engine::{Backend, ContainerSettings};
use cosmoscope::error::StatusCode;
use cosmoscope::tui::export::{Format, Source, export};
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::{Layer, View};
use serde_json::{Value, json};

use crate::support::tui_store::*;

/// Runs `sql` on `orders` and moves focus to the results.
fn results_of(h: &mut Harness, sql: &str) {
    type_query(h, sql);
    h.keys("<f5> <esc>");
    assert_eq!(h.app.view, View::Query);
}

/// Answers the export prompt with `path` (replacing the suggested name).
fn export_to(h: &mut Harness, path: &std::path::Path) {
    h.keys("E");
    assert!(matches!(h.app.layers.last(), Some(Layer::Prompt { .. })));
    h.keys("<c-a> <c-k>");
    h.type_text(&path.display().to_string());
    h.keys("<enter>");
}

fn message(h: &Harness) -> String {
    h.app.message.clone().map(|m| m.1).unwrap_or_default()
}

#[test]
fn the_loaded_rows_export_as_csv_json_and_ndjson() {
    let mut s = store(120, 40);
    let out = tempfile::tempdir().expect("a directory");
    let h = &mut s.h;
    results_of(h, "SELECT * FROM c WHERE c.pk = 'c-2'");
    // The prompt suggests a name after the container.
    h.keys("E");
    let Some(Layer::Prompt { input, .. }) = h.app.layers.last() else {
        panic!("the export prompt");
    };
    assert_eq!(input.text(), "orders-result.json");
    h.keys("<esc>");

    let csv = out.path().join("c2.csv");
    export_to(h, &csv);
    assert_eq!(
        message(h),
        format!("exported 3 rows as CSV to {}", csv.display())
    );
    let text = std::fs::read_to_string(&csv).expect("the CSV");
    let lines: Vec<&str> = text.split("\r\n").collect();
    // Columns: the union of top-level properties, system ones last; nested values as
    // JSON text, quoted as RFC 4180 says.
    assert_eq!(
        lines[0],
        "id,pk,status,total,lines,_rid,_self,_etag,_attachments,_ts"
    );
    assert!(
        lines[1]
            .starts_with("o-02,c-2,Pending,21,\"[{\"\"sku\"\":\"\"BK-M68B\"\",\"\"qty\"\":3}]\","),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines.len(),
        5,
        "a header, 3 records and the final CRLF: {text}"
    );

    let json_path = out.path().join("c2.json");
    export_to(h, &json_path);
    let docs: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("the JSON"))
            .expect("a JSON array");
    let ids: Vec<&str> = docs.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(ids, ["o-02", "o-06", "o-10"]);

    // Searched and sorted: the rows as shown.
    h.keys("/");
    h.type_text("Shipped");
    h.keys("<enter>");
    let nd = out.path().join("shipped.ndjson");
    export_to(h, &nd);
    let rows: Vec<Value> = std::fs::read_to_string(&nd)
        .expect("the NDJSON")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], json!("o-10"));
    assert!(message(h).starts_with("exported 1 row as NDJSON"));
}

#[test]
fn a_path_without_a_known_extension_says_what_to_use() {
    let mut s = store(120, 40);
    let out = tempfile::tempdir().expect("a directory");
    let h = &mut s.h;
    results_of(h, "SELECT c.id FROM c");
    export_to(h, &out.path().join("ids.txt"));
    assert!(
        message(h).contains("end the file name with .json, .ndjson or .csv"),
        "{}",
        message(h)
    );
    assert!(h.app.job.is_none());
    assert!(!out.path().join("ids.txt").exists());
}

/// 150 items in `many` (more than one page of 100).
fn many(s: &Store) {
    s.engine
        .create_container(DB, "many", ContainerSettings::new(vec!["/pk".into()]))
        .expect("create");
    for n in 0..150 {
        create(
            &s.engine,
            "many",
            &json!({"id": format!("m-{n:03}"), "pk": format!("k-{}", n % 7), "n": n}),
        );
    }
}

#[test]
fn with_more_pages_the_user_picks_every_page_or_the_loaded_ones() {
    let mut s = store(120, 40);
    many(&s);
    let out = tempfile::tempdir().expect("a directory");
    let h = &mut s.h;
    h.keys("r <enter>");
    select(h, "many");
    h.keys("<c-n> <c-a> <c-k>");
    h.type_text("SELECT c.id, c.n FROM c");
    h.keys("<f5> <esc>");
    let loaded = h.app.query.run.as_ref().map_or(0, |r| r.documents.len());
    assert_eq!(loaded, 100);

    let all = out.path().join("all.ndjson");
    export_to(h, &all);
    let Some(Layer::Choose { text, choices }) = h.app.layers.last() else {
        panic!("a choice between every page and the loaded ones");
    };
    assert!(text.contains("more results than the 100 loaded"), "{text}");
    assert_eq!(choices.len(), 2);
    let frame = h.render();
    assert!(
        frame.contains("a  all of them: the query runs again"),
        "{frame}"
    );
    h.keys("a");
    assert_eq!(
        std::fs::read_to_string(&all)
            .expect("written")
            .lines()
            .count(),
        150
    );
    let m = message(h);
    assert!(
        m.starts_with(&format!("exported 150 rows as NDJSON to {}", all.display())),
        "{m}"
    );
    assert!(m.contains("the query run again for every page:"), "{m}");

    let some = out.path().join("loaded.csv");
    export_to(h, &some);
    h.keys("l");
    let text = std::fs::read_to_string(&some).expect("written");
    assert_eq!(
        text.lines().count(),
        101,
        "a header and the 100 loaded rows"
    );
    assert!(message(h).starts_with("exported 100 rows as CSV"));
}

#[test]
fn a_cancelled_export_leaves_no_file() {
    let s = store(80, 24);
    many(&s);
    let out = tempfile::tempdir().expect("a directory");
    let path = out.path().join("cancelled.csv");
    let source = Source::Query {
        db: DB.into(),
        c: "many".into(),
        sql: "SELECT * FROM c".into(),
        params: Default::default(),
    };
    let stop = AtomicBool::new(true);
    let e = export(
        &*s.engine,
        &source,
        &path.display().to_string(),
        Format::Csv,
        &stop,
        &mut |_| {},
    )
    .expect_err("cancelled");
    assert_eq!(e.status, StatusCode::Cancelled);
    assert_eq!(std::fs::read_dir(out.path()).expect("list").count(), 0);
    assert_eq!(
        s.engine
            .container(DB, "many")
            .expect("there")
            .statistics
            .item_count,
        150
    );
}

#[test]
fn v_shows_the_selected_cell_whole_and_y_copies_it() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    results_of(h, "SELECT c.id, c.lines FROM c WHERE c.id = 'o-05'");
    // Scrolled to the `lines` column: its value, pretty.
    h.keys("l v");
    let Some(Layer::Value { title, text, .. }) = h.app.layers.last() else {
        panic!("the value view");
    };
    assert_eq!(title, "o-05 · lines");
    let expected =
        serde_json::to_string_pretty(&json!([{"sku": "BK-M68B", "qty": 3}])).expect("pretty");
    assert_eq!(text, &expected);
    h.keys("y");
    assert_eq!(h.copied.last(), Some(&expected));
    h.keys("<esc>");
    assert!(h.app.layers.is_empty());
    // In JSON view, the whole document.
    h.keys("t v");
    let Some(Layer::Value { text, .. }) = h.app.layers.last() else {
        panic!("the value view");
    };
    let doc: Value = serde_json::from_str(text).expect("the document");
    assert_eq!(doc["id"], json!("o-05"));
}

#[test]
fn snapshots_of_the_value_view_and_the_export_choice() {
    for (w, ht) in [(80, 24), (120, 40)] {
        let mut s = store(w, ht);
        many(&s);
        let h = &mut s.h;
        results_of(h, "SELECT * FROM c WHERE c.id = 'o-07'");
        still(h);
        h.keys("t v");
        snapshot(&format!("value_view_{w}x{ht}"), &h.render());
        h.keys("<esc> <esc>");
        select(h, "many");
        h.keys("<c-n> <c-n> <f5> <esc> E <enter>");
        still(h);
        snapshot(&format!("export_choice_{w}x{ht}"), &h.render());
    }
}

/// Fixes what changes from run to run: the loaded documents' `_ts` and `_etag` (which
/// holds the time) and the query's timings.
fn still(h: &mut Harness) {
    if let Some(run) = h.app.query.run.as_mut() {
        for doc in &mut run.documents {
            if let Some(o) = doc.as_object_mut() {
                o.insert("_ts".into(), json!(1_700_000_000));
                o.insert(
                    "_etag".into(),
                    json!("\"00000000-0000-0000-0000-000000000000\""),
                );
            }
        }
    }
    zero_query_timings(h);
}

/// Checks `frame` against tests/snapshots/…`name`.snap, where the UI's snapshots are.
fn snapshot(name: &str, frame: &str) {
    insta::with_settings!({
        omit_expression => true,
        snapshot_path => "../../snapshots",
    }, {
        insta::assert_snapshot!(name.to_string(), frame);
    });
}
