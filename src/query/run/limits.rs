//! The errors of a page that passes its budget (see [`crate::query::eval::budget`]) where
//! it cannot end with a continuation, each saying what to change.
//!
//! A streamed page that runs out of time returns what it has with a continuation, as the
//! service does, and a result computed whole before it is paged (ORDER BY through a sort,
//! GROUP BY, DISTINCT, aggregates, OFFSET) goes on computing after its page returns empty
//! (see [`super::background`]). What cannot go on fails with 408, the status the service
//! gives a script that passes its time limit: a page that could not finish even its first
//! item, a computation that passes its own limit, and a result that cannot be computed
//! apart from its page (one calling UDFs, or with too many others computing).

use crate::error::{Error, StatusCode};
use crate::query::eval::budget::Budget;

/// The limit a page ran into, in words.
fn limit_text(budget: &Budget) -> String {
    let limits = budget.limits();
    match limits.rows {
        Some(rows) if budget.rows() > rows => format!("its limit of {rows} evaluated rows"),
        _ => format!(
            "the per-page execution limit of {} ms",
            limits.time.as_millis()
        ),
    }
}

/// A computation that passed its own limit of `pages` pages' worth of time.
pub(super) fn computation_timeout(pages: u32) -> Error {
    let seconds = crate::query::eval::budget::PAGE_TIME_LIMIT.as_secs() * u64::from(pages);
    Error::new(
        StatusCode::RequestTimeout,
        format!(
            "the query's result was still being computed after {pages} pages' worth of the \
             per-page execution limit (about {seconds} s): an ORDER BY the index does not \
             serve, GROUP BY, DISTINCT, an aggregate or OFFSET reads every item in scope \
             before its first result. Narrow it with a filter on an indexed path or the \
             partition key, or let an index serve the ORDER BY"
        ),
    )
}

/// A result a walk of the index read only in part, which cannot be computed apart from
/// its pages.
pub(super) fn not_computable_whole() -> Error {
    Error::new(
        StatusCode::RequestTimeout,
        "the query's ORDER BY walks the index, but its filter rejects so many entries that a \
         page ran out of time before it found its results. Add an index the filter can use, \
         or a composite index on the filter's and the ORDER BY's paths",
    )
}

/// A computed result that did not finish within the page's limit and cannot go on
/// computing after it.
pub(super) fn computed_timeout(budget: &Budget) -> Error {
    Error::new(
        StatusCode::RequestTimeout,
        format!(
            "the query ran past {} while computing its result ({} rows evaluated), and the \
             result cannot go on computing after the page: it calls UDFs, or other results \
             are being computed already. An ORDER BY the index does not serve, GROUP BY, \
             DISTINCT, an aggregate or OFFSET is computed whole before the first page. Narrow \
             it with a filter on an indexed path or the partition key, let an index serve the \
             ORDER BY (a range or composite index on its paths, no filter the index cannot \
             answer), or bound it with TOP",
            limit_text(budget),
            budget.rows()
        ),
    )
}

/// A page that ran past its limit before it finished one item.
pub(super) fn item_timeout(budget: &Budget) -> Error {
    Error::new(
        StatusCode::RequestTimeout,
        format!(
            "evaluating a single item ran past {} ({} rows evaluated): nested subqueries over \
             arrays multiply their rows (three levels over 10-element arrays are 1,000 rows \
             per item, eight are 100 million). Flatten them into JOINs with one filter, or make \
             each level stop early (EXISTS and ARRAY_CONTAINS stop at their first match)",
            limit_text(budget),
            budget.rows()
        ),
    )
}

/// A page whose kept results passed the memory budget.
pub(super) fn over_memory(budget: &Budget) -> Error {
    Error::bad_request(format!(
        "Query exceeded the maximum allowed memory usage of {} MB. Please consider adding more \
         filters to reduce the query response size: a query that sorts (without an index that \
         yields the order), groups or deduplicates keeps its whole result while it runs. Filter \
         on an indexed path or the partition key, select fewer properties, or bound it with TOP \
         or OFFSET LIMIT",
        budget.memory_limit() >> 20
    ))
}
