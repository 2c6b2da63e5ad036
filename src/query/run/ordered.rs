//! ORDER BY served by an index: whether the index (a range index on one path, or a
//! composite index) yields the query's order, and the walk that reads the first k documents
//! in that order, with ties broken as the service breaks them (see [`TieOrder`]).

use std::time::Instant;

use serde_json::Value;

use super::partition_key::KeyReader;
use super::pipeline::has_aggregate;
use super::result::RangePart;
use crate::error::Result;
use crate::query::eval::env::Env;
use crate::query::run::access::{self, Resolver};
use crate::query::syntax::ast::{FromKind, Query};
use crate::store::catalog::ContainerDef;
use crate::store::epk::{Epk, lead};
use crate::store::index::IndexReader;
use crate::store::indexing::{CompiledPolicy, PathSegment};
use crate::store::item::Record;
use crate::store::prefetch::{COLD_READ, PREFETCH_MAX_KEYS, PREFETCH_MIN_KEYS};
use crate::store::{RoTxn, Store};

/// An ORDER BY the index can stream: the entries to walk.
pub(super) struct OrderWalk {
    pub(super) path: crate::store::index::PathId,
    pub(super) values: usize,
    pub(super) reverse: bool,
    /// The encoded leading components an equality filter fixes (empty without a filter):
    /// the walk reads only entries under it, which are exactly the matching documents.
    pub(super) prefix: Vec<u8>,
    pub(super) spec: String,
    /// Some documents lack the path and sort after every entry the walk reads (undefined
    /// is the lowest value and the order descends): the walk gives the result only if it
    /// finds all the results it needs among the entries.
    pub(super) undefined_after: bool,
}

impl OrderWalk {
    /// Calls `f` with the walk's entries (value, item) in order, after `after`, in `spans`,
    /// until it returns false.
    fn entries<'t>(
        &self,
        reader: &IndexReader<'t>,
        spans: &[(Vec<u8>, Vec<u8>)],
        after: Option<&WalkAfter>,
        f: impl FnMut(&'t [u8], &'t [u8]) -> Result<bool>,
    ) -> Result<()> {
        let from = after.map(|a| a.value.as_slice());
        reader.walk(
            self.path,
            self.values,
            (self.reverse, from),
            &self.prefix,
            spans,
            f,
        )
    }
}

/// Whether the index yields `q`'s order directly: one indexed path every document defines
/// (a document without it sorts first, where only a scan finds it), or that descending
/// (such documents then sort last: see [`OrderWalk::undefined_after`]), or a composite
/// index with these paths in these directions or all reversed.
#[allow(clippy::too_many_arguments)]
pub(super) fn order_walk(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    q: &Query,
    resolver: &Resolver,
    env: &Env,
    policy: &CompiledPolicy,
    ready: crate::store::catalog::ReadyIndex,
) -> Result<Option<OrderWalk>> {
    let simple = q.joins.is_empty()
        && q.group_by.is_empty()
        && !q.select.distinct
        && !has_aggregate(q)
        && matches!(q.from.as_ref().map(|f| &f.kind), Some(FromKind::Container { path, .. }) if path.is_empty());
    if !simple || q.order_by.is_empty() {
        return Ok(None);
    }
    let paths: Option<Vec<_>> = q.order_by.iter().map(|o| resolver.path(&o.expr)).collect();
    let Some(paths) = paths else { return Ok(None) };
    // The index keeps an array's elements under one path (`/tags/[]/name`) whatever their
    // positions: its order is neither that of one position (`c.tags[0].name`) nor that of
    // the elements a JOIN iterates.
    let positional = |p: &access::DocPath| {
        p.any_position
            || p.concrete
                .iter()
                .any(|s| matches!(s, PathSegment::Index(_)))
    };
    if paths.iter().any(positional) {
        return Ok(None);
    }
    // A filter must be equalities the composite index fixes as its leading components.
    let equalities = match &q.filter {
        None => Vec::new(),
        Some(f) => match resolver.equalities(f, env) {
            Some(eq) if !eq.is_empty() => eq,
            _ => return Ok(None),
        },
    };
    if !equalities.is_empty() {
        return Ok(prefixed_composite_walk(
            &paths,
            &equalities,
            q,
            ready.policy,
        ));
    }
    if let [path] = paths.as_slice() {
        if !path.indexed_by(policy) {
            return Ok(None);
        }
        let items = store.container_stats(txn, def)?.counters.items;
        let defined = store.index_defined_count(txn, def.rid, ready.generation, path.id)?;
        let descending = q.order_by[0].descending;
        // Documents without the path sort first ascending, where only a scan finds them.
        if defined < items && !descending {
            return Ok(None);
        }
        return Ok(Some(OrderWalk {
            path: path.id,
            values: 1,
            reverse: descending,
            prefix: Vec::new(),
            spec: path.spec.clone(),
            undefined_after: defined < items,
        }));
    }
    Ok(prefixed_composite_walk(&paths, &[], q, ready.policy))
}

/// A composite index whose leading components are the `equalities`' paths (in any order)
/// and whose remaining components are the ORDER BY `paths`, in the query's directions or
/// all reversed: the walk under the equalities' encoded values.
fn prefixed_composite_walk(
    paths: &[access::DocPath],
    equalities: &[(access::DocPath, Vec<u8>)],
    q: &Query,
    policy: &crate::store::indexing::IndexingPolicy,
) -> Option<OrderWalk> {
    let names_match = |p: &access::DocPath, names: &[String]| {
        p.concrete.len() == names.len()
            && p.concrete
                .iter()
                .zip(names)
                .all(|(s, n)| matches!(s, PathSegment::Property(name) if name == n))
    };
    let lead = equalities.len();
    for composite in crate::store::index::composites(policy) {
        if composite.paths.len() != lead + paths.len() {
            continue;
        }
        // Each leading component fixed by one equality.
        let mut prefix = Vec::new();
        let mut used = vec![false; lead];
        let fixed = composite.paths[..lead].iter().all(|(names, desc)| {
            let found = equalities
                .iter()
                .enumerate()
                .find(|(i, (p, _))| !used[*i] && names_match(p, names));
            let Some((i, (_, enc))) = found else {
                return false;
            };
            used[i] = true;
            let start = prefix.len();
            prefix.extend_from_slice(enc);
            if *desc {
                prefix[start..].iter_mut().for_each(|b| *b = !*b);
            }
            true
        });
        let order = &composite.paths[lead..];
        if !fixed
            || !order
                .iter()
                .zip(paths)
                .all(|((names, _), p)| names_match(p, names))
        {
            continue;
        }
        for reverse in [false, true] {
            let matches = order
                .iter()
                .zip(&q.order_by)
                .all(|((_, desc), o)| (*desc ^ reverse) == o.descending);
            if matches {
                let spec = composite
                    .paths
                    .iter()
                    .map(|(names, desc)| {
                        format!(
                            "/{} {}",
                            names.join("/"),
                            if *desc { "DESC" } else { "ASC" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                return Some(OrderWalk {
                    path: composite.id,
                    values: composite.paths.len(),
                    reverse,
                    prefix,
                    spec,
                    // The composite index holds every document, undefined components too.
                    undefined_after: false,
                });
            }
        }
    }
    None
}

/// An item an index walk found: its address in the container (`EPK ‖ id`, borrowed from the
/// index entry) and its stored record.
pub(super) struct Walked<'t> {
    pub(super) item: &'t [u8],
    /// The first eight bytes of `item` (its EPK's), read with it (see [`walked_by_range`]).
    pub(super) lead: u64,
    /// The index entry's value (all its components), where a later page resumes.
    pub(super) value: &'t [u8],
    /// The stored record, raw and decoded.
    pub(super) bytes: &'t [u8],
    pub(super) record: Record<'t>,
}

/// One routed range's share of an ordered walk (see [`walked_by_range`]).
#[derive(Clone, Default)]
pub(super) struct WalkedPart {
    pub(super) retrieved: u64,
    pub(super) bytes: u64,
    pub(super) output: u64,
    pub(super) logical: Vec<Value>,
}

/// How ORDER BY ties are broken, as `Run::break_ties_by_position` does for sorted rows:
/// by the routed range an item is in (ranges in EPK order), then by document number,
/// descending when the index is scanned in reverse.
pub(super) struct TieOrder<'r> {
    /// The routed ranges' upper bounds, in order.
    pub(super) range_ends: &'r [&'r [u8]],
    pub(super) epk_len: usize,
    pub(super) reverse_scan: bool,
}

impl TieOrder<'_> {
    /// The place of the range holding `item` (`EPK ‖ id`).
    fn range_of(&self, item: &[u8]) -> usize {
        let epk = &item[..self.epk_len.min(item.len())];
        self.range_ends.partition_point(|end| *end <= epk)
    }

    /// The sort key of a read item within its tie group.
    pub(super) fn key(&self, w: &Walked) -> (usize, u64) {
        let doc = w.record.header.doc_number;
        let doc = if self.reverse_scan {
            u64::MAX - doc
        } else {
            doc
        };
        (self.range_of(w.item), doc)
    }
}

/// Where a later page of an exact ordered walk resumes: after the item with this index
/// value and this place among its ties ([`TieOrder::key`]), as the service's ORDER BY
/// continuation carries the last result's sort values and position.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct WalkAfter {
    pub(super) value: Vec<u8>,
    pub(super) tie: (usize, u64),
}

impl WalkAfter {
    /// Whether the walk passed this item on an earlier page: it ties with the resume point
    /// and comes no later among its ties (items of earlier values are not walked at all).
    fn passed(&self, ties: &TieOrder, w: &Walked) -> bool {
        w.value == self.value.as_slice() && ties.key(w) <= self.tie
    }
}

/// The first `k` live documents in index order (after `after`, on a later page). With
/// `presort`, when every value walked is exact ([`crate::store::index::is_exact`]), they
/// come back in result order and the flag is true: the index order, ties in [`TieOrder`].
/// Otherwise they are in walk order, with every document tied with the k-th (their true
/// order is only known once the items are read).
#[allow(clippy::too_many_arguments)]
pub(super) fn walk_order<'t>(
    store: &Store,
    txn: &'t RoTxn,
    reader: &IndexReader<'t>,
    walk: &OrderWalk,
    spans: &[(Vec<u8>, Vec<u8>)],
    after: Option<&WalkAfter>,
    k: usize,
    now: i64,
    (presort, ties): (bool, &TieOrder),
) -> Result<(Vec<Walked<'t>>, bool)> {
    let mut out: Vec<Walked<'t>> = Vec::with_capacity(k.min(4096));
    // Per item in walk order: whether it ties with the previous one.
    let mut tie_flags: Vec<bool> = Vec::with_capacity(k.min(4096));
    let mut exact = presort;
    let mut last: &'t [u8] = &[];
    let mut key = reader.item_key(&[]);
    // Entries past the k-th that tie with it, not read yet (see below).
    let mut tied: Vec<&'t [u8]> = Vec::new();
    // When the first item read comes from the disk, the items of the next entries are read
    // ahead on helper threads while the walk reads them (see `store::prefetch`).
    let mut first_read = true;
    let mut ahead = None;
    walk.entries(reader, spans, after, |value, item| {
        if out.len() >= k {
            if value != last {
                return Ok(false);
            }
            if exact {
                // An exact tie is decided by position: read only what deciding needs.
                tied.push(item);
                return Ok(true);
            }
        }
        let started = std::mem::take(&mut first_read).then(Instant::now);
        let read = read_live(store, txn, &mut key, (item, value), now)?;
        if started.is_some_and(|t| t.elapsed() >= COLD_READ) && k >= PREFETCH_MIN_KEYS {
            let next = next_items(reader, walk, spans, after, k)?;
            ahead = Some(
                store
                    .item_prefetcher()
                    .start(next.iter().map(Vec::as_slice)),
            );
        }
        let Some(walked) = read else {
            return Ok(true);
        };
        if after.is_some_and(|a| a.passed(ties, &walked)) {
            return Ok(true);
        }
        let tie = !out.is_empty() && last == value;
        if !tie {
            last = value;
            exact = exact
                && if walk.values == 1 {
                    crate::store::index::is_exact_value(value)
                } else {
                    crate::store::index::is_exact(value, walk.values)
                };
        }
        tie_flags.push(tie);
        out.push(walked);
        Ok(true)
    })?;
    if !tied.is_empty() {
        // The k-th item's value is shared by more entries than places are left (a bulk load
        // gives thousands of items one `_ts`).
        fill_ties(
            store,
            txn,
            (&mut key, now),
            (&mut out, &mut tie_flags),
            (last, tied, after),
            (k, ties),
        )?;
    }
    drop(ahead);
    if exact {
        sort_ties(&mut out, &tie_flags, ties);
    }
    Ok((out, exact))
}

/// The item keys of the first `k` entries of `walk` (after `after`), a little past `k` for
/// the items a walk passes over: what [`walk_order`] will read, for reading it ahead.
fn next_items(
    reader: &IndexReader,
    walk: &OrderWalk,
    spans: &[(Vec<u8>, Vec<u8>)],
    after: Option<&WalkAfter>,
    k: usize,
) -> Result<Vec<Vec<u8>>> {
    let wanted = k.saturating_add(k / 8).min(PREFETCH_MAX_KEYS);
    let mut keys = Vec::with_capacity(wanted);
    walk.entries(reader, spans, after, |_, item| {
        keys.push(reader.item_key(item));
        Ok(keys.len() < wanted)
    })?;
    Ok(keys)
}

/// Fills the places left after the items read so far (`out`, with their `tie_flags`) from
/// the group of items tied with the k-th (whose value is `value`), of which `tied` were not
/// read yet (those an earlier page passed, `after`, stay out). Ties go range by range: only
/// the items of the ranges that fill the places are read, to order them by document number.
fn fill_ties<'t>(
    store: &Store,
    txn: &'t RoTxn,
    (key, now): (&mut Vec<u8>, i64),
    (out, tie_flags): (&mut Vec<Walked<'t>>, &mut Vec<bool>),
    (value, tied, after): (&'t [u8], Vec<&'t [u8]>, Option<&WalkAfter>),
    (k, ties): (usize, &TieOrder),
) -> Result<()> {
    let start = tie_flags.iter().rposition(|t| !t).unwrap_or(0);
    let mut group: Vec<(usize, &[u8], Option<Walked>)> = out
        .drain(start..)
        .map(|w| (ties.range_of(w.item), w.item, Some(w)))
        .chain(
            tied.into_iter()
                .map(|item| (ties.range_of(item), item, None)),
        )
        .collect();
    group.sort_by_key(|g| g.0);
    tie_flags.truncate(start);
    let mut rest = group.into_iter().peekable();
    while out.len() < k {
        let Some(first) = rest.next() else { break };
        let place = first.0;
        let mut in_range = vec![first];
        while let Some(g) = rest.next_if(|g| g.0 == place) {
            in_range.push(g);
        }
        let mut read: Vec<Walked> = Vec::with_capacity(in_range.len());
        for (_, item, walked) in in_range {
            match walked {
                Some(w) => read.push(w),
                None => read.extend(
                    read_live(store, txn, key, (item, value), now)?
                        .filter(|w| !after.is_some_and(|a| a.passed(ties, w))),
                ),
            }
        }
        read.sort_unstable_by_key(|w| ties.key(w));
        for w in read.into_iter().take(k - out.len()) {
            tie_flags.push(out.len() > start);
            out.push(w);
        }
    }
    Ok(())
}

/// Sorts each group of tied items (an item whose flag is set ties with the one before) as
/// the service breaks ties.
fn sort_ties(out: &mut [Walked], tie_flags: &[bool], ties: &TieOrder) {
    let mut start = 0;
    while start < out.len() {
        let mut end = start + 1;
        while end < out.len() && tie_flags[end] {
            end += 1;
        }
        out[start..end].sort_unstable_by_key(|w| ties.key(w));
        start = end;
    }
}

/// The item at `item` (`EPK ‖ id`) unless it is gone or expired; `key` holds the container
/// prefix of an `items` key (as [`IndexReader::item_key`] gives it) and is reused.
fn read_live<'t>(
    store: &Store,
    txn: &'t RoTxn,
    key: &mut Vec<u8>,
    (item, value): (&'t [u8], &'t [u8]),
    now: i64,
) -> Result<Option<Walked<'t>>> {
    key.truncate(std::mem::size_of::<crate::store::keys::ContainerRid>());
    key.extend_from_slice(item);
    let Some(bytes) = store.read_record(txn, key)? else {
        return Ok(None);
    };
    let record = Record::decode(bytes)?;
    Ok((!record.header.is_expired(now)).then_some(Walked {
        item,
        lead: lead(item),
        value,
        bytes,
        record,
    }))
}

/// Each range's part in a bounded ORDER BY that was sorted after a scan, as the service
/// reports it: it streams every range in order and merges them, so a range's output (and
/// index hits) are its documents among the first k results, whose EPKs `result_epks` holds,
/// and its logical partitions are those that produced them, not every one the scan matched
/// to find them. `logical_epks` holds, per part, the EPK of each of its logical partitions.
pub(super) fn produced_by_range(
    (parts, ranges): (&mut [RangePart], &[&crate::store::ranges::PkRange]),
    logical_epks: &[Vec<&[u8]>],
    result_epks: &[Vec<u8>],
) {
    let mut produced: Vec<&[u8]> = result_epks.iter().map(Vec::as_slice).collect();
    produced.sort_unstable();
    for (part, epks) in parts.iter_mut().zip(logical_epks) {
        let range = ranges.iter().find(|r| r.id == part.range.id);
        let count = produced
            .iter()
            .filter(|e| range.is_some_and(|r| r.contains(e)))
            .count() as u64;
        part.metrics.output_document_count = count;
        part.metrics.index_hit_document_count = count;
        // In EPK order, as an index walk's ranges list them.
        let mut kept: Vec<(&[u8], Value)> = epks
            .iter()
            .copied()
            .zip(std::mem::take(&mut part.logical))
            .filter(|(e, _)| produced.binary_search(e).is_ok())
            .collect();
        kept.sort_by(|a, b| a.0.cmp(b.0));
        part.logical = kept.into_iter().map(|(_, v)| v).collect();
    }
}

/// What an ordered walk's items (see [`walk_order`]) contribute to each routed range's
/// metrics: the documents it read and their bytes, the documents that made a result and
/// the logical partitions of those (in EPK order). `results` says, per item, whether it
/// made one (a `SELECT VALUE` that is undefined does not); `None` means every item did.
pub(super) fn walked_by_range(
    items: &[Walked],
    results: Option<&[bool]>,
    ranges: &[&crate::store::ranges::PkRange],
    epk_len: usize,
    keys: &KeyReader,
) -> Result<Vec<WalkedPart>> {
    let mut out = vec![WalkedPart::default(); ranges.len()];
    // EPKs are hashes: their first eight bytes, read as the walk found each entry
    // (`Walked::lead`), almost always decide, and the keys, by now out of the CPU's nearer
    // caches (the lookups came between), are read again only on a tie.
    let epk = |i: usize| (items[i].lead, &items[i].item[..epk_len]);
    // In key order.
    let mut order: Vec<(u64, usize)> = items.iter().map(|w| w.lead).zip(0..).collect();
    order.sort_unstable_by(|&(x, i), &(y, j)| {
        x.cmp(&y).then_with(|| items[i].item.cmp(items[j].item))
    });
    // Routed ranges are in EPK order too: advance through them alongside.
    let mut r = 0;
    let mut last: Option<(u64, &[u8])> = None;
    for (at, &(_, i)) in order.iter().enumerate() {
        let e = epk(i);
        while ranges
            .get(r)
            .is_some_and(|range| !below(e, bound(&range.max_exclusive)))
        {
            r += 1;
        }
        let inside = |range: &crate::store::ranges::PkRange| {
            !below(e, bound(&range.min_inclusive)) && below(e, bound(&range.max_exclusive))
        };
        let Some(part) = out.get_mut(r).filter(|_| inside(ranges[r])) else {
            continue;
        };
        if part.retrieved == 0 {
            // The range's items follow this one: room for their partitions, made once.
            let end = bound(&ranges[r].max_exclusive);
            let here = order[at..].partition_point(|&(_, j)| below(epk(j), end));
            part.logical.reserve(here);
        }
        part.retrieved += 1;
        part.bytes += items[i].record.json.len() as u64;
        if results.is_some_and(|made| !made[i]) {
            continue;
        }
        part.output += 1;
        if last != Some(e) {
            part.logical.push(keys.read(&items[i].record)?);
            last = Some(e);
        }
    }
    Ok(out)
}

/// A range bound with its [`lead`].
fn bound(epk: &Epk) -> (u64, &[u8]) {
    (lead(epk.as_bytes()), epk.as_bytes())
}

/// Whether EPK `a` sorts before `b`, each with its [`lead`]: the bytes are read only when
/// the leads are equal.
fn below((la, a): (u64, &[u8]), (lb, b): (u64, &[u8])) -> bool {
    la < lb || (la == lb && a < b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leads_order_epks_as_their_bytes_do() {
        let epks: Vec<Vec<u8>> = vec![
            vec![],
            vec![0x00],
            vec![0x05; 16],
            [vec![0x05; 8], vec![0x04; 8]].concat(),
            [vec![0x05; 8], vec![0x06; 8]].concat(),
            vec![0x05; 8],
            vec![0x05; 7],
            vec![0x7f, 0xff, 0, 0, 0, 0, 0, 0, 1],
            vec![0xff],
            [vec![0xff], vec![0x00; 15]].concat(),
            vec![0xff; 16],
        ];
        for a in &epks {
            for b in &epks {
                let below_by_lead = below((lead(a), a), (lead(b), b));
                assert_eq!(below_by_lead, a < b, "{a:?} < {b:?}");
                let epk = Epk(b.clone());
                assert_eq!(
                    below((lead(a), a), bound(&epk)),
                    a < b,
                    "{a:?} < bound {b:?}"
                );
            }
        }
    }
}
