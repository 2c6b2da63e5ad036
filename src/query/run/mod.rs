//! Running a query against a container: routing, per-range execution, metrics, RU, paging.
//!
//! Each routed physical partition is read in turn, in document order when it is small (see
//! [`DOCUMENT_ORDER_MAX_ITEMS`]) and in key order otherwise, and its documents go through one
//! [`Run`] pipeline, so results equal the service's cross-partition merge. Per range we
//! count what the service would load under the container's indexing policy (an
//! index-served filter loads only matching documents; anything else loads every document in
//! scope; TOP N without ORDER BY stops after N+1 matches) and charge it through
//! [`charge::query_range`].
//!
//! Paging: streaming queries (no ORDER BY, GROUP BY, DISTINCT, aggregate or OFFSET) resume
//! their scan at the item the continuation records (by key, or by document number in a range
//! read in document order). Other queries page through their
//! complete result: the first page computes it, later pages take it from the
//! [`super::cache`] while the container is unchanged (and compute it again otherwise). The
//! continuation records how many results were delivered and the charge accrued so far;
//! page charges telescope, so the pages of one query add up exactly to its unpaged charge.
//! A page ends at `max_items` results or before its documents would pass 4 MB
//! ([`MAX_PAGE_BYTES`]), whichever comes first.
//!
//! This module runs the steps in order; its parts hold the rules each step applies:
//! `rules` (what the indexing policy serves and allows), `candidates` (index lookups for a
//! filter), `ordered` (ORDER BY from an index walk), `statistics` (answers from the exact
//! counts), `partition_key` (a result's logical partition) and `charges` (a page's RU).

pub mod access;
pub mod cache;
mod candidates;
mod charges;
pub mod condition;
mod ordered;
mod page;
mod partition_key;
pub mod pipeline;
pub mod request;
pub mod result;
pub mod routing;
mod rules;
mod scan;
mod statistics;
pub mod timing;
mod token;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;


use crate::charge;
use crate::error::{Error, Result};
use crate::query::eval::functions::FnContext;
use crate::query::eval::value::Val;
use crate::query::read::demand;
use crate::query::read::document::Document;
use crate::query::read::extractor::Extractor;
use crate::query::run::cache::{CacheKey, Computed, ResultCache};
use crate::query::run::pipeline::{Output, Run, result_bound, rows_of};
use crate::query::syntax::names::doc_alias;
use crate::query::syntax::ast::{Expr, ExprKind, FromKind, Query, SelectKind};
use crate::store::catalog::ContainerDef;
use crate::store::epk::Epk;
use crate::store::index::IndexReader;
use crate::store::indexing::CompiledPolicy;
use crate::store::keys::RangeId;
use crate::store::ranges::PkRange;
use crate::store::stats::OpKind;
use crate::store::{RoTxn, Store};
use access::{Probe, Resolver};
use candidates::{Candidate, index_candidates};
use charges::{PageCharge, charge_page};
use ordered::{TieOrder, Walked, order_walk, produced_by_range, walk_order, walked_by_range};
use partition_key::KeyReader;
use routing::Routing;
use rules::{check_counts, check_order_by, index_served, is_constant, reverse_scan};
use scan::{
    InnerFrom, ItemSource, Loads, PageBounds, RangeOrder, RangeTally, Reading, Scan, Streamed,
    candidates_in, key_spans,
};
use statistics::{count_from_statistics, range_items, scope_counts};
use page::page_length;
use pipeline::has_aggregate;
pub use request::{Progress, QueryOptions};
pub use result::{
    AccessView, IndexMetrics, PartitionResult, QueryMetrics, QueryResult, RangePart, RangeProgress,
    RoutingView,
};
use token::{Token, query_hash};
pub use page::MAX_PAGE_BYTES;

/// Without ORDER BY, the service returns a range's documents in document (`_rid`, creation)
/// order: the docs' examples show items in the order they were added. The store keeps a
/// range in key order (EPK, id) instead, so that a logical and a physical partition are each
/// one key range (DESIGN.md §2). A range of up to this many items (for an index lookup: with
/// up to this many candidates in it) is read whole and sorted by document number, which
/// costs at most a few milliseconds per page; a larger one streams in key order, which the
/// service's "deterministic order" (offset-limit.md) also allows. The choice is made per
/// range, from its item count (or candidates), and a resumed range keeps the order its first
/// page took, so every page of a query agrees.
pub const DOCUMENT_ORDER_MAX_ITEMS: u64 = 5_000;

/// Runs one page of `q` (already parsed and checked) on `def`. `cancel` is polled between
/// documents and ranges; `cache` keeps complete results for the later pages of queries
/// that cannot stream.
#[allow(clippy::too_many_arguments)]
pub fn run(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    text: &str,
    q: &Query,
    opts: &QueryOptions,
    cancel: &AtomicBool,
    cache: &ResultCache,
) -> Result<QueryResult> {
    let started = Instant::now();
    let root = doc_alias(q).unwrap_or_default();
    let with_policy = crate::query::search::rank::with_vector_policy(q, def, &root);
    let q = with_policy.as_ref().unwrap_or(q);
    // While a replacement policy builds, queries rely only on paths both policies index.
    // ORDER BY is validated against the policy being built (the one the user set): a path
    // it includes sorts correctly meanwhile, by a sort instead of an index walk.
    let (ready_generation, ready_policy) = def.ready_index();
    let target = def.indexing_policy.compiled();
    check_order_by(q, def, &root, &target)?;
    let policy = match &def.index_build {
        Some(_) => def
            .indexing_policy
            .compile()
            .restricted_to(ready_policy.compile())
            .into(),
        None => target,
    };
    check_counts(q, &opts.params)?;
    let routing: Routing = routing::route(q, def, &opts.params, opts.partition_key.as_ref())?;
    // Documents per range, read once when a fan-out needs them (see `scope_counts`).
    let mut all_counts = None;
    let hash = query_hash(text, &opts.params);
    let rid = crate::store::item::rids(def, 0).container;
    let token = Token::read(opts.continuation.as_deref(), &rid, hash)?;
    let first_page = token.is_none();
    let max_items = opts.max_items.unwrap_or(100).max(1);
    let now_ticks = crate::query::eval::functions::now_ticks();
    let ctx = FnContext {
        now_ticks,
        clock: Some(crate::query::eval::functions::now_ticks),
        // RAND draws anew on every execution (rand.md: "repetitive calls of this function
        // don't return the same results"), in a new process too: the process's random
        // hash keys make the seed.
        seed: hash ^ std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), now_ticks),
    };
    let params: crate::query::eval::expr::Params = opts
        .params
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // `ORDER BY RANK FullTextScore(...)` scores against the whole container's statistics,
    // gathered before the result is computed (see below); charged on the first page.
    let full_text = std::cell::OnceCell::new();
    let mut statistics: Vec<crate::query::search::rank::StatisticsRead> = Vec::new();
    let env = pipeline::env(&params, &ctx, Some(&full_text));
    let mut pipeline = Run::new(q, &env);
    // The direction ORDER BY ties come in within a range (the sort's and the index walk's).
    let reverse_ties = reverse_scan(q, def, &root);
    pipeline.break_ties_by_position(reverse_ties);
    // Only the properties the query reads are built from each item.
    // `SELECT *` over whole items: rows carry the stored bytes and are parsed in full only
    // if they make it into the result.
    let stored_star = matches!(q.select.kind, SelectKind::Star)
        && q.joins.is_empty()
        && !q.select.distinct
        && matches!(q.from.as_ref().map(|f| &f.kind), Some(FromKind::Container { path, .. }) if path.is_empty());
    // A projection of each item of `FROM c` alone (no JOIN, DISTINCT, grouping or
    // aggregate): one result per item, so an order the index gives is the result's order.
    let projects_items = !matches!(q.select.kind, SelectKind::Star)
        && q.joins.is_empty()
        && !q.select.distinct
        && q.group_by.is_empty()
        && !has_aggregate(q)
        && matches!(q.from.as_ref().map(|f| &f.kind), Some(FromKind::Container { path, .. }) if path.is_empty());
    // `SELECT VALUE` can be undefined for an item, which then makes no result.
    let value_projection = matches!(q.select.kind, SelectKind::Value(_));
    // Results report their logical partitions: the partition key of each matching item is
    // read on its own, so items that do not match need only what the query reads.
    let demand = if stored_star {
        demand::of_query_without_star(q, &root)
    } else {
        demand::of_query(q, &root)
    };
    let extractor = Extractor::new(demand);
    let key_reader = KeyReader::new(def);
    let served = q
        .filter
        .as_ref()
        .is_some_and(|f| index_served(f, &root, &policy));
    // Conjuncts an index answers. A filter only partly served loads what those conjuncts
    // select (the service narrows with the index, then evaluates the rest on the loaded
    // documents); the charge counts exactly that, whichever way the documents were found.
    let resolver = Resolver::new(q, &root);
    // Every conjunct's probe, indexed or not (the index metrics name both).
    let all_probes: Vec<Probe> = match &q.filter {
        Some(f) => access::conjuncts(f)
            .into_iter()
            .filter_map(|c| resolver.probe(c, &env))
            .collect(),
        None => Vec::new(),
    };
    let probes: Vec<&Probe> = match (&q.filter, q.from.as_ref().map(|f| &f.kind)) {
        (Some(_), Some(FromKind::Container { .. } | FromKind::In { .. })) if !root.is_empty() => {
            all_probes
                .iter()
                .filter(|p| p.indexed_by(&policy))
                .collect()
        }
        _ => Vec::new(),
    };
    let narrowing: Vec<&Expr> = if served {
        Vec::new()
    } else {
        probes
            .iter()
            .filter(|p| p.paths.iter().all(|path| !path.via_join))
            .map(|p| p.conjunct)
            .collect()
    };
    // COUNT of a constant needs no document at all when the filter (if any) is index-served:
    // the service answers it from the index.
    let index_only = count_only(q)
        && q.filter
            .as_ref()
            .is_none_or(|f| index_served(f, &root, &policy));
    // TOP N without ORDER BY, grouping, DISTINCT or OFFSET stops after N+1 matches, as the
    // service loads N+1 documents for it.
    let streaming = crate::query::run::pipeline::streams(q);
    // TOP stops the reading early where each item's results are final as it is read: not
    // over a subquery that orders, groups or counts (its results come after the last range).
    let final_per_item = match q.from.as_ref().map(|f| &f.kind) {
        Some(FromKind::Subquery { query, .. }) => {
            crate::query::run::pipeline::works_item_by_item(query)
        }
        _ => true,
    };
    let early_stop = match &q.select.top {
        Some(top) if streaming && final_per_item => match env.eval(top, &[]) {
            Val::Num(n) if n >= 0.0 => Some(n as u64 + 1),
            _ => None,
        },
        _ => None,
    };

    if routing.kind != routing::RoutingKind::SinglePartition && !q.group_by.is_empty() {
        let aggs = crate::query::run::pipeline::select_aggregates(q);
        if aggs.len() > 21 {
            return Err(Error::bad_request(format!(
                "a cross-partition GROUP BY query can have at most 21 aggregates; this one has {}",
                aggs.len()
            ))
            .at(q.select.pos.line, q.select.pos.column));
        }
    }
    // ORDER BY on indexed paths (checked above) with no filter or an index-served one, and a
    // bound on the results: the index streams the order, so loads stop at the bound.
    // A score (search) is computed per document: every document in scope is loaded, unless
    // a vector index yields the nearest ones.
    let scored_order = crate::query::search::rank::scores_every_document(q, def, &root);
    let ordered_bound = if !q.order_by.is_empty()
        && !scored_order
        && q.group_by.is_empty()
        && !q.select.distinct
        && !has_aggregate(q)
        && (q.filter.is_none() || served)
    {
        result_bound(q, &env)
    } else {
        None
    };
    // An unfiltered COUNT reads the statistics the store keeps exact, as the service
    // answers it from the index.
    if count_only(q)
        && q.filter.is_none()
        && token.is_none()
        && matches!(q.from.as_ref().map(|f| &f.kind), Some(FromKind::Container { path, .. }) if path.is_empty())
    {
        let index_metrics = metrics_of(q, &resolver, &all_probes, &policy, def);
        return count_from_statistics(store, txn, def, routing, pipeline, index_metrics, started);
    }
    let from_subquery = matches!(
        q.from.as_ref().map(|f| &f.kind),
        Some(FromKind::Subquery { .. })
    );
    // Streaming queries page by resuming the scan; others page over their full result,
    // which later pages take from the result cache while the container is unchanged.
    let paged_scan = streaming && !from_subquery && q.from.is_some();
    let ranges = if q.from.is_some() {
        routing.ranges(def)
    } else {
        Vec::new()
    };
    // A computed result continues over the ranges of its first page, which a split since
    // has divided: each is read whole again (see `Token::layout`), with its children's counts.
    let first_layout = match &token {
        Some(t) if !paged_scan => layout_units(&ranges, t.layout()),
        _ => None,
    };
    let ranges: Vec<&PkRange> = match &first_layout {
        Some(units) => {
            statistics::fold_children(store, txn, def, &mut all_counts, units)?;
            units.iter().map(|(unit, _)| unit).collect()
        }
        None => ranges,
    };
    let cache_key = if paged_scan {
        None
    } else {
        Some(CacheKey {
            container: def.rid,
            query: match &opts.partition_key {
                Some(pk) => hash ^ crate::store::murmur3::hash128(pk.to_string().as_bytes(), 1).0,
                None => hash,
            },
            version: store.feed_head(txn, def)?,
            index_generation: ready_generation,
            ranges: ranges.iter().map(|r| r.id).collect(),
        })
    };
    let cached = match (&cache_key, &token) {
        (Some(key), Some(_)) => cache.get(key),
        _ => None,
    };
    let emitted_before = token.as_ref().map_or(0, |t| t.emitted);
    let top_left = match &q.select.top {
        Some(top) => match env.eval(top, &[]) {
            Val::Num(n) if n >= 0.0 => (n as u64).saturating_sub(emitted_before) as usize,
            _ => 0,
        },
        None => usize::MAX,
    };
    // Where a streamed scan stopped (nothing for a computed result).
    let mut streamed = Streamed::default();
    // `complete`: the result is the query's whole result (an index walk for one page reads
    // only up to that page, unless TOP or LIMIT bounds the query).
    let from_cache = cached.is_some();
    let (computed, complete): (Arc<Computed>, bool) = match cached {
        Some(computed) => (computed, true),
        None => {
            if crate::query::search::rank::ranks_by_full_text(q) {
                let (scores, reads) = crate::query::search::rank::full_text_statistics(
                    store, txn, def, q, &env, &root,
                )?;
                let _ = full_text.set(scores);
                if first_page {
                    statistics = reads;
                }
            }
            let inner = match q.from.as_ref().map(|f| &f.kind) {
                Some(FromKind::Subquery { query, alias }) => {
                    let mut run = Run::new(query, &env);
                    let inner_root = doc_alias(query).unwrap_or_default();
                    run.break_ties_by_position(reverse_scan(query, def, &inner_root));
                    Some(InnerFrom {
                        query,
                        alias,
                        run,
                        item_by_item: crate::query::run::pipeline::works_item_by_item(query),
                    })
                }
                _ => None,
            };
            if q.from.is_none() {
                // `SELECT 1`: one evaluation, no documents.
                for row in rows_of(q, None, &[], &env) {
                    pipeline.push(row);
                }
            }
            let mut per_range = Vec::with_capacity(ranges.len());
            let spans: Vec<(Epk, Epk)> = match &routing.targets {
                routing::Targets::Keys(keys) => keys
                    .iter()
                    .map(|k| routing::point_span(k.epk(&def.partition_key)))
                    .collect(),
                routing::Targets::Ranges(spans) => spans.clone(),
                routing::Targets::All => vec![(Epk::min(), Epk::max())],
            };
            let epk_len = def.partition_key.epk_len();
            let byte_spans = crate::store::index::normalize_spans(
                spans
                    .iter()
                    .map(|(a, b)| (a.0.clone(), b.0.clone()))
                    .collect(),
            );
            // ORDER BY from the index: walk about k entries instead of sorting the whole
            // scope. An equality filter a composite index answers under the same walk needs
            // no candidate lookup (which could read every matching entry first).
            let walk = if inner.is_none() {
                order_walk(
                    store,
                    txn,
                    def,
                    q,
                    &resolver,
                    &env,
                    &policy,
                    (ready_generation, ready_policy),
                )?
            } else {
                None
            };
            let (candidates, access) = if probes.is_empty() || walk.is_some() {
                (None, scan_view(q.filter.is_some()))
            } else {
                let reader = IndexReader::new(store, txn, def, ready_generation);
                let items = store.container_stats(txn, def)?.counters.items;
                // Past this many candidates, loading them one by one costs about what a scan does.
                let limit = (items / 5).max(1000) as usize;
                let (keys, view) = index_candidates(&reader, &probes, &byte_spans, limit)?;
                let found = keys.map(|keys| {
                    keys.into_iter()
                        .map(|key| Candidate { key, record: None })
                        .collect::<Vec<_>>()
                });
                (found, view)
            };
            let now = crate::store::now_secs();
            let index_metrics = metrics_of(q, &resolver, &all_probes, &policy, def);
            // An exact ordered walk: its items in result order, and when it ran.
            let mut presorted: Option<(Vec<Walked>, u128)> = None;
            // A `SELECT VALUE` walk's items, projected while checking they made enough results.
            let mut projected: Option<Vec<Output>> = None;
            // Documents matching a filtered walk, per range (bounded by the ORDER BY's k).
            let mut matching: Option<Vec<(crate::store::keys::RangeId, u64)>> = None;
            let (candidates, access, walked) = match walk {
                Some(walk) => {
                    let skip = token.as_ref().map_or(0, |t| t.skip);
                    // Results the walk must reach: up to the bound, or one past this page.
                    let needed = ordered_bound
                        .unwrap_or_else(|| skip.saturating_add(max_items).saturating_add(1));
                    let mut k = needed;
                    let reader = IndexReader::new(store, txn, def, ready_generation);
                    // When the index gives exact sort keys (a filter the walk answers is exact
                    // too: see OrderWalk), the walk's order is the result's: `SELECT *` needs
                    // nothing of the items but their bytes, a projection only its own members.
                    let presort = (stored_star || projects_items) && !streaming;
                    if !walk.prefix.is_empty() {
                        // The charge counts, per range, the matching documents the service
                        // would stream (at most k): count the entries under the prefix.
                        let cap = ordered_bound.map_or(u64::MAX, |k| k as u64);
                        let mut counts: Vec<(crate::store::keys::RangeId, u64)> =
                            ranges.iter().map(|r| (r.id, 0)).collect();
                        let mut full = 0;
                        reader.walk(
                            walk.path,
                            walk.values,
                            false,
                            &walk.prefix,
                            &byte_spans,
                            |_, item| {
                                let epk = &item[..epk_len];
                                if let Some(i) = ranges.iter().position(|r| r.contains(epk)) {
                                    let c = &mut counts[i].1;
                                    if *c < cap {
                                        *c += 1;
                                        full += usize::from(*c == cap);
                                    }
                                }
                                Ok(full < ranges.len())
                            },
                        )?;
                        matching = Some(counts);
                    }
                    let range_ends: Vec<&[u8]> =
                        ranges.iter().map(|r| r.max_exclusive.as_bytes()).collect();
                    let ties = TieOrder {
                        range_ends: &range_ends,
                        epk_len,
                        reverse_scan: reverse_ties,
                    };
                    let clock = Instant::now();
                    let (items, in_order) = loop {
                        let (items, in_order) = walk_order(
                            store,
                            txn,
                            &reader,
                            &walk,
                            &byte_spans,
                            k,
                            now,
                            (presort, &ties),
                        )?;
                        // Every item is a result, except where `SELECT VALUE` is undefined:
                        // then walk on until enough items are (rarely more than once).
                        let results = if value_projection && items.len() >= k {
                            let values = project_walked(&pipeline, &extractor, &items)?;
                            let n = values.iter().filter(|v| !is_undefined(v)).count();
                            projected = Some(values);
                            n
                        } else {
                            // Each item is a result, or the walk ended before k: all are in.
                            projected = None;
                            needed
                        };
                        if results >= needed {
                            break (items, in_order);
                        }
                        k = k.saturating_add((needed - results).max(k));
                    };
                    if walk.undefined_after && items.len() < k {
                        // The results run past the documents that define the path into those
                        // that do not, which only a scan finds: scan and sort (same order and
                        // charge, which model the service's streamed index either way).
                        (None, access, false)
                    } else {
                        // In result order, the items need nothing more read: the ranges'
                        // metrics come from them (below). Otherwise they are candidates, read
                        // in key order and sorted like any others.
                        let candidates = if in_order {
                            presorted = Some((items, clock.elapsed().as_nanos()));
                            Vec::new()
                        } else {
                            let mut c: Vec<Candidate> = items
                                .iter()
                                .map(|w| Candidate {
                                    key: reader.item_key(w.item),
                                    record: Some(w.bytes),
                                })
                                .collect();
                            c.sort_unstable_by(|a, b| a.key.cmp(&b.key));
                            c
                        };
                        let reason = if walk.prefix.is_empty() {
                            format!(
                                "the index yields the ORDER BY directly: the first {k} entries are read instead of sorting every document"
                            )
                        } else {
                            format!(
                                "the composite index answers the equality filter and yields the ORDER BY: the first {k} matching entries are read instead of sorting every match"
                            )
                        };
                        let view = AccessView {
                            kind: "index-order",
                            indexes: vec![walk.spec.clone()],
                            reason,
                        };
                        (Some(candidates), view, true)
                    }
                }
                None => (candidates, access, false),
            };
            // A scored order says how its scores are found.
            let access = match &candidates {
                None if crate::query::search::rank::orders_by_score(q) => {
                    let (kind, reason) = if scored_order {
                        (
                            "scan",
                            "ORDER BY a score: every document in scope is scored, then sorted",
                        )
                    } else {
                        (
                            "vector-index",
                            "the vector index yields the nearest vectors: only the results are loaded",
                        )
                    };
                    AccessView {
                        kind,
                        indexes: Vec::new(),
                        reason: reason.into(),
                    }
                }
                _ => access,
            };
            let resume_key = match &token {
                Some(t) if paged_scan => t.resume_key()?,
                _ => None,
            };
            let resume_epk: Option<Vec<u8>> = resume_key
                .as_ref()
                .and_then(|k| k.get(4..4 + epk_len))
                .map(<[u8]>::to_vec);
            let ordered_spans = match &token {
                Some(t) if paged_scan => t.ordered_spans()?,
                _ => Vec::new(),
            };
            // An exact ordered walk read its items already, in result order. Only those inside
            // OFFSET/LIMIT and TOP are materialized, first: reading the partition keys next
            // then finds the records in the CPU cache.
            // Which walked items made a result, where not all did (undefined `SELECT VALUE`).
            let mut walked_results: Option<Vec<bool>> = None;
            let presorted_results: Option<Vec<Output>> = match &presorted {
                Some((items, _)) if stored_star => Some(
                    items[pipeline.window(items.len())]
                        .iter()
                        .map(|w| Output::Stored(Arc::from(w.record.json)))
                        .collect(),
                ),
                // OFFSET/LIMIT and TOP count results, which a projection always makes; an
                // undefined `SELECT VALUE` makes none, so then every item is projected first.
                Some((items, _)) if value_projection => {
                    let mut results = match projected.take() {
                        Some(results) => results,
                        None => project_walked(&pipeline, &extractor, items)?,
                    };
                    let made: Vec<bool> = results.iter().map(|r| !is_undefined(r)).collect();
                    if made.contains(&false) {
                        walked_results = Some(made);
                    }
                    results.retain(|r| !is_undefined(r));
                    let window = pipeline.window(results.len());
                    results.truncate(window.end);
                    results.drain(..window.start);
                    Some(results)
                }
                Some((items, _)) => Some(project_walked(
                    &pipeline,
                    &extractor,
                    &items[pipeline.window(items.len())],
                )?),
                None => None,
            };
            // The walk's items give each range's documents and logical partitions, and its
            // time is the ranges' load time, by their share; the ranges read nothing more.
            let mut walked_parts = match &presorted {
                Some((items, _)) => Some(walked_by_range(
                    items,
                    walked_results.as_deref(),
                    &ranges,
                    epk_len,
                    &key_reader,
                )?),
                None => None,
            };
            let mut scan = Scan::new(
                Reading {
                    q,
                    env: &env,
                    root: &root,
                    extractor: &extractor,
                    narrowing: &narrowing,
                    keys: &key_reader,
                    stored_star,
                    paged_scan,
                    epk_len,
                    now,
                    cancel,
                },
                PageBounds {
                    cap: if paged_scan {
                        max_items.min(top_left)
                    } else {
                        usize::MAX
                    },
                    top_left,
                    early_stop,
                    resume_key: resume_key.as_deref(),
                    within: token.as_ref().map_or(0, |t| t.within),
                },
                Loads { served, index_only },
                pipeline,
                inner,
            );
            // Per range scanned: the EPK of each of its logical partitions.
            let mut logical_epks: Vec<Vec<&[u8]>> = Vec::with_capacity(ranges.len());
            for (ri, range) in ranges.iter().enumerate() {
                if scan.resume.is_some() {
                    break;
                }
                // A resumed scan skips ranges it finished on earlier pages. A range read in
                // document order that a page stopped in continues that order, and so does each
                // of its children if it split since (see `Token::ordered`).
                let resume_doc = ordered_spans
                    .iter()
                    .find(|s| s.min <= range.min_inclusive && range.max_exclusive <= s.max)
                    .map(|s| (s.from, s.within));
                let (finished, visited_before) = match (&resume_epk, resume_doc) {
                    (_, Some(_)) => (false, true),
                    (Some(e), None) => (
                        range.max_exclusive.as_bytes() <= e.as_slice(),
                        range.contains(e),
                    ),
                    (None, None) => (false, false),
                };
                if finished {
                    continue;
                }
                let mut tally = RangeTally::default();
                if let (Some(parts), Some((items, walk_ns))) = (&mut walked_parts, &presorted) {
                    let part = &mut parts[ri];
                    let m = &mut tally.metrics;
                    m.output_document_count = part.output;
                    m.index_hit_document_count = part.retrieved;
                    m.retrieved_document_count = part.retrieved;
                    m.retrieved_document_size = part.bytes;
                    tally.logical = std::mem::take(&mut part.logical);
                    tally.load_ns =
                        walk_ns * u128::from(part.retrieved) / items.len().max(1) as u128;
                }
                let scanned: &[(Epk, Epk)] = if walked_parts.is_some() { &[] } else { &spans };
                let key_spans = key_spans(def, range, scanned);
                // A resumed range keeps the order its first page took; one item needs none.
                let document_order = !key_spans.is_empty()
                    && q.order_by.is_empty()
                    && if visited_before {
                        resume_doc.is_some()
                    } else if let Some(c) = candidates.as_deref() {
                        let n = candidates_in(c, &key_spans);
                        n > 1 && n as u64 <= DOCUMENT_ORDER_MAX_ITEMS
                    } else {
                        range_items(store, txn, def, (range.id, ranges.len()), &mut all_counts)?
                            <= DOCUMENT_ORDER_MAX_ITEMS
                    };
                let order = if document_order {
                    RangeOrder::Document { from: resume_doc }
                } else {
                    RangeOrder::Key {
                        from: resume_key.as_deref(),
                    }
                };
                let source = ItemSource {
                    store,
                    txn,
                    def,
                    candidates: candidates.as_deref(),
                    extractor: &extractor,
                };
                scan.range(range, &key_spans, order, &source, &mut tally)?;
                let RangeTally {
                    metrics: mut m,
                    logical,
                    logical_epks: epks,
                    load_ns,
                    exec_ns,
                    ..
                } = tally;
                logical_epks.push(epks);
                if walked {
                    // The walk read only the first entries; the charge models the service, which
                    // streams each range from its index: the documents in scope, bounded below.
                    let (n, bytes) =
                        scope_counts(store, txn, def, &routing, range, &mut all_counts)?;
                    let matched = matching
                        .as_ref()
                        .and_then(|c| c.iter().find(|(id, _)| *id == range.id))
                        .map(|(_, c)| *c);
                    match matched {
                        // A filtered walk loads the matching documents (sized as the range's
                        // average: the walk did not read the others).
                        Some(c) => {
                            m.retrieved_document_count = c;
                            m.retrieved_document_size = bytes.checked_div(n).unwrap_or(0) * c;
                        }
                        None => {
                            m.retrieved_document_count = n;
                            m.retrieved_document_size = bytes;
                        }
                    }
                }
                if let Some(k) = ordered_bound {
                    // An ORDER BY served by the index streams each range in order: with TOP/LIMIT k
                    // the service loads at most k documents per range.
                    let kept = m.retrieved_document_count.min(k as u64);
                    if let Some(avg) = m
                        .retrieved_document_size
                        .checked_div(m.retrieved_document_count)
                    {
                        m.retrieved_document_size = avg * kept;
                    }
                    m.retrieved_document_count = kept;
                }
                m.document_load_time_in_ms = load_ns as f64 / 1e6;
                m.query_engine_execution_time_in_ms = exec_ns as f64 / 1e6;
                if let Some(p) = &opts.progress {
                    (p.0)(&RangeProgress {
                        range: range.id.to_string(),
                        retrieved_document_count: m.retrieved_document_count,
                        matched: m.index_hit_document_count,
                    });
                }
                per_range.push(RangePart {
                    range: (*range).clone(),
                    metrics: m,
                    logical,
                    visited_before,
                });
            }
            let results = match presorted_results {
                Some(results) => results,
                None => {
                    let (results, stopped, result_epks) = scan.finish();
                    streamed = stopped;
                    // The first k of an ORDER BY with TOP/LIMIT (however they were loaded):
                    // each range is credited only with its documents among them.
                    if let Some(epks) = result_epks {
                        produced_by_range(&mut per_range, &logical_epks, &epks);
                    }
                    results
                }
            };
            // Results as JSON text: a stored item is returned as stored (its bytes are the compact
            // JSON it serializes to), so no value is built for it. Undefined is no result: drop
            // it before paging so every page advances.
            let results: Vec<Document> = results
                .into_iter()
                .filter_map(|r| match r {
                    Output::Stored(bytes) => Some(Ok(Document::from_stored(bytes))),
                    Output::Value(v) => Document::from_result(&v).transpose(),
                })
                .collect::<Result<_>>()?;
            let computed = Computed::new(results, per_range, access, index_metrics);
            (Arc::new(computed), !walked || ordered_bound.is_some())
        }
    };
    let skip = if paged_scan {
        0
    } else {
        token.as_ref().map_or(0, |t| t.skip)
    };
    let result_count = computed.results.len();
    let page_len = page_length(computed.results.get(skip..).unwrap_or_default(), max_items);
    if let Some(key) = cache_key
        && complete
        && result_count > skip.saturating_add(page_len)
    {
        cache.put(key, computed.clone());
    }
    // The page moves out of a result no one else holds, and is copied out of a cached one.
    let (page, mut per_range, access, index_metrics) = match Arc::try_unwrap(computed) {
        Ok(c) => (
            c.results
                .into_iter()
                .skip(skip)
                .take(page_len)
                .collect::<Vec<_>>(),
            c.ranges,
            c.access,
            c.index_metrics,
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
            shared.index_metrics.clone(),
        ),
    };
    if from_cache {
        // This page loaded nothing: the work the metrics count was done by the first.
        for part in &mut per_range {
            part.metrics.index_lookup_time_in_ms = 0.0;
            part.metrics.document_load_time_in_ms = 0.0;
            part.metrics.query_engine_execution_time_in_ms = 0.0;
        }
    }
    let page_output_total: u64 = page.iter().map(|d| d.json_len() as u64).sum();
    let more = if paged_scan {
        streamed.resume.is_some() && streamed.rows < top_left
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
        first_page,
        &statistics,
    );
    store.record_reads(def.rid, &reads, OpKind::Query);
    totals.output_document_count = page.len() as u64;
    totals.output_document_size = page_output_total;
    totals.query_engine_execution_time_in_ms =
        started.elapsed().as_secs_f64() * 1e3 - totals.document_load_time_in_ms;
    let before = token.as_ref().map_or(0.0, |t| t.charged);
    let after = before + raw_charge;
    let request_charge = charge::round(after) - charge::round(before);
    let continuation = more.then(|| {
        Token::next(
            token.as_ref(),
            (&rid, hash),
            skip,
            page.len(),
            after,
            streamed.resume.as_ref(),
            &if paged_scan {
                Vec::new()
            } else {
                ranges.iter().map(|r| r.id).collect::<Vec<_>>()
            },
        )
    });
    Ok(QueryResult {
        documents: page,
        continuation,
        request_charge: charge::round(request_charge),
        routing: RoutingView {
            kind: routing.kind.name(),
            reason: routing.reason,
        },
        partitions,
        metrics: totals,
        access,
        index_metrics,
    })
}

/// The ranges a computed result's first page ran over (`layout`), each as one range
/// spanning its children among today's routed `ranges`, with their ids; `None` when the
/// layout is today's (or does not describe it, as it would after a change of routing).
fn layout_units(ranges: &[&PkRange], layout: &[RangeId]) -> Option<Vec<(PkRange, Vec<RangeId>)>> {
    if layout.is_empty() || layout.iter().eq(ranges.iter().map(|r| &r.id)) {
        return None;
    }
    let mut units = Vec::with_capacity(layout.len());
    let mut covered = 0;
    for &old in layout {
        let children: Vec<&PkRange> = ranges
            .iter()
            .copied()
            .filter(|r| r.id == old || r.parents.contains(&old))
            .collect();
        let (first, last) = (children.first()?, children.last()?);
        covered += children.len();
        units.push((
            PkRange {
                id: old,
                min_inclusive: first.min_inclusive.clone(),
                max_exclusive: last.max_exclusive.clone(),
                parents: first
                    .parents
                    .iter()
                    .copied()
                    .take_while(|p| *p != old)
                    .collect(),
            },
            children.iter().map(|r| r.id).collect(),
        ));
    }
    (covered == ranges.len()).then_some(units)
}

/// The projections of walked items of `FROM c`, in walk order (undefined ones included).
fn project_walked(pipeline: &Run, extractor: &Extractor, items: &[Walked]) -> Result<Vec<Output>> {
    let items = items
        .iter()
        .map(|w| {
            extractor
                .extract_stored(w.record.json, w.record.members.as_ref())
                .map_err(|e| Error::internal(format!("corrupt item: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(pipeline.finish_presorted_items(items))
}

fn is_undefined(output: &Output) -> bool {
    matches!(output, Output::Value(v) if v.is_undefined())
}

fn metrics_of(
    q: &Query,
    resolver: &Resolver,
    probes: &[Probe],
    policy: &CompiledPolicy,
    def: &ContainerDef,
) -> IndexMetrics {
    let composites: Vec<Vec<String>> = def
        .indexing_policy
        .composite_indexes
        .iter()
        .map(|ci| {
            ci.iter()
                .map(|c| {
                    let dir = match c.order {
                        crate::store::indexing::CompositeOrder::Ascending => "ASC",
                        crate::store::indexing::CompositeOrder::Descending => "DESC",
                    };
                    format!("{} {dir}", c.path)
                })
                .collect()
        })
        .collect();
    access::index_metrics_of(q, resolver, probes, policy, &composites)
}

fn scan_view(filtered: bool) -> AccessView {
    AccessView {
        kind: "scan",
        indexes: Vec::new(),
        reason: if filtered {
            "no conjunct of the filter compares an indexed path with constants".into()
        } else {
            "no filter: every document in scope is read".into()
        },
    }
}

/// `SELECT VALUE COUNT(<constant>)` / `SELECT COUNT(<constant>) AS n` without grouping.
fn count_only(q: &Query) -> bool {
    let is_count = |e: &Expr| {
        matches!(&e.kind, ExprKind::Call { name, args, udf: false }
            if name == "COUNT" && args.first().is_some_and(is_constant))
    };
    q.group_by.is_empty()
        && q.joins.is_empty()
        && match &q.select.kind {
            SelectKind::Value(e) => is_count(e),
            SelectKind::Items(items) => items.iter().all(|i| is_count(&i.expr)),
            SelectKind::Star => false,
        }
}
