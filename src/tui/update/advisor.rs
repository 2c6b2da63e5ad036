//! The advisor view: opened on the selected container, its workload and candidates chosen in
//! prompts (written as `advise` takes them), the advisor run as a job (`r`, cancelled with
//! the app's cancel key), the candidates compared column by column, and the selected one
//! copied into a new container keyed by it.
//!
//! Jobs start through the router (`Request::StartJob`); [`started`] then records which job
//! is the view's, so its progress, its advice and its end are told apart from other jobs'.

use super::prompt::open_prompt;
use super::request::{Reaction, Request};
use crate::advisor::repartition::default_name;
use crate::error::{Error, StatusCode};
use crate::tui::action::Action;
use crate::tui::effect::{Effect, JobKind};
use crate::tui::state::advisor::{AdvisorField, AdvisorJob};
use crate::tui::state::{App, Focus, PromptFor, View};

/// Shows the view on the selected container (a new container starts a fresh comparison).
pub fn open(app: &mut App) -> Vec<Effect> {
    app.view = View::Advisor;
    app.focus = Focus::View;
    if app.advisor.advising(app.job.as_ref()) && app.container != app.advisor.target {
        // Its advice would land on another container's view.
        if let Some((db, c)) = &app.advisor.target {
            app.info(format!("still advising on {db}/{c} (ctrl-x cancels it)"));
        }
        return Vec::new();
    }
    match app.container.clone() {
        Some(target) if app.advisor.target.as_ref() != Some(&target) => {
            let a = &mut app.advisor;
            a.target = Some(target);
            a.advice = None;
            a.stages.clear();
            a.reading = None;
            a.selected = 0;
            a.scroll = 0;
            a.error = None;
        }
        Some(_) => {}
        None if app.advisor.target.is_none() => {
            app.info("select a container in the tree to advise on its partition key")
        }
        None => {}
    }
    Vec::new()
}

/// The view's own actions: the workload, candidates and copy prompts.
pub fn act(app: &mut App, action: Action) -> Reaction {
    if app.advisor.target.is_none() {
        open(app);
        if app.advisor.target.is_none() {
            return Reaction::default();
        }
    }
    match action {
        Action::AdvisorWorkload => {
            open_prompt(
                app,
                "workload: a suite (blog, webstore), a workload or suite file, `recorded` (what \
                 the gateway served); empty: the container's suite",
                PromptFor::Advisor(AdvisorField::Workload),
            );
            Reaction::default()
        }
        Action::AdvisorCandidates => {
            open_prompt(
                app,
                "candidates: /a, [/a,/b], /a+/b, /a suffix N buckets (comma-separated); empty: \
                 proposed",
                PromptFor::Advisor(AdvisorField::Candidates),
            );
            Reaction::default()
        }
        Action::AdvisorCopy => ask_copy(app),
        _ => Reaction::default(),
    }
}

/// Asks for the copy's name, filled with `<container>-by-<key>`.
fn ask_copy(app: &mut App) -> Reaction {
    let (Some((db, c)), Some(a)) = (app.advisor.target.clone(), app.advisor.selected_candidate())
    else {
        app.info("run the advisor first (r), then pick a candidate (←/→) to copy the container by");
        return Reaction::default();
    };
    if a.current {
        let key = a.key.clone();
        app.info(format!(
            "{db}/{c} is keyed by {key} already: pick another candidate (←/→)"
        ));
        return Reaction::default();
    }
    let key = a.key.clone();
    app.advisor.copy_name = default_name(&c, &a.candidate);
    open_prompt(
        app,
        &format!("copy {db}/{c} into a new container keyed by {key}, named"),
        PromptFor::Advisor(AdvisorField::CopyName),
    );
    Reaction::default()
}

/// A prompt's answer: the workload or candidates are kept for the next run; a copy name
/// starts the copy.
pub fn on_answer(app: &mut App, field: AdvisorField, text: String) -> Reaction {
    let text = text.trim().to_string();
    match field {
        AdvisorField::Workload => {
            app.advisor.workload = text;
            app.info(format!(
                "advisor workload: {} (r runs it)",
                app.advisor.workload_label()
            ));
            Reaction::default()
        }
        AdvisorField::Candidates => {
            if !text.is_empty()
                && let Err(e) = crate::advisor::candidates::parse_list(&text)
            {
                app.error(format!("candidates: {}", e.message));
                return Reaction::default();
            }
            app.advisor.candidates = text;
            Reaction::default()
        }
        AdvisorField::CopyName => start_copy(app, text),
    }
}

fn start_copy(app: &mut App, name: String) -> Reaction {
    let (Some((db, c)), Some(a)) = (app.advisor.target.clone(), app.advisor.selected_candidate())
    else {
        return Reaction::default();
    };
    let candidate = a.candidate.clone();
    if !may_start(app) {
        return Reaction::default();
    }
    app.advisor.pending = Some(AdvisorJob::Copy {
        db: db.clone(),
        container: name.clone(),
    });
    Request::StartJob {
        title: format!("copying {db}/{c} into {name}"),
        job: JobKind::Repartition {
            db,
            c,
            candidate,
            target: name,
        },
    }
    .into()
}

/// Whether a job may start now (one job at a time, as every job of the app).
fn may_start(app: &mut App) -> bool {
    if let Some(j) = &app.job {
        app.error(format!("{} is still running (ctrl-x cancels it)", j.title));
        return false;
    }
    true
}

/// Runs the advisor with the chosen workload and candidates.
fn run(app: &mut App) -> Reaction {
    let Some((db, c)) = app.advisor.target.clone() else {
        return Reaction::default();
    };
    if app.ask_before_fan_out {
        app.error(
            "the advisor copies the container into a container per candidate key, which on an \
             account would be billed: export the items and advise on a local store",
        );
        return Reaction::default();
    }
    if !may_start(app) {
        return Reaction::default();
    }
    let a = &mut app.advisor;
    a.pending = Some(AdvisorJob::Advise);
    a.stages.clear();
    a.reading = None;
    a.error = None;
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Request::StartJob {
        title: format!("advising on {db}/{c}"),
        job: JobKind::Advise {
            db,
            c,
            workload: nonempty(&a.workload),
            candidates: nonempty(&a.candidates),
        },
    }
    .into()
}

/// After the router carried out a reaction of this view: the job it started (if any) is
/// the view's.
pub fn started(app: &mut App) {
    if let Some(kind) = app.advisor.pending.take()
        && let Some(j) = &app.job
    {
        app.advisor.job = Some((j.ticket, kind));
    }
}

/// Keys on the view: `r` runs, ←/→ pick a candidate, ↑/↓ scroll the comparison.
pub fn navigate(app: &mut App, action: Action) -> Reaction {
    let a = &mut app.advisor;
    let columns = a.advice.as_ref().map_or(0, |x| x.candidates.len());
    let last_row = a.advice.as_ref().map_or(0, |x| {
        crate::tui::ui::advisor::row_count(x).saturating_sub(1)
    });
    match action {
        Action::Refresh => return run(app),
        Action::Left | Action::Collapse => a.selected = a.selected.saturating_sub(1),
        Action::Right | Action::Expand => {
            a.selected = (a.selected + 1).min(columns.saturating_sub(1))
        }
        Action::Up => a.scroll = a.scroll.saturating_sub(1),
        Action::Down => a.scroll = (a.scroll + 1).min(last_row),
        Action::PageUp => a.scroll = a.scroll.saturating_sub(app.page_rows.max(1)),
        Action::PageDown => a.scroll = (a.scroll + app.page_rows.max(1)).min(last_row),
        Action::Top => a.scroll = 0,
        Action::Bottom => a.scroll = last_row,
        _ => {}
    }
    Reaction::default()
}

pub fn on_progress(app: &mut App, ticket: u64, p: &crate::advisor::Progress) -> Vec<Effect> {
    if matches!(app.advisor.job, Some((t, AdvisorJob::Advise)) if t == ticket) {
        app.advisor.on_progress(p);
    }
    Vec::new()
}

pub fn on_advice(app: &mut App, ticket: u64, advice: crate::advisor::Advice) -> Vec<Effect> {
    if matches!(app.advisor.job, Some((t, AdvisorJob::Advise)) if t == ticket) {
        let a = &mut app.advisor;
        a.advice = Some(advice);
        a.selected = 0;
        a.scroll = 0;
    }
    Vec::new()
}

/// A job ended: if it was the view's, the view stops waiting for it and keeps why it
/// failed, beside the status line's message. (A finished copy reaches the tree with the
/// reload every finished job brings.)
pub fn on_job_done(app: &mut App, ticket: u64, result: &Result<String, Error>) {
    let Some((t, kind)) = app.advisor.job.clone() else {
        return;
    };
    if t != ticket {
        return;
    }
    app.advisor.job = None;
    match (result, kind) {
        (Err(e), _) if e.status == StatusCode::Cancelled => {}
        (Err(e), _) => app.advisor.error = Some(format!("{} ({})", e.message, e.status)),
        (Ok(_), AdvisorJob::Copy { db, container }) => {
            app.advisor.copied.push(format!("{db}/{container}"))
        }
        (Ok(_), AdvisorJob::Advise) => {}
    }
}
