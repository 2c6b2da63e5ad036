//! How a query's result finds its items, chosen once per computed result: the first k
//! entries of an index that yields the ORDER BY, the item keys index lookups select for the
//! filter, or a scan of every item in scope. The choice is reported as the result's access
//! path (`AccessView`).

use std::sync::Arc;
use std::time::Instant;

use super::between_pages::{BetweenPages, Lookup, PageKey};
use super::candidates::{Candidate, index_candidates};
use super::ordered::{OrderWalk, TieOrder, Walked, order_walk, walk_order};
use super::pipeline::{Output, Run};
use super::prepare::Plan;
use super::result::AccessView;
use super::snapshot::Snapshot;
use crate::error::{Error, Result};
use crate::query::eval::env::Env;
use crate::query::read::extractor::Extractor;
use crate::query::search::rank;
use crate::store::index::IndexReader;
use crate::store::keys::RangeId;
use crate::store::ranges::PkRange;

/// The routed ranges of a query, in EPK order, and the normalized EPK spans it reads in them.
#[derive(Clone, Copy)]
pub(super) struct Routed<'r> {
    pub(super) ranges: &'r [&'r PkRange],
    pub(super) spans: &'r [(Vec<u8>, Vec<u8>)],
}

/// The items a computed result reads, and how they were found.
pub(super) struct Found<'t> {
    /// The items to read instead of scanning, in key order (looked up, or walked where the
    /// walk's order is not the result's); `None` for a scan.
    pub(super) candidates: Option<Arc<[Candidate<'t>]>>,
    pub(super) access: AccessView,
    /// An index walk in ORDER BY order served the query.
    pub(super) walked: bool,
    /// An exact ordered walk: its items in result order, and the nanoseconds it took.
    pub(super) presorted: Option<(Vec<Walked<'t>>, u128)>,
    /// A `SELECT VALUE` walk's items, projected while checking they made enough results.
    pub(super) projected: Option<Vec<Output>>,
    /// Documents matching a filtered walk, per range (bounded by the ORDER BY's k).
    pub(super) matching: Option<Vec<(RangeId, u64)>>,
    /// The walk resumed where the previous page ended (see [`WalkAfter`]): the result
    /// starts at this page's first result.
    pub(super) resumed: bool,
    /// Every candidate passes the filter: the lookups that selected them answer it exactly.
    pub(super) filter_answered: bool,
}

impl<'t> Found<'t> {
    fn scan(access: AccessView) -> Found<'t> {
        Found {
            candidates: None,
            access,
            walked: false,
            presorted: None,
            projected: None,
            matching: None,
            resumed: false,
            filter_answered: false,
        }
    }
}

/// Chooses how the result of `plan` over the `routed` ranges finds its items. `over_subquery`: the FROM clause is a subquery, which no index serves.
pub(super) fn find_items<'t>(
    plan: &Plan,
    snap: &Snapshot<'t>,
    env: &Env,
    routed: Routed,
    pipeline: &Run,
    (over_subquery, kept): (bool, Option<(&BetweenPages, &PageKey)>),
) -> Result<Found<'t>> {
    let Snapshot {
        store, txn, def, ..
    } = *snap;
    let q = plan.q;
    // ORDER BY from the index: walk about k entries instead of sorting the whole scope. An
    // equality filter a composite index answers under the same walk needs no candidate
    // lookup (which could read every matching entry first).
    let walk = if over_subquery {
        None
    } else {
        order_walk(
            store,
            txn,
            def,
            q,
            &plan.resolver,
            env,
            &plan.policy,
            plan.ready,
        )?
    };
    let probes = plan.indexed_probes();
    let mut found = match walk {
        Some(walk) => walk_for_result(plan, snap, routed, pipeline, &walk)?,
        None if probes.is_empty() => Found::scan(scan_view(q.filter.is_some())),
        None => {
            // A later page of a streamed query takes the lookup its first page made.
            let lookup = match kept.and_then(|(pages, key)| pages.lookup(key)) {
                Some(lookup) => lookup,
                None => {
                    let reader = IndexReader::new(store, txn, def, plan.ready.generation);
                    let items = store.container_stats(txn, def)?.counters.items;
                    // Past this many candidates, loading them one by one costs about what
                    // a scan does.
                    let limit = (items / 5).max(1000) as usize;
                    let selection = index_candidates(&reader, &probes, routed.spans, limit)?;
                    let candidates = selection.keys.map(|keys| {
                        keys.into_iter()
                            .map(|key| Candidate { key, record: None })
                            .collect()
                    });
                    let lookup = Lookup {
                        candidates,
                        access: selection.access,
                        exact: selection.exact,
                    };
                    if let Some((pages, key)) = kept {
                        pages.keep_lookup(key.clone(), lookup.clone());
                    }
                    lookup
                }
            };
            let mut found = Found::scan(lookup.access);
            found.candidates = lookup.candidates.map(|c| c as Arc<[Candidate<'t>]>);
            found.filter_answered = lookup.exact && plan.probes_are_the_filter;
            found
        }
    };
    // A scored order says how its scores are found.
    if found.candidates.is_none() && rank::orders_by_score(q) {
        let (kind, reason) = if plan.scored_order {
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
        found.access = AccessView {
            kind,
            indexes: Vec::new(),
            reason: reason.into(),
        };
    }
    Ok(found)
}

/// Walks the index in ORDER BY order until it has the results the query needs: up to its
/// bound, or one past this page. Falls back to a scan when the results run past the
/// documents that define the path.
fn walk_for_result<'t>(
    plan: &Plan,
    snap: &Snapshot<'t>,
    routed: Routed,
    pipeline: &Run,
    walk: &OrderWalk,
) -> Result<Found<'t>> {
    let Snapshot {
        store,
        txn,
        def,
        now,
    } = *snap;
    let shape = plan.shape;
    // A later page resumes after the last result of the one before, or (without a place
    // to resume at) walks past the results delivered already.
    let after = plan.walk_after.as_ref();
    let skip = match after {
        Some(_) => 0,
        None => plan.token.as_ref().map_or(0, |t| t.skip),
    };
    let needed = plan
        .ordered_bound
        .unwrap_or_else(|| skip.saturating_add(plan.max_items).saturating_add(1));
    let mut k = needed;
    let reader = IndexReader::new(store, txn, def, plan.ready.generation);
    let epk_len = def.partition_key.epk_len();
    // When the index gives exact sort keys (a filter the walk answers is exact too: see
    // OrderWalk), the walk's order is the result's: `SELECT *` needs nothing of the items
    // but their bytes, a projection only its own members.
    let presort = (shape.stored_star || shape.projects_items) && !shape.streaming;
    // The charge counts, per range, the matching documents the service would stream (at
    // most k): count the entries under the prefix.
    let matching = if walk.prefix.is_empty() {
        None
    } else {
        let cap = plan.ordered_bound.map_or(u64::MAX, |k| k as u64);
        Some(count_matching(&reader, walk, routed, cap, epk_len)?)
    };
    let range_ends: Vec<&[u8]> = routed
        .ranges
        .iter()
        .map(|r| r.max_exclusive.as_bytes())
        .collect();
    let ties = TieOrder {
        range_ends: &range_ends,
        epk_len,
        reverse_scan: plan.reverse_ties,
    };
    let clock = Instant::now();
    let mut projected: Option<Vec<Output>>;
    let (items, in_order) = loop {
        let (items, in_order) = walk_order(
            store,
            txn,
            &reader,
            walk,
            routed.spans,
            after,
            k,
            now,
            (presort, &ties),
        )?;
        // Every item is a result, except where `SELECT VALUE` is undefined: then walk on
        // until enough items are (rarely more than once).
        let results = if shape.value_projection && items.len() >= k {
            let values = project_walked(pipeline, &plan.extractor, &items)?;
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
        // The results run past the documents that define the path into those that do not,
        // which only a scan finds: scan and sort (same order and charge, which model the
        // service's streamed index either way).
        return Ok(Found::scan(scan_view(plan.q.filter.is_some())));
    }
    let walked = Walk {
        items,
        in_order,
        nanos: clock.elapsed().as_nanos(),
        k,
    };
    let mut found = walked.found(&reader, walk, projected, matching);
    found.resumed = after.is_some();
    Ok(found)
}

/// An ORDER BY walk that found the result's items.
struct Walk<'t> {
    items: Vec<Walked<'t>>,
    /// The items are in result order.
    in_order: bool,
    nanos: u128,
    /// The entries the walk read up to.
    k: usize,
}

impl<'t> Walk<'t> {
    /// The items found: in result order, they need nothing more read (the ranges' metrics
    /// come from them); otherwise they are candidates, read in key order and sorted like
    /// any others.
    fn found(
        self,
        reader: &IndexReader,
        walk: &OrderWalk,
        projected: Option<Vec<Output>>,
        matching: Option<Vec<(RangeId, u64)>>,
    ) -> Found<'t> {
        let k = self.k;
        let (candidates, presorted) = if self.in_order {
            (Vec::new(), Some((self.items, self.nanos)))
        } else {
            let mut c: Vec<Candidate> = self
                .items
                .iter()
                .map(|w| Candidate {
                    key: reader.item_key(w.item),
                    record: Some(w.bytes),
                })
                .collect();
            c.sort_unstable_by(|a, b| a.key.cmp(&b.key));
            (c, None)
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
        Found {
            candidates: Some(candidates.into()),
            access: AccessView {
                kind: "index-order",
                indexes: vec![walk.spec.clone()],
                reason,
            },
            walked: true,
            presorted,
            projected,
            matching,
            resumed: false,
            filter_answered: false,
        }
    }
}

/// Per routed range, the entries under the walk's prefix (the documents matching its
/// equality filter), counting each range up to `cap`.
fn count_matching(
    reader: &IndexReader,
    walk: &OrderWalk,
    Routed { ranges, spans }: Routed,
    cap: u64,
    epk_len: usize,
) -> Result<Vec<(RangeId, u64)>> {
    let mut counts: Vec<(RangeId, u64)> = ranges.iter().map(|r| (r.id, 0)).collect();
    let mut full = 0;
    reader.walk(
        walk.path,
        walk.values,
        (false, None),
        &walk.prefix,
        spans,
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
    Ok(counts)
}

/// The projections of walked items of `FROM c`, in walk order (undefined ones included).
pub(super) fn project_walked(
    pipeline: &Run,
    extractor: &Extractor,
    items: &[Walked],
) -> Result<Vec<Output>> {
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

pub(super) fn is_undefined(output: &Output) -> bool {
    matches!(output, Output::Value(v) if v.is_undefined())
}

/// The access path of a scan.
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

/// A stored item as a result: the bytes it was stored as.
pub(super) fn stored(w: &Walked) -> Output {
    Output::Stored(Arc::from(w.record.json))
}
