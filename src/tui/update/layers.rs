//! Popups and overlays: help, the palette, prompts, the parameters form, confirmations.
//! Keys go to the top layer first. What a choice leads to in a view (an action, a jump in
//! the tree, an item, a job, the feed's new start) goes back to the router as a request.

use crossterm::event::{KeyCode, KeyEvent};

use super::prompt::after_text_edit;
use super::request::{Reaction, Request};
use crate::tui::action::Action;
use crate::tui::effect::{Effect, JobKind};
use crate::tui::state::list::move_selection;
use crate::tui::state::palette::{Entry, Target};
use crate::tui::state::{App, Confirmed, Focus, Layer, PromptFor};

/// Handles a key for the top layer; `None` lets the action through to the main panes.
pub fn on_layer_key(app: &mut App, key: &KeyEvent, action: Option<Action>) -> Option<Reaction> {
    let top = app.layers.last_mut()?;
    match top {
        Layer::Help { scroll } | Layer::Messages { scroll } => match action {
            Some(Action::Back | Action::Help | Action::Messages) => {
                app.layers.pop();
                Some(Reaction::default())
            }
            Some(Action::Up) => {
                *scroll = scroll.saturating_sub(1);
                Some(Reaction::default())
            }
            Some(Action::Down) => {
                *scroll += 1;
                Some(Reaction::default())
            }
            Some(Action::PageUp) => {
                *scroll = scroll.saturating_sub(10);
                Some(Reaction::default())
            }
            Some(Action::PageDown) => {
                *scroll += 10;
                Some(Reaction::default())
            }
            Some(Action::Quit) => None,
            _ => Some(Reaction::default()),
        },
        Layer::Value { text, scroll, .. } => match action {
            Some(Action::Back | Action::ShowValue) => {
                app.layers.pop();
                Some(Reaction::default())
            }
            Some(Action::CopyValue) => Some(vec![Effect::Copy { text: text.clone() }].into()),
            Some(
                a @ (Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::Top
                | Action::Bottom),
            ) => {
                let last = text.lines().count().saturating_sub(1);
                *scroll = match a {
                    Action::Up => scroll.saturating_sub(1),
                    Action::Down => (*scroll + 1).min(last),
                    Action::PageUp => scroll.saturating_sub(10),
                    Action::PageDown => (*scroll + 10).min(last),
                    Action::Top => 0,
                    _ => last,
                };
                Some(Reaction::default())
            }
            Some(Action::Quit) => None,
            _ => Some(Reaction::default()),
        },
        Layer::History { input, selected } => {
            let matches = |input: &crate::tui::state::editor::TextBuffer| {
                app.query
                    .target_key()
                    .map(|key| app.query.history.search(&key, &input.text()))
                    .unwrap_or_default()
            };
            match action {
                Some(Action::Back) => {
                    app.layers.pop();
                    Some(Reaction::default())
                }
                Some(a @ (Action::Up | Action::Down)) => {
                    let len = matches(input).len();
                    let mut offset = 0;
                    move_selection(selected, &mut offset, len, len.max(1), a);
                    Some(Reaction::default())
                }
                Some(Action::Select) => {
                    let chosen = matches(input).get(*selected).copied();
                    app.layers.pop();
                    Some(chosen.map_or_else(Reaction::default, |i| Request::UseHistory(i).into()))
                }
                Some(Action::Quit | Action::Help) => None,
                Some(_) => Some(Reaction::default()),
                None => {
                    input.handle_key(key);
                    *selected = 0;
                    Some(Reaction::default())
                }
            }
        }
        Layer::Palette => match action {
            Some(Action::Back | Action::Palette) => Some(close_palette(app).into()),
            Some(a @ (Action::Up | Action::Down)) => {
                let len = app.palette.matches.len();
                let mut offset = 0;
                move_selection(&mut app.palette.selected, &mut offset, len, len.max(1), a);
                Some(Reaction::default())
            }
            Some(Action::Select) => Some(choose(app)),
            Some(Action::Quit | Action::Help) => None,
            Some(_) => Some(Reaction::default()),
            None => {
                let before = app.palette.input.text();
                app.palette.input.handle_key(key);
                let after = app.palette.input.text();
                if before != after {
                    app.palette.pattern_changed(after.starts_with(&before));
                }
                Some(Reaction::default())
            }
        },
        Layer::Confirm { .. } => Some(on_confirm_key(app, key, action)),
        Layer::Choose { .. } => Some(on_choice_key(app, key, action)),
        // Its keys are the item view's (the router hands them there first).
        Layer::Conflict(_) => Some(Reaction::default()),
        Layer::Prompt { input, purpose, .. } => match (action, key.code) {
            (_, KeyCode::Enter) => Some(submit_prompt(app)),
            (Some(Action::Back), _) => {
                cancel_prompt(app);
                Some(Reaction::default())
            }
            (Some(Action::Quit), _) => None,
            _ => {
                let tree = *purpose == PromptFor::TreeFilter;
                input.handle_key(key);
                after_text_edit(app, false);
                // The tree filter searches what is not expanded too.
                Some(if tree {
                    Request::RevealTreeMatches.into()
                } else {
                    Reaction::default()
                })
            }
        },
        Layer::Execute(form) => match (action, key.code) {
            (Some(Action::Back), _) => {
                app.layers.pop();
                Some(Reaction::default())
            }
            (Some(Action::RunQuery), _) | (_, KeyCode::Enter) => Some(Request::ExecuteForm.into()),
            (_, KeyCode::Up) | (Some(Action::FocusPrev), _) => {
                form.step(false);
                Some(Reaction::default())
            }
            (_, KeyCode::Down) | (Some(Action::FocusNext), _) => {
                form.step(true);
                Some(Reaction::default())
            }
            (Some(Action::Quit), _) => None,
            _ => {
                match form.text_field() {
                    Some(buf) => {
                        buf.handle_key(key);
                    }
                    // Space (or x) switches the script log on or off.
                    None if matches!(key.code, KeyCode::Char(' ' | 'x')) => form.log = !form.log,
                    None => {}
                }
                Some(Reaction::default())
            }
        },
        Layer::Params { fields, selected } => match (action, key.code) {
            (Some(Action::Back), _) => {
                app.layers.pop();
                Some(Reaction::default())
            }
            (Some(Action::RunQuery), _) | (_, KeyCode::Enter) => {
                save_params(app);
                Some(Request::Act(Action::RunQuery).into())
            }
            (_, KeyCode::Up) | (Some(Action::FocusPrev), _) => {
                *selected = selected.saturating_sub(1);
                Some(Reaction::default())
            }
            (_, KeyCode::Down) | (Some(Action::FocusNext), _) => {
                *selected = (*selected + 1).min(fields.len().saturating_sub(1));
                Some(Reaction::default())
            }
            (Some(Action::Quit), _) => None,
            _ => {
                if let Some((_, buf)) = fields.get_mut(*selected) {
                    buf.handle_key(key);
                }
                Some(Reaction::default())
            }
        },
    }
}

fn submit_prompt(app: &mut App) -> Reaction {
    let Some(Layer::Prompt { input, purpose, .. }) = app.layers.pop() else {
        return Reaction::default();
    };
    let text = input.text();
    match purpose {
        PromptFor::TreeFilter => {
            // Enter keeps the filter; an empty one is cleared.
            app.tree.filter = (!text.is_empty()).then_some(text);
            app.tree.refilter();
            Reaction::default()
        }
        PromptFor::FeedFilter => {
            app.feed.tail.set_filter(&text);
            Reaction::default()
        }
        PromptFor::ResultsFilter => {
            app.query.filter = (!text.trim().is_empty()).then_some(text);
            app.query.refresh_rows();
            Reaction::default()
        }
        PromptFor::RequestsFilter => {
            app.requests.tail.set_filter(&text);
            Reaction::default()
        }
        PromptFor::FeedStartTime => Request::RestartFeed { from: text }.into(),
        PromptFor::SampleName => {
            let name = text.trim().to_string();
            Request::StartJob {
                title: format!("loading {name}"),
                job: JobKind::LoadSample { name },
            }
            .into()
        }
        PromptFor::ResultsExport => Request::ExportResult { path: text }.into(),
        PromptFor::Advisor(field) => Request::AdvisorAnswer { field, text }.into(),
        PromptFor::NewScript { db, c, kind } => Request::NewScript {
            db,
            c,
            kind,
            answer: text,
        }
        .into(),
        PromptFor::ExportPath { db, c } => Request::StartJob {
            title: format!("exporting {db}/{c}"),
            job: JobKind::Export {
                db,
                c,
                path: text.trim().to_string(),
            },
        }
        .into(),
    }
}

fn cancel_prompt(app: &mut App) {
    if let Some(Layer::Prompt { purpose, .. }) = app.layers.pop() {
        match purpose {
            PromptFor::TreeFilter => {
                app.tree.filter = None;
                app.tree.refilter();
            }
            PromptFor::FeedFilter => app.feed.tail.set_filter(""),
            PromptFor::ResultsFilter => {
                app.query.filter = None;
                app.query.refresh_rows();
            }
            PromptFor::RequestsFilter => app.requests.tail.set_filter(""),
            PromptFor::FeedStartTime
            | PromptFor::SampleName
            | PromptFor::ExportPath { .. }
            | PromptFor::NewScript { .. }
            | PromptFor::ResultsExport
            | PromptFor::Advisor(_) => {}
        }
    }
}

/// Esc without a layer: clear a filter, leave the editor.
pub fn back(app: &mut App) -> Vec<Effect> {
    if app.layers.pop().is_some() {
        return Vec::new();
    }
    if app.focus == Focus::View
        && app.view == crate::tui::state::View::Query
        && app.query.filter.take().is_some()
    {
        app.query.refresh_rows();
        return Vec::new();
    }
    if app.tree.filter.take().is_some() {
        return Vec::new();
    }
    if app.focus == Focus::Editor {
        app.focus = Focus::View;
    } else if app.focus == Focus::View {
        app.focus = Focus::Tree;
    }
    Vec::new()
}

pub fn open_palette(app: &mut App) -> Vec<Effect> {
    let mut effects = Vec::new();
    if let Some(t) = app.palette.streaming.take() {
        effects.push(Effect::StopPalette { ticket: t });
    }
    app.palette.restart();
    let mut injector = app.palette.injector();
    for a in crate::tui::action::Action::ALL {
        // The gateway's entry says what choosing it does now.
        let description = match a {
            Action::Gateway => app.gateway.action_title(),
            _ => a.description().to_string(),
        };
        Entry {
            text: format!("{} — {description}", a.name()),
            kind: "action",
            target: Target::Action(*a),
        }
        .push_into(&mut injector);
    }
    let ticket = app.ticket();
    app.palette.streaming = Some(ticket);
    app.layers.push(Layer::Palette);
    effects.push(Effect::StreamPalette { ticket });
    effects
}

/// Every entry is in the palette: its matching stops showing as busy.
pub fn on_palette_done(app: &mut App, ticket: u64) -> Vec<Effect> {
    if app.palette.streaming == Some(ticket) {
        app.palette.streaming = None;
    }
    Vec::new()
}

fn close_palette(app: &mut App) -> Vec<Effect> {
    app.layers.retain(|l| !matches!(l, Layer::Palette));
    match app.palette.streaming.take() {
        Some(t) => vec![Effect::StopPalette { ticket: t }],
        None => Vec::new(),
    }
}

fn choose(app: &mut App) -> Reaction {
    let Some(entry) = app.palette.selected_entry().cloned() else {
        return Reaction::default();
    };
    let effects = close_palette(app);
    let request = match entry.target {
        Target::Action(a) => Request::Act(a),
        Target::Database(db) => Request::JumpTo(vec![db]),
        Target::Container { db, c } => {
            app.container = Some((db.clone(), c.clone()));
            Request::JumpTo(vec![db, c])
        }
        Target::Range { db, c, range } => {
            app.container = Some((db.clone(), c.clone()));
            Request::JumpTo(vec![db, c, format!("r{range}")])
        }
        Target::Logical { db, c, range, pk } => {
            app.container = Some((db.clone(), c.clone()));
            Request::JumpTo(vec![db, c, format!("r{range}"), pk.to_string()])
        }
        Target::Item { db, c, pk, id } => {
            app.container = Some((db.clone(), c.clone()));
            app.focus = Focus::View;
            Request::ReadItem { db, c, id, pk }
        }
        Target::Script { db, c, kind, id } => {
            app.container = Some((db.clone(), c.clone()));
            app.focus = Focus::View;
            Request::ShowScript { db, c, kind, id }
        }
    };
    Reaction::then(effects, request)
}

fn save_params(app: &mut App) {
    if let Some(Layer::Params { fields, .. }) = app.layers.pop() {
        for (name, buf) in fields {
            app.query.params.insert(name, buf.text());
        }
    }
}

fn on_confirm_key(app: &mut App, key: &KeyEvent, action: Option<Action>) -> Reaction {
    let yes = matches!(
        key.code,
        KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter
    );
    let no =
        matches!(key.code, KeyCode::Char('n') | KeyCode::Char('N')) || action == Some(Action::Back);
    if !yes && !no {
        return Reaction::default();
    }
    let Some(Layer::Confirm { on_yes, .. }) = app.layers.pop() else {
        return Reaction::default();
    };
    if no {
        app.info("cancelled");
        return Reaction::default();
    }
    perform(app, on_yes)
}

/// A choice among a few answers, each picked by its key; Esc picks none.
fn on_choice_key(app: &mut App, key: &KeyEvent, action: Option<Action>) -> Reaction {
    if action == Some(Action::Back) {
        app.layers.pop();
        app.info("cancelled");
        return Reaction::default();
    }
    let KeyCode::Char(pressed) = key.code else {
        return Reaction::default();
    };
    let Some(Layer::Choose { choices, .. }) = app.layers.last() else {
        return Reaction::default();
    };
    let Some(at) = choices
        .iter()
        .position(|c| c.key.eq_ignore_ascii_case(&pressed))
    else {
        return Reaction::default();
    };
    let Some(Layer::Choose { mut choices, .. }) = app.layers.pop() else {
        return Reaction::default();
    };
    perform(app, choices.swap_remove(at).then)
}

/// Does what a confirmation or a choice was about.
fn perform(app: &mut App, on_yes: Confirmed) -> Reaction {
    let ticket = app.ticket();
    let effects = match on_yes {
        Confirmed::Job { title, job } => return Request::StartJob { title, job }.into(),
        Confirmed::RunQuery => super::query::run(app),
        Confirmed::ListRange { key } => return super::tree::list_range(app, key),
        Confirmed::SetWrites { on } => vec![Effect::SetWrites { on }],
        Confirmed::DeleteItem {
            db,
            c,
            id,
            pk,
            etag,
        } => vec![Effect::DeleteItem {
            ticket,
            db,
            c,
            id,
            pk,
            if_match: etag,
        }],
        Confirmed::ApplyIndex {
            db,
            c,
            single,
            composite,
        } => vec![Effect::ApplyIndex {
            db,
            c,
            single,
            composite,
        }],
        Confirmed::Reedit {
            db,
            c,
            text,
            original,
            if_match,
            create,
        } => vec![Effect::Edit {
            db,
            c,
            text,
            original: Some(original),
            if_match,
            create,
        }],
        Confirmed::DeleteScript { db, c, kind, id } => {
            vec![Effect::DeleteScript { db, c, kind, id }]
        }
        Confirmed::ReeditScript {
            db,
            c,
            spec,
            original,
            create,
        } => vec![Effect::EditScript {
            db,
            c,
            spec,
            original: Some(original),
            create,
        }],
        Confirmed::SaveItem {
            db,
            c,
            body,
            if_match,
            create,
        } => vec![Effect::SaveItem {
            ticket,
            db,
            c,
            body,
            if_match,
            create,
        }],
    };
    effects.into()
}
