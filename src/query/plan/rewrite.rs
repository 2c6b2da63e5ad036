//! The `queryInfo` of a query and its `rewrittenQuery`: the text each range runs so that
//! the client can merge the ranges' results into the query's result.
//!
//! The shapes are the service's, as its query plans show them (azure-cosmos-dotnet-v3
//! `tests/.../BaselineTest/TestBaseline/QueryPlanBaselineTests.*.xml`) and as the SDKs read
//! them (azure-sdk-for-python `_execution_context/`, azure-sdk-for-js
//! `queryExecutionContext/`):
//!
//! - ORDER BY: `SELECT [TOP n] c._rid, [{"item": <key>}, ...] AS orderByItems, <select> AS
//!   payload FROM ... WHERE ((<filter>) AND ({documentdb-formattableorderbyquery-filter}))
//!   ORDER BY ...`. Both SDKs replace the placeholder with `true` (Python
//!   `query_execution_info.get_rewritten_query`, Node `_createTargetPartitionQueryExecutionContext`)
//!   and merge the ranges by `orderByItems`, ties going to the range with the lower
//!   `minInclusive`, then return each row's `payload`. `SELECT *` makes the payload the
//!   item itself, `SELECT VALUE e` makes it `e`, a list makes it an object of the list's
//!   names. OFFSET n LIMIT m becomes `OFFSET 0 LIMIT n+m` per range.
//! - Aggregates with VALUE: `SELECT VALUE [{"item": <partial>}]`, one row per range, which
//!   the SDKs combine (Python `aggregators.py` reads `item`; Node's aggregators prefer
//!   `item2`). COUNT and SUM are their own partials; AVG is `{"sum": SUM(x), "count":
//!   COUNT(x)}`; MIN and MAX are `{"item": MIN(x), "item2": {"min": MIN(x), "count":
//!   COUNT(x)}}` (the count tells a range without values from one whose minimum is
//!   undefined: .NET's `MinMaxAggregator`, Node's `MinAggregator` reads `.min`).
//! - Aggregates without VALUE: `SELECT {"<alias>": {"item": <partial>}, ...} AS payload`,
//!   aliases `$1`, `$2`... for unnamed members, listed in `groupByAliases` and
//!   `groupByAliasToAggregateType` (not in `aggregates`).
//! - GROUP BY: `SELECT [{"item": <g1>}, ...] AS groupByItems, <payload> AS payload ... GROUP BY
//!   ...`: the payload is the SELECT list as an object, each aggregate member as its
//!   partial in `{"item": ...}`; with VALUE, the value itself or `[{"item": <partial>}]`
//!   (Node's `GroupByEndpointComponent` and `GroupByValueEndpointComponent`).
//! - DISTINCT: `Ordered` (the SDK compares with the last result) only for `SELECT DISTINCT
//!   VALUE e ... ORDER BY e`; the ORDER BY rewrite then leaves out DISTINCT and requires
//!   `IS_DEFINED(e)`. Otherwise `Unordered`, and the query is sent as it is, without TOP
//!   and OFFSET/LIMIT (each range must return every distinct value).
//! - TOP alone: the query is sent as it is (`rewrittenQuery` empty) and the SDK stops after
//!   `top` results; OFFSET/LIMIT alone: `OFFSET 0 LIMIT n+m`, the SDK skips and takes.
//!   Grouped, aggregated and DISTINCT queries leave TOP and OFFSET/LIMIT to the client.
//!
//! Where the references are silent, choices are noted where they are made.

use std::fmt::Write;

use super::info::{AggregateKind, DistinctType, QueryInfo, SortOrder};
use crate::error::{Error, Result};
use crate::query::run::pipeline::collect_aggregates;
use crate::query::syntax::ast::{Expr, ExprKind, Query, Select, SelectKind};
use crate::query::syntax::lexer::is_name;
use crate::query::syntax::names::from_alias;

/// The placeholder the ORDER BY rewrite leaves in its WHERE clause, where a client puts a
/// filter that resumes the order (or `true`).
pub const FORMATTABLE_ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";

/// TOP, OFFSET and LIMIT as numbers (parameters resolved).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    pub(super) top: Option<u64>,
    pub(super) offset: Option<u64>,
    pub(super) limit: Option<u64>,
}

/// What the planner knows besides the query's text.
pub(super) struct Context {
    pub(super) counts: Counts,
    /// The partition key (from the request or the filter) binds one logical partition.
    pub(super) single_key: bool,
    /// The query reads more than one physical partition.
    pub(super) several_ranges: bool,
    /// Each ORDER BY item's direction (a vector distance's from its metric).
    pub(super) order: Vec<SortOrder>,
    /// ORDER BY a vector distance.
    pub(super) non_streaming: bool,
}

/// The `queryInfo` of `q` (already parsed and checked).
pub(super) fn query_info(q: &Query, cx: &Context) -> Result<QueryInfo> {
    // `SELECT 5`: nothing to merge (the service's plan for it is empty too).
    if q.from.is_none() {
        return Ok(QueryInfo::default());
    }
    let mut info = QueryInfo {
        distinct_type: distinct_type(q),
        top: cx.counts.top,
        offset: cx.counts.offset,
        limit: cx.counts.limit,
        has_select_value: matches!(q.select.kind, SelectKind::Value(_)),
        ..QueryInfo::default()
    };
    let aggregated = select_exprs(q).iter().any(|e| contains_aggregate(e));
    let shaped = if !q.group_by.is_empty() {
        grouped(q, &mut info)
    } else if aggregated {
        aggregate(q, &mut info)
    } else if !q.order_by.is_empty() {
        ordered(q, cx, &mut info)
    } else if q.select.distinct {
        // Each range must return all its distinct values: no TOP or OFFSET/LIMIT.
        if q.select.top.is_some() || q.offset_limit.is_some() {
            let select = Select {
                top: None,
                ..q.select.clone()
            };
            info.rewritten_query = assemble(select.to_string(), q, plain_filter(q), None);
        }
        Ok(())
    } else if let (Some(offset), Some(limit)) = (cx.counts.offset, cx.counts.limit) {
        if cx.single_key {
            // One logical partition runs the whole query: the service's plan is empty then.
            return Ok(QueryInfo::default());
        }
        let tail = format!("OFFSET 0 LIMIT {}", offset.saturating_add(limit));
        info.rewritten_query = assemble(q.select.to_string(), q, plain_filter(q), Some(tail));
        Ok(())
    } else {
        // TOP alone, or nothing: the query is sent as it is.
        Ok(())
    };
    match shaped {
        Ok(()) => Ok(info),
        // A composition such as `SELECT VALUE FLOOR(AVG(c.x))` has no per-range partial
        // the SDKs can combine, so the service refuses to plan it; on one range there is
        // nothing to combine, and the query goes as it is.
        Err(Unplannable::Composition(_)) if !cx.several_ranges => Ok(QueryInfo::default()),
        Err(Unplannable::Composition(e)) => Err(Error::bad_request(
            "Compositions of aggregates and other expressions are not allowed in a \
             cross-partition query; aggregate alone, as SELECT VALUE AVG(c.x), and compute \
             the rest in the client",
        )
        .at(e.line, e.column)),
        Err(Unplannable::Other(e)) => Err(e),
    }
}

/// Why a query has no rewrite.
enum Unplannable {
    /// An aggregate inside another expression, at this position.
    Composition(crate::query::syntax::ast::Pos),
    Other(Error),
}

type Shaped = std::result::Result<(), Unplannable>;

/// See the module comment on DISTINCT.
fn distinct_type(q: &Query) -> DistinctType {
    if !q.select.distinct {
        return DistinctType::None;
    }
    match (&q.select.kind, q.order_by.as_slice()) {
        (SelectKind::Value(e), [only]) if e.to_string() == only.expr.to_string() => {
            DistinctType::Ordered
        }
        _ => DistinctType::Unordered,
    }
}

/// The expressions of the SELECT list (none for `*`).
fn select_exprs(q: &Query) -> Vec<&Expr> {
    match &q.select.kind {
        SelectKind::Star => Vec::new(),
        SelectKind::Value(e) => vec![e],
        SelectKind::Items(items) => items.iter().map(|i| &i.expr).collect(),
    }
}

fn contains_aggregate(e: &Expr) -> bool {
    let mut found = Vec::new();
    collect_aggregates(e, &mut found);
    !found.is_empty()
}

/// `e` as one aggregate call: its kind and argument.
fn aggregate_call(e: &Expr) -> Option<(AggregateKind, &Expr)> {
    match &e.kind {
        ExprKind::Call {
            name,
            args,
            udf: false,
        } => match (AggregateKind::of_function(name), args.as_slice()) {
            (Some(kind), [arg]) => Some((kind, arg)),
            _ => None,
        },
        _ => None,
    }
}

/// An aggregate member of a payload: `{"item": <partial>}` (see the module comment).
fn partial(kind: AggregateKind, arg: &Expr) -> String {
    match kind {
        AggregateKind::Count => format!("{{\"item\": COUNT({arg})}}"),
        AggregateKind::Sum => format!("{{\"item\": SUM({arg})}}"),
        AggregateKind::Average => {
            format!("{{\"item\": {{\"sum\": SUM({arg}), \"count\": COUNT({arg})}}}}")
        }
        AggregateKind::Min => {
            format!(
                "{{\"item\": MIN({arg}), \"item2\": {{\"min\": MIN({arg}), \"count\": COUNT({arg})}}}}"
            )
        }
        AggregateKind::Max => {
            format!(
                "{{\"item\": MAX({arg}), \"item2\": {{\"max\": MAX({arg}), \"count\": COUNT({arg})}}}}"
            )
        }
    }
}

/// The names of the SELECT list's members, as the query's results name them: the alias,
/// else the last property of a path (or the bare name), else `$1`, `$2`, ... counting the
/// unnamed ones (as `run::pipeline` names them, and as the service's `groupByAliases` do).
fn member_names(q: &Query) -> Vec<(String, &Expr)> {
    let SelectKind::Items(items) = &q.select.kind else {
        return Vec::new();
    };
    let mut unnamed = 0;
    items
        .iter()
        .map(|item| {
            let name = match (&item.alias, &item.expr.kind) {
                (Some(a), _) => a.clone(),
                (None, ExprKind::Property(_, p)) => p.clone(),
                (None, ExprKind::Ident(n)) => n.clone(),
                _ => {
                    unnamed += 1;
                    format!("${unnamed}")
                }
            };
            (name, &item.expr)
        })
        .collect()
}

/// An object key as query text: a JSON string.
fn key(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_else(|_| format!("\"{name}\""))
}

/// The SELECT list as an object of its members, each aggregate as its partial, and the
/// `groupByAliases` and `groupByAliasToAggregateType` that describe it.
fn members_payload(q: &Query, info: &mut QueryInfo) -> std::result::Result<String, Unplannable> {
    let mut members = Vec::new();
    for (name, expr) in member_names(q) {
        let (text, kind) = match aggregate_call(expr) {
            Some((kind, arg)) => (partial(kind, arg), Some(kind)),
            None if contains_aggregate(expr) => return Err(Unplannable::Composition(expr.pos)),
            None => (expr.to_string(), None),
        };
        members.push(format!("{}: {text}", key(&name)));
        info.group_by_aliases.push(name.clone());
        info.group_by_alias_to_aggregate_type.push((name, kind));
    }
    Ok(format!("{{{}}}", members.join(", ")))
}

/// `SELECT VALUE <aggregate>` as `[{"item": <partial>}]`; `None` for a VALUE without one.
fn value_payload(
    e: &Expr,
    info: &mut QueryInfo,
) -> std::result::Result<Option<String>, Unplannable> {
    match aggregate_call(e) {
        Some((kind, arg)) => {
            info.aggregates.push(kind);
            Ok(Some(format!("[{}]", partial(kind, arg))))
        }
        None if contains_aggregate(e) => Err(Unplannable::Composition(e.pos)),
        None => Ok(None),
    }
}

/// GROUP BY: see the module comment. TOP, OFFSET/LIMIT and DISTINCT are the client's.
fn grouped(q: &Query, info: &mut QueryInfo) -> Shaped {
    info.group_by_expressions = q.group_by.iter().map(Expr::to_string).collect();
    let items: Vec<String> = q
        .group_by
        .iter()
        .map(|g| format!("{{\"item\": {g}}}"))
        .collect();
    let payload = match &q.select.kind {
        SelectKind::Value(e) => match value_payload(e, info)? {
            Some(p) => p,
            None => e.to_string(),
        },
        SelectKind::Items(_) => members_payload(q, info)?,
        SelectKind::Star => {
            return Err(Unplannable::Other(Error::bad_request(
                "'SELECT *' can't be used with GROUP BY",
            )));
        }
    };
    let select = format!(
        "SELECT [{}] AS groupByItems, {payload} AS payload",
        items.join(", ")
    );
    info.rewritten_query = assemble(select, q, plain_filter(q), None);
    Ok(())
}

/// Aggregates without GROUP BY: one row per range. The ORDER BY is kept, as the service's
/// rewrite keeps it ("Aggregate With JOIN" baseline); it orders the one row.
fn aggregate(q: &Query, info: &mut QueryInfo) -> Shaped {
    let select = match &q.select.kind {
        SelectKind::Value(e) => match value_payload(e, info)? {
            Some(p) => format!("SELECT VALUE {p}"),
            None => return Err(Unplannable::Composition(e.pos)),
        },
        SelectKind::Items(_) => format!("SELECT {} AS payload", members_payload(q, info)?),
        SelectKind::Star => return Err(Unplannable::Composition(q.select.pos)),
    };
    let mut text = assemble(select, q, plain_filter(q), None);
    if !q.order_by.is_empty() {
        let _ = write!(text, "\nORDER BY {}", order_items(q));
    }
    info.rewritten_query = text;
    Ok(())
}

/// ORDER BY: see the module comment.
fn ordered(q: &Query, cx: &Context, info: &mut QueryInfo) -> Shaped {
    let alias = from_alias(q).unwrap_or_default();
    info.order_by = cx.order.clone();
    info.order_by_expressions = q.order_by.iter().map(|o| o.expr.to_string()).collect();
    info.has_non_streaming_order_by = cx.non_streaming;
    let keys: Vec<String> = q
        .order_by
        .iter()
        .map(|o| format!("{{\"item\": {}}}", o.expr))
        .collect();
    let distinct = info.distinct_type != DistinctType::None;
    let (payload, defined) = match &q.select.kind {
        SelectKind::Star => (star_payload(q).map_err(Unplannable::Other)?, None),
        // A row without a payload would end the Node SDK's iteration and break Python's
        // (both read `payload` of every row), and a VALUE that is undefined makes no result:
        // each range keeps only rows whose value is defined. The service's rewrite shows this
        // for ordered DISTINCT; it is required for every VALUE, so it is applied to all.
        SelectKind::Value(e) => (e.to_string(), Some(format!("IS_DEFINED({e})"))),
        SelectKind::Items(_) => {
            let members: Vec<String> = member_names(q)
                .into_iter()
                .map(|(name, e)| format!("{}: {e}", key(&name)))
                .collect();
            (format!("{{{}}}", members.join(", ")), None)
        }
    };
    // Only the first n per range can be among the first n overall; DISTINCT needs them all.
    let top = match cx.counts.top {
        Some(n) if !distinct => format!("TOP {n} "),
        _ => String::new(),
    };
    let rid = if is_name(alias) {
        format!("{alias}._rid")
    } else {
        // An unaliased FROM subquery: its rows have no name to read `_rid` from; the SDKs
        // merge without it.
        "undefined".to_string()
    };
    let select = format!(
        "SELECT {top}{rid}, [{}] AS orderByItems, {payload} AS payload",
        keys.join(", ")
    );
    let mut conditions = Vec::new();
    if let Some(f) = &q.filter {
        conditions.push(format!("({f})"));
    }
    conditions.push(format!("({FORMATTABLE_ORDER_BY_FILTER})"));
    conditions.extend(defined);
    let filter = if conditions.len() == 1 {
        conditions.remove(0)
    } else {
        format!("({})", conditions.join(" AND "))
    };
    let tail = match (cx.counts.offset, cx.counts.limit) {
        (Some(o), Some(l)) if !distinct => Some(format!("OFFSET 0 LIMIT {}", o.saturating_add(l))),
        _ => None,
    };
    let mut text = assemble(select, q, Some(filter), None);
    let _ = write!(text, "\nORDER BY {}", order_items(q));
    if let Some(tail) = tail {
        let _ = write!(text, "\n{tail}");
    }
    info.rewritten_query = text;
    Ok(())
}

/// `SELECT *` as a payload: the FROM binding (the checks allow `*` over one input set only).
fn star_payload(q: &Query) -> Result<String> {
    match from_alias(q) {
        Some(alias) if q.joins.is_empty() && is_name(alias) => Ok(alias.to_string()),
        _ => Err(Error::bad_request(
            "SELECT * over an unaliased subquery can't be run range by range; give the \
             subquery an alias",
        )),
    }
}

/// The ORDER BY list as written.
fn order_items(q: &Query) -> String {
    q.order_by
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The query's own filter, in parentheses as the service prints it.
fn plain_filter(q: &Query) -> Option<String> {
    q.filter.as_ref().map(|f| format!("({f})"))
}

/// A query from `select` and `q`'s FROM, JOINs and GROUP BY, with `filter` as its WHERE
/// and `tail` last: one clause per line, as the service writes its rewrites.
fn assemble(select: String, q: &Query, filter: Option<String>, tail: Option<String>) -> String {
    let mut out = select;
    if let Some(from) = &q.from {
        let _ = write!(out, "\n{from}");
    }
    for join in &q.joins {
        let _ = write!(out, "\n{join}");
    }
    if let Some(f) = filter {
        let _ = write!(out, "\nWHERE {f}");
    }
    if !q.group_by.is_empty() {
        let groups: Vec<String> = q.group_by.iter().map(Expr::to_string).collect();
        let _ = write!(out, "\nGROUP BY {}", groups.join(", "));
    }
    if let Some(tail) = tail {
        let _ = write!(out, "\n{tail}");
    }
    out
}
