//! What every row of one query execution shares: the parameters, the function context,
//! the full-text corpus statistics, and the way to run a correlated subquery.
//!
//! Evaluating an expression may run a subquery, and subqueries run through the executor's
//! pipeline, which sits above evaluation. So the pipeline hands its runner in
//! ([`crate::query::run::pipeline::env`] builds every `Env`) and evaluation never names it.

use std::cell::OnceCell;
use std::collections::HashMap;

use crate::query::eval::expr::{Params, Scope, SubqueryFn, eval};
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
}

/// How an [`Env`] runs a correlated subquery: with itself, the subquery and the outer row.
pub type SubqueryRunner = fn(&Env, &Query, &[(String, Val)]) -> Vec<Val>;

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

    /// Runs a correlated subquery: its FROM reads the outer row's values.
    pub fn subquery(&self, q: &Query, outer: &[(String, Val)]) -> Vec<Val> {
        (self.subquery)(self, q, outer)
    }

    pub fn eval(&self, e: &Expr, bindings: &[(String, Val)]) -> Val {
        let sub = |q: &Query, b: &[(String, Val)]| self.subquery(q, b);
        eval(e, &self.scope(bindings, None, &sub))
    }
}
