//! Phase three of a query: cutting a page out of its result (at most `max_items` results
//! and the service's 4 MB response limit), with the page's charge and its continuation.

use std::sync::Arc;
use std::time::Instant;

use super::cache::{Computed, ResultCache};
use super::charges::{PageCharge, charge_page};
use super::compute::Computation;
use super::prepare::Plan;
use super::result::{AccessView, MAX_PAGE_BYTES, QueryResult, RangePart, RoutingView};
use super::snapshot::Snapshot;
use super::token::Token;
use crate::charge;
use crate::query::read::document::Document;
use crate::store::stats::OpKind;

/// How many of `results` (the rest of a result, in order) the next page holds: at most
/// `max_items`, and no more than fit in [`MAX_PAGE_BYTES`], but always one.
pub fn page_length(results: &[Document], max_items: usize) -> usize {
    let mut bytes = 0;
    let fitting = results
        .iter()
        .take(max_items)
        .take_while(|d| {
            bytes += d.json_len();
            bytes <= MAX_PAGE_BYTES
        })
        .count();
    fitting.max(results.len().min(1))
}

/// Phase three of a query: the page cut from its result, with the charge the page carries
/// and the continuation to the next one. A result that later pages will need goes into the
/// cache; the reads the page is charged for are recorded in the range's meter.
pub(super) fn cut(
    plan: Plan,
    c: Computation,
    snap: &Snapshot,
    cache: &ResultCache,
    started: Instant,
) -> QueryResult {
    if let Some(version) = c.computing {
        return still_computing(plan, c, snap, version);
    }
    let paged_scan = plan.shape.paged_scan;
    // Results delivered by earlier pages of a computed result; this page's start in it,
    // unless the result starts where the last page ended (a resumed ORDER BY walk).
    let delivered = if paged_scan {
        0
    } else {
        plan.token.as_ref().map_or(0, |t| t.skip)
    };
    let skip = if c.resumed { 0 } else { delivered };
    // The result, or the window of it read back from disk, which starts at `first`.
    let result_count = c.computed.total;
    let local = skip.saturating_sub(c.computed.first);
    let page_len = page_length(
        c.computed.results.get(local..).unwrap_or_default(),
        plan.max_items,
    );
    if let Some(key) = c.cache_key
        && c.complete
        && result_count > skip.saturating_add(page_len)
    {
        cache.put(key, c.computed.clone());
    }
    // An exact walk's next page resumes after this page's last result.
    let walk_after = c
        .walk_keys
        .as_ref()
        .and_then(|keys| keys.get((skip + page_len).checked_sub(1)?))
        .cloned();
    let (page, mut per_range, access) = take_page(c.computed, local, page_len);
    if c.from_cache {
        // This page loaded nothing: the work the metrics count was done by the first.
        for part in &mut per_range {
            part.metrics.index_lookup_time_in_ms = 0.0;
            part.metrics.document_load_time_in_ms = 0.0;
            part.metrics.query_engine_execution_time_in_ms = 0.0;
        }
    }
    let page_output_total: u64 = page.iter().map(|d| d.json_len() as u64).sum();
    let more = if paged_scan {
        c.streamed.resume.is_some() && c.streamed.rows < plan.top_left
    } else {
        result_count > skip.saturating_add(page.len())
    };
    let PageCharge {
        partitions,
        mut totals,
        raw: raw_charge,
        reads,
    } = charge_page(
        per_range,
        page_output_total,
        paged_scan,
        plan.charges_work(),
        &c.statistics,
    );
    snap.store.record_reads(snap.def.rid, &reads, OpKind::Query);
    totals.output_document_count = page.len() as u64;
    totals.output_document_size = page_output_total;
    totals.query_engine_execution_time_in_ms =
        started.elapsed().as_secs_f64() * 1e3 - totals.document_load_time_in_ms;
    // Page charges telescope: each page charges the rounded total so far less what the
    // pages before it charged, so the pages add up to the query's unpaged charge.
    let before = plan.token.as_ref().map_or(0.0, |t| t.charged);
    let after = before + raw_charge;
    let request_charge = charge::round(after) - charge::round(before);
    let continuation = more.then(|| {
        Token::next(
            plan.token.as_ref(),
            (&plan.rid, plan.hash),
            delivered,
            page.len(),
            after,
            c.streamed.resume.as_ref(),
            (
                if paged_scan { &[] } else { &c.layout },
                walk_after.as_ref(),
            ),
        )
    });
    let index_metrics = plan.index_metrics(snap.def);
    QueryResult {
        documents: page,
        continuation,
        request_charge: charge::round(request_charge),
        routing: RoutingView {
            kind: plan.routing.kind.name(),
            reason: plan.routing.reason,
        },
        partitions,
        metrics: totals,
        access,
        index_metrics,
    }
}

/// A page that returned while its result was still being computed (see
/// [`super::background`]): no documents and no charge (the page that delivers the first
/// results pays for the whole computation, so the pages still add up to the query's
/// unpaged charge), and a continuation that waits for the result.
fn still_computing(plan: Plan, c: Computation, snap: &Snapshot, version: u64) -> QueryResult {
    let continuation = Token::waiting(
        plan.token.as_ref(),
        (&plan.rid, plan.hash),
        version,
        &c.layout,
    );
    let access = match Arc::try_unwrap(c.computed) {
        Ok(c) => c.access,
        Err(shared) => shared.access.clone(),
    };
    let index_metrics = plan.index_metrics(snap.def);
    QueryResult {
        documents: Vec::new(),
        continuation: Some(continuation),
        request_charge: 0.0,
        routing: RoutingView {
            kind: plan.routing.kind.name(),
            reason: plan.routing.reason,
        },
        partitions: Vec::new(),
        metrics: Default::default(),
        access,
        index_metrics,
    }
}

/// The page's documents and the result's per-range parts and access path: moved out of a
/// result no one else holds, copied out of a cached one.
fn take_page(
    computed: Arc<Computed>,
    skip: usize,
    page_len: usize,
) -> (Vec<Document>, Vec<RangePart>, AccessView) {
    match Arc::try_unwrap(computed) {
        Ok(c) => (
            c.results.into_iter().skip(skip).take(page_len).collect(),
            c.ranges,
            c.access,
        ),
        Err(shared) => (
            shared
                .results
                .iter()
                .skip(skip)
                .take(page_len)
                .cloned()
                .collect(),
            shared.ranges.clone(),
            shared.access.clone(),
        ),
    }
}
