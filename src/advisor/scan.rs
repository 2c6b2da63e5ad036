//! One pass over a large container's items that measures everything the advisor needs of
//! the data without holding it: every candidate's placement (logical partitions, ranges,
//! cardinality per level, id collisions: [`PlacementBuilder`], the same code the
//! full-copy path places with), the paths some item has, how many items hold each value
//! of the workload's parameter paths, and a uniform sample of the items for the replay
//! ([`super::sample`]).

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, SyncSender};

use serde_json::{Map, Value};

use super::candidates::{Candidate, SYNTHETIC_PROPERTY};
use super::digest::{FastMap, hash128};
use super::items::{self, Items};
use super::placement::{Limits, Placement, PlacementBuilder};
use crate::engine::{self, Backend, PartitionKeyDefinition};
use crate::error::{Error, Result};

/// Items read per progress report (and check for a cancel).
const PROGRESS_EVERY: u64 = 10_000;

/// What to measure in one pass.
pub struct ScanPlan<'a> {
    pub candidates: &'a [Candidate],
    /// Paths to learn whether any item has.
    pub paths: Vec<String>,
    /// Paths whose values are counted (the workload's query parameters).
    pub counted: Vec<String>,
    /// Share of the items kept as the uniform sample (0: none; 1 or more: all).
    pub sample_rate: f64,
}

/// What one pass found.
pub struct Scan {
    /// One per candidate, in the plan's order.
    pub placements: Vec<Placement>,
    pub items: u64,
    pub bytes: u64,
    /// The plan's paths that some item has.
    pub present: HashSet<String>,
    /// Per counted path: items per value (by [`value_digest`]).
    pub counts: HashMap<String, FastMap<u128, u64>>,
    /// The uniform sample, in the container's order.
    pub sample: Items,
}

impl Scan {
    /// How many items hold `value` at `path` (a counted path).
    pub fn count(&self, path: &str, value: &serde_json::Value) -> u64 {
        self.counts
            .get(path)
            .and_then(|c| c.get(&value_digest(value)))
            .copied()
            .unwrap_or(0)
    }
}

/// Items handed from the reading thread to the placing one at a time.
const BATCH: usize = 512;

/// Reads every item of `db`/`c` (today's key `key`) once and measures what `plan` asks.
/// `progress` gets the items read so far (of the container's count); false cancels (499).
/// 400 when the container is empty, or an item's key under a candidate is one the service
/// refuses.
///
/// Two threads share the work: this one reads and parses the items, counts values and
/// keeps the sample; a second places them under every candidate (hashing each key, its
/// logical partitions and levels), a batch at a time.
pub fn scan(
    engine: &dyn Backend,
    (db, c): (&str, &str),
    key: &PartitionKeyDefinition,
    plan: &ScanPlan,
    limits: &Limits,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Scan> {
    let builders = plan
        .candidates
        .iter()
        .map(PlacementBuilder::new)
        .collect::<Result<Vec<_>>>()?;
    // The top-level properties any path starts with: all a scanned item is parsed for.
    let keep: HashSet<String> = plan
        .candidates
        .iter()
        .flat_map(Candidate::source_paths)
        .chain(plan.paths.iter().cloned())
        .chain(plan.counted.iter().cloned())
        .filter_map(|p| engine::layout::first_member(&p).map(str::to_string))
        .chain(["id".to_string(), SYNTHETIC_PROPERTY.to_string()])
        .collect();
    let (send, receive) = std::sync::mpsc::sync_channel::<Vec<Parsed>>(8);
    std::thread::scope(|s| {
        let placing = s.spawn(move || place(builders, receive));
        let read = read(engine, (db, c), key, plan, &keep, send, progress);
        // The placing thread ends once the reader's channel closes (or on an error).
        let placed = placing
            .join()
            .map_err(|_| Error::internal("the advisor's placing thread panicked"))?;
        let (mut found, placed) = match (read, placed) {
            (Ok(found), Ok(placed)) => (found, placed),
            // A key the service refuses stops the reader too: the placing error says why.
            (_, Err(e)) | (Err(e), _) => return Err(e),
        };
        found.placements = placed.into_iter().map(|b| b.finish(limits)).collect();
        Ok(found)
    })
}

/// One item as the placing thread needs it.
struct Parsed {
    doc: Map<String, Value>,
    bytes: u64,
    id: u128,
}

/// The placing thread: every item under every candidate.
fn place(
    mut builders: Vec<PlacementBuilder>,
    receive: Receiver<Vec<Parsed>>,
) -> Result<Vec<PlacementBuilder>> {
    for batch in receive {
        for item in batch {
            for b in builders.iter_mut() {
                b.add_with_id(&item.doc, item.bytes, item.id)?;
            }
        }
    }
    Ok(builders)
}

/// The reading thread's part: everything but the placements, which go to `send`.
fn read(
    engine: &dyn Backend,
    (db, c): (&str, &str),
    key: &PartitionKeyDefinition,
    plan: &ScanPlan,
    keep: &HashSet<String>,
    send: SyncSender<Vec<Parsed>>,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Scan> {
    let mut present = vec![false; plan.paths.len()];
    let mut counts: Vec<FastMap<u128, u64>> = vec![FastMap::default(); plan.counted.len()];
    let mut sample = Items::default();
    // A member of the sample when the digest of its id falls under this bound: the same
    // items for the same data, spread evenly over every key.
    let bound = (plan.sample_rate.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut batch = Vec::with_capacity(BATCH);
    let stopped = || Error::internal("the advisor's placing thread stopped");
    engine.export(db, c, None, &mut |json| {
        let doc = items::parse_fields(json, keep)?;
        let size = json.len() as u64;
        let id = hash128(doc.get("id").and_then(Value::as_str).unwrap_or_default());
        for (p, seen) in plan.paths.iter().zip(present.iter_mut()) {
            *seen = *seen || engine::layout::value_at(&doc, p).is_some();
        }
        for (p, count) in plan.counted.iter().zip(counts.iter_mut()) {
            if let Some(v) = engine::layout::value_at(&doc, p) {
                *count.entry(value_digest(v)).or_default() += 1;
            }
        }
        n += 1;
        bytes += size;
        // By id alone: items that share an id (under other keys) go in or out together.
        if plan.sample_rate >= 1.0 || (plan.sample_rate > 0.0 && (id as u64) < bound) {
            sample.push(items::parse(json)?, size, key)?;
        }
        batch.push(Parsed {
            doc,
            bytes: size,
            id,
        });
        if batch.len() == BATCH {
            send.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                .map_err(|_| stopped())?;
        }
        if n.is_multiple_of(PROGRESS_EVERY) && !progress(n) {
            return Err(Error::cancelled("the advisor was cancelled"));
        }
        Ok(())
    })?;
    send.send(batch).map_err(|_| stopped())?;
    drop(send);
    if n == 0 {
        return Err(items::empty(db, c));
    }
    if !progress(n) {
        return Err(Error::cancelled("the advisor was cancelled"));
    }
    sample.drawable = sample.len();
    Ok(Scan {
        placements: Vec::new(),
        items: n,
        bytes,
        present: plan
            .paths
            .iter()
            .zip(present)
            .filter(|(_, seen)| *seen)
            .map(|(p, _)| p.clone())
            .collect(),
        counts: plan.counted.iter().cloned().zip(counts).collect(),
        sample,
    })
}

/// The digest a value is counted by: of a string's text, or of another value's JSON.
pub fn value_digest(v: &Value) -> u128 {
    match v {
        Value::String(s) => hash128(s),
        other => hash128(&other.to_string()) ^ 1,
    }
}
