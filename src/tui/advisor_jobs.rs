//! The advisor view's background jobs, run on the worker's threads like every job: the
//! advisor itself (its progress candidate by candidate, its advice as a message) and the
//! re-partitioned copy of a container. The stop flag cancels both; the advisor's copies and
//! a copy that did not finish are deleted by the advisor module, as the CLI does.

use std::sync::atomic::{AtomicBool, Ordering};

use super::effect::JobKind;
use super::msg::Msg;
use crate::advisor::{self, AdviseOptions, Progress};
use crate::engine::Backend;
use crate::error::{Error, Result};

/// Runs an `Advise` or `Repartition` job; the summary for the status line, or why not.
/// `data_dir` holds the requests the explorer's gateway recorded (`recorded` workload).
pub fn run(
    engine: &dyn Backend,
    data_dir: &std::path::Path,
    ticket: u64,
    job: &JobKind,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Result<String> {
    match job {
        JobKind::Advise {
            db,
            c,
            workload,
            candidates,
        } => {
            let opts = AdviseOptions {
                workload: workload.clone(),
                candidates: candidates.clone(),
                recorded: Some(data_dir.to_path_buf()),
                ..AdviseOptions::new(db, c)
            };
            advise(engine, ticket, &opts, stop, send)
        }
        JobKind::Repartition {
            db,
            c,
            candidate,
            target,
        } => {
            let done = advisor::repartition::repartition(
                engine,
                db,
                c,
                candidate,
                target,
                &mut |done, total| go_on(send, stop, ticket, done, total),
            )?;
            Ok(format!(
                "copied {} of {db}/{c} into {db}/{} keyed by {} in {:.1} s",
                crate::tui::ui::plural(done.items, "item"),
                done.container,
                done.key,
                done.seconds
            ))
        }
        _ => Err(Error::internal("not an advisor job")),
    }
}

/// Reports a job's progress to the status line; whether to go on (the stop flag unset).
fn go_on(send: &dyn Fn(Msg), stop: &AtomicBool, ticket: u64, done: u64, total: u64) -> bool {
    send(Msg::JobProgress {
        ticket,
        done,
        total,
    });
    !stop.load(Ordering::Acquire)
}

fn advise(
    engine: &dyn Backend,
    ticket: u64,
    opts: &AdviseOptions,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Result<String> {
    let advice = advisor::advise(engine, opts, &mut |p| {
        let (done, total) = match p {
            Progress::Reading { done, total }
            | Progress::Copying { done, total, .. }
            | Progress::Replaying { done, total, .. } => (*done, *total),
        };
        send(Msg::AdvisorProgress {
            ticket,
            progress: p.clone(),
        });
        go_on(send, stop, ticket, done, total)
    })?;
    let best = advice
        .candidates
        .first()
        .map(|a| {
            let word = a.verdict.split(':').next().unwrap_or_default();
            format!("; best: {} ({word})", a.key)
        })
        .unwrap_or_default();
    let summary = format!(
        "advised on {}: {}{best}",
        advice.container,
        crate::tui::ui::plural(advice.candidates.len() as u64, "candidate"),
    );
    send(Msg::Advice {
        ticket,
        advice: Box::new(advice),
    });
    Ok(summary)
}
