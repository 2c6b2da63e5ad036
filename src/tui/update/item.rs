//! The item view's reactions: showing an item, editing it in `$EDITOR` with a confirmed,
//! If-Match-guarded save, creating and deleting.

use serde_json::{Map, Value};

use super::request::{Reaction, Request};
use crate::engine::ItemResponse;
use crate::error::{Error, StatusCode};
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::document::{item_diff, pk_of, without_system};
use crate::tui::state::json_tree::JsonTree;
use crate::tui::state::list::move_selection;
use crate::tui::state::tree::NodeKind;
use crate::tui::state::{
    App, Confirmed, Conflict, ConflictRequest, Focus, ItemRequest, ItemView, Layer, View,
};

/// Asks for an item to show in the item view.
pub fn read(app: &mut App, db: String, c: String, id: String, pk: Value) -> Vec<Effect> {
    let ticket = app.ticket();
    app.item_loading = Some(ItemRequest {
        ticket,
        db: db.clone(),
        c: c.clone(),
        id: id.clone(),
        pk: pk.clone(),
    });
    app.view = View::Item;
    vec![Effect::ReadItem {
        ticket,
        db,
        c,
        id,
        pk,
    }]
}

pub fn on_item(app: &mut App, ticket: u64, result: Result<ItemResponse, Error>) -> Vec<Effect> {
    if let Some(conflict) = app.conflict_loading.take_if(|r| r.ticket == ticket) {
        on_stored_version(app, conflict, result);
        return Vec::new();
    }
    let Some(req) = app.item_loading.take_if(|r| r.ticket == ticket) else {
        return Vec::new();
    };
    match result {
        Ok(r) => {
            app.last_charge = Some(r.request_charge);
            let doc: Value = r
                .body
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            let ItemRequest { db, c, id, pk, .. } = req;
            let hide = app.item.as_ref().is_some_and(|i| i.tree.hide_system);
            let mut tree = JsonTree::new(doc);
            tree.hide_system = hide;
            tree.rebuild();
            app.clear_item_view();
            app.item = Some(ItemView {
                db,
                c,
                id,
                pk,
                etag: r.etag,
                tree,
                request_charge: r.request_charge,
                range: r.range,
                diff: None,
            });
        }
        Err(e) => {
            app.last_charge = Some(e.request_charge);
            app.error(format!("read failed ({}): {}", e.status, e.message));
        }
    }
    Vec::new()
}

pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    let page = app.page_rows;
    let Some(item) = app.item.as_mut() else {
        return Vec::new();
    };
    let t = &mut item.tree;
    match action {
        Action::Select => t.toggle(),
        Action::Expand | Action::Right => t.set_fold(false),
        Action::Collapse | Action::Left => t.set_fold(true),
        Action::Refresh => {
            let (db, c, id, pk) = (
                item.db.clone(),
                item.c.clone(),
                item.id.clone(),
                item.pk.clone(),
            );
            return read(app, db, c, id, pk);
        }
        _ => {
            let len = t.rows.len();
            move_selection(&mut t.selected, &mut t.offset, len, page, action);
        }
    }
    Vec::new()
}

pub fn act(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::ToggleSystem => {
            if let Some(i) = app.item.as_mut() {
                i.tree.hide_system = !i.tree.hide_system;
                i.tree.rebuild();
            }
            Vec::new()
        }
        Action::EditItem => edit(app),
        Action::NewItem => new_item(app),
        Action::DeleteItem => delete(app),
        _ => Vec::new(),
    }
}

/// The item the action is about: the one shown, or the item selected in the tree.
fn current_item(app: &App) -> Option<(String, String, String, Value, Option<String>)> {
    if app.focus == Focus::Tree {
        if let Some(NodeKind::Item { db, c, pk, id }) = app.tree.selected_node().map(|n| &n.kind) {
            let etag = app
                .item
                .as_ref()
                .filter(|i| i.id == *id && i.db == *db && i.c == *c)
                .and_then(|i| i.etag.clone());
            return Some((db.clone(), c.clone(), id.clone(), pk.clone(), etag));
        }
        return None;
    }
    app.item.as_ref().map(|i| {
        (
            i.db.clone(),
            i.c.clone(),
            i.id.clone(),
            i.pk.clone(),
            i.etag.clone(),
        )
    })
}

fn edit(app: &mut App) -> Vec<Effect> {
    let Some(item) = app.item.as_ref().filter(|_| app.view == View::Item) else {
        app.info("open an item first (Enter on an item in the tree)");
        return Vec::new();
    };
    let text = serde_json::to_string_pretty(&without_system(&item.tree.doc)).unwrap_or_default();
    vec![Effect::Edit {
        db: item.db.clone(),
        c: item.c.clone(),
        text,
        original: None,
        if_match: item.etag.clone(),
        create: false,
    }]
}

fn new_item(app: &mut App) -> Vec<Effect> {
    let Some((db, c)) = app.container.clone() else {
        app.info("select a container first");
        return Vec::new();
    };
    let mut doc = Map::new();
    doc.insert("id".into(), Value::String(String::new()));
    for path in app.partition_key_paths(&db, &c) {
        let name = path.trim_start_matches('/');
        if !name.contains('/') && name != "id" {
            doc.insert(name.to_string(), Value::String(String::new()));
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    vec![Effect::Edit {
        db,
        c,
        text,
        original: None,
        if_match: None,
        create: true,
    }]
}

fn delete(app: &mut App) -> Vec<Effect> {
    let Some((db, c, id, pk, etag)) = current_item(app) else {
        app.info("select an item first");
        return Vec::new();
    };
    app.layers.push(Layer::Confirm {
        text: format!(
            "Delete item {id:?} (partition key {pk}) from {db}/{c}?{}",
            if etag.is_some() {
                " It is deleted only if nobody changed it since you read it."
            } else {
                ""
            }
        ),
        on_yes: Confirmed::DeleteItem {
            db,
            c,
            id,
            pk,
            etag,
        },
    });
    Vec::new()
}

#[allow(clippy::too_many_arguments)]
pub fn on_edited(
    app: &mut App,
    db: String,
    c: String,
    original: String,
    result: Result<String, String>,
    if_match: Option<String>,
    create: bool,
) -> Vec<Effect> {
    let text = match result {
        Ok(t) => t,
        Err(e) => {
            app.error(e);
            return Vec::new();
        }
    };
    if text.trim() == original.trim() {
        app.info("no changes");
        return Vec::new();
    }
    let after: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            let why = format!(
                "the edited text is not JSON (line {}, column {}: {e})",
                e.line(),
                e.column()
            );
            app.error(format!("not saved: {why}"));
            // The text is kept: the user may fix it where it went wrong.
            app.layers.push(Layer::Confirm {
                text: format!(
                    "Not saved: {why}.\nReopen the editor with your text? (n drops the edit)"
                ),
                on_yes: Confirmed::Reedit {
                    db,
                    c,
                    text,
                    original,
                    if_match,
                    create,
                },
            });
            return Vec::new();
        }
    };
    let before: Value = serde_json::from_str(&original).unwrap_or(Value::Null);
    let diff = item_diff(&before, &after);
    let what = if create { "Create" } else { "Save" };
    app.layers.push(Layer::Confirm {
        text: format!(
            "{what} this item in {db}/{c}?\n{}",
            if diff.is_empty() {
                "(only formatting changed)".to_string()
            } else {
                diff.join("\n")
            }
        ),
        on_yes: Confirmed::SaveItem {
            db,
            c,
            body: text,
            if_match,
            create,
        },
    });
    Vec::new()
}

/// The item as stored now, read after a 412: shown beside the refused edit.
fn on_stored_version(app: &mut App, req: ConflictRequest, result: Result<ItemResponse, Error>) {
    match result {
        Ok(r) => {
            let theirs: Value = r
                .body
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            app.layers.push(Layer::Conflict(Conflict {
                db: req.db,
                c: req.c,
                mine: req.mine,
                theirs,
                etag: r.etag,
            }));
        }
        Err(e) => app.error(format!(
            "could not read the stored version ({}): {}",
            e.status, e.message
        )),
    }
}

pub fn on_saved(
    app: &mut App,
    result: Result<ItemResponse, Error>,
    db: String,
    c: String,
    body: String,
) -> Reaction {
    match result {
        Ok(r) => {
            app.last_charge = Some(r.request_charge);
            app.info(format!(
                "saved ({} RU, range {})",
                r.request_charge, r.range
            ));
            let before = app.item.as_ref().map(|i| i.tree.doc.clone());
            let doc: Value = r
                .body
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            let id = doc
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let pk = pk_of(&doc, &app.partition_key_paths(&db, &c));
            app.container = Some((db.clone(), c.clone()));
            // The saved body is the new version: show it as if it had just been read.
            let ticket = app.ticket();
            app.item_loading = Some(ItemRequest {
                ticket,
                db,
                c,
                id,
                pk,
            });
            let effects = on_item(app, ticket, Ok(r));
            if let (Some(before), Some(item)) = (before, app.item.as_mut()) {
                item.diff = Some(item_diff(
                    &without_system(&before),
                    &without_system(&item.tree.doc),
                ));
            }
            app.view = View::Item;
            Reaction::then(effects, Request::ReloadTree)
        }
        Err(e) => {
            app.last_charge = Some(e.request_charge);
            let hint = match e.status {
                StatusCode::PreconditionFailed => {
                    " — someone changed the item since you opened it: theirs is shown beside yours"
                }
                StatusCode::Conflict => {
                    " — an item with this id already exists in that logical partition"
                }
                _ => "",
            };
            app.error(format!("not saved ({}): {}{hint}", e.status, e.message));
            if e.status == StatusCode::PreconditionFailed {
                return read_stored_version(app, db, c, body).into();
            }
            Reaction::default()
        }
    }
}

/// After a 412: reads the item as stored now, to show it beside the refused edit.
fn read_stored_version(app: &mut App, db: String, c: String, mine: String) -> Vec<Effect> {
    let Ok(doc) = serde_json::from_str::<Value>(&mine) else {
        return Vec::new();
    };
    let Some(id) = doc.get("id").and_then(Value::as_str).map(str::to_string) else {
        return Vec::new();
    };
    let pk = pk_of(&doc, &app.partition_key_paths(&db, &c));
    let ticket = app.ticket();
    app.conflict_loading = Some(ConflictRequest {
        ticket,
        db: db.clone(),
        c: c.clone(),
        mine,
    });
    vec![Effect::ReadItem {
        ticket,
        db,
        c,
        id,
        pk,
    }]
}

/// A key in the conflict view: `e` reopens the editor on the user's text, to be saved over
/// the stored version (its etag now the one to match); `t` takes the stored version into
/// the item view; Esc drops the edit.
pub fn on_conflict_key(app: &mut App, key: &crossterm::event::KeyEvent, back: bool) -> Reaction {
    use crossterm::event::KeyCode;
    let choice = match key.code {
        KeyCode::Char('e') | KeyCode::Enter => 'e',
        KeyCode::Char('t') => 't',
        _ if back => 'x',
        _ => return Reaction::default(),
    };
    let Some(Layer::Conflict(c)) = app.layers.pop() else {
        return Reaction::default();
    };
    match choice {
        'e' => vec![Effect::Edit {
            db: c.db,
            c: c.c,
            original: Some(
                serde_json::to_string_pretty(&without_system(&c.theirs)).unwrap_or_default(),
            ),
            text: c.mine,
            if_match: c.etag,
            create: false,
        }]
        .into(),
        't' => {
            let id = c
                .theirs
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let pk = pk_of(&c.theirs, &app.partition_key_paths(&c.db, &c.c));
            Request::ReadItem {
                db: c.db,
                c: c.c,
                id: id.to_string(),
                pk,
            }
            .into()
        }
        _ => {
            app.info("your edit was dropped; the stored version stays");
            Reaction::default()
        }
    }
}

pub fn on_deleted(app: &mut App, result: Result<ItemResponse, Error>, id: String) -> Reaction {
    match result {
        Ok(r) => {
            app.last_charge = Some(r.request_charge);
            app.info(format!("deleted {id} ({} RU)", r.request_charge));
            if app.item.as_ref().is_some_and(|i| i.id == id) {
                app.item = None;
            }
            Request::ReloadTree.into()
        }
        Err(e) => {
            app.last_charge = Some(e.request_charge);
            let hint = if e.status == StatusCode::PreconditionFailed {
                " — it changed since you read it; refresh (r) first"
            } else {
                ""
            };
            app.error(format!("not deleted ({}): {}{hint}", e.status, e.message));
            Reaction::default()
        }
    }
}
