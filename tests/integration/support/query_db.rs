//! Shared by the query conformance tests (`query::clause_*`, `subqueries`, `operators`,
//! `constants_keywords`, `search`): a store holding the documentation's
//! sample items, queries through `Engine::query` following every page, and comparisons that
//! treat numbers by value (the service prints `20.0` as `20`).
//!
//! Every sample set is loaded twice: into a container with one physical partition and into
//! one with four, so each expectation also checks that the cross-partition merge (ORDER BY,
//! aggregates, DISTINCT, GROUP BY, OFFSET/LIMIT) gives the single-partition answer.

use std::collections::HashMap;

use cosmoscope::Error;
use cosmoscope::engine::{Backend, Engine, QueryOptions};
use cosmoscope::engine::{ContainerSettings, Throughput};
use serde_json::{Value, json};
use tempfile::TempDir;

pub use super::fixture::DB;
use super::fixture::Fixture;

/// The sample containers: one range, and four ranges (40,000 RU/s).
const CONTAINERS: [(&str, u64); 2] = [("one", 400), ("many", 40_000)];

/// A store with the same items in every sample container. `engine` is declared first so
/// it is dropped (and its background thread joined) before the directory is removed.
pub struct Db {
    pub engine: Engine,
    _dir: TempDir,
    containers: Vec<&'static str>,
}

impl Db {
    /// The items, partitioned on `/id`, with the default indexing policy.
    pub fn new(docs: &[Value]) -> Db {
        Db::with(docs, |_| {})
    }

    /// The items in the single-range container only: for behaviour the service defines for
    /// one physical partition but merges differently across several.
    pub fn single(docs: &[Value]) -> Db {
        Db::single_with(docs, |_| {})
    }

    /// [`Db::single`] with settings adjusted by `tweak`.
    pub fn single_with(docs: &[Value], tweak: impl Fn(&mut ContainerSettings)) -> Db {
        let mut db = Db::with(docs, tweak);
        db.containers.truncate(1);
        db
    }

    /// The items with settings adjusted by `tweak` (indexing policy, partition key).
    pub fn with(docs: &[Value], tweak: impl Fn(&mut ContainerSettings)) -> Db {
        let Fixture { engine, dir } = super::fixture::open();
        for (name, ru) in CONTAINERS {
            let mut s = ContainerSettings::new(vec!["/id".to_string()]);
            s.throughput = Throughput::Manual(ru);
            tweak(&mut s);
            engine
                .create_container(DB, name, s)
                .unwrap_or_else(|e| panic!("create container {name}: {e}"));
            for d in docs {
                engine
                    .upsert_item(DB, name, d.to_string().as_bytes(), None)
                    .unwrap_or_else(|e| panic!("upsert {d}: {e}"));
            }
        }
        Db {
            engine,
            _dir: dir,
            containers: CONTAINERS.iter().map(|(n, _)| *n).collect(),
        }
    }

    /// Runs `sql` on every sample container; one result list per container.
    pub fn each(&self, sql: &str, params: &[(&str, Value)]) -> Vec<Vec<Value>> {
        self.containers
            .iter()
            .map(|c| {
                run(&self.engine, c, sql, params).unwrap_or_else(|e| {
                    panic!(
                        "{sql}\n  on container {c} failed: {} {}",
                        e.status, e.message
                    )
                })
            })
            .collect()
    }

    /// The result of `sql` on the single-range container.
    pub fn rows(&self, sql: &str) -> Vec<Value> {
        self.each(sql, &[]).swap_remove(0)
    }

    /// `sql` must return exactly `expected`, in this order, on every container.
    pub fn ordered(&self, sql: &str, expected: Value) {
        self.ordered_with(sql, &[], expected)
    }

    pub fn ordered_with(&self, sql: &str, params: &[(&str, Value)], expected: Value) {
        let expected = as_list(expected);
        for (c, got) in self.containers.iter().zip(self.each(sql, params)) {
            assert_same(sql, c, &got, &expected);
        }
    }

    /// `sql` must return `expected` in any order (the service leaves the order unspecified
    /// without ORDER BY) on every container.
    pub fn unordered(&self, sql: &str, expected: Value) {
        self.unordered_with(sql, &[], expected)
    }

    pub fn unordered_with(&self, sql: &str, params: &[(&str, Value)], expected: Value) {
        let expected = sorted(as_list(expected));
        for (c, got) in self.containers.iter().zip(self.each(sql, params)) {
            assert_same(sql, c, &sorted(got), &expected);
        }
    }

    /// `sql` must fail with status 400 on every container; returns the first error.
    pub fn bad_request(&self, sql: &str) -> Error {
        self.bad_request_with(sql, &[])
    }

    pub fn bad_request_with(&self, sql: &str, params: &[(&str, Value)]) -> Error {
        let mut first = None;
        for c in &self.containers {
            match run(&self.engine, c, sql, params) {
                Ok(rows) => panic!(
                    "{sql}\n  on container {c} should be rejected with 400, but returned {}",
                    Value::Array(rows)
                ),
                Err(e) => {
                    assert_eq!(e.status.as_u16(), 400, "{sql}: {}", e.message);
                    first.get_or_insert(e);
                }
            }
        }
        first.expect("at least one container")
    }
}

/// Runs `sql` through `Engine::query`, following continuations, and returns every result.
pub fn run(
    engine: &Engine,
    container: &str,
    sql: &str,
    params: &[(&str, Value)],
) -> Result<Vec<Value>, Error> {
    let params: HashMap<String, Value> = params
        .iter()
        .map(|(k, v)| (k.trim_start_matches('@').to_string(), v.clone()))
        .collect();
    let mut opts = QueryOptions {
        params,
        max_items: Some(1000),
        ..Default::default()
    };
    let mut out = Vec::new();
    for _ in 0..100 {
        let r = engine.query(DB, container, sql, &opts)?;
        out.extend(r.documents.into_iter().map(Value::from));
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return Ok(out),
        }
    }
    panic!("{sql}: more than 100 pages");
}

/// A one-off store without FROM data: for constant queries (`SELECT 1`), which still need
/// a container to run against.
pub fn empty() -> Db {
    Db::new(&[])
}

/// The value of a FROM-less `SELECT VALUE <expr>`: `None` when the result is undefined
/// (no row).
pub fn value_of(db: &Db, expr: &str) -> Option<Value> {
    let sql = format!("SELECT VALUE {expr}");
    let mut rows = db.rows(&sql);
    assert!(rows.len() <= 1, "{sql}: {rows:?}");
    rows.pop()
}

/// The system properties the store adds to every item.
const SYSTEM: [&str; 6] = ["_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"];

/// Removes the system properties from a top-level result, so `SELECT *` results compare
/// with the documentation's items.
fn strip_system(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !SYSTEM.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn as_list(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        other => panic!("expected results must be a JSON array, got {other}"),
    }
}

/// Numbers as doubles, so `20` and `20.0` compare equal (the service stores doubles).
pub fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => {
            let f = n.as_f64().expect("finite number");
            if f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
                && !(f == 0.0 && f.is_sign_negative())
            {
                json!(f as i64)
            } else {
                json!(f)
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        other => other.clone(),
    }
}

fn sorted(rows: Vec<Value>) -> Vec<Value> {
    let mut keyed: Vec<(String, Value)> = rows
        .into_iter()
        .map(|r| (normalize(&strip_system(&r)).to_string(), r))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, r)| r).collect()
}

/// Exact comparison, member order included (the service keeps projection order).
fn assert_same(sql: &str, container: &str, got: &[Value], expected: &[Value]) {
    let g: Vec<String> = got
        .iter()
        .map(|v| normalize(&strip_system(v)).to_string())
        .collect();
    let e: Vec<String> = expected.iter().map(|v| normalize(v).to_string()).collect();
    assert!(
        g == e,
        "{sql}\n  on container {container}\n  expected: [{}]\n  actual:   [{}]",
        e.join(", "),
        g.join(", ")
    );
}
