//! Running a query against a container: routing, per-range execution, metrics, RU, paging.
//!
//! A page of a query runs in three phases, one module each:
//!
//! 1. [`prepare`]: everything decided before a document is read — the indexing policy the
//!    query may rely on and the checks it imposes, the routing, the continuation, what is
//!    read of each item, the conjuncts an index answers, whether the query streams and
//!    where it may stop early. It reads nothing from the store.
//! 2. [`compute`]: the result over the routed ranges. Items are found ([`find`]: an ORDER BY
//!    index walk, index lookups or a scan) and each routed physical partition is read in
//!    turn, in document order when it is small (see [`DOCUMENT_ORDER_MAX_ITEMS`]) and in key
//!    order otherwise; its documents go through one [`Run`] pipeline, so results equal the
//!    service's cross-partition merge. Per range it counts what the service would load
//!    under the container's indexing policy (an index-served filter loads only matching
//!    documents; anything else loads every document in scope; TOP N without ORDER BY stops
//!    after N+1 matches).
//! 3. [`page`]: the page cut from the result, charged through [`crate::charge::query_range`],
//!    with its continuation.
//!
//! Paging: streaming queries (no ORDER BY, GROUP BY, DISTINCT, aggregate or OFFSET) resume
//! their scan at the item the continuation records (by key, or by document number in a range
//! read in document order). Other queries page through their complete result: the first
//! page computes it, later pages take it from the [`cache`] while the container is
//! unchanged (and compute it again otherwise). The continuation records how many results
//! were delivered and the charge accrued so far; page charges telescope, so the pages of one
//! query add up exactly to its unpaged charge. A page ends at `max_items` results or before
//! its documents would pass 4 MB ([`MAX_PAGE_BYTES`]), whichever comes first.
//!
//! The phases' parts hold the rules each step applies: [`routing`] (which partitions a
//! query reads), [`scope`] (the one physical partition a request may name), [`access`]
//! (which conjuncts an index answers), `rules` (what the indexing policy serves and allows),
//! `candidates` (index lookups for a filter), `ordered` (ORDER BY from an index walk), `scan`
//! (items through the pipeline), `statistics` (answers from the exact counts),
//! `partition_key` (a result's logical partition), `charges` (a page's RU) and `token` (the
//! continuation). [`pipeline`] evaluates the query over rows; [`condition`]
//! runs a filter against one document.

pub mod access;
mod background;
mod between_pages;
pub mod cache;
mod candidates;
mod charges;
mod compute;
mod computed;
pub mod condition;
mod find;
mod limits;
mod ordered;
mod page;
mod partition_key;
pub mod pipeline;
mod prepare;
pub mod request;
pub mod result;
pub mod routing;
mod rules;
mod scan;
pub mod scope;
mod snapshot;
mod spill;
mod statistics;
pub mod timing;
mod token;
mod values;

use std::cell::OnceCell;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::error::Result;
use crate::query::eval::budget::Budget;
use crate::query::eval::expr::Params;
use crate::query::eval::functions::{self, FnContext};
use crate::query::search::rank;
use crate::query::syntax::ast::Query;
use crate::query::syntax::names::doc_alias;
use crate::store::catalog::ContainerDef;
use crate::store::{RoTxn, Store};
use cache::{CacheKey, Computed, ResultCache};
pub use compute::DOCUMENT_ORDER_MAX_ITEMS;
use compute::Hooks;
use prepare::Plan;
pub use request::{Progress, Request};
pub use result::{
    AccessView, IndexMetrics, MAX_PAGE_BYTES, PartitionResult, QueryMetrics, QueryResult,
    RangeProgress, RoutingView,
};
pub(crate) use rules::check_counts;
use snapshot::Snapshot;
use token::query_hash;
pub use values::over_values;

/// Runs one page of `q` (already parsed and checked) on `def`. `cancel` is polled between
/// documents and ranges; `cache` keeps complete results for the later pages of queries
/// that cannot stream, and the computations of those that take longer than a page may run
/// (see [`background`]).
#[allow(clippy::too_many_arguments)]
pub fn run(
    store: &Arc<Store>,
    txn: &RoTxn,
    def: &ContainerDef,
    text: &str,
    q: &Query,
    opts: &Request,
    cancel: &AtomicBool,
    cache: &Arc<ResultCache>,
) -> Result<QueryResult> {
    // A result that takes longer than the page goes on computing on a thread of its own,
    // which reads a snapshot of its own. UDFs cannot follow it: they run in a JavaScript
    // runtime of the page's thread.
    let continue_after = |key: &CacheKey| {
        if !crate::query::eval::udf::names(q).is_empty() {
            return false;
        }
        let job = Continuing {
            store: store.clone(),
            cache: cache.clone(),
            container: (def.database.clone(), def.id.clone(), def.rid),
            text: text.to_string(),
            q: q.clone(),
            // The request's progress goes on with the computation: the explorer's strip
            // lights each range as it finishes, while the pages come back empty.
            opts: Request {
                continuation: None,
                limits: opts
                    .limits
                    .over_pages(background::PAGES_A_COMPUTATION_MAY_RUN),
                ..opts.clone()
            },
        };
        cache
            .computations
            .start(key.clone(), move |cancel| job.compute(cancel))
    };
    let goal = Goal::Page {
        continue_after: &continue_after,
    };
    match execute(store, txn, def, (text, q), opts, cancel, cache, goal)? {
        Executed::Page(page) => Ok(*page),
        Executed::Whole(..) => Err(crate::error::Error::internal(
            "a page's query computed a whole result instead of a page",
        )),
    }
}

/// What [`execute`] is for.
enum Goal<'a> {
    /// A page, from a result that may go on computing after the page returns.
    Page {
        continue_after: &'a dyn Fn(&CacheKey) -> bool,
    },
    /// The whole result of a query that cannot stream, kept for its pages.
    Whole,
}

/// What [`execute`] produced.
enum Executed {
    Page(Box<QueryResult>),
    Whole(Arc<Computed>, Option<CacheKey>),
}

/// Prepares `q` and computes it for `goal` (see the module comment's three phases).
#[allow(clippy::too_many_arguments)]
fn execute(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    (text, q): (&str, &Query),
    opts: &Request,
    cancel: &AtomicBool,
    cache: &ResultCache,
    goal: Goal,
) -> Result<Executed> {
    let started = Instant::now();
    let hash = query_hash(text, &opts.params);
    let ctx = function_context(hash);
    let params: Params = opts
        .params
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // `ORDER BY RANK FullTextScore(...)` scores against the whole container's statistics,
    // gathered before the result is computed; charged on the first page.
    let full_text = OnceCell::new();
    let budget = Budget::new(opts.limits, Some(cancel));
    let env = pipeline::env(&params, &ctx, Some(&full_text), Some(&budget));
    let without_true = prepare::without_true_conjuncts(q);
    let q = without_true.as_ref().unwrap_or(q);
    let root = doc_alias(q).unwrap_or_default();
    let with_policy = rank::with_vector_policy(q, def, &root);
    let q = with_policy.as_ref().unwrap_or(q);
    let plan = Plan::prepare(def, q, &root, &env, opts, hash)?;
    let pipeline = plan.pipeline(&env);
    if plan.answers_from_statistics() && matches!(goal, Goal::Page { .. }) {
        let index_metrics = plan.index_metrics(def);
        return statistics::count_from_statistics(
            store,
            txn,
            def,
            plan.routing,
            pipeline,
            index_metrics,
            started,
        )
        .map(|page| Executed::Page(Box::new(page)));
    }
    let snap = Snapshot {
        store,
        txn,
        def,
        now: crate::store::now_secs(),
    };
    let hooks = Hooks {
        cancel,
        progress: opts.progress.as_ref(),
        continue_after: match goal {
            Goal::Page { continue_after } => Some(continue_after),
            Goal::Whole => None,
        },
    };
    let computed = compute::compute(&plan, &snap, (&env, &full_text), cache, pipeline, hooks)?;
    Ok(match goal {
        Goal::Page { .. } => {
            Executed::Page(Box::new(page::cut(plan, computed, &snap, cache, started)))
        }
        Goal::Whole => {
            // A result an ORDER BY walk read only in part is not the whole result.
            let key = computed.cache_key.filter(|_| computed.complete);
            Executed::Whole(computed.computed, key)
        }
    })
}

/// A result that goes on computing after the page that started it returned: what its
/// thread needs, owned.
struct Continuing {
    store: Arc<Store>,
    cache: Arc<ResultCache>,
    /// Database, container and the container's resource id (a container deleted and
    /// created again under its name is another container).
    container: (String, String, crate::store::keys::ContainerRid),
    text: String,
    q: Query,
    /// The request, from its first result, under limits stretched over several pages.
    opts: Request,
}

impl Continuing {
    /// Computes the whole result on a snapshot of its own and keeps it in the cache.
    fn compute(self, cancel: &AtomicBool) -> Result<Arc<Computed>> {
        let (db, name, rid) = &self.container;
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        if def.rid != *rid {
            return Err(crate::error::Error::not_found(format!(
                "{db}/{name} was deleted while the query's result was computed; run the \
                 query again"
            )));
        }
        let executed = execute(
            &self.store,
            &txn,
            &def,
            (&self.text, &self.q),
            &self.opts,
            cancel,
            &self.cache,
            Goal::Whole,
        );
        match executed {
            Ok(Executed::Whole(computed, Some(key))) if computed.is_whole() => {
                self.cache.put(key, computed.clone());
                Ok(computed)
            }
            Ok(_) => Err(limits::not_computable_whole()),
            Err(e) if e.is(crate::error::StatusCode::RequestTimeout) => Err(
                limits::computation_timeout(background::PAGES_A_COMPUTATION_MAY_RUN),
            ),
            Err(e) => Err(e),
        }
    }
}

/// The functions' context for one execution of the query hashed as `hash`.
fn function_context(hash: u64) -> FnContext {
    let now_ticks = functions::now_ticks();
    FnContext {
        now_ticks,
        clock: Some(functions::now_ticks),
        // RAND draws anew on every execution (rand.md: "repetitive calls of this function
        // don't return the same results"), in a new process too: the process's random
        // hash keys make the seed.
        seed: hash ^ std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), now_ticks),
    }
}
