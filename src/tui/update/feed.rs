//! The change feed and partitions views' reactions: subscribing, pausing, filtering,
//! restarting, and the partitions report refreshed every second.

use super::prompt::open_prompt;
use crate::engine::PartitionsReport;
use crate::error::Error;
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::feed::{FeedModeChoice, FeedRow, FeedScope, StartChoice};
use crate::tui::state::list::move_selection;
use crate::tui::state::{App, PromptFor};

/// Follows the selected container if nothing is followed yet.
pub fn ensure_subscribed(app: &mut App) -> Vec<Effect> {
    if app.feed.subscription.is_some() {
        return Vec::new();
    }
    let scope = match (&app.feed.scope, &app.container) {
        (Some(s), _) => s.clone(),
        (None, Some((db, c))) => FeedScope::Container {
            db: db.clone(),
            c: c.clone(),
        },
        (None, None) => {
            app.info("select a container in the tree to follow its change feed");
            return Vec::new();
        }
    };
    subscribe(app, scope)
}

/// Follows the selected container (or its database, when the whole database is followed):
/// subscribes anew when the selection moved elsewhere, else keeps what is followed.
pub fn follow(app: &mut App) -> Vec<Effect> {
    let wanted = match (&app.feed.scope, &app.container) {
        (Some(FeedScope::Database { db }), Some((sel, _))) if db != sel => {
            Some(FeedScope::Database { db: sel.clone() })
        }
        (Some(FeedScope::Container { db, c }), Some((sdb, sc))) if (db, c) != (sdb, sc) => {
            Some(FeedScope::Container {
                db: sdb.clone(),
                c: sc.clone(),
            })
        }
        _ => None,
    };
    match wanted {
        Some(scope) => subscribe(app, scope),
        None => ensure_subscribed(app),
    }
}

fn subscribe(app: &mut App, scope: FeedScope) -> Vec<Effect> {
    let mut effects = Vec::new();
    if let Some(t) = app.feed.subscription.take() {
        effects.push(Effect::Unsubscribe { ticket: t });
    }
    let ticket = app.ticket();
    app.feed.scope = Some(scope.clone());
    app.feed.subscription = Some(ticket);
    app.feed.error = None;
    app.feed.tail.clear();
    effects.push(Effect::Subscribe {
        ticket,
        scope,
        mode: app.feed.mode,
        start: app.feed.start.clone(),
    });
    effects
}

fn resubscribe(app: &mut App) -> Vec<Effect> {
    match app.feed.scope.clone() {
        Some(scope) => subscribe(app, scope),
        None => ensure_subscribed(app),
    }
}

pub fn on_batch(
    app: &mut App,
    ticket: u64,
    rows: Vec<FeedRow>,
    request_charge: f64,
) -> Vec<Effect> {
    if app.feed.subscription != Some(ticket) {
        return Vec::new();
    }
    app.feed.request_charge = crate::charge::round(app.feed.request_charge + request_charge);
    let now = app.now;
    app.feed.push(rows, now);
    Vec::new()
}

/// The subscription failed: it ends, and the view says why.
pub fn on_error(app: &mut App, ticket: u64, error: Error) -> Vec<Effect> {
    if app.feed.subscription == Some(ticket) {
        app.feed.error = Some(error.message.clone());
        app.feed.subscription = None;
    }
    Vec::new()
}

pub fn act(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::FeedPause => {
            let paused = !app.feed.tail.paused;
            app.feed.tail.set_paused(paused);
            Vec::new()
        }
        Action::FeedMode => {
            app.feed.mode = match app.feed.mode {
                FeedModeChoice::Latest => FeedModeChoice::AllVersions,
                FeedModeChoice::AllVersions => FeedModeChoice::Latest,
            };
            resubscribe(app)
        }
        Action::FeedStart => {
            // Cycles now → beginning → a time you type.
            match app.feed.start {
                StartChoice::Now => {
                    app.feed.start = StartChoice::Beginning;
                    resubscribe(app)
                }
                _ => {
                    open_prompt(
                        app,
                        "start from (RFC 3339 time, `now` or `beginning`)",
                        PromptFor::FeedStartTime,
                    );
                    Vec::new()
                }
            }
        }
        Action::FeedClear => {
            app.feed.tail.clear();
            Vec::new()
        }
        Action::FeedScope => {
            let scope = match (&app.feed.scope, &app.container) {
                (Some(FeedScope::Container { db, .. }), _) => {
                    FeedScope::Database { db: db.clone() }
                }
                (_, Some((db, c))) => FeedScope::Container {
                    db: db.clone(),
                    c: c.clone(),
                },
                (Some(s), None) => s.clone(),
                (None, None) => return Vec::new(),
            };
            subscribe(app, scope)
        }
        _ => Vec::new(),
    }
}

/// Restarts the feed from what the start prompt says.
pub fn restart_from(app: &mut App, text: &str) -> Vec<Effect> {
    let text = text.trim();
    app.feed.start = match text {
        "now" => StartChoice::Now,
        "beginning" | "" => StartChoice::Beginning,
        t => match chrono::DateTime::parse_from_rfc3339(t) {
            Ok(d) => StartChoice::Time(d.timestamp()),
            Err(e) => {
                app.error(format!(
                    "{t:?} is not a time like 2026-11-21T10:00:00Z ({e})"
                ));
                return Vec::new();
            }
        },
    };
    resubscribe(app)
}

pub fn navigate(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Filter => {
            open_prompt(
                app,
                "filter: op:delete range:3 key:VALUE c:CONTAINER words-in-id",
                PromptFor::FeedFilter,
            );
        }
        Action::Refresh => return resubscribe(app),
        Action::Select => app.feed.tail.set_paused(!app.feed.tail.paused),
        _ => {
            app.feed.tail.navigate(action, app.page_rows);
        }
    }
    Vec::new()
}

pub fn load_partitions(app: &mut App) -> Vec<Effect> {
    let Some((db, c)) = app
        .partitions
        .target
        .clone()
        .or_else(|| app.container.clone())
    else {
        return Vec::new();
    };
    app.partitions.target = Some((db.clone(), c.clone()));
    let ticket = app.ticket();
    app.partitions.loading = Some(ticket);
    vec![Effect::LoadPartitions { ticket, db, c }]
}

pub fn on_partitions(
    app: &mut App,
    ticket: u64,
    result: Result<PartitionsReport, Error>,
) -> Vec<Effect> {
    if app.partitions.loading != Some(ticket) {
        return Vec::new();
    }
    app.partitions.loading = None;
    match result {
        Ok(report) => {
            let ids: Vec<String> = report.partitions.iter().map(|p| p.id.clone()).collect();
            let same_container = app
                .partitions
                .report
                .as_ref()
                .is_some_and(|r| r.container == report.container);
            if same_container && !app.partitions.previous_ranges.is_empty() {
                let gone: Vec<&String> = app
                    .partitions
                    .previous_ranges
                    .iter()
                    .filter(|id| !ids.contains(id))
                    .collect();
                if !gone.is_empty() {
                    app.partitions.split_seen = Some(format!(
                        "split: range {} became {}",
                        gone.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        ids.iter()
                            .filter(|id| !app.partitions.previous_ranges.contains(id))
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            } else {
                app.partitions.split_seen = None;
            }
            app.partitions.previous_ranges = ids;
            app.partitions.report = Some(report);
        }
        Err(e) => app.error(format!("partitions: {}", e.message)),
    }
    Vec::new()
}

pub fn navigate_partitions(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Refresh => load_partitions(app),
        _ => {
            let len = app
                .partitions
                .report
                .as_ref()
                .map_or(0, |r| r.partitions.len());
            let mut offset = 0;
            move_selection(&mut app.partitions.selected, &mut offset, len, len, action);
            Vec::new()
        }
    }
}
