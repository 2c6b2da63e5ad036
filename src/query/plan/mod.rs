//! The query plan the service gives SDKs for a query (`PartitionedQueryExecutionInfo`,
//! asked for with `x-ms-cosmos-is-query-plan-request`): which EPK ranges the query reads
//! ([`ranges`]), what each range runs and what the client does with the results
//! ([`info`] and [`rewrite`]). With it an SDK runs a cross-partition query range by range
//! (each scoped with `x-ms-documentdb-partitionkeyrangeid`, see `run::scope`) and merges the
//! ranges' results itself: ORDER BY, aggregates, GROUP BY, DISTINCT, TOP and OFFSET/LIMIT.
//!
//! A plan is a function of the parsed query, its parameters, a partition key given with the
//! request and the container's partition key definition and ranges; it reads no item.
//! Searches ranked by `ORDER BY RANK` are not planned (the service plans them as hybrid
//! search, with a statistics query of its own): the engine runs them whole.

mod info;
mod ranges;
mod rewrite;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::eval::expr::{Params, literal};
use crate::query::eval::functions::FnContext;
use crate::query::eval::value::Val;
use crate::query::run::pipeline;
use crate::query::run::routing::{self, Targets};
use crate::query::search::rank::{self, Ranking};
use crate::query::syntax::ast::{Expr, ExprKind, FromKind, Query};
use crate::query::syntax::names::doc_alias;
use crate::store::catalog::ContainerDef;
use crate::store::keys::RangeId;
pub use info::{AggregateKind, DistinctType, QueryInfo, SortOrder};
pub use ranges::QueryRange;
pub use rewrite::FORMATTABLE_ORDER_BY_FILTER;
use rewrite::{Context, Counts};

/// A query's plan on one container.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionedPlan {
    pub info: QueryInfo,
    /// The EPK ranges the partition key routing implies.
    pub ranges: Vec<QueryRange>,
    /// The container's live physical partitions those ranges overlap, in EPK order.
    pub physical: Vec<RangeId>,
}

/// Plans `q` (parsed and checked) with `params` on `def`; `partition_key` is one given with
/// the request. Fails as the service's planner does: a bad TOP/OFFSET/LIMIT count, a
/// composition of aggregates across ranges, a partition key that does not fit the
/// container, and (here) a ranked search or a FROM subquery whose result depends on
/// every range.
pub fn plan(
    q: &Query,
    def: &ContainerDef,
    params: &HashMap<String, Val>,
    partition_key: Option<&Value>,
) -> Result<PartitionedPlan> {
    crate::query::run::check_counts(q, params)?;
    if let Some(o) = q.order_by.iter().find(|o| o.rank) {
        return Err(Error::bad_request(
            "ORDER BY RANK (hybrid search) has no range-by-range plan here: its scores need \
             statistics of the whole container, which the engine gathers when it runs the \
             query itself; run it without a query plan",
        )
        .at(o.pos.line, o.pos.column));
    }
    let routing = routing::route(q, def, params, partition_key)?;
    let (ranges, physical): (Vec<QueryRange>, Vec<RangeId>) = if q.from.is_none() {
        (
            vec![QueryRange::first_point()],
            def.ranges.first().map(|r| r.id).into_iter().collect(),
        )
    } else {
        (
            ranges::of(&routing, &def.partition_key),
            routing.ranges(def).iter().map(|r| r.id).collect(),
        )
    };
    check_from_subquery(q, physical.len())?;
    let (order, non_streaming) = sort_orders(q, def, params);
    let cx = Context {
        counts: counts(q, params),
        single_key: matches!(&routing.targets, Targets::Keys(keys) if keys.len() == 1),
        several_ranges: physical.len() > 1,
        order,
        non_streaming,
    };
    Ok(PartitionedPlan {
        info: rewrite::query_info(q, &cx)?,
        ranges,
        physical,
    })
}

/// A FROM subquery whose results are not each item's own (it orders, groups, aggregates,
/// deduplicates, skips or takes the first n) gives a different result on each range than
/// over the whole container, and no merge of the ranges' results recovers it (the service
/// plans one such shape, `COUNT` over `SELECT DISTINCT`, with a `dCountInfo` the SDKs here
/// do not read). Across several ranges it is refused rather than planned wrong; the engine
/// still runs it whole.
fn check_from_subquery(q: &Query, ranges: usize) -> Result<()> {
    match q.from.as_ref().map(|f| (&f.kind, f.pos)) {
        Some((FromKind::Subquery { query, .. }, pos))
            if ranges > 1 && !pipeline::works_item_by_item(query) =>
        {
            Err(Error::bad_request(
                "a FROM subquery that orders, groups, aggregates, deduplicates or takes the \
                 first results can't be run range by range: its result over each partition \
                 key range is not a part of its result over the container",
            )
            .at(pos.line, pos.column))
        }
        _ => Ok(()),
    }
}

/// TOP, OFFSET and LIMIT with parameters resolved (already checked to be counts).
fn counts(q: &Query, params: &HashMap<String, Val>) -> Counts {
    let value = |e: &Expr| -> Option<u64> {
        let v = match &e.kind {
            ExprKind::Param(p) => params.get(p).cloned()?,
            ExprKind::Literal(l) => literal(l),
            _ => return None,
        };
        match v {
            Val::Num(n) if n >= 0.0 && n.fract() == 0.0 => Some(n as u64),
            _ => None,
        }
    };
    Counts {
        top: q.select.top.as_ref().and_then(value),
        offset: q.offset_limit.as_ref().and_then(|ol| value(&ol.offset)),
        limit: q.offset_limit.as_ref().and_then(|ol| value(&ol.limit)),
    }
}

/// Each ORDER BY item's direction, and whether the order is a vector distance's. A
/// VectorDistance without ASC or DESC sorts most similar first: descending for cosine and
/// dot product, ascending for euclidean, by the call's options or else the container's
/// vector policy (as the engine runs it, see `search::rank`).
fn sort_orders(
    q: &Query,
    def: &ContainerDef,
    params: &HashMap<String, Val>,
) -> (Vec<SortOrder>, bool) {
    let written = |descending: bool| {
        if descending {
            SortOrder::Descending
        } else {
            SortOrder::Ascending
        }
    };
    let root = doc_alias(q).unwrap_or_default();
    let with_policy = rank::with_vector_policy(q, def, &root);
    let q_policy = with_policy.as_ref().unwrap_or(q);
    let params: Params = params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let ctx = FnContext {
        now_ticks: 0,
        clock: None,
        seed: 0,
    };
    let env = pipeline::env(&params, &ctx, None, None);
    match Ranking::of(q_policy, &env).and_then(|r| r.vector_descending()) {
        Some(descending) => (vec![written(descending)], true),
        None => (
            q.order_by.iter().map(|o| written(o.descending)).collect(),
            false,
        ),
    }
}
