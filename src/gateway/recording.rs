//! What the gateway served, kept for the partition-key advisor (`advise --workload
//! recorded`): each successful query's text and parameters and each point operation's item
//! address, per container, in the data directory (`crate::recorded_requests` holds the
//! format and its bounds, `recorded_requests`).
//!
//! Recording runs on the blocking thread that served the request, never on the async
//! workers. The file is written at most once a second while requests come, and when the
//! gateway stops, so a burst of requests costs one write rather than one each; the write
//! works on a snapshot, so requests recording meanwhile do not wait for it.

use std::path::PathBuf;
use std::sync::Mutex;
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
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `call` if it is a query or a point operation on items that succeeded.
    pub fn observe(&self, backend: &dyn Backend, call: &Call, reply: &Reply) {
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
        self.write(snapshot);
    }

    /// Writes what is not written yet.
    pub fn flush(&self) {
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
