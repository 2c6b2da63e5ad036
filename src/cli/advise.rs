//! `advise DB/C`: the partition-key advisor, with progress on stderr and the ranking as a
//! table (or JSON with `--json`).

use std::io::Write;

use super::args::AdviseArgs;
use super::{CliResult, Failure, print_json, progress_bar, split_target};
use crate::advisor::{self, AdviseOptions, Progress, candidates};
use crate::engine::Backend;

/// `data_dir` is the local store's, where the gateway keeps the requests it recorded.
pub fn advise(engine: &dyn Backend, data_dir: &std::path::Path, args: AdviseArgs) -> CliResult {
    let (db, c) = split_target(&args.target)?;
    let list = (!args.candidates.is_empty()).then(|| args.candidates.join(","));
    if let Some(list) = &list {
        // Bad syntax is a usage error, reported before any work.
        candidates::parse_list(list).map_err(|e| Failure::Usage(e.message))?;
    }
    if let Some(n) = args.project.filter(|n| !(n.is_finite() && *n >= 1.0)) {
        return Err(Failure::Usage(format!(
            "--project is how many times today's data and throughput to project to, 1 or more; got {n}"
        )));
    }
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(Failure::Usage(format!(
            "--rate is the workload's requests per second, more than 0; got {}",
            args.rate
        )));
    }
    let opts = AdviseOptions {
        workload: args.workload,
        candidates: list,
        rate: args.rate,
        iterations: args.iterations,
        seed: args.seed,
        project: args.project,
        recorded: Some(data_dir.to_path_buf()),
        ..AdviseOptions::new(db, c)
    };
    let bar = progress_bar(0);
    let advice = advisor::advise(engine, &opts, &mut |p| {
        match p {
            Progress::Reading { done, total } => {
                bar.set_length(*total);
                bar.set_position(*done);
                bar.set_message(format!("reading {db}/{c}"));
            }
            Progress::Copying {
                candidate,
                done,
                total,
            } => {
                bar.set_length(*total);
                bar.set_position(*done);
                bar.set_message(format!("copying under {candidate}"));
            }
            Progress::Replaying {
                candidate,
                pattern,
                done,
                total,
            } => {
                bar.set_length(*total);
                bar.set_position(*done);
                bar.set_message(format!("{pattern} under {candidate}"));
            }
        }
        true
    });
    bar.finish_and_clear();
    let advice = advice?;
    if args.json {
        print_json(&advice);
    } else {
        let _ = std::io::stdout()
            .lock()
            .write_all(advice.to_table().as_bytes());
    }
    Ok(())
}
