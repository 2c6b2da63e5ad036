//! Index access paths: which parts of a filter an index can answer, and with which lookups.
//!
//! A WHERE clause is split into its top-level conjuncts. A conjunct is *sargable* when it
//! compares one document path with constants in a way the index's value order answers:
//! `=`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`, `STARTSWITH` (case-sensitive),
//! `IS_DEFINED`, `ARRAY_CONTAINS` with a scalar, and ORs of those. Paths may go through a
//! JOIN alias (`JOIN t IN c.tags WHERE t.name = 'x'` reads `/tags/[]/name`). Lookups return
//! candidates, a superset of the matching items that the executor filters again, so an
//! approximate entry (a long string cut short, an array position stored as `[]`) costs a
//! load, never a wrong result. Where every conjunct's lookups are exact (see
//! [`Resolver::answers_exactly`]) the candidates are the matching items, and the filter
//! does not run again.
//!
//! This module also decides which index *specs* a filter or ORDER BY relies on
//! (`/name/?`, `/a ASC, /b DESC`) for the index metrics.

use std::ops::Bound;

use crate::query::eval::env::Env;
use crate::query::eval::value::Val;
use crate::query::run::result::{CompositeIndexMetric, IndexMetrics, SingleIndexMetric};
use crate::query::syntax::ast::{BinaryOp, Expr, ExprKind, JoinSource, Literal, Query};
use crate::store::index::{
    PathHasher, PathId, Term, ValueBound, encode, encode_string_prefix, is_truncated, tag,
};
use crate::store::indexing::{CompiledPolicy, PathSegment};

/// A path of the document a query expression reads.
#[derive(Debug, Clone)]
pub struct DocPath {
    pub id: PathId,
    /// The path with concrete positions (a JOIN's `[]` becomes position 0), for policy
    /// decisions.
    pub concrete: Vec<PathSegment>,
    /// Whether the path iterates an array (through a JOIN or ARRAY_CONTAINS): its entries
    /// must exist for every position.
    pub any_position: bool,
    /// The spec the index metrics name: `/a/b/?`, `/tags/[]/name/?`.
    pub spec: String,
    /// Whether the path starts at a JOIN alias rather than the document.
    pub via_join: bool,
}

impl DocPath {
    /// Whether `policy` indexes this path for every document the lookup must find.
    pub fn indexed_by(&self, policy: &CompiledPolicy) -> bool {
        !self.concrete.is_empty()
            && policy.is_indexed(&self.concrete)
            && (!self.any_position || !policy.has_positional_rules())
    }
}

/// One range of values of one path.
#[derive(Debug, Clone)]
pub struct Lookup {
    pub path: PathId,
    pub lo: ValueBound,
    pub hi: ValueBound,
}

/// A conjunct the index can answer: a union of lookups (empty: nothing can match).
#[derive(Debug, Clone)]
pub struct Probe<'q> {
    pub conjunct: &'q Expr,
    pub paths: Vec<DocPath>,
    pub lookups: Vec<Lookup>,
    /// The lookups select exactly the items the conjunct is true for, not a superset (see
    /// [`Resolver::answers_exactly`]).
    pub exact: bool,
}

impl Probe<'_> {
    pub fn indexed_by(&self, policy: &CompiledPolicy) -> bool {
        self.paths.iter().all(|p| p.indexed_by(policy))
    }
}

/// The top-level conjuncts of a filter.
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => {
            let mut out = conjuncts(a);
            out.extend(conjuncts(b));
            out
        }
        _ => vec![e],
    }
}

/// Resolves paths of one query: the document alias and JOIN aliases over its arrays.
pub struct Resolver<'q> {
    root: &'q str,
    /// Per JOIN alias: its source, and whether the JOIN iterates it (`x IN c.tags` binds
    /// the elements at `/tags/[]`; `c.tags x` binds the value at `/tags` itself).
    joins: Vec<(&'q str, &'q Expr, bool)>,
    /// Where the index read cuts strings: constants are encoded as its entries are.
    string_bytes: usize,
}

impl<'q> Resolver<'q> {
    pub fn new(q: &'q Query, root: &'q str, string_bytes: usize) -> Resolver<'q> {
        let joins = q
            .joins
            .iter()
            .filter_map(|j| match &j.source {
                JoinSource::In(e) => Some((j.alias.as_str(), e, true)),
                JoinSource::Value(e) => Some((j.alias.as_str(), e, false)),
                JoinSource::Subquery(_) => None,
            })
            .collect();
        Resolver {
            root,
            joins,
            string_bytes,
        }
    }

    /// The document path `e` reads, if it is one.
    pub fn path(&self, e: &Expr) -> Option<DocPath> {
        let mut hasher = PathHasher::default();
        let mut concrete = Vec::new();
        let mut spec = String::new();
        let mut any_position = false;
        self.walk(
            e,
            &mut hasher,
            &mut concrete,
            &mut spec,
            &mut any_position,
            0,
        )?;
        if concrete.is_empty() {
            return None;
        }
        spec.push_str("/?");
        let via_join = self
            .joins
            .iter()
            .any(|(alias, ..)| root_ident(e) == Some(*alias));
        Some(DocPath {
            id: hasher.finish(),
            concrete,
            any_position,
            spec,
            via_join,
        })
    }

    fn walk(
        &self,
        e: &Expr,
        h: &mut PathHasher,
        concrete: &mut Vec<PathSegment>,
        spec: &mut String,
        any: &mut bool,
        depth: usize,
    ) -> Option<()> {
        // JOIN aliases nest at most as deep as the query has JOINs.
        if depth > self.joins.len() + 64 {
            return None;
        }
        match &e.kind {
            ExprKind::Ident(n) if n == self.root => Some(()),
            ExprKind::Ident(n) => {
                let (_, source, iterates) = self.joins.iter().rev().find(|(a, ..)| a == n)?;
                self.walk(source, h, concrete, spec, any, depth + 1)?;
                if *iterates {
                    h.any_index();
                    concrete.push(PathSegment::Index(0));
                    spec.push_str("/[]");
                    *any = true;
                }
                Some(())
            }
            ExprKind::Property(base, name) => {
                self.walk(base, h, concrete, spec, any, depth + 1)?;
                h.property(name);
                concrete.push(PathSegment::Property(name.clone()));
                spec.push('/');
                spec.push_str(&spec_name(name));
                Some(())
            }
            ExprKind::Index(base, idx) => {
                self.walk(base, h, concrete, spec, any, depth + 1)?;
                match &idx.kind {
                    ExprKind::Literal(Literal::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => {
                        h.any_index();
                        concrete.push(PathSegment::Index(*n as usize));
                        spec.push_str("/[]");
                    }
                    ExprKind::Literal(Literal::String(name)) => {
                        h.property(name);
                        concrete.push(PathSegment::Property(name.to_string()));
                        spec.push('/');
                        spec.push_str(&spec_name(name));
                    }
                    _ => return None,
                }
                Some(())
            }
            _ => None,
        }
    }

    /// The probe for one conjunct, if the index can answer it.
    pub fn probe<'e>(&self, conjunct: &'e Expr, env: &Env) -> Option<Probe<'e>> {
        let mut paths = Vec::new();
        let mut lookups = Vec::new();
        self.collect(conjunct, env, &mut paths, &mut lookups)?;
        Some(Probe {
            conjunct,
            exact: self.answers_exactly(conjunct, &paths, env),
            paths,
            lookups,
        })
    }

    /// Whether the lookups [`Self::collect`] makes for `conjunct` (reading `paths`) select
    /// exactly the items it is true for, so that a filter of such conjuncts need not run
    /// again on the items they select: `=` or `IN` with scalars that are no cut strings, or
    /// `<`, `<=`, `>`, `>=`, `BETWEEN` with numbers or booleans, on a property path of the
    /// document (no array step: `[]` entries stand for every position, and no JOIN alias).
    /// Everything else may select more (a cut string, an array's type tag, `STARTSWITH`
    /// past the cut length, an OR the index answers in parts) and is filtered again.
    fn answers_exactly(&self, conjunct: &Expr, paths: &[DocPath], env: &Env) -> bool {
        let [path] = paths else {
            return false;
        };
        let plain = !path.any_position
            && !path.via_join
            && path
                .concrete
                .iter()
                .all(|s| matches!(s, PathSegment::Property(_)));
        let equal_to =
            |v: Option<Val>| v.is_some_and(|v| finite(&v) && self.exact_scalar(&v).is_some());
        let ordered_by = |v: Option<Val>| match v {
            Some(Val::Num(n)) => n.is_finite(),
            Some(Val::Bool(_)) => true,
            _ => false,
        };
        let number = |e: &Expr| matches!(constant(e, env), Some(Val::Num(n)) if n.is_finite());
        plain
            && match &conjunct.kind {
                // One side is the path (a path is no constant), the other the value.
                ExprKind::Binary(op, a, b) => {
                    let value = constant(b, env).or_else(|| constant(a, env));
                    match op {
                        BinaryOp::Eq => equal_to(value),
                        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                            ordered_by(value)
                        }
                        _ => false,
                    }
                }
                ExprKind::Between {
                    low,
                    high,
                    negated: false,
                    ..
                } => number(low) && number(high),
                ExprKind::In {
                    list,
                    negated: false,
                    ..
                } => list.iter().all(|item| equal_to(constant(item, env))),
                _ => false,
            }
    }

    /// The filter's conjuncts as (path, encoded value) when every one is `path = scalar`
    /// (`c.a = 1 AND c.b = 'x'`) on a document path, each value encoded exactly (no cut
    /// string): the index entries under those values are exactly the matching documents.
    pub fn equalities(&self, filter: &Expr, env: &Env) -> Option<Vec<(DocPath, Vec<u8>)>> {
        conjuncts(filter)
            .into_iter()
            .map(|conjunct| {
                let ExprKind::Binary(BinaryOp::Eq, a, b) = &conjunct.kind else {
                    return None;
                };
                let (path, value) = match (self.path(a), constant(b, env)) {
                    (Some(p), Some(v)) => (p, v),
                    _ => (self.path(b)?, constant(a, env)?),
                };
                let enc = self.exact_scalar(&value)?;
                (!path.any_position && !path.via_join).then_some((path, enc))
            })
            .collect()
    }

    fn collect(
        &self,
        e: &Expr,
        env: &Env,
        paths: &mut Vec<DocPath>,
        out: &mut Vec<Lookup>,
    ) -> Option<()> {
        let constant = |e: &Expr| constant(e, env);
        match &e.kind {
            ExprKind::Binary(BinaryOp::Or, a, b) => {
                self.collect(a, env, paths, out)?;
                self.collect(b, env, paths, out)
            }
            ExprKind::Binary(
                op @ (BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge),
                a,
                b,
            ) => {
                let (path, value, op) = match (self.path(a), constant(b)) {
                    (Some(p), Some(v)) => (p, v, *op),
                    _ => (self.path(b)?, constant(a)?, flip(*op)),
                };
                out.extend(self.compare(path.id, op, &value));
                paths.push(path);
                Some(())
            }
            ExprKind::In {
                expr,
                list,
                negated: false,
            } => {
                let path = self.path(expr)?;
                for item in list {
                    out.extend(self.compare(path.id, BinaryOp::Eq, &constant(item)?));
                }
                paths.push(path);
                Some(())
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated: false,
            } => {
                let path = self.path(expr)?;
                let (low, high) = (constant(low)?, constant(high)?);
                if let (Some(lo), Some(hi)) = (self.exact(&low), self.exact(&high))
                    && low.type_order() == high.type_order()
                    && scalar(&low)
                {
                    out.push(Lookup {
                        path: path.id,
                        lo: Bound::Included(lo),
                        hi: Bound::Included(hi),
                    });
                }
                paths.push(path);
                Some(())
            }
            ExprKind::Call {
                name,
                args,
                udf: false,
            } => self.collect_call(name, args, env, paths, out),
            _ => None,
        }
    }
    /// [`Self::collect`] for a built-in function call the index answers: `IS_DEFINED`,
    /// case-sensitive `STARTSWITH` and `ARRAY_CONTAINS` of a scalar.
    fn collect_call(
        &self,
        name: &str,
        args: &[Expr],
        env: &Env,
        paths: &mut Vec<DocPath>,
        out: &mut Vec<Lookup>,
    ) -> Option<()> {
        let constant = |e: &Expr| constant(e, env);
        let flag_false = |i: usize| match args.get(i) {
            None => Some(true),
            Some(a) => Some(matches!(constant(a)?, Val::Bool(false))),
        };
        match name {
            "IS_DEFINED" if args.len() == 1 => {
                let path = self.path(&args[0])?;
                out.push(Lookup {
                    path: path.id,
                    lo: Bound::Unbounded,
                    hi: Bound::Unbounded,
                });
                paths.push(path);
                Some(())
            }
            "STARTSWITH" if flag_false(2)? => {
                let path = self.path(args.first()?)?;
                // A non-string prefix makes STARTSWITH undefined: nothing matches.
                if let Val::Str(prefix) = constant(args.get(1)?)? {
                    let mut lo = Vec::new();
                    encode_string_prefix(&prefix, self.string_bytes, &mut lo);
                    let hi = crate::store::keys::prefix_end(&lo)?;
                    out.push(Lookup {
                        path: path.id,
                        lo: Bound::Included(lo),
                        hi: Bound::Excluded(hi),
                    });
                }
                paths.push(path);
                Some(())
            }
            "ARRAY_CONTAINS" if flag_false(2)? => {
                let array = self.path(args.first()?)?;
                let value = constant(args.get(1)?)?;
                if !scalar(&value) && !value.is_undefined() {
                    return None; // objects match partially; arrays deeply
                }
                let mut element = array.clone();
                let mut h = hasher_of(&array.concrete);
                h.any_index();
                element.id = h.finish();
                element.concrete.push(PathSegment::Index(0));
                element.any_position = true;
                element.spec = format!("{}/[]/?", array.spec.trim_end_matches("/?"));
                out.extend(self.compare(element.id, BinaryOp::Eq, &value));
                paths.push(element);
                Some(())
            }
            _ => None,
        }
    }
}

/// The hasher state of a resolved path (paths are short; hashing twice is cheap).
pub fn hasher_of(concrete: &[PathSegment]) -> PathHasher {
    let mut h = PathHasher::default();
    for s in concrete {
        match s {
            PathSegment::Property(n) => h.property(n),
            PathSegment::Index(_) => h.any_index(),
        }
    }
    h
}

fn root_ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Property(b, _) | ExprKind::Index(b, _) => root_ident(b),
        _ => None,
    }
}

/// How a property name appears in an index spec.
fn spec_name(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        other => other,
    }
}

/// The value of a literal or parameter operand.
fn constant(e: &Expr, env: &Env) -> Option<Val> {
    matches!(e.kind, ExprKind::Literal(_) | ExprKind::Param(_)).then(|| env.eval(e, &[]))
}

/// Not a number JSON cannot hold (the index stores those under no value that compares).
fn finite(v: &Val) -> bool {
    !matches!(v, Val::Num(n) if !n.is_finite())
}

fn scalar(v: &Val) -> bool {
    matches!(v, Val::Null | Val::Bool(_) | Val::Num(_) | Val::Str(_))
}

/// First and past-last tags of the type a comparison with `v` stays within.
fn type_span(v: &Val) -> (u8, u8) {
    match v {
        Val::Bool(_) => (tag::FALSE, tag::NUMBER),
        Val::Num(_) => (tag::NUMBER, tag::STRING),
        Val::Str(_) => (tag::STRING, tag::ARRAY),
        _ => (tag::NULL, tag::FALSE),
    }
}

/// Constants encoded as the index read holds them.
impl Resolver<'_> {
    /// The encoding of a scalar constant that stands for it alone: not a string cut at the
    /// index's length, which stands for every string it begins.
    fn exact_scalar(&self, v: &Val) -> Option<Vec<u8>> {
        self.exact(v).filter(|e| scalar(v) && !is_truncated(e))
    }

    /// The encoded value of a constant; arrays and objects by their type tag.
    fn exact(&self, v: &Val) -> Option<Vec<u8>> {
        let term = match v {
            Val::Undefined => return None,
            Val::Null => Term::Null,
            Val::Bool(b) => Term::Bool(*b),
            Val::Num(n) => Term::Number(*n),
            Val::Str(s) => Term::Str(s),
            Val::Arr(_) => Term::Array,
            Val::Obj(_) => Term::Object,
        };
        let mut out = Vec::new();
        encode(term, self.string_bytes, &mut out);
        Some(out)
    }

    /// Lookups for `path op value`; none when the comparison can never be true.
    fn compare(&self, path: PathId, op: BinaryOp, value: &Val) -> Option<Lookup> {
        let enc = self.exact(value)?;
        if op == BinaryOp::Eq {
            return Some(Lookup {
                path,
                lo: Bound::Included(enc.clone()),
                hi: Bound::Included(enc),
            });
        }
        // Ordering comparisons are defined within null, booleans, numbers and strings.
        if !scalar(value) {
            return None;
        }
        let (first, end) = type_span(value);
        // A cut string stands for many: keep its entries on both sides.
        let inclusive = is_truncated(&enc);
        let (lo, hi) = match op {
            BinaryOp::Lt if inclusive => (Bound::Included(vec![first]), Bound::Included(enc)),
            BinaryOp::Lt => (Bound::Included(vec![first]), Bound::Excluded(enc)),
            BinaryOp::Le => (Bound::Included(vec![first]), Bound::Included(enc)),
            BinaryOp::Gt if inclusive => (Bound::Included(enc), Bound::Excluded(vec![end])),
            BinaryOp::Gt => (Bound::Excluded(enc), Bound::Excluded(vec![end])),
            _ => (Bound::Included(enc), Bound::Excluded(vec![end])),
        };
        Some(Lookup { path, lo, hi })
    }
}

// ---------------------------------------------------------------------------------------
// Index metrics (the content of `x-ms-cosmos-index-utilization`)
// ---------------------------------------------------------------------------------------

/// The index metrics of `q` under `policy` (paths the queries may rely on) and the
/// container's composite indexes (`/a ASC`-style spec lists), from the probes of the
/// filter's conjuncts.
pub fn index_metrics_of(
    q: &Query,
    resolver: &Resolver,
    probes: &[Probe],
    policy: &CompiledPolicy,
    composites: &[Vec<String>],
) -> IndexMetrics {
    let mut m = IndexMetrics::default();
    let mut equality_specs: Vec<String> = Vec::new();
    {
        for probe in probes {
            let conjunct = probe.conjunct;
            let text = render_filter(conjunct);
            for path in &probe.paths {
                let metric = SingleIndexMetric {
                    filter_expression: text.clone(),
                    index_spec: path.spec.clone(),
                    filter_precise_set: true,
                    index_precise_set: !path.any_position,
                    index_impact_score: "High",
                };
                let list = if path.indexed_by(policy) {
                    &mut m.utilized_single_indexes
                } else {
                    &mut m.potential_single_indexes
                };
                if !list.contains(&metric) {
                    list.push(metric);
                }
                if matches!(conjunct.kind, ExprKind::Binary(BinaryOp::Eq, ..)) && !path.any_position
                {
                    equality_specs.push(path.spec.trim_end_matches("/?").to_string());
                }
            }
        }
    }
    let order: Option<Vec<String>> = q
        .order_by
        .iter()
        .map(|o| {
            let p = resolver.path(&o.expr)?;
            let dir = if o.descending { "DESC" } else { "ASC" };
            Some(format!("{} {dir}", p.spec.trim_end_matches("/?")))
        })
        .collect();
    let Some(order) = order.filter(|o| !o.is_empty()) else {
        return m;
    };
    // A composite index also serves the query with every direction reversed.
    let exists = |specs: &[String]| {
        let flipped = reversed(specs);
        composites.iter().any(|c| c == specs || *c == flipped)
    };
    if order.len() > 1 {
        let metric = CompositeIndexMetric {
            index_specs: order.clone(),
            index_precise_set: true,
            index_impact_score: "High",
        };
        if exists(&order) {
            m.utilized_composite_indexes.push(metric);
        } else {
            m.potential_composite_indexes.push(metric);
        }
    } else {
        // A filter with equality plus an ORDER BY is served best by a composite index of
        // the filtered paths followed by the sort path (index-policy.md).
        let mut specs: Vec<String> = equality_specs.iter().map(|p| format!("{p} ASC")).collect();
        specs.dedup();
        if !specs.is_empty() {
            specs.push(order[0].clone());
            let metric = CompositeIndexMetric {
                index_specs: specs.clone(),
                index_precise_set: true,
                index_impact_score: "High",
            };
            if exists(&specs) {
                m.utilized_composite_indexes.push(metric);
            } else {
                m.potential_composite_indexes.push(metric);
            }
        }
    }
    m
}

/// `/a ASC, /b DESC` → `/a DESC, /b ASC`.
fn reversed(specs: &[String]) -> Vec<String> {
    specs
        .iter()
        .map(|s| match s.strip_suffix(" ASC") {
            Some(p) => format!("{p} DESC"),
            None => format!("{} ASC", s.trim_end_matches(" DESC")),
        })
        .collect()
}

/// A sargable conjunct as the service prints it: `(ROOT.n = 4)`.
fn render_filter(e: &Expr) -> String {
    fn operand(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Literal(l) => crate::query::eval::expr::literal(l)
                .to_json()
                .map_or("undefined".into(), |j| j.to_string()),
            ExprKind::Param(p) => format!("@{p}"),
            _ => crate::query::syntax::print::path(e).unwrap_or_else(|| "…".into()),
        }
    }
    let body = match &e.kind {
        ExprKind::Binary(op, a, b) => {
            let op = match op {
                BinaryOp::Eq => "=",
                BinaryOp::Lt => "<",
                BinaryOp::Le => "<=",
                BinaryOp::Gt => ">",
                BinaryOp::Ge => ">=",
                BinaryOp::Or => "OR",
                _ => "?",
            };
            if matches!(op, "OR") {
                format!("{} OR {}", render_filter(a), render_filter(b))
            } else {
                format!("{} {op} {}", operand(a), operand(b))
            }
        }
        ExprKind::In { expr, list, .. } => format!(
            "{} IN ({})",
            operand(expr),
            list.iter().map(operand).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Between {
            expr, low, high, ..
        } => format!(
            "{} BETWEEN {} AND {}",
            operand(expr),
            operand(low),
            operand(high)
        ),
        ExprKind::Call { name, args, .. } => format!(
            "{name}({})",
            args.iter().map(operand).collect::<Vec<_>>().join(", ")
        ),
        _ => operand(e),
    };
    format!("({body})")
}
