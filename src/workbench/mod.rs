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
pub mod projection;
pub mod report;
pub mod suite;
pub mod template;

use std::time::Instant;

use serde::Serialize;

pub use exec::{Executor, OpRecord, PatternRun, Pools, QueryWorkCount, Vars};
pub use report::{DesignInfo, DesignResult, DesignResults, OperationReport, PatternReport, Report};
pub use suite::{Design, Pattern, Suite};

use crate::engine::{Backend, ScriptInfo, ScriptKind, TriggerOperation, TriggerType};
use crate::error::{Error, Result};
use crate::samples::denormalize::{self, Denormalizer};
use crate::samples::{self, LoadOptions};
use suite::Step;

/// Iterations per pattern and design by default: enough for a stable median and a rough
/// 95th percentile, few enough that the blog suite runs in seconds at scale 1.
pub const DEFAULT_ITERATIONS: usize = 20;

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
    let patterns = chosen_patterns(suite, options)?;
    let loaded = load_missing(engine, suite, options, progress)?;
    check_triggers(engine, suite, &patterns)?;
    let pools = load_pools(engine, suite)?;
    let (denormalizers, processor_design) = if options.processors {
        start_processors(engine, suite)?
    } else {
        (Vec::new(), Vec::new())
    };
    let mut runner = PatternRunner {
        total: total_iterations(suite, &patterns, options.iterations),
        executor: Executor::new(engine),
        nonce: exec::run_nonce(),
        suite,
        pools: &pools,
        options,
        done: 0,
        progress: &mut *progress,
    };
    let (rows, mut denormalizers) = std::thread::scope(|scope| {
        let background = denormalize::spawn(scope, denormalizers);
        let rows = runner.run_all(&patterns);
        let stopped = background.stop();
        (rows, stopped)
    });
    let drained = match &mut denormalizers {
        Ok(dens) => drain_and_release(dens, rows.is_err(), progress),
        Err(_) => Ok(0),
    };
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
        designs: suite.designs.iter().map(design_info).collect(),
        loaded,
        patterns: rows,
        processors,
        seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    })
}

/// The patterns a run runs: those `options` names (each must exist), else every pattern
/// of the suite the workbench runs.
fn chosen_patterns<'s>(suite: &'s Suite, options: &RunOptions) -> Result<Vec<&'s Pattern>> {
    match &options.patterns {
        None => Ok(suite.patterns.iter().filter(|p| p.workbench).collect()),
        Some(ids) => ids
            .iter()
            .map(|id| {
                suite.pattern(id).ok_or_else(|| {
                    Error::not_found(format!("suite {} has no pattern {id:?}", suite.name))
                })
            })
            .collect(),
    }
}

/// Checks, before anything is sent, that every trigger a chosen pattern's step names is a
/// trigger of its container, of the right type (pre or post) and for the step's operation:
/// a suite that names a missing trigger fails whole (400 naming the step) rather than
/// halfway through its rows.
fn check_triggers(engine: &dyn Backend, suite: &Suite, patterns: &[&Pattern]) -> Result<()> {
    for p in patterns {
        for d in &suite.designs {
            for (i, step) in p.steps_for(&d.id).unwrap_or_default().iter().enumerate() {
                let Some(triggers) = step.action.triggers() else {
                    continue;
                };
                let container = step.action.container();
                // A missing container fails here with its own message.
                let defined = engine.list_scripts(&d.database, container, ScriptKind::Trigger)?;
                for (field, name) in triggers.named() {
                    if let Some(why) = trigger_problem(&defined, field, name, step.action.kind()) {
                        return Err(Error::bad_request(format!(
                            "invalid workbench suite: pattern {:?}, design {:?}, step {}: \
                             {field} {name:?} of {}/{container}: {why}",
                            p.id,
                            d.id,
                            i + 1,
                            d.database
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// What is wrong with naming trigger `name` as a `field` (preTrigger or postTrigger) on a
/// `kind` write, given the container's triggers; `None` when it may run there.
fn trigger_problem(defined: &[ScriptInfo], field: &str, name: &str, kind: &str) -> Option<String> {
    let Some(t) = defined.iter().find(|t| t.id == name) else {
        let names: Vec<&str> = defined.iter().map(|t| t.id.as_str()).collect();
        return Some(format!(
            "there is no such trigger (the container has {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let wanted = if field == "preTrigger" {
        TriggerType::Pre
    } else {
        TriggerType::Post
    };
    let operation = match kind {
        "create" => TriggerOperation::Create,
        "upsert" => TriggerOperation::Upsert,
        "replace" => TriggerOperation::Replace,
        _ => TriggerOperation::Delete,
    };
    if t.trigger_type != Some(wanted) {
        Some(format!(
            "it is a {:?}-trigger",
            t.trigger_type.unwrap_or(TriggerType::Pre)
        ))
    } else if !t.trigger_operation.is_some_and(|o| o.covers(operation)) {
        Some(format!(
            "it runs on {:?} operations, not on a {kind}",
            t.trigger_operation.unwrap_or(TriggerOperation::All)
        ))
    } else {
        None
    }
}

/// The parameter pools of every design, in the suite's order.
fn load_pools(engine: &dyn Backend, suite: &Suite) -> Result<Vec<Pools>> {
    suite
        .designs
        .iter()
        .map(|d| Pools::load(engine, suite, d).map_err(|e| in_design(e, d)))
        .collect()
}

/// Starts the change feed processors of every design whose sample set has any; returns
/// them with the id of the design each serves. When one fails to start, those already
/// started hand their leases back before the error is returned.
fn start_processors<'e>(
    engine: &'e dyn Backend,
    suite: &Suite,
) -> Result<(Vec<Denormalizer<'e>>, Vec<String>)> {
    let mut denormalizers: Vec<Denormalizer> = Vec::new();
    let mut processor_design = Vec::new();
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
    Ok((denormalizers, processor_design))
}

/// Iterations the whole run makes: `iterations` per chosen pattern and design that has
/// steps for it (the progress total).
fn total_iterations(suite: &Suite, patterns: &[&Pattern], iterations: usize) -> u64 {
    patterns
        .iter()
        .map(|p| {
            suite
                .designs
                .iter()
                .filter(|d| p.steps_for(&d.id).is_some())
                .count() as u64
        })
        .sum::<u64>()
        * iterations as u64
}

/// Runs the chosen patterns on the designs and counts the iterations done, for progress.
struct PatternRunner<'a, 'e> {
    executor: Executor<'e>,
    suite: &'a Suite,
    /// Per design, in the suite's order.
    pools: &'a [Pools],
    options: &'a RunOptions,
    /// [`Vars::draw`]'s `run`.
    nonce: u64,
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(&RunProgress) -> bool,
}

impl PatternRunner<'_, '_> {
    /// Every pattern in turn; the first failure or a cancel ends the run.
    fn run_all(&mut self, patterns: &[&Pattern]) -> Result<Vec<PatternReport>> {
        let mut rows = Vec::with_capacity(patterns.len());
        for p in patterns {
            rows.push(self.pattern(p)?);
        }
        Ok(rows)
    }

    /// One pattern's row: its iterations on each design that has steps for it.
    fn pattern(&mut self, p: &Pattern) -> Result<PatternReport> {
        let (suite, pools) = (self.suite, self.pools);
        let mut results = Vec::new();
        for (d, pool) in suite.designs.iter().zip(pools) {
            let Some(steps) = p.steps_for(&d.id) else {
                continue;
            };
            let runs = self.iterations(p, d, pool, steps)?;
            results.push(DesignResult::from_runs(&d.id, &runs));
        }
        Ok(PatternReport {
            id: p.id.clone(),
            title: p.title.clone(),
            kind: if p.is_command() { "command" } else { "query" }.to_string(),
            designs: DesignResults(results),
        })
    }

    /// Pattern `p`'s iterations on design `d`, each with parameters of its own; asks
    /// `progress` before each whether to go on. A failure names the pattern and design.
    fn iterations(
        &mut self,
        p: &Pattern,
        d: &Design,
        pool: &Pools,
        steps: &[Step],
    ) -> Result<Vec<PatternRun>> {
        let iterations = self.options.iterations;
        let mut runs = Vec::with_capacity(iterations);
        for i in 0..iterations {
            let go_on = (self.progress)(&RunProgress::Running {
                pattern: p.id.clone(),
                design: d.id.clone(),
                done: self.done,
                total: self.total,
            });
            if !go_on {
                return Err(Error::cancelled("the workbench run was cancelled"));
            }
            let (seed, nonce) = (self.options.seed, self.nonce);
            let run = Vars::draw(self.suite, d, pool, seed, nonce, &p.id, i as u64, &[])
                .and_then(|mut vars| self.executor.run(&d.database, steps, &mut vars))
                .map_err(|e| Error {
                    message: format!(
                        "pattern {} on design {} ({}): {}",
                        p.id, d.id, d.database, e.message
                    ),
                    ..e
                })?;
            runs.push(run);
            self.done += 1;
        }
        Ok(runs)
    }
}

/// Lets the processors catch up and hands their leases back, whatever happened; after a
/// failure or a cancel (`abandoned`) only briefly, as what is left stays in the feed for
/// the next run. Returns the first drain's error, after releasing every processor.
fn drain_and_release(
    denormalizers: &mut [Denormalizer],
    abandoned: bool,
    progress: &mut dyn FnMut(&RunProgress) -> bool,
) -> Result<u64> {
    if !denormalizers.is_empty() {
        progress(&RunProgress::Draining);
    }
    let mut drained = Ok(0);
    for d in denormalizers.iter_mut() {
        let r = if abandoned {
            Ok(d.drain_for(ABANDON_DRAIN))
        } else {
            d.drain()
        };
        let _ = d.release();
        if drained.is_ok() {
            drained = r;
        }
    }
    drained
}

/// What the report says of a design.
fn design_info(d: &Design) -> DesignInfo {
    DesignInfo {
        id: d.id.clone(),
        title: d.title.clone(),
        database: d.database.clone(),
        sample: d.sample.clone(),
    }
}

/// Puts the design `d` a failure happened in before its message.
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
