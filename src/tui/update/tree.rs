//! The resource tree's reactions: expanding levels, paging, selecting items, filtering.

use nucleo::Matcher;
use nucleo::pattern::{CaseMatching, Normalization, Pattern};

use super::{Effect, move_selection};
use crate::error::Error;
use crate::tui::action::Action;
use crate::tui::state::tree::NodeKind;
use crate::tui::state::{App, View};

/// Reloads the roots and every expanded level (a fresh generation).
pub fn reload(app: &mut App) -> Vec<Effect> {
    app.tree.generation += 1;
    let generation = app.tree.generation;
    let mut effects = vec![Effect::LoadDatabases { generation }];
    for n in app.tree.nodes.iter().filter(|n| n.expanded) {
        effects.push(Effect::LoadChildren {
            generation,
            key: n.key.clone(),
            node: n.kind.clone(),
            cursor: None,
        });
    }
    effects
}

pub fn on_children(
    app: &mut App,
    generation: u64,
    key: Option<String>,
    append: bool,
    result: Result<(Vec<NodeKind>, Option<String>), Error>,
) -> Vec<Effect> {
    if generation != app.tree.generation {
        return Vec::new();
    }
    let key = key.unwrap_or_default();
    let selected_key = app.tree.selected_node().map(|n| n.key.clone());
    match result {
        Ok((kinds, more)) => {
            if append {
                app.tree.append_children(&key, kinds, more);
            } else if key.is_empty() && kinds.is_empty() {
                app.tree.set_children(
                    &key,
                    vec![NodeKind::Note(
                        "no databases: create one with `cosmoscope db create` or load a sample"
                            .into(),
                    )],
                    None,
                );
            } else {
                app.tree.set_children(&key, kinds, more);
            }
        }
        Err(e) => {
            let note = NodeKind::Note(format!("failed to load: {}", e.message));
            app.tree.set_children(&key, vec![note], None);
        }
    }
    refilter(app);
    if let Some(k) = selected_key {
        app.tree.select_key(&k);
    }
    // A palette jump waiting for this level goes on down its path.
    if let Some(path) = app.tree.pending_jump.clone() {
        let on_path = (1..path.len()).any(|n| path[..n].join("\u{1f}") == key);
        if on_path {
            return super::layers::jump(app, &path);
        }
    }
    Vec::new()
}

pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::Top
        | Action::Bottom => {
            let len = app.tree.row_count();
            let page = app.page_rows;
            move_selection(
                &mut app.tree.selected,
                &mut app.tree.offset,
                len,
                page,
                action,
            );
            note_container(app);
            Vec::new()
        }
        Action::Select => select(app),
        Action::Expand | Action::Right => expand(app),
        Action::Collapse | Action::Left => {
            collapse(app);
            Vec::new()
        }
        Action::Refresh => reload(app),
        Action::Filter => {
            super::layers::open_prompt(
                app,
                "filter the tree",
                crate::tui::state::PromptFor::TreeFilter,
            );
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// Remembers the container of the selection: the query console, feed and partitions
/// views work on it.
fn note_container(app: &mut App) {
    if let Some((db, c)) = app.tree.selected_node().and_then(|n| n.container()) {
        app.container = Some((db.to_string(), c.to_string()));
    }
}

fn select(app: &mut App) -> Vec<Effect> {
    note_container(app);
    let Some(node) = app.tree.selected_node().cloned() else {
        return Vec::new();
    };
    match &node.kind {
        NodeKind::Item { db, c, pk, id } => {
            let ticket = app.ticket();
            app.item_loading = Some(ticket);
            app.view = View::Item;
            vec![Effect::ReadItem {
                ticket,
                db: db.clone(),
                c: c.clone(),
                id: id.clone(),
                pk: pk.clone(),
            }]
        }
        NodeKind::More { parent, cursor } => {
            let Some(i) = app.tree.find(parent) else {
                return Vec::new();
            };
            vec![Effect::LoadChildren {
                generation: app.tree.generation,
                key: parent.clone(),
                node: app.tree.nodes[i].kind.clone(),
                cursor: Some(cursor.clone()),
            }]
        }
        _ if node.expanded => {
            collapse(app);
            Vec::new()
        }
        _ => expand(app),
    }
}

fn expand(app: &mut App) -> Vec<Effect> {
    note_container(app);
    let Some(i) = app.tree.row_index(app.tree.selected) else {
        return Vec::new();
    };
    let node = app.tree.nodes[i].clone();
    if !node.expandable() {
        return select(app);
    }
    if node.expanded {
        // Already open: step into the first child.
        app.tree.move_by(1);
        return Vec::new();
    }
    let loading = NodeKind::Note("loading…".into());
    app.tree.set_children(&node.key, vec![loading], None);
    refilter(app);
    vec![Effect::LoadChildren {
        generation: app.tree.generation,
        key: node.key,
        node: node.kind,
        cursor: None,
    }]
}

fn collapse(app: &mut App) {
    let Some(i) = app.tree.row_index(app.tree.selected) else {
        return;
    };
    if app.tree.nodes[i].expanded {
        app.tree.collapse(i);
    } else if let Some(p) = app.tree.parent_of(i) {
        let key = app.tree.nodes[p].key.clone();
        app.tree.collapse(p);
        refilter(app);
        app.tree.select_key(&key);
        return;
    }
    refilter(app);
}

/// Re-applies the tree filter after the rows changed.
pub fn refilter(app: &mut App) {
    let Some(text) = app.tree.filter.clone() else {
        return;
    };
    let labels: Vec<(usize, String)> = app
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (i, n.label()))
        .collect();
    let mut matcher = Matcher::new(nucleo::Config::DEFAULT);
    let pattern = Pattern::parse(&text, CaseMatching::Smart, Normalization::Smart);
    let mut keep = vec![false; labels.len()];
    for (i, label) in &labels {
        let mut buf = Vec::new();
        let hay = nucleo::Utf32Str::new(label, &mut buf);
        if text.is_empty() || pattern.score(hay, &mut matcher).is_some() {
            keep[*i] = true;
            // Keep the ancestors so a match is shown where it lives.
            let mut j = *i;
            while let Some(p) = app.tree.parent_of(j) {
                keep[p] = true;
                j = p;
            }
        }
    }
    app.tree.visible = (0..labels.len()).filter(|&i| keep[i]).collect();
    let rows = app.tree.row_count();
    app.tree.selected = app.tree.selected.min(rows.saturating_sub(1));
}
