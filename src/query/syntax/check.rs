//! Semantic checks of a parsed query, run before planning: every name bound, every function
//! known and called with the right number of arguments, aggregates only where the service
//! allows them, the GROUP BY rules, ORDER BY on document paths, TOP/OFFSET/LIMIT counts, and
//! the per-query limits. Each failure is a 400 positioned at the offending node, saying what is
//! wrong and how to fix it.
//!
//! Sources: from.md (binding and aliasing rules; `FROM c.children` without an alias binds
//! `children`), select.md and join.md (`SELECT *` needs exactly one input set), group-by.md
//! (what SELECT and GROUP BY may hold; no ORDER BY with GROUP BY; no aggregate over a grouped
//! subquery), order-by.md (sorting on a property path), subquery.md (only correlated
//! subqueries), concepts-limits.md (10 JOINs and 10 UDFs per query). Where several errors
//! exist, the one earliest in the text is reported. Messages keep the service's wording where
//! it is known ("Identifier 'x' could not be resolved.", "'SELECT *' is not valid if FROM
//! clause is omitted", "ORDER BY item expression could not be mapped to a document path") and
//! add a hint. Checks that need the container (indexes, partitioning) or parameter values are
//! left to the planner and executor.

use crate::error::Error;
use crate::query::eval::functions::{self, FnKind};
use crate::query::eval::udf::MAX_UDFS_PER_QUERY;
use crate::query::syntax::ast::{
    Expr, ExprKind, FromKind, JoinSource, Literal, OrderItem, PathStep, Pos, Query, SelectKind,
};
use crate::query::syntax::lexer::{edit_distance, error_at};
use crate::query::syntax::print;

/// The service's limit on JOINs in one query (concepts-limits.md).
pub const MAX_JOINS: usize = 10;
/// Largest TOP/OFFSET/LIMIT literal accepted: every integer up to here is exact in a double.
const MAX_COUNT: f64 = 9_007_199_254_740_991.0;

/// Checks `q`; the first problem in text order becomes a 400 at its position.
pub fn check(q: &Query) -> Result<(), Error> {
    let mut cx = Checker::default();
    cx.query(q, &[], false);
    if cx.joins > MAX_JOINS
        && let Some(pos) = cx.join_over_limit
    {
        cx.fail(
            pos,
            format!(
                "the query has {} JOINs; the limit is {MAX_JOINS} per query — \
                 move some filtering into EXISTS subqueries",
                cx.joins
            ),
        );
    }
    match cx
        .errors
        .into_iter()
        .min_by_key(|(pos, _)| (pos.line, pos.column))
    {
        Some((pos, message)) => Err(error_at(pos, message)),
        None => Ok(()),
    }
}

#[derive(Default)]
struct Checker {
    errors: Vec<(Pos, String)>,
    /// Distinct UDFs called so far.
    udfs: std::collections::BTreeSet<String>,
    joins: usize,
    join_over_limit: Option<Pos>,
}

/// Where an expression sits, for aggregate rules and messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Select,
    Where,
    GroupBy,
    OrderBy,
    /// The scoring function of `ORDER BY RANK`.
    Rank,
    From,
    Join,
}

impl Place {
    fn clause(self) -> &'static str {
        match self {
            Place::Select => "the SELECT list",
            Place::Where => "WHERE",
            Place::GroupBy => "GROUP BY",
            Place::OrderBy => "ORDER BY",
            Place::Rank => "ORDER BY RANK",
            Place::From => "FROM",
            Place::Join => "a JOIN",
        }
    }
}

/// Names visible to an expression, plus what is needed for helpful "unresolved" hints.
struct Scope<'a> {
    names: Vec<String>,
    /// The query has a FROM clause, or is a subquery with outer names.
    has_source: bool,
    query: &'a Query,
}

#[derive(Clone, Copy)]
struct Ctx {
    place: Place,
    /// Inside the arguments of an aggregate.
    in_aggregate: bool,
}

impl Checker {
    fn fail(&mut self, pos: Pos, message: impl Into<String>) {
        self.errors.push((pos, message.into()));
    }

    /// Checks one query level. `outer` holds the names of enclosing queries (correlation);
    /// `nested` is true for subqueries.
    fn query(&mut self, q: &Query, outer: &[String], nested: bool) {
        let mut bound = self.source_bindings(q, outer, nested);
        self.join_bindings(q, outer, &mut bound);

        let mut names = outer.to_vec();
        names.extend(bound);
        let scope = Scope {
            names,
            has_source: q.from.is_some() || nested,
            query: q,
        };

        self.select(q, &scope);
        if let Some(filter) = &q.filter {
            self.expr(filter, &scope, Ctx::at(Place::Where));
        }
        self.group_by(q, &scope);
        self.order_by(q, &scope);
        if !q.group_by.is_empty()
            && let Some(first) = q.order_by.first()
        {
            self.fail(
                first.pos,
                "ORDER BY can't be combined with GROUP BY (group-by.md); remove the ORDER BY, \
                 or sort the grouped results on the client",
            );
        }
        self.grouping(q);
        self.aggregate_over_grouped_subquery(q);
        if let Some(top) = &q.select.top {
            self.count(top, "TOP");
        }
        if let Some(ol) = &q.offset_limit {
            self.count(&ol.offset, "OFFSET");
            self.count(&ol.limit, "LIMIT");
        }
    }

    /// Checks the FROM source; returns the name it binds, if any.
    fn source_bindings(&mut self, q: &Query, outer: &[String], nested: bool) -> Vec<String> {
        let mut bound: Vec<String> = Vec::new();
        let Some(from) = &q.from else {
            return bound;
        };
        match &from.kind {
            FromKind::Container { name, path, alias } => {
                if nested && !outer.contains(name) {
                    self.fail(
                        from.pos,
                        format!(
                            "Identifier '{name}' could not be resolved. A subquery can only \
                             read values of the outer query (only correlated subqueries are \
                             supported), as in FROM t IN c.tags"
                        ),
                    );
                }
                match (alias, path.last()) {
                    (Some(a), _) => bound.push(a.clone()),
                    (None, None) => bound.push(name.clone()),
                    // from.md: without an alias, `FROM c.children` binds `children`.
                    (None, Some(PathStep::Property(p))) => bound.push(p.clone()),
                    (None, Some(PathStep::Index(_))) => {}
                }
            }
            FromKind::In { alias, expr } => {
                let names = if nested {
                    outer.to_vec()
                } else {
                    // At the top level the root of the path names the container itself.
                    root_ident(expr)
                        .map(|r| vec![r.to_string()])
                        .unwrap_or_default()
                };
                let scope = Scope {
                    names,
                    has_source: true,
                    query: q,
                };
                self.expr(expr, &scope, Ctx::at(Place::From));
                bound.push(alias.clone());
            }
            FromKind::Subquery { query, alias } => {
                // At the top level a FROM subquery reads the container itself.
                self.query(query, outer, nested);
                bound.push(alias.clone());
            }
        }
        bound
    }

    /// Checks the JOINs, adding the names they bind to `bound`.
    fn join_bindings(&mut self, q: &Query, outer: &[String], bound: &mut Vec<String>) {
        for join in &q.joins {
            self.joins += 1;
            if self.joins == MAX_JOINS + 1 {
                self.join_over_limit = Some(join.pos);
            }
            let mut visible = outer.to_vec();
            visible.extend(bound.iter().cloned());
            match &join.source {
                JoinSource::In(expr) | JoinSource::Value(expr) => {
                    let scope = Scope {
                        names: visible,
                        has_source: true,
                        query: q,
                    };
                    self.expr(expr, &scope, Ctx::at(Place::Join));
                }
                JoinSource::Subquery(sub) => self.subquery(sub, &visible),
            }
            if bound.contains(&join.alias) {
                self.fail(
                    join.pos,
                    format!(
                        "the alias '{}' is already used in this FROM clause; every FROM and JOIN \
                         alias must be unique, so choose another name",
                        join.alias
                    ),
                );
            }
            bound.push(join.alias.clone());
        }
    }

    /// GROUP BY items: each reads the input and holds no subquery.
    fn group_by(&mut self, q: &Query, scope: &Scope) {
        for g in &q.group_by {
            self.expr(g, scope, Ctx::at(Place::GroupBy));
            if let Some(sub) = find(g, &|e| {
                matches!(
                    e.kind,
                    ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::ArraySubquery(_)
                )
            }) {
                self.fail(
                    sub.pos,
                    "GROUP BY can't contain a subquery; group by a property or an expression \
                     over properties",
                );
            } else if find(g, &|e| matches!(e.kind, ExprKind::Ident(_))).is_none() {
                self.fail(
                    g.pos,
                    "each GROUP BY expression must reference a property of the input, such as \
                     c.category",
                );
            }
        }
    }

    /// ORDER BY items: document paths, aggregates or vector distances; a scoring function
    /// after RANK.
    fn order_by(&mut self, q: &Query, scope: &Scope) {
        for o in &q.order_by {
            if o.rank {
                self.expr(&o.expr, scope, Ctx::at(Place::Rank));
                self.rank(o);
                continue;
            }
            self.expr(&o.expr, scope, Ctx::at(Place::OrderBy));
            if !o.expr.is_document_path()
                && find(&o.expr, &|e| aggregate_name(e).is_some()).is_none()
                && !is_call(&o.expr, "VECTORDISTANCE")
            {
                // order-by.md: sorting works on a property name or a computed property;
                // vectordistance.md: or on a vector similarity score.
                self.fail(
                    o.pos,
                    "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped \
                     to a document path. Sort by a property such as c.name, or define a computed \
                     property for the expression and sort by that",
                );
            }
        }
    }

    fn subquery(&mut self, q: &Query, outer: &[String]) {
        self.query(q, outer, true);
    }

    fn select(&mut self, q: &Query, scope: &Scope) {
        let ctx = Ctx::at(Place::Select);
        match &q.select.kind {
            SelectKind::Star => {
                if q.from.is_none() {
                    self.fail(
                        q.select.pos,
                        "'SELECT *' is not valid if FROM clause is omitted; add FROM c, or list \
                         the values to return",
                    );
                } else if !q.joins.is_empty() {
                    self.fail(
                        q.select.pos,
                        "'SELECT *' is only valid with a single input set, and this query joins \
                         several; list what to return instead, such as SELECT c.id, t.name",
                    );
                } else if !q.group_by.is_empty() {
                    self.fail(
                        q.select.pos,
                        "'SELECT *' can't be used with GROUP BY; select the grouped expressions \
                         and aggregates",
                    );
                }
            }
            SelectKind::Value(e) => self.expr(e, scope, ctx),
            SelectKind::Items(items) => {
                for item in items {
                    self.expr(&item.expr, scope, ctx);
                }
            }
        }
    }

    /// GROUP BY (group-by.md): SELECT may hold only grouped expressions, aggregates and
    /// constants. A SELECT with an aggregate and no GROUP BY is one group, so the same rule
    /// applies to it.
    fn grouping(&mut self, q: &Query) {
        let Some(selected) = selected(q) else {
            return;
        };
        let aggregated = selected
            .iter()
            .any(|e| find(e, &|x| aggregate_name(x).is_some()).is_some());
        if q.group_by.is_empty() && !aggregated {
            return;
        }
        for e in selected {
            if let Some(bad) = ungrouped(e, &q.group_by) {
                let what = match print::path(bad) {
                    Some(text) => format!("'{text}'"),
                    None => "this expression".to_string(),
                };
                let message = if matches!(
                    bad.kind,
                    ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::ArraySubquery(_)
                ) {
                    "a subquery can't be used in the SELECT list of a query with GROUP BY or \
                     aggregates; compute it in a JOIN instead"
                        .to_string()
                } else if q.group_by.is_empty() {
                    format!(
                        "{what} is selected next to an aggregate but is not aggregated; wrap it \
                         in an aggregate such as MAX(...), or add GROUP BY {}",
                        print::path(bad).unwrap_or_else(|| "...".to_string())
                    )
                } else {
                    format!(
                        "{what} is not in the GROUP BY clause; with GROUP BY the SELECT list may \
                         only use the grouped expressions, aggregates and constants"
                    )
                };
                self.fail(bad.pos, message);
            }
        }
    }

    /// group-by.md: "Queries with an aggregate system function and a subquery with GROUP BY
    /// aren't supported."
    fn aggregate_over_grouped_subquery(&mut self, q: &Query) {
        let Some(selected) = selected(q) else {
            return;
        };
        let Some(aggregate) = selected
            .iter()
            .find_map(|e| find(e, &|x| aggregate_name(x).is_some()))
        else {
            return;
        };
        let from_sub = q.from.as_ref().and_then(|f| match &f.kind {
            FromKind::Subquery { query, .. } => Some(&**query),
            _ => None,
        });
        let join_subs = q.joins.iter().filter_map(|j| match &j.source {
            JoinSource::Subquery(sub) => Some(&**sub),
            JoinSource::In(_) | JoinSource::Value(_) => None,
        });
        if from_sub
            .into_iter()
            .chain(join_subs)
            .any(|sub| !sub.group_by.is_empty())
        {
            let name = aggregate_name(aggregate).unwrap_or("an aggregate");
            self.fail(
                aggregate.pos,
                format!(
                    "{name} can't aggregate over a subquery with GROUP BY (not supported, \
                     group-by.md); aggregate inside the subquery instead"
                ),
            );
        }
    }

    /// TOP, OFFSET or LIMIT: a non-negative integer literal or a parameter.
    fn count(&mut self, e: &Expr, clause: &str) {
        match &e.kind {
            ExprKind::Param(_) => {}
            ExprKind::Literal(Literal::Number(n)) => {
                if *n < 0.0 || n.fract() != 0.0 || *n > MAX_COUNT {
                    self.fail(
                        e.pos,
                        format!(
                            "the {clause} count must be a non-negative integer, not {}",
                            print::number(*n)
                        ),
                    );
                }
            }
            _ => self.fail(
                e.pos,
                format!("the {clause} count must be a non-negative integer or a parameter"),
            ),
        }
    }

    fn expr(&mut self, e: &Expr, scope: &Scope, ctx: Ctx) {
        match &e.kind {
            ExprKind::Ident(name) => {
                if !scope.names.iter().any(|n| n == name) {
                    let hint = unresolved_hint(name, scope, ctx.place);
                    self.fail(
                        e.pos,
                        format!("Identifier '{name}' could not be resolved. {hint}"),
                    );
                }
            }
            ExprKind::Call { name, args, udf } => {
                self.call(e, name, args, *udf, ctx);
                let inner = Ctx {
                    in_aggregate: ctx.in_aggregate || aggregate_name(e).is_some(),
                    ..ctx
                };
                for a in args {
                    self.expr(a, scope, inner);
                }
            }
            ExprKind::Exists(q) | ExprKind::ArraySubquery(q) | ExprKind::Subquery(q) => {
                self.subquery(q, &scope.names);
            }
            _ => {
                for child in children(e) {
                    self.expr(child, scope, ctx);
                }
            }
        }
    }

    /// `ORDER BY RANK` takes one scoring function; RRF fuses scoring functions, optionally
    /// followed by an array of weights (order-by-rank.md, rrf.md).
    fn rank(&mut self, o: &OrderItem) {
        const SCORES: &str = "FullTextScore, VectorDistance or RRF";
        let ExprKind::Call { name, args, .. } = &o.expr.kind else {
            self.fail(
                o.expr.pos,
                format!("ORDER BY RANK takes a scoring function: {SCORES}"),
            );
            return;
        };
        match name.as_str() {
            "FULLTEXTSCORE" | "VECTORDISTANCE" => {}
            "RRF" => {
                let (weights, scores) = match args.split_last() {
                    Some((last, rest)) if matches!(last.kind, ExprKind::Array(_)) => {
                        (Some(last), rest)
                    }
                    _ => (None, &args[..]),
                };
                for a in scores {
                    if !is_call(a, "FULLTEXTSCORE") && !is_call(a, "VECTORDISTANCE") {
                        self.fail(
                            a.pos,
                            "each argument of RRF is a scoring function (FullTextScore or \
                             VectorDistance), optionally followed by an array of weights",
                        );
                    }
                }
                if scores.len() < 2 {
                    self.fail(
                        o.expr.pos,
                        "RRF fuses two or more scoring functions (FullTextScore or VectorDistance)",
                    );
                }
                if let Some(w) = weights
                    && let ExprKind::Array(items) = &w.kind
                    && let Some(bad) = items.iter().find(|i| {
                        matches!(&i.kind, ExprKind::Literal(l) if !matches!(l, Literal::Number(_)))
                    })
                {
                    self.fail(bad.pos, "RRF's weights are numbers, one per scoring function");
                } else if let Some(w) = weights
                    && let ExprKind::Array(items) = &w.kind
                    && items.len() != scores.len()
                {
                    self.fail(
                        w.pos,
                        format!(
                            "RRF has {} scoring functions but {} weights; give one weight per \
                             function",
                            scores.len(),
                            items.len()
                        ),
                    );
                }
            }
            _ => self.fail(
                o.expr.pos,
                format!("ORDER BY RANK takes a scoring function: {SCORES}"),
            ),
        }
    }

    fn call(&mut self, e: &Expr, name: &str, args: &[Expr], udf: bool, ctx: Ctx) {
        if udf {
            // Whether the container has it is the engine's check, when it runs the query.
            self.udfs.insert(name.to_string());
            if self.udfs.len() > MAX_UDFS_PER_QUERY {
                self.fail(
                    e.pos,
                    format!(
                        "the query calls more than {MAX_UDFS_PER_QUERY} user-defined \
                         functions, the service's limit per query"
                    ),
                );
            }
            return;
        }
        let Some(spec) = functions::lookup(name) else {
            self.fail(e.pos, unknown_function(name));
            return;
        };
        let n = args.len();
        if n < spec.min_args || n > spec.max_args {
            self.fail(e.pos, arity_message(name, spec.min_args, spec.max_args, n));
        }
        if SCORE_ONLY.contains(&name) && ctx.place != Place::Rank {
            // fulltextscore.md, rrf.md: scores exist only to rank results.
            self.fail(
                e.pos,
                format!(
                    "{name} can only be used in an ORDER BY RANK clause{}; it can't be part of \
                     {}. Filter with FullTextContains instead",
                    if name == "FULLTEXTSCORE" {
                        " or as an argument of RRF"
                    } else {
                        ""
                    },
                    ctx.place.clause()
                ),
            );
        }
        if spec.kind == FnKind::Aggregate {
            if ctx.in_aggregate {
                self.fail(
                    e.pos,
                    format!(
                        "aggregate functions can't be nested: {name} is inside another aggregate"
                    ),
                );
            } else if ctx.place != Place::Select {
                self.fail(
                    e.pos,
                    format!(
                        "the aggregate {name} can't be used in {}; aggregates may appear only \
                         in the SELECT list (filter on an aggregate with a subquery, as in \
                         WHERE (SELECT VALUE COUNT(1) FROM t IN c.tags) > 2)",
                        ctx.place.clause()
                    ),
                );
            }
        }
    }
}

impl Ctx {
    fn at(place: Place) -> Ctx {
        Ctx {
            place,
            in_aggregate: false,
        }
    }
}

/// The expressions of the SELECT list; `None` for `SELECT *`.
fn selected(q: &Query) -> Option<Vec<&Expr>> {
    match &q.select.kind {
        SelectKind::Star => None,
        SelectKind::Value(e) => Some(vec![e]),
        SelectKind::Items(items) => Some(items.iter().map(|i| &i.expr).collect()),
    }
}

/// Functions whose value is a score for `ORDER BY RANK` only.
const SCORE_ONLY: [&str; 2] = ["FULLTEXTSCORE", "RRF"];

/// Whether `e` calls the built-in function `name` (upper case).
pub(crate) fn is_call(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Call { name: n, udf: false, .. } if n == name)
}

/// The identifier at the root of a path expression (`c` in `c.children[0]`).
fn root_ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Property(b, _) | ExprKind::Index(b, _) => root_ident(b),
        _ => None,
    }
}

/// The upper-case name of an aggregate call.
fn aggregate_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Call {
            name, udf: false, ..
        } => functions::lookup(name)
            .filter(|s| s.kind == FnKind::Aggregate)
            .map(|s| s.name),
        _ => None,
    }
}

/// The first node of `e` (pre-order, not entering subqueries) matching `pred`.
fn find<'e>(e: &'e Expr, pred: &dyn Fn(&Expr) -> bool) -> Option<&'e Expr> {
    if pred(e) {
        return Some(e);
    }
    children(e).into_iter().find_map(|c| find(c, pred))
}

/// Direct sub-expressions (subqueries are opaque).
fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Literal(_)
        | ExprKind::Param(_)
        | ExprKind::Ident(_)
        | ExprKind::Exists(_)
        | ExprKind::ArraySubquery(_)
        | ExprKind::Subquery(_) => Vec::new(),
        ExprKind::Property(b, _) | ExprKind::Unary(_, b) => vec![b],
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => vec![a, b],
        ExprKind::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        ExprKind::In { expr, list, .. } => std::iter::once(&**expr).chain(list).collect(),
        ExprKind::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            let mut v: Vec<&Expr> = vec![expr, pattern];
            v.extend(escape.as_deref());
            v
        }
        ExprKind::Ternary(a, b, c) => vec![a, b, c],
        ExprKind::Call { args, .. } | ExprKind::Array(args) => args.iter().collect(),
        ExprKind::Object(members) => members.iter().map(|(_, v)| v).collect(),
    }
}

/// The outermost part of `e` that is neither grouped, aggregated nor constant.
fn ungrouped<'e>(e: &'e Expr, groups: &[Expr]) -> Option<&'e Expr> {
    if groups.iter().any(|g| same(g, e)) || aggregate_name(e).is_some() {
        return None;
    }
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
        ExprKind::Ident(_) => Some(e),
        // A path is fine when a grouped expression is its prefix (`c.a.b` under GROUP BY c.a);
        // otherwise the whole path is what to report.
        ExprKind::Property(base, _) => ungrouped(base, groups).map(|_| e),
        ExprKind::Index(base, index) => match ungrouped(base, groups) {
            Some(_) => Some(e),
            None => ungrouped(index, groups),
        },
        ExprKind::Exists(_) | ExprKind::ArraySubquery(_) | ExprKind::Subquery(_) => Some(e),
        _ => children(e).into_iter().find_map(|c| ungrouped(c, groups)),
    }
}

/// Structural equality that ignores positions (for matching SELECT against GROUP BY).
fn same(a: &Expr, b: &Expr) -> bool {
    use ExprKind as K;
    let all =
        |x: &[Expr], y: &[Expr]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q));
    match (&a.kind, &b.kind) {
        (K::Literal(x), K::Literal(y)) => x == y,
        (K::Param(x), K::Param(y)) | (K::Ident(x), K::Ident(y)) => x == y,
        (K::Property(x, p), K::Property(y, q)) => p == q && same(x, y),
        (K::Index(x, i), K::Index(y, j)) => same(x, y) && same(i, j),
        (K::Unary(o, x), K::Unary(p, y)) => o == p && same(x, y),
        (K::Binary(o, x1, x2), K::Binary(p, y1, y2)) => o == p && same(x1, y1) && same(x2, y2),
        (
            K::Between {
                expr: e1,
                low: l1,
                high: h1,
                negated: n1,
            },
            K::Between {
                expr: e2,
                low: l2,
                high: h2,
                negated: n2,
            },
        ) => n1 == n2 && same(e1, e2) && same(l1, l2) && same(h1, h2),
        (
            K::In {
                expr: e1,
                list: l1,
                negated: n1,
            },
            K::In {
                expr: e2,
                list: l2,
                negated: n2,
            },
        ) => n1 == n2 && same(e1, e2) && all(l1, l2),
        (
            K::Like {
                expr: e1,
                pattern: p1,
                escape: s1,
                negated: n1,
            },
            K::Like {
                expr: e2,
                pattern: p2,
                escape: s2,
                negated: n2,
            },
        ) => {
            n1 == n2
                && same(e1, e2)
                && same(p1, p2)
                && match (s1, s2) {
                    (None, None) => true,
                    (Some(x), Some(y)) => same(x, y),
                    _ => false,
                }
        }
        (K::Ternary(a1, b1, c1), K::Ternary(a2, b2, c2)) => {
            same(a1, a2) && same(b1, b2) && same(c1, c2)
        }
        (
            K::Call {
                name: n1,
                args: a1,
                udf: u1,
            },
            K::Call {
                name: n2,
                args: a2,
                udf: u2,
            },
        ) => n1 == n2 && u1 == u2 && all(a1, a2),
        (K::Object(m1), K::Object(m2)) => {
            m1.len() == m2.len()
                && m1
                    .iter()
                    .zip(m2)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        (K::Array(x), K::Array(y)) => all(x, y),
        _ => false,
    }
}

/// The hint after "Identifier 'x' could not be resolved."
fn unresolved_hint(name: &str, scope: &Scope, place: Place) -> String {
    let q = scope.query;
    let lower = name.to_ascii_lowercase();
    if matches!(lower.as_str(), "true" | "false" | "null" | "undefined") {
        return format!("Literals are lower-case: write {lower}.");
    }
    if !scope.has_source {
        return format!(
            "This query has no FROM clause, so '{name}' refers to nothing; add one, as in \
             FROM {name}, or use a literal or a @parameter."
        );
    }
    if let Some(similar) = scope.names.iter().find(|n| n.eq_ignore_ascii_case(name)) {
        return format!("Names are case-sensitive: did you mean '{similar}'?");
    }
    if let Some(from) = &q.from {
        match &from.kind {
            FromKind::Container {
                name: container,
                alias: Some(alias),
                ..
            } if container == name => {
                return format!(
                    "The container is aliased as '{alias}' in FROM, and once aliased its \
                     original name can't be used: write {alias} instead."
                );
            }
            FromKind::Container {
                name: container,
                path,
                alias: None,
            } if container == name && !path.is_empty() => {
                return format!(
                    "FROM {} narrows each item to a part of it, so '{name}' is not bound; give \
                     the source an alias, as in FROM {} AS x, and refer to x.",
                    print::container_path(container, path),
                    print::container_path(container, path)
                );
            }
            FromKind::In { expr, .. } if root_ident(expr) == Some(name) => {
                let source = print::path(expr).unwrap_or_else(|| format!("{name}..."));
                return format!(
                    "FROM x IN {source} binds only x; to use the whole item too, write \
                     FROM {name} JOIN x IN {source}."
                );
            }
            _ => {}
        }
    }
    if let SelectKind::Items(items) = &q.select.kind
        && place != Place::Select
        && items.iter().any(|i| i.alias.as_deref() == Some(name))
    {
        return format!(
            "'{name}' is an alias of the SELECT list, and {} can't refer to SELECT aliases; \
             repeat the expression instead.",
            place.clause()
        );
    }
    match scope.names.last() {
        Some(alias) => format!(
            "Properties must be qualified with an alias bound in FROM or JOIN: write \
             {alias}.{name} if '{name}' is a property."
        ),
        None => "Bind it in FROM or JOIN first.".to_string(),
    }
}

/// "Unknown function" with the closest known name.
fn unknown_function(name: &str) -> String {
    let names = functions::names();
    // Common spellings from other SQL dialects.
    let alias = match name {
        "LEN" | "CHAR_LENGTH" => Some("LENGTH"),
        "SUBSTR" => Some("SUBSTRING"),
        "NOW" | "GETDATE" | "GETUTCDATE" | "SYSDATETIME" | "CURRENT_TIMESTAMP" => {
            Some("GETCURRENTDATETIME")
        }
        "CHARINDEX" | "INSTR" | "STRPOS" => Some("INDEX_OF"),
        "TOLOWER" | "LCASE" => Some("LOWER"),
        "TOUPPER" | "UCASE" => Some("UPPER"),
        "CEIL" => Some("CEILING"),
        "POW" => Some("POWER"),
        "ARRAY_LEN" | "CARDINALITY" => Some("ARRAY_LENGTH"),
        _ => None,
    }
    .filter(|a| names.contains(a));
    let coalesce = matches!(name, "COALESCE" | "ISNULL" | "NVL" | "IFNULL");
    let closest = names
        .iter()
        .map(|n| (edit_distance(name, n), *n))
        .filter(|(d, n)| *d <= (n.len() / 3).max(1))
        .min();
    let mut message = format!("'{name}' is not a recognized built-in function name.");
    if coalesce {
        message.push_str(" Use the ?? operator instead: c.a ?? c.b.");
    } else if let Some(a) = alias {
        message.push_str(&format!(" Did you mean {a}?"));
    } else if let Some((_, n)) = closest {
        message.push_str(&format!(" Did you mean {n}?"));
    }
    message.push_str(" User-defined functions are called as udf.name(...).");
    message
}

fn arity_message(name: &str, min: usize, max: usize, given: usize) -> String {
    let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
    let expects = if min == max {
        if min == 0 {
            "takes no arguments".to_string()
        } else {
            format!("takes {min} {}", plural(min))
        }
    } else if max == usize::MAX {
        format!("takes at least {min} {}", plural(min))
    } else {
        format!("takes {min} to {max} arguments")
    };
    let verb = if given == 1 { "was" } else { "were" };
    format!("{name} {expects}, but {given} {verb} given")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arity_messages_read_naturally() {
        assert_eq!(
            arity_message("PI", 0, 0, 1),
            "PI takes no arguments, but 1 was given"
        );
        assert_eq!(
            arity_message("ABS", 1, 1, 2),
            "ABS takes 1 argument, but 2 were given"
        );
        assert_eq!(
            arity_message("CONTAINS", 2, 3, 1),
            "CONTAINS takes 2 to 3 arguments, but 1 was given"
        );
        assert_eq!(
            arity_message("CONCAT", 2, usize::MAX, 0),
            "CONCAT takes at least 2 arguments, but 0 were given"
        );
    }
}
