//! The container details pane's reactions: reading a container's settings and statistics
//! for the item view, scrolling them, reading them again.

use crate::error::Error;
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::details::{Details, DetailsView};
use crate::tui::state::{App, Focus, View};

/// Shows the details of the container selected in the tree (or last selected).
pub fn show(app: &mut App) -> Vec<Effect> {
    let from_tree = (app.focus == Focus::Tree)
        .then(|| app.tree.selected_node().and_then(|n| n.container()))
        .flatten()
        .map(|(db, c)| (db.to_string(), c.to_string()));
    let Some((db, c)) = from_tree.or_else(|| app.container.clone()) else {
        app.info("select a container in the tree first");
        return Vec::new();
    };
    load(app, db, c)
}

fn load(app: &mut App, db: String, c: String) -> Vec<Effect> {
    let ticket = app.ticket();
    app.details_loading = Some(ticket);
    app.view = View::Item;
    vec![Effect::LoadDetails { ticket, db, c }]
}

pub fn on_details(
    app: &mut App,
    ticket: u64,
    db: String,
    c: String,
    result: Result<Box<Details>, Error>,
) -> Vec<Effect> {
    if app.details_loading.take_if(|t| *t == ticket).is_none() {
        return Vec::new();
    }
    match result {
        Ok(details) => {
            // The same container read again keeps its scroll.
            let scroll = app
                .details
                .as_ref()
                .filter(|d| d.db == db && d.c == c)
                .map_or(0, |d| d.scroll);
            app.clear_item_view();
            app.details = Some(DetailsView {
                db,
                c,
                details: *details,
                scroll,
            });
            app.view = View::Item;
        }
        Err(e) => app.error(format!(
            "could not read {db}/{c} ({}): {}",
            e.status, e.message
        )),
    }
    Vec::new()
}

/// Scrolling the pane; `r` reads it again.
pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    let page = app.page_rows.max(1);
    let Some(d) = app.details.as_mut() else {
        return Vec::new();
    };
    let last = d.line_count().saturating_sub(1);
    d.scroll = match action {
        Action::Up => d.scroll.saturating_sub(1),
        Action::Down => (d.scroll + 1).min(last),
        Action::PageUp => d.scroll.saturating_sub(page),
        Action::PageDown => (d.scroll + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        Action::Refresh => {
            let (db, c) = (d.db.clone(), d.c.clone());
            return load(app, db, c);
        }
        _ => d.scroll,
    };
    Vec::new()
}
