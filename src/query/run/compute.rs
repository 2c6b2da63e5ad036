//! Phase two of a query: its result over the routed ranges. A later page of a result that
//! cannot stream takes it from the result cache; otherwise the items are found (see
//! [`super::find`]) and go through the pipeline range by range, in document order when a
//! range is small and key order otherwise (see [`DOCUMENT_ORDER_MAX_ITEMS`]), and each range's
//! metrics are counted as the service would report them under the container's indexing
//! policy.

use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::background::Outcome;
use super::between_pages::{BetweenPages, PageKey};
use super::cache::{CacheKey, Computed, ResultCache};
use super::candidates::SpanCursor;
use super::find::{Found, Routed, find_items, is_undefined, project_walked, stored};
use super::ordered::{TieOrder, WalkAfter, WalkedPart, produced_by_range, walked_by_range};
use super::pipeline::{Output, Run, rows_of, works_item_by_item};
use super::prepare::Plan;
use super::request::Progress;
use super::result::{AccessView, RangeLabel, RangePart, RangeProgress};
use super::rules::reverse_scan;
use super::scan::{
    InnerFrom, ItemSource, Loads, PageBounds, RangeOrder, RangeTally, Reading, Scan,
    SplitCandidates, Streamed, candidates_in, key_spans,
};
use super::snapshot::Snapshot;
use super::statistics::{RangeCounts, fold_children, range_items, scope_counts};
use super::token::OrderedSpan;
use crate::error::{Error, Result};
use crate::query::eval::budget::Stop;
use crate::query::eval::env::Env;
use crate::query::read::document::Document;
use crate::query::search::fulltext::FullTextScores;
use crate::query::search::rank::{self, StatisticsRead};
use crate::query::syntax::ast::FromKind;
use crate::query::syntax::names::doc_alias;
use crate::store::epk::Epk;
use crate::store::keys::RangeId;
use crate::store::prefetch::ColdWatch;
use crate::store::ranges::PkRange;

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

/// The caller's hold on a running query.
#[derive(Clone, Copy)]
pub(super) struct Hooks<'h> {
    /// Polled between documents and ranges; the query stops with 499 when it is set.
    pub(super) cancel: &'h AtomicBool,
    /// Told as each range finishes.
    pub(super) progress: Option<&'h Progress>,
    /// Continues computing the result of the given key after the page returns (see
    /// [`super::background`]); false when it cannot. `None` where no page returns before
    /// the result is whole (the computation itself).
    pub(super) continue_after: Option<&'h dyn Fn(&CacheKey) -> bool>,
}

/// A query's result as far as this page needs it, and what the page reports about it.
pub(super) struct Computation {
    pub(super) computed: Arc<Computed>,
    /// `computed` is the query's whole result (an ORDER BY walk for one page reads only up
    /// to that page, unless TOP or LIMIT bounds the query), which later pages may take from
    /// the cache.
    pub(super) complete: bool,
    pub(super) from_cache: bool,
    /// Where a streamed scan stopped (nothing for a computed result).
    pub(super) streamed: Streamed,
    /// What gathering full-text statistics read, charged on the first page.
    pub(super) statistics: Vec<StatisticsRead>,
    /// The ranges the result was computed over (a computed result's continuation keeps
    /// them, so its later pages agree with its first after a split).
    pub(super) layout: Vec<RangeId>,
    pub(super) cache_key: Option<CacheKey>,
    /// Where each result of an exact ORDER BY walk stands in the index (see
    /// [`WalkAfter`]), so the next page resumes after the last one this page delivers.
    pub(super) walk_keys: Option<Vec<WalkAfter>>,
    /// The result starts where the previous page ended (a resumed walk), not at the
    /// query's first result.
    pub(super) resumed: bool,
    /// The result is still being computed, at this change sequence of the container: the
    /// page delivers nothing and its continuation waits for it.
    pub(super) computing: Option<u64>,
}

impl Computation {
    /// A result taken from the cache or a finished computation (its later pages take it
    /// from the cache again).
    fn kept(computed: Arc<Computed>, layout: Vec<RangeId>, cache_key: Option<CacheKey>) -> Self {
        Computation {
            computed,
            complete: true,
            from_cache: true,
            streamed: Streamed::default(),
            statistics: Vec::new(),
            layout,
            cache_key,
            walk_keys: None,
            resumed: false,
            computing: None,
        }
    }

    /// A result still being computed at change sequence `version`.
    fn still_computing(version: u64, layout: Vec<RangeId>) -> Self {
        let access = AccessView {
            kind: AccessView::COMPUTING,
            indexes: Vec::new(),
            reason: "the result is computed whole and took longer than a page may run; it \
                     is still being computed, and the next page continues with it"
                .into(),
        };
        let nothing = Computed::new(Vec::new(), Vec::new(), access);
        Computation {
            computing: Some(version),
            ..Computation::kept(Arc::new(nothing), layout, None)
        }
    }
}

/// Computes the result of `plan` for this page, or takes it from `cache`. `pipeline` is the
/// query's, with nothing pushed; `full_text` receives the corpus statistics of
/// `ORDER BY RANK FullTextScore(...)`, which `env` scores with.
pub(super) fn compute(
    plan: &Plan,
    snap: &Snapshot,
    (env, full_text): (&Env, &OnceCell<FullTextScores>),
    cache: &ResultCache,
    pipeline: Run,
    hooks: Hooks,
) -> Result<Computation> {
    let Snapshot {
        store, txn, def, ..
    } = *snap;
    // Documents per range, read once when a fan-out needs them (see `scope_counts`).
    let mut counts = None;
    let routed = if plan.q.from.is_some() {
        plan.routing.ranges(def)
    } else {
        Vec::new()
    };
    check_scoped_layout(plan)?;
    // A computed result continues over the ranges of its first page, which a split since
    // has divided: each is read whole again (see `Token::layout`), with its children's counts.
    let first_layout = match &plan.token {
        Some(t) if !plan.shape.paged_scan => layout_units(&routed, t.layout()),
        _ => None,
    };
    let ranges: Vec<&PkRange> = match &first_layout {
        Some(units) => {
            fold_children(store, txn, def, &mut counts, units)?;
            units.iter().map(|(unit, _)| unit).collect()
        }
        None => routed,
    };
    let layout: Vec<RangeId> = ranges.iter().map(|r| r.id).collect();
    let cache_key = if plan.shape.paged_scan {
        None
    } else {
        Some(CacheKey {
            container: def.rid,
            query: plan.cache_id,
            version: store.feed_head(txn, def)?,
            index_generation: plan.ready.generation,
            ranges: layout.clone(),
        })
    };
    // A page after one that returned while its result was still being computed takes the
    // result at the change sequence it was computed at, when it is done (or waits for it).
    if let (Some(version), Some(key)) =
        (plan.token.as_ref().and_then(|t| t.computing()), &cache_key)
    {
        let key = CacheKey {
            version,
            ..key.clone()
        };
        let kept = cache
            .get(&key)
            .or_else(|| cache.spilled(&key, (0, plan.max_items)).map(Arc::new));
        if let Some(computed) = kept {
            return Ok(Computation::kept(computed, layout, Some(key)));
        }
        let limit = env
            .budget
            .map_or(crate::query::eval::budget::PAGE_TIME_LIMIT, |b| {
                b.remaining()
            });
        match cache.computations.wait(&key, limit, hooks.cancel) {
            Some(Outcome::Ready(computed)) => {
                return Ok(Computation::kept(computed, layout, Some(key)));
            }
            Some(Outcome::Failed(e)) => return Err(e),
            Some(Outcome::Running) => {
                return Ok(Computation::still_computing(version, layout));
            }
            // Nothing here computes it (another process started it, or it was forgotten):
            // compute it afresh.
            None => {}
        }
    }
    // A later page takes the result from memory, or reads its window of it from disk
    // (computed by another process, or too large to hold).
    let kept = match (&cache_key, &plan.token) {
        (Some(key), Some(token)) => cache.get(key).or_else(|| {
            cache
                .spilled(key, (token.skip, plan.max_items))
                .map(Arc::new)
        }),
        _ => None,
    };
    if let Some(computed) = kept {
        return Ok(Computation::kept(computed, layout, cache_key));
    }
    let mut statistics = Vec::new();
    if rank::ranks_by_full_text(plan.q) {
        let (scores, reads) = rank::full_text_statistics(store, txn, def, plan.q, env, plan.root)?;
        let _ = full_text.set(scores);
        if plan.charges_work() {
            statistics = reads;
        }
    }
    let Result_ {
        computed,
        walked,
        streamed,
        walk_keys,
        resumed,
    } = match compute_result(
        plan,
        snap,
        env,
        (&ranges, &mut counts),
        (pipeline, &cache.between_pages),
        hooks,
    ) {
        Ok(result) => result,
        // A result that cannot be returned in part ran out of the page's time: it goes on
        // computing after the page returns, if it can.
        Err(e) if ran_out_computing(plan, env) => {
            return match (hooks.continue_after, &cache_key) {
                (Some(continue_after), Some(key)) if continue_after(key) => {
                    Ok(Computation::still_computing(key.version, layout))
                }
                _ => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    Ok(Computation {
        computed: Arc::new(computed),
        complete: !walked || plan.ordered_bound.is_some(),
        from_cache: false,
        streamed,
        statistics,
        layout,
        cache_key,
        walk_keys,
        resumed,
        computing: None,
    })
}

/// Whether the page stopped at its time (or row) limit while computing a result that
/// cannot be returned in part.
fn ran_out_computing(plan: &Plan, env: &Env) -> bool {
    !plan.shape.paged_scan && env.budget.and_then(|b| b.stopped()) == Some(Stop::OutOfTime)
}

/// A request scoped to one range can continue a computed result only on the range it was
/// computed on. After a split, a client that continues a parent's token on a child would
/// get the parent's remaining results, the sibling's among them, and the child's own
/// position in them is unknown: 400, so the query starts over rather than repeat or lose
/// results. (A streamed scan's token resumes at an item key, which a child continues
/// correctly, so it is not refused.)
fn check_scoped_layout(plan: &Plan) -> Result<()> {
    let (Some(scope), Some(token)) = (&plan.routing.scope, &plan.token) else {
        return Ok(());
    };
    let layout = token.layout();
    if plan.shape.paged_scan || layout.is_empty() || layout == [scope.id] {
        return Ok(());
    }
    let issued: Vec<String> = layout.iter().map(RangeId::to_string).collect();
    Err(Error::bad_request(format!(
        "the continuation token was issued on partition key range {} and can't continue on \
         range {}: the range split since; run the query on range {} again from the start",
        issued.join(", "),
        scope.id,
        scope.id
    )))
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

/// What [`compute_result`] found.
struct Result_ {
    /// The complete result (as far as the page needs it).
    computed: Computed,
    /// An ORDER BY walk found it.
    walked: bool,
    /// Where a streamed scan stopped.
    streamed: Streamed,
    /// Where each result of an exact walk stands in the index.
    walk_keys: Option<Vec<WalkAfter>>,
    /// The walk resumed after the previous page's last result.
    resumed: bool,
}

/// Runs the query over `ranges`: finds the items, feeds them through the pipeline range by
/// range and returns the result (see [`Result_`]).
fn compute_result(
    plan: &Plan,
    snap: &Snapshot,
    env: &Env,
    (ranges, counts): (&[&PkRange], &mut Option<RangeCounts>),
    (mut pipeline, pages): (Run, &BetweenPages),
    hooks: Hooks,
) -> Result<Result_> {
    let (q, def) = (plan.q, snap.def);
    let inner = inner_from(plan, snap, env);
    if q.from.is_none() {
        // `SELECT 1`: one evaluation, no documents.
        for row in rows_of(q, None, &[], env) {
            pipeline.push(row);
        }
    }
    let spans = plan.routing.spans(&def.partition_key);
    let byte_spans = crate::store::index::normalize_spans(
        spans
            .iter()
            .map(|(a, b)| (a.0.clone(), b.0.clone()))
            .collect(),
    );
    let routed = Routed {
        ranges,
        spans: &byte_spans,
    };
    // What an earlier page of a streamed query left, valid for this snapshot only.
    let page_key = if plan.shape.paged_scan {
        Some(PageKey {
            container: def.rid,
            query: plan.cache_id,
            version: snap.store.feed_head(snap.txn, def)?,
            index_generation: plan.ready.generation,
        })
    } else {
        None
    };
    let kept = page_key.as_ref().map(|key| (pages, key));
    let mut found = find_items(plan, snap, env, routed, &pipeline, (inner.is_some(), kept))?;
    // Only for `FROM c` (`Plan::probes_are_the_filter`): never over a subquery.
    if found.filter_answered {
        pipeline.filter_answered();
    }
    let (presorted_results, walked_parts, walk_keys) =
        match presorted_results(plan, snap, ranges, &pipeline, &mut found)? {
            Some(p) => (Some(p.results), Some(p.parts), p.keys),
            None => (None, None, None),
        };
    let resumed = Resumed::of(plan, def)?;
    let mut scan = Scan::new(
        Reading {
            q,
            env,
            root: plan.root,
            extractor: plan.scan_extractor(found.filter_answered),
            narrowing: &plan.narrowing,
            keys: &plan.key_reader,
            stored_star: plan.shape.stored_star,
            paged_scan: plan.shape.paged_scan,
            epk_len: def.partition_key.epk_len(),
            now: snap.now,
            cancel: hooks.cancel,
        },
        PageBounds {
            cap: if plan.shape.paged_scan {
                plan.max_items.min(plan.top_left)
            } else {
                usize::MAX
            },
            top_left: plan.top_left,
            early_stop: plan.early_stop,
            resume_key: resumed.key.as_deref(),
            within: plan.token.as_ref().map_or(0, |t| t.within),
        },
        Loads {
            served: plan.served,
            index_only: plan.index_only,
        },
        pipeline,
        inner,
    );
    let Scanned {
        parts: mut per_range,
        logical_epks,
    } = scan_ranges(
        plan,
        snap,
        (ranges, &spans),
        (&found, walked_parts),
        (&mut scan, kept),
        &resumed,
        counts,
        hooks,
    )?;
    let (results, streamed) = match presorted_results {
        Some(results) => (results, Streamed::default()),
        None => {
            let (results, stopped, result_epks) = scan.finish();
            // The first k of an ORDER BY with TOP/LIMIT (however they were loaded): each
            // range is credited only with its documents among them.
            if let Some(epks) = result_epks {
                produced_by_range((&mut per_range, ranges), &logical_epks, &epks);
            }
            (results, stopped)
        }
    };
    if !plan.shape.paged_scan {
        // A computed result is whole or nothing: one the budget cut short anywhere (in the
        // scan, or projecting and grouping after it) fails.
        check_whole(env)?;
    }
    let computed = Computed::new(documents(results)?, per_range, found.access);
    Ok(Result_ {
        computed,
        walked: found.walked,
        streamed,
        walk_keys,
        resumed: found.resumed,
    })
}

/// Fails when the page's budget ran out (or it was cancelled) while a result that cannot
/// be returned in part was computed.
fn check_whole(env: &Env) -> Result<()> {
    match env.budget.and_then(|b| b.stopped().map(|stop| (b, stop))) {
        None => Ok(()),
        Some((_, Stop::Cancelled)) => Err(Error::cancelled("the query was cancelled")),
        Some((budget, Stop::OutOfTime)) => Err(super::limits::computed_timeout(budget)),
    }
}

/// A top-level `FROM (subquery) alias`: the subquery's own pipeline, fed the container's
/// items.
fn inner_from<'q, 'e>(
    plan: &Plan<'q>,
    snap: &Snapshot,
    env: &'e Env<'e>,
) -> Option<InnerFrom<'q, 'e>> {
    match plan.q.from.as_ref().map(|f| &f.kind) {
        Some(FromKind::Subquery { query, alias }) => {
            let mut run = Run::new(query, env);
            let inner_root = doc_alias(query).unwrap_or_default();
            run.break_ties_by_position(reverse_scan(query, snap.def, &inner_root));
            Some(InnerFrom {
                query,
                alias,
                run,
                item_by_item: works_item_by_item(query),
            })
        }
        _ => None,
    }
}

/// The results of an exact ordered walk, and what each routed range contributed to them.
struct Presorted {
    results: Vec<Output>,
    parts: Vec<WalkedPart>,
    /// Per result, where it stands in the index, when each walked item made one result and
    /// no TOP or OFFSET cut them.
    keys: Option<Vec<WalkAfter>>,
}

/// An exact ordered walk read its items already, in result order: the results it makes,
/// and what each routed range contributed. Only the items inside OFFSET/LIMIT and TOP are
/// materialized, first: reading the partition keys next then finds the records in the CPU
/// cache. `None` for results that go through the scan.
fn presorted_results(
    plan: &Plan,
    snap: &Snapshot,
    ranges: &[&PkRange],
    pipeline: &Run,
    found: &mut Found,
) -> Result<Option<Presorted>> {
    let Some((items, _)) = &found.presorted else {
        return Ok(None);
    };
    // Which walked items made a result, where not all did (undefined `SELECT VALUE`).
    let mut made_results: Option<Vec<bool>> = None;
    let results = if plan.shape.stored_star {
        items[pipeline.window(items.len())]
            .iter()
            .map(stored)
            .collect()
    } else if plan.shape.value_projection {
        // OFFSET/LIMIT and TOP count results, which a projection always makes; an
        // undefined `SELECT VALUE` makes none, so then every item is projected first.
        let mut results = match found.projected.take() {
            Some(results) => results,
            None => project_walked(pipeline, &plan.extractor, items)?,
        };
        let made: Vec<bool> = results.iter().map(|r| !is_undefined(r)).collect();
        if made.contains(&false) {
            made_results = Some(made);
        }
        results.retain(|r| !is_undefined(r));
        let window = pipeline.window(results.len());
        results.truncate(window.end);
        results.drain(..window.start);
        results
    } else {
        project_walked(
            pipeline,
            &plan.extractor,
            &items[pipeline.window(items.len())],
        )?
    };
    // The walk's items give each range's documents and logical partitions, and its time is
    // the ranges' load time, by their share; the ranges read nothing more.
    let parts = walked_by_range(
        items,
        made_results.as_deref(),
        ranges,
        snap.def.partition_key.epk_len(),
        &plan.key_reader,
    )?;
    let uncut = plan.q.select.top.is_none() && plan.q.offset_limit.is_none();
    let keys = (uncut && made_results.is_none()).then(|| {
        let range_ends: Vec<&[u8]> = ranges.iter().map(|r| r.max_exclusive.as_bytes()).collect();
        let ties = TieOrder {
            range_ends: &range_ends,
            epk_len: snap.def.partition_key.epk_len(),
            reverse_scan: plan.reverse_ties,
        };
        items
            .iter()
            .map(|w| WalkAfter {
                value: w.value.to_vec(),
                tie: ties.key(w),
            })
            .collect()
    });
    Ok(Some(Presorted {
        results,
        parts,
        keys,
    }))
}

/// Where this page of a streamed scan resumes, from the previous page's token.
struct Resumed {
    /// The item key the scan continues at, for ranges read in key order.
    key: Option<Vec<u8>>,
    /// The EPK of that item: ranges before it are finished.
    epk: Option<Vec<u8>>,
    /// Ranges read in document order that continue.
    ordered: Vec<OrderedSpan>,
}

impl Resumed {
    fn of(plan: &Plan, def: &crate::store::catalog::ContainerDef) -> Result<Resumed> {
        let token = match &plan.token {
            Some(t) if plan.shape.paged_scan => t,
            _ => {
                return Ok(Resumed {
                    key: None,
                    epk: None,
                    ordered: Vec::new(),
                });
            }
        };
        let key = token.resume_key()?;
        let epk_len = def.partition_key.epk_len();
        Ok(Resumed {
            epk: key
                .as_ref()
                .and_then(|k| k.get(4..4 + epk_len))
                .map(<[u8]>::to_vec),
            key,
            ordered: token.ordered_spans()?,
        })
    }
}

impl Resumed {
    /// Where a resumed scan stands in `range`: `None` if an earlier page finished it, else
    /// whether an earlier page entered it and, for a range it read in document order, the
    /// document number to continue at and the rows of it delivered. A range read in
    /// document order that a page stopped in continues that order, and so does each of its
    /// children if it split since (see `Token::ordered`).
    fn place(&self, range: &PkRange) -> Option<(bool, Option<(u64, usize)>)> {
        let doc = self
            .ordered
            .iter()
            .find(|s| s.min <= range.min_inclusive && range.max_exclusive <= s.max)
            .map(|s| (s.from, s.within));
        match (&self.epk, doc) {
            (_, Some(_)) => Some((true, doc)),
            (Some(e), None) if range.max_exclusive.as_bytes() <= e.as_slice() => None,
            (Some(e), None) => Some((range.contains(e), None)),
            (None, None) => Some((false, None)),
        }
    }
}

/// A range's tally from an exact ordered walk's items in it: its documents, the bytes they
/// hold and those that made results, its logical partitions, and its share of the walk's
/// time (of `walked` items in `walk_ns`).
fn tally_walked(tally: &mut RangeTally, part: &mut WalkedPart, walked: usize, walk_ns: u128) {
    let m = &mut tally.metrics;
    m.output_document_count = part.output;
    m.index_hit_document_count = part.retrieved;
    m.retrieved_document_count = part.retrieved;
    m.retrieved_document_size = part.bytes;
    tally.logical = std::mem::take(&mut part.logical);
    tally.load_ns = walk_ns * u128::from(part.retrieved) / walked.max(1) as u128;
}

/// What scanning the routed ranges gave: each scanned range's part and, per range, the EPK
/// of each of its logical partitions.
struct Scanned<'f> {
    parts: Vec<RangePart>,
    logical_epks: Vec<Vec<&'f [u8]>>,
}

/// Feeds each routed range's items (those not finished on earlier pages) to `scan`, until
/// the page is full.
#[allow(clippy::too_many_arguments)]
fn scan_ranges<'f>(
    plan: &'f Plan,
    snap: &Snapshot<'f>,
    (ranges, spans): (&[&PkRange], &[(Epk, Epk)]),
    (found, mut walked_parts): (&'f Found<'f>, Option<Vec<WalkedPart>>),
    (scan, kept): (&mut Scan, Option<(&BetweenPages, &PageKey)>),
    resumed: &Resumed,
    counts: &mut Option<RangeCounts>,
    hooks: Hooks,
) -> Result<Scanned<'f>> {
    let Snapshot {
        store, txn, def, ..
    } = *snap;
    let mut per_range = Vec::with_capacity(ranges.len());
    let mut logical_epks: Vec<Vec<&[u8]>> = Vec::with_capacity(ranges.len());
    // Watches the candidates' reads over every range: when a sampled read goes to the
    // disk, the candidates after it are read ahead until the scan ends (see
    // `store::prefetch`).
    let unread = found.candidates.as_deref().map_or(0, |c| c.len());
    let watch = Rc::new(RefCell::new(ColdWatch::new(store, unread)));
    let split = split_candidates(plan, snap, found, resumed).map(Rc::new);
    let mut spans_of_range = Vec::new();
    let (counted, read_to) = (SpanCursor::default(), SpanCursor::default());
    for (ri, range) in ranges.iter().enumerate() {
        if scan.resume.is_some() {
            break;
        }
        let Some((visited_before, resume_doc)) = resumed.place(range) else {
            continue;
        };
        let mut tally = RangeTally::default();
        if let (Some(parts), Some((items, walk_ns))) = (&mut walked_parts, &found.presorted) {
            tally_walked(&mut tally, &mut parts[ri], items.len(), *walk_ns);
        }
        let scanned: &[(Epk, Epk)] = if walked_parts.is_some() { &[] } else { spans };
        key_spans(def, range, scanned, &mut spans_of_range);
        let key_spans = &spans_of_range;
        // A resumed range keeps the order its first page took; one item needs none.
        let document_order = !key_spans.is_empty()
            && plan.q.order_by.is_empty()
            && if visited_before {
                resume_doc.is_some()
            } else if let Some(c) = found.candidates.as_deref() {
                let n = candidates_in(c, key_spans, &counted);
                n > 1 && n as u64 <= DOCUMENT_ORDER_MAX_ITEMS
            } else {
                range_items(store, txn, def, (range.id, ranges.len()), counts)?
                    <= DOCUMENT_ORDER_MAX_ITEMS
            };
        let order = if document_order {
            RangeOrder::Document { from: resume_doc }
        } else {
            RangeOrder::Key {
                from: resumed.key.as_deref(),
            }
        };
        let source = ItemSource {
            store,
            txn,
            def,
            candidates: found.candidates.as_deref(),
            extractor: plan.scan_extractor(found.filter_answered),
            kept: kept.map(|(pages, key)| (pages, key, range.id)),
            watch: watch.clone(),
            read_to: &read_to,
            split: split.clone(),
        };
        scan.range(
            (range, per_range.len()),
            key_spans,
            order,
            &source,
            &mut tally,
        )?;
        let RangeTally {
            metrics: mut m,
            logical,
            logical_epks: epks,
            load_ns,
            exec_ns,
            ..
        } = tally;
        logical_epks.push(epks);
        model_loads(plan, snap, (range, found), counts, &mut m)?;
        m.document_load_time_in_ms = load_ns as f64 / 1e6;
        m.query_engine_execution_time_in_ms = exec_ns as f64 / 1e6;
        if let Some(p) = hooks.progress {
            (p.0)(&RangeProgress {
                range: range.id.to_string(),
                retrieved_document_count: m.retrieved_document_count,
                matched: m.index_hit_document_count,
            });
        }
        per_range.push(RangePart {
            range: RangeLabel::of(def, range),
            metrics: m,
            logical,
            visited_before,
        });
    }
    // Ranges with few documents share a clock read (see `timing`): their times are known
    // once every range is read.
    for &(part, load, exec) in scan.range_times() {
        if let Some(p) = per_range.get_mut(part) {
            p.metrics.document_load_time_in_ms += load as f64 / 1e6;
            p.metrics.query_engine_execution_time_in_ms += exec as f64 / 1e6;
        }
    }
    Ok(Scanned {
        parts: per_range,
        logical_epks,
    })
}

/// The candidates a helper thread reads while this page reads the first ones (see
/// `store::split_read`): from where the page resumes to as many as it may return, when the
/// index lookup has not read them already.
fn split_candidates<'f>(
    plan: &Plan,
    snap: &Snapshot<'f>,
    found: &'f Found<'f>,
    resumed: &Resumed,
) -> Option<SplitCandidates<'f>> {
    let c = found.candidates.as_deref()?;
    let start = resumed
        .key
        .as_deref()
        .map_or(0, |k| c.partition_point(|x| x.key.as_slice() < k));
    let cap = if plan.shape.paged_scan {
        plan.max_items.min(plan.top_left)
    } else {
        usize::MAX
    };
    let region = c.get(start..c.len().min(start.saturating_add(cap)))?;
    if region.first()?.record.is_some() {
        return None;
    }
    let read = snap
        .store
        .split_read(snap.txn, region.iter().map(|x| x.key.as_slice()))?;
    Some(SplitCandidates { read, start })
}

/// Sets what `range` retrieved to what the service would load, where that differs from what
/// was read: an ORDER BY walk reads only the first entries, while the service streams each
/// range from its index, loading the documents in scope (or those matching a filter the
/// walk answers), at most TOP/LIMIT k of them.
fn model_loads(
    plan: &Plan,
    snap: &Snapshot,
    (range, found): (&PkRange, &Found),
    counts: &mut Option<RangeCounts>,
    m: &mut crate::query::run::result::QueryMetrics,
) -> Result<()> {
    if found.walked {
        let (n, bytes) =
            scope_counts(snap.store, snap.txn, snap.def, &plan.routing, range, counts)?;
        let matched = found
            .matching
            .as_ref()
            .and_then(|c| c.iter().find(|(id, _)| *id == range.id))
            .map(|(_, c)| *c);
        match matched {
            // A filtered walk loads the matching documents (sized as the range's average:
            // the walk did not read the others).
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
    if let Some(k) = plan.ordered_bound {
        let kept = m.retrieved_document_count.min(k as u64);
        if let Some(avg) = m
            .retrieved_document_size
            .checked_div(m.retrieved_document_count)
        {
            m.retrieved_document_size = avg * kept;
        }
        m.retrieved_document_count = kept;
    }
    Ok(())
}

/// Results as JSON text: a stored item is returned as stored (its bytes are the compact
/// JSON it serializes to), so no value is built for it. Undefined is no result: it is
/// dropped before paging so every page advances.
fn documents(results: Vec<Output>) -> Result<Vec<Document>> {
    results
        .into_iter()
        .filter_map(|r| match r {
            Output::Stored(bytes) => Some(Ok(Document::from_stored(bytes))),
            Output::Value(v) => Document::from_result(&v).transpose(),
        })
        .collect()
}
