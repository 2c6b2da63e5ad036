//! Physical partitions: partition key ranges over the EPK space and how they split.
//!
//! A container's live ranges tile `["", "FF")` without gaps, sorted by `min`. A split
//! replaces one range by two children that carry the parent's id in `parents` and continue
//! its LSN sequence; the parent is kept as *retired* so change feed readers can follow a
//! continuation taken before the split. Items never move: they are keyed by EPK, so a
//! split only rewrites this table and the per-range statistics.
//!
//! This module sits below the catalog and never names it: the catalog's container
//! definitions hold these ranges, and what a container's settings imply for them (how many
//! ranges a throughput starts with) the catalog says, from the limits here.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::epk::{self, Epk};
use super::keys::RangeId;

/// RU/s one physical partition can serve; more throughput needs more ranges.
pub const MAX_RU_PER_RANGE: u64 = 10_000;
/// Starting RU/s per range the service assumes for manual throughput at creation.
pub const MANUAL_RU_PER_INITIAL_RANGE: u64 = 6_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PkRange {
    pub id: RangeId,
    #[serde(with = "hex_epk")]
    pub min_inclusive: Epk,
    #[serde(with = "hex_epk")]
    pub max_exclusive: Epk,
    /// Ids of every ancestor, oldest first.
    pub parents: Vec<RangeId>,
}

impl PkRange {
    pub fn contains(&self, epk: &[u8]) -> bool {
        self.min_inclusive.as_bytes() <= epk && epk < self.max_exclusive.as_bytes()
    }

    /// True when `[min, max)` lies inside this range.
    pub fn covers(&self, min: &Epk, max: &Epk) -> bool {
        self.min_inclusive <= *min && *max <= self.max_exclusive
    }

    pub fn overlaps(&self, min: &Epk, max: &Epk) -> bool {
        self.min_inclusive < *max && *min < self.max_exclusive
    }

    /// This range cut down to `[min, max)`: the part of it a request for an EPK span smaller
    /// than a physical partition reads (the service's `x-ms-start-epk` / `x-ms-end-epk`).
    /// `None` when the span misses the range.
    pub fn narrowed(&self, min: &Epk, max: &Epk) -> Option<PkRange> {
        if !self.overlaps(min, max) {
            return None;
        }
        let mut part = self.clone();
        part.min_inclusive = part.min_inclusive.max(min.clone());
        part.max_exclusive = part.max_exclusive.min(max.clone());
        Some(part)
    }

    /// Fraction of the V2 hash space this range spans, for sizing splits and drawing.
    pub fn width(&self) -> f64 {
        position(&self.max_exclusive) - position(&self.min_inclusive)
    }
}

/// A range as results and responses name it: its id and its bounds in the service's hex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RangeNames {
    pub id: Arc<str>,
    pub min_inclusive: Arc<str>,
    pub max_exclusive: Arc<str>,
}

impl RangeNames {
    pub fn of(range: &PkRange) -> RangeNames {
        RangeNames {
            id: Arc::from(range.id.to_string()),
            min_inclusive: Arc::from(range.min_inclusive.to_hex()),
            max_exclusive: Arc::from(range.max_exclusive.to_hex()),
        }
    }
}

/// The [`RangeNames`] of a container's live ranges, made on first use and kept with the
/// definition the catalog caches, so that a query does not format every range it reads
/// again (a fan-out names ten ranges for ten items).
///
/// A cache, not part of the definition: it compares equal to any other, is not stored, and
/// a clone (which its owner may go on to change) starts empty. A range's id names the same
/// bounds for as long as the range exists, so names found by id are right even for a
/// definition changed after they were made; a range they lack is named afresh.
#[derive(Default)]
pub struct RangeNamesCache(OnceLock<Vec<(RangeId, RangeNames)>>);

impl RangeNamesCache {
    /// The names of `range`, one of `live`.
    pub fn get(&self, live: &[PkRange], range: &PkRange) -> RangeNames {
        let all = self
            .0
            .get_or_init(|| live.iter().map(|r| (r.id, RangeNames::of(r))).collect());
        match all.iter().find(|(id, _)| *id == range.id) {
            Some((_, names)) => names.clone(),
            None => RangeNames::of(range),
        }
    }
}

impl Clone for RangeNamesCache {
    fn clone(&self) -> RangeNamesCache {
        RangeNamesCache::default()
    }
}

impl PartialEq for RangeNamesCache {
    fn eq(&self, _: &RangeNamesCache) -> bool {
        true
    }
}

impl std::fmt::Debug for RangeNamesCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RangeNamesCache")
    }
}

/// An EPK span given as hex bounds (the service's `x-ms-start-epk` and `x-ms-end-epk`);
/// 400 when either bound is not hex.
pub fn span_from_hex(start: &str, end: &str) -> crate::error::Result<(Epk, Epk)> {
    let parse = |hex: &str| {
        Epk::from_hex(hex).ok_or_else(|| {
            crate::error::Error::bad_request(format!(
                "{hex:?} is not an effective partition key (upper-case hex)"
            ))
        })
    };
    Ok((parse(start)?, parse(end)?))
}

/// Position of an EPK in the V2 space as a fraction in [0, 1] (first 8 bytes suffice).
pub fn position(e: &Epk) -> f64 {
    let b = e.as_bytes();
    if b.first() == Some(&0xFF) {
        return 1.0;
    }
    let mut buf = [0u8; 8];
    for (i, v) in b.iter().take(8).enumerate() {
        buf[i] = *v;
    }
    // The space ends at 0x40.. because V2 clears the top two bits.
    (u64::from_be_bytes(buf) as f64 / (1u128 << 62) as f64).min(1.0)
}

/// Ranges needed to serve `ru` RU/s.
pub fn required_for_throughput(ru: u64) -> usize {
    ru.div_ceil(MAX_RU_PER_RANGE).max(1) as usize
}

/// The even initial layout with ids 0..n.
pub fn initial_layout(n: usize) -> Vec<PkRange> {
    epk::even_boundaries(n)
        .into_iter()
        .enumerate()
        .map(|(i, (min, max))| PkRange {
            id: i as RangeId,
            min_inclusive: min,
            max_exclusive: max,
            parents: Vec::new(),
        })
        .collect()
}

/// The live range that owns `epk`, by binary search over the sorted table.
pub fn owner<'r>(ranges: &'r [PkRange], epk: &[u8]) -> Option<&'r PkRange> {
    let i = ranges.partition_point(|r| r.min_inclusive.as_bytes() <= epk);
    let r = ranges.get(i.checked_sub(1)?)?;
    r.contains(epk).then_some(r)
}

/// Two children of `parent` split at `at`, with fresh ids.
pub fn split(parent: &PkRange, at: Epk, left_id: RangeId, right_id: RangeId) -> (PkRange, PkRange) {
    let mut parents = parent.parents.clone();
    parents.push(parent.id);
    (
        PkRange {
            id: left_id,
            min_inclusive: parent.min_inclusive.clone(),
            max_exclusive: at.clone(),
            parents: parents.clone(),
        },
        PkRange {
            id: right_id,
            min_inclusive: at,
            max_exclusive: parent.max_exclusive.clone(),
            parents,
        },
    )
}

/// Picks the split point of a range over its limit: the EPK at which the cumulative bytes
/// of its logical partitions (sorted by EPK) first reach half the total, so roughly half of
/// the data lands on each side. `None` when the range holds a single logical partition —
/// a logical partition is never split.
pub fn storage_split_point(partitions: &[(Epk, u64)]) -> Option<Epk> {
    if partitions.len() < 2 {
        return None;
    }
    let total: u64 = partitions.iter().map(|(_, b)| b).sum();
    let mut acc = 0u64;
    for (i, (_, bytes)) in partitions.iter().enumerate() {
        acc += bytes;
        if acc * 2 >= total {
            // Both children must hold at least one logical partition.
            let j = (i + 1).min(partitions.len() - 1);
            return Some(partitions[j].0.clone());
        }
    }
    None
}

mod hex_epk {
    use super::Epk;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(e: &Epk, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&e.to_hex())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Epk, D::Error> {
        let s = String::deserialize(d)?;
        Epk::from_hex(&s).ok_or_else(|| serde::de::Error::custom(format!("invalid EPK {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_names_are_kept_by_id_and_a_clone_starts_without_them() {
        let live = initial_layout(4);
        let cache = RangeNamesCache::default();
        for range in &live {
            assert_eq!(cache.get(&live, range), RangeNames::of(range));
        }
        let names = cache.get(&live, &live[1]);
        assert_eq!(&*names.id, "1");
        assert_eq!(&*names.min_inclusive, live[1].min_inclusive.to_hex());
        assert_eq!(&*names.max_exclusive, live[1].max_exclusive.to_hex());
        assert_eq!(&*cache.get(&live, &live[0]).min_inclusive, "");
        assert_eq!(&*cache.get(&live, &live[3]).max_exclusive, "FF");
        // Kept: the same text, not made again.
        assert!(Arc::ptr_eq(&names.id, &cache.get(&live, &live[1]).id));
        // A range the cache was not made with (a split's child) is named afresh.
        let child = PkRange {
            id: 9,
            min_inclusive: live[1].min_inclusive.clone(),
            max_exclusive: Epk::from_hex("30").unwrap(),
            parents: vec![1],
        };
        assert_eq!(cache.get(&live, &child), RangeNames::of(&child));
        let copy = cache.clone();
        assert!(copy.0.get().is_none());
        assert_eq!(copy, cache);
    }

    #[test]
    fn owner_finds_the_range() {
        let ranges = initial_layout(4);
        assert_eq!(ranges[0].min_inclusive, Epk::min());
        assert_eq!(ranges[3].max_exclusive, Epk::max());
        let e = Epk::from_hex("25000000000000000000000000000000").unwrap();
        assert_eq!(owner(&ranges, e.as_bytes()).unwrap().id, 2);
        assert_eq!(owner(&ranges, &[]).unwrap().id, 0);
        assert_eq!(owner(&ranges, &[0x3F; 16]).unwrap().id, 3);
    }

    #[test]
    fn storage_split_needs_two_partitions() {
        let a = Epk::from_hex("10").unwrap();
        let b = Epk::from_hex("20").unwrap();
        let c = Epk::from_hex("30").unwrap();
        assert_eq!(storage_split_point(&[(a.clone(), 10)]), None);
        assert_eq!(
            storage_split_point(&[(a.clone(), 10), (b.clone(), 10)]),
            Some(b.clone())
        );
        assert_eq!(
            storage_split_point(&[(a.clone(), 100), (b.clone(), 1), (c.clone(), 1)]),
            Some(b.clone())
        );
        assert_eq!(
            storage_split_point(&[(a, 1), (b, 1), (c.clone(), 100)]),
            Some(c)
        );
    }

    #[test]
    fn split_children_tile_the_parent() {
        let parent = initial_layout(1).remove(0);
        let mid = epk::midpoint(&parent.min_inclusive, &parent.max_exclusive).unwrap();
        let (l, r) = split(&parent, mid, 1, 2);
        assert_eq!(l.min_inclusive, parent.min_inclusive);
        assert_eq!(l.max_exclusive, r.min_inclusive);
        assert_eq!(r.max_exclusive, parent.max_exclusive);
        assert_eq!(l.parents, vec![0]);
        assert!((l.width() - 0.5).abs() < 1e-9);
    }
}
