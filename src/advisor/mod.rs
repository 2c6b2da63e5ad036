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
//! A large container is not copied whole: one pass ([`scan`]) places every candidate from
//! all its items, and the workload replays on a copy of a sample ([`sample`]) whose query
//! loads are rescaled to the full data ([`scale`]); see [`advise`] for which path a
//! container takes.
//!
//! Once a key is chosen, [`repartition`] copies the container into a new one keyed by it,
//! for the user to query beside the original.
//!
//! A client of the engine facade: it names no store or query internals.

pub mod assess;
pub mod candidates;
pub mod copy;
pub mod digest;
pub mod items;
pub mod measure;
pub mod placement;
pub mod propose;
pub mod recorded;
pub mod repartition;
pub mod replay;
pub mod report;
mod run;
pub mod sample;
pub mod scale;
pub mod scan;
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
    /// Replay on a sample of about this many items whatever the container's size (`None`:
    /// a sample of [`sample::SAMPLE_ITEMS`] for a larger container, every item otherwise).
    pub sample: Option<usize>,
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
            sample: None,
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
///
/// A container of more than [`sample::SAMPLE_ITEMS`] items (or any, with `opts.sample`)
/// under a workload file, or no workload, is measured from one scan and a sample
/// (`sampled`); a smaller one, or one whose workload is a suite or recorded requests
/// (their parameters name the container's own items), is copied whole per candidate, so
/// its figures are exact (`full`). The threshold is the sample's size: below it the
/// sample would be the whole container, and copying it costs no more than a sample.
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
    // The workload as far as it can be read without the items: whether it can be replayed
    // on a sample, and the paths its parameters draw from.
    let sampling = match opts.workload.as_deref() {
        Some(recorded::RECORDED) => None,
        spec => workload::Workload::load(spec, db, c, &|_| true, opts.rate)?
            .is_none_or(|w| w.replays_on_a_sample())
            .then_some(())
            .and(match opts.sample {
                Some(n) => Some(n.max(1)),
                None => (info.statistics.item_count > sample::SAMPLE_ITEMS as u64)
                    .then_some(sample::SAMPLE_ITEMS),
            }),
    };
    let ctx = Context {
        engine,
        opts,
        limits: placement::Limits {
            throughput: throughput_of(&info),
            max_partition_bytes: info.max_partition_bytes,
            max_logical_partition_bytes: info.max_logical_partition_bytes,
        },
        current_key: info.partition_key.clone(),
        info,
    };
    match sampling {
        Some(n) => sampled(&ctx, named, n, progress),
        None => full(&ctx, named, progress),
    }
}

/// What every way of advising shares.
pub(crate) struct Context<'e> {
    pub(crate) engine: &'e dyn Backend,
    pub(crate) opts: &'e AdviseOptions,
    pub(crate) info: crate::engine::ContainerInfo,
    pub(crate) current_key: PartitionKeyDefinition,
    pub(crate) limits: placement::Limits,
}

/// 400 when a named candidate's path is one no item has (`has`).
fn check_named(
    named: Option<&Vec<Candidate>>,
    has: &dyn Fn(&str) -> bool,
    ctx: &Context,
) -> Result<()> {
    for cand in named.into_iter().flatten() {
        for p in cand.source_paths() {
            if !has(&p) {
                return Err(Error::bad_request(format!(
                    "candidate {cand}: no item of {}/{} has {p}",
                    ctx.opts.database, ctx.opts.container
                )));
            }
        }
    }
    Ok(())
}

/// The workload `opts.workload` names, its paths checked with `has`.
fn load_workload(
    ctx: &Context,
    items: &items::Items,
    has: &dyn Fn(&str) -> bool,
) -> Result<Option<workload::Workload>> {
    let (db, c, opts) = (
        ctx.opts.database.as_str(),
        ctx.opts.container.as_str(),
        ctx.opts,
    );
    match opts.workload.as_deref() {
        Some(recorded::RECORDED) => {
            let dir = opts.recorded.as_deref().ok_or_else(|| {
                Error::bad_request(
                    "--workload recorded reads the requests the gateway recorded in a local data \
                     directory; this store has none",
                )
            })?;
            Ok(Some(recorded::workload(
                dir,
                db,
                c,
                items,
                &ctx.current_key,
                opts.rate,
            )?))
        }
        spec => workload::Workload::load(spec, db, c, has, opts.rate),
    }
}

/// Every item in memory, a full copy per candidate: exact figures.
fn full(
    ctx: &Context,
    named: Option<Vec<Candidate>>,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Advice> {
    let (db, c) = (ctx.opts.database.as_str(), ctx.opts.container.as_str());
    let total = ctx.info.statistics.item_count;
    let items = items::Items::load(ctx.engine, db, c, &ctx.current_key, &mut |done| {
        progress(&Progress::Reading { done, total });
    })?;
    check_named(named.as_ref(), &|p| items.any_has(p), ctx)?;
    let workload = load_workload(ctx, &items, &|p| items.any_has(p))?;
    let draws = workload
        .as_ref()
        .map(|w| measure::Draws::load(ctx.engine, w))
        .transpose()?;
    let current = current_candidate(&ctx.current_key);
    let mut run = run::Run::new(
        ctx,
        &items,
        workload.as_ref(),
        draws.as_ref(),
        None,
        progress,
    );
    let place = |cand: &Candidate| placement::Placement::compute(cand, &items, &ctx.limits);
    let mut assessed = vec![run.assess(&current, true, place(&current)?)?];
    let candidates = match named {
        Some(list) => list,
        None => propose::propose(&items, &assessed[0].queries, &current)?,
    };
    for cand in candidates.iter().filter(|cand| **cand != current) {
        assessed.push(run.assess(cand, false, place(cand)?)?);
    }
    Ok(report::rank(
        assessed,
        &ctx.info,
        (items.len() as u64, items.total_bytes()),
        workload.as_ref(),
        ctx.opts,
        Vec::new(),
    ))
}

/// One scan of the container for every candidate's placement, and the workload replayed
/// on a copy of a sample of about `n` items per candidate, its query loads rescaled to the
/// full data ([`scale`]).
fn sampled(
    ctx: &Context,
    named: Option<Vec<Candidate>>,
    n: usize,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Advice> {
    let (db, c, opts) = (
        ctx.opts.database.as_str(),
        ctx.opts.container.as_str(),
        ctx.opts,
    );
    let current = current_candidate(&ctx.current_key);
    let mut first: Vec<Candidate> = vec![current.clone()];
    first.extend(named.iter().flatten().filter(|k| **k != current).cloned());
    let unchecked =
        workload::Workload::load(opts.workload.as_deref(), db, c, &|_| true, opts.rate)?;
    let counted = unchecked
        .as_ref()
        .map(workload::Workload::parameter_paths)
        .unwrap_or_default();
    let mut paths: Vec<String> = first.iter().flat_map(Candidate::source_paths).collect();
    paths.extend(counted.iter().cloned());
    let total = ctx.info.statistics.item_count;
    let plan = scan::ScanPlan {
        candidates: &first,
        paths,
        counted,
        sample_rate: n as f64 / total.max(1) as f64,
    };
    let mut reading = |done| progress(&Progress::Reading { done, total });
    let mut found = scan::scan(
        ctx.engine,
        (db, c),
        &ctx.current_key,
        &plan,
        &ctx.limits,
        &mut reading,
    )?;
    let present = std::mem::take(&mut found.present);
    let has = |p: &str| present.contains(p);
    check_named(named.as_ref(), &has, ctx)?;
    let workload = workload::Workload::load(opts.workload.as_deref(), db, c, &has, opts.rate)?;
    let sample = sample::build(
        ctx.engine,
        (db, c),
        &ctx.current_key,
        &mut found,
        workload.as_ref(),
        opts.iterations,
        opts.seed,
    )?;
    if sample.items.is_empty() {
        return Err(Error::bad_request(format!(
            "a sample of {n} of {}'s {} items drew none: ask for a larger sample",
            c, found.items
        )));
    }
    let draws = workload
        .as_ref()
        .map(|w| measure::Draws::load(ctx.engine, w))
        .transpose()?;
    let mut placements = std::mem::take(&mut found.placements).into_iter();
    let mut run = run::Run::new(
        ctx,
        &sample.items,
        workload.as_ref(),
        draws.as_ref(),
        Some(&sample.loads),
        progress,
    );
    let mut assessed = Vec::new();
    for cand in &first {
        let placement = placements
            .next()
            .ok_or_else(|| Error::internal("the scan placed fewer candidates than it was given"))?;
        assessed.push(run.assess(cand, *cand == current, placement)?);
    }
    if named.is_none() {
        // Proposed from the sample and the queries today's key saw, placed by a second scan.
        let proposed = propose::propose(&sample.items, &assessed[0].queries, &current)?;
        let plan = scan::ScanPlan {
            candidates: &proposed,
            paths: Vec::new(),
            counted: Vec::new(),
            sample_rate: 0.0,
        };
        let progress = &mut *run.progress;
        let mut reading = |done| progress(&Progress::Reading { done, total });
        let again = scan::scan(
            ctx.engine,
            (db, c),
            &ctx.current_key,
            &plan,
            &ctx.limits,
            &mut reading,
        )?;
        // A sample has more values per item than the data: keep the proposals whose
        // cardinality over every item is high.
        for (cand, placement) in proposed.iter().zip(again.placements) {
            if propose::high_cardinality(placement.logical.len() as u64, again.items) {
                assessed.push(run.assess(cand, false, placement)?);
            }
        }
    }
    let mut notes = vec![format!(
        "placement, cardinality, the largest logical partition and storage skew are exact, from \
         all {} items; each candidate's requests ran on a copy of a sample of {} items ({} \
         drawn evenly, {} holding the values its queries' parameters bind), and its queries' \
         loads were rescaled to the full data",
        found.items,
        sample.items.len(),
        sample.items.drawable,
        sample.fetched
    )];
    if named.is_none() {
        notes.push(
            "candidates were proposed from the sample (properties every sampled item has, that \
             the queries bind) and kept when every item gives them many values"
                .to_string(),
        );
    }
    Ok(report::rank(
        assessed,
        &ctx.info,
        (found.items, found.bytes),
        workload.as_ref(),
        opts,
        notes,
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
