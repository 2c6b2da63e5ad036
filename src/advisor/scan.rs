//! One pass over a large container's items that measures everything the advisor needs of
//! the data without holding it: every candidate's placement (logical partitions, ranges,
//! cardinality per level, id collisions: [`PlacementBuilder`], the same code the
//! full-copy path places with), the paths some item has, how many items hold each value
//! of the workload's parameter paths, and a uniform sample of the items for the replay
//! ([`super::sample`]).

use std::collections::{HashMap, HashSet};

use super::candidates::{Candidate, SYNTHETIC_PROPERTY};
use super::digest::hash128;
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
    /// Per counted path: items per value (by the 128-bit digest of the value's JSON text).
    pub counts: HashMap<String, HashMap<u128, u64>>,
    /// The uniform sample, in the container's order.
    pub sample: Items,
}

impl Scan {
    /// How many items hold `value` at `path` (a counted path).
    pub fn count(&self, path: &str, value: &serde_json::Value) -> u64 {
        self.counts
            .get(path)
            .and_then(|c| c.get(&hash128(&value.to_string())))
            .copied()
            .unwrap_or(0)
    }
}

/// Reads every item of `db`/`c` (today's key `key`) once and measures what `plan` asks.
/// `progress` gets the items read so far (of the container's count); false cancels (499).
/// 400 when the container is empty, or an item's key under a candidate is one the service
/// refuses.
pub fn scan(
    engine: &dyn Backend,
    (db, c): (&str, &str),
    key: &PartitionKeyDefinition,
    plan: &ScanPlan,
    limits: &Limits,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Scan> {
    let mut builders = plan
        .candidates
        .iter()
        .map(PlacementBuilder::new)
        .collect::<Result<Vec<_>>>()?;
    let mut present: HashSet<String> = HashSet::new();
    let mut counts: HashMap<String, HashMap<u128, u64>> = HashMap::new();
    let mut sample = Items::default();
    // A member of the sample when the digest of its id falls under this bound: the same
    // items for the same data, spread evenly over every key.
    let bound = (plan.sample_rate.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let (mut n, mut bytes) = (0u64, 0u64);
    // The top-level properties any path starts with: all a scanned item is parsed for.
    let keep: HashSet<String> = plan
        .candidates
        .iter()
        .flat_map(Candidate::source_paths)
        .chain(plan.paths.iter().cloned())
        .chain(plan.counted.iter().cloned())
        .filter_map(|p| p.split('/').find(|s| !s.is_empty()).map(str::to_string))
        .chain(["id".to_string(), SYNTHETIC_PROPERTY.to_string()])
        .collect();
    engine.export(db, c, None, &mut |json| {
        let doc = items::parse_fields(json, &keep)?;
        let size = json.len() as u64;
        let id = doc.get("id").and_then(serde_json::Value::as_str);
        let id_digest = hash128(id.unwrap_or_default());
        for b in builders.iter_mut() {
            b.add_with_id(&doc, size, id_digest)?;
        }
        for p in &plan.paths {
            if !present.contains(p) && engine::layout::value_at(&doc, p).is_some() {
                present.insert(p.clone());
            }
        }
        for p in &plan.counted {
            if let Some(v) = engine::layout::value_at(&doc, p) {
                *counts
                    .entry(p.clone())
                    .or_default()
                    .entry(hash128(&v.to_string()))
                    .or_default() += 1;
            }
        }
        n += 1;
        bytes += size;
        if plan.sample_rate > 0.0 {
            // By id alone: items that share an id (under other keys) go in or out together.
            if plan.sample_rate >= 1.0 || (id_digest as u64) < bound {
                sample.push(items::parse(json)?, size, key)?;
            }
        }
        if n.is_multiple_of(PROGRESS_EVERY) && !progress(n) {
            return Err(Error::cancelled("the advisor was cancelled"));
        }
        Ok(())
    })?;
    if n == 0 {
        return Err(items::empty(db, c));
    }
    if !progress(n) {
        return Err(Error::cancelled("the advisor was cancelled"));
    }
    sample.drawable = sample.len();
    Ok(Scan {
        placements: builders.into_iter().map(|b| b.finish(limits)).collect(),
        items: n,
        bytes,
        present,
        counts,
        sample,
    })
}
