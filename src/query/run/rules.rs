//! What the indexing policy allows a query: which filters the index serves (so only matching
//! documents load), which ORDER BY it can sort (else the service's 400), and the checks on
//! TOP, OFFSET and LIMIT counts.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::query::eval::functions;
use crate::query::eval::value::Val;
use crate::query::syntax::ast::{BinaryOp, Expr, ExprKind, Query};
use crate::query::syntax::names::path_text;
use crate::store::catalog::ContainerDef;
use crate::store::indexing::{CompiledPolicy, PathSegment};

/// Index-served filters load only matching documents; others scan. A filter is served by
/// the index when every leaf compares an indexed path of the item with a constant, calls a
/// function that can use the index on such a path, or searches a path with a full-text index
/// (FullTextContains*: the full-text index finds the matching documents).
pub(super) fn index_served(e: &Expr, alias: &str, policy: &CompiledPolicy) -> bool {
    match &e.kind {
        ExprKind::Call {
            name,
            args,
            udf: false,
        } if name.starts_with("FULLTEXTCONTAINS") => {
            args.first()
                .and_then(|a| path_text(a, alias))
                .is_some_and(|p| policy.has_full_text_index(&p))
                && args.iter().skip(1).all(is_constant)
        }
        ExprKind::Binary(BinaryOp::And | BinaryOp::Or, a, b) => {
            index_served(a, alias, policy) && index_served(b, alias, policy)
        }
        ExprKind::Unary(crate::query::syntax::ast::UnaryOp::Not, x) => {
            index_served(x, alias, policy)
        }
        ExprKind::Binary(
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
            a,
            b,
        ) => {
            (indexed_path(a, alias, policy) && is_constant(b))
                || (indexed_path(b, alias, policy) && is_constant(a))
        }
        ExprKind::In { expr, list, .. } => {
            indexed_path(expr, alias, policy) && list.iter().all(is_constant)
        }
        ExprKind::Between {
            expr, low, high, ..
        } => indexed_path(expr, alias, policy) && is_constant(low) && is_constant(high),
        ExprKind::Call {
            name,
            args,
            udf: false,
        } => {
            functions::lookup(name).is_some_and(|f| f.uses_index)
                && args.first().is_some_and(|a| indexed_path(a, alias, policy))
                && args.iter().skip(1).all(is_constant)
        }
        ExprKind::Literal(_) => true,
        _ => false,
    }
}

/// ORDER BY on two or more expressions needs a composite index with the same paths in the
/// same directions (or all reversed), as on the service.
pub(super) fn check_order_by(
    q: &Query,
    def: &ContainerDef,
    root: &str,
    policy: &CompiledPolicy,
) -> Result<()> {
    // Every ORDER BY path needs a range index (order-by.md); the default policy has one.
    for o in &q.order_by {
        if let Some(p) = path_text(&o.expr, root) {
            let segs: Vec<PathSegment> = p
                .trim_start_matches('/')
                .split('/')
                .map(|s| PathSegment::Property(s.to_string()))
                .collect();
            if !policy.is_indexed(&segs) {
                return Err(Error::bad_request(format!(
                    "Order-by item requires a range index to be defined on the corresponding index \
                     path: {p} is excluded by the container's indexing policy; include it to sort by it."
                ))
                .at(o.pos.line, o.pos.column));
            }
        }
    }
    if q.order_by.len() < 2 {
        return Ok(());
    }
    if composite_scan(q, def, root).is_some() {
        return Ok(());
    }
    let pos = q.order_by[0].pos;
    Err(Error::bad_request(
        "The order by query does not have a corresponding composite index that it can be served from. \
         Add a composite index with these paths in this order (same or all-reversed directions) to the \
         container's indexing policy.",
    )
    .at(pos.line, pos.column))
}

/// How a composite index serves `q`'s ORDER BY (two or more container paths): `Some(false)`
/// when one has these paths in the query's directions, else `Some(true)` when one has them
/// all reversed (it is then scanned in reverse), `None` when none serves it.
fn composite_scan(q: &Query, def: &ContainerDef, root: &str) -> Option<bool> {
    let wanted: Vec<(String, bool)> = q
        .order_by
        .iter()
        .map(|o| path_text(&o.expr, root).map(|p| (p, o.descending)))
        .collect::<Option<_>>()?;
    let composites = &def.indexing_policy.composite_indexes;
    [false, true].into_iter().find(|&flip| {
        composites.iter().any(|ci| {
            ci.len() == wanted.len()
                && ci.iter().zip(&wanted).all(|(c, (p, desc))| {
                    let c_desc =
                        matches!(c.order, crate::store::indexing::CompositeOrder::Descending);
                    c.path == *p && (c_desc ^ flip) == *desc
                })
        })
    })
}

/// Whether the service scans the index backwards for `q`'s ORDER BY, which decides the
/// direction ties come in within a partition (see `Run::break_ties_by_position`): a range
/// index is ascending, so one descending key is a reverse scan; several keys go by the
/// composite index that serves them. Where no index decides (an ORDER BY the service would
/// reject, or not on paths), the first key's direction, the SDKs' fallback.
pub(super) fn reverse_scan(q: &Query, def: &ContainerDef, root: &str) -> bool {
    let first = q.order_by.first().is_some_and(|o| o.descending);
    if q.order_by.len() < 2 {
        return first;
    }
    composite_scan(q, def, root).unwrap_or(first)
}

/// TOP, OFFSET and LIMIT take non-negative integers; parameters are checked here because
/// their values arrive with the request.
pub(crate) fn check_counts(q: &Query, params: &HashMap<String, Val>) -> Result<()> {
    let exprs = q.select.top.iter().map(|e| (e, "TOP")).chain(
        q.offset_limit
            .iter()
            .flat_map(|ol| [(&ol.offset, "OFFSET"), (&ol.limit, "LIMIT")]),
    );
    for (e, clause) in exprs {
        let v = match &e.kind {
            ExprKind::Param(p) => params.get(p).cloned().unwrap_or_default(),
            ExprKind::Literal(l) => crate::query::eval::expr::literal(l),
            _ => continue,
        };
        let ok = matches!(v, Val::Num(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64);
        if !ok {
            let shown = v
                .to_json()
                .map_or("undefined".to_string(), |j| j.to_string());
            return Err(Error::bad_request(format!(
                "{clause} takes a non-negative integer, got {shown}"
            ))
            .at(e.pos.line, e.pos.column));
        }
    }
    Ok(())
}

/// Every parameter the query names has a value in the request (one given without a value
/// is bound to undefined). The docs require a parameter's name to carry its `@` ("Names of
/// parameters must begin with '@'", .NET `SqlParameter.Name`); what the service answers for
/// a name the request does not bind is not documented, and running such a query as if the
/// value were undefined hides the mistake behind an empty result, so it is a 400 that names
/// the parameter and where the query uses it.
pub(crate) fn check_parameters(q: &Query, params: &HashMap<String, Val>) -> Result<()> {
    let mut unbound = None;
    q.for_each_expr(&mut |e| {
        if let ExprKind::Param(name) = &e.kind
            && !params.contains_key(name)
            && unbound.is_none()
        {
            unbound = Some((name.clone(), e.pos));
        }
    });
    let Some((name, pos)) = unbound else {
        return Ok(());
    };
    let given = if params.is_empty() {
        "the request gives no parameters".to_string()
    } else {
        let mut names: Vec<String> = params.keys().map(|n| format!("@{n}")).collect();
        names.sort();
        format!("the request gives {}", names.join(", "))
    };
    Err(Error::bad_request(format!(
        "the query uses parameter @{name}, which has no value: {given}. Pass it as \
         {{\"name\": \"@{name}\", \"value\": ...}} (on the command line: --param @{name}=JSON)"
    ))
    .at(pos.line, pos.column))
}

pub(super) fn is_constant(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Literal(_) | ExprKind::Param(_))
}

fn indexed_path(e: &Expr, alias: &str, policy: &CompiledPolicy) -> bool {
    let mut segs = Vec::new();
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Property(base, name) => {
                segs.push(PathSegment::Property(name.clone()));
                cur = base;
            }
            ExprKind::Index(base, idx) => {
                match &idx.kind {
                    ExprKind::Literal(crate::query::syntax::ast::Literal::Number(n))
                        if *n >= 0.0 =>
                    {
                        segs.push(PathSegment::Index(*n as usize))
                    }
                    _ => return false,
                }
                cur = base;
            }
            ExprKind::Ident(n) if n == alias => break,
            _ => return false,
        }
    }
    segs.reverse();
    !segs.is_empty() && policy.is_indexed(&segs)
}
