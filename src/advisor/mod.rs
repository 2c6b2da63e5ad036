//! The partition-key advisor: measured answers to "which key?" for a container and a
//! workload, and what each key would cost at N times the data.
//!
//! For today's key and each candidate ([`candidates`]), the advisor places every item with
//! the real EPK hashing in the physical partitions the container's throughput and storage
//! imply ([`placement`]), copies the container into a real container with that key
//! ([`copy`]) and replays the workload on it ([`replay`], [`measure`]): so each pattern's
//! routing, partitions touched and RU come from the engine's planner and the RU model's
//! counted work on that key, not from estimates. It then judges each key as the modelling
//! guides do and ranks them ([`assess`]); [`report`] prints the result.
//!
//! Once a key is chosen, [`repartition`] copies the container into a new one keyed by it,
//! for the user to query beside the original.
//!
//! A client of the engine facade: it names no store or query internals.

pub mod assess;
pub mod candidates;
pub mod copy;
pub mod items;
pub mod measure;
pub mod placement;
pub mod propose;
pub mod recorded;
pub mod repartition;
pub mod replay;
pub mod report;
pub mod workload;

use serde::Serialize;

use crate::engine::{Backend, PartitionKeyDefinition};
use crate::error::{Error, Result};
use crate::workbench::projection::throughput_of;
pub use candidates::Candidate;
pub use report::{Advice, Assessment};

/// Runs per pattern by default: enough for a median and a write distribution.
pub const DEFAULT_ITERATIONS: usize = 20;

#[derive(Debug, Clone)]
pub struct AdviseOptions {
    pub database: String,
    pub container: String,
    /// A bundled suite, a suite file, a workload file or `recorded` (the requests the
    /// gateway recorded); `None`: the bundled suite with a design on the database, if any.
    pub workload: Option<String>,
    /// A `--candidates` list; `None`: proposed from the items and the workload.
    pub candidates: Option<String>,
    /// Requests per second the workload's weights are scaled to.
    pub rate: f64,
    pub iterations: usize,
    pub seed: u64,
    /// Project to this many times the data and throughput.
    pub project: Option<f64>,
    /// The data directory whose recorded gateway requests `--workload recorded` reads
    /// (a local store's).
    pub recorded: Option<std::path::PathBuf>,
}

impl AdviseOptions {
    pub fn new(database: &str, container: &str) -> AdviseOptions {
        AdviseOptions {
            database: database.to_string(),
            container: container.to_string(),
            workload: None,
            candidates: None,
            rate: workload::DEFAULT_RATE,
            iterations: DEFAULT_ITERATIONS,
            seed: crate::samples::DEFAULT_SEED,
            project: None,
            recorded: None,
        }
    }
}

/// Where the advisor is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "stage")]
pub enum Progress {
    /// Reading the container's items: read so far, of the container's count.
    Reading { done: u64, total: u64 },
    /// Copying the items into a container keyed by `candidate`.
    Copying {
        candidate: String,
        done: u64,
        total: u64,
    },
    /// Replaying the workload on that copy: iterations done of the total.
    Replaying {
        candidate: String,
        pattern: String,
        done: u64,
        total: u64,
    },
}

/// Advises on `opts.database`/`opts.container`. `progress` returning false cancels (499);
/// the copies made so far are deleted either way.
pub fn advise(
    engine: &dyn Backend,
    opts: &AdviseOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Advice> {
    if opts.iterations == 0 {
        return Err(Error::bad_request("--iterations must be at least 1"));
    }
    if let Some(n) = opts.project.filter(|n| !(n.is_finite() && *n >= 1.0)) {
        return Err(Error::bad_request(format!(
            "--project is how many times today's data and throughput to project to, 1 or more; \
             got {n}"
        )));
    }
    let (db, c) = (opts.database.as_str(), opts.container.as_str());
    let info = engine.container(db, c)?;
    let named = opts
        .candidates
        .as_deref()
        .map(candidates::parse_list)
        .transpose()?;
    let current_key = info.partition_key.clone();
    let total = info.statistics.item_count;
    let items = items::Items::load(engine, db, c, &current_key, &mut |done| {
        progress(&Progress::Reading { done, total });
    })?;
    if let Some(list) = &named {
        for cand in list {
            for p in cand.source_paths() {
                if !items.any_has(&p) {
                    return Err(Error::bad_request(format!(
                        "candidate {cand}: no item of {db}/{c} has {p}"
                    )));
                }
            }
        }
    }
    let workload = match opts.workload.as_deref() {
        Some(recorded::RECORDED) => {
            let dir = opts.recorded.as_deref().ok_or_else(|| {
                Error::bad_request(
                    "--workload recorded reads the requests the gateway recorded in a local data \
                     directory; this store has none",
                )
            })?;
            Some(recorded::workload(
                dir,
                db,
                c,
                &items,
                &current_key,
                opts.rate,
            )?)
        }
        spec => workload::Workload::load(spec, db, c, &items, opts.rate)?,
    };
    let draws = workload
        .as_ref()
        .map(|w| measure::Draws::load(engine, w))
        .transpose()?;
    let limits = placement::Limits {
        throughput: throughput_of(&info),
        max_partition_bytes: info.max_partition_bytes,
        max_logical_partition_bytes: info.max_logical_partition_bytes,
    };
    let current = current_candidate(&current_key);
    let mut run = Run {
        engine,
        opts,
        info: &info,
        current_key: &current_key,
        items: &items,
        workload: workload.as_ref(),
        draws: draws.as_ref(),
        limits,
        progress,
        copy_nonce: crate::workbench::exec::run_nonce(),
        copies: 0,
    };
    let mut assessed = vec![run.assess(&current, true)?];
    let candidates = match named {
        Some(list) => list,
        None => propose::propose(&items, &assessed[0].queries, &current)?,
    };
    for cand in candidates.iter().filter(|cand| **cand != current) {
        assessed.push(run.assess(cand, false)?);
    }
    Ok(report::rank(
        assessed,
        &info,
        &items,
        workload.as_ref(),
        opts,
    ))
}

/// Today's key as a candidate.
fn current_candidate(key: &PartitionKeyDefinition) -> Candidate {
    match key.paths.as_slice() {
        [one] => Candidate::Path { path: one.clone() },
        many => Candidate::Hierarchical {
            paths: many.to_vec(),
        },
    }
}

/// One advise run's shared state.
struct Run<'a, 'e> {
    engine: &'e dyn Backend,
    opts: &'a AdviseOptions,
    info: &'a crate::engine::ContainerInfo,
    current_key: &'a PartitionKeyDefinition,
    items: &'a items::Items,
    workload: Option<&'a workload::Workload>,
    draws: Option<&'a measure::Draws>,
    limits: placement::Limits,
    progress: &'a mut dyn FnMut(&Progress) -> bool,
    /// Names the copies' databases apart from anything the user has.
    copy_nonce: u64,
    copies: usize,
}

impl<'e> Run<'_, 'e> {
    /// A copy of the container keyed by `cand` (named `label` in progress reports), in a
    /// database of its own; 499 when `progress` cancels while it fills.
    fn copy(&mut self, cand: &Candidate, label: &str) -> Result<copy::Copy<'e>> {
        self.copies += 1;
        let copy_db = format!(
            "advisor-{:x}-{}",
            self.copy_nonce & 0xffff_ffff,
            self.copies
        );
        let total = self.items.len() as u64;
        let progress = &mut *self.progress;
        let mut cancelled = false;
        let copy = copy::Copy::create(
            self.engine,
            &copy_db,
            self.info,
            cand,
            self.items,
            &mut |done| {
                cancelled |= !progress(&Progress::Copying {
                    candidate: label.to_string(),
                    done,
                    total,
                });
            },
        )?;
        if cancelled {
            return Err(Error::cancelled("the advisor was cancelled"));
        }
        Ok(copy)
    }

    /// Places, copies and replays one candidate.
    fn assess(&mut self, cand: &Candidate, is_current: bool) -> Result<report::Measured> {
        let placement = placement::Placement::compute(cand, self.items, &self.limits)?;
        let (Some(workload), Some(draws)) = (self.workload, self.draws) else {
            return Ok(report::Measured::new(
                cand.clone(),
                is_current,
                placement,
                Vec::new(),
                Vec::new(),
                None,
            ));
        };
        let label = cand.to_string();
        let copy = self.copy(cand, &label)?;
        let copy_ranges = self
            .engine
            .partition_key_ranges(&copy.database, &copy.container)?;
        let bounds = |r: &crate::engine::PartitionKeyRange| {
            (r.min_inclusive.clone(), r.max_exclusive.clone())
        };
        let same = copy_ranges
            .iter()
            .map(bounds)
            .eq(placement.range_table().iter().map(bounds));
        let note = (!same).then(|| {
            format!(
                "{label}: the copy split differently from the placement (it was imported in \
                 several batches); its RU per range follows the copy's {} ranges",
                copy_ranges.len()
            )
        });
        let replayer = replay::Replayer::new(
            self.engine,
            &self.opts.database,
            &self.opts.container,
            &copy.database,
            cand,
            self.current_key,
            &placement.definition,
            is_current,
            self.items,
            &placement,
            &copy_ranges,
        );
        let iterations = self.opts.iterations;
        let progress = &mut *self.progress;
        let total = (workload.patterns.len() * iterations) as u64;
        let patterns = measure::run_workload(
            &replayer,
            workload,
            draws,
            iterations,
            self.opts.seed,
            &mut |pattern, done| {
                progress(&Progress::Replaying {
                    candidate: label.clone(),
                    pattern: pattern.to_string(),
                    done,
                    total,
                })
            },
        )?;
        let queries = replayer.queries();
        drop(replayer);
        drop(copy);
        Ok(report::Measured::new(
            cand.clone(),
            is_current,
            placement,
            patterns,
            queries,
            note,
        ))
    }
}
