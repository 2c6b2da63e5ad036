//! Server-side scripts in the explorer (issue 26): the tree's script groups with their
//! counts, a script's body in the item view, creating and editing in `$EDITOR` (a body that
//! does not compile is kept and reopened), deleting after a confirmation, the stored
//! procedure's execute form with its response, charge, log and error, and UDF names in
//! query completion.

use cosmoscope::engine::{Backend, ScriptKind, ScriptSpec, TriggerOperation, TriggerType};
use cosmoscope::tui::effect::Effect;
use cosmoscope::tui::harness::Harness;
use cosmoscope::tui::state::{Layer, View};
use serde_json::json;

use crate::support::tui_store::*;

const HELLO: &str = r#"function hello(name) {
    console.log("greeting " + name);
    getContext().getResponse().setBody({greeting: "Hello, " + name});
}"#;

/// Writes the item it is given, then throws when asked to: the write is rolled back.
const ADD_ORDER: &str = r#"function addOrder(item, fail) {
    var c = getContext().getCollection();
    c.createDocument(c.getSelfLink(), item, function (err, created) {
        if (err) throw err;
        if (fail) throw new Error("refused after writing " + created.id);
        getContext().getResponse().setBody(created.id);
    });
}"#;

const STAMP: &str = r#"function stamp() {
    var r = getContext().getRequest();
    var item = r.getBody();
    item.stamped = true;
    r.setBody(item);
}"#;

const TAX: &str = "function tax(total) { return total * 0.25; }";

/// The UI store with scripts in `orders`: two stored procedures, a trigger and a UDF.
fn scripted(width: u16, height: u16) -> Store {
    let s = store(width, height);
    for (id, body) in [("hello", HELLO), ("addOrder", ADD_ORDER)] {
        s.engine
            .create_script(
                DB,
                ORDERS,
                &ScriptSpec::new(ScriptKind::StoredProcedure, id, body),
            )
            .expect("create sproc");
    }
    s.engine
        .create_script(
            DB,
            ORDERS,
            &ScriptSpec::trigger("stamp", STAMP, TriggerType::Pre, TriggerOperation::Create),
        )
        .expect("create trigger");
    s.engine
        .create_script(
            DB,
            ORDERS,
            &ScriptSpec::new(ScriptKind::UserDefinedFunction, "tax", TAX),
        )
        .expect("create udf");
    s
}

/// Opens `orders` and the group `group` in the tree.
fn open_group(h: &mut Harness, group: &str) {
    h.keys("r");
    expand(h, &[DB, ORDERS, group]);
}

#[test]
fn the_tree_lists_a_containers_scripts_in_groups_with_counts() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    h.keys("r");
    expand(h, &[DB, ORDERS]);
    let frame = h.render();
    for row in ["▸ Stored procedures 2", "▸ Triggers 1", "▸ UDFs 1"] {
        assert!(frame.contains(row), "{row:?} in\n{frame}");
    }
    // The customers container has the groups too, empty: a group is where one is created.
    expand(h, &[CUSTOMERS]);
    assert!(h.render().contains("▸ Stored procedures 0"));
    h.keys("<enter>");
    expand(h, &["Triggers"]);
    let frame = h.render();
    assert!(frame.contains("stamp pre · create"), "{frame}");
}

#[test]
fn script_counts_follow_another_process_without_a_reload() {
    let mut s = scripted(100, 24);
    let h = &mut s.h;
    h.keys("r");
    expand(h, &[DB, ORDERS, "Stored procedures"]);
    let frame = h.render();
    assert!(frame.contains("▾ Stored procedures 2"), "{frame}");

    // Another process (the CLI on the same data directory: LMDB lets one process open an
    // environment once) adds a procedure and drops the trigger.
    let file = s.dir.path().join("archive.js");
    std::fs::write(&file, "function archive() {}").expect("write the script");
    let target = format!("{DB}/{ORDERS}");
    for args in [
        [
            "sproc",
            "create",
            &target,
            "archive",
            file.to_str().expect("a path"),
        ]
        .as_slice(),
        ["trigger", "delete", &target, "stamp"].as_slice(),
    ] {
        let out = crate::support::cli::run(s.dir.path(), args);
        assert!(out.status.success(), "{args:?}: {out:?}");
    }

    // Nothing is pressed; the periodic probe sees the counts change.
    let now = h.app.now;
    for t in 1..=3 {
        h.send(cosmoscope::tui::msg::Msg::Tick { now: now + t });
    }
    let frame = still(h);
    assert!(frame.contains("▾ Stored procedures 3"), "{frame}");
    assert!(
        frame.contains("archive"),
        "the open group lists it: {frame}"
    );
    assert!(frame.contains("▸ Triggers 0"), "{frame}");
    snapshot("scripts_after_another_process_100x24", &frame);
}

#[test]
fn enter_on_a_script_shows_its_body_with_line_numbers() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "Stored procedures");
    select(h, "hello");
    h.keys("<enter>");
    assert_eq!(h.app.view, View::Item);
    let frame = h.render();
    assert!(
        frame.contains("stored procedure hello · shop/orders"),
        "{frame}"
    );
    assert!(frame.contains("1 │ function hello(name) {"), "{frame}");
    assert!(frame.contains("4 │ }"), "{frame}");
    assert!(
        frame.contains("executes it: partition key, parameters"),
        "{frame}"
    );
}

#[test]
fn the_execute_form_runs_a_procedure_and_shows_body_charge_and_log() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "Stored procedures");
    select(h, "hello");
    h.keys("X");
    assert!(matches!(h.app.layers.last(), Some(Layer::Execute(_))));
    // A key that is not JSON is refused and the form stays, with what was typed.
    h.type_text("c-1");
    h.keys("<enter>");
    assert!(matches!(h.app.layers.last(), Some(Layer::Execute(_))));
    let message = h.app.message.clone().expect("a message").1;
    assert!(message.contains("partition key is not JSON"), "{message}");
    h.keys("<home> <c-k>");
    h.type_text("\"c-1\"");
    h.keys("<down>");
    h.type_text("[\"Ana\"]");
    h.keys("<down> <space> <enter>");
    assert!(h.app.layers.is_empty());
    let frame = h.render();
    for text in [
        "── last execution ──",
        "partition key \"c-1\" · parameters [\"Ana\"]",
        "response body:",
        "\"greeting\": \"Hello, Ana\"",
        "script log:",
        "greeting Ana",
    ] {
        assert!(frame.contains(text), "{text:?} in\n{frame}");
    }
    let charge = h.app.last_charge.expect("a charge");
    assert!(charge > 0.0);
    assert!(frame.contains(&format!("{charge} RU · range")), "{frame}");
    // The form opens again as it was last filled.
    h.keys("x");
    let Some(Layer::Execute(form)) = h.app.layers.last() else {
        panic!("the form");
    };
    assert_eq!(form.partition_key.text(), "\"c-1\"");
    assert!(form.log);
}

#[test]
fn a_procedure_that_throws_shows_its_error_and_writes_nothing() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "Stored procedures");
    select(h, "addOrder");
    h.keys("X");
    h.type_text("\"c-9\"");
    h.keys("<down>");
    h.type_text("[{\"id\": \"o-99\", \"pk\": \"c-9\"}, true]");
    h.keys("<enter>");
    let frame = h.render();
    assert!(frame.contains("failed (400 BadRequest)"), "{frame}");
    assert!(frame.contains("Exception = Error: refused"), "{frame}");
    let message = h.app.message.clone().expect("a message").1;
    assert!(message.contains("refused after writing o-99"), "{message}");
    let read = s.engine.read_item(DB, ORDERS, "o-99", &json!("c-9"));
    assert!(read.is_err(), "the write was rolled back");

    // Without the flag it commits, and the tree shows the new item's partition.
    let h = &mut s.h;
    h.keys("x <down> <c-a> <c-k>");
    h.type_text("[{\"id\": \"o-99\", \"pk\": \"c-9\"}]");
    h.keys("<enter>");
    assert!(h.render().contains("\"o-99\""));
    assert!(
        s.engine
            .read_item(DB, ORDERS, "o-99", &json!("c-9"))
            .is_ok()
    );
    assert!(
        s.h.log
            .iter()
            .any(|e| matches!(e, Effect::LoadDatabases { .. })),
        "the tree reloads after an execution"
    );
}

#[test]
fn a_new_script_that_does_not_compile_is_kept_and_reopened_with_its_position() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "UDFs");
    h.keys("n");
    assert!(matches!(h.app.layers.last(), Some(Layer::Prompt { .. })));
    h.type_text("double");
    let broken = "function double(x) {\n    return x * ;\n}\n";
    let fixed = "function double(x) {\n    return x * 2;\n}\n";
    h.editor_results.push_back(Ok(broken.to_string()));
    h.keys("<enter>");
    // The editor opened on a starting body of the kind, named after the script.
    let opened = h.log.iter().rev().find_map(|e| match e {
        Effect::EditScript { spec, create, .. } => Some((spec.body.clone(), *create)),
        _ => None,
    });
    let (body, create) = opened.expect("the editor opened");
    assert!(create);
    assert!(body.starts_with("function double(value)"), "{body}");

    let message = h.app.message.clone().expect("a message").1;
    assert!(
        message.contains("not created (400 at line 2, column"),
        "{message}"
    );
    assert!(message.contains("SyntaxError"), "{message}");
    let Some(Layer::Confirm { text, .. }) = h.app.layers.last() else {
        panic!("a confirmation to reopen the editor");
    };
    assert!(text.contains("Reopen the editor with your text?"), "{text}");
    // Yes: the editor gets the text as it was typed, not the template.
    h.editor_results.push_back(Ok(fixed.to_string()));
    h.keys("y");
    let reopened = h.log.iter().rev().find_map(|e| match e {
        Effect::EditScript { spec, .. } => Some(spec.body.clone()),
        _ => None,
    });
    assert_eq!(reopened.as_deref(), Some(broken));
    let udf = s
        .engine
        .read_script(DB, ORDERS, ScriptKind::UserDefinedFunction, "double")
        .expect("created");
    assert_eq!(udf.body, fixed);
    let frame = s.h.render();
    assert!(frame.contains("user-defined function double"), "{frame}");
    assert!(frame.contains("▾ UDFs 2"), "{frame}");
}

#[test]
fn a_new_trigger_takes_its_type_and_operation_from_the_prompt() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "Triggers");
    h.keys("n");
    h.type_text("audit post delete");
    h.keys("<enter>");
    let t = s
        .engine
        .read_script(DB, ORDERS, ScriptKind::Trigger, "audit")
        .expect("created from its template, unchanged");
    assert_eq!(t.trigger_type, Some(TriggerType::Post));
    assert_eq!(t.trigger_operation, Some(TriggerOperation::Delete));
    assert!(s.h.render().contains("audit post · delete"));
}

#[test]
fn editing_a_script_replaces_its_body_and_delete_asks_first() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    open_group(h, "Stored procedures");
    select(h, "hello");
    // `e` on a tree row reads the body, then opens the editor on it.
    let edited = HELLO.replace("Hello, ", "Hi, ");
    h.editor_results.push_back(Ok(edited.clone()));
    h.keys("e");
    let body = s
        .engine
        .read_script(DB, ORDERS, ScriptKind::StoredProcedure, "hello")
        .expect("still there")
        .body;
    assert_eq!(body, edited);
    let h = &mut s.h;
    assert!(h.render().contains("setBody({greeting: \"Hi, \" + name});"));
    // An unchanged edit saves nothing.
    let saves = |h: &Harness| {
        h.log
            .iter()
            .filter(|e| matches!(e, Effect::SaveScript { .. }))
            .count()
    };
    let before = saves(h);
    h.keys("<tab> e");
    assert_eq!(saves(h), before);
    assert_eq!(
        h.app.message.clone().map(|m| m.1).as_deref(),
        Some("no changes")
    );

    // Delete: a confirmation, `n` keeps it, `y` deletes it.
    h.keys("d");
    assert!(matches!(h.app.layers.last(), Some(Layer::Confirm { .. })));
    h.keys("n");
    assert!(
        s.engine
            .read_script(DB, ORDERS, ScriptKind::StoredProcedure, "hello")
            .is_ok()
    );
    let h = &mut s.h;
    h.keys("d y");
    assert!(
        s.engine
            .read_script(DB, ORDERS, ScriptKind::StoredProcedure, "hello")
            .is_err()
    );
    let frame = s.h.render();
    assert!(frame.contains("Stored procedures 1"), "{frame}");
    assert!(s.h.app.script.is_none());
}

#[test]
fn the_palette_finds_a_script_and_opens_it() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    h.keys("<c-p>");
    h.type_text("addOrder stored");
    let entry = h.app.palette.selected_entry().map(|e| e.text.clone());
    assert_eq!(
        entry.as_deref(),
        Some("addOrder · stored procedure in shop/orders")
    );
    h.keys("<enter>");
    let shown = h.app.script.as_ref().map(|s| s.info.id.clone());
    assert_eq!(shown.as_deref(), Some("addOrder"));
    assert_eq!(h.app.view, View::Item);
}

#[test]
fn udf_dot_in_the_query_editor_offers_the_containers_functions() {
    let mut s = scripted(120, 40);
    let h = &mut s.h;
    h.keys("r");
    type_query(h, "SELECT c.id, udf.");
    let list = h
        .app
        .query
        .completion
        .as_ref()
        .expect("a list opens after the dot");
    let labels: Vec<&str> = list
        .completion
        .candidates
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(labels, ["tax("]);
    h.keys("<tab>");
    h.type_text("c.total) AS tax FROM c WHERE c.id = 'o-04'");
    h.keys("<f5>");
    let run = h.app.query.run.as_ref().expect("a run");
    assert_eq!(run.documents, [json!({"id": "o-04", "tax": 10.5})]);
}

/// The frame with the ranges' RU/s meters zeroed.
fn still(h: &mut Harness) -> String {
    zero_range_meters(h);
    h.render()
}

#[test]
fn snapshots_of_a_procedure_and_its_execute_form() {
    for (w, ht) in [(80, 24), (120, 40)] {
        let mut s = scripted(w, ht);
        let h = &mut s.h;
        open_group(h, "Stored procedures");
        select(h, "hello");
        h.keys("<enter> X");
        h.type_text("\"c-1\"");
        snapshot(&format!("script_form_{w}x{ht}"), &still(h));
        h.keys("<down>");
        h.type_text("[\"Ana\"]");
        h.keys("<down> <space> <enter>");
        snapshot(&format!("script_executed_{w}x{ht}"), &still(h));
    }
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
