//! The resource tree's reactions: expanding levels, paging, selecting items, filtering,
//! and jumping to a node the palette chose. Selecting an item asks the router to show it.

use super::prompt::open_prompt;
use super::request::{Reaction, Request};
use crate::error::Error;
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::list::move_selection;
use crate::tui::state::tree::{Node, NodeKind};
use crate::tui::state::{App, Confirmed, Focus, Layer, PromptFor};
use crate::tui::ui::{fmt_bytes, fmt_ru, plural};

/// Reloads the roots and every expanded level (a fresh generation).
pub fn reload(app: &mut App) -> Vec<Effect> {
    reload_levels(app, true)
}

/// Reloads the roots and the expanded levels; with `queried` false, not those listed by a
/// query (a range's logical partitions, a logical partition's items), which keep what
/// they show: on a billed account the explorer runs no query on its own.
fn reload_levels(app: &mut App, queried: bool) -> Vec<Effect> {
    app.tree.generation += 1;
    let generation = app.tree.generation;
    let mut effects = vec![Effect::LoadDatabases { generation }];
    let listed_by_query =
        |n: &NodeKind| matches!(n, NodeKind::Range { .. } | NodeKind::Logical { .. });
    for n in app
        .tree
        .nodes
        .iter()
        .filter(|n| n.expanded && (queried || !listed_by_query(&n.kind)))
    {
        effects.push(Effect::LoadChildren {
            generation,
            key: n.key.clone(),
            node: n.kind.clone(),
            cursor: None,
        });
    }
    effects
}

/// Seconds between checks that the tree still shows what the store holds.
pub const PROBE_SECONDS: i64 = 2;

/// Asks whether the tree is out of date (another process wrote, an import ran), once
/// every [`PROBE_SECONDS`] and never twice at once.
pub fn probe_due(app: &mut App) -> Vec<Effect> {
    if app.tree.probing || app.now - app.tree.probed_at < PROBE_SECONDS {
        return Vec::new();
    }
    app.tree.probing = true;
    app.tree.probed_at = app.now;
    vec![Effect::ProbeTree {
        generation: app.tree.generation,
        scripts: probed_scripts(app),
    }]
}

/// The containers whose script counts a probe lists: those on screen, and none on a billed
/// account, where the explorer's own reads stay as few as the README lists (`r` reloads).
fn probed_scripts(app: &App) -> Vec<(String, String)> {
    if app.ask_before_fan_out {
        return Vec::new();
    }
    app.tree.script_containers()
}

/// Reloads the tree when the store's databases or counts differ from what it shows.
pub fn on_probe(
    app: &mut App,
    generation: u64,
    result: Result<Vec<NodeKind>, Error>,
) -> Vec<Effect> {
    app.tree.probing = false;
    let Ok(fresh) = result else {
        return Vec::new();
    };
    // A reload since the probe was sent already shows newer counts.
    let stale = generation == app.tree.generation && app.tree.is_stale(&fresh);
    app.tree.catalog = fresh;
    let mut effects = if stale {
        reload_levels(app, !app.ask_before_fan_out)
    } else {
        Vec::new()
    };
    effects.extend(reveal_matches(app));
    effects
}

/// Opens the databases whose containers the filter matches (they may not be loaded yet),
/// so the filter searches the whole tree, not only what is expanded; asks for the list
/// of every container first when there is none yet.
pub fn reveal_matches(app: &mut App) -> Vec<Effect> {
    if app
        .tree
        .filter
        .as_deref()
        .is_none_or(|f| f.trim().is_empty())
    {
        return Vec::new();
    }
    if app.tree.catalog.is_empty() {
        if app.tree.probing {
            return Vec::new();
        }
        app.tree.probing = true;
        return vec![Effect::ProbeTree {
            generation: app.tree.generation,
            scripts: probed_scripts(app),
        }];
    }
    let mut effects = Vec::new();
    for db in app.tree.databases_to_reveal() {
        let Some(i) = app.tree.find(&db) else {
            continue;
        };
        let node = app.tree.nodes[i].clone();
        app.tree
            .set_children(&node.key, vec![NodeKind::Note("loading…".into())], None);
        effects.push(Effect::LoadChildren {
            generation: app.tree.generation,
            key: node.key,
            node: node.kind,
            cursor: None,
        });
    }
    app.tree.refilter();
    effects
}

pub fn on_children(
    app: &mut App,
    generation: u64,
    key: Option<String>,
    append: bool,
    result: Result<(Vec<NodeKind>, Option<String>), Error>,
) -> Reaction {
    if generation != app.tree.generation {
        return Reaction::default();
    }
    let key = key.unwrap_or_default();
    let selected_key = app.tree.selected_node().map(|n| n.key.clone());
    match result {
        Ok((mut kinds, more)) => {
            app.tree.mark_hot(&key, &mut kinds);
            for k in &kinds {
                if let NodeKind::Container {
                    db, c, pk_paths, ..
                } = k
                {
                    app.pk_paths
                        .insert((db.clone(), c.clone()), pk_paths.clone());
                }
            }
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
    app.tree.refilter();
    if let Some(k) = selected_key {
        app.tree.select_key(&k);
    }
    match app.tree.pending_jump.take() {
        Some(path) => jump(app, &path),
        None => Reaction::default(),
    }
}

/// Selects the tree node at `path` (database, container, range), expanding what leads
/// to it; levels not loaded yet are loaded and the selection lands once they arrive.
pub fn jump(app: &mut App, path: &[String]) -> Reaction {
    app.tree.filter = None;
    app.focus = Focus::Tree;
    app.tree.pending_jump = None;
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
            let reaction = expand(app);
            // Finish when the level arrives.
            app.tree.pending_jump = Some(path.to_vec());
            return reaction;
        }
    }
    Reaction::default()
}

pub fn navigate(app: &mut App, action: Action) -> Reaction {
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
            Reaction::default()
        }
        Action::Select => select(app),
        Action::Expand | Action::Right => expand(app),
        Action::Collapse | Action::Left => {
            collapse(app);
            Reaction::default()
        }
        Action::Refresh => reload(app).into(),
        Action::Filter => {
            open_prompt(app, "filter the tree", PromptFor::TreeFilter);
            Reaction::default()
        }
        _ => Reaction::default(),
    }
}

/// Remembers the container of the selection: the query console, feed and partitions
/// views work on it.
fn note_container(app: &mut App) {
    if let Some((db, c)) = app.tree.selected_node().and_then(|n| n.container()) {
        app.container = Some((db.to_string(), c.to_string()));
    }
}

fn select(app: &mut App) -> Reaction {
    note_container(app);
    let Some(node) = app.tree.selected_node().cloned() else {
        return Reaction::default();
    };
    match node.kind {
        NodeKind::Item { db, c, pk, id } => Request::ReadItem { db, c, id, pk }.into(),
        NodeKind::Script {
            db, c, kind, id, ..
        } => Request::ShowScript { db, c, kind, id }.into(),
        NodeKind::More { parent, cursor } => {
            let Some(i) = app.tree.find(&parent) else {
                return Reaction::default();
            };
            vec![Effect::LoadChildren {
                generation: app.tree.generation,
                key: parent,
                node: app.tree.nodes[i].kind.clone(),
                cursor: Some(cursor),
            }]
            .into()
        }
        _ if node.expanded => {
            collapse(app);
            Reaction::default()
        }
        _ => expand(app),
    }
}

fn expand(app: &mut App) -> Reaction {
    note_container(app);
    let Some(i) = app.tree.row_index(app.tree.selected) else {
        return Reaction::default();
    };
    let node = app.tree.nodes[i].clone();
    if !node.expandable() {
        return select(app);
    }
    if node.expanded {
        // Already open: step into the first child.
        app.tree.move_by(1);
        return Reaction::default();
    }
    if let Some(question) = price_listing(app, &node) {
        app.layers.push(question);
        return Reaction::default();
    }
    load_children(app, node)
}

/// On a billed account, a range's logical partitions come from a GROUP BY query on it:
/// its estimated charge (from the range's item count and size) is shown first, once per
/// range.
fn price_listing(app: &App, node: &Node) -> Option<Layer> {
    let NodeKind::Range {
        range,
        items,
        bytes,
        ..
    } = &node.kind
    else {
        return None;
    };
    if !app.ask_before_fan_out || app.tree.priced.contains(&node.key) {
        return None;
    }
    let ru = crate::charge::query_estimate(1, *items, *bytes);
    Some(Layer::Confirm {
        text: format!(
            "Listing the logical partitions of range {range} runs a GROUP BY query on it: \
             {} ({}) to read, about {} RU. Run it? (y/n)",
            plural(*items, "item"),
            fmt_bytes(*bytes),
            fmt_ru(ru)
        ),
        on_yes: Confirmed::ListRange {
            key: node.key.clone(),
        },
    })
}

/// The listing of the range at `key`, whose cost was accepted.
pub fn list_range(app: &mut App, key: String) -> Reaction {
    let Some(i) = app.tree.find(&key) else {
        return Reaction::default();
    };
    app.tree.priced.insert(key);
    let node = app.tree.nodes[i].clone();
    load_children(app, node)
}

fn load_children(app: &mut App, node: Node) -> Reaction {
    let loading = NodeKind::Note("loading…".into());
    app.tree.set_children(&node.key, vec![loading], None);
    app.tree.refilter();
    vec![Effect::LoadChildren {
        generation: app.tree.generation,
        key: node.key,
        node: node.kind,
        cursor: None,
    }]
    .into()
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
        app.tree.refilter();
        app.tree.select_key(&key);
        return;
    }
    app.tree.refilter();
}
