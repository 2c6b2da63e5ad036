//! A page's request charge, split by physical partition, as [`crate::charge`] models it: each
//! range pays its base cost and what it loaded on the page the service charges them (the
//! first page of a computed result; each page of a streamed scan), and every page pays for its
//! output bytes, shared among the ranges by the matching rows each produced. A full-text
//! statistics pass is charged to the ranges it read.

use super::result::{PartitionResult, QueryMetrics, RangePart};
use crate::charge::{self, QueryWork};
use crate::query::search::rank::StatisticsRead;
use crate::store::keys::RangeId;

/// What one page charges.
pub(super) struct PageCharge {
    /// Per routed range, for the result.
    pub(super) partitions: Vec<PartitionResult>,
    /// The ranges' metrics summed (output counts and sizes are the caller's to set).
    pub(super) totals: QueryMetrics,
    /// The page's charge, unrounded (page charges telescope: see the continuation).
    pub(super) raw: f64,
    /// Per range, for the meter: the routed ranges and any a statistics pass read.
    pub(super) reads: Vec<(RangeId, f64)>,
}

/// The charge of a page of `page_output_total` bytes whose ranges did the work in `per_range`.
/// `paged_scan`: the page resumed a streamed scan (it pays for what it loaded itself);
/// otherwise the result was computed whole and `first_page` pays for all of it.
pub(super) fn charge_page(
    per_range: Vec<RangePart>,
    page_output_total: u64,
    paged_scan: bool,
    first_page: bool,
    statistics: &[StatisticsRead],
) -> PageCharge {
    let mut partitions = Vec::with_capacity(per_range.len());
    let mut totals = QueryMetrics::default();
    // Output is charged on the page's total (the model is linear, so pages add up exactly)
    // and attributed to ranges by their share of the matching rows, for display.
    let output_cost = charge::QUERY_PER_OUTPUT_KB * page_output_total as f64 / 1024.0;
    let matched_rows: u64 = per_range
        .iter()
        .map(|p| p.metrics.output_document_count)
        .sum();
    let mut raw_charge = if matched_rows == 0 { output_cost } else { 0.0 };
    let mut reads = Vec::with_capacity(per_range.len());
    for RangePart {
        range,
        metrics: mut m,
        logical,
        visited_before,
    } in per_range
    {
        let share = if matched_rows == 0 {
            0.0
        } else {
            m.output_document_count as f64 / matched_rows as f64
        };
        // A scanned page pays for what it loaded and for ranges it entered first; a page of a
        // fully computed result paid everything on the first page.
        let (visited, loads) = if paged_scan {
            (!visited_before, true)
        } else {
            (first_page, first_page)
        };
        let work = QueryWork {
            visited,
            loaded_docs: if loads { m.retrieved_document_count } else { 0 },
            loaded_bytes: if loads { m.retrieved_document_size } else { 0 },
            output_bytes: 0,
        };
        let statistics_ru = statistics_charge(statistics, |r| r == range.id);
        let ru = charge::query_range(work) + output_cost * share + statistics_ru;
        m.output_document_size = (page_output_total as f64 * share).round() as u64;
        raw_charge += ru;
        reads.push((range.id, ru));
        totals.add(&m);
        partitions.push(PartitionResult {
            id: range.names.id,
            min_inclusive: range.names.min_inclusive,
            max_exclusive: range.names.max_exclusive,
            logical_partitions: logical,
            request_charge: charge::round(ru),
            metrics: m,
        });
    }
    // A statistics pass also reads the ranges the query itself does not visit.
    for s in statistics {
        if !reads.iter().any(|(id, _)| *id == s.range) {
            let ru = statistics_charge(statistics, |r| r == s.range);
            raw_charge += ru;
            reads.push((s.range, ru));
        }
    }
    PageCharge {
        partitions,
        totals,
        raw: raw_charge,
        reads,
    }
}

/// The charge of a full-text statistics pass on the ranges `which` selects: the service runs
/// it as a query of its own over the whole container, loading each document once.
fn statistics_charge(statistics: &[StatisticsRead], which: impl Fn(RangeId) -> bool) -> f64 {
    statistics
        .iter()
        .filter(|s| which(s.range))
        .map(|s| {
            charge::query_range(QueryWork {
                visited: true,
                loaded_docs: s.documents,
                loaded_bytes: s.bytes,
                output_bytes: 0,
            })
        })
        .sum()
}
