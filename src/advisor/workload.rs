//! The workload a key is judged by: a workbench suite's patterns (those of the design whose
//! database holds the container, with the suite's simulator mix as their weights), or a
//! file of weighted queries and point operations on the container.
//!
//! A workload file is TOML (or JSON when it starts with `{`):
//!
//! ```toml
//! [[operations]]
//! id = "byUser"                 # names the pattern in the report
//! title = "A user's orders"     # optional
//! rate = 50                     # requests per second (or weight = N, scaled by --rate)
//! query = "SELECT * FROM c WHERE c.userId = @userId"
//! params = { userId = "/userId" }   # each parameter: the value at this path of a random item
//!
//! [[operations]]
//! id = "read"
//! weight = 4
//! read = true                   # a point read of a random item
//!
//! [[operations]]
//! id = "write"
//! weight = 1
//! create = true                 # a new item shaped like a random one (writes follow the data)
//! ```
//!
//! `replace = true` replaces a random item with itself. A parameter path no item has is an
//! error naming it, as is an operation that is none of query, read, create or replace.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::workbench::suite::Action;
use crate::workbench::{Design, Suite};

/// Requests per second of the whole workload when it gives weights rather than rates.
pub const DEFAULT_RATE: f64 = 100.0;

pub struct Workload {
    /// The suite's name or the file's path.
    pub name: String,
    pub patterns: Vec<WorkPattern>,
    pub source: Source,
}

pub enum Source {
    /// A suite and the id of the design the container belongs to.
    Suite {
        suite: Box<Suite>,
        design: String,
    },
    File,
}

/// One pattern of the workload.
#[derive(Debug, Clone)]
pub struct WorkPattern {
    pub id: String,
    pub title: String,
    /// Executions per second.
    pub rate: f64,
    pub op: Option<FileOp>,
}

/// What a workload file's operation sends.
#[derive(Debug, Clone)]
pub enum FileOp {
    /// A query whose parameters are each the value at a path of a random item.
    Query {
        sql: String,
        params: Vec<(String, String)>,
    },
    Read,
    Create,
    Replace,
    /// A recorded query, sent with one of the parameter sets it was sent with (names
    /// without their `@`).
    Recorded {
        sql: String,
        samples: Vec<Vec<(String, serde_json::Value)>>,
    },
    /// A read, create or replace (`kind`) of one of these items (indexes into the items)
    /// rather than of a random one: the items recorded requests addressed.
    On {
        kind: Box<FileOp>,
        items: Vec<usize>,
    },
}

impl FileOp {
    pub fn writes(&self) -> bool {
        match self {
            FileOp::Create | FileOp::Replace => true,
            FileOp::On { kind, .. } => kind.writes(),
            _ => false,
        }
    }
}

impl Workload {
    /// The item paths the workload's query parameters draw from.
    pub fn parameter_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .patterns
            .iter()
            .filter_map(|p| match &p.op {
                Some(FileOp::Query { params, .. }) => {
                    Some(params.iter().map(|(_, path)| path.clone()))
                }
                _ => None,
            })
            .flatten()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Whether the replay can run on a sample of the items: a workload file's queries,
    /// reads and writes draw their items from whatever items the replay holds, while a
    /// suite's parameters come from the container itself and recorded requests name
    /// their items.
    pub fn replays_on_a_sample(&self) -> bool {
        matches!(self.source, Source::File)
            && self.patterns.iter().all(|p| {
                matches!(
                    p.op,
                    Some(FileOp::Query { .. } | FileOp::Read | FileOp::Create | FileOp::Replace)
                )
            })
    }

    /// `spec` (a bundled suite, a suite file or a workload file) on container `db`/`c`;
    /// `None`: the bundled suite that has a design on `db`, if any. `has(path)` says
    /// whether some item of the container has `path`. `rate` is the total rate weights are
    /// scaled to.
    pub fn load(
        spec: Option<&str>,
        db: &str,
        c: &str,
        has: &dyn Fn(&str) -> bool,
        rate: f64,
    ) -> Result<Option<Workload>> {
        let Some(spec) = spec else {
            for (name, _) in crate::workbench::suite::BUILTIN {
                let suite = Suite::builtin(name)?;
                if suite.designs.iter().any(|d| d.database == db) {
                    return from_suite(suite, name, db, c, rate).map(Some);
                }
            }
            return Ok(None);
        };
        let is_suite = crate::workbench::suite::BUILTIN
            .iter()
            .any(|(n, _)| *n == spec);
        if is_suite {
            return from_suite(Suite::builtin(spec)?, spec, db, c, rate).map(Some);
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            Error::bad_request(format!(
                "--workload {spec:?} is neither a bundled suite (blog, webstore) nor a readable \
                 file: {e}"
            ))
        })?;
        if text.contains("[[operations]]") || text.contains("\"operations\"") {
            return from_file(&text, spec, has, rate).map(Some);
        }
        from_suite(Suite::parse(&text)?, spec, db, c, rate).map(Some)
    }
}

/// The suite's patterns that send measured requests to `c` in the design on `db`.
fn from_suite(suite: Suite, name: &str, db: &str, c: &str, rate: f64) -> Result<Workload> {
    let design: &Design = suite
        .designs
        .iter()
        .find(|d| d.database == db)
        .ok_or_else(|| {
            let dbs: Vec<&str> = suite.designs.iter().map(|d| d.database.as_str()).collect();
            Error::bad_request(format!(
                "suite {name} has no design on database {db:?} (its designs use {})",
                dbs.join(", ")
            ))
        })?;
    let weights: BTreeMap<&str, f64> = suite
        .simulate
        .as_ref()
        .map(|s| s.mix.iter().map(|(p, w)| (p.as_str(), *w)).collect())
        .unwrap_or_default();
    let mut patterns: Vec<WorkPattern> = suite
        .patterns
        .iter()
        .filter(|p| {
            p.steps_for(&design.id).is_some_and(|steps| {
                steps.iter().any(|s| !s.setup && s.action.container() == c)
                    // Script patterns (stored procedures: C3s, C4s, C1es, W7s; triggers:
                    // C2s) are not replayed: a copy under another key has no scripts, and
                    // their twins (C3, C4, C1e, W7, C2) send the same writes.
                    && !steps.iter().any(|s| {
                        matches!(s.action, Action::Execute { .. } | Action::Triggered { .. })
                    })
            })
        })
        .map(|p| WorkPattern {
            id: p.id.clone(),
            title: p.title.clone(),
            rate: if weights.is_empty() {
                1.0
            } else {
                weights.get(p.id.as_str()).copied().unwrap_or(0.0)
            },
            op: None,
        })
        .collect();
    if patterns.is_empty() {
        return Err(Error::bad_request(format!(
            "suite {name}'s design {} sends no request to container {c:?}",
            design.id
        )));
    }
    scale_weights(&mut patterns, rate);
    let design = design.id.clone();
    Ok(Workload {
        name: name.to_string(),
        patterns,
        source: Source::Suite {
            suite: Box::new(suite),
            design,
        },
    })
}

/// Weights scaled so the workload's rates sum to `rate`.
pub(super) fn scale_weights(patterns: &mut [WorkPattern], rate: f64) {
    let total: f64 = patterns.iter().map(|p| p.rate).sum();
    if total > 0.0 {
        for p in patterns.iter_mut() {
            p.rate = p.rate * rate / total;
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    operations: Vec<RawOp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    id: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, String>,
    #[serde(default)]
    read: bool,
    #[serde(default)]
    create: bool,
    #[serde(default)]
    replace: bool,
}

fn from_file(text: &str, name: &str, has: &dyn Fn(&str) -> bool, rate: f64) -> Result<Workload> {
    let raw: RawFile = if text.trim_start().starts_with('{') {
        serde_json::from_str(text)
            .map_err(|e| Error::bad_request(format!("invalid workload file {name} (JSON): {e}")))?
    } else {
        toml::from_str(text).map_err(|e| {
            Error::bad_request(format!(
                "invalid workload file {name} (TOML): {}",
                e.to_string().trim_end()
            ))
        })?
    };
    if raw.operations.is_empty() {
        return Err(Error::bad_request(format!(
            "workload file {name} lists no operations"
        )));
    }
    let weighted = raw.operations.iter().all(|o| o.rate.is_none());
    let mut patterns = Vec::new();
    for o in raw.operations {
        let op = file_op(&o, has)?;
        let rate = match (o.rate, o.weight) {
            (Some(r), _) | (None, Some(r)) if r.is_finite() && r >= 0.0 => r,
            (None, None) => 1.0,
            _ => {
                return Err(Error::bad_request(format!(
                    "workload operation {}: rate and weight are numbers of 0 or more",
                    o.id
                )));
            }
        };
        patterns.push(WorkPattern {
            title: o.title.clone().unwrap_or_else(|| o.id.clone()),
            id: o.id,
            rate,
            op: Some(op),
        });
    }
    if weighted {
        scale_weights(&mut patterns, rate);
    }
    Ok(Workload {
        name: name.to_string(),
        patterns,
        source: Source::File,
    })
}

/// Checks one operation: exactly one action, and parameter paths some item has.
fn file_op(o: &RawOp, has: &dyn Fn(&str) -> bool) -> Result<FileOp> {
    let chosen = [o.query.is_some(), o.read, o.create, o.replace];
    if chosen.iter().filter(|c| **c).count() != 1 {
        return Err(Error::bad_request(format!(
            "workload operation {}: give exactly one of query = \"SQL\", read = true, create = \
             true, replace = true",
            o.id
        )));
    }
    for (name, path) in &o.params {
        if !path.starts_with('/') {
            return Err(Error::bad_request(format!(
                "workload operation {}: parameter @{name} is a path of the items, like /userId; \
                 got {path:?}",
                o.id
            )));
        }
        if !has(path) {
            return Err(Error::bad_request(format!(
                "workload operation {}: parameter @{name} draws from {path}, which no item of \
                 the container has",
                o.id
            )));
        }
    }
    Ok(match &o.query {
        Some(sql) => FileOp::Query {
            sql: sql.clone(),
            params: o
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        },
        None if o.read => FileOp::Read,
        None if o.create => FileOp::Create,
        None => FileOp::Replace,
    })
}
