//! The query console's reactions: run, page, cancel, errors marked in the editor, and
//! completion at the editor's cursor.

use std::collections::BTreeMap;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use super::prompt::{open_params, open_prompt};
use super::request::{Reaction, Request};
use crate::engine::QueryResult;
use crate::error::{Error, StatusCode};
use crate::query::complete::{Candidate, Completion, Schema};
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::effect::JobKind;
use crate::tui::export::{Format, Source};
use crate::tui::state::document::pk_of;
use crate::tui::state::editor::TextBuffer;
use crate::tui::state::history::HistoryEntry;
use crate::tui::state::list::move_selection;
use crate::tui::state::query::{
    COMPLETION_ROWS, CompletionList, QueryError, QueryRun, RangeSpan, ResultsMode, TargetSchema,
    columns,
};
use crate::tui::state::{App, Focus, ItemView, PromptFor, View};
use crate::tui::state::{Choice, Confirmed, Layer};
use crate::tui::ui::plural;

/// The console follows the selection to another container, keeping its text; the last
/// run's results stay, labelled with the container they came from.
pub fn follow(app: &mut App) {
    if let Some(target) = app.container.clone()
        && app.query.target.as_ref() != Some(&target)
    {
        app.query.target = Some(target);
        app.query.error = None;
    }
}

/// Opens the console on the selected container. Asked for on the container it already
/// queries, it starts over with a starter query; the text it replaces goes into the
/// history, so ctrl-↑ brings it back.
pub fn new_query(app: &mut App) {
    app.view = View::Query;
    app.focus = Focus::Editor;
    let Some(target) = app.container.clone() else {
        app.info("select a container in the tree first");
        return;
    };
    let same = app.query.target.as_ref() == Some(&target);
    app.query.target = Some(target.clone());
    let text = app.query.editor.text();
    if same || text.trim().is_empty() {
        // A text that ran is in the history already, under the container it ran on.
        let ran = app
            .query
            .run
            .as_ref()
            .is_some_and(|r| r.sql.trim() == text.trim());
        if text.trim() != STARTER && !ran {
            let (db, c) = &target;
            let params = app.query.params_of(&text);
            app.query
                .history
                .remember(&format!("{db}/{c}"), &text, &params);
        }
        app.query.editor.set_text(STARTER);
        app.query.run = None;
        app.query.error = None;
    }
}

/// The query a new console starts with.
const STARTER: &str = "SELECT * FROM c";

pub fn run(app: &mut App) -> Vec<Effect> {
    let Some((db, c)) = app.query.target.clone() else {
        app.view = View::Query;
        new_query(app);
        return Vec::new();
    };
    let sql = app.query.editor.text();
    if sql.trim().is_empty() {
        app.info("type a query first");
        return Vec::new();
    }
    let params = match parameters(app, &sql) {
        Ok(p) => p,
        Err(missing) => {
            app.error(missing);
            open_params(app);
            return Vec::new();
        }
    };
    if app.ask_before_fan_out && !app.estimated.contains(&sql) {
        app.info("estimating what the query will cost…");
        return vec![Effect::EstimateQuery {
            ticket: app.ticket(),
            db,
            c,
            sql,
            params,
        }];
    }
    let mut effects = stop(app);
    let ticket = app.ticket();
    let typed = app.query.params_of(&sql);
    app.query
        .history
        .remember(&format!("{db}/{c}"), &sql, &typed);
    app.query.running = Some(ticket);
    app.query.error = None;
    // A new result: its rows and columns are not the last one's.
    app.query.selected = 0;
    app.query.offset = 0;
    app.query.hscroll = 0;
    app.query.filter = None;
    app.query.sort = None;
    app.query.run = Some(QueryRun::new(
        (db.clone(), c.clone()),
        sql.clone(),
        params.clone(),
    ));
    app.view = View::Query;
    // The ranges first: the strip is drawn while the query runs.
    effects.push(Effect::LoadRanges {
        ticket,
        db: db.clone(),
        c: c.clone(),
    });
    effects.push(Effect::RunQuery {
        ticket,
        db,
        c,
        sql,
        params,
        continuation: None,
    });
    app.query.refresh_rows();
    effects.push(Effect::SaveHistory {
        entries: app.query.history.entries.clone(),
    });
    // A fresh sample for completion: the data may have changed since the last one.
    effects.extend(load_schema(app, true));
    effects
}

/// A query's estimate arrived: a single-range query runs at once; a fan-out asks first,
/// once per query text. An estimate that failed lets the run report the error itself.
pub fn on_estimate(
    app: &mut App,
    sql: String,
    result: Result<Option<String>, crate::error::Error>,
) -> Vec<Effect> {
    let current = app.query.editor.text() == sql;
    app.estimated.insert(sql);
    // The "estimating…" note has been answered.
    app.message = None;
    if !current {
        return Vec::new();
    }
    match result {
        Ok(Some(text)) => {
            app.layers.push(Layer::Confirm {
                text,
                on_yes: Confirmed::RunQuery,
            });
            Vec::new()
        }
        Ok(None) | Err(_) => run(app),
    }
}

/// The parameter values as JSON, or what is missing or malformed.
fn parameters(app: &App, sql: &str) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for name in crate::query::complete::parameter_names(sql) {
        let text = app
            .query
            .params
            .get(&name)
            .map(String::as_str)
            .unwrap_or("");
        if text.trim().is_empty() {
            return Err(format!("@{name} has no value: fill in the parameters"));
        }
        let value = serde_json::from_str(text)
            .map_err(|e| format!("@{name} is not JSON ({e}); strings need quotes: \"text\""))?;
        out.insert(name, value);
    }
    Ok(out)
}

/// Stops the running query, if one runs, without a word (a new one replaces it).
fn stop(app: &mut App) -> Vec<Effect> {
    match app.query.running.take() {
        Some(ticket) => vec![Effect::CancelQuery { ticket }],
        None => Vec::new(),
    }
}

/// The user cancels the running query: the page under way is dropped, and the run, the
/// message and the status line all say what it cost until then (the pages received; the
/// page under way returns no charge, as with the service when a client gives up on it).
pub fn cancel(app: &mut App) -> Vec<Effect> {
    let effects = stop(app);
    if effects.is_empty() {
        return effects;
    }
    if let Some(run) = app.query.run.as_mut() {
        run.cancelled = true;
        run.progress.clear();
        let pages = match run.pages {
            0 => "before its first page".to_string(),
            1 => "after 1 page".to_string(),
            n => format!("after {n} pages"),
        };
        let text = format!(
            "query cancelled {pages}: {} RU spent, {} loaded",
            crate::tui::ui::fmt_ru(run.request_charge),
            crate::tui::ui::plural(run.documents.len() as u64, "document")
        );
        app.last_charge = Some(run.request_charge);
        app.info(text);
    }
    effects
}

pub fn load_more(app: &mut App) -> Vec<Effect> {
    if app.query.running.is_some() {
        return Vec::new();
    }
    let Some(run) = app.query.run.as_ref() else {
        return Vec::new();
    };
    let (db, c) = run.target.clone();
    let Some(continuation) = run.continuation.clone() else {
        app.info("no more results");
        return Vec::new();
    };
    let (sql, params) = (run.sql.clone(), run.params.clone());
    let ticket = app.ticket();
    app.query.running = Some(ticket);
    if let Some(run) = app.query.run.as_mut() {
        run.cancelled = false;
    }
    vec![Effect::RunQuery {
        ticket,
        db,
        c,
        sql,
        params,
        continuation: Some(continuation),
    }]
}

pub fn on_page(
    app: &mut App,
    ticket: u64,
    result: Result<QueryResult, Error>,
    elapsed_ms: f64,
) -> Vec<Effect> {
    if app.query.running != Some(ticket) {
        return Vec::new();
    }
    app.query.running = None;
    match result {
        Ok(page) => {
            app.last_charge = Some(page.request_charge);
            let selected_doc = app.query.rows().get(app.query.selected).copied();
            let let_go = match app.query.run.as_mut() {
                Some(run) => run.add_page(page, elapsed_ms),
                None => 0,
            };
            app.query.refresh_rows();
            app.query.after_let_go(selected_doc, let_go);
        }
        Err(e) => {
            app.last_charge = Some(e.request_charge);
            if let Some(run) = app.query.run.as_mut() {
                run.request_charge = crate::charge::round(run.request_charge + e.request_charge);
            }
            if let (Some(line), Some(column)) = (e.line, e.column) {
                app.query.editor.goto(line as usize, column as usize);
            }
            app.query.error = Some(QueryError {
                status: e.status,
                message: e.message.clone(),
                line: e.line.map(|l| l as usize),
                column: e.column.map(|c| c as usize),
            });
            if e.status == StatusCode::Cancelled {
                app.info("query cancelled");
            }
        }
    }
    Vec::new()
}

/// The container's ranges (for the strip) and its partition key paths.
pub fn on_ranges(
    app: &mut App,
    ticket: u64,
    db: String,
    c: String,
    pk_paths: Vec<String>,
    ranges: Vec<RangeSpan>,
) -> Vec<Effect> {
    app.pk_paths.insert((db, c), pk_paths);
    if app.query.running == Some(ticket) || app.query.ranges.is_empty() {
        app.query.ranges = ranges;
    }
    Vec::new()
}

/// The index the console offered to add went in, or not.
pub fn on_applied(app: &mut App, result: Result<String, Error>) -> Vec<Effect> {
    match result {
        Ok(text) => app.info(text),
        Err(e) => app.error(format!("policy not changed ({}): {}", e.status, e.message)),
    }
    Vec::new()
}

pub fn toggle_mode(app: &mut App) {
    app.query.mode = match app.query.mode {
        ResultsMode::Table => ResultsMode::Json,
        ResultsMode::Json => ResultsMode::Table,
    };
}

pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    let len = app.query.rows().len();
    match action {
        Action::Filter => {
            open_prompt(
                app,
                "search the loaded results (words anywhere in a document)",
                PromptFor::ResultsFilter,
            );
            Vec::new()
        }
        Action::Sort => {
            sort_next(app);
            Vec::new()
        }
        Action::Left => {
            app.query.hscroll = app.query.hscroll.saturating_sub(1);
            Vec::new()
        }
        Action::Right => {
            app.query.hscroll += 1;
            Vec::new()
        }
        Action::Select | Action::Expand => open_selected(app),
        Action::Refresh => run(app),
        _ => {
            let page = app.page_rows;
            move_selection(
                &mut app.query.selected,
                &mut app.query.offset,
                len,
                page,
                action,
            );
            // Scrolling onto the last row loads the next page.
            let at_end = len > 0 && app.query.selected + 1 >= len;
            let more = app
                .query
                .run
                .as_ref()
                .is_some_and(|r| r.continuation.is_some());
            if at_end && more && matches!(action, Action::Down | Action::PageDown | Action::Bottom)
            {
                return load_more(app);
            }
            Vec::new()
        }
    }
}

/// Shows the selected result in the item view (as a document; a stored item can be
/// edited from the tree).
fn open_selected(app: &mut App) -> Vec<Effect> {
    let Some((db, c)) = app.query.run.as_ref().map(|r| r.target.clone()) else {
        return Vec::new();
    };
    let Some(doc) = app.query.selected_document().cloned() else {
        return Vec::new();
    };
    let id = doc
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("(result)")
        .to_string();
    let etag = doc.get("_etag").and_then(Value::as_str).map(str::to_string);
    let pk = pk_of(&doc, &app.partition_key_paths(&db, &c));
    app.clear_item_view();
    app.item = Some(ItemView {
        db,
        c,
        id,
        pk,
        etag,
        tree: crate::tui::state::json_tree::JsonTree::new(doc),
        request_charge: 0.0,
        range: String::new(),
        diff: None,
    });
    app.view = View::Item;
    app.focus = Focus::View;
    Vec::new()
}

/// Asks where to export the result (the format is the file's extension).
pub fn ask_export(app: &mut App) {
    if app.query.run.is_none() {
        app.info("run a query first: its result is what is exported");
        return;
    }
    open_prompt(
        app,
        "export the result to (.json, .ndjson or .csv)",
        PromptFor::ResultsExport,
    );
}

/// Exports the result to `path`: the rows loaded (as shown, searched and sorted), or,
/// when the query has more pages, every page if the user picks that.
pub fn export_to(app: &mut App, path: String) -> Reaction {
    let path = path.trim().to_string();
    let format = match Format::of(&path) {
        Ok(f) => f,
        Err(e) => {
            app.error(format!("not exported: {e}"));
            return Reaction::default();
        }
    };
    let Some(run) = app.query.run.as_ref() else {
        return Reaction::default();
    };
    let rows: Vec<Value> = app
        .query
        .rows()
        .iter()
        .filter_map(|&i| run.documents.get(i).cloned())
        .collect();
    let shown = if app.query.filter.is_some() {
        format!(
            "the {} matching the search",
            plural(rows.len() as u64, "loaded row")
        )
    } else {
        format!("the {}", plural(rows.len() as u64, "loaded row"))
    };
    let loaded = Confirmed::Job {
        title: format!("exporting {} to {path}", plural(rows.len() as u64, "row")),
        job: JobKind::ExportResult {
            source: Source::Loaded(rows),
            path: path.clone(),
            format,
        },
    };
    if run.continuation.is_none() {
        let Confirmed::Job { title, job } = loaded else {
            return Reaction::default();
        };
        return Request::StartJob { title, job }.into();
    }
    let (db, c) = run.target.clone();
    let every = Confirmed::Job {
        title: format!("exporting every page to {path}"),
        job: JobKind::ExportResult {
            source: Source::Query {
                db,
                c,
                sql: run.sql.clone(),
                params: run.params.clone(),
            },
            path,
            format,
        },
    };
    app.layers.push(Layer::Choose {
        text: format!(
            "The query has more results than the {} loaded. Export which?",
            run.documents.len()
        ),
        choices: vec![
            Choice {
                key: 'a',
                label: "all of them: the query runs again, page by page, in the background (its RU are spent again; ctrl-x cancels)".into(),
                then: every,
            },
            Choice {
                key: 'l',
                label: shown,
                then: loaded,
            },
        ],
    });
    Reaction::default()
}

/// Opens the selected row's cell whole (the column the table is scrolled to), or the
/// whole document in JSON view.
pub fn show_value(app: &mut App) {
    let Some(doc) = app.query.selected_document() else {
        app.info("no row selected");
        return;
    };
    let id = doc
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("row {}", app.query.selected + 1), str::to_string);
    let (title, value) = match app.query.mode {
        ResultsMode::Json => (id, Some(doc)),
        ResultsMode::Table => {
            let docs = app.query.run.as_ref().map_or(&[][..], |r| &r.documents);
            let cols = columns(docs);
            let column = cols
                .get(app.query.hscroll.min(cols.len().saturating_sub(1)))
                .cloned()
                .unwrap_or_default();
            let value = match doc {
                Value::Object(o) => o.get(&column),
                other if column == "value" => Some(other),
                _ => None,
            };
            (format!("{id} · {column}"), value)
        }
    };
    let text = match value {
        None => "(not in this row)".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
    };
    app.layers.push(Layer::Value {
        title,
        text,
        scroll: 0,
    });
}

/// One step through the console's container's history (ctrl-↑/↓): the query comes back
/// with the parameter values it ran with.
pub fn history_step(app: &mut App, back: bool) {
    let Some(key) = app.query.target_key() else {
        return;
    };
    let text = app.query.editor.text();
    if let Some(entry) = app.query.history.step(&key, back, &text) {
        restore(app, &entry);
    }
}

fn restore(app: &mut App, entry: &HistoryEntry) {
    app.query.editor.set_text(&entry.sql);
    app.query.completion = None;
    for (name, value) in &entry.params {
        app.query.params.insert(name.clone(), value.clone());
    }
}

/// Opens the search over the console's container's history.
pub fn search_history(app: &mut App) {
    let Some(key) = app.query.target_key() else {
        app.info("select a container first: the history is kept per container");
        return;
    };
    if app.query.history.of(&key).is_empty() {
        app.info(format!("no queries run on {key} yet"));
        return;
    }
    app.view = View::Query;
    app.focus = Focus::Editor;
    app.layers.push(Layer::History {
        input: TextBuffer::new("", false),
        selected: 0,
    });
}

/// The history search's choice: entry `index` goes into the editor, with its parameters.
pub fn use_history(app: &mut App, index: usize) {
    let Some(entry) = app.query.history.entries.get(index).cloned() else {
        return;
    };
    app.query.history.pos = None;
    restore(app, &entry);
    app.info("query from history (F5 runs it)");
}

/// Hands the query text to `$EDITOR`.
pub fn edit(app: &mut App) -> Vec<Effect> {
    app.view = View::Query;
    app.focus = Focus::Editor;
    vec![Effect::EditQuery {
        text: app.query.editor.text(),
    }]
}

/// The text `$EDITOR` left becomes the query (the editor's final newline dropped).
pub fn on_edited(app: &mut App, result: Result<String, String>) {
    match result {
        Ok(text) => {
            let text = text.trim_end_matches(['\n', '\r']);
            if text == app.query.editor.text() {
                app.info("query unchanged");
            } else {
                app.query.editor.set_text(text);
                app.query.completion = None;
                app.info("query text from $EDITOR");
            }
        }
        Err(e) => app.error(format!("the query was not edited: {e}")),
    }
}

/// Sorts the loaded results by the first column shown (scroll sideways to pick another):
/// ascending, then descending, then back to the order the query returned.
fn sort_next(app: &mut App) {
    let Some(run) = app.query.run.as_ref() else {
        app.info("run a query first");
        return;
    };
    let columns = columns(&run.documents);
    let Some(column) = columns.get(app.query.hscroll.min(columns.len().saturating_sub(1))) else {
        app.info("nothing to sort");
        return;
    };
    app.query.sort = match &app.query.sort {
        Some((c, false)) if c == column => Some((column.clone(), true)),
        Some((c, true)) if c == column => None,
        _ => Some((column.clone(), false)),
    };
    app.query.refresh_rows();
    match &app.query.sort {
        Some((c, descending)) => app.info(format!(
            "sorted by {c} {} here, over the {} loaded results: not an ORDER BY (the next page is in the query's order)",
            if *descending { "descending" } else { "ascending" },
            run_len(app)
        )),
        None => app.info("in the order the query returned"),
    }
}

fn run_len(app: &App) -> usize {
    app.query.run.as_ref().map_or(0, |r| r.documents.len())
}

// ---- completion ----

/// Asks for a sample of the console's container for completion, unless it is here or
/// coming.
pub fn ensure_schema(app: &mut App) -> Vec<Effect> {
    load_schema(app, false)
}

/// Asks for a sample of the console's container unless one is coming; `fresh`: even when
/// one is here.
fn load_schema(app: &mut App, fresh: bool) -> Vec<Effect> {
    let Some(target) = app.query.target.clone() else {
        return Vec::new();
    };
    let have = app
        .query
        .schema
        .as_ref()
        .is_some_and(|s| s.target == target);
    if (have && !fresh) || app.query.schema_loading.as_ref() == Some(&target) {
        return Vec::new();
    }
    app.query.schema_loading = Some(target.clone());
    vec![Effect::LoadSchema {
        db: target.0,
        c: target.1,
    }]
}

pub fn on_schema(app: &mut App, db: String, c: String, result: Result<Schema, Error>) {
    let target = (db, c);
    if app.query.schema_loading.as_ref() == Some(&target) {
        app.query.schema_loading = None;
    }
    // A failed sample leaves completion without properties; everything else still works.
    if let Ok(schema) = result {
        app.query.schema = Some(TargetSchema {
            target,
            schema: Arc::new(schema),
        });
    }
}

/// The completions at the editor's cursor, with the console's container's sample.
fn completion_here(app: &App) -> Option<Completion> {
    let schema = app
        .query
        .schema
        .as_ref()
        .filter(|s| app.query.target.as_ref() == Some(&s.target))
        .map(|s| s.schema.clone())
        .unwrap_or_default();
    let ed = &app.query.editor;
    crate::query::complete::complete(&ed.text(), ed.cursor_offset(), &schema)
}

/// Worth a list: something to choose that is not just what was typed.
fn useful(c: &Completion) -> bool {
    match c.candidates.as_slice() {
        [] => false,
        [only] => only.insert != c.typed,
        _ => true,
    }
}

/// Completes at the cursor (the `complete` action): one candidate is inserted at once,
/// several open the list.
pub fn complete(app: &mut App) -> Vec<Effect> {
    let effects = ensure_schema(app);
    let Some(c) = completion_here(app) else {
        app.info("nothing completes inside a string, a comment or a number");
        return effects;
    };
    match c.candidates.as_slice() {
        [] if app.query.schema_loading.is_some() => {
            app.info("sampling the container's documents for completion…")
        }
        [] if c.typed.is_empty() => app.info("nothing to complete here"),
        [] => app.info(format!("nothing completes '{}'", c.typed)),
        [only] if only.insert == c.typed => app.info(format!("'{}' is complete", c.typed)),
        [only] => accept(app, &only.clone()),
        _ => {
            app.query.completion = Some(CompletionList {
                completion: c,
                selected: 0,
            })
        }
    }
    effects
}

/// After an edit: the open list follows the word being typed (and closes once the cursor
/// leaves it or nothing matches); typing `.` or `@` opens it.
pub fn after_edit(app: &mut App, key: &KeyEvent) {
    if let Some(open) = app.query.completion.take() {
        let same_word =
            completion_here(app).filter(|c| c.start == open.completion.start && useful(c));
        if let Some(c) = same_word {
            let label = open.selected().map(|s| s.label.clone());
            let selected = c
                .candidates
                .iter()
                .position(|x| Some(&x.label) == label.as_ref())
                .unwrap_or(0);
            app.query.completion = Some(CompletionList {
                completion: c,
                selected,
            });
            return;
        }
    }
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    if plain && matches!(key.code, KeyCode::Char('.' | '@')) {
        app.query.completion =
            completion_here(app)
                .filter(useful)
                .map(|completion| CompletionList {
                    completion,
                    selected: 0,
                });
    }
}

/// Keys the open list takes (moving, accepting, closing); `None` for every other key.
pub fn completion_key(app: &mut App, key: &KeyEvent) -> Option<Vec<Effect>> {
    let list = app.query.completion.as_mut()?;
    let len = list.completion.candidates.len().max(1);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        // ctrl-↑/↓ walk the history, list or not.
        KeyCode::Up if !ctrl => list.selected = (list.selected + len - 1) % len,
        KeyCode::Char('p') if ctrl => list.selected = (list.selected + len - 1) % len,
        KeyCode::Down if !ctrl => list.selected = (list.selected + 1) % len,
        KeyCode::Char('n') if ctrl => list.selected = (list.selected + 1) % len,
        KeyCode::PageUp => list.selected = list.selected.saturating_sub(COMPLETION_ROWS),
        KeyCode::PageDown => list.selected = (list.selected + COMPLETION_ROWS).min(len - 1),
        KeyCode::Esc => app.query.completion = None,
        KeyCode::Tab => {
            let chosen = list.selected().cloned();
            app.query.completion = None;
            if let Some(c) = chosen {
                accept(app, &c);
            }
        }
        KeyCode::Enter if !ctrl => {
            let chosen = list.selected().cloned();
            let typed = list.completion.typed.clone();
            app.query.completion = None;
            match chosen {
                // Enter on what is already typed is a new line, not a choice.
                Some(c) if c.insert != typed => accept(app, &c),
                _ => return None,
            }
        }
        _ => return None,
    }
    Some(Vec::new())
}

fn accept(app: &mut App, c: &Candidate) {
    app.query.editor.replace_before_cursor(c.start, &c.insert);
    app.query.completion = None;
}

/// Offers to add the index the last query was missing: a composite index first (it is
/// what multi-key ORDER BY needs), else an included path.
pub fn suggest_index(app: &mut App) {
    let Some((db, c)) = app.query.target.clone() else {
        return;
    };
    let Some(m) = app
        .query
        .run
        .as_ref()
        .and_then(|r| r.index_metrics.as_ref())
    else {
        app.info("run a query first: its index metrics say what is missing");
        return;
    };
    let composite = m
        .potential_composite_indexes
        .first()
        .map(|x| x.index_specs.clone());
    let single = if composite.is_none() {
        m.potential_single_indexes
            .first()
            .map(|x| x.index_spec.clone())
    } else {
        None
    };
    let what = match (&composite, &single) {
        (Some(specs), _) => format!("the composite index ({})", specs.join(", ")),
        (None, Some(path)) => format!("the included path {path}"),
        (None, None) => {
            app.info("the last query used every index it could; nothing to add");
            return;
        }
    };
    app.layers.push(crate::tui::state::Layer::Confirm {
        text: format!(
            "Add {what} to the indexing policy of {db}/{c}?\nThe index is built in the background; queries stay correct meanwhile."
        ),
        on_yes: crate::tui::state::Confirmed::ApplyIndex {
            db,
            c,
            single,
            composite,
        },
    });
}
