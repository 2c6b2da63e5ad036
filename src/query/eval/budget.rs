//! What one page of a query may spend, and what it has spent: the rows it evaluated (in
//! the query and in every subquery), against the service's per-page execution limit, a
//! memory budget for the results a page holds while it computes them, and the caller's
//! cancellation.
//!
//! The service runs each page of a query for at most 5 s (concepts-limits.md: "Maximum
//! execution time for a single operation (like a stored procedure execution or a single
//! query page retrieval) | 5 seconds") and returns what it has with a continuation. Time
//! makes a test flaky, so [`Limits`] can also bound the rows evaluated: tests set that and
//! a time limit no machine reaches, and the outcome is the same on every run.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::query::eval::value::Val;

/// The service's per-page execution limit.
pub const PAGE_TIME_LIMIT: Duration = Duration::from_secs(5);

/// Bytes of results and groups a computed query may hold while it runs. The service's
/// own figure for its NoSQL API is not published (its MongoDB API reports "Query exceeded
/// the maximum allowed memory usage of 40 MB"); this leaves room for the large sorted and
/// grouped results the store serves, well below what a laptop has.
pub const MEMORY_LIMIT_BYTES: usize = 1 << 30;

/// How often (in rows) the clock and the cancel flag are read: often enough to stop
/// within a millisecond or so, rarely enough to cost nothing next to evaluating a row.
const CHECK_EVERY: u64 = 256;

/// How often (in items) [`Budget::between_items`] reads the clock: an item a scan reads
/// costs a few hundred nanoseconds and a clock read tens, so every item would spend a
/// tenth of a scan on the clock; every 16th still stops within microseconds.
const CHECK_EVERY_ITEM: u32 = 16;

/// Bounds on one page of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a page may run ([`PAGE_TIME_LIMIT`]).
    pub time: Duration,
    /// Rows a page may evaluate, counting those of subqueries (unbounded: `None`). Tests
    /// set this instead of relying on time.
    pub rows: Option<u64>,
    /// Bytes of results and groups a page may hold ([`MEMORY_LIMIT_BYTES`]).
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            time: PAGE_TIME_LIMIT,
            rows: None,
            memory_bytes: MEMORY_LIMIT_BYTES,
        }
    }
}

/// Why a page stopped before its work was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It reached its time or row limit: it returns what is done, with a continuation.
    OutOfTime,
    /// The caller cancelled it.
    Cancelled,
}

/// One page's spending (see the module comment). Shared by reference with everything the
/// page evaluates; single-threaded, as a page is.
pub struct Budget<'c> {
    limits: Limits,
    started: Instant,
    rows: Cell<u64>,
    /// Calls of [`Budget::between_items`] so far.
    items: Cell<u32>,
    stop: Cell<Option<Stop>>,
    cancel: Option<&'c AtomicBool>,
}

impl<'c> Budget<'c> {
    pub fn new(limits: Limits, cancel: Option<&'c AtomicBool>) -> Budget<'c> {
        Budget {
            limits,
            started: Instant::now(),
            rows: Cell::new(0),
            items: Cell::new(0),
            stop: Cell::new(None),
            cancel,
        }
    }

    /// Counts one evaluated row; false once the page must stop.
    pub fn tick(&self) -> bool {
        if self.stop.get().is_some() {
            return false;
        }
        let rows = self.rows.get() + 1;
        self.rows.set(rows);
        if self.limits.rows.is_some_and(|max| rows > max) {
            self.stop.set(Some(Stop::OutOfTime));
        } else if rows.is_multiple_of(CHECK_EVERY) {
            self.check();
        }
        self.stop.get().is_none()
    }

    /// Reads the clock and the cancel flag now (between items, where a page may stop).
    pub fn check(&self) -> Option<Stop> {
        if self.stop.get().is_none() {
            if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                self.stop.set(Some(Stop::Cancelled));
            } else if self.started.elapsed() >= self.limits.time {
                self.stop.set(Some(Stop::OutOfTime));
            }
        }
        self.stop.get()
    }

    /// Between two items of a scan: whether the page must stop before the next one. Reads
    /// the clock and the cancel flag on every [`CHECK_EVERY_ITEM`]th call, and a stop a
    /// row limit set on every call (so row-bounded pages end at the same item every run).
    pub fn between_items(&self) -> Option<Stop> {
        let items = self.items.get().wrapping_add(1);
        self.items.set(items);
        if items.is_multiple_of(CHECK_EVERY_ITEM) {
            self.check()
        } else {
            self.stop.get()
        }
    }

    /// Why the page stopped, if it did (without reading the clock).
    pub fn stopped(&self) -> Option<Stop> {
        self.stop.get()
    }

    /// Rows evaluated so far.
    pub fn rows(&self) -> u64 {
        self.rows.get()
    }

    /// The memory budget.
    pub fn memory_limit(&self) -> usize {
        self.limits.memory_bytes
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The time the page has left.
    pub fn remaining(&self) -> Duration {
        self.limits.time.saturating_sub(self.started.elapsed())
    }
}

impl Limits {
    /// These limits stretched over `pages` pages (time and rows; the memory budget is the
    /// same, as it bounds what is held at once).
    pub fn over_pages(self, pages: u32) -> Limits {
        Limits {
            time: self.time.saturating_mul(pages),
            rows: self.rows.map(|r| r.saturating_mul(u64::from(pages))),
            memory_bytes: self.memory_bytes,
        }
    }
}

/// About how many bytes `v` holds (its JSON size, plus a little per value), for the memory
/// budget: cheap next to building the value.
pub fn approx_bytes(v: &Val) -> usize {
    const PER_VALUE: usize = 16;
    PER_VALUE
        + match v {
            Val::Undefined | Val::Null | Val::Bool(_) | Val::Num(_) => 0,
            Val::Str(s) => s.len(),
            Val::Arr(items) => items.iter().map(approx_bytes).sum(),
            Val::Obj(members) => members.iter().map(|(k, v)| k.len() + approx_bytes(v)).sum(),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_limit_stops_at_exactly_that_many_rows() {
        let budget = Budget::new(
            Limits {
                rows: Some(3),
                ..Limits::default()
            },
            None,
        );
        assert!(budget.tick() && budget.tick() && budget.tick());
        assert!(!budget.tick());
        assert_eq!(budget.stopped(), Some(Stop::OutOfTime));
        assert!(!budget.tick(), "a stopped page stays stopped");
    }

    #[test]
    fn cancelling_stops_at_the_next_check() {
        let cancel = AtomicBool::new(false);
        let budget = Budget::new(Limits::default(), Some(&cancel));
        assert_eq!(budget.check(), None);
        cancel.store(true, Ordering::Relaxed);
        assert_eq!(budget.check(), Some(Stop::Cancelled));
    }

    /// A budget with no time at all.
    fn out_of_time_at_once() -> Budget<'static> {
        Budget::new(
            Limits {
                time: Duration::ZERO,
                ..Limits::default()
            },
            None,
        )
    }

    #[test]
    fn a_zero_time_limit_is_reached_at_once() {
        let budget = out_of_time_at_once();
        assert_eq!(budget.check(), Some(Stop::OutOfTime));
    }

    #[test]
    fn between_items_reads_the_clock_every_few_items_and_a_row_stop_every_item() {
        let budget = out_of_time_at_once();
        let first = (1..=CHECK_EVERY_ITEM).find(|_| budget.between_items().is_some());
        assert_eq!(
            first,
            Some(CHECK_EVERY_ITEM),
            "the clock is read on the 16th item"
        );

        let budget = Budget::new(
            Limits {
                rows: Some(1),
                ..Limits::default()
            },
            None,
        );
        assert_eq!(budget.between_items(), None);
        assert!(budget.tick() && !budget.tick());
        assert_eq!(
            budget.between_items(),
            Some(Stop::OutOfTime),
            "at once, not on the 16th"
        );
    }
}
