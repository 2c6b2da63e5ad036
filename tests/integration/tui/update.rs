//! Pure `update` tests: messages built by hand, no engine, no terminal. Each test asserts
//! the state that changed and the exact effects `update` asked for.

use std::collections::BTreeMap;
use std::sync::Arc;

use cosmoscope::Error;
use cosmoscope::engine::Document;
use cosmoscope::engine::{AccessView, PartitionResult, QueryMetrics, RoutingView};
use cosmoscope::engine::{ItemResponse, QueryResult};
use cosmoscope::tui::effect::{Effect, JobKind};
use cosmoscope::tui::harness::parse_keys;
use cosmoscope::tui::keymap::{Keymap, Mode};
use cosmoscope::tui::msg::Msg;
use cosmoscope::tui::state::feed::{FeedModeChoice, FeedRow, FeedScope, StartChoice};
use cosmoscope::tui::state::palette::{Entry, Target};
use cosmoscope::tui::state::tree::NodeKind;
use cosmoscope::tui::state::{App, Confirmed, Focus, Layer, Level, View};
use cosmoscope::tui::update::{start, update};
use serde_json::{Value, json};

// ---- building blocks ----

fn app() -> App {
    App::new("<data-dir>".into(), Arc::new(Keymap::defaults()))
}

/// Sends a key macro (see `Harness::keys`) and collects every effect it produced.
pub(super) fn keys(app: &mut App, spec: &str) -> Vec<Effect> {
    parse_keys(spec)
        .into_iter()
        .flat_map(|k| update(app, Msg::Key(k)))
        .collect()
}

fn database(db: &str) -> NodeKind {
    NodeKind::Database {
        db: db.into(),
        containers: 2,
    }
}

fn container(c: &str) -> NodeKind {
    NodeKind::Container {
        db: "shop".into(),
        c: c.into(),
        pk_paths: vec!["/pk".into()],
        throughput: "400 RU/s".into(),
        items: 3,
        bytes: 900,
    }
}

fn item(id: &str, pk: &str) -> NodeKind {
    NodeKind::Item {
        db: "shop".into(),
        c: "orders".into(),
        pk: json!(pk),
        id: id.into(),
    }
}

fn children(generation: u64, key: Option<&str>, kinds: Vec<NodeKind>) -> Msg {
    Msg::Children {
        generation,
        key: key.map(str::to_string),
        append: false,
        result: Ok((kinds, None)),
    }
}

/// Labels of the visible tree rows.
fn rows(app: &App) -> Vec<String> {
    app.tree.nodes.iter().map(|n| n.label()).collect()
}

fn selected_label(app: &App) -> Option<String> {
    app.tree.selected_node().map(|n| n.label())
}

/// An app whose tree shows database `shop` (collapsed).
fn with_roots() -> App {
    let mut a = app();
    assert_eq!(start(&mut a), [Effect::LoadDatabases { generation: 1 }]);
    assert!(update(&mut a, children(1, None, vec![database("shop")])).is_empty());
    a
}

/// An app with `shop` expanded and `orders` selected in the tree.
pub(super) fn with_container() -> App {
    let mut a = with_roots();
    keys(&mut a, "l");
    update(
        &mut a,
        children(
            1,
            Some("shop"),
            vec![container("customers"), container("orders")],
        ),
    );
    keys(&mut a, "j j");
    assert_eq!(selected_label(&a).as_deref(), Some("orders"));
    assert_eq!(a.container, Some(("shop".into(), "orders".into())));
    a
}

pub(super) fn page(docs: Vec<Value>, continuation: Option<&str>, charge: f64) -> QueryResult {
    QueryResult {
        documents: docs.into_iter().map(Document::from_value).collect(),
        continuation: continuation.map(str::to_string),
        request_charge: charge,
        routing: RoutingView {
            kind: "single-partition",
            reason: "WHERE c.pk = 'c-1'".into(),
        },
        partitions: vec![PartitionResult {
            id: "2".into(),
            min_inclusive: "20".into(),
            max_exclusive: "30".into(),
            logical_partitions: vec![json!(["c-1"])],
            request_charge: charge,
            metrics: QueryMetrics::default(),
        }],
        metrics: QueryMetrics::default(),
        access: AccessView {
            kind: "scan",
            indexes: Vec::new(),
            reason: "test page".into(),
        },
        index_metrics: Default::default(),
    }
}

pub(super) fn run_ticket(effects: &[Effect]) -> u64 {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::RunQuery { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no RunQuery in {effects:?}"))
}

fn feed_row(id: &str, lsn: u64) -> FeedRow {
    FeedRow {
        container: "orders".into(),
        crts: 1_700_000_000,
        op: "create".into(),
        range: "2".into(),
        lsn,
        pk: json!(["c-1"]),
        id: id.into(),
        size: 120,
        current: Some(json!({"id": id, "pk": "c-1"})),
        previous: None,
        ttl_expired: false,
        search: Default::default(),
    }
}

fn item_response(doc: &Value, etag: &str) -> ItemResponse {
    ItemResponse {
        status: cosmoscope::error::StatusCode::Ok,
        body: Some(serde_json::to_vec(doc).unwrap()),
        etag: Some(etag.into()),
        request_charge: 1.0,
        range: "2".into(),
        lsn: Some(7),
    }
}

/// An app showing item `o-1` (partition key `c-1`, etag `"e1"`) in the item view.
fn with_item() -> App {
    let mut a = with_container();
    keys(&mut a, "l");
    // The container's children are ranges; skip straight to an item under it.
    update(
        &mut a,
        children(1, Some("shop\u{1f}orders"), vec![item("o-1", "c-1")]),
    );
    keys(&mut a, "j");
    let effects = keys(&mut a, "<enter>");
    let ticket = a
        .item_loading
        .as_ref()
        .expect("an item read is awaited")
        .ticket;
    assert_eq!(
        effects,
        [Effect::ReadItem {
            ticket,
            db: "shop".into(),
            c: "orders".into(),
            id: "o-1".into(),
            pk: json!("c-1"),
        }]
    );
    let doc = json!({"id": "o-1", "pk": "c-1", "n": 1, "_rid": "r", "_etag": "\"e1\"", "_ts": 5});
    assert!(
        update(
            &mut a,
            Msg::Item {
                ticket,
                result: Ok(item_response(&doc, "\"e1\""))
            }
        )
        .is_empty()
    );
    keys(&mut a, "<tab>");
    assert_eq!((a.view, a.focus), (View::Item, Focus::View));
    a
}

// ---- the resource tree ----

#[test]
fn expanding_a_node_asks_for_its_children_and_shows_them_when_they_arrive() {
    let mut a = with_roots();
    assert_eq!(rows(&a), ["shop"]);
    let effects = keys(&mut a, "l");
    assert_eq!(
        effects,
        [Effect::LoadChildren {
            generation: 1,
            key: "shop".into(),
            node: database("shop"),
            cursor: None,
        }]
    );
    assert_eq!(
        rows(&a),
        ["shop", "loading…"],
        "a placeholder while it loads"
    );
    assert!(a.tree.nodes[0].expanded);

    update(
        &mut a,
        children(
            1,
            Some("shop"),
            vec![container("customers"), container("orders")],
        ),
    );
    assert_eq!(rows(&a), ["shop", "customers", "orders"]);
    assert_eq!(selected_label(&a).as_deref(), Some("shop"));

    // Enter on an open node closes it, with nothing to load.
    assert!(keys(&mut a, "<enter>").is_empty());
    assert_eq!(rows(&a), ["shop"]);
}

#[test]
fn children_of_an_older_generation_are_dropped() {
    let mut a = with_roots();
    // Refresh: a new generation reloads the roots.
    assert_eq!(keys(&mut a, "r"), [Effect::LoadDatabases { generation: 2 }]);
    update(&mut a, children(1, None, vec![database("stale")]));
    assert_eq!(rows(&a), ["shop"], "a load asked for generation 1 is stale");
    update(
        &mut a,
        children(2, None, vec![database("shop"), database("new")]),
    );
    assert_eq!(rows(&a), ["shop", "new"]);
}

#[test]
fn a_paged_level_loads_its_next_page_from_the_more_row() {
    let mut a = with_roots();
    keys(&mut a, "l");
    update(
        &mut a,
        Msg::Children {
            generation: 1,
            key: Some("shop".into()),
            append: false,
            result: Ok((vec![container("a"), container("b")], Some("200".into()))),
        },
    );
    assert_eq!(rows(&a), ["shop", "a", "b", "… more"]);
    let effects = keys(&mut a, "G <enter>");
    assert_eq!(
        effects,
        [Effect::LoadChildren {
            generation: 1,
            key: "shop".into(),
            node: database("shop"),
            cursor: Some("200".into()),
        }]
    );
    update(
        &mut a,
        Msg::Children {
            generation: 1,
            key: Some("shop".into()),
            append: true,
            result: Ok((vec![container("c")], None)),
        },
    );
    assert_eq!(
        rows(&a),
        ["shop", "a", "b", "c"],
        "the more row is replaced"
    );
}

#[test]
fn a_failed_level_says_why_in_the_tree() {
    let mut a = with_roots();
    keys(&mut a, "l");
    update(
        &mut a,
        Msg::Children {
            generation: 1,
            key: Some("shop".into()),
            append: false,
            result: Err(Error::internal("disk on fire")),
        },
    );
    assert_eq!(rows(&a), ["shop", "failed to load: disk on fire"]);
}

// ---- the query console ----

#[test]
fn a_query_page_for_an_old_ticket_is_dropped() {
    let mut a = with_container();
    // The console samples its container for completion.
    let sample = Effect::LoadSchema {
        db: "shop".into(),
        c: "orders".into(),
    };
    assert_eq!(keys(&mut a, "<c-n>"), std::slice::from_ref(&sample));
    assert_eq!((a.view, a.focus), (View::Query, Focus::Editor));
    // While it is coming, asking again asks for nothing.
    assert!(keys(&mut a, "<c-space>").is_empty());
    update(
        &mut a,
        Msg::Schema {
            db: "shop".into(),
            c: "orders".into(),
            result: Ok(Default::default()),
        },
    );
    assert!(a.query.schema.is_some());
    assert_eq!(a.query.editor.text(), "SELECT * FROM c");

    let first = keys(&mut a, "<f5>");
    let t1 = run_ticket(&first);
    assert_eq!(
        first,
        [
            Effect::LoadRanges {
                ticket: t1,
                db: "shop".into(),
                c: "orders".into(),
            },
            Effect::RunQuery {
                ticket: t1,
                db: "shop".into(),
                c: "orders".into(),
                sql: "SELECT * FROM c".into(),
                params: BTreeMap::new(),
                continuation: None,
            },
            Effect::SaveHistory {
                entries: vec![cosmoscope::tui::state::history::HistoryEntry {
                    container: Some("shop/orders".into()),
                    sql: "SELECT * FROM c".into(),
                    params: BTreeMap::new(),
                }]
            },
            // A fresh sample: the data may have changed since.
            sample,
        ]
    );
    // Running again cancels the first run.
    let second = keys(&mut a, "<f5>");
    let t2 = run_ticket(&second);
    assert_ne!(t1, t2);
    assert_eq!(second[0], Effect::CancelQuery { ticket: t1 });

    let late = update(
        &mut a,
        Msg::QueryPage {
            ticket: t1,
            result: Ok(page(vec![json!({"id": "late"})], None, 9.0)),
            elapsed_ms: 1.0,
        },
    );
    assert!(late.is_empty());
    let run = a.query.run.as_ref().expect("a run");
    assert!(
        run.documents.is_empty(),
        "the cancelled run's page is dropped"
    );
    assert_eq!(a.query.running, Some(t2));
    assert_eq!(a.last_charge, None);

    update(
        &mut a,
        Msg::QueryPage {
            ticket: t2,
            result: Ok(page(
                vec![json!({"id": "o-1"}), json!({"id": "o-2"})],
                Some("token"),
                2.5,
            )),
            elapsed_ms: 1.0,
        },
    );
    let run = a.query.run.as_ref().expect("a run");
    assert_eq!(run.documents.len(), 2);
    assert_eq!(run.request_charge, 2.5);
    assert_eq!(
        run.routing.as_ref().map(|r| r.0.as_str()),
        Some("single-partition")
    );
    assert_eq!(run.logical_partitions(), [json!(["c-1"])]);
    assert_eq!(a.query.running, None);
    assert_eq!(a.last_charge, Some(2.5));

    // A page with a continuation loads more when scrolling off the end of the results.
    keys(&mut a, "<tab>");
    assert_eq!(a.mode(), Mode::Results);
    let more = keys(&mut a, "j");
    assert_eq!(
        more,
        [Effect::RunQuery {
            ticket: a.query.running.expect("loading more"),
            db: "shop".into(),
            c: "orders".into(),
            sql: "SELECT * FROM c".into(),
            params: BTreeMap::new(),
            continuation: Some("token".into()),
        }]
    );
}

#[test]
fn the_result_view_lets_the_oldest_rows_go_as_pages_keep_coming() {
    use cosmoscope::tui::state::query::{HELD_BYTES, HELD_ROWS};
    let mut a = with_container();
    keys(&mut a, "<c-n>");
    a.query.editor.set_text("SELECT * FROM c");
    let mut ticket = run_ticket(&keys(&mut a, "<f5>"));
    // Pages of 1,000 rows of about 2 KB: the byte bound is met before the row bound.
    let filler = "x".repeat(2000);
    let pages = 2 * HELD_BYTES / (1000 * 2000) + 2;
    let mut sent = 0;
    for n in 0..pages {
        let docs = (0..1000)
            .map(|i| json!({"id": format!("o-{}", sent + i), "pad": filler}))
            .collect();
        sent += 1000;
        let before = a.query.selected_document().map(|d| d["id"].clone());
        update(
            &mut a,
            Msg::QueryPage {
                ticket,
                result: Ok(page(docs, Some("more"), 1.0)),
                elapsed_ms: 1.0,
            },
        );
        if n == 0 {
            keys(&mut a, "<tab>");
            // Select row 3 of the first page: it is let go later.
            keys(&mut a, "j j j");
            assert_eq!(
                a.query.selected_document().map(|d| d["id"].clone()),
                Some(json!("o-3"))
            );
        }
        if n > 0 {
            // The row the person was on stays selected while older rows go.
            let after = a.query.selected_document().map(|d| d["id"].clone());
            assert_eq!(after, before, "after page {n}");
        }
        let run = a.query.run.as_ref().expect("a run");
        assert!(run.documents.len() <= HELD_ROWS);
        assert_eq!(run.received(), sent);
        // Scrolling to the end asks for the next page, as a person holding j would.
        let more = keys(&mut a, "<end> j");
        ticket = run_ticket(&more);
    }
    let run = a.query.run.as_ref().expect("a run");
    let held: usize = run.documents.iter().map(|d| d.to_string().len()).sum();
    assert!(held <= HELD_BYTES, "{held} bytes held");
    assert!(run.dropped > 0, "rows were let go");
    assert_eq!(run.documents[0]["id"], json!(format!("o-{}", run.dropped)));
    assert_eq!(run.dropped + run.documents.len(), sent);
    // The stats panel counts every row received; the title says which rows are held.
    let frame = crate::support::tui_store::draw_app(&a, 120, 40);
    assert!(frame.contains(&format!("{sent} docs")), "{frame}");
    assert!(
        frame.contains(&format!("rows {}–{}", run.dropped + 1, sent)),
        "{frame}"
    );
}

#[test]
fn a_query_error_is_shown_with_its_position_and_the_cursor_goes_there() {
    let mut a = with_container();
    keys(&mut a, "<c-n>");
    a.query.editor.set_text("SELECT *\nFROM c WHERE");
    let t = run_ticket(&keys(&mut a, "<f5>"));
    update(
        &mut a,
        Msg::QueryPage {
            ticket: t,
            result: Err(Error::bad_request("expected an expression")
                .at(2, 13)
                .with_charge(1.0)),
            elapsed_ms: 0.5,
        },
    );
    let err = a.query.error.as_ref().expect("an error");
    assert_eq!(
        (err.status.as_u16(), err.line, err.column),
        (400, Some(2), Some(13))
    );
    assert_eq!((a.query.editor.row, a.query.editor.col), (1, 12));
    assert_eq!(a.last_charge, Some(1.0));
    assert_eq!(
        a.query.run.as_ref().map(|r| r.request_charge),
        Some(1.0),
        "the stats panel counts what the failed request charged"
    );
    assert_eq!(a.query.running, None);
}

#[test]
fn missing_parameters_open_the_form_instead_of_running() {
    let mut a = with_container();
    keys(&mut a, "<c-n>");
    a.query
        .editor
        .set_text("SELECT * FROM c WHERE c.pk = @pk AND c.n > @n");
    assert!(keys(&mut a, "<f5>").is_empty(), "nothing runs");
    match a.layers.last() {
        Some(Layer::Params { fields, selected }) => {
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["pk", "n"]);
            assert_eq!(*selected, 0);
        }
        other => panic!("expected the parameters form, got {other:?}"),
    }
    assert!(matches!(&a.message, Some((Level::Error, m)) if m.contains("@pk")));

    // A value that is not JSON is refused and the form comes back.
    a.query.params.clear();
    keys(&mut a, "c - 1 <down> 2 <enter>");
    assert!(a.query.running.is_none());
    assert!(matches!(&a.message, Some((Level::Error, m)) if m.contains("not JSON")));
    assert!(matches!(a.layers.last(), Some(Layer::Params { .. })));

    // Fix the first field: clear it and type a JSON string.
    keys(&mut a, "<bs> <bs> <bs>");
    let effects = keys(&mut a, "\" c - 1 \" <enter>");
    let t = run_ticket(&effects);
    let expected: BTreeMap<String, Value> = [
        ("n".to_string(), json!(2)),
        ("pk".to_string(), json!("c-1")),
    ]
    .into();
    assert!(matches!(&effects[0], Effect::LoadRanges { ticket, .. } if *ticket == t));
    match &effects[1] {
        Effect::RunQuery { ticket, params, .. } => {
            assert_eq!(*ticket, t);
            assert_eq!(*params, expected);
        }
        other => panic!("expected RunQuery after the ranges, got {other:?}"),
    }
    assert!(a.layers.is_empty());
}

#[test]
fn quit_unsubscribes_the_feed_and_cancels_the_running_query() {
    let mut a = with_container();
    let sub = keys(&mut a, "3");
    let tf = match sub.as_slice() {
        [
            Effect::Subscribe {
                ticket,
                scope,
                mode,
                start,
            },
        ] => {
            assert_eq!(
                *scope,
                FeedScope::Container {
                    db: "shop".into(),
                    c: "orders".into()
                }
            );
            assert_eq!((*mode, start), (FeedModeChoice::Latest, &StartChoice::Now));
            *ticket
        }
        other => panic!("expected one Subscribe, got {other:?}"),
    };
    keys(&mut a, "<c-n>");
    let tq = run_ticket(&keys(&mut a, "<f5>"));
    // `q` is typed in the editor; ctrl-c quits from anywhere.
    assert!(keys(&mut a, "q").is_empty());
    assert!(!a.quit);
    let effects = keys(&mut a, "<c-c>");
    assert!(a.quit);
    assert_eq!(
        effects,
        [
            Effect::Unsubscribe { ticket: tf },
            Effect::CancelQuery { ticket: tq }
        ]
    );
}

// ---- the change feed ----

#[test]
fn a_paused_feed_keeps_buffering_and_shows_everything_on_resume() {
    let mut a = with_container();
    let tf = match keys(&mut a, "3").as_slice() {
        [Effect::Subscribe { ticket, .. }] => *ticket,
        other => panic!("expected Subscribe, got {other:?}"),
    };
    let batch = |ticket, rows| Msg::FeedBatch {
        ticket,
        rows,
        request_charge: 1.0,
    };
    update(&mut a, batch(tf, vec![feed_row("a", 1), feed_row("b", 2)]));
    assert_eq!(a.feed.tail.visible().len(), 2);

    assert!(keys(&mut a, "p").is_empty());
    assert!(a.feed.tail.paused);
    update(
        &mut a,
        batch(
            tf,
            vec![feed_row("c", 3), feed_row("d", 4), feed_row("e", 5)],
        ),
    );
    assert_eq!(
        a.feed.tail.rows.len(),
        5,
        "events keep arriving while paused"
    );
    assert_eq!(a.feed.tail.visible().len(), 2, "the view is frozen");
    assert_eq!(a.feed.tail.received, 5);

    // A batch from an older subscription is not ours.
    update(&mut a, batch(tf + 100, vec![feed_row("x", 9)]));
    assert_eq!(a.feed.tail.rows.len(), 5);

    keys(&mut a, "<space>");
    assert!(!a.feed.tail.paused);
    assert_eq!(a.feed.tail.visible().len(), 5);
    assert_eq!(a.feed.request_charge, 2.0);

    // Switching the mode restarts the subscription in the other mode.
    let effects = keys(&mut a, "m");
    match effects.as_slice() {
        [
            Effect::Unsubscribe { ticket },
            Effect::Subscribe {
                ticket: new, mode, ..
            },
        ] => {
            assert_eq!(*ticket, tf);
            assert_ne!(*new, tf);
            assert_eq!(*mode, FeedModeChoice::AllVersions);
        }
        other => panic!("expected Unsubscribe + Subscribe, got {other:?}"),
    }
    assert!(
        a.feed.tail.rows.is_empty(),
        "a new subscription starts empty"
    );
}

#[test]
fn a_feed_error_ends_only_the_current_subscription() {
    let mut a = with_container();
    let tf = match keys(&mut a, "3").as_slice() {
        [Effect::Subscribe { ticket, .. }] => *ticket,
        other => panic!("expected Subscribe, got {other:?}"),
    };
    update(
        &mut a,
        Msg::FeedError {
            ticket: tf + 1,
            error: Error::not_found("old"),
        },
    );
    assert_eq!(a.feed.subscription, Some(tf));
    update(
        &mut a,
        Msg::FeedError {
            ticket: tf,
            error: Error::not_found("container gone"),
        },
    );
    assert_eq!(a.feed.subscription, None);
    assert_eq!(a.feed.error.as_deref(), Some("container gone"));
}

// ---- the palette ----

fn settle(a: &mut App) {
    for _ in 0..500 {
        a.palette.tick(10);
        if !a.palette.running {
            return;
        }
    }
    panic!("the palette matcher never settled");
}

fn open_palette(a: &mut App) -> u64 {
    let effects = keys(a, "<c-p>");
    let ticket = match effects.as_slice() {
        [Effect::StreamPalette { ticket }] => *ticket,
        other => panic!("expected StreamPalette, got {other:?}"),
    };
    assert!(matches!(a.layers.last(), Some(Layer::Palette)));
    assert_eq!(a.mode(), Mode::Palette);
    // What the stream would bring from the store.
    let mut injector = a.palette.injector();
    for e in [
        Entry {
            text: "container shop/orders".into(),
            kind: "container",
            target: Target::Container {
                db: "shop".into(),
                c: "orders".into(),
            },
        },
        Entry {
            text: "o-1 · shop/orders".into(),
            kind: "item",
            target: Target::Item {
                db: "shop".into(),
                c: "orders".into(),
                pk: json!("c-1"),
                id: "o-1".into(),
            },
        },
    ] {
        e.push_into(&mut injector);
    }
    drop(injector);
    settle(a);
    ticket
}

#[test]
fn choosing_an_item_in_the_palette_reads_it() {
    let mut a = with_roots();
    let tp = open_palette(&mut a);
    // Actions are listed too.
    assert!(a.palette.total as usize > 2);
    keys(&mut a, "o - 1");
    settle(&mut a);
    assert_eq!(
        a.palette.selected_entry().map(|e| e.text.as_str()),
        Some("o-1 · shop/orders")
    );
    let effects = keys(&mut a, "<enter>");
    let ticket = a
        .item_loading
        .as_ref()
        .expect("an item read is awaited")
        .ticket;
    assert_eq!(
        effects,
        [
            Effect::StopPalette { ticket: tp },
            Effect::ReadItem {
                ticket,
                db: "shop".into(),
                c: "orders".into(),
                id: "o-1".into(),
                pk: json!("c-1"),
            },
        ]
    );
    assert!(a.layers.is_empty());
    assert_eq!((a.view, a.focus), (View::Item, Focus::View));
}

#[test]
fn choosing_a_container_in_the_palette_jumps_to_it_through_a_collapsed_database() {
    let mut a = with_roots();
    let tp = open_palette(&mut a);
    keys(&mut a, "c o n t a i n e r <space> s h o p");
    settle(&mut a);
    assert_eq!(
        a.palette.selected_entry().map(|e| e.text.as_str()),
        Some("container shop/orders"),
        "the best match comes first"
    );
    let effects = keys(&mut a, "<enter>");
    assert_eq!(
        effects,
        [
            Effect::StopPalette { ticket: tp },
            Effect::LoadChildren {
                generation: 1,
                key: "shop".into(),
                node: database("shop"),
                cursor: None,
            },
        ]
    );
    assert_eq!(a.focus, Focus::Tree);
    update(
        &mut a,
        children(
            1,
            Some("shop"),
            vec![container("customers"), container("orders")],
        ),
    );
    assert_eq!(
        selected_label(&a).as_deref(),
        Some("orders"),
        "the selection lands on the container once its level arrives"
    );
    assert_eq!(a.container, Some(("shop".into(), "orders".into())));
}

#[test]
fn esc_closes_the_palette_and_stops_its_stream() {
    let mut a = with_roots();
    let tp = open_palette(&mut a);
    assert_eq!(keys(&mut a, "<esc>"), [Effect::StopPalette { ticket: tp }]);
    assert!(a.layers.is_empty());
    // Once the stream is done there is nothing to stop.
    let tp = open_palette(&mut a);
    update(&mut a, Msg::PaletteDone { ticket: tp });
    assert!(keys(&mut a, "<esc>").is_empty());
}

// ---- the item view: edit, save, delete ----

#[test]
fn an_item_read_for_an_old_ticket_is_dropped() {
    let mut a = with_item();
    let before = a.item.as_ref().map(|i| i.tree.doc.clone());
    let stale = a.item_loading.as_ref().map_or(0, |r| r.ticket) + 100;
    update(
        &mut a,
        Msg::Item {
            ticket: stale,
            result: Ok(item_response(&json!({"id": "other", "pk": "x"}), "\"e9\"")),
        },
    );
    assert_eq!(a.item.as_ref().map(|i| i.tree.doc.clone()), before);
}

#[test]
fn edit_hands_the_item_without_system_properties_to_the_editor_with_its_etag() {
    let mut a = with_item();
    let item = a.item.as_ref().expect("an item");
    assert_eq!((item.id.as_str(), &item.pk), ("o-1", &json!("c-1")));
    let effects = keys(&mut a, "e");
    match effects.as_slice() {
        [
            Effect::Edit {
                db,
                c,
                text,
                original: None,
                if_match,
                create,
            },
        ] => {
            assert_eq!((db.as_str(), c.as_str()), ("shop", "orders"));
            let sent: Value = serde_json::from_str(text).expect("JSON");
            assert_eq!(sent, json!({"id": "o-1", "pk": "c-1", "n": 1}));
            assert_eq!(if_match.as_deref(), Some("\"e1\""));
            assert!(!create);
        }
        other => panic!("expected one Edit, got {other:?}"),
    }
}

fn edited(original: &str, result: Result<&str, &str>) -> Msg {
    Msg::Edited {
        db: "shop".into(),
        c: "orders".into(),
        original: original.into(),
        result: result.map(str::to_string).map_err(str::to_string),
        if_match: Some("\"e1\"".into()),
        create: false,
    }
}

#[test]
fn an_edit_is_confirmed_with_its_diff_then_saved_with_if_match() {
    let mut a = with_item();
    let original = r#"{"id": "o-1", "pk": "c-1", "n": 1}"#;
    let changed = r#"{"id": "o-1", "pk": "c-1", "n": 2, "note": "x"}"#;

    // Unchanged text, an editor failure and invalid JSON never reach the store.
    assert!(update(&mut a, edited(original, Ok(original))).is_empty());
    assert!(matches!(&a.message, Some((Level::Info, m)) if m == "no changes"));
    assert!(update(&mut a, edited(original, Err("vi exited with 1"))).is_empty());
    assert!(matches!(&a.message, Some((Level::Error, m)) if m.contains("vi exited")));
    assert!(update(&mut a, edited(original, Ok("{\"id\": "))).is_empty());
    assert!(matches!(&a.message, Some((Level::Error, m)) if m.contains("not JSON")));
    // The broken text is offered back in the editor, still compared with the original.
    assert!(
        matches!(a.layers.last(), Some(Layer::Confirm { text, .. }) if text.contains("Reopen the editor with your text?"))
    );
    assert_eq!(
        keys(&mut a, "y"),
        [Effect::Edit {
            db: "shop".into(),
            c: "orders".into(),
            text: "{\"id\": ".into(),
            original: Some(original.into()),
            if_match: Some("\"e1\"".into()),
            create: false,
        }]
    );
    assert!(a.layers.is_empty());

    // A real change asks first, showing what changed; `n` keeps the store as it is.
    assert!(update(&mut a, edited(original, Ok(changed))).is_empty());
    match a.layers.last() {
        Some(Layer::Confirm { text, on_yes }) => {
            assert!(text.contains("~ n: 1 → 2"), "{text}");
            assert!(text.contains("+ note: \"x\""), "{text}");
            assert_eq!(
                *on_yes,
                Confirmed::SaveItem {
                    db: "shop".into(),
                    c: "orders".into(),
                    body: changed.into(),
                    if_match: Some("\"e1\"".into()),
                    create: false,
                }
            );
        }
        other => panic!("expected a confirmation, got {other:?}"),
    }
    assert!(keys(&mut a, "n").is_empty());
    assert!(a.layers.is_empty());

    // `y` saves, guarded by the etag that was read.
    update(&mut a, edited(original, Ok(changed)));
    let effects = keys(&mut a, "y");
    match effects.as_slice() {
        [
            Effect::SaveItem {
                body,
                if_match,
                create,
                ..
            },
        ] => {
            assert_eq!(body, changed);
            assert_eq!(if_match.as_deref(), Some("\"e1\""));
            assert!(!create);
        }
        other => panic!("expected one SaveItem, got {other:?}"),
    }

    // Someone else changed it meanwhile: reported, and the stored version read to show
    // beside the edit; the tree is not reloaded.
    let effects = update(
        &mut a,
        Msg::Saved {
            ticket: 0,
            result: Err(Error::precondition_failed("etag mismatch").with_charge(1.0)),
            db: "shop".into(),
            c: "orders".into(),
            pk_paths: vec!["/pk".into()],
            body: changed.to_string(),
        },
    );
    assert!(
        matches!(effects.as_slice(), [Effect::ReadItem { .. }]),
        "{effects:?}"
    );
    assert!(
        matches!(&a.message, Some((Level::Error, m)) if m.contains("412") && m.contains("someone changed")),
        "{:?}",
        a.message
    );
    assert_eq!(
        a.item.as_ref().map(|i| i.tree.doc["n"].clone()),
        Some(json!(1))
    );
}

#[test]
fn delete_asks_first_and_sends_the_etag() {
    let mut a = with_item();
    assert!(
        keys(&mut a, "d").is_empty(),
        "nothing is deleted before yes"
    );
    assert!(matches!(a.layers.last(), Some(Layer::Confirm { text, .. }) if text.contains("o-1")));
    let effects = keys(&mut a, "y");
    match effects.as_slice() {
        [
            Effect::DeleteItem {
                db,
                c,
                id,
                pk,
                if_match,
                ..
            },
        ] => {
            assert_eq!(
                (db.as_str(), c.as_str(), id.as_str()),
                ("shop", "orders", "o-1")
            );
            assert_eq!(pk, &json!("c-1"));
            assert_eq!(if_match.as_deref(), Some("\"e1\""));
        }
        other => panic!("expected one DeleteItem, got {other:?}"),
    }
    let generation = a.tree.generation;
    let effects = update(
        &mut a,
        Msg::Deleted {
            ticket: 0,
            result: Ok(ItemResponse {
                status: cosmoscope::error::StatusCode::NoContent,
                body: None,
                etag: None,
                request_charge: 5.0,
                range: "2".into(),
                lsn: None,
            }),
            id: "o-1".into(),
        },
    );
    assert!(a.item.is_none());
    assert_eq!(a.last_charge, Some(5.0));
    assert_eq!(
        effects.first(),
        Some(&Effect::LoadDatabases {
            generation: generation + 1
        }),
        "the tree reloads after a delete"
    );
}

// ---- partitions ----

#[test]
fn the_partitions_view_refreshes_once_a_second_when_idle() {
    let mut a = with_container();
    let t = match keys(&mut a, "4").as_slice() {
        [Effect::LoadPartitions { ticket, db, c }] => {
            assert_eq!((db.as_str(), c.as_str()), ("shop", "orders"));
            *ticket
        }
        other => panic!("expected LoadPartitions, got {other:?}"),
    };
    // A load is in flight: ticks do not pile up more (the first asks whether the tree
    // is out of date, once until answered).
    assert_eq!(
        update(&mut a, Msg::Tick { now: 100 }),
        [Effect::ProbeTree {
            generation: 1,
            scripts: Vec::new()
        }]
    );
    update(
        &mut a,
        Msg::Partitions {
            ticket: t,
            result: Err(Error::not_found("gone")),
        },
    );
    assert!(matches!(&a.message, Some((Level::Error, m)) if m.contains("gone")));
    assert!(
        update(&mut a, Msg::Tick { now: 100 }).is_empty(),
        "same second"
    );
    let effects = update(&mut a, Msg::Tick { now: 101 });
    assert!(matches!(
        effects.as_slice(),
        [Effect::LoadPartitions { .. }]
    ));
}

#[test]
fn the_workbench_runs_its_suite_as_a_cancellable_job() {
    let mut a = with_container();
    keys(&mut a, "5");
    assert_eq!((a.view, a.focus), (View::Workbench, Focus::View));
    keys(&mut a, "s");
    assert_eq!(a.workbench.suite, "webstore");
    keys(&mut a, "s");
    assert_eq!(a.workbench.suite, "blog");
    let effects = keys(&mut a, "r");
    let ticket = a.job.as_ref().expect("a job runs").ticket;
    assert_eq!(
        effects,
        [Effect::StartJob {
            ticket,
            job: JobKind::Workbench {
                suite: "blog".into()
            }
        }]
    );
    // A second run waits for the first.
    assert!(keys(&mut a, "r").is_empty());
    assert_eq!(
        keys(&mut a, "<c-x>"),
        [Effect::CancelJob { ticket }],
        "ctrl-x cancels the job when no query runs"
    );
    assert!(a.job.is_none());
}

#[test]
fn logical_partitions_accumulate_over_pages_once_each() {
    // Two pages over two ranges naming 20,000 keys, half of them again on the second page.
    let keys_of =
        |r: std::ops::Range<u32>| -> Vec<Value> { r.map(|k| json!(format!("c-{k}"))).collect() };
    let two_ranges = |first: Vec<Value>, second: Vec<Value>| {
        let mut p = page(Vec::new(), Some("t"), 1.0);
        let mut other = p.partitions[0].clone();
        p.partitions[0].logical_partitions = first;
        other.id = "3".into();
        other.logical_partitions = second;
        p.partitions.push(other);
        p
    };
    let mut run = cosmoscope::tui::state::query::QueryRun::default();
    run.add_page(two_ranges(keys_of(0..10_000), keys_of(10_000..15_000)), 1.0);
    run.add_page(
        two_ranges(keys_of(5_000..10_000), keys_of(12_000..20_000)),
        1.0,
    );
    let all = run.logical_partitions();
    assert_eq!(all.len(), 20_000);
    assert_eq!(all[..3], keys_of(0..3)[..]);
    assert_eq!(all[10_000], json!("c-10000"));
    assert_eq!(all[19_999], json!("c-19999"));
    assert_eq!(run.partitions["2"].logical_partitions.len(), 10_000);
    assert_eq!(
        run.partitions["3"].logical_partitions,
        keys_of(10_000..20_000)
    );
}

// ---- the gateway and the Requests view ----

fn gateway_info() -> cosmoscope::tui::state::requests::GatewayInfo {
    cosmoscope::tui::state::requests::GatewayInfo {
        endpoint: "http://127.0.0.1:8081/".into(),
        addr: "127.0.0.1:8081".parse().unwrap(),
        custom_key: false,
        certificate: None,
    }
}

fn exchange(seq: u64, operation: &'static str, status: u16) -> Arc<cosmoscope::gateway::Exchange> {
    use cosmoscope::error::StatusCode;
    Arc::new(cosmoscope::gateway::Exchange {
        seq,
        at_ms: 1_700_000_000_000,
        client: "127.0.0.1:50000".parse().unwrap(),
        operation,
        method: "POST".into(),
        path: "/dbs/shop/colls/orders/docs".into(),
        status: match status {
            201 => StatusCode::Created,
            404 => StatusCode::NotFound,
            _ => StatusCode::Ok,
        },
        substatus: 0,
        request_charge: 1.0,
        ranges: vec!["0".into()],
        item_count: None,
        latency: std::time::Duration::from_millis(1),
        request_headers: Vec::new(),
        request_body: String::new(),
        query: None,
    })
}

/// An app whose gateway serves (started through its effect and message).
fn serving() -> App {
    let mut a = with_container();
    let ticket = match keys(&mut a, "6 s").as_slice() {
        [Effect::StartGateway { ticket, addr }] => {
            assert_eq!(addr.to_string(), "127.0.0.1:8081");
            *ticket
        }
        other => panic!("expected StartGateway, got {other:?}"),
    };
    update(
        &mut a,
        Msg::GatewayStarted {
            ticket,
            result: Ok(gateway_info()),
        },
    );
    assert!(a.gateway.serving().is_some());
    a
}

#[test]
fn serve_at_launch_starts_the_gateway_with_the_tree() {
    let mut a = app();
    a.gateway.addr = "127.0.0.1:9000".parse().unwrap();
    a.gateway.at_launch = true;
    let effects = start(&mut a);
    assert!(matches!(effects[0], Effect::LoadDatabases { .. }));
    assert!(
        matches!(effects.last(), Some(Effect::StartGateway { addr, .. }) if addr.port() == 9000),
        "{effects:?}"
    );
    // Pressing the key while it starts does not start a second one.
    keys(&mut a, "6");
    assert!(keys(&mut a, "s").is_empty());
    assert_eq!(
        a.message.as_ref().map(|m| m.1.as_str()),
        Some("the gateway is starting…")
    );
}

#[test]
fn a_gateway_that_cannot_start_says_why_and_is_off() {
    use cosmoscope::tui::state::requests::GatewayStatus;
    let mut a = with_container();
    let ticket = match keys(&mut a, "6 s").as_slice() {
        [Effect::StartGateway { ticket, .. }] => *ticket,
        other => panic!("expected StartGateway, got {other:?}"),
    };
    // An answer to another start is not this one's.
    update(
        &mut a,
        Msg::GatewayStarted {
            ticket: ticket + 100,
            result: Ok(gateway_info()),
        },
    );
    assert_eq!(a.gateway.status, GatewayStatus::Starting { ticket });
    update(
        &mut a,
        Msg::GatewayStarted {
            ticket,
            result: Err(Error::bad_request(
                "cannot listen on 127.0.0.1:8081: Address in use",
            )),
        },
    );
    assert_eq!(a.gateway.status, GatewayStatus::Off);
    assert_eq!(
        a.message,
        Some((
            Level::Error,
            "gateway not started: cannot listen on 127.0.0.1:8081: Address in use".into()
        ))
    );
}

#[test]
fn requests_follow_pause_filter_and_stop() {
    use cosmoscope::tui::state::requests::GatewayStatus;
    let mut a = serving();
    let traffic = |a: &mut App, rows| {
        update(
            a,
            Msg::Traffic {
                exchanges: rows,
                rate: 2.0,
            },
        )
    };
    traffic(
        &mut a,
        vec![exchange(1, "Create", 201), exchange(2, "Read", 404)],
    );
    assert_eq!(a.requests.tail.selected_row().map(|e| e.seq), Some(2));
    assert_eq!(a.gateway.rate, 2.0);
    // Moving up stops following; new requests do not move the selection.
    keys(&mut a, "k");
    traffic(&mut a, vec![exchange(3, "Read", 200)]);
    assert_eq!(a.requests.tail.selected_row().map(|e| e.seq), Some(1));
    // Paused: requests keep arriving but the view is frozen.
    keys(&mut a, "G p");
    traffic(&mut a, vec![exchange(4, "Read", 200)]);
    assert_eq!(a.requests.tail.visible().len(), 3);
    assert_eq!(a.requests.tail.rows.len(), 4);
    keys(&mut a, "<space>");
    assert_eq!(a.requests.tail.visible().len(), 4);
    assert_eq!(a.requests.tail.selected_row().map(|e| e.seq), Some(4));
    // The filter applies as it is typed.
    keys(&mut a, "/");
    for key in parse_keys("status:4xx") {
        update(&mut a, Msg::Key(key));
    }
    assert_eq!(a.requests.tail.visible().len(), 1);
    keys(&mut a, "<esc>");
    assert_eq!(a.requests.tail.visible().len(), 4);
    // Stopping: an effect, then off once it stopped; traffic after that is ignored.
    let ticket = match keys(&mut a, "s").as_slice() {
        [Effect::StopGateway { ticket }] => *ticket,
        other => panic!("expected StopGateway, got {other:?}"),
    };
    update(&mut a, Msg::GatewayStopped { ticket });
    assert_eq!(a.gateway.status, GatewayStatus::Off);
    traffic(&mut a, vec![exchange(5, "Read", 200)]);
    assert_eq!(a.requests.tail.rows.len(), 4);
}

#[test]
fn databases_and_containers_an_application_changes_reload_the_tree() {
    let mut a = serving();
    let effects = update(
        &mut a,
        Msg::Traffic {
            exchanges: vec![exchange(1, "CreateDatabase", 201)],
            rate: 1.0,
        },
    );
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::LoadDatabases { .. })),
        "{effects:?}"
    );
    // A failed one changed nothing.
    let effects = update(
        &mut a,
        Msg::Traffic {
            exchanges: vec![exchange(2, "CreateContainer", 404)],
            rate: 1.0,
        },
    );
    assert!(effects.is_empty(), "{effects:?}");
}

#[test]
fn item_writes_reload_the_tree_at_most_every_few_seconds_and_after_the_last() {
    let mut a = serving();
    let reloads = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::LoadDatabases { .. }))
            .count()
    };
    update(&mut a, Msg::Tick { now: 100 });
    let write = |seq| Msg::Traffic {
        exchanges: vec![exchange(seq, "Create", 201)],
        rate: 1.0,
    };
    assert_eq!(reloads(&update(&mut a, write(1))), 1);
    assert_eq!(reloads(&update(&mut a, Msg::Tick { now: 101 })), 0);
    assert_eq!(reloads(&update(&mut a, write(2))), 0, "too soon");
    // The write that came too soon shows once a reload is due, without another write.
    assert_eq!(reloads(&update(&mut a, Msg::Tick { now: 105 })), 1);
    assert_eq!(
        reloads(&update(&mut a, Msg::Tick { now: 111 })),
        0,
        "nothing new"
    );
    // Reads reload nothing, and neither do writes while the tree has focus.
    assert_eq!(
        reloads(&update(
            &mut a,
            Msg::Traffic {
                exchanges: vec![exchange(3, "Read", 200)],
                rate: 1.0,
            }
        )),
        0
    );
    keys(&mut a, "<esc>");
    assert_eq!(a.focus, Focus::Tree);
    assert_eq!(reloads(&update(&mut a, write(4))), 0);
    assert_eq!(reloads(&update(&mut a, Msg::Tick { now: 120 })), 0);
}
