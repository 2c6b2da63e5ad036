//! `update`: the only place state changes. It takes a message, changes the state and
//! returns the effects to run; it never performs I/O and never waits.
//!
//! This file is the router: it hands each message, key and action to the view it is for,
//! and it is the one place that goes from one view to another. The view modules (`tree`,
//! `item`, `query`, `feed` with partitions, `jobs` with the workbench, `requests` with the
//! gateway, `advisor` for the partition-key advisor, `layers` for the popups) never call each other: a reaction that reaches another view comes back as a
//! `Reaction` naming a `Request` (see `request`), and `route` here carries it out.
//! Below the views sit what they all may use: `request` (those types) and `prompt`
//! (asking for text); the list movement and document helpers they share are in `state`.

mod advisor;
mod details;
mod feed;
mod item;
mod jobs;
mod layers;
mod mouse;
mod prompt;
mod query;
mod request;
mod requests;
mod script;
mod tree;
mod writes;

use crossterm::event::KeyEvent;

use super::action::Action;
use super::effect::Effect;
use super::keymap::Chord;
use super::msg::Msg;
use super::state::{App, Focus, Layer, View};
use request::{Reaction, Request};

/// Applies one message; when it moved the selection to another container, the views
/// that work on the selected container follow it.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let before = app.container.clone();
    let mut effects = dispatch(app, msg);
    if app.container != before {
        effects.extend(follow_selection(app));
    }
    effects
}

/// The views that work on the selected container move to the one just selected: the
/// query console (keeping its text), the feed and partitions views when they are shown.
fn follow_selection(app: &mut App) -> Vec<Effect> {
    query::follow(app);
    match app.view {
        View::Feed => feed::follow(app),
        View::Partitions => {
            app.partitions.target = app.container.clone();
            feed::load_partitions(app)
        }
        _ => Vec::new(),
    }
}

/// Hands each message to the view it is for. One arm per kind of message, most a single
/// call: long because it is the table of them all, not because it does much.
fn dispatch(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(key) => on_key(app, key),
        Msg::Mouse(m) => on_mouse(app, &m),
        Msg::Paste(text) => on_paste(app, &text),
        Msg::Tick { now } => on_tick(app, now),
        Msg::Children {
            generation,
            key,
            append,
            result,
        } => route(tree::on_children(app, generation, key, append, result), app),
        Msg::TreeProbe { generation, result } => tree::on_probe(app, generation, result),
        Msg::Item { ticket, result } => item::on_item(app, ticket, result),
        Msg::QueryPage {
            ticket,
            result,
            elapsed_ms,
        } => query::on_page(app, ticket, result, elapsed_ms),
        Msg::QueryProgress { ticket, progress } => {
            // A range of the running query finished: the strip lights it.
            if app.query.running == Some(ticket)
                && let Some(run) = app.query.run.as_mut()
            {
                run.progress.insert(progress.range.clone(), progress);
            }
            Vec::new()
        }
        Msg::QueryEstimate { sql, result } => query::on_estimate(app, sql, result),
        Msg::Ranges {
            ticket,
            db,
            c,
            pk_paths,
            ranges,
        } => {
            if requests::awaits_ranges(app, ticket) {
                requests::on_ranges(app, db, c, pk_paths, ranges)
            } else {
                query::on_ranges(app, ticket, db, c, pk_paths, ranges)
            }
        }
        Msg::Partitions { ticket, result } => feed::on_partitions(app, ticket, result),
        Msg::Schema { db, c, result } => {
            query::on_schema(app, db, c, result);
            Vec::new()
        }
        Msg::FeedBatch {
            ticket,
            rows,
            request_charge,
        } => feed::on_batch(app, ticket, rows, request_charge),
        Msg::FeedError { ticket, error } => feed::on_error(app, ticket, error),
        Msg::PaletteDone { ticket } => layers::on_palette_done(app, ticket),
        Msg::Edited {
            db,
            c,
            original,
            result,
            if_match,
            create,
        } => item::on_edited(app, db, c, original, result, if_match, create),
        Msg::Saved {
            ticket: _,
            result,
            db,
            c,
            pk_paths,
            body,
        } => {
            if !pk_paths.is_empty() {
                app.pk_paths.insert((db.clone(), c.clone()), pk_paths);
            }
            route(item::on_saved(app, result, db, c, body), app)
        }
        Msg::Deleted {
            ticket: _,
            result,
            id,
        } => route(item::on_deleted(app, result, id), app),
        Msg::Copied(result) => on_copied(app, result),
        Msg::QueryEdited(result) => {
            query::on_edited(app, result);
            Vec::new()
        }
        Msg::Applied(result) => query::on_applied(app, result),
        Msg::WritesSet { on, result } => {
            writes::on_set(app, on, result);
            Vec::new()
        }
        Msg::Details {
            ticket,
            db,
            c,
            result,
        } => details::on_details(app, ticket, db, c, result),
        Msg::ScriptRead { ticket, result } => script::on_read(app, ticket, result),
        Msg::ScriptEdited {
            db,
            c,
            spec,
            create,
            result,
        } => script::on_edited(app, db, c, spec, create, result),
        Msg::ScriptSaved {
            ticket: _,
            db,
            c,
            spec,
            create,
            result,
        } => route(script::on_saved(app, db, c, spec, create, result), app),
        Msg::ScriptDeleted {
            db,
            c,
            kind,
            id,
            result,
        } => route(script::on_deleted(app, db, c, kind, id, result), app),
        Msg::Executed { ticket, result } => route(script::on_executed(app, ticket, result), app),
        Msg::WorkbenchReport { ticket, report } => jobs::on_workbench_report(app, ticket, *report),
        Msg::JobProgress {
            ticket,
            done,
            total,
        } => jobs::on_progress(app, ticket, done, total),
        Msg::AdvisorProgress { ticket, progress } => advisor::on_progress(app, ticket, &progress),
        Msg::Advice { ticket, advice } => advisor::on_advice(app, ticket, *advice),
        Msg::JobDone { ticket, result } => {
            advisor::on_job_done(app, ticket, &result);
            route(jobs::on_done(app, ticket, result), app)
        }
        Msg::History(entries) => {
            app.query.history.entries = entries;
            Vec::new()
        }
        Msg::GatewayStarted { ticket, result } => requests::on_started(app, ticket, result),
        Msg::GatewayStopped { ticket } => requests::on_stopped(app, ticket),
        Msg::Traffic { exchanges, rate } => route(requests::on_traffic(app, exchanges, rate), app),
    }
}

/// The first effects of a session: load the tree, and start the gateway when the session
/// was opened with it (`--serve`).
pub fn start(app: &mut App) -> Vec<Effect> {
    let mut effects = tree::reload(app);
    // The first frame comes at once; the samples of a new store load behind it, and the
    // tree's probe shows their databases as they arrive.
    if let Some(dir) = app.first_launch.take() {
        effects.extend(jobs::start(
            app,
            "first launch: loading the bundled samples".into(),
            crate::tui::effect::JobKind::FirstLaunch { dir },
        ));
    }
    if app.gateway.at_launch {
        effects.extend(requests::start(app));
    }
    effects
}

/// Carries out a view's reaction: its own effects, then what it asked of another view
/// (whose reaction may in turn ask for more). The reaction comes first so the view call
/// that borrows `app` can be written in place: `route(tree::navigate(app, a), app)`.
fn route(reaction: Reaction, app: &mut App) -> Vec<Effect> {
    let Reaction { mut effects, then } = reaction;
    if let Some(request) = then {
        effects.extend(carry_out(app, request));
    }
    effects
}

/// Hands a request to the view it is for.
fn carry_out(app: &mut App, request: Request) -> Vec<Effect> {
    match request {
        Request::Act(action) => act(app, action),
        Request::ReloadTree => tree::reload(app),
        Request::RevealTreeMatches => tree::reveal_matches(app),
        Request::JumpTo(path) => route(tree::jump(app, &path), app),
        Request::ReadItem { db, c, id, pk } => item::read(app, db, c, id, pk),
        Request::ShowScript { db, c, kind, id } => script::read(app, db, c, kind, id, false),
        Request::NewScript {
            db,
            c,
            kind,
            answer,
        } => script::begin_new(app, db, c, kind, &answer),
        Request::ExecuteForm => script::submit_form(app),
        Request::UseHistory(index) => {
            query::use_history(app, index);
            Vec::new()
        }
        Request::ExportResult { path } => route(query::export_to(app, path), app),
        Request::StartJob { title, job } => jobs::start(app, title, job),
        Request::RestartFeed { from } => feed::restart_from(app, &from),
        Request::AdvisorAnswer { field, text } => {
            let effects = route(advisor::on_answer(app, field, text), app);
            advisor::started(app);
            effects
        }
    }
}

fn on_tick(app: &mut App, now: i64) -> Vec<Effect> {
    let mut effects = Vec::new();
    let new_second = now != app.now;
    app.now = now;
    // The application's last item writes reach the tree once a reload is due.
    if let Some(request) = requests::reload_tree(app, false) {
        effects.extend(carry_out(app, request));
    }
    effects.extend(tree::probe_due(app));
    app.feed.tick(now);
    // The partitions view follows load and splits live, once a second.
    if new_second && app.view == View::Partitions && app.partitions.loading.is_none() {
        effects.extend(feed::load_partitions(app));
    }
    // A filter typed in the prompt may have selected another query.
    if app.view == View::Requests {
        effects.extend(requests::ensure_ranges(app));
    }
    effects
}

fn on_paste(app: &mut App, text: &str) -> Vec<Effect> {
    if let Some(buf) = prompt::text_field(app) {
        buf.insert_str(text);
        prompt::after_text_edit(app, true);
        return Vec::new();
    }
    if app.focus == Focus::Editor {
        app.query.completion = None;
        app.query.editor.insert_str(text);
    }
    Vec::new()
}

/// A click focuses the pane under it (and selects the row), the wheel scrolls the list
/// under it: the same actions keys send.
fn on_mouse(app: &mut App, m: &crossterm::event::MouseEvent) -> Vec<Effect> {
    let intent = mouse::intent(app, m);
    if let Some(focus) = intent.focus {
        app.focus = focus;
    }
    intent
        .actions
        .into_iter()
        .flat_map(|a| act(app, a))
        .collect()
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if key.kind != crossterm::event::KeyEventKind::Press {
        return Vec::new();
    }
    let mode = app.mode();
    let action = Chord::from_event(&key).and_then(|c| app.keymap.resolve(mode, &c));
    // The conflict view's choices belong to the item view.
    if matches!(app.layers.last(), Some(Layer::Conflict(_))) && action != Some(Action::Quit) {
        let back = action == Some(Action::Back);
        return route(item::on_conflict_key(app, &key, back), app);
    }
    if !app.layers.is_empty() {
        if let Some(reaction) = layers::on_layer_key(app, &key, action) {
            return route(reaction, app);
        }
    } else if app.focus == Focus::Editor {
        if app.query.completion.is_some()
            && let Some(effects) = query::completion_key(app, &key)
        {
            return effects;
        }
        if action.is_none() {
            if app.query.editor.handle_key(&key) {
                query::after_edit(app, &key);
            }
            return Vec::new();
        }
    }
    match action {
        Some(a) => act(app, a),
        None => Vec::new(),
    }
}

/// Performs one action in the current context. One arm per action (the keymap's whole
/// vocabulary), each a line or a call into its view: long because it is that table.
pub fn act(app: &mut App, action: Action) -> Vec<Effect> {
    app.message = None;
    if action != Action::Complete {
        app.query.completion = None;
    }
    if writes::refused(app, action) {
        return Vec::new();
    }
    match action {
        Action::Quit => quit(app),
        Action::Help => {
            app.layers.push(Layer::Help { scroll: 0 });
            Vec::new()
        }
        Action::Messages => {
            // Opened at the newest message.
            let scroll = app.log.len().saturating_sub(1);
            app.layers.push(Layer::Messages { scroll });
            Vec::new()
        }
        Action::Zoom => {
            app.zoom = !app.zoom;
            Vec::new()
        }
        Action::Palette => layers::open_palette(app),
        Action::Back => layers::back(app),
        Action::FocusNext | Action::FocusPrev => {
            cycle_focus(app, action == Action::FocusNext);
            Vec::new()
        }
        Action::ShowItem => show(app, View::Item),
        Action::ShowQuery => show(app, View::Query),
        Action::ShowFeed => show(app, View::Feed),
        Action::ShowPartitions => show(app, View::Partitions),
        Action::ShowWorkbench => show(app, View::Workbench),
        Action::ShowRequests => show(app, View::Requests),
        Action::ShowAdvisor => advisor::open(app),
        Action::AdvisorWorkload | Action::AdvisorCandidates | Action::AdvisorCopy => {
            route(advisor::act(app, action), app)
        }
        Action::WorkbenchSuite => {
            jobs::next_suite(app);
            Vec::new()
        }
        Action::RunQuery => query::run(app),
        Action::CancelQuery => {
            if app.query.running.is_some() {
                query::cancel(app)
            } else {
                jobs::cancel(app)
            }
        }
        Action::ApplyIndex => {
            query::suggest_index(app);
            Vec::new()
        }
        Action::LoadSample => {
            jobs::ask_sample(app);
            Vec::new()
        }
        Action::Export => {
            jobs::ask_export(app);
            Vec::new()
        }
        Action::QueryParams => {
            prompt::open_params(app);
            Vec::new()
        }
        Action::NewQuery => {
            query::new_query(app);
            query::ensure_schema(app)
        }
        Action::Complete => query::complete(app),
        Action::EditQuery => query::edit(app),
        Action::HistoryPrev | Action::HistoryNext => {
            query::history_step(app, action == Action::HistoryPrev);
            Vec::new()
        }
        Action::SearchHistory => {
            query::search_history(app);
            Vec::new()
        }
        Action::ToggleResults => {
            query::toggle_mode(app);
            Vec::new()
        }
        Action::FocusEditor => {
            app.view = View::Query;
            app.focus = Focus::Editor;
            query::ensure_schema(app)
        }
        Action::LoadMore => query::load_more(app),
        Action::ExportResults => {
            query::ask_export(app);
            Vec::new()
        }
        Action::ShowValue => {
            query::show_value(app);
            Vec::new()
        }
        Action::FeedPause
        | Action::FeedMode
        | Action::FeedStart
        | Action::FeedClear
        | Action::FeedScope => feed::act(app, action),
        Action::Gateway | Action::RequestsPause | Action::RequestsClear => {
            requests::act(app, action)
        }
        Action::ExecuteScript => script::act(app, action),
        Action::ToggleWrites => writes::toggle(app),
        Action::Details => details::show(app),
        Action::EditItem | Action::NewItem | Action::DeleteItem if script::applies(app) => {
            script::act(app, action)
        }
        Action::EditItem | Action::NewItem | Action::DeleteItem | Action::ToggleSystem => {
            item::act(app, action)
        }
        Action::CopyValue
            if app.focus == Focus::View && app.view == View::Item && app.script.is_some() =>
        {
            script::act(app, action)
        }
        Action::CopyValue | Action::CopyPath => copy(app, action),
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom
        | Action::Left
        | Action::Right
        | Action::Select
        | Action::Expand
        | Action::Collapse
        | Action::Refresh
        | Action::Sort
        | Action::Filter => navigate(app, action),
    }
}

/// Ends the session: stops the feed, the query and the job.
fn quit(app: &mut App) -> Vec<Effect> {
    app.quit = true;
    let mut effects = Vec::new();
    if let Some(t) = app.feed.subscription.take() {
        effects.push(Effect::Unsubscribe { ticket: t });
    }
    if let Some(t) = app.query.running.take() {
        effects.push(Effect::CancelQuery { ticket: t });
    }
    if let Some(j) = app.job.take() {
        effects.push(Effect::CancelJob { ticket: j.ticket });
    }
    effects
}

/// Moves focus to the next pane (`forward`) or the previous one; the editor is a pane
/// only in the query view.
fn cycle_focus(app: &mut App, forward: bool) {
    app.focus = if forward {
        match (app.focus, app.view) {
            (Focus::Tree, View::Query) => Focus::Editor,
            (Focus::Tree, _) => Focus::View,
            (Focus::Editor, _) => Focus::View,
            (Focus::View, _) => Focus::Tree,
        }
    } else {
        match (app.focus, app.view) {
            (Focus::Tree, _) => Focus::View,
            (Focus::View, View::Query) => Focus::Editor,
            (Focus::View, _) | (Focus::Editor, _) => Focus::Tree,
        }
    };
}

fn show(app: &mut App, view: View) -> Vec<Effect> {
    app.view = view;
    app.focus = if view == View::Query {
        Focus::Editor
    } else {
        Focus::View
    };
    match view {
        View::Query => {
            if app.query.target.is_none() {
                query::new_query(app);
            }
            query::ensure_schema(app)
        }
        View::Feed => feed::follow(app),
        View::Partitions => {
            app.partitions.target = app.container.clone();
            feed::load_partitions(app)
        }
        View::Requests => requests::ensure_ranges(app),
        View::Advisor => advisor::open(app),
        View::Item | View::Workbench => Vec::new(),
    }
}

/// Moves within whatever has focus.
fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    match (app.focus, app.view) {
        (Focus::Tree, _) => route(tree::navigate(app, action), app),
        (Focus::View, View::Item) if app.script.is_some() => script::navigate(app, action),
        (Focus::View, View::Item) if app.details.is_some() => details::navigate(app, action),
        (Focus::View, View::Item) => item::navigate(app, action),
        (Focus::View, View::Query) => query::navigate(app, action),
        (Focus::View, View::Feed) => feed::navigate(app, action),
        (Focus::View, View::Partitions) => feed::navigate_partitions(app, action),
        (Focus::View, View::Workbench) => jobs::navigate_workbench(app, action),
        (Focus::View, View::Requests) => requests::navigate(app, action),
        (Focus::View, View::Advisor) => {
            let effects = route(advisor::navigate(app, action), app);
            advisor::started(app);
            effects
        }
        (Focus::Editor, _) => Vec::new(),
    }
}

fn copy(app: &mut App, action: Action) -> Vec<Effect> {
    let text = match (app.focus, app.view) {
        (Focus::View, View::Item) => app.item.as_ref().and_then(|i| {
            if action == Action::CopyPath {
                i.tree.selected_path()
            } else {
                i.tree.selected_value()
            }
        }),
        (Focus::View, View::Query) => app
            .query
            .selected_document()
            .and_then(|d| serde_json::to_string_pretty(d).ok()),
        (Focus::View, View::Feed) => app
            .feed
            .tail
            .selected_row()
            .and_then(|r| r.current.as_ref())
            .and_then(|d| serde_json::to_string_pretty(d).ok()),
        (Focus::View, View::Requests) => requests::copy_text(app),
        _ => None,
    };
    match text {
        Some(text) => vec![Effect::Copy { text }],
        None => {
            app.info("nothing to copy here");
            Vec::new()
        }
    }
}

fn on_copied(app: &mut App, result: Result<&'static str, String>) -> Vec<Effect> {
    match result {
        Ok(how) => app.info(format!("copied ({how})")),
        Err(e) => app.error(format!("copy failed: {e}")),
    }
    Vec::new()
}
