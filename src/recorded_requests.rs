//! The requests the gateway recorded, per container, in the data directory: each
//! successful query's text and parameters and each point operation's item address, for the
//! partition-key advisor to replay (`advise --workload recorded`, see `advisor::recorded`).
//!
//! The file stays bounded: at most [`MAX_CONTAINERS`] containers (the least recently used
//! go), [`MAX_QUERIES`] query texts per container (later texts are counted as dropped), the
//! latest [`MAX_SAMPLES`] parameter sets per text and the latest [`MAX_KEYS`] item
//! addresses per kind of point operation. Counts are never dropped.

use std::collections::VecDeque;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// The file in the data directory.
pub const FILE: &str = "recorded-requests.json";
pub const MAX_CONTAINERS: usize = 64;
pub const MAX_QUERIES: usize = 100;
pub const MAX_SAMPLES: usize = 16;
pub const MAX_KEYS: usize = 256;

/// One request as the gateway served it.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A query's first page; `weight` is 1, or 1/N for one range's share of a query an SDK
    /// sent to each of N ranges.
    Query {
        text: String,
        parameters: Vec<(String, Value)>,
        weight: f64,
    },
    Read {
        id: String,
        pk: Value,
    },
    Create {
        id: String,
        pk: Value,
    },
    Replace {
        id: String,
        pk: Value,
    },
    Delete {
        id: String,
        pk: Value,
    },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recordings {
    pub containers: Vec<Recording>,
}

/// What one container was sent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recording {
    pub database: String,
    pub container: String,
    /// When the last request was recorded (Unix ms): the least recent container goes first.
    pub last_ms: i64,
    pub queries: Vec<RecordedQuery>,
    /// Query texts not kept once [`MAX_QUERIES`] were, and how often they were sent.
    pub dropped_queries: f64,
    pub reads: KeyLog,
    pub creates: KeyLog,
    pub replaces: KeyLog,
    pub deletes: KeyLog,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedQuery {
    pub text: String,
    /// How often it was sent.
    pub count: f64,
    /// The latest parameter sets it was sent with (names without their `@`).
    pub parameters: VecDeque<Vec<(String, Value)>>,
}

/// A kind of point operation: how many, and the latest items addressed (id, key).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyLog {
    pub count: u64,
    pub keys: VecDeque<(String, Value)>,
}

impl KeyLog {
    fn add(&mut self, id: String, pk: Value) {
        self.count += 1;
        if self.keys.len() == MAX_KEYS {
            self.keys.pop_front();
        }
        self.keys.push_back((id, pk));
    }
}

impl Recordings {
    /// The recordings in data directory `dir` (none when it has no file yet).
    pub fn load(dir: &Path) -> Result<Recordings> {
        let path = dir.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::internal(format!(
                    "{} is not a recording of requests ({e}): delete it to start again",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Recordings::default()),
            Err(e) => Err(Error::internal(format!(
                "cannot read {}: {e}",
                path.display()
            ))),
        }
    }

    /// Writes the recordings to `dir` whole (a new file renamed over the old one, so a
    /// reader never sees half of it).
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE);
        let tmp = dir.join(format!("{FILE}.tmp"));
        let io =
            |e: std::io::Error| Error::internal(format!("cannot write {}: {e}", path.display()));
        let bytes = serde_json::to_vec(self)
            .map_err(|e| Error::internal(format!("cannot encode the recordings: {e}")))?;
        std::fs::write(&tmp, bytes).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    pub fn of(&self, db: &str, c: &str) -> Option<&Recording> {
        self.containers
            .iter()
            .find(|r| r.database == db && r.container == c)
    }

    /// Adds a request to `db`/`c` served at `now_ms`.
    pub fn add(&mut self, db: &str, c: &str, request: Request, now_ms: i64) {
        let at = match self
            .containers
            .iter()
            .position(|r| r.database == db && r.container == c)
        {
            Some(i) => i,
            None => {
                if self.containers.len() == MAX_CONTAINERS
                    && let Some((oldest, _)) = self
                        .containers
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, r)| r.last_ms)
                {
                    self.containers.remove(oldest);
                }
                self.containers.push(Recording {
                    database: db.to_string(),
                    container: c.to_string(),
                    ..Recording::default()
                });
                self.containers.len() - 1
            }
        };
        let r = &mut self.containers[at];
        r.last_ms = now_ms;
        match request {
            Request::Query {
                text,
                parameters,
                weight,
            } => r.add_query(text, parameters, weight),
            Request::Read { id, pk } => r.reads.add(id, pk),
            Request::Create { id, pk } => r.creates.add(id, pk),
            Request::Replace { id, pk } => r.replaces.add(id, pk),
            Request::Delete { id, pk } => r.deletes.add(id, pk),
        }
    }
}

impl Recording {
    fn add_query(&mut self, text: String, parameters: Vec<(String, Value)>, weight: f64) {
        let q = match self.queries.iter().position(|q| q.text == text) {
            Some(i) => &mut self.queries[i],
            None if self.queries.len() < MAX_QUERIES => {
                self.queries.push(RecordedQuery {
                    text,
                    ..RecordedQuery::default()
                });
                let last = self.queries.len() - 1;
                &mut self.queries[last]
            }
            None => {
                self.dropped_queries += weight;
                return;
            }
        };
        q.count += weight;
        // An SDK's per-range requests of one query carry the same values: kept once.
        if q.parameters.back() != Some(&parameters) {
            if q.parameters.len() == MAX_SAMPLES {
                q.parameters.pop_front();
            }
            q.parameters.push_back(parameters);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn query(text: &str, v: i64) -> Request {
        Request::Query {
            text: text.into(),
            parameters: vec![("v".into(), json!(v))],
            weight: 1.0,
        }
    }

    #[test]
    fn counts_stay_whole_while_what_is_kept_is_bounded() {
        let mut all = Recordings::default();
        for i in 0..(MAX_QUERIES + 3) {
            all.add("d", "c", query(&format!("SELECT {i}"), 0), 1);
        }
        for v in 0..(MAX_SAMPLES as i64 + 4) {
            all.add("d", "c", query("SELECT 0", v), 2);
        }
        for i in 0..(MAX_KEYS + 1) {
            all.add(
                "d",
                "c",
                Request::Read {
                    id: format!("i{i}"),
                    pk: json!(i),
                },
                3,
            );
        }
        let r = all.of("d", "c").expect("recorded");
        assert_eq!(r.queries.len(), MAX_QUERIES);
        assert_eq!(r.dropped_queries, 3.0);
        let first = &r.queries[0];
        assert_eq!(first.count, 1.0 + MAX_SAMPLES as f64 + 4.0);
        assert_eq!(first.parameters.len(), MAX_SAMPLES);
        assert_eq!(
            first.parameters.back(),
            Some(&vec![("v".to_string(), json!(MAX_SAMPLES as i64 + 3))])
        );
        assert_eq!(r.reads.count, MAX_KEYS as u64 + 1);
        assert_eq!(r.reads.keys.len(), MAX_KEYS);
        assert_eq!(r.reads.keys[0].0, "i1");
    }

    #[test]
    fn the_least_recently_used_container_goes_first() {
        let mut all = Recordings::default();
        for i in 0..MAX_CONTAINERS {
            all.add("d", &format!("c{i}"), query("SELECT 1", 0), i as i64 + 10);
        }
        // c0 is used again, so c1 is the least recent when a new one comes.
        all.add("d", "c0", query("SELECT 1", 0), 100);
        all.add("d", "new", query("SELECT 1", 0), 101);
        assert_eq!(all.containers.len(), MAX_CONTAINERS);
        assert!(all.of("d", "c1").is_none());
        assert!(all.of("d", "c0").is_some());
        assert!(all.of("d", "new").is_some());
    }
}
