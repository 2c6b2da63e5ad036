//! `cosmoscope check` in the store's words: one container's records checked against each
//! other. Every item's record decodes and its text is JSON; the container's and each range's
//! item counts equal a recount; the index equals what a rebuild from the items would write;
//! every change feed record decodes and no item carries an LSN its range has not reached.
//!
//! The index is compared without holding either side in memory: each side is summed as a
//! multiset (a count and two wrapping sums of each entry's hash), which differ when an entry
//! is missing, extra or changed, whatever the container's size.

use std::hash::Hasher;

use serde_json::Value;

use super::catalog::ContainerDef;
use super::feed::FeedEvent;
use super::index::{IndexLayout, generation_prefix};
use super::readahead::ReadAhead;
use super::{RoTxn, Store, item, keys};
use crate::error::Result;

/// What checking one container found; `problems` is empty for a sound container.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContainerCheck {
    /// Item records read.
    pub items: u64,
    /// Change feed records read.
    pub feed_records: u64,
    /// Index entries stored for the container's current index generation.
    pub index_entries: u64,
    /// Whether the index was compared (not while a policy change is being built).
    pub index_compared: bool,
    /// What is wrong, one sentence each.
    pub problems: Vec<String>,
}

/// Entries summed as a multiset: equal sets give equal sums.
#[derive(Debug, Default, PartialEq, Clone, Copy)]
struct Multiset {
    count: u64,
    a: u64,
    b: u64,
}

impl Multiset {
    fn add(&mut self, key: &[u8]) {
        let hash = |seed: u64| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            h.write_u64(seed);
            h.write(key);
            h.finish()
        };
        self.count += 1;
        self.a = self.a.wrapping_add(hash(0x5bd1_e995));
        self.b = self.b.wrapping_add(hash(0x1b87_3593));
    }
}

/// Checks one container in one read transaction.
pub fn check_container(store: &Store, txn: &RoTxn, def: &ContainerDef) -> Result<ContainerCheck> {
    let mut out = ContainerCheck::default();
    let layout = IndexLayout::current(def);
    out.index_compared = def.index_build.is_none();
    let mut expected = Multiset::default();
    let mut per_range: Vec<u64> = vec![0; def.ranges.len()];
    let mut bad_json = 0u64;
    let mut first_bad: Option<String> = None;
    let mut lsn_ahead = 0u64;
    let range_lsns: Vec<u64> = def
        .ranges
        .iter()
        .map(|r| store.range_lsn(txn, def, r.id))
        .collect::<Result<_>>()?;

    let prefix = keys::container_prefix(def.rid);
    let end = keys::prefix_end(&prefix).unwrap_or_else(|| vec![0xFF; 5]);
    let epk_len = def.partition_key.epk_len();
    let mut ahead = ReadAhead::default();
    for entry in store.items.range(txn, &keys::half_open(&prefix, &end))? {
        let (k, v) = entry?;
        ahead.touch(v);
        out.items += 1;
        let Some((epk, id)) = keys::split_item(k, epk_len) else {
            out.problems.push("an item key does not decode".into());
            continue;
        };
        let (header, json) = match item::decode_record(v) {
            Ok(r) => r,
            Err(_) => {
                out.problems
                    .push(format!("the record of item {id:?} does not decode"));
                continue;
            }
        };
        if let Some(i) = def.ranges.iter().position(|r| r.contains(epk)) {
            per_range[i] += 1;
            // An item's LSN is its range's (or an ancestor's, which the range continues).
            if header.lsn > range_lsns[i] {
                lsn_ahead += 1;
            }
        }
        match serde_json::from_slice::<Value>(json) {
            Ok(doc) => {
                if out.index_compared {
                    for key in layout.entries(&doc, epk, id).keys.iter() {
                        expected.add(key);
                    }
                }
            }
            Err(_) => {
                bad_json += 1;
                first_bad.get_or_insert_with(|| id.to_string());
            }
        }
    }
    if bad_json > 0 {
        out.problems.push(format!(
            "{bad_json} items hold text that is not JSON (the first: {:?})",
            first_bad.unwrap_or_default()
        ));
    }
    if lsn_ahead > 0 {
        out.problems.push(format!(
            "{lsn_ahead} items carry an LSN past their range's: the range statistics are behind"
        ));
    }
    recount(store, txn, def, out.items, &per_range, &mut out.problems)?;
    if out.index_compared {
        let stored = stored_index(store, txn, def)?;
        out.index_entries = stored.count;
        if stored != expected {
            out.problems.push(format!(
                "the index differs from a rebuild from the items ({} entries stored, {} \
                 expected); `container set-indexing` with the same policy rebuilds it",
                stored.count, expected.count
            ));
        }
    }
    let feed_start = keys::container_prefix(def.rid);
    let feed_end = keys::prefix_end(&feed_start).unwrap_or_else(|| vec![0xFF; 5]);
    let mut bad_feed = 0u64;
    for entry in store
        .feed
        .range(txn, &keys::half_open(&feed_start, &feed_end))?
    {
        let (_, v) = entry?;
        ahead.touch(v);
        out.feed_records += 1;
        if FeedEvent::decode(v).is_none() {
            bad_feed += 1;
        }
    }
    if bad_feed > 0 {
        out.problems
            .push(format!("{bad_feed} change feed records do not decode"));
    }
    Ok(out)
}

/// Compares the stored counts (the container's and each range's) with the recount.
fn recount(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    items: u64,
    per_range: &[u64],
    problems: &mut Vec<String>,
) -> Result<()> {
    let stored = store.container_stats(txn, def)?.counters.items;
    if stored != items {
        problems.push(format!(
            "the container's statistics count {stored} items, but it holds {items}"
        ));
    }
    for ((range, stats), counted) in store.ranges_with_stats(txn, def)?.iter().zip(per_range) {
        if stats.counters.items != *counted {
            problems.push(format!(
                "range {}'s statistics count {} items, but it holds {counted}",
                range.id, stats.counters.items
            ));
        }
    }
    Ok(())
}

fn stored_index(store: &Store, txn: &RoTxn, def: &ContainerDef) -> Result<Multiset> {
    let prefix = generation_prefix(def.rid, def.index_generation);
    let end = keys::prefix_end(&prefix).unwrap_or_else(|| vec![0xFF; 9]);
    let mut sum = Multiset::default();
    let mut ahead = ReadAhead::default();
    for entry in store.index.range(txn, &keys::half_open(&prefix, &end))? {
        let (k, _) = entry?;
        ahead.touch(k);
        sum.add(k);
    }
    Ok(sum)
}
