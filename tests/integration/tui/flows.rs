//! Key-sequence flows against a real temporary store: the headless harness runs the real
//! `update`, performs the real effects through the engine and draws real frames, so each
//! test reads like a person at the keyboard.

use cosmoscope::engine::{Backend, QueryOptions};
use cosmoscope::tui::effect::Effect;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::{Focus, Layer, Level, View};
use cosmoscope::tui::ui::fmt_ru;
use serde_json::{Value, json};

use crate::support::cli::run_stdin;
use crate::support::tui_store::*;

/// Expands `shop`, `orders`, its range 0 and logical partition `c-2`, and opens `o-02`.
fn open_o02(h: &mut Harness) {
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("<enter>");
    select(h, "range 0");
    h.keys("<enter>");
    select(h, "c-2");
    h.keys("<enter>");
    select(h, "o-02");
    h.keys("<enter>");
}

fn read(s: &Store, id: &str, pk: &str) -> Result<Value, u16> {
    s.engine
        .read_item(DB, ORDERS, id, &json!(pk))
        .map(|r| serde_json::from_slice(r.body.as_deref().expect("a body")).expect("JSON"))
        .map_err(|e| e.status.as_u16())
}

fn message(h: &Harness) -> (Level, String) {
    h.app.message.clone().expect("a status message")
}

#[test]
fn navigating_the_tree_to_an_item_shows_its_json() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    let frame = h.render();
    assert!(frame.contains("▸ shop 2 containers"), "{frame}");

    h.keys("<enter>");
    let frame = h.render();
    assert!(frame.contains("orders /pk · 12 · "), "{frame}");
    assert!(frame.contains("customers /pk · 4 · "), "{frame}");

    select(h, ORDERS);
    h.keys("<enter>");
    let frame = h.render();
    for r in 0..4 {
        assert!(frame.contains(&format!("range {r} ")), "{frame}");
    }

    select(h, "range 0");
    h.keys("<enter>");
    select(h, "c-2");
    h.keys("<enter>");
    let frame = h.render();
    for id in ["o-02", "o-06", "o-10"] {
        assert!(frame.contains(id), "{frame}");
    }
    select(h, "o-02");
    h.keys("<enter>");
    let frame = h.render();
    assert!(
        frame.contains("o-02 · shop/orders · pk c-2 · range 0 · 1 RU"),
        "{frame}"
    );
    for line in [
        "\"id\": \"o-02\"",
        "\"status\": \"Pending\"",
        "\"total\": 21",
        "\"sku\": \"BK-M68B\"",
        "── system properties ──",
        "\"_etag\": ",
    ] {
        assert!(frame.contains(line), "{line} missing:\n{frame}");
    }
    assert_eq!(h.app.last_charge, Some(1.0));

    // `s` hides the system properties in the item view.
    h.keys("<tab> s");
    let frame = h.render();
    assert!(!frame.contains("\"_etag\""), "{frame}");
    assert!(
        !frame.contains("system properties"),
        "no empty heading:\n{frame}"
    );
    assert!(frame.contains("\"status\": \"Pending\""), "{frame}");
}

/// Opens an empty query console on `orders`.
fn empty_console(h: &mut Harness) {
    h.keys("<enter>");
    select(h, ORDERS);
    h.keys("<c-n>");
    assert_eq!(h.app.focus, Focus::Editor);
    // Clear the starter query: ctrl-a, ctrl-k on the one line.
    h.keys("<c-a> <c-k>");
    assert_eq!(h.app.query.editor.text(), "");
}

/// Types `sql` into a fresh query console on `orders` and runs it with F5.
fn run_query(h: &mut Harness, sql: &str) {
    empty_console(h);
    h.type_text(sql);
    h.keys("<f5>");
}

#[test]
fn a_single_partition_query_shows_its_charge_routing_and_the_partition_it_touched() {
    let mut s = store(120, 40);
    let sql = "SELECT c.id, c.total FROM c WHERE c.pk = 'c-1'";
    run_query(&mut s.h, sql);
    let expected = s
        .engine
        .query(DB, ORDERS, sql, &QueryOptions::default())
        .expect("the query runs");
    let h = &mut s.h;
    let run = h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents, expected.documents);
    assert_eq!(run.request_charge, expected.request_charge);
    assert_eq!(run.partitions.len(), 1, "one physical partition touched");
    let touched = run.partitions.keys().next().cloned().expect("a range");
    assert_eq!(touched, &*expected.partitions[0].id);

    let frame = h.render();
    let charge = format!("{} RU", fmt_ru(expected.request_charge));
    assert!(
        frame.contains(&format!("{charge} 3 docs · 1 page")),
        "{frame}"
    );
    assert!(frame.contains("single-partition: "), "{frame}");
    assert!(frame.contains("1 logical: c-1"), "{frame}");
    assert!(frame.contains("Results · 3 · table"), "{frame}");
    for id in ["o-01", "o-05", "o-09"] {
        assert!(frame.contains(id), "{frame}");
    }
    // The per-range table lists the touched range only.
    let ranges: Vec<&str> = frame
        .lines()
        .skip_while(|l| !l.contains("range     RU  retr  out  lp"))
        .skip(1)
        .take_while(|l| !l.contains('└'))
        .filter_map(|l| l.split("││").nth(1))
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(ranges.len(), 1, "{frame}");
    assert!(ranges[0].starts_with(&touched), "{ranges:?}");
    // The status line repeats the last request's charge.
    let status = frame.lines().nth(38).unwrap_or_default();
    assert!(status.ends_with(&charge), "{status}");
}

#[test]
fn a_query_without_a_partition_filter_fans_out_to_every_range() {
    let mut s = store(120, 40);
    run_query(&mut s.h, "SELECT VALUE c.id FROM c");
    let frame = s.h.render();
    assert!(frame.contains("fan-out: "), "{frame}");
    assert!(frame.contains("4 logical: "), "{frame}");
    let run = s.h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents.len(), 12);
    // Range 1 holds no items but was still read.
    assert_eq!(run.partitions.len(), 4, "{:?}", run.partitions.keys());
}

#[test]
fn a_ranked_search_shows_its_results_and_how_they_were_scored() {
    let mut s = store(120, 40);
    let sql =
        "SELECT TOP 3 c.id, c.status FROM c ORDER BY RANK FullTextScore(c.status, ['shipping'])";
    run_query(&mut s.h, sql);
    let expected = s
        .engine
        .query(DB, ORDERS, sql, &QueryOptions::default())
        .expect("the query runs");
    let run = s.h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents, expected.documents);
    // "shipping" and "Shipped" share the stem: the shipped orders rank first.
    for d in &run.documents {
        assert_eq!(d["status"], "Shipped", "{:?}", run.documents);
    }
    let frame = s.h.render();
    assert!(
        frame.contains("scan: ORDER BY a score: every document in scope is scored"),
        "{frame}"
    );
    assert!(frame.contains("Results · 3 · table"), "{frame}");
}

/// The labels of the open completion list.
fn completions(h: &Harness) -> Vec<String> {
    h.app
        .query
        .completion
        .as_ref()
        .map(|l| {
            l.completion
                .candidates
                .iter()
                .map(|c| c.label.clone())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn completion_offers_the_container_s_properties_aliases_and_functions() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    empty_console(h);
    // A dot opens the list: the properties sampled from the orders, system ones last.
    h.type_text("SELECT * FROM c WHERE c.");
    assert_eq!(
        completions(h),
        [
            "id",
            "lines",
            "pk",
            "status",
            "total",
            "_attachments",
            "_etag",
            "_rid",
            "_self",
            "_ts"
        ]
    );
    let frame = h.render();
    assert!(
        frame.contains("prop  total        number · 100%"),
        "{frame}"
    );
    assert!(frame.contains("1/10"), "{frame}");
    // Typing narrows it; tab takes the choice.
    h.type_text("st");
    assert_eq!(completions(h), ["status"]);
    h.keys("<tab>");
    assert_eq!(h.app.query.editor.text(), "SELECT * FROM c WHERE c.status");
    assert!(h.app.query.completion.is_none());
    assert_eq!(
        h.app.focus,
        Focus::Editor,
        "tab completed, it did not move focus"
    );
    // One candidate completes at once (ctrl-space); a function opens its parenthesis.
    h.type_text(" = 'Shipped' AND ARRAY_LEN");
    h.keys("<c-space>");
    assert!(h.app.query.editor.text().ends_with("AND ARRAY_LENGTH("));
    // Enter takes a choice too, here the second one.
    h.type_text("c.");
    h.keys("<down> <enter>");
    assert!(h.app.query.editor.text().ends_with("ARRAY_LENGTH(c.lines"));
    h.type_text(") > 0");
    // An alias bound by JOIN completes the elements' properties.
    h.keys("<c-a> <c-k>");
    h.type_text("SELECT VALUE l.s FROM c JOIN l IN c.lines");
    h.keys("<home>");
    for _ in 0.."SELECT VALUE l.s".len() {
        h.keys("<right>");
    }
    h.keys("<c-space>");
    assert_eq!(
        h.app.query.editor.text(),
        "SELECT VALUE l.sku FROM c JOIN l IN c.lines"
    );
    h.keys("<f5>");
    let run = h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents.len(), 12);
    assert!(h.app.query.error.is_none());
}

#[test]
fn the_completion_list_closes_without_getting_in_the_way() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    empty_console(h);
    h.type_text("SELECT c.");
    assert!(h.app.query.completion.is_some());
    // Esc closes the list and stays in the editor.
    h.keys("<esc>");
    assert!(h.app.query.completion.is_none());
    assert_eq!(h.app.focus, Focus::Editor);
    // Enter on a word already complete is a new line.
    h.type_text("id");
    h.keys("<c-space>");
    assert_eq!(
        h.app.message.as_ref().map(|m| m.1.as_str()),
        Some("'id' is complete")
    );
    h.type_text(", c.t");
    assert_eq!(completions(h), ["total"]);
    h.type_text("otal");
    assert!(
        h.app.query.completion.is_none(),
        "only what is typed is left"
    );
    h.keys("<enter>");
    assert_eq!(h.app.query.editor.text(), "SELECT c.id, c.total\n");
    // Nothing completes inside a string; a non-word character closes the list.
    h.type_text("FROM c WHERE c.status = 'c.");
    assert!(h.app.query.completion.is_none());
    h.type_text("' AND c.");
    assert!(h.app.query.completion.is_some());
    h.type_text(" ");
    assert!(h.app.query.completion.is_none());
    // Running the query closes it too.
    h.type_text("AND c.");
    h.keys("<f5>");
    assert!(h.app.query.completion.is_none());
}

#[test]
fn a_query_error_is_reported_with_its_position() {
    let mut s = store(80, 24);
    run_query(&mut s.h, "SELECT * FROM c WHERE");
    let frame = s.h.render();
    let err = s.h.app.query.error.as_ref().expect("an error");
    assert_eq!(err.status.as_u16(), 400);
    let (line, column) = (err.line.expect("a line"), err.column.expect("a column"));
    assert!(
        frame.contains(&format!("Error 400 at line {line}, column {column}")),
        "{frame}"
    );
    assert_eq!(
        (s.h.app.query.editor.row + 1, s.h.app.query.editor.col + 1),
        (line, column.min(22)),
        "the cursor is put on the error"
    );
}

#[test]
fn a_parameterised_query_asks_for_its_values_then_runs() {
    let mut s = store(120, 40);
    run_query(&mut s.h, "SELECT VALUE c.id FROM c WHERE c.pk = @customer");
    let h = &mut s.h;
    assert!(h.app.query.run.is_none(), "nothing ran");
    let frame = h.render();
    assert!(frame.contains("Parameters (JSON values)"), "{frame}");
    assert!(frame.contains("@customer = "), "{frame}");
    h.type_text("\"c-3\"");
    h.keys("<enter>");
    let run = h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents, [json!("o-03"), json!("o-07"), json!("o-11")]);
    assert_eq!(
        run.routing.as_ref().map(|r| r.0.as_str()),
        Some("single-partition")
    );
}

#[test]
fn writes_from_another_thread_and_another_process_show_up_in_the_feed() {
    let mut s = store(120, 40);
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.keys("3");
    assert_eq!(s.h.app.view, View::Feed);
    let frame = s.h.render();
    assert!(
        frame.contains("Change feed · shop/orders · latest version"),
        "{frame}"
    );
    assert!(frame.contains("waiting for changes…"), "{frame}");

    // Another thread, on the same engine.
    let engine = s.engine.clone();
    std::thread::spawn(move || {
        create(&engine, ORDERS, &order(13));
        create(&engine, ORDERS, &order(14));
    })
    .join()
    .expect("writer thread");
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("2 received · 0 dropped"), "{frame}");
    for id in ["o-13", "o-14"] {
        assert!(frame.contains(id), "{id} missing:\n{frame}");
    }

    // Another process: the CLI, on the same data directory.
    let upsert = run_stdin(
        s.dir.path(),
        &["item", "upsert", "shop/orders"],
        r#"{"id": "o-01", "pk": "c-1", "status": "Cancelled", "total": 10.5}"#,
    );
    assert!(upsert.status.success());
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("3 received · 0 dropped"), "{frame}");
    let row = frame
        .lines()
        .find(|l| l.contains(" replace ") && l.contains("o-01"))
        .unwrap_or_else(|| panic!("no replace of o-01:\n{frame}"));
    assert!(row.contains(" c-1 "), "{row}");
    // Every column fits: the size ends the row.
    assert!(
        row.trim_end_matches('│').trim_end().ends_with(" B"),
        "{row}"
    );

    // Select it: the detail shows what changed against the previous image.
    s.h.keys("G");
    let frame = s.h.render();
    assert!(frame.contains("replace o-01 · range "), "{frame}");
    assert!(
        frame.contains("changes from the previous image:"),
        "{frame}"
    );
    assert!(
        frame.contains("~ status: \"Shipped\" → \"Cancelled\""),
        "{frame}"
    );
    assert!(frame.contains("- lines: "), "{frame}");
}

#[test]
fn a_paused_feed_catches_up_on_resume() {
    let mut s = store(120, 40);
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.keys("3 p");
    create(&s.engine, ORDERS, &order(13));
    s.h.poll_feeds();
    let frame = s.h.render();
    assert!(frame.contains("PAUSED (1 buffered)"), "{frame}");
    assert!(!frame.contains("o-13"), "{frame}");
    s.h.keys("p");
    let frame = s.h.render();
    assert!(frame.contains("o-13"), "{frame}");
}

#[test]
fn following_the_whole_database_names_each_event_s_container() {
    for (width, height) in [(120, 40), (80, 24)] {
        let mut s = store(width, height);
        s.h.keys("<enter>");
        select(&mut s.h, ORDERS);
        s.h.keys("3 a");
        let frame = s.h.render();
        assert!(
            frame.contains("Change feed · shop (all containers)"),
            "{frame}"
        );
        create(&s.engine, ORDERS, &order(13));
        create(&s.engine, CUSTOMERS, &customer(5));
        s.h.poll_feeds();
        let frame = s.h.render();
        let rows: Vec<&str> = frame.lines().filter(|l| l.contains(" create ")).collect();
        assert_eq!(rows.len(), 2, "{frame}");
        assert!(
            rows.iter()
                .any(|r| r.contains(" orders ") && r.contains("o-13")),
            "{frame}"
        );
        assert!(
            rows.iter()
                .any(|r| r.contains(" customers ") && r.contains("c-5")),
            "{frame}"
        );
    }
}

#[test]
fn the_palette_jumps_to_a_container() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    h.keys("<c-p>");
    let frame = h.render();
    // Actions, the database, 2 containers, 5 ranges, 8 partition key values and 16 items.
    let total = cosmoscope::tui::action::Action::ALL.len() + 1 + 2 + 5 + 8 + 16;
    assert!(
        frame.contains(&format!("Palette · {total}/{total}")),
        "{frame}"
    );
    h.type_text("container customers");
    let frame = h.render();
    let first = frame
        .lines()
        .skip_while(|l| !l.contains("> container customers"))
        .nth(1)
        .unwrap_or_default();
    assert!(first.contains("container shop/customers"), "{frame}");
    h.keys("<enter>");
    assert!(h.app.layers.is_empty());
    assert_eq!(h.app.focus, Focus::Tree);
    assert_eq!(
        h.app.tree.selected_node().map(|n| n.label()).as_deref(),
        Some(CUSTOMERS),
        "the tree jumped to the container"
    );
    assert_eq!(h.app.container, Some((DB.into(), CUSTOMERS.into())));
    let frame = h.render();
    assert!(frame.contains("▾ shop 2 containers"), "{frame}");
    assert!(frame.contains("shop/customers"), "{frame}");
}

#[test]
fn the_palette_opens_an_item_by_id() {
    let mut s = store(120, 40);
    s.h.keys("<c-p>");
    s.h.type_text("o-07");
    s.h.keys("<enter>");
    let frame = s.h.render();
    assert!(frame.contains("\"id\": \"o-07\""), "{frame}");
    assert!(frame.contains("\"status\": \"Shipped\""), "{frame}");
}

#[test]
fn editing_an_item_saves_it_with_if_match() {
    let mut s = store(120, 40);
    open_o02(&mut s.h);
    let etag = s.h.app.item.as_ref().and_then(|i| i.etag.clone());
    assert!(etag.is_some());
    s.h.editor_results.push_back(Ok(
        r#"{"id": "o-02", "pk": "c-2", "status": "Shipped", "total": 21.0}"#.into(),
    ));
    s.h.keys("<tab> e");
    let frame = s.h.render();
    assert!(frame.contains("Save this item in shop/orders?"), "{frame}");
    assert!(
        frame.contains("~ status: \"Pending\" → \"Shipped\""),
        "{frame}"
    );
    assert!(frame.contains("- lines: "), "{frame}");
    s.h.keys("y");
    let saved =
        s.h.log
            .iter()
            .find_map(|e| match e {
                Effect::SaveItem { if_match, .. } => Some(if_match.clone()),
                _ => None,
            })
            .expect("a save");
    assert_eq!(saved, etag, "saved with If-Match on the etag read");
    let (level, text) = message(&s.h);
    assert_eq!(level, Level::Info, "{text}");
    assert!(
        text.starts_with("saved (") && text.contains("RU, range 0"),
        "{text}"
    );
    let stored = read(&s, "o-02", "c-2").expect("still there");
    assert_eq!(stored["status"], "Shipped");
    assert!(stored.get("lines").is_none());
    let frame = s.h.render();
    assert!(frame.contains("\"status\": \"Shipped\""), "{frame}");
    assert!(frame.contains("last save changed:"), "{frame}");
}

/// o-02 open in the item view, then changed by someone else (its status `Returned`).
fn changed_meanwhile() -> Store {
    let mut s = store(120, 40);
    open_o02(&mut s.h);
    let mut theirs = order(2);
    theirs["status"] = json!("Returned");
    let body = serde_json::to_vec(&theirs).expect("JSON");
    s.engine
        .upsert_item(DB, ORDERS, &body, None)
        .expect("concurrent write");
    s
}

#[test]
fn a_concurrent_change_is_reported_not_overwritten() {
    let s = &mut changed_meanwhile();

    s.h.editor_results
        .push_back(Ok(r#"{"id": "o-02", "pk": "c-2", "status": "Mine"}"#.into()));
    s.h.keys("<tab> e y");
    let (level, text) = message(&s.h);
    assert_eq!(level, Level::Error);
    assert!(
        text.starts_with("not saved (412)") && text.contains("someone changed"),
        "{text}"
    );
    assert_eq!(
        read(s, "o-02", "c-2").expect("still there")["status"],
        "Returned",
        "their change stays"
    );
    let frame = s.h.render();
    assert!(frame.contains("not saved (412)"), "{frame}");
    // Theirs is shown beside the edit; esc drops the edit.
    assert!(matches!(s.h.app.layers.last(), Some(Layer::Conflict(_))));
    s.h.keys("<esc>");
    assert!(s.h.app.layers.is_empty());

    // Refreshing reads their version; editing again then succeeds.
    s.h.keys("r");
    let frame = s.h.render();
    assert!(frame.contains("\"status\": \"Returned\""), "{frame}");
    s.h.editor_results
        .push_back(Ok(r#"{"id": "o-02", "pk": "c-2", "status": "Mine"}"#.into()));
    s.h.keys("e y");
    assert_eq!(message(&s.h).0, Level::Info, "{:?}", s.h.app.message);
    assert_eq!(read(s, "o-02", "c-2").expect("there")["status"], "Mine");
}

#[test]
fn after_a_412_the_stored_version_is_shown_beside_the_edit_which_can_be_saved_over_it() {
    let mut s = changed_meanwhile();
    let mine = r#"{"id": "o-02", "pk": "c-2", "status": "Mine"}"#;
    s.h.editor_results.push_back(Ok(mine.into()));
    s.h.keys("<tab> e y");
    let Some(Layer::Conflict(c)) = s.h.app.layers.last() else {
        panic!("the conflict view");
    };
    assert_eq!(c.theirs["status"], json!("Returned"));
    assert_eq!(c.mine, mine);
    let frame = s.h.render();
    for text in [
        "Not saved (412): shop/orders changed since you read it",
        "your edit",
        "stored now (etag",
        "\"status\": \"Mine\"",
        "\"status\": \"Returned\"",
    ] {
        assert!(frame.contains(text), "{text:?} in\n{frame}");
    }
    // `e`: the editor opens on the edit as typed; saved, it goes over their version.
    s.h.keys("e");
    let reopened = s.h.log.iter().rev().find_map(|e| match e {
        Effect::Edit { text, if_match, .. } => Some((text.clone(), if_match.clone())),
        _ => None,
    });
    let (text, if_match) = reopened.expect("the editor reopened");
    assert_eq!(text, mine);
    assert_eq!(if_match, c_etag(&s));
    s.h.keys("y");
    assert_eq!(read(&s, "o-02", "c-2").expect("there")["status"], "Mine");

    // `t` takes theirs into the item view instead.
    let mut s = changed_meanwhile();
    s.h.editor_results.push_back(Ok(mine.into()));
    s.h.keys("<tab> e y t");
    assert!(s.h.app.layers.is_empty());
    let shown = s.h.app.item.as_ref().expect("an item").tree.doc.clone();
    assert_eq!(shown["status"], json!("Returned"));
}

/// The etag the stored o-02 has now.
fn c_etag(s: &Store) -> Option<String> {
    read(s, "o-02", "c-2")
        .ok()
        .and_then(|d| d["_etag"].as_str().map(str::to_string))
}

#[test]
fn creating_an_item_starts_from_a_template_with_the_partition_key() {
    let mut s = store(120, 40);
    s.h.keys("<enter>");
    select(&mut s.h, ORDERS);
    s.h.editor_results
        .push_back(Ok(r#"{"id": "o-99", "pk": "c-9", "total": 1}"#.into()));
    s.h.keys("n");
    let template =
        s.h.log
            .iter()
            .find_map(|e| match e {
                Effect::Edit { text, create, .. } => Some((text.clone(), *create)),
                _ => None,
            })
            .expect("an edit");
    assert_eq!(
        serde_json::from_str::<Value>(&template.0).expect("JSON"),
        json!({"id": "", "pk": ""})
    );
    assert!(template.1);
    let frame = s.h.render();
    assert!(
        frame.contains("Create this item in shop/orders?"),
        "{frame}"
    );
    s.h.keys("y");
    assert_eq!(read(&s, "o-99", "c-9").expect("created")["total"], 1);
    let frame = s.h.render();
    assert!(frame.contains("orders /pk · 13 · "), "{frame}");
}

#[test]
fn deleting_asks_first() {
    let mut s = store(120, 40);
    open_o02(&mut s.h);
    // From the tree, on the selected item.
    s.h.keys("d");
    let frame = s.h.render();
    assert!(
        frame.contains("Delete item \"o-02\" (partition key \"c-2\") from shop/orders?"),
        "{frame}"
    );
    s.h.keys("n");
    assert!(s.h.app.layers.is_empty());
    assert!(read(&s, "o-02", "c-2").is_ok(), "no means no");

    s.h.keys("d y");
    assert_eq!(read(&s, "o-02", "c-2"), Err(404));
    let (level, text) = message(&s.h);
    assert_eq!(level, Level::Info);
    assert!(text.starts_with("deleted o-02 ("), "{text}");
    assert!(s.h.app.item.is_none());
    let frame = s.h.render();
    let tree: Vec<&str> = frame.lines().take(38).collect();
    assert!(
        !tree.iter().any(|l| l.contains("o-02")),
        "the tree reloaded:\n{frame}"
    );
    assert!(frame.contains("orders /pk · 11 · "), "{frame}");
}

#[test]
fn the_ui_survives_a_resize_to_80_by_24() {
    let mut s = store(120, 40);
    open_o02(&mut s.h);
    let frame = s.h.render();
    assert_eq!(frame.lines().count(), 40);
    for (width, height) in [(80, 24), (200, 60), (80, 24)] {
        s.h.resize(width, height);
        for view in ["1", "4", "3", "2"] {
            s.h.keys("<esc> <esc>");
            s.h.keys(view);
            let frame = s.h.render();
            assert_eq!(frame.lines().count(), height as usize, "{frame}");
            for line in frame.lines() {
                assert!(line.chars().count() <= width as usize, "too wide: {line:?}");
            }
            let lines: Vec<&str> = frame.lines().collect();
            assert!(lines[0].starts_with("┌ Resources"), "{frame}");
            // The status line keeps its tabs (the data directory gets the room left).
            assert!(lines[height as usize - 2].contains("1:Item"), "{frame}");
            assert!(!lines[height as usize - 1].trim().is_empty(), "{frame}");
        }
    }
}
