//! Long work started from the UI — loading a sample set, exporting a container — with
//! progress in the status line and cancellation.

use super::prompt::open_prompt;
use super::request::{Reaction, Request};
use crate::error::{Error, StatusCode};
use crate::tui::action::Action;
use crate::tui::effect::{Effect, JobKind};
use crate::tui::state::list::move_selection;
use crate::tui::state::{App, Job, PromptFor};
use crate::workbench::Report;

pub fn ask_sample(app: &mut App) {
    let names: Vec<String> = crate::samples::list()
        .map(|l| l.into_iter().map(|s| s.name).collect())
        .unwrap_or_default();
    open_prompt(
        app,
        &format!("load sample ({})", names.join(", ")),
        PromptFor::SampleName,
    );
}

pub fn ask_export(app: &mut App) {
    let Some((db, c)) = app.container.clone() else {
        app.info("select a container to export");
        return;
    };
    open_prompt(
        app,
        &format!("export {db}/{c} as NDJSON to file"),
        PromptFor::ExportPath { db, c },
    );
}

/// Starts a job unless one is running (one at a time keeps the machine responsive).
pub fn start(app: &mut App, title: String, job: JobKind) -> Vec<Effect> {
    if let Some(j) = &app.job {
        app.error(format!("{} is still running (ctrl-x cancels it)", j.title));
        return Vec::new();
    }
    let ticket = app.ticket();
    app.job = Some(Job {
        ticket,
        title,
        done: 0,
        total: 0,
    });
    vec![Effect::StartJob { ticket, job }]
}

pub fn cancel(app: &mut App) -> Vec<Effect> {
    match app.job.take() {
        Some(j) => {
            app.info(format!("{} cancelled", j.title));
            vec![Effect::CancelJob { ticket: j.ticket }]
        }
        None => Vec::new(),
    }
}

pub fn on_progress(app: &mut App, ticket: u64, done: u64, total: u64) -> Vec<Effect> {
    if let Some(j) = app.job.as_mut().filter(|j| j.ticket == ticket) {
        j.done = done;
        j.total = total;
    }
    Vec::new()
}

pub fn on_done(app: &mut App, ticket: u64, result: Result<String, Error>) -> Reaction {
    if app.job.as_ref().is_none_or(|j| j.ticket != ticket) {
        return Reaction::default();
    }
    let job = app.job.take();
    match result {
        Ok(summary) => {
            app.info(summary);
            // New databases or items: show them.
            Request::ReloadTree.into()
        }
        Err(e) if e.status == StatusCode::Cancelled => Reaction::default(),
        Err(e) => {
            let title = job.map(|j| j.title).unwrap_or_default();
            app.error(format!("{title} failed ({}): {}", e.status, e.message));
            Request::ReloadTree.into()
        }
    }
}

/// The workbench job's report: shown from its first row (the job ends right after).
pub fn on_workbench_report(app: &mut App, ticket: u64, report: Report) -> Vec<Effect> {
    if app.job.as_ref().is_some_and(|j| j.ticket == ticket) {
        app.workbench.report = Some(report);
        app.workbench.selected = 0;
        app.workbench.offset = 0;
        app.workbench.design = 0;
        app.workbench.detail_scroll = 0;
    }
    Vec::new()
}

/// Switches to the next bundled suite (the report stays until the next run).
pub fn next_suite(app: &mut App) {
    let names: Vec<&str> = crate::workbench::suite::BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let at = names
        .iter()
        .position(|n| *n == app.workbench.suite)
        .unwrap_or(0);
    app.workbench.suite = names[(at + 1) % names.len()].to_string();
    app.info(format!(
        "workbench suite: {} (r runs it)",
        app.workbench.suite
    ));
}

pub fn navigate_workbench(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Refresh => {
            let suite = app.workbench.suite.clone();
            start(
                app,
                format!("workbench {suite}"),
                JobKind::Workbench { suite },
            )
        }
        Action::Select => {
            app.workbench.detail = !app.workbench.detail;
            Vec::new()
        }
        // Left and right pick the design whose requests the detail lists; a page scrolls
        // them, so every request of every design can be read.
        Action::Expand | Action::Right | Action::Collapse | Action::Left => {
            let designs = app.workbench.report.as_ref().map_or(0, |r| r.designs.len());
            let w = &mut app.workbench;
            if designs > 0 {
                let step = if matches!(action, Action::Expand | Action::Right) {
                    1
                } else {
                    designs - 1
                };
                w.design = (w.design + step) % designs;
            }
            w.detail_scroll = 0;
            Vec::new()
        }
        Action::PageDown | Action::PageUp => {
            let requests = selected_requests(app);
            let page = (app.page_rows / 3).max(1);
            let w = &mut app.workbench;
            w.detail_scroll = if action == Action::PageDown {
                (w.detail_scroll + page).min(requests.saturating_sub(1))
            } else {
                w.detail_scroll.saturating_sub(page)
            };
            Vec::new()
        }
        _ => {
            let len = app
                .workbench
                .report
                .as_ref()
                .map_or(0, |r| r.patterns.len());
            let page = app.page_rows;
            let w = &mut app.workbench;
            move_selection(&mut w.selected, &mut w.offset, len, page, action);
            w.detail_scroll = 0;
            Vec::new()
        }
    }
}

/// How many requests the detail lists: the selected pattern's, for the chosen design.
fn selected_requests(app: &App) -> usize {
    let w = &app.workbench;
    w.report
        .as_ref()
        .and_then(|r| {
            let design = r.designs.get(w.design)?;
            r.patterns.get(w.selected)?.design(&design.id)
        })
        .map_or(0, |d| d.operations.iter().filter(|o| !o.setup).count())
}
