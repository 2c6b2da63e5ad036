//! What the statistics the store keeps exact answer for a query: the documents and bytes its
//! routing covers in one range (what the service would load for a scan of that scope), and
//! an unfiltered COUNT, which the service answers from its index without loading anything.

use std::time::Instant;

use super::result::{
    AccessView, IndexMetrics, PartitionResult, QueryMetrics, QueryResult, RoutingView,
};
use crate::charge::{self, QueryWork};
use crate::error::Result;
use crate::query::read::document::Document;
use crate::query::run::pipeline::Run;
use crate::query::run::routing::{self, Routing};
use crate::store::catalog::ContainerDef;
use crate::store::keys;
use crate::store::stats::OpKind;
use crate::store::{RoTxn, Store};

/// The result of `SELECT [VALUE] COUNT(...) FROM c` without a filter (`pipeline` is the
/// query's, with nothing pushed), from each routed range's item count. Items expired but not
/// yet purged still count for the fraction of a second until the purge.
pub(super) fn count_from_statistics(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    routing: Routing,
    pipeline: Run,
    index_metrics: Option<IndexMetrics>,
    started: Instant,
) -> Result<QueryResult> {
    let ranges = routing.ranges(def);
    let mut all_counts = None;
    let mut counts = Vec::with_capacity(ranges.len());
    for range in &ranges {
        let (n, _) = scope_counts(store, txn, def, &routing, range, &mut all_counts)?;
        counts.push((*range, n));
    }
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let documents: Vec<Document> = pipeline
        .finish_with_count(total)
        .iter()
        .filter_map(|v| Document::from_result(v).transpose())
        .collect::<Result<_>>()?;
    let output_bytes: u64 = documents.iter().map(|d| d.json_len() as u64).sum();
    let mut partitions = Vec::with_capacity(counts.len());
    let mut raw = charge::QUERY_PER_OUTPUT_KB * output_bytes as f64 / 1024.0;
    let mut totals = QueryMetrics::default();
    for (range, n) in counts {
        let ru = charge::query_range(QueryWork {
            visited: true,
            ..Default::default()
        });
        raw += ru;
        store.record_read(def.rid, range.id, None, OpKind::Query, ru);
        let m = QueryMetrics {
            index_hit_document_count: n,
            output_document_count: n,
            ..Default::default()
        };
        totals.add(&m);
        let names = def.range_names(range);
        partitions.push(PartitionResult {
            id: names.id,
            min_inclusive: names.min_inclusive,
            max_exclusive: names.max_exclusive,
            logical_partitions: Vec::new(),
            request_charge: charge::round(ru),
            metrics: m,
        });
    }
    totals.output_document_count = documents.len() as u64;
    totals.output_document_size = output_bytes;
    totals.query_engine_execution_time_in_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(QueryResult {
        documents,
        continuation: None,
        request_charge: charge::round(raw),
        routing: RoutingView {
            kind: routing.kind.name(),
            reason: routing.reason,
        },
        partitions,
        metrics: totals,
        index_metrics,
        access: AccessView {
            kind: "statistics",
            indexes: Vec::new(),
            reason: "an unfiltered count is read from the partition statistics".into(),
        },
    })
}

/// Items and bytes per physical partition (expired items not yet purged included).
pub(super) type RangeCounts = Vec<(crate::store::keys::RangeId, (u64, u64))>;

/// Adds to the counts (read if not yet) one entry per unit: a range of an earlier layout,
/// with the summed counts of its children (see `layout_units`).
pub(super) fn fold_children(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    all: &mut Option<RangeCounts>,
    units: &[(
        crate::store::ranges::PkRange,
        Vec<crate::store::keys::RangeId>,
    )],
) -> Result<()> {
    let counts = all_range_counts(store, txn, def, all)?;
    let sums: Vec<_> = units
        .iter()
        .map(|(unit, children)| {
            let sum = counts
                .iter()
                .filter(|(id, _)| children.contains(id))
                .fold((0, 0), |acc, (_, (n, b))| (acc.0 + n, acc.1 + b));
            (unit.id, sum)
        })
        .collect();
    if let Some(all) = all.as_mut() {
        all.retain(|(id, _)| !sums.iter().any(|(u, _)| u == id));
        all.extend(sums);
    }
    Ok(())
}

/// Every range's counts, read in one pass over the container's statistics the first time a
/// query asks (a fan-out asks for each range).
fn all_range_counts<'c>(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    all: &'c mut Option<RangeCounts>,
) -> Result<&'c RangeCounts> {
    use crate::store::stats::RangeStats;
    if all.is_none() {
        let start = keys::container_prefix(def.rid);
        let end = keys::range(def.rid, crate::store::keys::RangeId::MAX);
        let mut counts = Vec::with_capacity(def.ranges.len());
        for entry in store.range_stats.range(txn, &keys::closed(&start, &end))? {
            let (k, v) = entry?;
            let id = k
                .get(4..8)
                .and_then(|b| b.try_into().ok())
                .map(crate::store::keys::RangeId::from_be_bytes);
            if let (Some(id), Some(s)) = (id, RangeStats::decode(v)) {
                counts.push((id, (s.counters.items, s.counters.bytes)));
            }
        }
        *all = Some(counts);
    }
    Ok(all.get_or_insert_default())
}

/// The items one physical partition holds. A query that routes to one range (`routed`)
/// reads just its entry; one that routes to several reads them all at once (see
/// [`all_range_counts`]).
pub(super) fn range_items(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    (range, routed): (crate::store::keys::RangeId, usize),
    all: &mut Option<RangeCounts>,
) -> Result<u64> {
    if all.is_none() && routed == 1 {
        return Ok(store
            .range_stats
            .get(txn, &keys::range(def.rid, range))?
            .and_then(crate::store::stats::RangeStats::decode)
            .map_or(0, |s| s.counters.items));
    }
    let counts = all_range_counts(store, txn, def, all)?;
    Ok(counts
        .iter()
        .find(|(id, _)| *id == range)
        .map_or(0, |(_, (items, _))| *items))
}

/// Documents and bytes a routing covers in one range, from the statistics the store keeps
/// exact (what a scan of that scope would load).
pub(super) fn scope_counts(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    routing: &Routing,
    range: &crate::store::ranges::PkRange,
    all: &mut Option<RangeCounts>,
) -> Result<(u64, u64)> {
    use crate::store::stats::LogicalStats;
    Ok(match &routing.targets {
        routing::Targets::All => all_range_counts(store, txn, def, all)?
            .iter()
            .find(|(id, _)| *id == range.id)
            .map_or((0, 0), |(_, n)| *n),
        routing::Targets::Keys(keys_) => {
            let mut total = (0, 0);
            for e in keys_.iter().map(|k| k.epk(&def.partition_key)) {
                if !range.contains(e.as_bytes()) {
                    continue;
                }
                if let Some(s) = store
                    .logical
                    .get(txn, &keys::logical(def.rid, &e))?
                    .and_then(LogicalStats::decode)
                {
                    total.0 += s.counters.items;
                    total.1 += s.counters.bytes;
                }
            }
            total
        }
        routing::Targets::Ranges(spans) => {
            let mut total = (0, 0);
            for (min, max) in spans {
                let lo = min.clone().max(range.min_inclusive.clone());
                let hi = max.clone().min(range.max_exclusive.clone());
                if lo < hi {
                    for l in store.logical_partitions(txn, def, &lo, &hi, None, usize::MAX)? {
                        total.0 += l.counters.items;
                        total.1 += l.counters.bytes;
                    }
                }
            }
            total
        }
    })
}
