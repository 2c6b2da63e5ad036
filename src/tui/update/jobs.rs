//! Long work started from the UI — loading a sample set, exporting a container — with
//! progress in the status line and cancellation.

use super::Effect;
use crate::error::Error;
use crate::tui::effect::JobKind;
use crate::tui::state::{App, Job, PromptFor};

pub fn ask_sample(app: &mut App) {
    let names: Vec<String> = crate::samples::list()
        .map(|l| l.into_iter().map(|s| s.name).collect())
        .unwrap_or_default();
    super::layers::open_prompt(
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
    super::layers::open_prompt(
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

pub fn on_done(app: &mut App, ticket: u64, result: Result<String, Error>) -> Vec<Effect> {
    if app.job.as_ref().is_none_or(|j| j.ticket != ticket) {
        return Vec::new();
    }
    let job = app.job.take();
    match result {
        Ok(summary) => {
            app.info(summary);
            // New databases or items: show them.
            super::tree::reload(app)
        }
        Err(e) if e.status == 499 => Vec::new(),
        Err(e) => {
            let title = job.map(|j| j.title).unwrap_or_default();
            app.error(format!("{title} failed ({}): {}", e.status, e.message));
            super::tree::reload(app)
        }
    }
}
