//! Where a candidate key puts the container's items: every item's key hashed with the
//! real EPK hashing, its logical partitions, and the physical partitions the container's
//! throughput and storage imply, split by the store's own rules (`engine::Layout`): the
//! layout a container created with that key and filled by one bulk import has.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::candidates::{Candidate, SYNTHETIC_PROPERTY};
use super::items::Items;
use crate::engine::{self, Layout, PartitionKeyDefinition, PartitionKeyRange, Throughput};
use crate::error::{Error, Result};

/// The container settings a placement depends on.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub throughput: Throughput,
    pub max_partition_bytes: u64,
    pub max_logical_partition_bytes: u64,
}

/// One logical partition under a candidate.
#[derive(Debug, Clone)]
pub struct Logical {
    pub epk: Vec<u8>,
    /// The key value in wire form (an array, one element per level).
    pub value: Value,
    pub items: u64,
    pub bytes: u64,
    /// Index of its physical partition in the layout.
    pub range: usize,
}

/// The items of a container placed under one candidate key.
pub struct Placement {
    pub definition: PartitionKeyDefinition,
    /// Logical partitions in EPK order.
    pub logical: Vec<Logical>,
    /// Per item, its logical partition.
    pub item_partition: Vec<usize>,
    pub layout: Layout,
    pub ranges: Vec<RangePlacement>,
    pub cardinality: Vec<LevelCardinality>,
    /// Items whose id another item of the same logical partition already has: a container
    /// with this key cannot hold both (ids are unique within a logical partition).
    pub id_collisions: u64,
}

/// A physical partition's share of the data.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RangePlacement {
    pub id: String,
    pub min_inclusive: String,
    pub max_exclusive: String,
    pub items: u64,
    pub bytes: u64,
    pub logical_partitions: u64,
}

/// Distinct values of the key's first `levels` levels (of a synthetic key: of its first
/// source paths, then of the whole key).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LevelCardinality {
    pub key: String,
    pub distinct: u64,
}

impl Placement {
    /// Places `items` under `candidate` in a container with `limits`. 400 when an item's
    /// key value is one the service refuses (an object or array, over 2 KB).
    pub fn compute(candidate: &Candidate, items: &Items, limits: &Limits) -> Result<Placement> {
        let definition = candidate.definition()?;
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut logical: Vec<Logical> = Vec::new();
        let mut item_partition = Vec::with_capacity(items.len());
        for (i, doc) in items.docs.iter().enumerate() {
            let key = candidate.key_of(&definition, doc).map_err(|e| {
                Error::bad_request(format!(
                    "candidate {candidate}: item {}: {}",
                    doc.get("id").and_then(Value::as_str).unwrap_or("?"),
                    e.message
                ))
            })?;
            let bytes = stored_bytes(candidate, doc, items.bytes[i], &key.value);
            let at = *index.entry(key.epk.clone()).or_insert_with(|| {
                logical.push(Logical {
                    epk: key.epk,
                    value: key.value,
                    items: 0,
                    bytes: 0,
                    range: 0,
                });
                logical.len() - 1
            });
            logical[at].items += 1;
            logical[at].bytes += bytes;
            item_partition.push(at);
        }
        // EPK order, and the items' indexes remapped to it.
        let mut order: Vec<usize> = (0..logical.len()).collect();
        order.sort_by(|a, b| logical[*a].epk.cmp(&logical[*b].epk));
        let mut new_at = vec![0; logical.len()];
        for (new, old) in order.iter().enumerate() {
            new_at[*old] = new;
        }
        let mut sorted: Vec<Logical> = order.iter().map(|i| logical[*i].clone()).collect();
        for p in item_partition.iter_mut() {
            *p = new_at[*p];
        }
        let mut layout = Layout::for_throughput(limits.throughput);
        let sizes: Vec<(Vec<u8>, u64)> = sorted.iter().map(|l| (l.epk.clone(), l.bytes)).collect();
        layout.split_for_storage(&sizes, limits.max_partition_bytes);
        for l in sorted.iter_mut() {
            l.range = layout.owner(&l.epk).unwrap_or(0);
        }
        let mut ids: HashSet<(usize, &str)> = HashSet::with_capacity(items.len());
        let id_collisions = items
            .docs
            .iter()
            .zip(&item_partition)
            .filter(|(doc, p)| {
                !ids.insert((
                    **p,
                    doc.get("id").and_then(Value::as_str).unwrap_or_default(),
                ))
            })
            .count() as u64;
        let ranges = range_figures(&layout, &sorted);
        let cardinality = cardinality(candidate, items, sorted.len() as u64);
        Ok(Placement {
            definition,
            logical: sorted,
            item_partition,
            layout,
            ranges,
            cardinality,
            id_collisions,
        })
    }

    /// The largest logical partition by bytes.
    pub fn largest(&self) -> Option<&Logical> {
        self.logical.iter().max_by_key(|l| (l.bytes, l.items))
    }

    /// The physical partition (index) of item `i`.
    pub fn range_of_item(&self, i: usize) -> usize {
        self.logical[self.item_partition[i]].range
    }

    /// Largest range's bytes against the mean over ranges (1 = even).
    pub fn storage_skew(&self) -> f64 {
        let total: u64 = self.ranges.iter().map(|r| r.bytes).sum();
        let max = self.ranges.iter().map(|r| r.bytes).max().unwrap_or(0);
        if total == 0 {
            return 1.0;
        }
        max as f64 * self.ranges.len() as f64 / total as f64
    }

    pub fn range_table(&self) -> Vec<PartitionKeyRange> {
        self.layout.ranges()
    }
}

/// Bytes item `doc` takes in a container keyed by `candidate`: its stored size here, plus
/// the synthetic property a synthetic key writes into it (`,"partitionKey":"…"`).
fn stored_bytes(
    candidate: &Candidate,
    doc: &serde_json::Map<String, Value>,
    bytes: u64,
    key: &Value,
) -> u64 {
    if !candidate.is_synthetic() {
        return bytes;
    }
    let value = key.get(0).cloned().unwrap_or(Value::Null);
    let added = serde_json::to_string(&value).map_or(0, |s| s.len()) + SYNTHETIC_PROPERTY.len() + 4;
    match doc.get(SYNTHETIC_PROPERTY) {
        None => bytes + added as u64,
        Some(old) => {
            let removed =
                serde_json::to_string(old).map_or(0, |s| s.len()) + SYNTHETIC_PROPERTY.len() + 4;
            (bytes + added as u64).saturating_sub(removed as u64)
        }
    }
}

fn range_figures(layout: &Layout, logical: &[Logical]) -> Vec<RangePlacement> {
    let mut out: Vec<RangePlacement> = layout
        .ranges()
        .into_iter()
        .map(|r| RangePlacement {
            id: r.id,
            min_inclusive: r.min_inclusive,
            max_exclusive: r.max_exclusive,
            items: 0,
            bytes: 0,
            logical_partitions: 0,
        })
        .collect();
    for l in logical {
        if let Some(r) = out.get_mut(l.range) {
            r.items += l.items;
            r.bytes += l.bytes;
            r.logical_partitions += 1;
        }
    }
    out
}

/// Distinct values per leading level of the key's source paths, then of the key itself
/// when it differs (a synthetic key with a suffix).
fn cardinality(candidate: &Candidate, items: &Items, whole: u64) -> Vec<LevelCardinality> {
    let paths = candidate.source_paths();
    let mut out = Vec::new();
    for level in 1..=paths.len() {
        let mut seen: HashSet<String> = HashSet::new();
        for doc in &items.docs {
            let prefix: Vec<Value> = paths[..level]
                .iter()
                .map(|p| {
                    engine::layout::value_at(doc, p)
                        .cloned()
                        .unwrap_or(Value::Object(Default::default()))
                })
                .collect();
            seen.insert(Value::Array(prefix).to_string());
        }
        out.push(LevelCardinality {
            key: paths[..level].join(if candidate.is_synthetic() { "+" } else { "," }),
            distinct: seen.len() as u64,
        });
    }
    if out.last().is_none_or(|l| l.distinct != whole) {
        out.push(LevelCardinality {
            key: candidate.to_string(),
            distinct: whole,
        });
    }
    out
}
