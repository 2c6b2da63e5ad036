//! The Requests view's reactions and the gateway's life: starting and stopping it, the
//! requests its log delivers on every tick, pause, clear and the filter, and the ranges the
//! stats panel's key-space strip needs for a selected query. When an application changes
//! databases or containers (or writes items while the tree is not in use), the tree is
//! asked to reload.

use std::sync::Arc;

use super::prompt::open_prompt;
use super::request::{Reaction, Request};
use crate::error::Error;
use crate::gateway::Exchange;
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::query::RangeSpan;
use crate::tui::state::requests::{
    GatewayInfo, GatewayStatus, KnownRanges, RangesLoading, container_of,
};
use crate::tui::state::{App, Focus, PromptFor};

/// Operations that add, remove or reshape databases and containers: the tree reloads at once.
const STRUCTURAL: &[&str] = &[
    "CreateDatabase",
    "DeleteDatabase",
    "CreateContainer",
    "DeleteContainer",
    "ReplaceContainer",
    "ReplaceOffer",
];
/// Operations that write items: the tree's counts reload, at most every
/// [`ITEM_RELOAD_SECONDS`], while the tree is not the focused pane (a reload returns every
/// expanded level to its first page, which would pull the rows from under someone
/// browsing it).
const ITEM_WRITES: &[&str] = &["Create", "Upsert", "Replace", "Delete", "Patch", "Batch"];
const ITEM_RELOAD_SECONDS: i64 = 5;

/// The palette's action: start the gateway, or stop it.
pub fn toggle(app: &mut App) -> Vec<Effect> {
    match app.gateway.status.clone() {
        GatewayStatus::Off => start(app),
        GatewayStatus::Serving { .. } => {
            let ticket = app.ticket();
            app.gateway.status = GatewayStatus::Stopping { ticket };
            vec![Effect::StopGateway { ticket }]
        }
        GatewayStatus::Starting { .. } => {
            app.info("the gateway is starting…");
            Vec::new()
        }
        GatewayStatus::Stopping { .. } => {
            app.info("the gateway is stopping…");
            Vec::new()
        }
    }
}

/// Starts the gateway on the address it is configured with.
pub fn start(app: &mut App) -> Vec<Effect> {
    if app.gateway.status != GatewayStatus::Off {
        return Vec::new();
    }
    let ticket = app.ticket();
    app.gateway.status = GatewayStatus::Starting { ticket };
    vec![Effect::StartGateway {
        ticket,
        addr: app.gateway.addr,
    }]
}

pub fn on_started(app: &mut App, ticket: u64, result: Result<GatewayInfo, Error>) -> Vec<Effect> {
    if app.gateway.status != (GatewayStatus::Starting { ticket }) {
        return Vec::new();
    }
    match result {
        Ok(info) => {
            app.info(format!("gateway serving on {}", info.addr));
            app.requests.ranges.clear();
            app.gateway.failed = None;
            app.gateway.addr = info.addr;
            app.gateway.status = GatewayStatus::Serving { info };
        }
        Err(e) => {
            app.gateway.status = GatewayStatus::Off;
            app.error(format!("gateway not started: {}", e.message));
            app.gateway.failed = Some(e.message);
        }
    }
    Vec::new()
}

pub fn on_stopped(app: &mut App, ticket: u64) -> Vec<Effect> {
    if app.gateway.status == (GatewayStatus::Stopping { ticket }) {
        app.gateway.status = GatewayStatus::Off;
        app.gateway.rate = 0.0;
        app.info("gateway stopped");
    }
    Vec::new()
}

/// New requests from the gateway's log (and its rate). The log is read only while a
/// gateway runs, which may be a moment before its start is reported: only a gateway known
/// to be off has no traffic to show.
pub fn on_traffic(app: &mut App, exchanges: Vec<Arc<Exchange>>, rate: f64) -> Reaction {
    if app.gateway.status == GatewayStatus::Off {
        return Reaction::default();
    }
    app.gateway.rate = rate;
    if exchanges.is_empty() {
        return Reaction::default();
    }
    let succeeded = |e: &&Arc<Exchange>| e.status.as_u16() < 300;
    let structural = exchanges
        .iter()
        .filter(succeeded)
        .any(|e| STRUCTURAL.contains(&e.operation));
    if exchanges
        .iter()
        .filter(succeeded)
        .any(|e| ITEM_WRITES.contains(&e.operation))
    {
        app.requests.tree_stale = true;
    }
    app.requests.push(exchanges);
    let effects = ensure_ranges(app);
    match reload_tree(app, structural) {
        Some(request) => Reaction::then(effects, request),
        None => effects.into(),
    }
}

/// The tree reload the application's writes call for, if one is due: at once for
/// databases and containers, and for items at most every [`ITEM_RELOAD_SECONDS`] while
/// the tree does not have focus (so the last writes of a burst show too, on a later tick).
pub fn reload_tree(app: &mut App, structural: bool) -> Option<Request> {
    let items_due = app.requests.tree_stale
        && app.focus != Focus::Tree
        && app
            .requests
            .tree_reloaded_at
            .is_none_or(|at| app.now - at >= ITEM_RELOAD_SECONDS);
    if !(structural || items_due) {
        return None;
    }
    app.requests.tree_reloaded_at = Some(app.now);
    app.requests.tree_stale = false;
    Some(Request::ReloadTree)
}

pub fn act(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Gateway => toggle(app),
        Action::RequestsPause => {
            let paused = !app.requests.tail.paused;
            app.requests.tail.set_paused(paused);
            ensure_ranges(app)
        }
        Action::RequestsClear => {
            app.requests.clear();
            Vec::new()
        }
        _ => Vec::new(),
    }
}

pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Filter => {
            open_prompt(
                app,
                "filter: status:4xx op:query range:3 client:ADDR method:POST words-in-resource",
                PromptFor::RequestsFilter,
            );
            Vec::new()
        }
        Action::Select => {
            app.requests.expanded = !app.requests.expanded;
            Vec::new()
        }
        Action::Refresh => {
            // The strip's ranges are read again (after a split, say).
            app.requests.ranges.clear();
            app.requests.ranges_loading = None;
            ensure_ranges(app)
        }
        _ => {
            app.requests.tail.navigate(action, app.page_rows);
            ensure_ranges(app)
        }
    }
}

/// Asks for the physical partitions of the selected query's container, for the key-space
/// strip, unless they are known and cover every range the query touched, or already asked
/// for.
pub fn ensure_ranges(app: &mut App) -> Vec<Effect> {
    let Some(e) = app.requests.tail.selected_row() else {
        return Vec::new();
    };
    let Some(result) = &e.query else {
        return Vec::new();
    };
    let Some((db, c)) = container_of(&e.path) else {
        return Vec::new();
    };
    let as_of = app.requests.newest_ms();
    let known = app.requests.ranges.get(&(db.clone(), c.clone()));
    let covered = known.is_some_and(|k| {
        // Ranges read after this request are as good as it gets: a range it touched that
        // they lack has split since.
        k.as_of_ms >= e.at_ms
            || result
                .partitions
                .iter()
                .all(|p| k.spans.iter().any(|s| *s.id == *p.id))
    });
    let asked = app
        .requests
        .ranges_loading
        .as_ref()
        .is_some_and(|l| l.db == db && l.c == c);
    if covered || asked {
        return Vec::new();
    }
    let ticket = app.ticket();
    app.requests.ranges_loading = Some(RangesLoading {
        ticket,
        db: db.clone(),
        c: c.clone(),
        as_of_ms: as_of,
    });
    vec![Effect::LoadRanges { ticket, db, c }]
}

/// Whether a `Msg::Ranges` with this ticket is the Requests view's.
pub fn awaits_ranges(app: &App, ticket: u64) -> bool {
    app.requests
        .ranges_loading
        .as_ref()
        .is_some_and(|l| l.ticket == ticket)
}

pub fn on_ranges(
    app: &mut App,
    db: String,
    c: String,
    pk_paths: Vec<String>,
    spans: Vec<RangeSpan>,
) -> Vec<Effect> {
    let Some(loading) = app.requests.ranges_loading.take() else {
        return Vec::new();
    };
    app.pk_paths.insert((db.clone(), c.clone()), pk_paths);
    app.requests.ranges.insert(
        (db, c),
        KnownRanges {
            as_of_ms: loading.as_of_ms,
            spans,
        },
    );
    // The selection may have moved to another container's query meanwhile.
    ensure_ranges(app)
}

/// The selected request's body (its query text for a query), for the clipboard.
pub fn copy_text(app: &App) -> Option<String> {
    let e = app.requests.tail.selected_row()?;
    if e.request_body.is_empty() {
        return None;
    }
    Some(
        serde_json::from_str::<serde_json::Value>(&e.request_body)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| e.request_body.clone()),
    )
}
