//! Candidates proposed when the user names none: the properties the guides would consider
//! — present in every item, with high cardinality, and filtered on by equality in the
//! workload's queries (so those queries would stay in one logical partition) — best
//! first by how many of the workload's queries they would route to one partition.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::assess::LOW_CARDINALITY;
use super::candidates::Candidate;
use super::items::Items;
use crate::error::Result;

/// Candidates proposed at most (besides today's key).
const MAX_PROPOSED: usize = 5;
/// Properties the store writes on every item: never a key.
const SYSTEM: [&str; 6] = ["_rid", "_self", "_etag", "_attachments", "_ts", "ttl"];

/// The proposed candidates for `items` under a workload that sent `queries` (text and
/// parameters); today's key `current` is left out (it is always assessed).
pub fn propose(
    items: &Items,
    queries: &[(String, HashMap<String, Value>)],
    current: &Candidate,
) -> Result<Vec<Candidate>> {
    let mut scored: Vec<(usize, String)> = Vec::new();
    for path in everywhere(items) {
        let distinct: HashSet<String> = items
            .docs
            .iter()
            .filter_map(|d| crate::engine::layout::value_at(d, &path).map(Value::to_string))
            .collect();
        if !high_cardinality(distinct.len() as u64, items.len() as u64) {
            continue;
        }
        let mut binds = 0;
        let mut seen = HashSet::new();
        for (sql, params) in queries {
            if !seen.insert(sql) {
                continue;
            }
            if crate::engine::bound_keys(sql, params, std::slice::from_ref(&path))?.is_some() {
                binds += 1;
            }
        }
        if binds > 0 {
            scored.push((binds, path));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok(scored
        .into_iter()
        .map(|(_, path)| Candidate::Path { path })
        .filter(|c| c != current)
        .take(MAX_PROPOSED)
        .collect())
}

/// Whether `distinct` values among `items` items are many enough to propose: the guides'
/// hundreds, or fewer than 10 items per value.
pub fn high_cardinality(distinct: u64, items: u64) -> bool {
    distinct >= LOW_CARDINALITY || distinct * 10 > items
}

/// Top-level properties with a scalar value (a valid key value) in every item.
fn everywhere(items: &Items) -> Vec<String> {
    let scalar = |doc: &Map<String, Value>, k: &str| {
        matches!(
            doc.get(k),
            Some(Value::String(_) | Value::Number(_) | Value::Bool(_))
        )
    };
    let Some(first) = items.docs.first() else {
        return Vec::new();
    };
    let mut names: Vec<String> = first
        .keys()
        .filter(|k| !SYSTEM.contains(&k.as_str()) && scalar(first, k))
        // Only names a key path can spell.
        .filter(|k| k.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .cloned()
        .collect();
    for doc in &items.docs[1..] {
        names.retain(|k| scalar(doc, k));
    }
    names.into_iter().map(|k| format!("/{k}")).collect()
}
