//! Group commit for single-item writes (create, replace, upsert).
//!
//! Each write transaction ends in a durable commit, whose flush to disk costs far more than
//! the write itself (milliseconds against microseconds), so writers that arrive together —
//! the gateway's concurrent clients, the simulator's workers — share one: a writer queues
//! its write; when no commit is under way it leads, running every queued write through one
//! write batch per container and committing once, while the writes that arrive meanwhile
//! queue for the next group. Writers whose write was committed are woken with its result.
//! A lone writer commits alone, as before.
//!
//! A caller that must not block (the gateway's async side) submits its write with a
//! callback instead ([`GroupCommit::submit`]): no thread of its own waits for the commit, and
//! a committer thread leads the groups that no blocked writer leads. The gateway's upserts
//! went from 16 blocking-pool threads taking turns at leading to one committer: 3,978–4,301
//! upserts/s from 16 clients to 4,673–5,132 (periodic durability; CPU per upsert 347–374 µs
//! to 260–286 µs).
//!
//! Each write keeps its own outcome: [`WriteBatch::write`] checks everything before it
//! mutates, so a refused write (409, 412, 429, ...) leaves the batch as it was and the
//! others commit. A storage fault fails the whole group, and a failed commit fails every
//! write in it: nothing is reported written that was not flushed.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

use serde_json::{Map, Value};

use super::backend::WriteDone;
use super::{ItemResponse, charged, response};
use crate::error::Result;
use crate::store::Store;
use crate::store::durability::Durability;
use crate::store::write::{WriteBatch, WriteKind};

/// One queued write and the place its result goes.
struct Pending {
    db: String,
    container: String,
    kind: WriteKind,
    doc: Map<String, Value>,
    /// The partition key the request named, which the document's must equal.
    key: Option<Value>,
    if_match: Option<String>,
    result: Completion,
}

/// Where a queued write's result goes.
enum Completion {
    /// A writer blocked in [`GroupCommit::write`] reads it when woken.
    Waiting(Arc<OnceLock<Result<ItemResponse>>>),
    /// A caller that does not block ([`GroupCommit::submit`]) gets it from whoever commits.
    Callback(WriteDone),
}

impl Completion {
    fn complete(self, result: Result<ItemResponse>) {
        match self {
            Completion::Waiting(cell) => {
                let _ = cell.set(result);
            }
            Completion::Callback(done) => done(result),
        }
    }
}

/// A write submitted without blocking: what it writes and where its result goes.
pub struct Submitted {
    pub db: String,
    pub container: String,
    pub kind: WriteKind,
    pub doc: Map<String, Value>,
    /// The partition key the request named (its wire form), checked against the document's
    /// in the write's transaction, where the container's key is at hand.
    pub key: Option<Value>,
    pub if_match: Option<String>,
    pub done: WriteDone,
}

/// The writes waiting for a commit, and whether a commit is under way.
#[derive(Default)]
struct State {
    queue: Vec<Pending>,
    committing: bool,
    /// Writers seen around the last commit (its group and those queued by its end): the
    /// next leader waits briefly for that many, so concurrent writers share one flush
    /// instead of alternating in two half-size groups.
    active: usize,
    /// A leader is waiting for writers to arrive.
    gathering: bool,
    /// Queued writes whose callers do not block: none of them leads, so the committer
    /// thread does.
    submitted: usize,
    /// The committer thread is to stop.
    stopping: bool,
}

/// The longest a leader waits for the writers of the last round to come back.
const GATHER: std::time::Duration = std::time::Duration::from_micros(500);

/// Writers queue here; one of them at a time commits everything queued.
#[derive(Default)]
pub struct GroupCommit {
    state: Mutex<State>,
    /// Signalled when a commit ends: its writers' results are set, and the next group may
    /// start.
    committed: Condvar,
    /// Signalled when a write queues while a leader gathers.
    arrived: Condvar,
    /// Signalled when submitted writes wait and no commit is under way.
    submissions: Condvar,
    /// The thread that leads groups of submitted writes, once there has been one.
    committer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl GroupCommit {
    /// Writes one item durably, in a group with whatever writes are waiting alongside.
    pub fn write(
        &self,
        store: &Store,
        db: &str,
        container: &str,
        kind: WriteKind,
        doc: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        let result = Arc::new(OnceLock::new());
        let mut state = lock(&self.state);
        state.queue.push(Pending {
            db: db.to_string(),
            container: container.to_string(),
            kind,
            doc,
            key: None,
            if_match: if_match.map(str::to_string),
            result: Completion::Waiting(result.clone()),
        });
        if state.gathering {
            self.arrived.notify_one();
        }
        loop {
            if let Some(r) = result.get() {
                return r.clone();
            }
            if state.committing {
                // Whoever commits now wakes us when done: either this write was in that
                // group, or the next group (this write's) may start.
                state = self
                    .committed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
                continue;
            }
            state = self.lead(store, state, GATHER);
        }
    }

    /// Queues a write without blocking: `write.done` gets its result once its group has
    /// committed, on the thread that committed it, before the next group starts (so it must
    /// not write through this group commit, which would wait for itself). A committer thread
    /// (started on the first submission, stopped by [`GroupCommit::stop`]) leads the groups
    /// no blocked writer leads.
    pub fn submit(self: &Arc<Self>, store: &Arc<Store>, write: Submitted) {
        let mut state = lock(&self.state);
        state.queue.push(Pending {
            db: write.db,
            container: write.container,
            kind: write.kind,
            doc: write.doc,
            key: write.key,
            if_match: write.if_match,
            result: Completion::Callback(write.done),
        });
        state.submitted += 1;
        if state.gathering {
            self.arrived.notify_one();
        }
        if !state.committing {
            self.submissions.notify_one();
        }
        drop(state);
        let mut committer = lock(&self.committer);
        if committer.is_none() {
            let (this, store) = (self.clone(), store.clone());
            *committer = Some(
                std::thread::Builder::new()
                    .name("cosmoscope-commit".into())
                    .spawn(move || this.commit_submitted(&store))
                    .expect("the committer thread starts"),
            );
        }
    }

    /// The committer thread: leads a group whenever submitted writes wait and no commit is
    /// under way, until [`GroupCommit::stop`].
    fn commit_submitted(&self, store: &Store) {
        let mut state = lock(&self.state);
        loop {
            if state.submitted > 0 && !state.committing {
                // Submitted writers come back after a network round trip, longer than the
                // wait when the machine is busy: the wait pays only when it saves a flush.
                // Without one (periodic durability) it was most of an upsert's latency
                // (gateway bench, 16 clients: 4,909–5,449 upserts/s with it, 6,819–6,954
                // without), while writers blocked in-process come back within it.
                let gather = match store.durability() {
                    Durability::EveryCommit => GATHER,
                    Durability::Periodic => std::time::Duration::ZERO,
                };
                state = self.lead(store, state, gather);
            } else if state.stopping {
                return;
            } else {
                state = self
                    .submissions
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    /// Stops the committer thread once the writes submitted so far are committed.
    pub fn stop(&self) {
        lock(&self.state).stopping = true;
        self.submissions.notify_all();
        if let Some(thread) = lock(&self.committer).take() {
            let _ = thread.join();
        }
    }

    /// Commits everything queued while the last commit ran, in one group, after waiting up
    /// to `gather` for the writers of the last round to come back (so concurrent writers
    /// share one flush instead of alternating in two half-size groups); returns the lock
    /// once the group's results are out.
    fn lead<'a>(
        &'a self,
        store: &Store,
        mut state: std::sync::MutexGuard<'a, State>,
        gather: std::time::Duration,
    ) -> std::sync::MutexGuard<'a, State> {
        state.committing = true;
        let deadline = std::time::Instant::now() + gather;
        while state.queue.len() < state.active {
            let now = std::time::Instant::now();
            if now >= deadline {
                break;
            }
            state.gathering = true;
            state = self
                .arrived
                .wait_timeout(state, deadline - now)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        state.gathering = false;
        let group = std::mem::take(&mut state.queue);
        state.submitted = 0;
        let size = group.len();
        drop(state);
        run_group(store, group);
        let mut state = lock(&self.state);
        state.active = size + state.queue.len();
        state.committing = false;
        self.committed.notify_all();
        if state.submitted > 0 {
            self.submissions.notify_one();
        }
        state
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a group's writes, one write batch (and one commit) per container, in arrival order.
fn run_group(store: &Store, mut group: Vec<Pending>) {
    while !group.is_empty() {
        let (db, container) = (group[0].db.clone(), group[0].container.clone());
        let (same, rest): (Vec<Pending>, Vec<Pending>) = group
            .into_iter()
            .partition(|p| p.db == db && p.container == container);
        run_batch(store, &db, &container, same);
        group = rest;
    }
}

fn run_batch(store: &Store, db: &str, container: &str, mut writes: Vec<Pending>) {
    let fail_all = |writes: Vec<Pending>, e: crate::error::Error| {
        for w in writes {
            w.result.complete(charged(Err(e.clone())));
        }
    };
    let mut batch = match WriteBatch::begin(store, db, container) {
        Ok(b) => b,
        Err(e) => return fail_all(writes, e),
    };
    let mut outcomes = Vec::with_capacity(writes.len());
    for w in &mut writes {
        let doc = std::mem::take(&mut w.doc);
        if let Some(given) = &w.key
            && let Err(e) = batch
                .container()
                .partition_key
                .check_request_value(&doc, given)
        {
            // Refused before the write, uncharged, as a gateway that checks it first does.
            outcomes.push(Err(e));
            continue;
        }
        match batch.write(w.kind, doc, w.if_match.as_deref()) {
            // A fault in the store may have left the transaction half-written: drop it.
            Err(e) if e.status.is_server_error() => return fail_all(writes, e),
            outcome => outcomes.push(charged(outcome.map(response))),
        }
    }
    if let Err(e) = batch.commit() {
        return fail_all(writes, e);
    }
    for (w, outcome) in writes.into_iter().zip(outcomes) {
        w.result.complete(outcome);
    }
}
