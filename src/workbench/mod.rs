//! The access-pattern workbench: runs a suite's patterns against each of its designs, many
//! times with different parameters, and compares what they cost — the table a data
//! modelling review draws up (RU, latency, requests, partitions touched per pattern).
//!
//! ```no_run
//! use cosmoscope::engine::Backend;
//! use cosmoscope::workbench::{self, RunOptions, Suite};
//! # fn demo(engine: &dyn Backend) -> cosmoscope::Result<()> {
//! let suite = Suite::builtin("blog")?;
//! let report = workbench::run(engine, &suite, &RunOptions::default(), &mut |_| true)?;
//! println!("{}", report.to_table());
//! # Ok(())
//! # }
//! ```
//!
//! [`run`] blocks (the TUI calls it on a blocking thread) and reports progress through a
//! callback that can cancel (499). Designs whose databases are missing are loaded from
//! their bundled sample sets first; the designs' change feed processors run in the
//! background while the patterns run, and are drained before the report is made, so the
//! data stays as consistent as the design promises.

pub mod exec;
pub mod report;
pub mod suite;
pub mod template;

use std::time::Instant;

use serde::Serialize;

pub use exec::{Executor, OpRecord, PatternRun, Pools, Vars};
pub use report::{DesignInfo, DesignResult, DesignResults, OperationReport, PatternReport, Report};
pub use suite::{Design, Pattern, Suite};

use crate::engine::Backend;
use crate::error::{Error, Result};
use crate::samples::denormalize::{self, Denormalizer};
use crate::samples::{self, LoadOptions};

/// Iterations per pattern and design by default: enough for a stable median and a rough
/// 95th percentile, few enough that the blog suite runs in seconds at scale 1.
pub const DEFAULT_ITERATIONS: usize = 20;

/// Status of a run cancelled through the progress callback (as for queries and loads).
/// How long the processors may go on catching up after a run failed or was cancelled.
const ABANDON_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scale of the sample sets loaded for missing designs.
    pub scale: f64,
    /// Seed of those loads and of the parameters drawn.
    pub seed: u64,
    pub iterations: usize,
    /// Load a design's sample set when its database is missing (else 404).
    pub load_missing: bool,
    /// Run the designs' change feed processors during the run.
    pub processors: bool,
    /// Only these patterns (ids); all by default.
    pub patterns: Option<Vec<String>>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            scale: 1.0,
            seed: samples::DEFAULT_SEED,
            iterations: DEFAULT_ITERATIONS,
            load_missing: true,
            processors: true,
            patterns: None,
        }
    }
}

/// Where a run is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "stage")]
pub enum RunProgress {
    /// Loading a missing design's sample set: items written of the total.
    Loading {
        set: String,
        container: String,
        done: u64,
        total: u64,
    },
    /// Running pattern iterations: done of the total over every pattern and design.
    Running {
        pattern: String,
        design: String,
        done: u64,
        total: u64,
    },
    /// Letting the change feed processors catch up before reporting.
    Draining,
}

/// Runs `suite` and reports per pattern and design. `progress` returning false cancels
/// (499) at the next iteration; the processors are stopped and their leases released
/// either way.
pub fn run(
    engine: &dyn Backend,
    suite: &Suite,
    options: &RunOptions,
    progress: &mut dyn FnMut(&RunProgress) -> bool,
) -> Result<Report> {
    let started = Instant::now();
    if options.iterations == 0 {
        return Err(Error::bad_request("--iterations must be at least 1"));
    }
    let patterns: Vec<&Pattern> = match &options.patterns {
        None => suite.patterns.iter().filter(|p| p.workbench).collect(),
        Some(ids) => ids
            .iter()
            .map(|id| {
                suite.pattern(id).ok_or_else(|| {
                    Error::not_found(format!("suite {} has no pattern {id:?}", suite.name))
                })
            })
            .collect::<Result<_>>()?,
    };
    let loaded = load_missing(engine, suite, options, progress)?;

    let pools = suite
        .designs
        .iter()
        .map(|d| Pools::load(engine, suite, d).map_err(|e| in_design(e, d)))
        .collect::<Result<Vec<_>>>()?;
    let mut denormalizers: Vec<Denormalizer> = Vec::new();
    let mut processor_design = Vec::new();
    if options.processors {
        for d in &suite.designs {
            let Some(set) = &d.sample else { continue };
            match Denormalizer::for_set(engine, set, &d.database) {
                Ok(Some(den)) => {
                    denormalizers.push(den);
                    processor_design.push(d.id.clone());
                }
                Ok(None) => {}
                Err(e) => {
                    for den in &mut denormalizers {
                        let _ = den.release();
                    }
                    return Err(in_design(e, d));
                }
            }
        }
    }

    let total: u64 = patterns
        .iter()
        .map(|p| {
            suite
                .designs
                .iter()
                .filter(|d| p.steps_for(&d.id).is_some())
                .count() as u64
        })
        .sum::<u64>()
        * options.iterations as u64;

    let executor = Executor::new(engine);
    let nonce = exec::run_nonce();
    let (rows, mut denormalizers) = std::thread::scope(|scope| {
        let background = denormalize::spawn(scope, denormalizers);
        let mut done = 0u64;
        let mut rows = Vec::with_capacity(patterns.len());
        let mut outcome = Ok(());
        'patterns: for p in &patterns {
            let mut results = Vec::new();
            for (d, pool) in suite.designs.iter().zip(&pools) {
                let Some(steps) = p.steps_for(&d.id) else {
                    continue;
                };
                let mut runs = Vec::with_capacity(options.iterations);
                for i in 0..options.iterations {
                    let go_on = progress(&RunProgress::Running {
                        pattern: p.id.clone(),
                        design: d.id.clone(),
                        done,
                        total,
                    });
                    if !go_on {
                        outcome = Err(Error::cancelled("the workbench run was cancelled"));
                        break 'patterns;
                    }
                    let step =
                        Vars::draw(suite, d, pool, options.seed, nonce, &p.id, i as u64, &[])
                            .and_then(|mut vars| executor.run(&d.database, steps, &mut vars));
                    match step {
                        Ok(run) => runs.push(run),
                        Err(e) => {
                            outcome = Err(Error {
                                message: format!(
                                    "pattern {} on design {} ({}): {}",
                                    p.id, d.id, d.database, e.message
                                ),
                                ..e
                            });
                            break 'patterns;
                        }
                    }
                    done += 1;
                }
                results.push(DesignResult::from_runs(&d.id, &runs));
            }
            rows.push(PatternReport {
                id: p.id.clone(),
                title: p.title.clone(),
                kind: if p.is_command() { "command" } else { "query" }.to_string(),
                designs: DesignResults(results),
            });
        }
        let stopped = background.stop();
        (outcome.map(|()| rows), stopped)
    });
    // Whatever happened, let the processors catch up and hand their leases back; after a
    // failure or a cancel only briefly (what is left stays in the feed for the next run).
    let mut drained = Ok(0);
    if let Ok(dens) = &mut denormalizers {
        if !dens.is_empty() {
            progress(&RunProgress::Draining);
        }
        for d in dens.iter_mut() {
            let r = match &rows {
                Ok(_) => d.drain(),
                Err(_) => Ok(d.drain_for(ABANDON_DRAIN)),
            };
            let _ = d.release();
            if drained.is_ok() {
                drained = r;
            }
        }
    }
    let rows = rows?;
    let denormalizers = denormalizers?;
    drained?;
    let processors = processor_design
        .into_iter()
        .zip(&denormalizers)
        .map(|(id, d)| (id, d.stats().clone().rounded()))
        .collect();
    Ok(Report {
        suite: suite.name.clone(),
        title: suite.title.clone(),
        iterations: options.iterations,
        seed: options.seed,
        designs: suite
            .designs
            .iter()
            .map(|d| DesignInfo {
                id: d.id.clone(),
                title: d.title.clone(),
                database: d.database.clone(),
                sample: d.sample.clone(),
            })
            .collect(),
        loaded,
        patterns: rows,
        processors,
        seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    })
}

fn in_design(e: Error, d: &Design) -> Error {
    Error {
        message: format!("design {} ({}): {}", d.id, d.database, e.message),
        ..e
    }
}

/// Loads the sample set of every design whose database is missing; returns their names.
fn load_missing(
    engine: &dyn Backend,
    suite: &Suite,
    options: &RunOptions,
    progress: &mut dyn FnMut(&RunProgress) -> bool,
) -> Result<Vec<String>> {
    let existing: Vec<String> = engine.list_databases()?.into_iter().map(|d| d.id).collect();
    let mut missing: Vec<&str> = Vec::new();
    for d in &suite.designs {
        if existing.contains(&d.database) {
            continue;
        }
        match &d.sample {
            Some(set) if options.load_missing => {
                if !missing.contains(&set.as_str()) {
                    missing.push(set);
                }
            }
            _ => {
                return Err(Error::not_found(format!(
                    "design {} needs database {:?}, which does not exist{}",
                    d.id,
                    d.database,
                    d.sample.as_ref().map_or(String::new(), |s| format!(
                        "; load it with `cosmoscope sample load {s}`"
                    ))
                )));
            }
        }
    }
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let load = LoadOptions {
        scale: options.scale,
        seed: options.seed,
    };
    let sets: Vec<(&str, LoadOptions)> = missing.iter().map(|s| (*s, load)).collect();
    samples::load_many(engine, &sets, &mut |p| {
        progress(&RunProgress::Loading {
            set: p.set.to_string(),
            container: format!("{}/{}", p.database, p.container),
            done: p.done,
            total: p.total,
        })
    })?;
    Ok(missing.into_iter().map(String::from).collect())
}
