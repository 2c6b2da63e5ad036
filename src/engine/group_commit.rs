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
//! Each write keeps its own outcome: [`WriteBatch::write`] checks everything before it
//! mutates, so a refused write (409, 412, 429, ...) leaves the batch as it was and the
//! others commit. A storage fault fails the whole group, and a failed commit fails every
//! write in it: nothing is reported written that was not flushed.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

use serde_json::{Map, Value};

use super::{ItemResponse, charged, response};
use crate::error::Result;
use crate::store::Store;
use crate::store::write::{WriteBatch, WriteKind};

/// One queued write and the place its result goes.
struct Pending {
    db: String,
    container: String,
    kind: WriteKind,
    doc: Map<String, Value>,
    if_match: Option<String>,
    result: Arc<OnceLock<Result<ItemResponse>>>,
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
            if_match: if_match.map(str::to_string),
            result: result.clone(),
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
            // Lead: everything queued while the last commit ran goes in one, with the
            // writers it woke if they come back within GATHER.
            state.committing = true;
            let deadline = std::time::Instant::now() + GATHER;
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
            let size = group.len();
            drop(state);
            run_group(store, group);
            state = lock(&self.state);
            state.active = size + state.queue.len();
            state.committing = false;
            self.committed.notify_all();
        }
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
    let fail_all = |writes: &[Pending], e: crate::error::Error| {
        for w in writes {
            let _ = w.result.set(charged(Err(e.clone())));
        }
    };
    let mut batch = match WriteBatch::begin(store, db, container) {
        Ok(b) => b,
        Err(e) => return fail_all(&writes, e),
    };
    let mut outcomes = Vec::with_capacity(writes.len());
    for w in &mut writes {
        let doc = std::mem::take(&mut w.doc);
        match batch.write(w.kind, doc, w.if_match.as_deref()) {
            // A fault in the store may have left the transaction half-written: drop it.
            Err(e) if e.status.is_server_error() => return fail_all(&writes, e),
            outcome => outcomes.push(outcome.map(response)),
        }
    }
    if let Err(e) = batch.commit() {
        return fail_all(&writes, e);
    }
    for (w, outcome) in writes.iter().zip(outcomes) {
        let _ = w.result.set(charged(outcome));
    }
}
