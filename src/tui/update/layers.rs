//! Popups and overlays: help, the palette, prompts, the parameters form, confirmations.
//! Keys go to the top layer first.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Effect, act, move_selection};
use crate::tui::action::Action;
use crate::tui::state::editor::TextBuffer;
use crate::tui::state::feed::FeedFilter;
use crate::tui::state::palette::{Entry, Target};
use crate::tui::state::{App, Confirmed, Focus, Layer, PromptFor};

/// Handles a key for the top layer; `None` lets the action through to the main panes.
pub fn on_layer_key(app: &mut App, key: &KeyEvent, action: Option<Action>) -> Option<Vec<Effect>> {
    let top = app.layers.last_mut()?;
    match top {
        Layer::Help { scroll } => match action {
            Some(Action::Back | Action::Help) => {
                app.layers.pop();
                Some(Vec::new())
            }
            Some(Action::Up) => {
                *scroll = scroll.saturating_sub(1);
                Some(Vec::new())
            }
            Some(Action::Down) => {
                *scroll += 1;
                Some(Vec::new())
            }
            Some(Action::PageUp) => {
                *scroll = scroll.saturating_sub(10);
                Some(Vec::new())
            }
            Some(Action::PageDown) => {
                *scroll += 10;
                Some(Vec::new())
            }
            Some(Action::Quit) => None,
            _ => Some(Vec::new()),
        },
        Layer::Palette => match action {
            Some(Action::Back | Action::Palette) => Some(close_palette(app)),
            Some(a @ (Action::Up | Action::Down)) => {
                let len = app.palette.matches.len();
                let mut offset = 0;
                move_selection(&mut app.palette.selected, &mut offset, len, len.max(1), a);
                Some(Vec::new())
            }
            Some(Action::Select) => Some(choose(app)),
            Some(Action::Quit | Action::Help) => None,
            Some(_) => Some(Vec::new()),
            None => {
                let before = app.palette.input.text();
                app.palette.input.handle_key(key);
                let after = app.palette.input.text();
                if before != after {
                    app.palette.pattern_changed(after.starts_with(&before));
                }
                Some(Vec::new())
            }
        },
        Layer::Confirm { .. } => Some(on_confirm_key(app, key, action)),
        Layer::Prompt { input, .. } => match (action, key.code) {
            (_, KeyCode::Enter) => Some(submit_prompt(app)),
            (Some(Action::Back), _) => {
                cancel_prompt(app);
                Some(Vec::new())
            }
            (Some(Action::Quit), _) => None,
            _ => {
                input.handle_key(key);
                Some(after_text_edit(app, false))
            }
        },
        Layer::Params { fields, selected } => match (action, key.code) {
            (Some(Action::Back), _) => {
                app.layers.pop();
                Some(Vec::new())
            }
            (Some(Action::RunQuery), _) | (_, KeyCode::Enter) => {
                save_params(app);
                Some(act(app, Action::RunQuery))
            }
            (_, KeyCode::Up) | (Some(Action::FocusPrev), _) => {
                *selected = selected.saturating_sub(1);
                Some(Vec::new())
            }
            (_, KeyCode::Down) | (Some(Action::FocusNext), _) => {
                *selected = (*selected + 1).min(fields.len().saturating_sub(1));
                Some(Vec::new())
            }
            (Some(Action::Quit), _) => None,
            _ => {
                if let Some((_, buf)) = fields.get_mut(*selected) {
                    buf.handle_key(key);
                }
                Some(Vec::new())
            }
        },
    }
}

/// The text field of the top layer, if it has one.
pub fn text_field(app: &mut App) -> Option<&mut TextBuffer> {
    match app.layers.last_mut()? {
        Layer::Palette => Some(&mut app.palette.input),
        Layer::Prompt { input, .. } => Some(input),
        Layer::Params { fields, selected } => fields.get_mut(*selected).map(|(_, b)| b),
        _ => None,
    }
}

/// Live reactions to typing: the tree and feed filters apply as you type.
pub fn after_text_edit(app: &mut App, appended: bool) -> Vec<Effect> {
    match app.layers.last() {
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::TreeFilter,
            ..
        }) => {
            app.tree.filter = Some(input.text());
            super::tree::refilter(app);
        }
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::FeedFilter,
            ..
        }) => {
            app.feed.filter = FeedFilter::parse(&input.text());
            app.feed.selected = 0;
        }
        Some(Layer::Palette) => app.palette.pattern_changed(appended),
        _ => {}
    }
    Vec::new()
}

pub fn open_prompt(app: &mut App, title: &str, purpose: PromptFor) {
    let initial = match &purpose {
        PromptFor::TreeFilter => app.tree.filter.clone().unwrap_or_default(),
        PromptFor::FeedFilter => app.feed.filter.text.clone(),
        PromptFor::FeedStartTime | PromptFor::SampleName => String::new(),
        PromptFor::ExportPath { db, c } => format!("{db}-{c}.ndjson"),
    };
    app.layers.push(Layer::Prompt {
        title: title.to_string(),
        input: TextBuffer::new(&initial, false),
        purpose,
    });
    after_text_edit(app, false);
}

fn submit_prompt(app: &mut App) -> Vec<Effect> {
    let Some(Layer::Prompt { input, purpose, .. }) = app.layers.pop() else {
        return Vec::new();
    };
    let text = input.text();
    match purpose {
        PromptFor::TreeFilter => {
            // Enter keeps the filter; an empty one is cleared.
            app.tree.filter = (!text.is_empty()).then_some(text);
            super::tree::refilter(app);
            Vec::new()
        }
        PromptFor::FeedFilter => {
            app.feed.filter = FeedFilter::parse(&text);
            Vec::new()
        }
        PromptFor::FeedStartTime => super::feed::restart_from(app, &text),
        PromptFor::SampleName => {
            let name = text.trim().to_string();
            super::jobs::start(
                app,
                format!("loading {name}"),
                crate::tui::effect::JobKind::LoadSample { name },
            )
        }
        PromptFor::ExportPath { db, c } => super::jobs::start(
            app,
            format!("exporting {db}/{c}"),
            crate::tui::effect::JobKind::Export {
                db,
                c,
                path: text.trim().to_string(),
            },
        ),
    }
}

fn cancel_prompt(app: &mut App) {
    if let Some(Layer::Prompt { purpose, .. }) = app.layers.pop() {
        match purpose {
            PromptFor::TreeFilter => {
                app.tree.filter = None;
                super::tree::refilter(app);
            }
            PromptFor::FeedFilter => app.feed.filter = FeedFilter::default(),
            PromptFor::FeedStartTime | PromptFor::SampleName | PromptFor::ExportPath { .. } => {}
        }
    }
}

/// Esc without a layer: clear a filter, leave the editor.
pub fn back(app: &mut App) -> Vec<Effect> {
    if app.layers.pop().is_some() {
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
    let injector = app.palette.injector();
    for a in crate::tui::action::Action::ALL {
        Entry {
            text: format!("{} — {}", a.name(), a.description()),
            kind: "action",
            target: Target::Action(*a),
        }
        .push_into(&injector);
    }
    let ticket = app.ticket();
    app.palette.streaming = Some(ticket);
    app.layers.push(Layer::Palette);
    effects.push(Effect::StreamPalette { ticket });
    effects
}

fn close_palette(app: &mut App) -> Vec<Effect> {
    app.layers.retain(|l| !matches!(l, Layer::Palette));
    match app.palette.streaming.take() {
        Some(t) => vec![Effect::StopPalette { ticket: t }],
        None => Vec::new(),
    }
}

fn choose(app: &mut App) -> Vec<Effect> {
    let Some(entry) = app.palette.selected_entry().cloned() else {
        return Vec::new();
    };
    let mut effects = close_palette(app);
    effects.extend(match entry.target {
        Target::Action(a) => act(app, a),
        Target::Database(db) => jump(app, &[db]),
        Target::Container { db, c } => {
            app.container = Some((db.clone(), c.clone()));
            jump(app, &[db, c])
        }
        Target::Range { db, c, range } => {
            app.container = Some((db.clone(), c.clone()));
            jump(app, &[db, c, format!("r{range}")])
        }
        Target::Item { db, c, pk, id } => {
            app.container = Some((db.clone(), c.clone()));
            app.focus = Focus::View;
            super::item::read(app, db, c, id, pk)
        }
    });
    effects
}

/// Selects the tree node at `path` (database, container, range), expanding what leads
/// to it; levels not loaded yet are loaded and the selection lands once they arrive.
pub fn jump(app: &mut App, path: &[String]) -> Vec<Effect> {
    app.tree.filter = None;
    app.focus = Focus::Tree;
    app.tree.pending_jump = None;
    let mut effects = Vec::new();
    let mut key = String::new();
    for (depth, part) in path.iter().enumerate() {
        key = if depth == 0 {
            part.clone()
        } else {
            format!("{key}\u{1f}{part}")
        };
        let Some(i) = app.tree.find(&key) else {
            break;
        };
        app.tree.selected = i;
        if depth + 1 < path.len() && !app.tree.nodes[i].expanded {
            effects.extend(super::tree::navigate(app, Action::Expand));
            // Finish when the level arrives.
            app.tree.pending_jump = Some(path.to_vec());
            break;
        }
    }
    effects
}

pub fn open_params(app: &mut App) {
    let names = app.query.param_names();
    if names.is_empty() {
        app.info("the query has no @parameters");
        return;
    }
    let fields = names
        .into_iter()
        .map(|n| {
            let value = app.query.params.get(&n).cloned().unwrap_or_default();
            (n, TextBuffer::new(&value, false))
        })
        .collect();
    app.layers.push(Layer::Params {
        fields,
        selected: 0,
    });
}

fn save_params(app: &mut App) {
    if let Some(Layer::Params { fields, .. }) = app.layers.pop() {
        for (name, buf) in fields {
            app.query.params.insert(name, buf.text());
        }
    }
}

fn on_confirm_key(app: &mut App, key: &KeyEvent, action: Option<Action>) -> Vec<Effect> {
    let yes = matches!(
        key.code,
        KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter
    );
    let no =
        matches!(key.code, KeyCode::Char('n') | KeyCode::Char('N')) || action == Some(Action::Back);
    if !yes && !no {
        return Vec::new();
    }
    let Some(Layer::Confirm { on_yes, .. }) = app.layers.pop() else {
        return Vec::new();
    };
    if no {
        app.info("cancelled");
        return Vec::new();
    }
    let ticket = app.ticket();
    match on_yes {
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
    }
}
