//! What the gateway served, kept for the partition-key advisor (`advise --workload
//! recorded`): each successful query's text and parameters and each point operation's item
//! address, per container, in the data directory (`crate::recorded_requests` holds the
//! format and its bounds, `recorded_requests`).
//!
//! Recording runs where the reply is made: on the blocking thread that served the request,
//! or, for a create or upsert handed to the engine's committer, on the committer thread
//! (never on the async workers). The file is written at most once a second while requests
//! come, and when the gateway stops, so a burst of requests costs one write rather than one
//! each. The periodic write runs on a thread of its own, on a snapshot: the thread that
//! recorded does not wait for the file, which matters on the committer, where every
//! pending write would wait with it (a save took 0.2–1.1 ms with one container recorded,
//! and the file may hold 64).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hyper::Method;
use serde_json::Value;

use super::call::{Call, header};
use super::reply::Reply;
use super::resource::Resource;
use crate::engine::Backend;
use crate::recorded_requests::{Recordings, Request};

/// The longest the file lags what was served while the gateway runs.
const SAVE_EVERY: Duration = Duration::from_secs(1);

pub struct Recorder {
    dir: PathBuf,
    state: Mutex<State>,
    /// Held while a snapshot is written, with the generation last written: writes never
    /// overlap, and an older snapshot never replaces a newer one.
    written: Mutex<u64>,
    /// The thread writing the last periodic snapshot, joined before the next one starts
    /// and by [`Recorder::flush`].
    saving: Mutex<Option<JoinHandle<()>>>,
}

struct State {
    recordings: Recordings,
    /// Bumped by every request recorded; `saved_generation` is the one last handed to a
    /// write.
    generation: u64,
    saved_generation: u64,
    saved: Instant,
}

impl Recorder {
    /// A recorder adding to the recordings already in data directory `dir` (a file that
    /// cannot be read is started afresh rather than stopping the gateway).
    pub fn open(dir: PathBuf) -> Recorder {
        let recordings = Recordings::load(&dir).unwrap_or_default();
        Recorder {
            dir,
            state: Mutex::new(State {
                recordings,
                generation: 0,
                saved_generation: 0,
                saved: Instant::now(),
            }),
            written: Mutex::new(0),
            saving: Mutex::new(None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `call` if it is a query or a point operation on items that succeeded.
    pub fn observe(self: &Arc<Self>, backend: &dyn Backend, call: &Call, reply: &Reply) {
        if !(200..300).contains(&(reply.status as u16)) {
            return;
        }
        let Some((db, c, request)) = request_of(backend, call) else {
            return;
        };
        let snapshot = {
            let mut state = self.lock();
            let now = chrono::Utc::now().timestamp_millis();
            state.recordings.add(&db, &c, request, now);
            state.generation += 1;
            if state.saved.elapsed() < SAVE_EVERY {
                return;
            }
            take_snapshot(&mut state)
        };
        self.write_in_background(snapshot);
    }

    /// Hands a snapshot to a thread of its own. The previous one has had a second to
    /// finish; should it still be writing, this waits for it rather than pile up threads.
    fn write_in_background(self: &Arc<Self>, snapshot: (u64, Recordings)) {
        let mut saving = self.saving.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(previous) = saving.take() {
            let _ = previous.join();
        }
        let this = self.clone();
        // Sent once the thread exists, so a failed spawn leaves the snapshot here.
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("cosmoscope-recorder".into())
            .spawn(move || {
                if let Ok(snapshot) = rx.recv() {
                    this.write(snapshot);
                }
            });
        match spawned {
            Ok(thread) => {
                let _ = tx.send(snapshot);
                *saving = Some(thread);
            }
            // No thread to be had: write here rather than lose the snapshot.
            Err(_) => self.write(snapshot),
        }
    }

    /// Writes what is not written yet, once the periodic write under way (if any) is done.
    pub fn flush(&self) {
        let saving = self.saving.lock().unwrap_or_else(|e| e.into_inner()).take();
        // The save thread holds the recorder too: when it holds the last hold, the drop
        // (and this flush) runs on that thread, which must not join itself.
        if let Some(thread) = saving
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
        let snapshot = {
            let mut state = self.lock();
            if state.generation == state.saved_generation {
                return;
            }
            take_snapshot(&mut state)
        };
        self.write(snapshot);
    }

    /// Writes a snapshot outside the recordings' lock, so requests recording meanwhile do
    /// not wait for the file.
    fn write(&self, (generation, recordings): (u64, Recordings)) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        if *written >= generation {
            return;
        }
        // A recording that cannot be written is not worth failing a request over: the
        // generation stays unsaved and the next save tries again.
        if recordings.save(&self.dir).is_ok() {
            *written = generation;
        } else {
            self.lock().saved_generation = 0;
        }
    }
}

/// The recordings as they are now, marked as handed to a write.
fn take_snapshot(state: &mut State) -> (u64, Recordings) {
    state.saved = Instant::now();
    state.saved_generation = state.generation;
    (state.generation, state.recordings.clone())
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The container and the request to record, for item queries and point operations.
fn request_of(backend: &dyn Backend, call: &Call) -> Option<(String, String, Request)> {
    let operation = super::ops::operation_name(call);
    match &call.target.resource {
        Resource::Documents { db, container } => {
            let request = match operation {
                // Later pages of a query are the same query going on.
                "Query" if call.header(header::CONTINUATION).is_none() => {
                    let (text, params) = super::ops::query_spec(call).ok()?;
                    let mut parameters: Vec<(String, Value)> = params.into_iter().collect();
                    parameters.sort_by(|a, b| a.0.cmp(&b.0));
                    // An SDK sends a cross-partition query to each range in turn: each
                    // request is that range's share of one query.
                    let weight = if call.header(header::PARTITION_KEY_RANGE_ID).is_some() {
                        let n = backend.partition_key_ranges(db, container).ok()?.len();
                        1.0 / n.max(1) as f64
                    } else {
                        1.0
                    };
                    Request::Query {
                        text,
                        parameters,
                        weight,
                    }
                }
                "Create" | "Upsert" => {
                    let (id, pk) = written(backend, call, db, container)?;
                    Request::Create { id, pk }
                }
                _ => return None,
            };
            Some((db.clone(), container.clone(), request))
        }
        Resource::Document { db, container, id } => {
            let pk = call.partition_key().ok()??;
            let (id, pk) = (id.clone(), pk);
            let request = match call.method {
                Method::GET => Request::Read { id, pk },
                Method::PUT | Method::PATCH => Request::Replace { id, pk },
                Method::DELETE => Request::Delete { id, pk },
                _ => return None,
            };
            Some((db.clone(), container.clone(), request))
        }
        _ => None,
    }
}

/// A written item's id and key: the key from the request's header, else from the body
/// under the container's key.
fn written(backend: &dyn Backend, call: &Call, db: &str, c: &str) -> Option<(String, Value)> {
    let body = call.json_object().ok()?;
    let id = body.get("id")?.as_str()?.to_string();
    let pk = match call.partition_key().ok()? {
        Some(pk) => pk,
        None => {
            let def = backend.container_key(db, c).ok()?.partition_key;
            let value = crate::engine::item_key(&def, body).ok()?.value;
            // The header's form: a bare value for a single-path key.
            match value {
                Value::Array(mut v) if v.len() == 1 => v.pop().unwrap_or(Value::Null),
                other => other,
            }
        }
    };
    Some((id, pk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A recorder over a fresh directory with `reads` reads of one item recorded.
    fn recorded(dir: &std::path::Path, reads: usize) -> Arc<Recorder> {
        let recorder = Arc::new(Recorder::open(dir.to_path_buf()));
        let mut state = recorder.lock();
        for _ in 0..reads {
            let read = Request::Read {
                id: "a".into(),
                pk: json!("k"),
            };
            state.recordings.add("db", "c", read, 0);
            state.generation += 1;
        }
        drop(state);
        recorder
    }

    fn reads_on_disk(dir: &std::path::Path) -> u64 {
        Recordings::load(dir)
            .expect("the recordings read back")
            .of("db", "c")
            .map_or(0, |r| r.reads.count)
    }

    #[test]
    fn flush_waits_for_the_periodic_write_under_way() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recorder = recorded(dir.path(), 3);
        let snapshot = take_snapshot(&mut recorder.lock());
        recorder.write_in_background(snapshot);
        // Nothing is newer than the snapshot: the file is the background thread's.
        recorder.flush();
        assert_eq!(reads_on_disk(dir.path()), 3);
    }

    #[test]
    fn a_later_snapshot_is_not_overwritten_by_an_earlier_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let recorder = recorded(dir.path(), 1);
        let first = take_snapshot(&mut recorder.lock());
        {
            let mut state = recorder.lock();
            let read = Request::Read {
                id: "a".into(),
                pk: json!("k"),
            };
            state.recordings.add("db", "c", read, 0);
            state.generation += 1;
        }
        let second = take_snapshot(&mut recorder.lock());
        recorder.write(second);
        recorder.write_in_background(first);
        recorder.flush();
        assert_eq!(reads_on_disk(dir.path()), 2);
    }
}
