//! Routing: which logical and physical partitions a query must read, and why.
//!
//! The planner finds the partition key in the filter the way the service's query plan
//! does (reference/cosmos.md §1.8): an equality on the key path binds one logical partition;
//! IN lists and ORs of equalities bind several; for hierarchical keys, equalities on leading
//! levels bind a prefix, whose EPK range may span several physical partitions. ANDs and ORs
//! combine as in the plan (its baselines in the .NET SDK give `(a = 2 AND b = 4) OR
//! (a = "2" AND b = "4")` two point ranges): the filter is read as a union of alternatives,
//! and if any alternative leaves the first level free, the query fans out to every range.
//! An explicit partition key with the request overrides the filter.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::error::Result;
use crate::query::eval::expr::literal;
use crate::query::eval::value::Val;
use crate::query::syntax::ast::{BinaryOp, Expr, ExprKind, FromKind, Query};
use crate::store::catalog::ContainerDef;
use crate::store::epk::{self, Epk, PkComponent};
use crate::store::partition_key::{PartitionKeyDefinition, PartitionKeyValue};
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
    /// The one physical partition the request scopes the query to (the service's
    /// `x-ms-documentdb-partitionkeyrangeid`): only its part of the targets is read.
    pub scope: Option<PkRange>,
}

impl Routing {
    /// The live ranges this routing reads, in EPK order.
    pub fn ranges<'d>(&self, def: &'d ContainerDef) -> Vec<&'d PkRange> {
        let mut ranges = self.targeted_ranges(def);
        if let Some(scope) = &self.scope {
            ranges.retain(|r| r.id == scope.id);
        }
        ranges
    }

    /// The EPK spans this routing reads: each key's logical partition, each hierarchical
    /// prefix's range, or the whole key space; within the scope, if the request gives one.
    pub fn spans(&self, pkdef: &PartitionKeyDefinition) -> Vec<(Epk, Epk)> {
        let spans: Vec<(Epk, Epk)> = match &self.targets {
            Targets::Keys(keys) => keys.iter().map(|k| point_span(k.epk(pkdef))).collect(),
            Targets::Ranges(spans) => spans.clone(),
            Targets::All => vec![(Epk::min(), Epk::max())],
        };
        match &self.scope {
            None => spans,
            Some(scope) => spans
                .into_iter()
                .filter_map(|(min, max)| {
                    let lo = std::cmp::max(min, scope.min_inclusive.clone());
                    let hi = std::cmp::min(max, scope.max_exclusive.clone());
                    (lo < hi).then_some((lo, hi))
                })
                .collect(),
        }
    }

    /// This routing within the physical partition `range` only (see [`Routing::scope`]).
    pub fn scoped(self, range: PkRange) -> Routing {
        Routing {
            reason: format!(
                "{}; the request scopes it to partition key range {}",
                self.reason, range.id
            ),
            scope: Some(range),
            ..self
        }
    }

    /// The live ranges the targets overlap, whatever the scope.
    fn targeted_ranges<'d>(&self, def: &'d ContainerDef) -> Vec<&'d PkRange> {
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
    if let Some(pk) = explicit {
        return route_explicit(def, pk);
    }
    let pkdef = &def.partition_key;
    let all = all_ranges(def);
    let paths = pkdef.paths.join(", ");
    let fan_out = |why: String| Routing {
        kind: RoutingKind::FanOut,
        reason: why,
        targets: Targets::All,
        scope: None,
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
    let terms = bindings(filter, &alias, &pkdef.paths, params);
    // Every alternative must bind the first level, or some items anywhere may match.
    if terms.iter().any(|b| b.levels[0].is_none()) {
        let why = if terms.iter().all(|b| b.levels[0].is_none()) {
            format!("no equality or IN filter on {}", pkdef.paths[0])
        } else {
            format!("an OR branch does not bind {}", pkdef.paths[0])
        };
        return Ok(fan_out(format!("{why}: {all}")));
    }
    let reason = describe_all(&terms);
    let (full, prefixes) = bound_keys(&terms, pkdef);
    Ok(if prefixes.is_empty() {
        route_keys(def, full, &reason)
    } else {
        route_prefixes(def, full, &prefixes, &reason)
    })
}

/// "all 7 ranges", or "its only range" for a container that has one.
fn all_ranges(def: &ContainerDef) -> String {
    match def.ranges.len() {
        1 => "its only range".to_string(),
        n => format!("all {n} ranges"),
    }
}

/// The routing of a request that names a partition key, or a prefix of a hierarchical one.
fn route_explicit(def: &ContainerDef, pk: &Value) -> Result<Routing> {
    let pkdef = &def.partition_key;
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
            scope: None,
        });
    }
    let span = epk::prefix_range(&components, pkdef.paths.len()).map_err(|e| {
        crate::error::Error::bad_request(format!("invalid partition key prefix: {e}"))
    })?;
    let routing = Routing {
        kind: RoutingKind::Targeted,
        reason: String::new(),
        targets: Targets::Ranges(vec![span]),
        scope: None,
    };
    let k = routing.ranges(def).len();
    let n = def.ranges.len();
    Ok(Routing {
        reason: format!("the request names key prefix {pk}: {k} of {n} ranges"),
        ..routing
    })
}

/// The keys the filter's alternatives bind: whole key values, and prefixes of a
/// hierarchical key where an alternative binds only its leading levels (each deduplicated).
fn bound_keys(
    terms: &[Binding],
    pkdef: &PartitionKeyDefinition,
) -> (Vec<PartitionKeyValue>, Vec<Vec<PkComponent>>) {
    let mut full: Vec<PartitionKeyValue> = Vec::new();
    let mut prefixes: Vec<Vec<PkComponent>> = Vec::new();
    let (mut full_seen, mut prefixes_seen) = (HashSet::new(), HashSet::new());
    for term in terms {
        let bound = term.levels.iter().take_while(|l| l.is_some()).count();
        let mut combos: Vec<Vec<PkComponent>> = vec![Vec::new()];
        for values in term.levels.iter().take(bound).flatten() {
            combos = combos
                .iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut next = c.clone();
                        next.push(v.clone());
                        next
                    })
                })
                .collect();
        }
        for combo in combos {
            if bound == pkdef.paths.len() {
                let key = PartitionKeyValue { components: combo };
                if full_seen.insert(key.epk(pkdef)) {
                    full.push(key);
                }
            } else if prefixes_seen.insert(combo.iter().map(component_key).collect::<Vec<_>>()) {
                prefixes.push(combo);
            }
        }
    }
    (full, prefixes)
}

/// The routing to whole key values the filter (described as `reason`) binds.
fn route_keys(def: &ContainerDef, full: Vec<PartitionKeyValue>, reason: &str) -> Routing {
    let count = full.len();
    let routing = Routing {
        kind: if count == 1 {
            RoutingKind::SinglePartition
        } else {
            RoutingKind::Targeted
        },
        reason: String::new(),
        targets: Targets::Keys(full),
        scope: None,
    };
    let (k, n) = (routing.ranges(def).len(), def.ranges.len());
    let reason = if count == 1 {
        format!("{reason} binds the partition key")
    } else {
        format!("{reason} binds {count} partition key values on {k} of {n} ranges")
    };
    Routing { reason, ..routing }
}

/// The routing to prefixes of a hierarchical key, and whole keys beside them: EPK spans,
/// merged where they overlap so that no item is read twice.
fn route_prefixes(
    def: &ContainerDef,
    full: Vec<PartitionKeyValue>,
    prefixes: &[Vec<PkComponent>],
    reason: &str,
) -> Routing {
    let pkdef = &def.partition_key;
    let spans: Vec<(Epk, Epk)> = prefixes
        .iter()
        .filter_map(|c| epk::prefix_range(c, pkdef.paths.len()).ok())
        .chain(full.iter().map(|key| point_span(key.epk(pkdef))))
        .collect();
    let routing = Routing {
        kind: RoutingKind::Targeted,
        reason: String::new(),
        targets: Targets::Ranges(crate::store::index::normalize_spans(spans)),
        scope: None,
    };
    let (k, n) = (routing.ranges(def).len(), def.ranges.len());
    let levels = prefixes.iter().map(Vec::len).max().unwrap_or(0);
    let what = if full.is_empty() && prefixes.len() == 1 {
        format!(
            "a prefix of the hierarchical key ({levels} of {} levels)",
            pkdef.paths.len()
        )
    } else {
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "{} and {}",
            count(prefixes.len(), "key prefix", "key prefixes"),
            count(full.len(), "whole key", "whole keys")
        )
    };
    Routing {
        reason: format!("{reason} binds {what}: {k} of {n} ranges"),
        ..routing
    }
}

/// The EPK span of one whole key: its EPK and nothing else (EPKs have one length per key
/// definition, so none extends another).
pub fn point_span(e: Epk) -> (Epk, Epk) {
    let mut end = e.as_bytes().to_vec();
    end.push(0xFF);
    (e, Epk(end))
}

/// Alternatives past which the planner stops expanding a filter (an AND of ORs multiplies
/// them) and reads everything instead.
const MAX_ALTERNATIVES: usize = 1024;

/// One alternative of a filter as far as the partition key is concerned: per key level, the
/// values it pins the level to (`None`: any value), and the words for the terms that do.
#[derive(Clone)]
struct Binding {
    levels: Vec<Option<Vec<PkComponent>>>,
    terms: Vec<String>,
}

impl Binding {
    fn free(paths: usize) -> Binding {
        Binding {
            levels: vec![None; paths],
            terms: Vec::new(),
        }
    }

    /// Both alternatives at once. Where both pin a level, to the values they share; if they
    /// share none the conjunction matches nothing, and keeping one side's values routes to
    /// a superset, which the filter then empties.
    fn and(&self, other: &Binding) -> Binding {
        let levels = self
            .levels
            .iter()
            .zip(&other.levels)
            .map(|(a, b)| match (a, b) {
                (Some(x), Some(y)) => {
                    let in_y: HashSet<ComponentKey> = y.iter().map(component_key).collect();
                    let shared: Vec<PkComponent> = x
                        .iter()
                        .filter(|v| in_y.contains(&component_key(v)))
                        .cloned()
                        .collect();
                    Some(if shared.is_empty() { x.clone() } else { shared })
                }
                (Some(x), None) | (None, Some(x)) => Some(x.clone()),
                (None, None) => None,
            })
            .collect();
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        Binding { levels, terms }
    }
}

/// The filter `e` as a union of alternatives over key equalities: its disjunctive form, as
/// the service's query plan derives partition key ranges from it (AND intersects, OR
/// unites: the .NET SDK's query plan baselines list one range per alternative). A term
/// that is not an equality or IN on a key path with valid key values pins nothing.
fn bindings(
    e: &Expr,
    alias: &str,
    paths: &[String],
    params: &HashMap<String, Val>,
) -> Vec<Binding> {
    let free = || vec![Binding::free(paths.len())];
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => {
            let (left, right) = (
                bindings(a, alias, paths, params),
                bindings(b, alias, paths, params),
            );
            if left.len().saturating_mul(right.len()) > MAX_ALTERNATIVES {
                return free();
            }
            left.iter()
                .flat_map(|x| right.iter().map(move |y| x.and(y)))
                .collect()
        }
        ExprKind::Binary(BinaryOp::Or, a, b) => {
            let mut all = bindings(a, alias, paths, params);
            all.extend(bindings(b, alias, paths, params));
            if all.len() > MAX_ALTERNATIVES {
                return free();
            }
            all
        }
        _ => {
            for (i, path) in paths.iter().enumerate() {
                if let Some(values) = pinned_values(e, alias, path, params) {
                    let mut binding = Binding::free(paths.len());
                    binding.levels[i] = Some(values);
                    binding.terms.push(describe(e, alias, path));
                    return vec![binding];
                }
            }
            free()
        }
    }
}

/// In words, the terms that bind the key: `c.pk = "a" and c.b = 1`, alternatives joined
/// by `or` (a few; past that, counted).
fn describe_all(terms: &[Binding]) -> String {
    let each = |b: &Binding| b.terms.join(" and ");
    match terms {
        [one] => each(one),
        few if few.len() <= 4 => few
            .iter()
            .map(|b| {
                if b.terms.len() > 1 {
                    format!("({})", each(b))
                } else {
                    each(b)
                }
            })
            .collect::<Vec<_>>()
            .join(" or "),
        many => format!("an OR of {} alternatives", many.len()),
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

/// The key values `path = v` or `path IN (...)` pins the path to, when all are constants
/// that can be key values (an array, object or undefined can't: then nothing is pinned,
/// and the query plan reads everything, as its baselines show for `= []` and `= {}`).
fn pinned_values(
    e: &Expr,
    alias: &str,
    path: &str,
    params: &HashMap<String, Val>,
) -> Option<Vec<PkComponent>> {
    let values: Vec<Val> = match &e.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) => {
            if is_path(a, alias, path) {
                vec![constant(b, params)?]
            } else if is_path(b, alias, path) {
                vec![constant(a, params)?]
            } else {
                return None;
            }
        }
        ExprKind::In {
            expr,
            list,
            negated: false,
        } if is_path(expr, alias, path) => list
            .iter()
            .map(|x| constant(x, params))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let mut out: Vec<PkComponent> = Vec::with_capacity(values.len());
    let mut seen: HashSet<ComponentKey> = HashSet::with_capacity(values.len());
    for v in &values {
        let c = component(v)?;
        if seen.insert(component_key(&c)) {
            out.push(c);
        }
    }
    // `IN ()` pins nothing the router can use.
    (!out.is_empty()).then_some(out)
}

/// A key component as a value to hash and compare: two components are one key value when
/// these are equal. Numbers go by their bits, since `0` and `-0` hash to different EPKs.
type ComponentKey = (u8, u64, String);

fn component_key(c: &PkComponent) -> ComponentKey {
    match c {
        PkComponent::Undefined => (0, 0, String::new()),
        PkComponent::Null => (1, 0, String::new()),
        PkComponent::Bool(b) => (2, u64::from(*b), String::new()),
        PkComponent::Number(n) => (3, n.to_bits(), String::new()),
        PkComponent::String(s) => (4, 0, s.clone()),
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
        _ => format!("a filter on {p}"),
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
