//! Running the workload on one candidate's copy: each pattern's iterations through the
//! workbench's executor (over the [`Replayer`]), and what the requests to the advised
//! container cost, where they went and which logical partitions they wrote.
//!
//! Every figure is the engine's own: charges come from the RU model's counted work on a
//! real container with the candidate key (the copy), not from constants.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::candidates::request_form;
use super::replay::{Logged, Replayer};
use super::workload::{FileOp, Source, WorkPattern, Workload};
use crate::error::{Error, Result};
use crate::samples::rng::Rng;
use crate::workbench::exec::{FAN_OUT, OpRecord, SINGLE, TARGETED};
use crate::workbench::suite::{Action, Step, WriteKind};
use crate::workbench::template::Template;
use crate::workbench::{Executor, PatternRun, Pools, Vars};

/// How one pattern fared on one candidate.
#[derive(Debug, Clone, Default)]
pub struct PatternMeasure {
    pub id: String,
    pub title: String,
    /// Executions per second.
    pub rate: f64,
    /// Why it could not run under this key (a batch across logical partitions, ...).
    pub error: Option<String>,
    /// Requests to the advised container per execution, and the widest routing among them.
    pub requests: usize,
    pub routing: &'static str,
    /// Distinct physical partitions those requests touched (a median execution's).
    pub ranges_touched: usize,
    /// Median RU of those requests per execution.
    pub request_charge: f64,
    /// Mean RU per execution, per range id; and of writes only.
    pub per_range: HashMap<String, f64>,
    pub writes_per_range: HashMap<String, f64>,
    /// Mean write RU per execution, per candidate key (JSON text).
    pub writes_per_key: HashMap<String, f64>,
    /// A median execution's requests to the advised container (for projections).
    pub operations: Vec<OpRecord>,
    pub writes: bool,
}

/// What the workload draws its parameters from, loaded once for every candidate.
pub enum Draws {
    Suite(Pools),
    File,
}

impl Draws {
    pub fn load(engine: &dyn crate::engine::Backend, workload: &Workload) -> Result<Draws> {
        Ok(match &workload.source {
            Source::Suite { suite, design } => {
                let d = suite
                    .design(design)
                    .ok_or_else(|| Error::internal("the workload's design is gone"))?;
                Draws::Suite(Pools::load(engine, suite, d)?)
            }
            Source::File => Draws::File,
        })
    }
}

/// Runs `workload` through `replayer`, `iterations` times per pattern with `seed`'s
/// parameters (the same for every candidate). `progress(pattern, done)` before each
/// iteration; false cancels (499).
pub fn run_workload(
    replayer: &Replayer,
    workload: &Workload,
    draws: &Draws,
    iterations: usize,
    seed: u64,
    progress: &mut dyn FnMut(&str, u64) -> bool,
) -> Result<Vec<PatternMeasure>> {
    let executor = Executor::new(replayer);
    let mut out = Vec::new();
    let mut done = 0u64;
    for p in &workload.patterns {
        let mut runs: Vec<(PatternRun, Vec<Logged>)> = Vec::new();
        let mut error = None;
        for i in 0..iterations {
            if !progress(&p.id, done) {
                return Err(Error::cancelled("the advisor was cancelled"));
            }
            done += 1;
            let result = run_once(replayer, &executor, workload, draws, p, seed, i as u64);
            let log = replayer.take_log();
            match result {
                Ok(run) => runs.push((run, log)),
                Err(e) => {
                    error = Some(e.message);
                    break;
                }
            }
        }
        out.push(summarize(p, replayer.container, runs, error));
    }
    Ok(out)
}

/// The seed's run nonce: the same generated ids for every candidate's copy.
const NONCE: u64 = 0x0adf_150e;

fn run_once(
    replayer: &Replayer,
    executor: &Executor,
    workload: &Workload,
    draws: &Draws,
    p: &WorkPattern,
    seed: u64,
    i: u64,
) -> Result<PatternRun> {
    match (&workload.source, draws, &p.op) {
        (Source::Suite { suite, design }, Draws::Suite(pools), _) => {
            let d = suite
                .design(design)
                .ok_or_else(|| Error::internal("the workload's design is gone"))?;
            let pattern = suite
                .pattern(&p.id)
                .ok_or_else(|| Error::internal("the workload's pattern is gone"))?;
            let steps = pattern.steps_for(&d.id).unwrap_or_default();
            let mut vars = Vars::draw(suite, d, pools, seed, NONCE, &p.id, i, &[])?;
            executor.run(&d.database, steps, &mut vars)
        }
        (_, _, Some(op)) => {
            let (step, mut vars) = file_step(replayer, op, &p.id, seed, i)?;
            executor.run(replayer.database, std::slice::from_ref(&step), &mut vars)
        }
        _ => Err(Error::internal("a workload pattern with nothing to send")),
    }
}

/// One execution of a workload file's operation as a workbench step, and its variables:
/// a random item's values for the parameters, its id and key, or its copy for a create.
fn file_step(
    replayer: &Replayer,
    op: &FileOp,
    label: &str,
    seed: u64,
    i: u64,
) -> Result<(Step, Vars)> {
    let items = replayer.items;
    let mut rng = Rng::derive(seed, label, i);
    // A recorded operation names its items; the others draw one.
    let (op, k) = match op {
        FileOp::On { kind, items: on } if !on.is_empty() => {
            (kind.as_ref(), on[rng.below(on.len() as u64) as usize])
        }
        FileOp::On { kind, .. } => (kind.as_ref(), drawn_item(items, kind, &mut rng)?),
        _ => (op, drawn_item(items, op, &mut rng)?),
    };
    let doc = &items.docs[k];
    let mut vars = Vars::default();
    let t = |s: &str| Template::parse(&json!(s)).map_err(Error::internal);
    let container = replayer.container.to_string();
    let mut query = |sql: &str, params: Vec<(String, Value)>| -> Result<Action> {
        let mut list = Vec::new();
        for (name, v) in params {
            list.push((name.clone(), t(&format!("{{p_{name}}}"))?));
            vars.set(format!("p_{name}"), v);
        }
        Ok(Action::Query {
            container: container.clone(),
            sql: sql.to_string(),
            params: list,
            pk: None,
        })
    };
    let action = match op {
        FileOp::Query { sql, params } => {
            let values = params
                .iter()
                .map(|(name, path)| {
                    let v = crate::engine::layout::value_at(doc, path)
                        .cloned()
                        .unwrap_or(Value::Null);
                    (name.clone(), v)
                })
                .collect();
            query(sql, values)?
        }
        FileOp::Recorded { sql, samples } => {
            // The parameter sets in turn, so every recorded one is sent.
            let set = samples
                .get(i as usize % samples.len().max(1))
                .cloned()
                .unwrap_or_default();
            query(sql, set)?
        }
        FileOp::On { .. } => {
            return Err(Error::internal("a recorded operation names another one"));
        }
        FileOp::Read => {
            vars.set("id", doc.get("id").cloned().unwrap_or(Value::Null));
            let key = crate::engine::item_key(replayer.current, doc)?.value;
            vars.set("pk", request_form(&key));
            Action::Read {
                container,
                id: t("{id}")?,
                pk: t("{pk}")?,
            }
        }
        FileOp::Create | FileOp::Replace => {
            let mut body = doc.clone();
            let kind = if matches!(op, FileOp::Create) {
                body.insert("id".into(), Value::String(rng.uuid()));
                WriteKind::Create
            } else {
                WriteKind::Replace
            };
            vars.set("body", Value::Object(body));
            Action::Write {
                kind,
                container,
                body: t("{body}")?,
            }
        }
    };
    let step = Step {
        action,
        bind: None,
        for_each: None,
        setup: false,
        order_by: None,
        take: None,
    };
    Ok((step, vars))
}

/// The item iteration `i` of pattern `label`'s query `op` draws its parameters from: the
/// draw [`run_workload`] makes (for a sample's groups, before the replay).
pub fn query_draw(
    items: &super::items::Items,
    op: &FileOp,
    label: &str,
    seed: u64,
    i: u64,
) -> Result<usize> {
    drawn_item(items, op, &mut Rng::derive(seed, label, i))
}

/// A random item of the drawable ones (the same for every candidate: the draw is seeded), or for a query, the
/// next one that has every path its parameters name.
fn drawn_item(items: &super::items::Items, op: &FileOp, rng: &mut Rng) -> Result<usize> {
    let needs: Vec<&str> = match op {
        FileOp::Query { params, .. } => params.iter().map(|(_, p)| p.as_str()).collect(),
        _ => Vec::new(),
    };
    let has_all = |k: usize| {
        needs
            .iter()
            .all(|p| crate::engine::layout::value_at(&items.docs[k], p).is_some())
    };
    let n = items.drawable.min(items.len());
    let first = rng.below(n as u64) as usize;
    (0..n)
        .map(|d| (first + d) % n)
        .find(|k| has_all(*k))
        .ok_or_else(|| Error::bad_request("no item has every path the operation's parameters name"))
}

/// The figures of one pattern over its runs (each with the copy's log of its requests).
fn summarize(
    p: &WorkPattern,
    container: &str,
    runs: Vec<(PatternRun, Vec<Logged>)>,
    error: Option<String>,
) -> PatternMeasure {
    let mut m = PatternMeasure {
        id: p.id.clone(),
        title: p.title.clone(),
        rate: p.rate,
        error,
        routing: SINGLE,
        ..PatternMeasure::default()
    };
    let n = runs.len().max(1) as f64;
    let mut charges: Vec<(f64, usize)> = Vec::new();
    for (k, (run, log)) in runs.iter().enumerate() {
        // The copy logged one entry per request to the advised container, in order.
        let ours: Vec<&OpRecord> = run
            .ops
            .iter()
            .filter(|o| o.container == container)
            .collect();
        let mut charge = 0.0;
        for (op, logged) in ours.iter().zip(log) {
            if op.setup {
                continue;
            }
            charge += op.request_charge;
            let writes = !matches!(op.kind, "read" | "query");
            for (range, ru) in &logged.ranges {
                *m.per_range.entry(range.clone()).or_default() += ru / n;
                if writes {
                    *m.writes_per_range.entry(range.clone()).or_default() += ru / n;
                }
            }
            if let Some(key) = &logged.written_key {
                *m.writes_per_key.entry(key.clone()).or_default() += op.request_charge / n;
            }
            m.writes |= writes;
        }
        charges.push((crate::charge::round(charge), k));
    }
    charges.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((charge, k)) = charges.get(charges.len() / 2) {
        m.request_charge = *charge;
        let run = &runs[*k].0;
        m.operations = run
            .ops
            .iter()
            .filter(|o| o.container == container && !o.setup)
            .cloned()
            .collect();
        m.requests = m.operations.len();
        m.routing = widest(m.operations.iter().map(|o| o.routing));
        let mut ranges: Vec<&String> = m.operations.iter().flat_map(|o| &o.partitions).collect();
        ranges.sort();
        ranges.dedup();
        m.ranges_touched = ranges.len();
    }
    m
}

/// The widest of some routings: fan-out over targeted over single-partition.
pub fn widest<'a>(routings: impl Iterator<Item = &'a str>) -> &'static str {
    let mut out = SINGLE;
    for r in routings {
        if r == FAN_OUT {
            return FAN_OUT;
        }
        if r == TARGETED {
            out = TARGETED;
        }
    }
    out
}
