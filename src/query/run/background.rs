//! Computed results that take longer than a page may run.
//!
//! A query whose result is computed whole before it is paged (an ORDER BY the index does
//! not serve, GROUP BY, DISTINCT, aggregates, OFFSET) cannot return part of it. The
//! service never lets one page run past its 5 s limit: such a query's pages come back
//! empty, each with a continuation, while the backend works through the data, and the SDKs
//! keep asking until results arrive. Here the page that runs out of time hands the
//! computation to a thread of its own, which computes the whole result without the page's
//! limit (but within [`PAGES_A_COMPUTATION_MAY_RUN`] pages' worth of it and the same
//! memory budget) and keeps it in the result cache. The page returns nothing, with a
//! continuation naming the computation; the next page waits for it up to its own limit and
//! either delivers the first results or, still computing, returns empty again.
//!
//! A computation belongs to the process that started it. A later page in another process
//! finds the result on disk once the computation has finished (the CLI waits for it before
//! it exits: [`Computations::settle`]); one that finds neither result nor computation
//! starts over. An engine that closes cancels what it still computes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::computed::{CacheKey, Computed};
use crate::error::{Error, Result};

/// How many pages' worth of the page limit a computation may run for: the service's 5 s
/// per page make 2 minutes.
pub const PAGES_A_COMPUTATION_MAY_RUN: u32 = 24;

/// Computations that may run at once; a page that would start another fails as it did
/// before computations continued (408), so a burst of slow queries cannot take every core.
const RUNNING_AT_ONCE: usize = 2;

/// How often a page waiting for a computation looks at its own cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// What a page waiting for a computation finds.
pub(super) enum Outcome {
    /// The whole result, which the computation also put in the cache.
    Ready(Arc<Computed>),
    /// The computation failed (over the memory budget, past its own time limit, cancelled).
    Failed(Error),
    /// Still computing after the page's limit.
    Running,
}

/// One computation: its key and, once it has finished, its result.
struct Slot {
    key: CacheKey,
    result: Mutex<Option<Result<Arc<Computed>>>>,
    finished: Condvar,
    cancel: AtomicBool,
}

impl Slot {
    fn result(&self) -> std::sync::MutexGuard<'_, Option<Result<Arc<Computed>>>> {
        self.result.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The computations an engine runs (see the module comment).
#[derive(Default)]
pub struct Computations {
    slots: Mutex<Vec<Arc<Slot>>>,
}

impl Computations {
    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts `job` (which computes the result of `key`, polling the flag it is given) on a
    /// thread of its own, unless one already computes `key`. False when it cannot: too many
    /// computations run, or no thread could be started.
    pub(super) fn start(
        &self,
        key: CacheKey,
        job: impl FnOnce(&AtomicBool) -> Result<Arc<Computed>> + Send + 'static,
    ) -> bool {
        let mut slots = self.slots();
        if slots.iter().any(|s| s.key == key && s.result().is_none()) {
            return true;
        }
        // A finished computation nobody picked up is forgotten (its result is cached).
        slots.retain(|s| s.result().is_none());
        if slots.len() >= RUNNING_AT_ONCE {
            return false;
        }
        let slot = Arc::new(Slot {
            key,
            result: Mutex::new(None),
            finished: Condvar::new(),
            cancel: AtomicBool::new(false),
        });
        let working = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("query-result".into())
            .spawn(move || {
                let result = job(&working.cancel);
                *working.result() = Some(result);
                working.finished.notify_all();
            });
        if spawned.is_err() {
            return false;
        }
        slots.push(slot);
        true
    }

    /// Waits up to `limit` for the computation of `key`: `None` when this process computes
    /// no such result. A finished computation is handed over once and forgotten (its result
    /// stays in the cache for the pages after). Cancelling the waiting page cancels the
    /// computation too: the person who asked for the result no longer wants it.
    pub(super) fn wait(
        &self,
        key: &CacheKey,
        limit: Duration,
        cancel: &AtomicBool,
    ) -> Option<Outcome> {
        let slot = self.slots().iter().find(|s| s.key == *key).cloned()?;
        let deadline = Instant::now() + limit;
        let mut result = slot.result();
        loop {
            if let Some(done) = result.take() {
                drop(result);
                self.slots().retain(|s| !Arc::ptr_eq(s, &slot));
                return Some(match done {
                    Ok(computed) => Outcome::Ready(computed),
                    Err(e) => Outcome::Failed(e),
                });
            }
            if cancel.load(Ordering::Relaxed) {
                slot.cancel.store(true, Ordering::Relaxed);
                return Some(Outcome::Failed(Error::cancelled("the query was cancelled")));
            }
            let now = Instant::now();
            if now >= deadline {
                return Some(Outcome::Running);
            }
            let step = CANCEL_POLL.min(deadline - now);
            result = slot
                .finished
                .wait_timeout(result, step)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Waits until every running computation has finished, so that their results are on
    /// disk for a page in another process: whether there were any, or the first failure
    /// among them (the result is not kept, and a later page computes it again).
    pub fn settle(&self) -> Result<bool> {
        let slots: Vec<Arc<Slot>> = self.slots().clone();
        let mut failure = None;
        for slot in &slots {
            let mut result = slot.result();
            while result.is_none() {
                result = slot
                    .finished
                    .wait(result)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if let Some(Err(e)) = result.as_ref() {
                failure.get_or_insert_with(|| e.clone());
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(!slots.is_empty()),
        }
    }

    /// Whether a computation is running.
    #[cfg(test)]
    fn running(&self) -> bool {
        self.slots().iter().any(|s| s.result().is_none())
    }

    /// Asks every running computation to stop.
    pub fn cancel_all(&self) {
        for slot in self.slots().iter() {
            slot.cancel.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(query: u64) -> CacheKey {
        CacheKey {
            container: 1,
            query,
            version: 3,
            index_generation: 0,
            ranges: vec![0],
        }
    }

    fn empty() -> Arc<Computed> {
        Arc::new(Computed::numbered(0))
    }

    #[test]
    fn a_page_waits_for_the_computation_and_takes_its_result_once() {
        let computations = Computations::default();
        let (go, gate) = std::sync::mpsc::channel::<()>();
        assert!(computations.start(key(1), move |_| {
            let _ = gate.recv();
            Ok(empty())
        }));
        let never = AtomicBool::new(false);
        assert!(matches!(
            computations.wait(&key(1), Duration::from_millis(1), &never),
            Some(Outcome::Running)
        ));
        assert!(computations.running());
        go.send(()).unwrap();
        assert!(matches!(
            computations.wait(&key(1), Duration::from_secs(3600), &never),
            Some(Outcome::Ready(_))
        ));
        assert!(computations.wait(&key(1), Duration::ZERO, &never).is_none());
        assert!(!computations.running());
    }

    #[test]
    fn only_so_many_run_at_once_and_a_cancelled_wait_cancels_the_computation() {
        let computations = Computations::default();
        let spin = |cancel: &AtomicBool| {
            while !cancel.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(Error::cancelled("stopped"))
        };
        for q in 0..RUNNING_AT_ONCE as u64 {
            assert!(computations.start(key(q), spin));
        }
        assert!(!computations.start(key(99), spin), "one too many");
        assert!(computations.start(key(0), spin), "the same one is joined");
        let cancelled = AtomicBool::new(true);
        assert!(matches!(
            computations.wait(&key(0), Duration::from_secs(3600), &cancelled),
            Some(Outcome::Failed(e)) if e.is(crate::error::StatusCode::Cancelled)
        ));
        computations.cancel_all();
        assert!(computations.settle().is_err(), "their failures are told");
        assert!(!computations.running());
    }
}
