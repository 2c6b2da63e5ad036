//! Phase one of a query: everything decided before a document is read. The indexing policy
//! the query may rely on, the checks that policy imposes, the routing, the continuation it
//! resumes, what it reads of each item, the conjuncts an index answers, and the flags that
//! decide whether it streams and where it may stop early.
//!
//! Before preparing, constant `true` conjuncts leave the filter
//! ([`without_true_conjuncts`]), as the range-by-range queries of the SDKs carry one.
//!
//! Preparing reads nothing from the store: a [`Plan`] is a function of the query, the
//! container's definition and the request (parameters, partition key, continuation), so it
//! can be tested on its own and is what an EXPLAIN would show. Its [`Shape`] depends on the
//! query's text alone.

use std::sync::Arc;

use super::access::{self, Probe, Resolver};
use super::ordered::WalkAfter;
use super::partition_key::KeyReader;
use super::pipeline::{
    Run, has_aggregate, result_bound, select_aggregates, streams, works_item_by_item,
};
use super::request::Request;
use super::result::IndexMetrics;
use super::routing::{self, Routing, RoutingKind};
use super::rules::{
    check_counts, check_order_by, check_parameters, index_served, is_constant, reverse_scan,
};
use super::scope;
use super::token::Token;
use crate::error::{Error, Result};
use crate::query::eval::env::Env;
use crate::query::eval::value::Val;
use crate::query::read::demand;
use crate::query::read::extractor::Extractor;
use crate::query::search::rank;
use crate::query::syntax::ast::{BinaryOp, Expr, ExprKind, FromKind, Literal, Query, SelectKind};
use crate::store::catalog::{ContainerDef, ReadyIndex};
use crate::store::indexing::{CompiledPolicy, CompositeOrder};

/// Aggregates a cross-partition GROUP BY may compute (the service's limit).
const MAX_GROUPED_AGGREGATES: usize = 21;

/// What the query's text alone decides about how it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// `SELECT *` over whole items of `FROM c`: rows carry the stored bytes, parsed in full
    /// only if they make it into the result.
    pub(super) stored_star: bool,
    /// A projection of each item of `FROM c` alone (no JOIN, DISTINCT, grouping or
    /// aggregate): one result per item, so an order the index gives is the result's order.
    pub(super) projects_items: bool,
    /// `SELECT VALUE`, which can be undefined for an item and then makes no result.
    pub(super) value_projection: bool,
    /// No ORDER BY, grouping, DISTINCT, aggregate or OFFSET: results come as items are read
    /// (see [`streams`]).
    pub(super) streaming: bool,
    /// Pages resume the scan where the last one stopped; other queries page over their
    /// complete result, which later pages take from the result cache.
    pub(super) paged_scan: bool,
    /// Each item's results are final as it is read (not so over a FROM subquery that
    /// orders, groups or counts: its results come after the last range).
    pub(super) final_per_item: bool,
    /// `SELECT [VALUE] COUNT(<constant>)` without grouping or JOIN.
    pub(super) count_only: bool,
    /// The SELECT clause aggregates.
    pub(super) aggregates: bool,
    /// `FROM c` itself (not a path below it, an `IN` iteration or a subquery).
    pub(super) from_root: bool,
}

impl Shape {
    pub(super) fn of(q: &Query) -> Shape {
        let from = q.from.as_ref().map(|f| &f.kind);
        let from_root = matches!(from, Some(FromKind::Container { path, .. }) if path.is_empty());
        let from_subquery = matches!(from, Some(FromKind::Subquery { .. }));
        let aggregates = has_aggregate(q);
        let star = matches!(q.select.kind, SelectKind::Star);
        let plain = q.joins.is_empty() && !q.select.distinct;
        let streaming = streams(q);
        Shape {
            stored_star: star && plain && from_root,
            projects_items: !star && plain && q.group_by.is_empty() && !aggregates && from_root,
            value_projection: matches!(q.select.kind, SelectKind::Value(_)),
            streaming,
            paged_scan: streaming && !from_subquery && q.from.is_some(),
            final_per_item: match from {
                Some(FromKind::Subquery { query, .. }) => works_item_by_item(query),
                _ => true,
            },
            count_only: count_only(q),
            aggregates,
            from_root,
        }
    }
}

/// A query prepared to run on one container for one request.
pub(super) struct Plan<'a> {
    pub(super) q: &'a Query,
    /// The name under which the query sees the whole item (empty for a FROM subquery).
    pub(super) root: &'a str,
    pub(super) shape: Shape,
    /// The paths the query may rely on: the container's policy, or, while a replacement
    /// builds, the paths both it and the built policy index.
    pub(super) policy: Arc<CompiledPolicy>,
    /// The index generation that is built, and the policy it was built under.
    pub(super) ready: ReadyIndex<'a>,
    pub(super) routing: Routing,
    /// What the previous page left for this one (nothing on the first page).
    pub(super) token: Option<Token>,
    /// The container's resource id and the hash of the query's text and parameters, which
    /// continuation tokens are bound to.
    pub(super) rid: String,
    pub(super) hash: u64,
    /// What the result cache knows the query by: its hash, and the partition key and the
    /// range the request gave.
    pub(super) cache_id: u64,
    /// Results per page.
    pub(super) max_items: usize,
    /// The direction ORDER BY ties come in within a range (the sort's and the index walk's).
    pub(super) reverse_ties: bool,
    /// The filter is index-served: only matching documents load.
    pub(super) served: bool,
    /// A COUNT of a constant whose filter (if any) the index serves: the service answers it
    /// from the index, loading no document.
    pub(super) index_only: bool,
    pub(super) resolver: Resolver<'a>,
    /// Every conjunct's probe, indexed or not (the index metrics name both).
    pub(super) probes: Vec<Probe<'a>>,
    /// Which of `probes` the policy indexes, where the index may narrow the documents.
    indexed: Vec<usize>,
    /// Every conjunct of the filter has a probe the policy indexes, and the filter sees each
    /// item as the one row it makes: when the lookups select exactly
    /// ([`super::candidates::Selection::exact`]), the items they select pass the filter.
    pub(super) probes_are_the_filter: bool,
    /// Conjuncts the index narrows with before an item is loaded, for a filter it serves
    /// only in part: the service narrows with the index, then evaluates the rest on the
    /// loaded documents, and the charge counts exactly that however the items were found.
    pub(super) narrowing: Vec<&'a Expr>,
    /// ORDER BY a score every document in scope must get (no vector index yields them).
    pub(super) scored_order: bool,
    /// TOP N of a streaming query stops after N+1 matches, as the service loads N+1
    /// documents for it.
    pub(super) early_stop: Option<u64>,
    /// An ORDER BY the index serves (no filter or a served one), bounded by TOP or LIMIT:
    /// the index streams the order, so each range loads at most this many documents.
    pub(super) ordered_bound: Option<usize>,
    /// Results TOP still allows, after those earlier pages delivered (unbounded without TOP).
    pub(super) top_left: usize,
    /// Where an ORDER BY the index yields resumes, on a later page of a query without TOP
    /// or OFFSET (the token records it: see `Token::walk`).
    pub(super) walk_after: Option<WalkAfter>,
    /// Builds, from each item, only the properties the query reads.
    pub(super) extractor: Extractor,
    /// Where every conjunct of the filter is an exact probe: builds what the query reads
    /// of an item but for the filter, for the items a lookup selected (see
    /// [`Plan::scan_extractor`]).
    unfiltered_extractor: Option<Extractor>,
    /// Reads a result's partition key, which its logical partition is reported by.
    pub(super) key_reader: KeyReader<'a>,
    /// The request asked for index metrics ([`Plan::index_metrics`]).
    index_metrics_asked: bool,
}

impl<'a> Plan<'a> {
    /// Prepares `q` (already parsed, checked and, where the container has a vector policy,
    /// rewritten for it) whose whole item is named `root`, for the request `opts` hashed as
    /// `hash`. Fails as the service does: an ORDER BY the policy cannot sort, a bad count, a
    /// token of another query, too many grouped aggregates.
    pub(super) fn prepare(
        def: &'a ContainerDef,
        q: &'a Query,
        root: &'a str,
        env: &Env,
        opts: &Request,
        hash: u64,
    ) -> Result<Plan<'a>> {
        // ORDER BY is validated against the policy being built (the one the user set): a
        // path it includes sorts correctly meanwhile, by a sort instead of an index walk.
        let ready = def.ready_index();
        let target = def.indexing_policy.compiled();
        check_order_by(q, def, root, &target)?;
        let policy = match &def.index_build {
            Some(_) => def
                .indexing_policy
                .compile()
                .restricted_to(ready.policy.compile())
                .into(),
            None => target,
        };
        check_parameters(q, &opts.params)?;
        check_counts(q, &opts.params)?;
        let mut routing = routing::route(q, def, &opts.params, opts.partition_key.as_ref())?;
        if let Some(id) = &opts.range {
            let mut range = scope::resolve(def, id)?;
            if let Some((start, end)) = &opts.epk_range {
                range = scope::narrow(range, start, end)?;
            }
            routing = routing.scoped(range);
        }
        let rid = crate::store::item::container_rid(def);
        let token = Token::read(opts.continuation.as_deref(), &rid, hash)?;
        check_grouped_aggregates(q, &routing)?;
        let shape = Shape::of(q);
        let served = q
            .filter
            .as_ref()
            .is_some_and(|f| index_served(f, root, &policy));
        let resolver = Resolver::new(q, root, ready.string_bytes);
        let probes: Vec<Probe> = match &q.filter {
            Some(f) => access::conjuncts(f)
                .into_iter()
                .filter_map(|c| resolver.probe(c, env))
                .collect(),
            None => Vec::new(),
        };
        let indexed = indexed_probes(q, root, &probes, &policy);
        let unfiltered = demand::Clauses {
            select: !shape.stored_star,
            filter: false,
        };
        let probes_are_the_filter = shape.from_root
            && q.joins.is_empty()
            && q.filter
                .as_ref()
                .is_some_and(|f| access::conjuncts(f).len() == indexed.len());
        let narrowing = if served {
            Vec::new()
        } else {
            indexed
                .iter()
                .map(|&i| &probes[i])
                .filter(|p| p.paths.iter().all(|path| !path.via_join))
                .map(|p| p.conjunct)
                .collect()
        };
        // Narrowing conditions read the filter's paths of every item loaded.
        let unfiltered_extractor = (probes_are_the_filter
            && narrowing.is_empty()
            && indexed.iter().all(|&i| probes[i].exact))
        .then(|| Extractor::new(demand::of_clauses(q, root, unfiltered)));
        let scored_order = rank::scores_every_document(q, def, root);
        let walkable = !scored_order && (q.filter.is_none() || served);
        let bounds = Bounds::of(q, env, shape, walkable, &token);
        let walk_after = match &token {
            Some(t) if bounds.ordered_bound.is_none() && !shape.paged_scan => t.walk_after()?,
            _ => None,
        };
        Ok(Plan {
            q,
            root,
            shape,
            index_only: shape.count_only
                && q.filter
                    .as_ref()
                    .is_none_or(|f| index_served(f, root, &policy)),
            policy,
            ready,
            routing,
            token,
            rid,
            hash,
            cache_id: cache_id(hash, opts),
            max_items: opts.max_items.unwrap_or(100).max(1),
            index_metrics_asked: opts.index_metrics,
            reverse_ties: reverse_scan(q, def, root),
            served,
            resolver,
            probes,
            indexed,
            probes_are_the_filter,
            narrowing,
            scored_order,
            early_stop: bounds.early_stop,
            ordered_bound: bounds.ordered_bound,
            top_left: bounds.top_left,
            walk_after,
            unfiltered_extractor,
            extractor: Extractor::new(if shape.stored_star {
                demand::of_query_without_star(q, root)
            } else {
                demand::of_query(q, root)
            }),
            key_reader: KeyReader::new(def),
        })
    }

    /// What a scan builds of each item: all the query reads, or, when the items come from
    /// a lookup that answered the filter (`filter_answered`), all but what the filter reads.
    pub(super) fn scan_extractor(&self, filter_answered: bool) -> &Extractor {
        match &self.unfiltered_extractor {
            Some(unfiltered) if filter_answered => unfiltered,
            _ => &self.extractor,
        }
    }

    /// The probes an index may narrow the documents with.
    pub(super) fn indexed_probes(&self) -> Vec<&Probe<'a>> {
        self.indexed.iter().map(|&i| &self.probes[i]).collect()
    }

    /// Whether this page pays for the query's work: its first page, or the first a result
    /// still being computed when the earlier (empty) pages returned is delivered on.
    pub(super) fn charges_work(&self) -> bool {
        self.token.as_ref().is_none_or(|t| t.computing().is_some())
    }

    /// An unfiltered COUNT over the container's items, answered from the statistics the
    /// store keeps exact, as the service answers it from the index.
    pub(super) fn answers_from_statistics(&self) -> bool {
        self.shape.count_only
            && self.shape.from_root
            && self.q.filter.is_none()
            && self.token.is_none()
    }

    /// The pipeline the query's rows go through, its ties broken as the service breaks them.
    pub(super) fn pipeline<'e>(&self, env: &'e Env<'e>) -> Run<'a, 'e> {
        let mut pipeline = Run::new(self.q, env);
        pipeline.break_ties_by_position(self.reverse_ties);
        pipeline
    }

    /// The indexes the query used and those that would have served it, given the
    /// container's composite indexes, if the request asked for them. The plan gives them
    /// without reading anything, so each page works them out anew.
    pub(super) fn index_metrics(&self, def: &ContainerDef) -> Option<IndexMetrics> {
        if !self.index_metrics_asked {
            return None;
        }
        let composites: Vec<Vec<String>> = def
            .indexing_policy
            .composite_indexes
            .iter()
            .map(|ci| {
                ci.iter()
                    .map(|c| {
                        let dir = match c.order {
                            CompositeOrder::Ascending => "ASC",
                            CompositeOrder::Descending => "DESC",
                        };
                        format!("{} {dir}", c.path)
                    })
                    .collect()
            })
            .collect();
        Some(access::index_metrics_of(
            self.q,
            &self.resolver,
            &self.probes,
            &self.policy,
            &composites,
        ))
    }
}

/// Where the reading may stop, from TOP and LIMIT.
struct Bounds {
    early_stop: Option<u64>,
    ordered_bound: Option<usize>,
    top_left: usize,
}

impl Bounds {
    /// `walkable`: the order is not a score and the filter (if any) is index-served, so an
    /// ORDER BY on indexed paths (checked when preparing) streams from the index.
    fn of(q: &Query, env: &Env, shape: Shape, walkable: bool, token: &Option<Token>) -> Bounds {
        let top = q.select.top.as_ref().map(|top| env.eval(top, &[]));
        let early_stop = match &top {
            Some(Val::Num(n)) if shape.streaming && shape.final_per_item && *n >= 0.0 => {
                Some(*n as u64 + 1)
            }
            _ => None,
        };
        let ordered_bound = if !q.order_by.is_empty()
            && q.group_by.is_empty()
            && !q.select.distinct
            && !shape.aggregates
            && walkable
        {
            result_bound(q, env)
        } else {
            None
        };
        let emitted_before = token.as_ref().map_or(0, |t| t.emitted);
        let top_left = match &top {
            Some(Val::Num(n)) if *n >= 0.0 => (*n as u64).saturating_sub(emitted_before) as usize,
            Some(_) => 0,
            None => usize::MAX,
        };
        Bounds {
            early_stop,
            ordered_bound,
            top_left,
        }
    }
}

/// The probes (by index) the policy indexes, where an index may narrow the documents: a
/// filtered query over the container's items or an `IN` iteration of them.
fn indexed_probes(q: &Query, root: &str, probes: &[Probe], policy: &CompiledPolicy) -> Vec<usize> {
    match (&q.filter, q.from.as_ref().map(|f| &f.kind)) {
        (Some(_), Some(FromKind::Container { .. } | FromKind::In { .. })) if !root.is_empty() => (0
            ..probes.len())
            .filter(|&i| probes[i].indexed_by(policy))
            .collect(),
        _ => Vec::new(),
    }
}

/// What the result cache knows a query by: its hash, and the partition key and the range
/// the request scopes it to, which change what it reads.
fn cache_id(hash: u64, opts: &Request) -> u64 {
    let mut id = hash;
    if let Some(pk) = &opts.partition_key {
        id ^= crate::store::murmur3::hash128(pk.to_string().as_bytes(), 1).0;
    }
    if let Some(range) = &opts.range {
        id ^= crate::store::murmur3::hash128(range.as_bytes(), 2).0;
    }
    id
}

/// A cross-partition GROUP BY computes at most [`MAX_GROUPED_AGGREGATES`] aggregates.
fn check_grouped_aggregates(q: &Query, routing: &Routing) -> Result<()> {
    if routing.kind == RoutingKind::SinglePartition || q.group_by.is_empty() {
        return Ok(());
    }
    let aggs = select_aggregates(q);
    if aggs.len() > MAX_GROUPED_AGGREGATES {
        return Err(Error::bad_request(format!(
            "a cross-partition GROUP BY query can have at most {MAX_GROUPED_AGGREGATES} \
             aggregates; this one has {}",
            aggs.len()
        ))
        .at(q.select.pos.line, q.select.pos.column));
    }
    Ok(())
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

/// `q` without the conjuncts of its filter that are the constant `true` (and without a
/// filter that is nothing else); `None` when it has none. A WHERE keeps exactly the rows
/// whose filter is true, and `x AND true` is `x` in three-valued logic, so the result is
/// the same; but the query then plans as if it had been written without them: an ORDER BY
/// walks its index, TOP bounds the loads, and it is charged as the service charges the
/// query without them. The SDKs' range-by-range ORDER BY puts `true` in the rewritten
/// query's formattable filter (`{documentdb-formattableorderbyquery-filter}`, see
/// `query::plan`), so every such query meets this.
pub(super) fn without_true_conjuncts(q: &Query) -> Option<Query> {
    let filter = q.filter.as_ref()?;
    let all = access::conjuncts(filter);
    let kept: Vec<&Expr> = all
        .iter()
        .copied()
        .filter(|c| !matches!(c.kind, ExprKind::Literal(Literal::Bool(true))))
        .collect();
    if kept.len() == all.len() {
        return None;
    }
    let mut out = q.clone();
    out.filter = kept.into_iter().cloned().reduce(|a, b| Expr {
        pos: a.pos,
        kind: ExprKind::Binary(BinaryOp::And, Box::new(a), Box::new(b)),
    });
    Some(out)
}
