//! The sample a large container's workload is replayed on: the scan's uniform sample of
//! its items (the workload draws its random items from these, so writes land on keys in the
//! data's own proportions), and for every query the replay will send, every item holding
//! the value its most selective parameter binds (fetched from the container by an
//! index-served query), so that query loads on the sample exactly what it would load on the
//! whole container. A value held by more than [`GROUP_CAP`] items is not fetched; the
//! query's loads are then scaled ([`super::scale`]).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::digest::hash128;
use super::items::{self, Items};
use super::measure;
use super::scale::{Loads, canonical};
use super::scan::Scan;
use super::workload::{FileOp, Workload};
use crate::engine::{self, Backend, PartitionKeyDefinition, QueryOptions};
use crate::error::Result;

/// Items sampled for the replay of a large container: a figure at which a copy and the
/// replay on it take a second or two per candidate, and fan-out queries see hundreds of
/// documents per range.
pub const SAMPLE_ITEMS: usize = 10_000;
/// Items holding one parameter value past which they are not fetched into the sample.
pub const GROUP_CAP: u64 = 2_000;
/// Items fetched for the draws' parameters at most (past it, loads are scaled).
const GROUPS_MAX_ITEMS: usize = 50_000;

/// The items to replay on and how their queries' loads scale to the container's.
pub struct Sample {
    pub items: Items,
    pub loads: Loads,
    /// Items fetched for the draws' parameters.
    pub fetched: usize,
}

/// The sample for `workload` run `iterations` times per pattern with `seed`: `scan`'s
/// uniform sample and the groups its queries' draws bind, from `db`/`c` (today's key `key`).
pub fn build(
    engine: &dyn Backend,
    (db, c): (&str, &str),
    key: &PartitionKeyDefinition,
    scan: &mut Scan,
    workload: Option<&Workload>,
    iterations: usize,
    seed: u64,
) -> Result<Sample> {
    let mut items = std::mem::take(&mut scan.sample);
    let mut fetched: HashSet<(String, u128)> = HashSet::new();
    let mut fetched_items = 0usize;
    // Per draw: its query key, and the (path, value) of its most selective parameter.
    let mut draws: Vec<((String, String), String, Value)> = Vec::new();
    let patterns = workload.map(|w| w.patterns.as_slice()).unwrap_or_default();
    for p in patterns {
        let Some(op @ FileOp::Query { sql, params }) = &p.op else {
            continue;
        };
        for i in 0..iterations as u64 {
            // A draw that finds no item fails in the replay, which reports it.
            let Ok(k) = measure::query_draw(&items, op, &p.id, seed, i) else {
                continue;
            };
            let values: Vec<(&str, &str, Value)> = params
                .iter()
                .map(|(name, path)| {
                    let v = engine::layout::value_at(&items.docs[k], path)
                        .cloned()
                        .unwrap_or(Value::Null);
                    (name.as_str(), path.as_str(), v)
                })
                .collect();
            let map: HashMap<String, Value> = values
                .iter()
                .map(|(n, _, v)| (n.to_string(), v.clone()))
                .collect();
            let Some((_, path, value)) = values
                .iter()
                .filter(|(_, _, v)| !matches!(v, Value::Object(_) | Value::Array(_)))
                .min_by_key(|(_, path, v)| scan.count(path, v))
            else {
                continue;
            };
            let count = scan.count(path, value);
            let id = (path.to_string(), hash128(&value.to_string()));
            if count <= GROUP_CAP
                && fetched_items + count as usize <= GROUPS_MAX_ITEMS
                && !fetched.contains(&id)
            {
                fetched_items += fetch(engine, (db, c), key, path, value, &mut items)?;
                fetched.insert(id.clone());
            }
            draws.push((
                (sql.clone(), canonical(&map)),
                path.to_string(),
                value.clone(),
            ));
        }
    }
    // Factors for the draws whose group was not fetched: container items holding the value
    // against sample items holding it.
    let mut loads = Loads {
        uniform: scan.items as f64 / items.len().max(1) as f64,
        ..Loads::default()
    };
    for (query, path, value) in draws {
        let id = (path.clone(), hash128(&value.to_string()));
        let factor = if fetched.contains(&id) {
            1.0
        } else {
            let held = items
                .docs
                .iter()
                .filter(|d| engine::layout::value_at(d, &path) == Some(&value))
                .count();
            scan.count(&path, &value) as f64 / held.max(1) as f64
        };
        loads.by_query.insert(query, factor);
    }
    Ok(Sample {
        items,
        loads,
        fetched: fetched_items,
    })
}

/// Adds every item of `db`/`c` holding `value` at `path` to `items`; how many were new.
fn fetch(
    engine: &dyn Backend,
    (db, c): (&str, &str),
    key: &PartitionKeyDefinition,
    path: &str,
    value: &Value,
    items: &mut Items,
) -> Result<usize> {
    let sql = format!("SELECT * FROM c WHERE c{} = @v", accessor(path));
    let mut opts = QueryOptions {
        params: HashMap::from([("v".to_string(), value.clone())]),
        max_items: Some(1000),
        ..QueryOptions::default()
    };
    let mut added = 0;
    loop {
        let page = engine.query(db, c, &sql, &opts)?;
        for d in &page.documents {
            let doc: Map<String, Value> = items::parse(d.json_bytes())?;
            if items.push(doc, d.json_len() as u64, key)? {
                added += 1;
            }
        }
        match page.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return Ok(added),
        }
    }
}

/// `/a/b` as the query's property accessor: `["a"]["b"]`.
fn accessor(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| format!("[{}]", Value::String(s.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_property_accessors() {
        assert_eq!(accessor("/userId"), r#"["userId"]"#);
        assert_eq!(accessor("/shipTo/city"), r#"["shipTo"]["city"]"#);
        assert_eq!(accessor(r#"/a"b"#), r#"["a\"b"]"#);
    }
}
