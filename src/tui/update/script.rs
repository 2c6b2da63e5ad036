//! Server-side scripts' reactions: showing a stored procedure, trigger or UDF in the item
//! view, creating and editing one in `$EDITOR` (a body that does not compile is kept and
//! can be reopened where it went wrong), deleting one after a confirmation, and executing
//! a stored procedure from its form.

use super::prompt::open_prompt;
use super::request::{Reaction, Request};
use crate::engine::{ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse};
use crate::error::{Error, StatusCode};
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::editor::TextBuffer;
use crate::tui::state::script::{
    ExecuteField, ExecuteForm, Execution, PendingExecution, ScriptRequest, ScriptView, parse_new,
    template,
};
use crate::tui::state::tree::NodeKind;
use crate::tui::state::{App, Confirmed, Focus, Layer, PromptFor, View};

/// What a script action is about: a script (`id`), or only its container and kind (a
/// group row in the tree, where a new one is created).
#[derive(Debug, Clone, PartialEq)]
struct Target {
    db: String,
    c: String,
    kind: ScriptKind,
    id: Option<String>,
}

/// The script the keys are about: the tree's selected script or script group, or the
/// script the item view shows.
fn target(app: &App) -> Option<Target> {
    match app.focus {
        Focus::Tree => match &app.tree.selected_node()?.kind {
            NodeKind::Script {
                db, c, kind, id, ..
            } => Some(Target {
                db: db.clone(),
                c: c.clone(),
                kind: *kind,
                id: Some(id.clone()),
            }),
            NodeKind::Scripts { db, c, kind, .. } => Some(Target {
                db: db.clone(),
                c: c.clone(),
                kind: *kind,
                id: None,
            }),
            _ => None,
        },
        Focus::View if app.view == View::Item => app.script.as_ref().map(|s| Target {
            db: s.db.clone(),
            c: s.c.clone(),
            kind: s.info.kind,
            id: Some(s.info.id.clone()),
        }),
        _ => None,
    }
}

/// Whether the item actions (edit, new, delete) are about a script here.
pub fn applies(app: &App) -> bool {
    target(app).is_some()
}

/// Asks for a script to show in the item view (and to edit, once read, if `then_edit`).
pub fn read(
    app: &mut App,
    db: String,
    c: String,
    kind: ScriptKind,
    id: String,
    then_edit: bool,
) -> Vec<Effect> {
    let ticket = app.ticket();
    app.script_loading = Some(ScriptRequest {
        ticket,
        db: db.clone(),
        c: c.clone(),
        kind,
        id: id.clone(),
        then_edit,
    });
    app.view = View::Item;
    vec![Effect::ReadScript {
        ticket,
        db,
        c,
        kind,
        id,
    }]
}

pub fn on_read(app: &mut App, ticket: u64, result: Result<ScriptInfo, Error>) -> Vec<Effect> {
    let Some(req) = app.script_loading.take_if(|r| r.ticket == ticket) else {
        return Vec::new();
    };
    match result {
        Ok(info) => {
            // The same script read again keeps its scroll and its last execution.
            let same = app
                .script
                .take()
                .filter(|s| s.db == req.db && s.c == req.c && s.info.id == info.id);
            let mut view = ScriptView::new(req.db, req.c, info);
            if let Some(old) = same {
                view.scroll = old.scroll;
                view.execution = old.execution;
                view.last_form = old.last_form;
            }
            app.clear_item_view();
            app.script = Some(view);
            app.view = View::Item;
            if req.then_edit {
                return edit(app);
            }
        }
        Err(e) => app.error(format!(
            "could not read {} {} ({}): {}",
            req.kind.noun(),
            req.id,
            e.status,
            one_line(&e.message)
        )),
    }
    Vec::new()
}

/// The script actions: edit, new, delete, execute, copy the body.
pub fn act(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(t) = target(app) else {
        app.info("select a stored procedure, trigger or UDF in the tree first");
        return Vec::new();
    };
    match (action, t.id) {
        (Action::NewItem, _) | (Action::EditItem, None) => {
            let title = match t.kind {
                ScriptKind::Trigger => format!(
                    "new trigger in {}/{}: name [pre|post] [all|create|replace|delete|upsert]",
                    t.db, t.c
                ),
                kind => format!("new {} in {}/{}: name", kind.noun(), t.db, t.c),
            };
            open_prompt(
                app,
                &title,
                PromptFor::NewScript {
                    db: t.db,
                    c: t.c,
                    kind: t.kind,
                },
            );
            Vec::new()
        }
        (Action::EditItem, Some(id)) => {
            if shown(app, &t.db, &t.c, &id) {
                edit(app)
            } else {
                read(app, t.db, t.c, t.kind, id, true)
            }
        }
        (Action::DeleteItem, Some(id)) => {
            app.layers.push(Layer::Confirm {
                text: format!(
                    "Delete the {} {id:?} from {}/{}?\nIts body is gone for good.",
                    t.kind.noun(),
                    t.db,
                    t.c
                ),
                on_yes: Confirmed::DeleteScript {
                    db: t.db,
                    c: t.c,
                    kind: t.kind,
                    id,
                },
            });
            Vec::new()
        }
        (Action::ExecuteScript, Some(id)) if t.kind == ScriptKind::StoredProcedure => {
            open_form(app, t.db, t.c, id)
        }
        (Action::ExecuteScript, _) => {
            app.info("only a stored procedure executes: select one");
            Vec::new()
        }
        (Action::CopyValue, Some(_)) => match &app.script {
            Some(s) => vec![Effect::Copy {
                text: s.info.body.clone(),
            }],
            None => Vec::new(),
        },
        _ => {
            app.info("select a script, not its group");
            Vec::new()
        }
    }
}

/// Whether the item view shows this script now.
fn shown(app: &App, db: &str, c: &str, id: &str) -> bool {
    app.script
        .as_ref()
        .is_some_and(|s| s.db == db && s.c == c && s.info.id == id)
}

/// Hands the shown script's body to `$EDITOR`.
fn edit(app: &mut App) -> Vec<Effect> {
    let Some(s) = &app.script else {
        return Vec::new();
    };
    let spec = ScriptSpec {
        kind: s.info.kind,
        id: s.info.id.clone(),
        body: s.info.body.clone(),
        trigger_type: s.info.trigger_type,
        trigger_operation: s.info.trigger_operation,
    };
    vec![Effect::EditScript {
        db: s.db.clone(),
        c: s.c.clone(),
        spec,
        original: None,
        create: false,
    }]
}

/// The new-script prompt's answer: `$EDITOR` opens on a starting body of that kind.
pub fn begin_new(
    app: &mut App,
    db: String,
    c: String,
    kind: ScriptKind,
    answer: &str,
) -> Vec<Effect> {
    let (id, trigger_type, trigger_operation) = match parse_new(kind, answer) {
        Ok(parts) => parts,
        Err(e) => {
            app.error(format!("no {} created: {e}", kind.noun()));
            return Vec::new();
        }
    };
    let spec = ScriptSpec {
        kind,
        body: template(kind, &id, trigger_type),
        id,
        trigger_type,
        trigger_operation,
    };
    vec![Effect::EditScript {
        db,
        c,
        spec,
        original: None,
        create: true,
    }]
}

/// The text `$EDITOR` left: saved at once (the engine compiles it, and a body that does
/// not compile comes back as a 400 with its position). `spec.body` is the text the edit
/// is compared with; a new script is saved even unchanged, as its name was chosen.
pub fn on_edited(
    app: &mut App,
    db: String,
    c: String,
    mut spec: ScriptSpec,
    create: bool,
    result: Result<String, String>,
) -> Vec<Effect> {
    let text = match result {
        Ok(t) => t,
        Err(e) => {
            app.error(format!("the {} was not edited: {e}", spec.kind.noun()));
            return Vec::new();
        }
    };
    if !create && text.trim_end() == spec.body.trim_end() {
        app.info("no changes");
        return Vec::new();
    }
    spec.body = text;
    let ticket = app.ticket();
    vec![Effect::SaveScript {
        ticket,
        db,
        c,
        spec,
        create,
    }]
}

pub fn on_saved(
    app: &mut App,
    db: String,
    c: String,
    spec: ScriptSpec,
    create: bool,
    result: Result<ScriptInfo, Error>,
) -> Reaction {
    match result {
        Ok(info) => {
            app.info(format!(
                "{} {} {} in {db}/{c}",
                if create { "created" } else { "saved" },
                info.kind.noun(),
                info.id
            ));
            let keep = app
                .script
                .take()
                .filter(|s| s.db == db && s.c == c && s.info.id == info.id);
            let mut view = ScriptView::new(db, c, info);
            if let Some(old) = keep {
                view.execution = old.execution;
                view.last_form = old.last_form;
            }
            app.clear_item_view();
            app.script = Some(view);
            app.view = View::Item;
            Request::ReloadTree.into()
        }
        Err(e) => {
            let what = if create { "created" } else { "saved" };
            let position = match (e.line, e.column) {
                (Some(l), Some(col)) => format!(" at line {l}, column {col}"),
                _ => String::new(),
            };
            let why = format!(
                "{} {} not {what} ({}{position}): {}",
                spec.kind.noun(),
                spec.id,
                e.status,
                one_line(&e.message)
            );
            app.error(why.clone());
            // A body the engine refused is kept: the editor reopens on it.
            if e.status == StatusCode::BadRequest {
                let original = app
                    .script
                    .as_ref()
                    .filter(|s| s.db == db && s.c == c && s.info.id == spec.id)
                    .map(|s| s.info.body.clone())
                    .unwrap_or_default();
                app.layers.push(Layer::Confirm {
                    text: format!("{why}\nReopen the editor with your text? (n drops the edit)"),
                    on_yes: Confirmed::ReeditScript {
                        db,
                        c,
                        spec,
                        original,
                        create,
                    },
                });
            }
            Reaction::default()
        }
    }
}

pub fn on_deleted(
    app: &mut App,
    db: String,
    c: String,
    kind: ScriptKind,
    id: String,
    result: Result<(), Error>,
) -> Reaction {
    match result {
        Ok(()) => {
            app.info(format!("deleted {} {id} from {db}/{c}", kind.noun()));
            if shown(app, &db, &c, &id) {
                app.script = None;
            }
            Request::ReloadTree.into()
        }
        Err(e) => {
            app.error(format!(
                "{} {id} not deleted ({}): {}",
                kind.noun(),
                e.status,
                one_line(&e.message)
            ));
            Reaction::default()
        }
    }
}

/// Opens the execute form for stored procedure `id`, filled as it was last run, and
/// shows the procedure in the item view so its result lands beside its body.
fn open_form(app: &mut App, db: String, c: String, id: String) -> Vec<Effect> {
    let last = app
        .script
        .as_ref()
        .filter(|s| s.db == db && s.c == c && s.info.id == id)
        .and_then(|s| s.last_form.clone());
    let (pk, params, log) = last.unwrap_or_default();
    let effects = if shown(app, &db, &c, &id) {
        Vec::new()
    } else {
        read(
            app,
            db.clone(),
            c.clone(),
            ScriptKind::StoredProcedure,
            id.clone(),
            false,
        )
    };
    app.layers.push(Layer::Execute(ExecuteForm {
        db,
        c,
        id,
        partition_key: TextBuffer::new(&pk, false),
        params: TextBuffer::new(&params, false),
        log,
        field: ExecuteField::PartitionKey,
    }));
    effects
}

/// Enter in the execute form: runs the procedure, or says what the form lacks and stays.
pub fn submit_form(app: &mut App) -> Vec<Effect> {
    let Some(Layer::Execute(form)) = app.layers.last() else {
        return Vec::new();
    };
    let (partition_key, params) = match form.parsed() {
        Ok(v) => v,
        Err(e) => {
            app.error(e);
            return Vec::new();
        }
    };
    let Some(Layer::Execute(form)) = app.layers.pop() else {
        return Vec::new();
    };
    let remembered = (form.partition_key.text(), form.params.text(), form.log);
    if let Some(s) = app
        .script
        .as_mut()
        .filter(|s| s.db == form.db && s.c == form.c && s.info.id == form.id)
    {
        s.last_form = Some(remembered);
    }
    let ticket = app.ticket();
    app.executing = Some(PendingExecution {
        ticket,
        db: form.db.clone(),
        c: form.c.clone(),
        id: form.id.clone(),
        partition_key: partition_key.clone(),
        params: params.clone(),
    });
    app.info(format!("executing {}…", form.id));
    vec![Effect::ExecuteProcedure {
        ticket,
        db: form.db,
        c: form.c,
        id: form.id,
        request: SprocRequest {
            partition_key,
            params,
            enable_log: form.log,
        },
    }]
}

/// The execution's outcome goes beside the procedure's body; what it wrote shows in the
/// tree.
pub fn on_executed(app: &mut App, ticket: u64, result: Result<SprocResponse, Error>) -> Reaction {
    let Some(run) = app.executing.take_if(|r| r.ticket == ticket) else {
        return Reaction::default();
    };
    match &result {
        Ok(r) => {
            app.last_charge = Some(r.request_charge);
            app.info(format!(
                "executed {} in range {}: {} RU",
                run.id,
                r.range,
                crate::tui::ui::fmt_ru(r.request_charge)
            ));
        }
        Err(e) => {
            app.last_charge = Some(e.request_charge);
            app.error(format!(
                "{} failed ({}): {}",
                run.id,
                e.status,
                one_line(&e.message)
            ));
        }
    }
    if let Some(s) = app
        .script
        .as_mut()
        .filter(|s| s.db == run.db && s.c == run.c && s.info.id == run.id)
    {
        s.execution = Some(Execution {
            partition_key: run.partition_key,
            params: run.params,
            result,
        });
        // The outcome is below the body: scroll as far as it takes to show it whole.
        let body = s.info.body.lines().count();
        s.scroll = s.line_count().saturating_sub(app.page_rows).min(body);
    }
    if app.view == View::Item {
        app.focus = Focus::View;
    }
    Request::ReloadTree.into()
}

/// Scrolling the script view; `r` reads it again.
pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    let page = app.page_rows.max(1);
    let Some(s) = app.script.as_mut() else {
        return Vec::new();
    };
    let last = s.line_count().saturating_sub(1);
    s.scroll = match action {
        Action::Up => s.scroll.saturating_sub(1),
        Action::Down => (s.scroll + 1).min(last),
        Action::PageUp => s.scroll.saturating_sub(page),
        Action::PageDown => (s.scroll + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        Action::Refresh => {
            let (db, c, kind, id) = (s.db.clone(), s.c.clone(), s.info.kind, s.info.id.clone());
            return read(app, db, c, kind, id, false);
        }
        _ => s.scroll,
    };
    Vec::new()
}

/// The engine's script messages end their first line with `\r\n` before the source
/// position: one line for the status line and the log.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
