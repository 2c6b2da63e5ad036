//! One advise run's copies and replays: for each candidate, a temporary container keyed by
//! it holding the items the run replays on (all of them, or a sample), the workload
//! replayed on it through the [`Replayer`](super::replay::Replayer) (each query page
//! rescaled to the full data for a sample), and what it measured.

use super::AdviseOptions;
use super::candidates::Candidate;
use super::{Context, Progress, copy, items, measure, placement, replay, report, scale, workload};
use crate::engine::{Backend, PartitionKeyDefinition};
use crate::error::{Error, Result};

/// One advise run's shared state.
pub(super) struct Run<'a, 'e> {
    engine: &'e dyn Backend,
    opts: &'a AdviseOptions,
    info: &'a crate::engine::ContainerInfo,
    current_key: &'a PartitionKeyDefinition,
    /// The items the copies hold: all of them, or a sample.
    items: &'a items::Items,
    workload: Option<&'a workload::Workload>,
    draws: Option<&'a measure::Draws>,
    limits: placement::Limits,
    /// How a sample's query loads scale to the full data (`None`: the copies are whole).
    loads: Option<&'a scale::Loads>,
    pub(super) progress: &'a mut dyn FnMut(&Progress) -> bool,
    /// Names the copies' databases apart from anything the user has.
    copy_nonce: u64,
    copies: usize,
}

impl<'a, 'e> Run<'a, 'e> {
    pub(super) fn new(
        ctx: &'a Context<'e>,
        items: &'a items::Items,
        workload: Option<&'a workload::Workload>,
        draws: Option<&'a measure::Draws>,
        loads: Option<&'a scale::Loads>,
        progress: &'a mut dyn FnMut(&Progress) -> bool,
    ) -> Run<'a, 'e> {
        Run {
            engine: ctx.engine,
            opts: ctx.opts,
            info: &ctx.info,
            current_key: &ctx.current_key,
            items,
            workload,
            draws,
            limits: ctx.limits,
            loads,
            progress,
            copy_nonce: crate::workbench::exec::run_nonce(),
            copies: 0,
        }
    }

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
        // The copy has begun (its first report otherwise comes after its first batch).
        let mut cancelled = !progress(&Progress::Copying {
            candidate: label.to_string(),
            done: 0,
            total,
        });
        if cancelled {
            return Err(Error::cancelled("the advisor was cancelled"));
        }
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

    /// Copies and replays one candidate whose items are placed as `placement`.
    pub(super) fn assess(
        &mut self,
        cand: &Candidate,
        is_current: bool,
        placement: placement::Placement,
    ) -> Result<report::Measured> {
        let (Some(workload), Some(draws)) = (self.workload, self.draws) else {
            return Ok(report::Measured::new(
                cand.clone(),
                is_current,
                placement,
                Vec::new(),
                Vec::new(),
                Vec::new(),
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
        let mut notes = Vec::new();
        if !same {
            notes.push(match self.loads {
                None => format!(
                    "{label}: the copy split differently from the placement (it was imported in \
                     several batches); its RU per range follows the copy's {} ranges, shared \
                     among the placement's ranges they overlap",
                    copy_ranges.len()
                ),
                Some(_) => format!(
                    "{label}: the sample's copy has {} ranges where the full data splits into \
                     {}: a fan-out query's visits are counted on the copy's ranges, and its RU \
                     shared among the placement's ranges they overlap",
                    copy_ranges.len(),
                    placement.ranges.len()
                ),
            });
        }
        let scaler = match self.loads {
            Some(loads) => Some(scale::Scaler::new(
                cand,
                &placement,
                placement::Placement::compute(cand, self.items, &self.limits)?,
                loads,
            )),
            None => None,
        };
        let mut replayer = replay::Replayer::new(
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
        if let Some(s) = &scaler {
            replayer = replayer.with_scaler(s);
        }
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
        notes.extend(scaler.iter().flat_map(scale::Scaler::notes));
        drop(scaler);
        Ok(report::Measured::new(
            cand.clone(),
            is_current,
            placement,
            patterns,
            queries,
            notes,
        ))
    }
}
