//! `workbench` (compare designs pattern by pattern) and `simulate` (a live workload).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::args::{SimulateArgs, WorkbenchArgs};
use super::{CliResult, Failure, print_json, progress_bar, stderr_is_terminal};
use crate::engine::Backend;
use crate::simulate::{self, SimOptions};
use crate::workbench::{self, RunOptions, RunProgress, Suite};

/// How long `simulate` lets the processors catch up after the workload stops; what is
/// left stays in the feed and the next processor run resumes from the checkpoints.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

pub fn workbench(engine: &dyn Backend, args: WorkbenchArgs) -> CliResult {
    if let Some(n) = args.project.filter(|n| !(n.is_finite() && *n >= 1.0)) {
        return Err(Failure::Usage(format!(
            "--project is how many times today's data and throughput to project to, 1 or \
             more; got {n}"
        )));
    }
    let suite = Suite::load(&args.suite)?;
    let options = RunOptions {
        scale: args.scale,
        seed: args.seed,
        iterations: args.iterations,
        patterns: (!args.patterns.is_empty()).then_some(args.patterns),
        ..RunOptions::default()
    };
    let bar = progress_bar(0);
    let report = workbench::run(engine, &suite, &options, &mut |p| {
        match p {
            RunProgress::Loading {
                set,
                container,
                done,
                total,
            } => {
                bar.set_length(*total);
                bar.set_position(*done);
                bar.set_message(format!("loading {set} → {container}"));
            }
            RunProgress::Running {
                pattern,
                design,
                done,
                total,
            } => {
                bar.set_length(*total);
                bar.set_position(*done);
                bar.set_message(format!("{pattern} on {design}"));
            }
            RunProgress::Draining => bar.set_message("change feed processors catching up"),
        }
        true
    });
    bar.finish_and_clear();
    let report = report?;
    let projection = args
        .project
        .map(|n| workbench::projection::project(engine, &report, n))
        .transpose()?;
    match (args.json, projection) {
        (true, None) => print_json(&report),
        (true, Some(p)) => print_json(&serde_json::json!({"measured": report, "projection": p})),
        (false, p) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(report.to_table().as_bytes());
            if let Some(p) = p {
                let _ = out.write_all(b"\n");
                let _ = out.write_all(p.to_table().as_bytes());
            }
        }
    }
    Ok(())
}

pub fn simulate(engine: &dyn Backend, args: SimulateArgs) -> CliResult {
    let duration = match args.duration {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(Failure::Usage(format!(
                "--duration must be a positive number of seconds, got {s}"
            )));
        }
        d => d.map(Duration::from_secs_f64),
    };
    if !(args.rate.is_finite() && args.rate >= 0.0) {
        return Err(Failure::Usage(format!(
            "--rate must be a number of operations per second (0: as fast as possible), got {}",
            args.rate
        )));
    }
    if !(0.0..=1.0).contains(&args.hot_key) {
        return Err(Failure::Usage(format!(
            "--hot-key is the share of writes sent to one logical partition, from 0 to 1; got {}",
            args.hot_key
        )));
    }
    let options = SimOptions {
        set: args.set,
        scale: args.scale,
        seed: args.seed,
        rate: (args.rate > 0.0).then_some(args.rate),
        duration,
        operations: args.operations,
        hot_key: args.hot_key,
        processors: !args.no_processors,
        drain: Some(DRAIN_LIMIT),
        clients: args.clients.max(1),
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Without a handler Ctrl-C would kill the process with its leases held; with one,
        // the run stops, the processors catch up briefly and hand their leases back.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Release));
    }
    let bar = progress_bar(0);
    simulate::ensure_loaded(engine, &options, &mut |p| {
        bar.set_length(p.total);
        bar.set_position(p.done);
        bar.set_message(format!(
            "loading {} → {}/{}",
            p.set, p.database, p.container
        ));
        !stop.load(Ordering::Acquire)
    })?;
    bar.finish_and_clear();
    let live = stderr_is_terminal();
    let report = simulate::run(engine, &options, &stop, &mut |s| {
        if live {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{}", s.line());
            let _ = err.flush();
        }
    });
    if live {
        let _ = writeln!(std::io::stderr().lock());
    }
    let report = report?;
    if live && let Some(short) = &report.short_of_rate {
        let _ = writeln!(std::io::stderr().lock(), "short of the rate: {short}");
    }
    print_json(&report);
    Ok(())
}
