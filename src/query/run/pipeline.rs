//! Executing a query over a stream of root documents: FROM and JOIN expansion, WHERE,
//! GROUP BY and aggregates, projection, ORDER BY, DISTINCT, OFFSET/LIMIT and TOP.
//!
//! The same pipeline runs the top-level query (its documents come from the store, range by
//! range) and correlated subqueries (their FROM iterates values of the outer row). Running
//! every routed range through one pipeline gives exactly the result the service's
//! cross-partition merge produces (ORDER BY merge, combined aggregates, global DISTINCT,
//! GROUP BY, OFFSET/LIMIT and TOP).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::query::eval::budget::{Budget, approx_bytes};
use crate::query::eval::env::Env;
use crate::query::eval::expr::{Params, Sink, aggregate_key, eval};
use crate::query::eval::functions::{self, FnContext, FnKind};
use crate::query::eval::value::{Val, total_cmp};
use crate::query::read::demand::Demand;
use crate::query::read::extract::extract;
use crate::query::search::fulltext::FullTextScores;
use crate::query::search::rank::Ranking;
use crate::query::syntax::ast::{
    Expr, ExprKind, FromKind, JoinSource, PathStep, Query, SelectKind,
};
use crate::query::syntax::names::{from_alias, leftmost_ident, root_name};

pub type Bindings = Vec<(String, Val)>;

/// The environment of one execution, whose subqueries run through this pipeline, under
/// `budget` when it is a page of a container's query.
pub fn env<'a>(
    params: &'a Params,
    ctx: &'a FnContext,
    full_text: Option<&'a OnceCell<FullTextScores>>,
    budget: Option<&'a Budget<'a>>,
) -> Env<'a> {
    Env {
        params,
        ctx,
        full_text,
        subquery: run_subquery,
        budget,
    }
}

/// Runs a correlated subquery (its FROM reads the outer row's values), handing its results
/// to `sink`. One whose results come in row order (see [`in_row_order`]) hands each over
/// as its row is read, so a sink that has its answer (EXISTS, a scalar subquery,
/// ARRAY_CONTAINS) stops the reading, and so do TOP and LIMIT; others are computed whole
/// first. A page that runs out of budget stops it too (the page then discards the row).
fn run_subquery(env: &Env, q: &Query, outer: &[(String, Val)], sink: &mut Sink) {
    let mut state = Run::new(q, env);
    if !in_row_order(q) {
        for row in rows_of(q, None, outer, env) {
            if env.stopped() {
                return;
            }
            state.push(row);
        }
        for v in state.finish() {
            if sink(v).is_break() {
                return;
            }
        }
        return;
    }
    let window = state.window(usize::MAX);
    if window.is_empty() {
        return;
    }
    let mut results = 0;
    for row in rows_of(q, None, outer, env) {
        if env.stopped() {
            return;
        }
        if !state.push(row).is_result() {
            continue;
        }
        let Some(v) = state.take_last_value() else {
            continue;
        };
        results += 1;
        if results <= window.start {
            continue; // OFFSET skips it
        }
        if sink(v).is_break() || results >= window.end {
            return;
        }
    }
}

/// Whether a query's results come in the order its rows are read, one per row at most:
/// nothing orders, groups, aggregates or deduplicates them (TOP and OFFSET/LIMIT only cut a
/// window out of them).
pub fn in_row_order(q: &Query) -> bool {
    q.order_by.is_empty()
        && q.group_by.is_empty()
        && !q.select.distinct
        && select_aggregates(q).is_empty()
}

fn navigate(mut v: Val, path: &[PathStep]) -> Val {
    for step in path {
        v = match step {
            PathStep::Property(p) => v.get(p),
            PathStep::Index(i) => v.index(*i as f64),
        };
    }
    v
}

/// The FROM and JOIN rows one root document (or, without a document, the outer row of a
/// subquery) expands to; each row is the outer bindings plus this query's aliases. JOINs are
/// expanded as the rows are taken (see [`JoinRows`]).
pub fn rows_of<'q, 'e>(
    q: &'q Query,
    doc: Option<&Val>,
    outer: &[(String, Val)],
    env: &'e Env<'e>,
) -> JoinRows<'q, 'e> {
    let mut base: Bindings = outer.to_vec();
    let rows: Vec<Bindings> = match &q.from {
        None => vec![base],
        Some(from) => match &from.kind {
            FromKind::Container { name, path, .. } => {
                let root = match doc {
                    Some(d) => d.clone(),
                    None => outer
                        .iter()
                        .rev()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default(),
                };
                let v = navigate(root, path);
                if v.is_undefined() {
                    Vec::new()
                } else {
                    base.push((from_alias(q).unwrap_or(name).to_string(), v));
                    vec![base]
                }
            }
            FromKind::In { alias, expr } => {
                if let (Some(d), Some(root)) = (doc, leftmost_ident(expr)) {
                    base.push((root.to_string(), d.clone()));
                }
                match env.eval(expr, &base) {
                    Val::Arr(items) => items
                        .iter()
                        .map(|item| {
                            let mut b = base.clone();
                            b.push((alias.clone(), item.clone()));
                            b
                        })
                        .collect(),
                    _ => Vec::new(),
                }
            }
            FromKind::Subquery { query, alias } => {
                let inner = match doc {
                    Some(d) => {
                        let mut b = base.clone();
                        if let Some(root) = root_name(query) {
                            b.push((root, d.clone()));
                        }
                        let mut state = Run::new(query, env);
                        for row in rows_of(query, Some(d), &base, env) {
                            state.push(row);
                        }
                        state.finish()
                    }
                    None => env.subquery(query, &base),
                };
                inner
                    .into_iter()
                    .map(|v| {
                        let mut b = base.clone();
                        b.push((alias.clone(), v));
                        b
                    })
                    .collect()
            }
        },
    };
    expand_joins(q, rows, env)
}

/// Applies the query's JOINs to FROM rows (a cross product with each JOIN's values).
pub fn expand_joins<'q, 'e>(
    q: &'q Query,
    rows: Vec<Bindings>,
    env: &'e Env<'e>,
) -> JoinRows<'q, 'e> {
    JoinRows {
        q,
        env,
        bases: rows.into_iter(),
        stack: Vec::new(),
    }
}

/// The rows of FROM × each JOIN in the service's order (FROM row, then the first JOIN's
/// values, then the next JOIN's, ...), produced one at a time: a JOIN's values are read when
/// the row they extend is reached, so TOP or a full page stops the expansion, and the cross
/// product of several JOINs over long arrays is never held in memory.
pub struct JoinRows<'q, 'e> {
    q: &'q Query,
    env: &'e Env<'e>,
    bases: std::vec::IntoIter<Bindings>,
    /// Per JOIN entered: the row it extends and its values not yet taken.
    stack: Vec<(Bindings, std::vec::IntoIter<Val>)>,
}

impl JoinRows<'_, '_> {
    /// The values JOIN number `j` binds for `row`.
    fn values(&self, j: usize, row: &Bindings) -> std::vec::IntoIter<Val> {
        let values = match &self.q.joins[j].source {
            JoinSource::In(expr) => match self.env.eval(expr, row) {
                Val::Arr(items) => items.to_vec(),
                _ => Vec::new(),
            },
            JoinSource::Value(expr) => match self.env.eval(expr, row) {
                Val::Undefined => Vec::new(),
                v => vec![v],
            },
            JoinSource::Subquery(sub) => self.env.subquery(sub, row),
        };
        values.into_iter()
    }
}

impl Iterator for JoinRows<'_, '_> {
    type Item = Bindings;

    fn next(&mut self) -> Option<Bindings> {
        loop {
            let j = self.stack.len().wrapping_sub(1);
            let Some((row, values)) = self.stack.last_mut() else {
                let base = self.bases.next()?;
                if self.q.joins.is_empty() {
                    return Some(base);
                }
                let values = self.values(0, &base);
                self.stack.push((base, values));
                continue;
            };
            let Some(v) = values.next() else {
                self.stack.pop();
                continue;
            };
            // Room for the new binding up front: a clone has none, and growing it costs a
            // reallocation per row.
            let mut extended = Vec::with_capacity(row.len() + 1);
            extended.extend(row.iter().cloned());
            extended.push((self.q.joins[j].alias.clone(), v));
            if j + 1 == self.q.joins.len() {
                return Some(extended);
            }
            let values = self.values(j + 1, &extended);
            self.stack.push((extended, values));
        }
    }
}

/// Whether a query's results stream as rows are read: nothing orders, groups, aggregates,
/// deduplicates or skips them (TOP may still stop the reading).
pub fn streams(q: &Query) -> bool {
    in_row_order(q) && q.offset_limit.is_none()
}

/// Whether each of a query's results comes from one row alone, so rows can be passed on as
/// they are read: it streams ([`streams`]) and no TOP counts them.
pub fn works_item_by_item(q: &Query) -> bool {
    streams(q) && q.select.top.is_none()
}

/// The aggregate calls of a query's SELECT list (not those inside its subqueries).
pub fn select_aggregates(q: &Query) -> Vec<&Expr> {
    let mut out = Vec::new();
    match &q.select.kind {
        SelectKind::Value(e) => collect_aggregates(e, &mut out),
        SelectKind::Items(items) => items
            .iter()
            .for_each(|i| collect_aggregates(&i.expr, &mut out)),
        SelectKind::Star => {}
    }
    out
}

/// Aggregate calls of an expression tree (not descending into subqueries).
/// Whether the SELECT clause aggregates.
pub fn has_aggregate(q: &Query) -> bool {
    !crate::query::run::pipeline::select_aggregates(q).is_empty()
}

pub fn collect_aggregates<'q>(e: &'q Expr, out: &mut Vec<&'q Expr>) {
    match &e.kind {
        ExprKind::Call {
            name,
            args,
            udf: false,
        } => {
            if functions::lookup(name).is_some_and(|s| s.kind == FnKind::Aggregate) {
                out.push(e);
                return;
            }
            args.iter().for_each(|a| collect_aggregates(a, out));
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| collect_aggregates(a, out)),
        ExprKind::Property(b, _) | ExprKind::Unary(_, b) => collect_aggregates(b, out),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            collect_aggregates(a, out);
            collect_aggregates(b, out);
        }
        ExprKind::Between {
            expr, low, high, ..
        } => {
            for x in [expr, low, high] {
                collect_aggregates(x, out);
            }
        }
        ExprKind::In { expr, list, .. } => {
            collect_aggregates(expr, out);
            list.iter().for_each(|a| collect_aggregates(a, out));
        }
        ExprKind::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            collect_aggregates(expr, out);
            collect_aggregates(pattern, out);
            if let Some(e) = escape {
                collect_aggregates(e, out);
            }
        }
        ExprKind::Ternary(a, b, c) => {
            for x in [a, b, c] {
                collect_aggregates(x, out);
            }
        }
        ExprKind::Object(m) => m.iter().for_each(|(_, v)| collect_aggregates(v, out)),
        ExprKind::Array(items) => items.iter().for_each(|v| collect_aggregates(v, out)),
        _ => {}
    }
}

/// Running state of one aggregate over a group.
#[derive(Clone, Default)]
pub struct Acc {
    pub count: u64,
    pub sum: f64,
    /// The result is undefined whatever else comes: a SUM/AVG input that was not a number,
    /// or a MIN/MAX input that was an array or object. (The .NET SDK's reference
    /// interpreter and its cross-partition MIN/MAX merge both treat comparing
    /// non-primitives as undefined; aggregate docs list only number, string, boolean and
    /// null as arguments.)
    pub poisoned: bool,
    pub min: Option<Val>,
    pub max: Option<Val>,
}

impl Acc {
    pub fn add(&mut self, name: &str, v: Val) {
        if v.is_undefined() {
            return;
        }
        match name {
            "COUNT" => self.count += 1,
            "SUM" | "AVG" => match v {
                Val::Num(n) => {
                    self.sum += n;
                    self.count += 1;
                }
                _ => self.poisoned = true,
            },
            "MIN" | "MAX" if matches!(v, Val::Arr(_) | Val::Obj(_)) => self.poisoned = true,
            "MIN" => {
                if self.min.as_ref().is_none_or(|m| total_cmp(&v, m).is_lt()) {
                    self.min = Some(v);
                }
            }
            _ => {
                if self.max.as_ref().is_none_or(|m| total_cmp(&v, m).is_gt()) {
                    self.max = Some(v);
                }
            }
        }
    }

    pub fn value(&self, name: &str) -> Val {
        match name {
            "COUNT" => Val::Num(self.count as f64),
            "SUM" if self.poisoned => Val::Undefined,
            "SUM" => Val::Num(self.sum),
            "AVG" if self.poisoned || self.count == 0 => Val::Undefined,
            "AVG" => Val::Num(self.sum / self.count as f64),
            _ if self.poisoned => Val::Undefined,
            "MIN" => self.min.clone().unwrap_or_default(),
            _ => self.max.clone().unwrap_or_default(),
        }
    }
}

/// What [`Run::push`] did with a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// The filter did not give `true`.
    Filtered,
    /// It passed the filter but projects to undefined: no result.
    Undefined,
    /// It passed the filter and counts as a result (or went into a group).
    Result,
}

impl Pushed {
    pub fn passed(self) -> bool {
        self != Pushed::Filtered
    }

    pub fn is_result(self) -> bool {
        self == Pushed::Result
    }
}

/// A result of [`Run::finish_rows`].
pub enum Output {
    Value(Val),
    /// A whole stored item (`SELECT *` materialized late).
    Stored(Arc<[u8]>),
}

/// A candidate result: its ORDER BY keys, its projected value, and for late-materialized
/// `SELECT *` the stored item it will be parsed from.
type OutRow = (Vec<Val>, Val, Option<Arc<[u8]>>);

struct Group {
    /// The first row of the group: grouped expressions evaluate against it.
    row: Bindings,
    accs: Vec<Acc>,
}

/// One query's pipeline state: rows go in with [`Run::push`], results come out of
/// [`Run::finish`].
pub struct Run<'q, 'e> {
    q: &'q Query,
    env: &'e Env<'e>,
    aggregates: Vec<&'q Expr>,
    grouped: bool,
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    /// Candidate results of a non-grouped query.
    out: Vec<OutRow>,
    /// With ORDER BY and TOP (or OFFSET/LIMIT), only this many rows can reach the result:
    /// keep the best ones while scanning instead of sorting everything at the end.
    bound: Option<usize>,
    /// The ORDER BY keys of the worst row kept at the last pruning.
    threshold: Option<Vec<Val>>,
    /// Per ORDER BY key: descending (and, after [`Run::break_ties_by_position`], the three
    /// position keys).
    descending: Vec<bool>,
    /// Where the item being fed sits, as ORDER BY ties are broken: its range's place among
    /// the routed ranges and its document number (see [`Run::break_ties_by_position`]), then
    /// the caller's tag of where it came from, which never decides (see [`Run::set_position`]).
    position: Option<[f64; 3]>,
    /// When the ORDER BY is a score (search): how rows are scored.
    ranking: Option<Ranking<'q>>,
    /// Rows that passed the filter.
    pub matched: u64,
    /// The rows come from items an index lookup selected exactly as the filter does (see
    /// [`Run::filter_answered`]): the filter is not evaluated again.
    filter_answered: bool,
    /// About how many bytes the candidate results and groups hold (counted under a
    /// budget only: see [`Run::held_bytes`]).
    held: usize,
}

impl<'q, 'e> Run<'q, 'e> {
    pub fn new(q: &'q Query, env: &'e Env<'e>) -> Run<'q, 'e> {
        let aggregates = select_aggregates(q);
        let grouped = !q.group_by.is_empty() || !aggregates.is_empty();
        let bound = if grouped || q.select.distinct || q.order_by.is_empty() {
            None
        } else {
            result_bound(q, env)
        };
        let ranking = Ranking::of(q, env);
        // Scores are kept "higher is better": each sorts descending. RRF ranks rows against
        // each other, so every row is kept until all are in.
        let (descending, bound) = match &ranking {
            Some(r) if r.fused() => (vec![true], None),
            Some(r) => (vec![true; r.scores_per_row()], bound),
            None => (q.order_by.iter().map(|o| o.descending).collect(), bound),
        };
        Run {
            q,
            env,
            aggregates,
            grouped,
            groups: Vec::new(),
            group_index: HashMap::new(),
            out: Vec::new(),
            bound,
            threshold: None,
            descending,
            position: None,
            ranking,
            matched: 0,
            filter_answered: false,
            held: 0,
        }
    }

    /// Every row pushed from now on passes the filter: the index lookup that selected its
    /// item answers the filter exactly (one row per item, every conjunct an exact probe).
    /// Evaluating it again would cost a tenth of such a query and change nothing.
    pub fn filter_answered(&mut self) {
        self.filter_answered = true;
    }

    /// About how many bytes the results and groups kept so far hold, for the memory
    /// budget (0 when the page runs without a budget).
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Counts a kept row's size, under a budget.
    fn hold(&mut self, row: &[(String, Val)], value: &Val, stored: Option<&[u8]>) {
        if self.env.budget.is_some() {
            self.held += stored.map_or(0, <[u8]>::len)
                + approx_bytes(value)
                + row
                    .iter()
                    .map(|(n, v)| n.len() + approx_bytes(v))
                    .sum::<usize>();
        }
    }

    /// Breaks ORDER BY ties as the service does: rows from an earlier range (lower EPKs)
    /// first, then, within a range, in document (`_rid`) order, descending when the index
    /// is scanned in reverse (`reverse_scan`). The .NET SDK's ORDER BY continuation says
    /// "the documents should be in _rid order in the same direction as the index". Rows of
    /// one document (JOIN) keep their order. Without [`Run::set_position`] calls, rows tie
    /// at position zero and keep the order they came in. No effect on a ranked ORDER BY.
    pub fn break_ties_by_position(&mut self, reverse_scan: bool) {
        if self.ranking.is_none() && !self.q.order_by.is_empty() && self.position.is_none() {
            self.descending.extend([false, reverse_scan, false]);
            self.position = Some([0.0; 3]);
        }
    }

    /// Whether the results are the first k of an ORDER BY whose ties are broken by position
    /// ([`Run::break_ties_by_position`]): then which ranges produced them is worth knowing
    /// (see [`Run::finish_rows_with_origins`]).
    pub fn keeps_first_k_by_position(&self) -> bool {
        self.position.is_some() && self.bound.is_some()
    }

    /// The position of the item whose rows come next: its range's place in the routing and
    /// its document number (exact as a double below 2^53). `origin` is the caller's tag of
    /// the item, handed back by [`Run::finish_rows_with_origins`]; the range and document
    /// already tell items apart, so it never changes the order.
    pub fn set_position(&mut self, range: usize, document: u64, origin: usize) {
        if let Some(p) = self.position.as_mut() {
            *p = [range as f64, document as f64, origin as f64];
        }
    }

    fn sub(&self) -> impl Fn(&Query, &[(String, Val)], &mut Sink) + '_ {
        |q: &Query, b: &[(String, Val)], sink: &mut Sink| self.env.subquery_into(q, b, sink)
    }

    /// Feeds one FROM/JOIN row; says whether it passed the filter and made a result.
    pub fn push(&mut self, row: Bindings) -> Pushed {
        self.push_with(&row, None)
    }

    /// Like [`Run::push`] for a borrowed row (a caller can reuse one row buffer).
    pub fn push_ref(&mut self, row: &[(String, Val)]) -> Pushed {
        self.push_with(row, None)
    }

    /// Like [`Run::push`] for `SELECT *` over whole items: the result is the stored item,
    /// parsed only if the row survives ORDER BY/TOP (late materialization), so the row
    /// itself needs only the properties the filter and sort keys read.
    pub fn push_stored(&mut self, row: &[(String, Val)], stored: &[u8]) -> Pushed {
        self.push_with(row, Some(stored))
    }

    fn push_with(&mut self, row: &[(String, Val)], stored: Option<&[u8]>) -> Pushed {
        // Every row any pipeline evaluates counts against the page's budget; a page that
        // ran out stops its scan and its subqueries (see `run_subquery`).
        self.env.tick();
        if let Some(f) = &self.q.filter
            && !self.filter_answered
            && !self.env.eval(f, row).is_true()
        {
            return Pushed::Filtered;
        }
        self.matched += 1;
        if self.grouped {
            let idx = if self.q.group_by.is_empty() && !self.groups.is_empty() {
                // One group for the whole input: no key to build or hash.
                0
            } else {
                let key: Vec<Val> = self
                    .q
                    .group_by
                    .iter()
                    .map(|g| self.env.eval(g, row))
                    .collect();
                let key_text = group_key_text(&key);
                match self.group_index.get(&key_text) {
                    Some(i) => *i,
                    None => {
                        self.hold(row, &Val::Undefined, None);
                        self.groups.push(Group {
                            row: row.to_vec(),
                            accs: vec![Acc::default(); self.aggregates.len()],
                        });
                        self.group_index.insert(key_text, self.groups.len() - 1);
                        self.groups.len() - 1
                    }
                }
            };
            for (i, agg) in self.aggregates.iter().enumerate() {
                if let ExprKind::Call { name, args, .. } = &agg.kind {
                    let v = args
                        .first()
                        .map(|a| self.env.eval(a, row))
                        .unwrap_or_default();
                    self.groups[idx].accs[i].add(name, v);
                }
            }
        } else {
            let keys: Vec<Val> = match &self.ranking {
                Some(r) => r.keys(self.env, row),
                None => self
                    .q
                    .order_by
                    .iter()
                    .map(|o| self.env.eval(&o.expr, row))
                    .chain(self.position.iter().flatten().map(|&n| Val::Num(n)))
                    .collect(),
            };
            // Once `bound` rows are kept, a row that sorts after the worst of them can never
            // reach the result: drop it before projecting or copying anything. Unprojected,
            // it is reported as a result; only a bounded (computed) result's metrics see that.
            if self.cannot_place(&keys) {
                return Pushed::Result;
            }
            match stored {
                Some(bytes) => {
                    self.hold(&[], &Val::Undefined, Some(bytes));
                    self.out
                        .push((keys, Val::Undefined, Some(Arc::from(bytes))));
                }
                None => {
                    let value = self.project(row, None);
                    // `SELECT VALUE` of an undefined expression is no result, so it takes no
                    // place among those TOP, OFFSET/LIMIT and a page count (the .NET SDK's
                    // reference interpreter drops it right after projecting, before DISTINCT
                    // and TOP).
                    if value.is_undefined() {
                        return Pushed::Undefined;
                    }
                    self.hold(&[], &value, None);
                    self.out.push((keys, value, None));
                }
            }
            self.prune();
        }
        Pushed::Result
    }

    /// The JSON size of the result the last row pushed made (a streaming query's rows are
    /// results in push order); 0 for one without a JSON form, which is no result.
    pub fn last_output_len(&self) -> usize {
        match self.out.last() {
            Some((_, _, Some(stored))) => stored.len(),
            Some((_, value, None)) => value
                .to_json()
                .and_then(|j| serde_json::to_vec(&j).ok())
                .map_or(0, |text| text.len()),
            None => 0,
        }
    }

    /// Takes back the result of the last row pushed (a streaming page that would outgrow the
    /// service's response size leaves it to the next page).
    pub fn pop_last(&mut self) {
        if self.out.pop().is_some() {
            self.matched -= 1;
        }
    }

    /// Takes back the value of the last row pushed, to pass it on at once: a subquery that
    /// works item by item (see [`works_item_by_item`]) feeds the outer query as it reads.
    pub fn take_last_value(&mut self) -> Option<Val> {
        let (_, value, _) = self.out.pop()?;
        self.matched -= 1;
        Some(value)
    }

    /// Whether a row with these ORDER BY keys sorts after the `bound` rows already kept.
    fn cannot_place(&self, keys: &[Val]) -> bool {
        match (self.bound, &self.threshold) {
            (Some(k), Some(worst)) => {
                self.out.len() >= k && order_cmp(&self.descending, keys, worst).is_ge()
            }
            _ => false,
        }
    }

    /// Keeps only the best `bound` rows once twice as many are held.
    fn prune(&mut self) {
        if let Some(k) = self.bound
            && self.out.len() >= (2 * k).max(64)
        {
            let dirs = &self.descending;
            self.out.sort_by(|a, b| order_cmp(dirs, &a.0, &b.0));
            self.out.truncate(k);
            self.threshold = self.out.last().map(|r| r.0.clone());
            if self.env.budget.is_some() {
                self.held = self
                    .out
                    .iter()
                    .map(|(_, v, stored)| approx_bytes(v) + stored.as_ref().map_or(0, |s| s.len()))
                    .sum();
            }
        }
    }

    fn project(&self, row: &[(String, Val)], aggregates: Option<&HashMap<usize, Val>>) -> Val {
        let sub = self.sub();
        let scope = self.env.scope(row, aggregates, &sub);
        match &self.q.select.kind {
            SelectKind::Star => match from_alias(self.q) {
                // SELECT * returns the FROM binding itself (the whole item for FROM c).
                Some(alias) if self.q.joins.is_empty() => row
                    .iter()
                    .rev()
                    .find(|(n, _)| n == alias)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default(),
                // With JOINs, * is an object of every alias.
                _ => Val::obj(
                    row.iter()
                        .filter(|(n, _)| self.own_alias(n))
                        .map(|(n, v)| (Arc::from(n.as_str()), v.clone()))
                        .collect(),
                ),
            },
            SelectKind::Value(e) => eval(e, &scope),
            SelectKind::Items(items) => {
                let mut members = Vec::with_capacity(items.len());
                let mut unnamed = 0;
                for item in items {
                    let v = eval(&item.expr, &scope);
                    let name = match (&item.alias, &item.expr.kind) {
                        (Some(a), _) => a.clone(),
                        (None, ExprKind::Property(_, p)) => p.clone(),
                        (None, ExprKind::Ident(n)) => n.clone(),
                        _ => {
                            unnamed += 1;
                            format!("${unnamed}")
                        }
                    };
                    // Undefined members are left out (the `$n` names still count them), as
                    // in an object literal.
                    if !v.is_undefined() {
                        members.push((Arc::from(name.as_str()), v));
                    }
                }
                Val::obj(members)
            }
        }
    }

    fn own_alias(&self, name: &str) -> bool {
        from_alias(self.q) == Some(name) || self.q.joins.iter().any(|j| j.alias == name)
    }

    /// Finishes a query whose aggregates are all `COUNT(<constant>)` with `count` rows,
    /// counted without reading them (from statistics).
    pub fn finish_with_count(mut self, count: u64) -> Vec<Val> {
        let accs = vec![
            Acc {
                count,
                ..Acc::default()
            };
            self.aggregates.len()
        ];
        self.groups.push(Group {
            row: Vec::new(),
            accs,
        });
        self.finish()
    }

    /// Applies grouping, ORDER BY, DISTINCT, OFFSET/LIMIT and TOP; undefined results are
    /// dropped, as the service drops them.
    pub fn finish(self) -> Vec<Val> {
        self.finish_rows()
            .into_iter()
            .map(|r| match r {
                Output::Value(v) => v,
                Output::Stored(bytes) => extract(&bytes, &Demand::All).unwrap_or_default(),
            })
            .collect()
    }

    /// The results OFFSET/LIMIT and TOP keep of `len` results in result order.
    pub fn window(&self, len: usize) -> std::ops::Range<usize> {
        let no_row: Bindings = Vec::new();
        let (mut start, mut end) = (0, len);
        if let Some(ol) = &self.q.offset_limit {
            let offset = count_of(&self.env.eval(&ol.offset, &no_row));
            let limit = count_of(&self.env.eval(&ol.limit, &no_row));
            start = offset.min(len);
            end = start.saturating_add(limit).min(len);
        }
        if let Some(top) = &self.q.select.top {
            end = end.min(start.saturating_add(count_of(&self.env.eval(top, &no_row))));
        }
        start..end
    }

    /// The results of a projection of `FROM c` alone (no grouping, DISTINCT or JOIN) whose
    /// items were not pushed because the index gave them and their order: `items` are the items
    /// (as far as the query reads them) in result order, inside [`Run::window`] already
    /// unless the projection can be undefined (`SELECT VALUE`), which makes no result.
    pub fn finish_presorted_items(&self, items: Vec<Val>) -> Vec<Output> {
        debug_assert!(!self.grouped && !self.q.select.distinct && self.q.joins.is_empty());
        let alias = from_alias(self.q).unwrap_or_default().to_string();
        let mut row = vec![(alias, Val::Undefined)];
        items
            .into_iter()
            .map(|item| {
                row[0].1 = item;
                Output::Value(self.project(&row, None))
            })
            .collect()
    }

    /// Like [`Run::finish`], leaving late-materialized `SELECT *` rows as their stored JSON
    /// so a caller that wants JSON parses each once.
    pub fn finish_rows(self) -> Vec<Output> {
        self.finish_rows_with_origins().0
    }

    /// [`Run::finish_rows`], and the origins (see [`Run::set_position`]; 0 without
    /// positions) of the rows up to the end of the result window, in result order: those an
    /// OFFSET skips too, since the ranges that produced them returned them.
    pub fn finish_rows_with_origins(mut self) -> (Vec<Output>, Vec<usize>) {
        let tagged = self.position.is_some();
        let origin_of = move |keys: &[Val]| match (tagged, keys.last()) {
            (true, Some(Val::Num(n))) => *n as usize,
            _ => 0,
        };
        let mut results: Vec<OutRow> = if self.grouped {
            self.group_rows()
        } else {
            std::mem::take(&mut self.out)
        };
        if let Some(r) = self.ranking.as_ref().filter(|r| r.fused()) {
            r.fuse(results.iter_mut().map(|r| &mut r.0));
        }
        if !self.q.order_by.is_empty() {
            let dirs = &self.descending;
            results.sort_by(|a, b| order_cmp(dirs, &a.0, &b.0));
        }
        let mut values: Vec<(Output, usize)> = results
            .into_iter()
            .filter_map(|(keys, v, stored)| {
                let origin = origin_of(&keys);
                match stored {
                    Some(bytes) => Some((Output::Stored(bytes), origin)),
                    None => (!v.is_undefined()).then_some((Output::Value(v), origin)),
                }
            })
            .collect();
        if self.q.select.distinct {
            values = self.distinct(values);
        }
        let window = self.window(values.len());
        values.truncate(window.end);
        let origins = values.iter().map(|(_, origin)| *origin).collect();
        values.drain(..window.start);
        (values.into_iter().map(|(v, _)| v).collect(), origins)
    }

    /// One row per group, projected with the group's aggregate values.
    fn group_rows(&mut self) -> Vec<OutRow> {
        if self.groups.is_empty() && self.q.group_by.is_empty() {
            // Aggregates without GROUP BY produce one row even over no input.
            self.groups.push(Group {
                row: Vec::new(),
                accs: vec![Acc::default(); self.aggregates.len()],
            });
        }
        let mut groups = std::mem::take(&mut self.groups);
        if self.q.order_by.is_empty()
            && let [key] = self.q.group_by.as_slice()
            && is_container_path(self.q, key)
        {
            // One property path: groups come in the order of its values, as the docs'
            // examples show them (undefined first), the order a range index yields.
            // Several keys keep their groups' first-seen order (group-by.md's third
            // example). Observed in the docs, not stated by them.
            groups = sorted_by_value(groups, |g| self.env.eval(key, &g.row));
        }
        groups
            .iter()
            .map(|g| {
                let values: HashMap<usize, Val> = self
                    .aggregates
                    .iter()
                    .zip(&g.accs)
                    .map(|(e, acc)| {
                        let name = match &e.kind {
                            ExprKind::Call { name, .. } => name.as_str(),
                            _ => "",
                        };
                        (aggregate_key(e), acc.value(name))
                    })
                    .collect();
                (Vec::new(), self.project(&g.row, Some(&values)), None)
            })
            .collect()
    }

    /// Keeps the first of each distinct value.
    fn distinct(&self, mut values: Vec<(Output, usize)>) -> Vec<(Output, usize)> {
        // Stored rows never reach here: DISTINCT projects values.
        let mut seen = std::collections::HashSet::new();
        values.retain(|(o, _)| match o {
            Output::Value(v) => seen.insert(group_key_text(std::slice::from_ref(v))),
            Output::Stored(_) => true,
        });
        // DISTINCT of one property path of the container's items comes in the order of
        // its values, like a GROUP BY on it (keywords.md's example lists undefined first);
        // over an array (`FROM t IN c.tags`) no index orders it (object-array.md's example
        // keeps first-seen order).
        let single = match &self.q.select.kind {
            SelectKind::Value(e) => Some((e, false)),
            SelectKind::Items(items) => match items.as_slice() {
                [item] => Some((&item.expr, true)),
                _ => None,
            },
            SelectKind::Star => None,
        };
        if self.q.order_by.is_empty()
            && let Some((expr, in_object)) = single
            && is_container_path(self.q, expr)
        {
            values = sorted_by_value(values, |(o, _)| match (o, in_object) {
                (Output::Value(v), false) => v.clone(),
                // `{name: value}`, or `{}` where the value is undefined.
                (Output::Value(Val::Obj(members)), true) => {
                    members.first().map(|(_, v)| v.clone()).unwrap_or_default()
                }
                _ => Val::Undefined,
            });
        }
        values
    }
}

/// `items` in the type order of `key` (computed once per item), ties in their order.
fn sorted_by_value<T>(items: Vec<T>, key: impl Fn(&T) -> Val) -> Vec<T> {
    let mut keyed: Vec<(Val, T)> = items.into_iter().map(|t| (key(&t), t)).collect();
    keyed.sort_by(|a, b| total_cmp(&a.0, &b.0));
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// Whether `e` is a property path of the items of `q`'s container (`c.a.b`, `c["a"]`,
/// `c.tags[0]` with `FROM c`, no JOIN): what a range index holds.
fn is_container_path(q: &Query, e: &Expr) -> bool {
    fn root(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(name) => Some(name),
            ExprKind::Property(inner, _) => root(inner),
            ExprKind::Index(inner, at) if matches!(at.kind, ExprKind::Literal(_)) => root(inner),
            _ => None,
        }
    }
    let container = matches!(
        q.from.as_ref().map(|f| &f.kind),
        Some(FromKind::Container { path, .. }) if path.is_empty()
    );
    container && q.joins.is_empty() && root(e).is_some_and(|r| from_alias(q) == Some(r))
}

/// Compares ORDER BY keys: type order, each key in its direction (`dirs[i]`: descending).
fn order_cmp(dirs: &[bool], a: &[Val], b: &[Val]) -> std::cmp::Ordering {
    for (i, desc) in dirs.iter().enumerate() {
        let o = total_cmp(&a[i], &b[i]);
        let o = if *desc { o.reverse() } else { o };
        if o.is_ne() {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}

/// The most results TOP and OFFSET + LIMIT let through (`None` without either). Their counts
/// are checked before a query runs (non-negative integers).
pub fn result_bound(q: &Query, env: &Env) -> Option<usize> {
    let no_row: Bindings = Vec::new();
    let count = |e: &Expr| count_of(&env.eval(e, &no_row));
    let top = q.select.top.as_ref().map(count);
    let window = q
        .offset_limit
        .as_ref()
        .map(|ol| count(&ol.offset).saturating_add(count(&ol.limit)));
    match (top, window) {
        (Some(t), Some(w)) => Some(t.min(w)),
        (t, w) => t.or(w),
    }
}

fn count_of(v: &Val) -> usize {
    match v {
        Val::Num(n) if *n >= 0.0 => *n as usize,
        _ => 0,
    }
}

/// A canonical text of values for grouping and DISTINCT (undefined distinct from null).
pub fn group_key_text(vals: &[Val]) -> String {
    let mut s = String::new();
    for v in vals {
        match v {
            Val::Undefined => s.push('~'),
            other => {
                let j = other.to_json().unwrap_or_default();
                s.push_str(&canonical_json(&j));
            }
        }
        s.push('\u{1}');
    }
    s
}

fn canonical_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(o) => {
            let mut members: Vec<_> = o.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", canonical_json(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical_json).collect::<Vec<_>>().join(",")
        ),
        // -0 = 0, so they are one value for DISTINCT and GROUP BY too.
        serde_json::Value::Number(n) => match n.as_f64().unwrap_or(f64::NAN) {
            0.0 => "0".to_string(),
            x => format!("{x}"),
        },
        other => other.to_string(),
    }
}
