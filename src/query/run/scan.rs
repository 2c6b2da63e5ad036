//! The streamed part of a page: the items of a key span go through the query one by one.
//!
//! [`Scan`] holds what a page has produced so far (its rows and bytes, the matches that
//! count toward TOP, where the next page resumes) and feeds each item's rows to the
//! pipeline; [`RangeTally`] holds what one physical partition loaded and matched, and its
//! logical partitions, as the service would report them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::between_pages::{BetweenPages, KeptItem, Order, PageKey};
use super::candidates::{Candidate, SpanCursor};
use super::limits;
use super::partition_key::KeyReader;
use super::result::{MAX_PAGE_BYTES, QueryMetrics};
use super::token::Resume;
use crate::error::{Error, Result};
use crate::query::eval::budget::Stop;
use crate::query::eval::env::Env;
use crate::query::eval::value::Val;
use crate::query::read::extractor::Extractor;
use crate::query::read::prefetch::Lookahead;
use crate::query::run::pipeline::{Output, Run, expand_joins, rows_of};
use crate::query::run::timing::PhaseClock;
use crate::query::syntax::ast::{Expr, Query};
use crate::store::catalog::ContainerDef;
use crate::store::epk::Epk;
use crate::store::index::FoldHasher;
use crate::store::item::Record;
use crate::store::keys::{self, RangeId};
use crate::store::prefetch::ColdWatch;
use crate::store::ranges::PkRange;
use crate::store::read::OrderedLookup;
use crate::store::readahead::ReadAhead;
use crate::store::split_read::SplitRead;
use crate::store::{RoTxn, Store};

/// An item as the scan reads it: key and decoded record (once, for the loop and its
/// prefetch hint alike).
pub(super) type Entry<'a> = (&'a [u8], Record<'a>);

/// A top-level `FROM (subquery) alias` being evaluated over the container.
pub(super) struct InnerFrom<'q, 'e> {
    pub(super) query: &'q Query,
    pub(super) alias: &'q String,
    pub(super) run: Run<'q, 'e>,
    /// The subquery works item by item ([`crate::query::run::pipeline::works_item_by_item`]): each
    /// of its results goes through the outer query as it is read.
    pub(super) item_by_item: bool,
}

/// Where a page starts and where it must stop.
pub(super) struct PageBounds<'a> {
    /// Rows the page may hold: `max_items`, or what TOP leaves if less (unbounded when the
    /// query does not stream, since its result is computed whole and paged after).
    pub(super) cap: usize,
    /// Results TOP still allows (unbounded without TOP).
    pub(super) top_left: usize,
    /// TOP N without ORDER BY and the rest stops after N+1 items made results, as the
    /// service loads N+1 documents for it.
    pub(super) early_stop: Option<u64>,
    /// The item the previous page stopped in, and how many of its rows it delivered, for a
    /// range read in key order (one read in document order resumes by document number: see
    /// [`Scan::span`]).
    pub(super) resume_key: Option<&'a [u8]>,
    pub(super) within: usize,
}

/// What the service would load, which the retrieved counts report.
pub(super) struct Loads {
    /// The filter is index-served: only matching items are loaded.
    pub(super) served: bool,
    /// The index alone answers the query (a COUNT of a constant): nothing is loaded.
    pub(super) index_only: bool,
}

/// The query's side of a scan: how items become rows, read-only for the whole page.
pub(super) struct Reading<'a, 'q, 'e> {
    pub(super) q: &'q Query,
    pub(super) env: &'e Env<'e>,
    /// The FROM alias, which the narrowing conjuncts read the item under.
    pub(super) root: &'a str,
    pub(super) extractor: &'a Extractor,
    /// Conjuncts the index narrows with before the item is loaded (see `run`).
    pub(super) narrowing: &'a [&'q Expr],
    pub(super) keys: &'a KeyReader<'a>,
    /// `SELECT *` over whole items: results are the stored bytes.
    pub(super) stored_star: bool,
    /// The query streams by resuming its scan, so its pages end by count and by size.
    pub(super) paged_scan: bool,
    pub(super) epk_len: usize,
    pub(super) now: i64,
    pub(super) cancel: &'a AtomicBool,
}

/// One page's streamed state.
pub(super) struct Scan<'a, 'q, 'e> {
    reading: Reading<'a, 'q, 'e>,
    bounds: PageBounds<'a>,
    loads: Loads,
    pipeline: Run<'q, 'e>,
    inner: Option<InnerFrom<'q, 'e>>,
    /// The one binding of `FROM c` without JOINs, reused for every item.
    single_row: Option<Vec<(String, Val)>>,
    /// Rows on the page so far, and their JSON size (see [`MAX_PAGE_BYTES`]).
    page_rows: usize,
    page_bytes: usize,
    /// Items that produced a result, over every range so far.
    total_results: u64,
    /// Ranges entered so far: the place of the current one among the routed ranges, which
    /// come in EPK order (ORDER BY ties go by it: see [`Run::break_ties_by_position`]).
    ranges_entered: usize,
    /// For the first k of an ORDER BY with TOP/LIMIT: the EPKs of the logical partitions
    /// the items fed came from, `epk_len` bytes each, a new one whenever it changes. An
    /// item's origin (see [`Run::set_position`]) is its EPK's place here, so the results say
    /// which range and logical partition produced them.
    origins: Option<Vec<u8>>,
    /// Set when the page ends inside the scan: where the next page starts.
    pub(super) resume: Option<Resume>,
    /// Items this page went through completely: a page that runs out of time before the
    /// first fails instead of returning a continuation that would never advance.
    items_done: usize,
    /// Times the scan's documents, range by range.
    clock: PhaseClock,
}

/// Where a streamed page stopped.
#[derive(Default)]
pub(super) struct Streamed {
    /// Where the next page starts, if the page ended inside the scan.
    pub(super) resume: Option<Resume>,
    /// Rows the page holds.
    pub(super) rows: usize,
}

/// One physical partition's part as the scan counts it.
#[derive(Default)]
pub(super) struct RangeTally<'t> {
    pub(super) metrics: QueryMetrics,
    /// Key values of the logical partitions that produced results.
    pub(super) logical: Vec<Value>,
    /// The EPK of each of `logical`.
    pub(super) logical_epks: Vec<&'t [u8]>,
    last_logical: Option<&'t [u8]>,
    /// Per EPK in the first `indexed` of `logical_epks`, the first of `logical` with it:
    /// items read through an index come in no key order, and a page of them can name a
    /// thousand partitions. An EPK is a hash already, so it is folded rather than hashed
    /// again. Made only when a range names more than a few partitions out of key order (see
    /// [`RangeTally::first_with`]).
    first_with_epk: HashMap<&'t [u8], usize, BuildHasherDefault<FoldHasher>>,
    indexed: usize,
    /// The greatest EPK that produced a logical partition.
    max_epk: Option<&'t [u8]>,
    /// The range's share of an ordered walk's time (`compute::tally_walked`); the time
    /// the scan itself takes is added once every range is read ([`Scan::range_times`]).
    pub(super) load_ns: u128,
    pub(super) exec_ns: u128,
}

/// The order a range's items go through the query in (see `DOCUMENT_ORDER_MAX_ITEMS`), and
/// where an earlier page left it.
pub(super) enum RangeOrder<'a> {
    /// Key order, from this item key on.
    Key { from: Option<&'a [u8]> },
    /// Document order, from this document number, of which this many rows were delivered.
    Document { from: Option<(u64, usize)> },
}

/// Where a range's items are read from: an index lookup's candidates, or the store.
pub(super) struct ItemSource<'a, 't> {
    pub(super) store: &'a Store,
    pub(super) txn: &'t RoTxn<'t>,
    pub(super) def: &'a ContainerDef,
    pub(super) candidates: Option<&'t [Candidate<'t>]>,
    pub(super) extractor: &'t Extractor,
    /// Where a streamed query keeps this range's document order between pages (see
    /// [`super::between_pages`]), and the range's id.
    pub(super) kept: Option<(&'a BetweenPages, &'a PageKey, RangeId)>,
    /// Watches the reads of the candidates over every range (see `store::prefetch`).
    pub(super) watch: Rc<RefCell<ColdWatch>>,
    /// Where the candidates of the spans read so far, over every range, end.
    pub(super) read_to: &'a SpanCursor,
    /// Candidates a helper thread reads from the last back (see `store::split_read`).
    pub(super) split: Option<Rc<SplitCandidates<'t>>>,
}

/// The candidates from `start` on that a helper thread reads while the query reads the
/// ones before (see `store::split_read`): positions in the read are candidates' less
/// `start`.
pub(super) struct SplitCandidates<'t> {
    pub(super) read: SplitRead<'t>,
    pub(super) start: usize,
}

impl<'t> SplitCandidates<'t> {
    /// The record of candidate `at` if the helper read it (`Some(None)`: no such item).
    fn take(&self, at: usize) -> Option<Option<&'t [u8]>> {
        self.read.take(at.checked_sub(self.start)?)
    }
}

/// What feeding one item's rows to the pipeline did.
struct Fed {
    /// A row of the item passed the filter (the service loads such an item).
    matched: bool,
    /// A row of the item made a result (one projecting to undefined makes none).
    hit: bool,
    /// The item's first row did not fit on the page: the next page loads (and charges) it.
    deferred: bool,
    /// The page's budget ran out while the item's rows were evaluated: the page ends at
    /// the first row not delivered (see [`Scan::out_of_budget`]).
    interrupted: bool,
}

impl<'a, 'q, 'e> Scan<'a, 'q, 'e> {
    pub(super) fn new(
        reading: Reading<'a, 'q, 'e>,
        bounds: PageBounds<'a>,
        loads: Loads,
        pipeline: Run<'q, 'e>,
        inner: Option<InnerFrom<'q, 'e>>,
    ) -> Self {
        let single_row = match reading.q.from.as_ref().map(|f| &f.kind) {
            Some(crate::query::syntax::ast::FromKind::Container { path, .. })
                if path.is_empty() && reading.q.joins.is_empty() && inner.is_none() =>
            {
                crate::query::syntax::names::from_alias(reading.q)
                    .map(|alias| vec![(alias.to_string(), Val::Undefined)])
            }
            _ => None,
        };
        let origins = (inner.is_none() && pipeline.keeps_first_k_by_position()).then(Vec::new);
        Scan {
            reading,
            bounds,
            loads,
            pipeline,
            inner,
            single_row,
            page_rows: 0,
            page_bytes: 0,
            total_results: 0,
            ranges_entered: 0,
            origins,
            resume: None,
            items_done: 0,
            clock: PhaseClock::start(),
        }
    }

    /// Whether the page must end here because it ran out of its budget (see
    /// [`crate::query::eval::budget`]); an error when it was cancelled, or when the
    /// page cannot return what it has done: a computed result is whole or nothing, and a
    /// page that finished no item would not advance.
    fn out_of_budget(&self) -> Result<bool> {
        let Some(budget) = self.reading.env.budget else {
            return Ok(false);
        };
        match budget.stopped() {
            None => Ok(false),
            Some(Stop::Cancelled) => Err(Error::cancelled("the query was cancelled")),
            Some(Stop::OutOfTime) if !self.reading.paged_scan => {
                Err(limits::computed_timeout(budget))
            }
            Some(Stop::OutOfTime) if self.items_done == 0 && self.page_rows == 0 => {
                Err(limits::item_timeout(budget))
            }
            Some(Stop::OutOfTime) => Ok(true),
        }
    }

    /// Fails when the results a computed query kept so far pass the memory budget (a
    /// streamed page holds one page, which its own limits bound).
    fn check_memory(&self) -> Result<()> {
        let Some(budget) = self.reading.env.budget.filter(|_| !self.reading.paged_scan) else {
            return Ok(());
        };
        let held =
            self.pipeline.held_bytes() + self.inner.as_ref().map_or(0, |i| i.run.held_bytes());
        if held > budget.memory_limit() {
            return Err(limits::over_memory(budget));
        }
        Ok(())
    }

    /// The origin of the item at key `k` (see [`Scan::origins`]).
    fn origin(&mut self, k: &[u8]) -> usize {
        let len = self.reading.epk_len;
        let Some(origins) = self.origins.as_mut().filter(|_| len > 0) else {
            return 0;
        };
        let epk = k.get(4..4 + len).unwrap_or_default();
        if origins.len() < len || &origins[origins.len() - len..] != epk {
            origins.extend_from_slice(epk);
            origins.resize(origins.len().next_multiple_of(len), 0);
        }
        origins.len() / len - 1
    }

    /// Runs one range's items through the query, from its key spans (see [`key_spans`]) in
    /// the given order, until they end or the page does; a page that ends here records the
    /// range's bounds in its resume point. `part` names the range's time among
    /// [`Scan::range_times`].
    pub(super) fn range<'t>(
        &mut self,
        (range, part): (&PkRange, usize),
        spans: &[(Vec<u8>, Vec<u8>)],
        order: RangeOrder,
        source: &ItemSource<'_, 't>,
        tally: &mut RangeTally<'t>,
    ) -> Result<()> {
        self.ranges_entered += 1;
        if let RangeOrder::Document { from: Some(from) } = order
            && let Some(kept) = source.kept_order()
        {
            // The page that entered the range read and sorted it: go on from there.
            let first = kept.partition_point(|item| item.number < from.0);
            tally.expect_items(kept.len() - first);
            let items = kept[first..]
                .iter()
                .filter_map(|item| source.kept_entry(item));
            self.span(items, tally, Some(from))?;
        } else {
            self.read_range(spans, order, source, tally)?;
        }
        self.clock.lap(part);
        if let Some(resume) = &mut self.resume
            && resume.range.is_none()
        {
            resume.range = Some((range.min_inclusive.clone(), range.max_exclusive.clone()));
        }
        Ok(())
    }

    /// Reads the range's items in the key spans: in key order from the resume key, or, in
    /// document order, every span's items gathered and sorted. A page that stops inside a
    /// range it sorted keeps the order for the next one.
    fn read_range<'t>(
        &mut self,
        spans: &[(Vec<u8>, Vec<u8>)],
        order: RangeOrder,
        source: &ItemSource<'_, 't>,
        tally: &mut RangeTally<'t>,
    ) -> Result<()> {
        let mut gathered: Vec<Entry> = Vec::new();
        for (start, end) in spans {
            let start = match order {
                RangeOrder::Key { from: Some(key) } if key > start.as_slice() => key,
                _ => start.as_slice(),
            };
            if start >= end.as_slice() {
                continue;
            }
            match (span_items(source, (start, end))?, &order) {
                (Some(items), RangeOrder::Document { .. }) => {
                    for entry in items {
                        gathered.push(entry?);
                    }
                }
                (Some(items), RangeOrder::Key { .. }) => self.span(items, tally, None)?,
                (None, _) => {}
            }
            if self.resume.is_some() {
                break;
            }
        }
        if let RangeOrder::Document { from } = order
            && !gathered.is_empty()
        {
            gathered.sort_unstable_by_key(|(_, record)| record.header.doc_number);
            // Resume at the item the previous page stopped in or before, or after it if it
            // is gone.
            let from = from.unwrap_or((0, 0));
            let first = gathered.partition_point(|(_, r)| r.header.doc_number < from.0);
            tally.expect_items(gathered.len() - first);
            self.span(gathered[first..].iter().copied().map(Ok), tally, Some(from))?;
            if self.resume.is_some() {
                source.keep_order(&gathered);
            }
        }
        Ok(())
    }

    /// One loop over the items, since each step (where the page resumes, its budget and
    /// bounds, loading, feeding, counting what the service would load) reads and updates
    /// the same page state.
    ///
    /// `document_order`: the items come in document order (see `DOCUMENT_ORDER_MAX_ITEMS`),
    /// which the continuation then records, starting at the given document number, of which
    /// the given number of rows went out on an earlier page. Otherwise they come in key order,
    /// from the item `bounds.resume_key` names.
    fn span<'t, 'r>(
        &mut self,
        items: impl Iterator<Item = Result<(&'t [u8], Record<'r>)>>,
        tally: &mut RangeTally<'t>,
        document_order: Option<(u64, usize)>,
    ) -> Result<()> {
        for entry in items {
            if self.reading.cancel.load(Ordering::Relaxed) {
                return Err(Error::cancelled("the query was cancelled"));
            }
            if self
                .bounds
                .early_stop
                .is_some_and(|n| self.total_results >= n)
            {
                break;
            }
            let (k, record) = entry?;
            let doc = document_order.map(|_| record.header.doc_number);
            // The item an earlier page stopped in: its first rows were delivered.
            let skip_rows = match (document_order, self.bounds.resume_key) {
                (Some((from, within)), _) if from == record.header.doc_number => within,
                (None, Some(rk)) if rk == k => self.bounds.within,
                _ => 0,
            };
            let charged_before = skip_rows > 0;
            if self
                .reading
                .env
                .budget
                .is_some_and(|b| b.between_items().is_some())
                && self.out_of_budget()?
            {
                // Out of time: the page ends before this item, as a full page does.
                self.resume = Some(Resume::at(k, skip_rows, doc));
                break;
            }
            if self.page_rows >= self.bounds.cap {
                if self.bounds.cap == self.bounds.top_left && !self.loads.index_only {
                    // TOP is satisfied: the service loads one document more (N+1).
                    tally.metrics.retrieved_document_count += 1;
                    tally.metrics.retrieved_document_size += record.json.len() as u64;
                }
                // The page is full before this item: the next page starts with it (past the
                // rows of it an earlier page delivered).
                self.resume = Some(Resume::at(k, skip_rows, doc));
                break;
            }
            if record.header.is_expired(self.reading.now) {
                continue;
            }
            let value = self
                .reading
                .extractor
                .extract_stored(record.json, record.members.as_ref())
                .map_err(|e| Error::internal(format!("corrupt item: {e}")))?;
            self.clock.loaded();
            let loaded = self.reading.narrowing.is_empty() || {
                let row = [(self.reading.root.to_string(), value.clone())];
                let env = self.reading.env;
                self.reading
                    .narrowing
                    .iter()
                    .all(|c| env.eval(c, &row).is_true())
            };
            // The item's position orders ties of the query it feeds; an outer query over
            // `FROM (subquery)` keeps the order the subquery's results come in.
            let place = self.ranges_entered.saturating_sub(1);
            let document = record.header.doc_number;
            match self.inner.as_mut() {
                Some(inner) => inner.run.set_position(place, document, 0),
                None => {
                    let origin = self.origin(k);
                    self.pipeline.set_position(place, document, origin)
                }
            }
            let fed = self.feed((k, doc), record.json, value, skip_rows, &mut tally.metrics);
            self.clock.done();
            if fed.interrupted {
                // The budget ran out inside this item: what it did is undone, and it fails
                // the page if it cannot end here.
                self.out_of_budget()?;
            }
            self.check_memory()?;
            if fed.deferred {
                break;
            }
            self.items_done += 1;
            let counted = if self.loads.served {
                fed.matched
            } else {
                loaded
            };
            if !self.loads.index_only && !charged_before && counted {
                tally.metrics.retrieved_document_count += 1;
                tally.metrics.retrieved_document_size += record.json.len() as u64;
            }
            if fed.matched {
                tally.metrics.index_hit_document_count += 1;
            }
            if fed.hit {
                self.total_results += 1;
                tally.produced(k, &record, self.reading.epk_len, self.reading.keys)?;
            }
            if self.resume.is_some() {
                break;
            }
        }
        Ok(())
    }

    /// Feeds the rows of the item at `k` (document number `number` in a range read in
    /// document order; its stored `json`, read as `doc`) to the query, after the first
    /// `skip_rows` (delivered by the previous page), until the page is full.
    fn feed(
        &mut self,
        (k, number): (&[u8], Option<u64>),
        json: &[u8],
        mut doc: Val,
        skip_rows: usize,
        metrics: &mut QueryMetrics,
    ) -> Fed {
        let (q, env, stored_star) = (self.reading.q, self.reading.env, self.reading.stored_star);
        let mut fed = Fed {
            matched: false,
            hit: false,
            deferred: false,
            interrupted: false,
        };
        if self.inner.is_some() {
            self.feed_inner(&doc, &mut fed, metrics);
        } else if let Some(row) = self.single_row.as_mut() {
            // `FROM c` without JOINs: the item is the row's only binding.
            if skip_rows > 0 {
                // Its one row went out on the previous page.
            } else if self.page_rows >= self.bounds.cap {
                self.resume = Some(Resume::at(k, 0, number));
            } else {
                row[0].1 = std::mem::take(&mut doc);
                let pushed = if stored_star {
                    self.pipeline.push_stored(row, json)
                } else {
                    self.pipeline.push_ref(row)
                };
                if env.stopped() {
                    // Its evaluation was cut short: the next page evaluates it again.
                    if pushed.is_result() {
                        self.pipeline.pop_last();
                    }
                    self.resume = Some(Resume::at(k, 0, number));
                    fed.deferred = true;
                    fed.interrupted = true;
                    return fed;
                }
                fed.matched = pushed.passed();
                if pushed.is_result() && !self.fits() {
                    self.resume = Some(Resume::at(k, 0, number));
                    fed.deferred = true;
                } else if pushed.is_result() {
                    fed.hit = true;
                    metrics.output_document_count += 1;
                    self.page_rows += 1;
                }
            }
        } else {
            // The first row not delivered yet.
            let mut next = skip_rows;
            for (i, row) in rows_of(q, Some(&doc), &[], env).enumerate().skip(skip_rows) {
                if self.page_rows >= self.bounds.cap {
                    self.resume = Some(Resume::at(k, i, number));
                    break;
                }
                let pushed = if stored_star {
                    self.pipeline.push_stored(&row, json)
                } else {
                    self.pipeline.push(row)
                };
                if env.stopped() {
                    if pushed.is_result() {
                        self.pipeline.pop_last();
                    }
                    break;
                }
                next = i + 1;
                fed.matched |= pushed.passed();
                if pushed.is_result() && !self.fits() {
                    // Rows before it went out on this page, which loaded the item (a
                    // matching one: this row passed).
                    self.resume = Some(Resume::at(k, i, number));
                    fed.deferred = i == 0;
                    fed.hit = true;
                    break;
                }
                if pushed.is_result() {
                    fed.hit = true;
                    metrics.output_document_count += 1;
                    self.page_rows += 1;
                }
            }
            if env.stopped() && self.resume.is_none() {
                // Cut short in a row, or in expanding the item's rows (a subquery in a
                // JOIN or an `IN` source): the next page continues at the first row not
                // delivered.
                self.resume = Some(Resume::at(k, next, number));
                fed.deferred = next == 0;
                fed.interrupted = true;
            }
        }
        fed
    }

    /// Feeds an item to a top-level `FROM (SELECT ... FROM c) x`: the inner query reads
    /// the container, and its results go through the outer query.
    fn feed_inner(&mut self, doc: &Val, fed: &mut Fed, metrics: &mut QueryMetrics) {
        let (q, env) = (self.reading.q, self.reading.env);
        let Some(inner) = self.inner.as_mut() else {
            return;
        };
        for row in rows_of(inner.query, Some(doc), &[], env) {
            let pushed = inner.run.push(row);
            fed.matched |= pushed.passed();
            if !pushed.is_result() {
                continue;
            }
            if !inner.item_by_item {
                // Its results are known once every range is read (see `finish`).
                fed.hit = true;
                metrics.output_document_count += 1;
                continue;
            }
            // Each subquery result goes through the outer query now, as the service runs
            // the whole query in each partition: the range outputs (and TOP counts) the
            // outer query's results.
            let Some(value) = inner.run.take_last_value() else {
                continue;
            };
            for row in expand_joins(q, vec![vec![(inner.alias.clone(), value)]], env) {
                if self.pipeline.push(row).is_result() {
                    fed.hit = true;
                    metrics.output_document_count += 1;
                }
            }
        }
    }

    /// The time each range read so far took, as (part, loading, executing) nanoseconds
    /// (one entry per [`Scan::range`] call).
    pub(super) fn range_times(&mut self) -> &[(usize, u128, u128)] {
        self.clock.laps()
    }

    /// The page's results, where the scan stopped, and, for the first k of an ORDER BY with
    /// TOP/LIMIT ([`Run::keeps_first_k_by_position`]), the EPK of every result up to the end
    /// of the result window (see [`Run::finish_rows_with_origins`]). A `FROM (subquery)`'s results are the outer
    /// query's rows: they go through it now.
    pub(super) fn finish(mut self) -> (Vec<Output>, Streamed, Option<Vec<Vec<u8>>>) {
        if let Some(inner) = self.inner.take() {
            let (q, env) = (self.reading.q, self.reading.env);
            for v in inner.run.finish() {
                for row in expand_joins(q, vec![vec![(inner.alias.clone(), v)]], env) {
                    self.pipeline.push(row);
                }
            }
        }
        let stopped = Streamed {
            resume: self.resume,
            rows: self.page_rows,
        };
        let Some(epks) = self.origins else {
            return (self.pipeline.finish_rows(), stopped, None);
        };
        let len = self.reading.epk_len;
        let (results, origins) = self.pipeline.finish_rows_with_origins();
        let result_epks = origins
            .into_iter()
            .map(|o| {
                epks.get(o * len..(o + 1) * len)
                    .unwrap_or_default()
                    .to_vec()
            })
            .collect();
        (results, stopped, Some(result_epks))
    }

    /// Whether the row just pushed keeps a streamed page within [`MAX_PAGE_BYTES`]; if not,
    /// it is taken back for the next page. A page always takes its first row.
    fn fits(&mut self) -> bool {
        if !self.reading.paged_scan {
            return true;
        }
        let size = self.pipeline.last_output_len();
        let fits = self.page_rows == 0 || self.page_bytes + size <= MAX_PAGE_BYTES;
        if fits {
            self.page_bytes += size;
        } else {
            self.pipeline.pop_last();
        }
        fits
    }
}

/// Up to this many logical partitions, a range's tally finds one by looking at each.
const LOOK_AT_EACH: usize = 16;

impl<'t> RangeTally<'t> {
    /// About `n` items come in no key order: room for their partitions, made once.
    fn expect_items(&mut self, n: usize) {
        if n > LOOK_AT_EACH {
            self.first_with_epk.reserve(n);
        }
    }

    /// Notes the logical partition of an item (key `k`) that made a result.
    fn produced(
        &mut self,
        k: &'t [u8],
        record: &Record,
        epk_len: usize,
        keys: &KeyReader,
    ) -> Result<()> {
        let epk = k.get(4..4 + epk_len);
        if epk != self.last_logical {
            let value = keys.read(record)?;
            // One value has one EPK, so an EPK above every one seen is a new value (items
            // come in key order, so this is the usual case); otherwise compare the values.
            let above = match (epk, self.max_epk) {
                (Some(e), Some(m)) => e > m,
                (Some(_), None) => true,
                _ => false,
            };
            if above {
                self.max_epk = epk;
            }
            let at = epk.unwrap_or_default();
            let new = above
                || match self.first_with(at) {
                    None => true,
                    Some(first) if self.logical.get(first) == Some(&value) => false,
                    // Two values with one EPK (a hash collision): compare them all.
                    Some(_) => !self.logical.contains(&value),
                };
            if new {
                self.logical.push(value);
                self.logical_epks.push(at);
            }
            self.last_logical = epk;
        }
        Ok(())
    }

    /// The first of `logical` whose EPK is `epk`. Among a few partitions (a fan-out's range
    /// names one or two) each is looked at; among more, a map answers, extended to the
    /// partitions named since it was last asked.
    fn first_with(&mut self, epk: &'t [u8]) -> Option<usize> {
        if self.logical_epks.len() <= LOOK_AT_EACH {
            return self.logical_epks.iter().position(|e| *e == epk);
        }
        for (i, e) in self.logical_epks.iter().enumerate().skip(self.indexed) {
            self.first_with_epk.entry(e).or_insert(i);
        }
        self.indexed = self.logical_epks.len();
        self.first_with_epk.get(epk).copied()
    }
}

/// The key spans of `range` that the routed EPK `spans` cover, written over `out`, whose
/// buffers are kept from range to range (a fan-out asks for every range's).
pub(super) fn key_spans(
    def: &ContainerDef,
    range: &PkRange,
    spans: &[(Epk, Epk)],
    out: &mut Vec<(Vec<u8>, Vec<u8>)>,
) {
    let mut n = 0;
    for (min, max) in spans {
        // The whole space (a fan-out's one span) covers every range: nothing to compare.
        let lo = if min.is_min() {
            &range.min_inclusive
        } else {
            std::cmp::max(min, &range.min_inclusive)
        };
        let hi = if max.is_max() {
            &range.max_exclusive
        } else {
            std::cmp::min(max, &range.max_exclusive)
        };
        if lo < hi {
            if out.len() == n {
                out.push(Default::default());
            }
            let (start, end) = &mut out[n];
            keys::write_epk_bound(start, def.rid, lo.as_bytes());
            keys::write_epk_bound(end, def.rid, hi.as_bytes());
            n += 1;
        }
    }
    out.truncate(n);
}

/// How many of an index lookup's candidates (in key order) lie in the key spans, which
/// `counted` goes on from (see [`SpanCursor`]).
pub(super) fn candidates_in(
    candidates: &[Candidate],
    spans: &[(Vec<u8>, Vec<u8>)],
    counted: &SpanCursor,
) -> usize {
    spans
        .iter()
        .map(|(start, end)| counted.between(candidates, start, end).len())
        .sum()
}

impl<'t> ItemSource<'_, 't> {
    /// A kept item with its key among the candidates (`None` when it is no candidate,
    /// which a kept order for the same candidates rules out).
    fn kept_entry<'k>(&self, item: &'k KeptItem) -> Option<Result<(&'t [u8], Record<'k>)>> {
        let c = self.candidates?;
        let at = c
            .binary_search_by(|c| c.key.as_slice().cmp(&item.key))
            .ok()?;
        Some(Record::decode(&item.record).map(|r| (c[at].key.as_slice(), r)))
    }

    /// The document order an earlier page kept for this range, if it holds.
    fn kept_order(&self) -> Option<Order> {
        let (pages, key, range) = self.kept?;
        pages.order(key, range)
    }

    /// Keeps the range's items, read and sorted in document order, for the next page.
    fn keep_order(&self, sorted: &[Entry<'t>]) {
        if let (Some((pages, key, range)), Some(_)) = (self.kept, self.candidates) {
            let order = sorted
                .iter()
                .map(|(k, r)| KeptItem {
                    number: r.header.doc_number,
                    key: Box::from(*k),
                    record: Box::from(r.stored),
                })
                .collect();
            pages.keep_order(key.clone(), range, order);
        }
    }
}

/// The items of the key span `[start, end)`, in key order: the candidates an index lookup
/// found there (read one by one unless the lookup read them already), or every item. `None`
/// when no candidate lies in the span, so nothing is read or timed.
fn span_items<'t>(
    source: &ItemSource<'_, 't>,
    (start, end): (&[u8], &[u8]),
) -> Result<Option<Box<dyn Iterator<Item = Result<Entry<'t>>> + 't>>> {
    let ItemSource {
        store,
        txn,
        def,
        candidates,
        extractor,
        read_to,
        ..
    } = *source;
    let split = source.split.clone();
    Ok(Some(match candidates {
        // Candidates in key order, like the scan: paging resumes the same way.
        Some(c) => {
            let std::ops::Range { start: lo, end: hi } = read_to.between(c, start, end);
            if lo == hi {
                return Ok(None);
            }
            let mut lookup = OrderedLookup::new(store, txn, def);
            // When a candidate the query reads had to come from the disk, the ones after it
            // (in this range and the next) are read ahead on helper threads.
            let watch = source.watch.clone();
            Box::new(c[lo..hi].iter().enumerate().filter_map(move |(i, item)| {
                // Read by the index walk, or by the helper, or read here.
                let helped = || split.as_ref().and_then(|s| s.take(lo + i));
                let record = match item.record.map(Some).or_else(helped) {
                    Some(read) => read,
                    None => {
                        let rest = || {
                            let after = c[lo + i + 1..].iter().filter(|r| r.record.is_none());
                            after.map(|r| r.key.as_slice())
                        };
                        let read = watch.borrow_mut().read(|| lookup.get(&item.key), rest);
                        match read {
                            Ok(r) => r,
                            Err(e) => return Some(Err(e)),
                        }
                    }
                };
                record.map(|v| Record::decode(v).map(|r| (item.key.as_slice(), r)))
            }))
        }
        None => {
            let mut ahead = ReadAhead::default();
            let items = store
                .items
                .range(txn, &keys::half_open(start, end))?
                .map(move |r| {
                    let (k, v) = r?;
                    ahead.touch(v);
                    Ok((k, Record::decode(v)?))
                });
            Box::new(Lookahead::new(items, move |entry: &Result<Entry>| {
                if let Ok((_, record)) = entry
                    && let Some(directory) = &record.members
                {
                    extractor.prefetch(directory);
                }
            }))
        }
    }))
}
