//! Where a candidate key puts the container's items: every item's key hashed with the
//! real EPK hashing, its logical partitions, and the physical partitions the container's
//! throughput and storage imply, split by the store's own rules (`engine::Layout`): the
//! layout a container created with that key and filled by one bulk import has.

use serde::Serialize;
use serde_json::{Map, Value};

use super::candidates::{Candidate, SYNTHETIC_PROPERTY};
use super::digest::{self, FastMap, FastSet, hash128};
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

/// A placement built one item at a time, so a scan of the container can place it under
/// every candidate in one pass without holding the items: per logical partition its EPK,
/// items and bytes; per level the distinct values seen; per id the logical partitions it
/// is in (to count ids that would collide).
///
/// Distinct values are the key's as the service tells them apart: for a one-path or
/// hierarchical key, distinct EPKs (of the whole key: its logical partitions; of a leading
/// prefix of levels: its level hashes); for a synthetic key's source paths, distinct JSON
/// texts of their values (a missing value as `{}`).
pub struct PlacementBuilder {
    candidate: Candidate,
    definition: PartitionKeyDefinition,
    paths: Vec<String>,
    /// EPK → index in `logical`.
    index: FastMap<Vec<u8>, usize>,
    /// The logical partitions, their EPKs left empty until [`PlacementBuilder::finish`]
    /// (the index owns them).
    logical: Vec<Logical>,
    /// Per level before the last (every level, for a synthetic key), the digests of the
    /// distinct prefixes seen ([`digest`]).
    levels: Vec<FastSet<u128>>,
    /// (logical partition, digest of the id) of every item placed.
    ids: FastSet<(usize, u128)>,
    id_collisions: u64,
}

impl PlacementBuilder {
    pub fn new(candidate: &Candidate) -> Result<PlacementBuilder> {
        let paths = candidate.source_paths();
        let counted = match candidate.is_synthetic() {
            true => paths.len(),
            false => paths.len().saturating_sub(1),
        };
        Ok(PlacementBuilder {
            definition: candidate.definition()?,
            candidate: candidate.clone(),
            levels: vec![FastSet::default(); counted],
            paths,
            index: FastMap::default(),
            logical: Vec::new(),
            ids: FastSet::default(),
            id_collisions: 0,
        })
    }

    /// Places one item of `bytes` stored bytes. 400 when its key value is one the service
    /// refuses (an object or array, over 2 KB).
    pub fn add(&mut self, doc: &Map<String, Value>, bytes: u64) -> Result<()> {
        let id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
        self.add_with_id(doc, bytes, hash128(id))
    }

    /// [`PlacementBuilder::add`] with the item's id digest ([`hash128`]) given, so a scan
    /// placing it under several candidates computes it once. `doc` needs only the
    /// properties the key's paths start with, `id`, and the synthetic property.
    pub fn add_with_id(&mut self, doc: &Map<String, Value>, bytes: u64, id: u128) -> Result<()> {
        let candidate = &self.candidate;
        let key = candidate.key_of(&self.definition, doc).map_err(|e| {
            Error::bad_request(format!(
                "candidate {candidate}: item {}: {}",
                doc.get("id").and_then(Value::as_str).unwrap_or("?"),
                e.message
            ))
        })?;
        let bytes = stored_bytes(candidate, doc, bytes, &key.value);
        if candidate.is_synthetic() {
            // Distinct values per leading source path: the prefix's JSON text.
            let mut prefix = String::from("[");
            for (level, path) in self.paths.iter().enumerate() {
                if level > 0 {
                    prefix.push(',');
                }
                match engine::layout::value_at(doc, path) {
                    Some(v) => prefix.push_str(&v.to_string()),
                    None => prefix.push_str("{}"),
                }
                let mut text = prefix.clone();
                text.push(']');
                self.levels[level].insert(hash128(&text));
            }
        } else {
            for (level, seen) in self.levels.iter_mut().enumerate() {
                seen.insert(digest::epk_prefix(&key.epk, level + 1));
            }
        }
        let at = match self.index.get(&key.epk) {
            Some(at) => *at,
            None => {
                self.logical.push(Logical {
                    epk: Vec::new(),
                    value: key.value,
                    items: 0,
                    bytes: 0,
                    range: 0,
                });
                self.index.insert(key.epk, self.logical.len() - 1);
                self.logical.len() - 1
            }
        };
        let l = &mut self.logical[at];
        l.items += 1;
        l.bytes += bytes;
        if !self.ids.insert((at, id)) {
            self.id_collisions += 1;
        }
        Ok(())
    }

    /// The placement in a container with `limits`: logical partitions in EPK order, the
    /// ranges the throughput implies, split for storage as one bulk import splits them.
    pub fn finish(self, limits: &Limits) -> Placement {
        let mut sorted = self.logical;
        for (epk, at) in self.index {
            sorted[at].epk = epk;
        }
        sorted.sort_unstable_by(|a, b| a.epk.cmp(&b.epk));
        let mut layout = Layout::for_throughput(limits.throughput);
        let sizes: Vec<(Vec<u8>, u64)> = sorted.iter().map(|l| (l.epk.clone(), l.bytes)).collect();
        layout.split_for_storage(&sizes, limits.max_partition_bytes);
        for l in sorted.iter_mut() {
            l.range = layout.owner(&l.epk).unwrap_or(0);
        }
        let ranges = range_figures(&layout, &sorted);
        let cardinality = cardinality(
            &self.candidate,
            &self.paths,
            &self.levels,
            sorted.len() as u64,
        );
        Placement {
            definition: self.definition,
            logical: sorted,
            layout,
            ranges,
            cardinality,
            id_collisions: self.id_collisions,
        }
    }
}

impl Placement {
    /// Places `items` under `candidate` in a container with `limits`. 400 when an item's
    /// key value is one the service refuses (an object or array, over 2 KB).
    pub fn compute(candidate: &Candidate, items: &Items, limits: &Limits) -> Result<Placement> {
        let mut builder = PlacementBuilder::new(candidate)?;
        for (doc, bytes) in items.docs.iter().zip(&items.bytes) {
            builder.add(doc, *bytes)?;
        }
        Ok(builder.finish(limits))
    }

    /// The largest logical partition by bytes.
    pub fn largest(&self) -> Option<&Logical> {
        self.logical.iter().max_by_key(|l| (l.bytes, l.items))
    }

    /// The logical partition whose EPK is `epk`.
    pub fn logical_at(&self, epk: &[u8]) -> Option<&Logical> {
        self.logical
            .binary_search_by(|l| l.epk.as_slice().cmp(epk))
            .ok()
            .map(|i| &self.logical[i])
    }

    /// Items and bytes of the logical partitions whose EPK lies in `[min, max)` (`max`
    /// empty: to the end of the hash space).
    pub fn within(&self, min: &[u8], max: &[u8]) -> (u64, u64) {
        let start = self.logical.partition_point(|l| l.epk.as_slice() < min);
        self.logical[start..]
            .iter()
            .take_while(|l| max.is_empty() || l.epk.as_slice() < max)
            .fold((0, 0), |(i, b), l| (i + l.items, b + l.bytes))
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

/// Distinct values per leading level of the key's source paths (`levels`; the last of a
/// one-path or hierarchical key is its `whole` count of logical partitions), then of the
/// key itself when it differs (a synthetic key with a suffix).
fn cardinality(
    candidate: &Candidate,
    paths: &[String],
    levels: &[FastSet<u128>],
    whole: u64,
) -> Vec<LevelCardinality> {
    let counts = levels
        .iter()
        .map(|seen| seen.len() as u64)
        .chain((!candidate.is_synthetic()).then_some(whole));
    let mut out: Vec<LevelCardinality> = counts
        .enumerate()
        .map(|(level, distinct)| LevelCardinality {
            key: paths[..=level].join(if candidate.is_synthetic() { "+" } else { "," }),
            distinct,
        })
        .collect();
    if out.last().is_none_or(|l| l.distinct != whole) {
        out.push(LevelCardinality {
            key: candidate.to_string(),
            distinct: whole,
        });
    }
    out
}
