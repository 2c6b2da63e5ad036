//! Routing: which logical and physical partitions a query must read, and why.
//!
//! The planner finds the partition key in the filter the way the service's query plan
//! does (reference/cosmos.md §1.8): an equality on the key path binds one logical partition;
//! IN lists and ORs of equalities bind several; for hierarchical keys, equalities on leading
//! levels bind a prefix, whose EPK range may span several physical partitions. Anything else
//! fans out to every range. An explicit partition key with the request overrides the filter.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{BinaryOp, Expr, ExprKind, FromKind, Query};
use super::eval::literal;
use super::value::Val;
use crate::error::Result;
use crate::store::catalog::ContainerDef;
use crate::store::epk::{self, Epk, PkComponent};
use crate::store::partition_key::PartitionKeyValue;
use crate::store::ranges::PkRange;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingKind {
    SinglePartition,
    Targeted,
    FanOut,
}

impl RoutingKind {
    pub fn name(self) -> &'static str {
        match self {
            RoutingKind::SinglePartition => "single-partition",
            RoutingKind::Targeted => "targeted",
            RoutingKind::FanOut => "fan-out",
        }
    }
}

/// What to read: whole logical partitions, EPK ranges, or everything.
#[derive(Debug, Clone)]
pub enum Targets {
    /// Full key values: each is one logical partition.
    Keys(Vec<PartitionKeyValue>),
    /// EPK ranges `[min, max)` (hierarchical prefixes).
    Ranges(Vec<(Epk, Epk)>),
    All,
}

#[derive(Debug, Clone)]
pub struct Routing {
    pub kind: RoutingKind,
    pub reason: String,
    pub targets: Targets,
}

impl Routing {
    /// The live ranges this routing reads, in EPK order.
    pub fn ranges<'d>(&self, def: &'d ContainerDef) -> Vec<&'d PkRange> {
        match &self.targets {
            Targets::All => def.ranges.iter().collect(),
            Targets::Keys(keys) => {
                let epks: Vec<Epk> = keys.iter().map(|k| k.epk(&def.partition_key)).collect();
                def.ranges
                    .iter()
                    .filter(|r| epks.iter().any(|e| r.contains(e.as_bytes())))
                    .collect()
            }
            Targets::Ranges(spans) => def
                .ranges
                .iter()
                .filter(|r| spans.iter().any(|(min, max)| r.overlaps(min, max)))
                .collect(),
        }
    }
}

/// Decides the routing of `q` on `def`. `explicit` is a partition key given with the request.
pub fn route(
    q: &Query,
    def: &ContainerDef,
    params: &HashMap<String, Val>,
    explicit: Option<&Value>,
) -> Result<Routing> {
    let pkdef = &def.partition_key;
    let n = def.ranges.len();
    // "all 7 ranges", or "its only range" for a container that has one.
    let all = if n == 1 {
        "its only range".to_string()
    } else {
        format!("all {n} ranges")
    };
    let paths = pkdef.paths.join(", ");
    if let Some(pk) = explicit {
        let components = pkdef.parse_request_prefix(pk)?;
        if components.len() == pkdef.paths.len() {
            let value = pkdef.parse_request_value(pk)?;
            return Ok(Routing {
                kind: RoutingKind::SinglePartition,
                reason: format!(
                    "the request names partition key {}",
                    value.to_display_json()
                ),
                targets: Targets::Keys(vec![value]),
            });
        }
        let span = epk::prefix_range(&components, pkdef.paths.len()).map_err(|e| {
            crate::error::Error::bad_request(format!("invalid partition key prefix: {e}"))
        })?;
        let routing = Routing {
            kind: RoutingKind::Targeted,
            reason: String::new(),
            targets: Targets::Ranges(vec![span]),
        };
        let k = routing.ranges(def).len();
        return Ok(Routing {
            reason: format!("the request names key prefix {pk}: {k} of {n} ranges"),
            ..routing
        });
    }
    let fan_out = |why: String| Routing {
        kind: RoutingKind::FanOut,
        reason: why,
        targets: Targets::All,
    };
    let alias = match q.from.as_ref().map(|f| &f.kind) {
        Some(FromKind::Container { name, path, alias }) if path.is_empty() => {
            alias.clone().unwrap_or_else(|| name.clone())
        }
        Some(_) => {
            return Ok(fan_out(format!(
                "FROM iterates within items, so no filter binds {paths}: {all}"
            )));
        }
        None => return Ok(fan_out(format!("no FROM clause: {all}"))),
    };
    let Some(filter) = &q.filter else {
        return Ok(fan_out(format!("no filter on {paths}: {all}")));
    };
    // Candidate values per key level, from the top-level conjuncts.
    let mut levels: Vec<Option<(Vec<Val>, String)>> = vec![None; pkdef.paths.len()];
    for conjunct in conjuncts(filter) {
        for (i, path) in pkdef.paths.iter().enumerate() {
            if levels[i].is_none()
                && let Some(values) = bound_values(conjunct, &alias, path, params)
            {
                levels[i] = Some((values, describe(conjunct, &alias, path)));
            }
        }
    }
    let bound = levels.iter().take_while(|l| l.is_some()).count();
    if bound == 0 {
        return Ok(fan_out(format!(
            "no equality or IN filter on {}: {all}",
            pkdef.paths[0]
        )));
    }
    let mut combos: Vec<Vec<PkComponent>> = vec![Vec::new()];
    let mut reasons = Vec::new();
    for (values, reason) in levels.iter().take(bound).flatten() {
        reasons.push(reason.clone());
        let mut next = Vec::new();
        for combo in &combos {
            for v in values {
                let Some(c) = component(v) else { continue };
                let mut c2 = combo.clone();
                c2.push(c);
                next.push(c2);
            }
        }
        combos = next;
    }
    let reason = reasons.join(" and ");
    if combos.is_empty() {
        return Ok(fan_out(format!(
            "{reason}, but not with a valid key value: {all}"
        )));
    }
    if bound == pkdef.paths.len() {
        let keys: Vec<PartitionKeyValue> = combos
            .into_iter()
            .filter_map(|c| {
                pkdef
                    .parse_request_value(&Value::Array(
                        c.iter()
                            .map(|x| {
                                epk::component_to_json(x)
                                    .unwrap_or_else(|| Value::Object(Default::default()))
                            })
                            .collect(),
                    ))
                    .ok()
            })
            .collect();
        let routing = Routing {
            kind: RoutingKind::Targeted,
            reason: String::new(),
            targets: Targets::Keys(keys),
        };
        let k = routing.ranges(def).len();
        let count = match &routing.targets {
            Targets::Keys(keys) => keys.len(),
            _ => 0,
        };
        if count == 1 {
            return Ok(Routing {
                kind: RoutingKind::SinglePartition,
                reason: format!("{reason} binds the partition key"),
                ..routing
            });
        }
        return Ok(Routing {
            reason: format!("{reason} binds {count} partition key values on {k} of {n} ranges"),
            ..routing
        });
    }
    let spans: Vec<(Epk, Epk)> = combos
        .iter()
        .filter_map(|c| epk::prefix_range(c, pkdef.paths.len()).ok())
        .collect();
    let routing = Routing {
        kind: RoutingKind::Targeted,
        reason: String::new(),
        targets: Targets::Ranges(spans),
    };
    let k = routing.ranges(def).len();
    Ok(Routing {
        reason: format!(
            "{reason} binds a prefix of the hierarchical key ({} of {} levels): {k} of {n} ranges",
            bound,
            pkdef.paths.len()
        ),
        ..routing
    })
}

fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// Whether `e` is `alias.<path>` (dots or brackets).
fn is_path(e: &Expr, alias: &str, path: &str) -> bool {
    let mut segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut cur = e;
    while let Some(last) = segs.pop() {
        match &cur.kind {
            ExprKind::Property(base, name) if name == last.trim_matches('"') => cur = base,
            _ => return false,
        }
    }
    matches!(&cur.kind, ExprKind::Ident(n) if n == alias)
}

fn constant(e: &Expr, params: &HashMap<String, Val>) -> Option<Val> {
    match &e.kind {
        ExprKind::Literal(l) => Some(literal(l)),
        ExprKind::Param(p) => params.get(p).cloned(),
        _ => None,
    }
}

/// The key values a conjunct pins the path to: `path = v`, `path IN (...)`, or an OR of those.
fn bound_values(
    e: &Expr,
    alias: &str,
    path: &str,
    params: &HashMap<String, Val>,
) -> Option<Vec<Val>> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) => {
            if is_path(a, alias, path) {
                constant(b, params).map(|v| vec![v])
            } else if is_path(b, alias, path) {
                constant(a, params).map(|v| vec![v])
            } else {
                None
            }
        }
        ExprKind::In {
            expr,
            list,
            negated: false,
        } if is_path(expr, alias, path) => list.iter().map(|x| constant(x, params)).collect(),
        ExprKind::Binary(BinaryOp::Or, a, b) => {
            let mut v = bound_values(a, alias, path, params)?;
            v.extend(bound_values(b, alias, path, params)?);
            Some(v)
        }
        _ => None,
    }
}

fn describe(e: &Expr, alias: &str, path: &str) -> String {
    let p = format!("{alias}.{}", path.trim_start_matches('/').replace('/', "."));
    match &e.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) => {
            let other = if is_path(a, alias, path) { b } else { a };
            match &other.kind {
                ExprKind::Param(name) => format!("{p} = @{name}"),
                ExprKind::Literal(l) => {
                    format!(
                        "{p} = {}",
                        literal(l)
                            .to_json()
                            .map_or("undefined".into(), |j| j.to_string())
                    )
                }
                _ => format!("{p} = <value>"),
            }
        }
        ExprKind::In { list, .. } => format!("{p} IN ({} values)", list.len()),
        _ => format!("an OR of equalities on {p}"),
    }
}

fn component(v: &Val) -> Option<PkComponent> {
    match v {
        Val::Null => Some(PkComponent::Null),
        Val::Bool(b) => Some(PkComponent::Bool(*b)),
        Val::Num(n) => Some(PkComponent::Number(*n)),
        Val::Str(s) => Some(PkComponent::String(s.to_string())),
        _ => None,
    }
}
