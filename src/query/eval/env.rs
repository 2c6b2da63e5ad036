//! What every row of one query execution shares: the parameters, the function context,
//! the full-text corpus statistics, and the way to run a correlated subquery.
//!
//! Evaluating an expression may run a subquery, and subqueries run through the executor's
//! pipeline, which sits above evaluation. So the pipeline hands its runner in
//! ([`crate::query::run::pipeline::env`] builds every `Env`) and evaluation never names it.

use std::cell::OnceCell;
use std::collections::HashMap;

use crate::query::eval::budget::Budget;
use crate::query::eval::expr::{Params, Scope, Sink, SubqueryFn, eval};
use crate::query::eval::functions::FnContext;
use crate::query::eval::value::Val;
use crate::query::search::fulltext::FullTextScores;
use crate::query::syntax::ast::{Expr, Query};

/// Per-query inputs shared by every row.
pub struct Env<'a> {
    pub params: &'a Params,
    pub ctx: &'a FnContext,
    /// The corpus statistics of the query's FullTextScore calls, when it ranks by them (set
    /// once they are gathered, before any row is scored).
    pub full_text: Option<&'a OnceCell<FullTextScores>>,
    /// Runs a correlated subquery against the outer row's bindings.
    pub subquery: SubqueryRunner,
    /// What the page may spend, and the rows it evaluated (none for evaluations that are
    /// not a page of a container's query).
    pub budget: Option<&'a Budget<'a>>,
}

/// How an [`Env`] runs a correlated subquery: with itself, the subquery and the outer row,
/// handing each result to the sink until it breaks.
pub type SubqueryRunner = fn(&Env, &Query, &[(String, Val)], &mut Sink);

impl Env<'_> {
    /// The scope an expression of `bindings` is evaluated in, with the group's aggregate
    /// values when the row stands for a group.
    pub fn scope<'s>(
        &'s self,
        bindings: &'s [(String, Val)],
        aggregates: Option<&'s HashMap<usize, Val>>,
        sub: &'s SubqueryFn<'s>,
    ) -> Scope<'s> {
        Scope {
            bindings,
            params: self.params,
            ctx: self.ctx,
            aggregates,
            subquery: sub,
        }
    }

    /// Runs a correlated subquery: its FROM reads the outer row's values. Every result.
    pub fn subquery(&self, q: &Query, outer: &[(String, Val)]) -> Vec<Val> {
        let mut out = Vec::new();
        (self.subquery)(self, q, outer, &mut |v| {
            out.push(v);
            std::ops::ControlFlow::Continue(())
        });
        out
    }

    /// Runs a correlated subquery, handing its results to `sink` until it breaks.
    pub fn subquery_into(&self, q: &Query, outer: &[(String, Val)], sink: &mut Sink) {
        (self.subquery)(self, q, outer, sink)
    }

    pub fn eval(&self, e: &Expr, bindings: &[(String, Val)]) -> Val {
        let sub = |q: &Query, b: &[(String, Val)], sink: &mut Sink| self.subquery_into(q, b, sink);
        eval(e, &self.scope(bindings, None, &sub))
    }

    /// Counts one evaluated row against the budget; false once the page must stop.
    pub fn tick(&self) -> bool {
        self.budget.is_none_or(Budget::tick)
    }

    /// Whether the page was stopped (by its limit or its caller).
    pub fn stopped(&self) -> bool {
        self.budget.is_some_and(|b| b.stopped().is_some())
    }
}
