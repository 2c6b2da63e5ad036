//! Helpers shared by the engine tests (and others): a store in a temporary directory,
//! JSON bodies, error extraction, feed draining and a small deterministic PRNG.

use cosmoscope::Error;
use cosmoscope::engine::ContainerSettings;
use cosmoscope::engine::{Backend, Engine, ItemResponse};
use cosmoscope::engine::{FeedChange, FeedMode, FeedRequest, FeedStart};
use serde_json::Value;
use tempfile::TempDir;

pub const DB: &str = "db";

/// An engine on a fresh temporary data directory with database [`DB`] created.
/// `engine` is declared first so it is dropped (and its background thread joined) before
/// the directory is removed.
pub struct Fixture {
    pub engine: Engine,
    pub dir: TempDir,
}

pub fn open() -> Fixture {
    open_database(DB)
}

/// An engine on a fresh temporary data directory with database `db` created.
pub fn open_database(db: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Engine::open(dir.path()).expect("open engine");
    engine.create_database(db).expect("create database");
    Fixture { engine, dir }
}

/// Like [`open`], without the background worker: the test drives every step.
pub fn open_manual() -> Fixture {
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Engine::open_without_background(dir.path()).expect("open engine");
    engine.create_database(DB).expect("create database");
    Fixture { engine, dir }
}

impl Fixture {
    /// Creates container `name` in [`DB`].
    pub fn container(&self, name: &str, settings: ContainerSettings) {
        self.engine
            .create_container(DB, name, settings)
            .unwrap_or_else(|e| panic!("create container {name}: {e}"));
    }

    /// Creates container `name` partitioned on `/pk` with default settings.
    pub fn pk_container(&self, name: &str) {
        self.container(name, pk_settings());
    }

    pub fn create(&self, c: &str, doc: &Value) -> ItemResponse {
        self.engine
            .create_item(DB, c, &bytes(doc))
            .unwrap_or_else(|e| panic!("create {doc}: {e}"))
    }

    pub fn upsert(&self, c: &str, doc: &Value) -> ItemResponse {
        self.engine
            .upsert_item(DB, c, &bytes(doc), None)
            .unwrap_or_else(|e| panic!("upsert {doc}: {e}"))
    }

    pub fn replace(&self, c: &str, doc: &Value) -> ItemResponse {
        self.engine
            .replace_item(DB, c, &bytes(doc), None)
            .unwrap_or_else(|e| panic!("replace {doc}: {e}"))
    }

    pub fn read(&self, c: &str, id: &str, pk: &Value) -> ItemResponse {
        self.engine
            .read_item(DB, c, id, pk)
            .unwrap_or_else(|e| panic!("read {id} {pk}: {e}"))
    }

    pub fn read_json(&self, c: &str, id: &str, pk: &Value) -> Value {
        body(&self.read(c, id, pk))
    }

    pub fn delete(&self, c: &str, id: &str, pk: &Value) -> ItemResponse {
        self.engine
            .delete_item(DB, c, id, pk, None)
            .unwrap_or_else(|e| panic!("delete {id} {pk}: {e}"))
    }

    /// Every change of the container from the beginning, following continuations.
    pub fn drain_feed(&self, c: &str, mode: FeedMode) -> Vec<FeedChange> {
        drain(&self.engine, c, FeedStart::Beginning, mode, 1000).0
    }
}

/// An engine on an empty temporary data directory (no database): for loading samples.
/// `engine` is declared first so it closes before the directory is removed.
pub struct Store {
    pub engine: Engine,
    _dir: TempDir,
}

pub fn store() -> Store {
    let dir = tempfile::tempdir().expect("temporary directory");
    let engine = Engine::open(dir.path()).expect("open engine");
    Store { engine, _dir: dir }
}

/// Import records of `docs`, each on its own line.
pub fn records_of(docs: &[Vec<u8>]) -> Vec<cosmoscope::engine::import::Record<'_>> {
    docs.iter()
        .enumerate()
        .map(|(line, json)| cosmoscope::engine::import::Record { line, json })
        .collect()
}

/// Every item of a container in storage order, without the system properties.
pub fn items(engine: &Engine, db: &str, c: &str) -> Vec<Value> {
    let mut out = Vec::new();
    engine
        .export(db, c, None, &mut |b: &[u8]| {
            let mut v: Value = serde_json::from_slice(b).expect("exported JSON");
            if let Some(o) = v.as_object_mut() {
                o.retain(|k, _| !k.starts_with('_'));
            }
            out.push(v);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("export {db}/{c}: {e}"));
    out
}

/// The items whose `type` is `t`.
pub fn of_type<'a>(items: &'a [Value], t: &str) -> Vec<&'a Value> {
    items.iter().filter(|i| i["type"] == t).collect()
}

pub fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a string"))
}

/// `ContainerSettings::new(vec!["/pk"])`.
pub fn pk_settings() -> ContainerSettings {
    ContainerSettings::new(vec!["/pk".into()])
}

pub fn bytes(doc: &Value) -> Vec<u8> {
    serde_json::to_vec(doc).expect("serialize")
}

/// The body of an item response as JSON.
pub fn body(r: &ItemResponse) -> Value {
    serde_json::from_slice(r.body.as_deref().expect("response has a body")).expect("body is JSON")
}

/// The error of a result that must have failed.
pub fn err<T>(r: Result<T, Error>) -> Error {
    match r {
        Ok(_) => panic!("expected an error, got success"),
        Err(e) => e,
    }
}

/// Reads pages of `max_items` from `start` until an empty page; returns every change and
/// the last continuation.
pub fn drain(
    engine: &Engine,
    c: &str,
    start: FeedStart,
    mode: FeedMode,
    max_items: usize,
) -> (Vec<FeedChange>, String) {
    let mut out = Vec::new();
    let mut start = start;
    for _ in 0..100_000 {
        let req = FeedRequest {
            start: start.clone(),
            mode,
            range: None,
            max_items,
            epk_range: None,
        };
        let page = engine
            .read_feed(DB, c, &req)
            .unwrap_or_else(|e| panic!("read feed: {e}"));
        assert!(
            page.changes.len() <= max_items,
            "a page holds at most max_items changes"
        );
        let empty = page.changes.is_empty();
        out.extend(page.changes);
        start = FeedStart::Continuation(page.continuation.clone());
        if empty {
            return (out, page.continuation);
        }
    }
    panic!("the feed never ran dry");
}

/// The item JSON a change carries (its current image).
pub fn current(change: &FeedChange) -> Value {
    change
        .current
        .as_ref()
        .expect("change has a current image")
        .value()
        .clone()
}

/// Sum of container / range statistics as `(items, bytes)`.
pub fn container_counts(engine: &Engine, c: &str) -> (u64, u64) {
    let info = engine.container(DB, c).expect("container");
    (info.statistics.item_count, info.statistics.size_bytes)
}

/// Every live item of a container as `(json, stored length)`.
pub fn export_all(engine: &Engine, c: &str) -> Vec<(Value, u64)> {
    let mut out = Vec::new();
    engine
        .export(DB, c, None, &mut |b: &[u8]| {
            out.push((
                serde_json::from_slice(b).expect("exported JSON"),
                b.len() as u64,
            ));
            Ok(())
        })
        .expect("export");
    out
}

/// SplitMix64: small, deterministic, good enough for test workloads.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// An index uniform in `0..n`; 0 when `n` is 0.
    pub fn index(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.index(100) < percent
    }

    /// One of `items`, uniformly (not empty).
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())].clone()
    }
}

/// `min <= epk < max` on the service's uppercase hex strings (ordinal comparison).
pub fn range_contains(min: &str, max: &str, epk: &str) -> bool {
    min <= epk && epk < max
}

/// Asserts that ranges (given as `(min, max)` in table order) tile `["", "FF")`.
pub fn assert_tiles(bounds: &[(String, String)]) {
    assert!(!bounds.is_empty(), "a container has at least one range");
    assert_eq!(bounds[0].0, "", "the first range starts at \"\"");
    assert_eq!(
        bounds[bounds.len() - 1].1,
        "FF",
        "the last range ends at \"FF\""
    );
    for w in bounds.windows(2) {
        assert_eq!(w[0].1, w[1].0, "ranges are contiguous: {bounds:?}");
    }
    for (min, max) in bounds {
        assert!(min < max, "each range is non-empty: {min} < {max}");
    }
}

/// Waits (polling) until the wall clock second is past `ts`, at most ~2.5 s.
pub fn wait_until_after(ts: i64) {
    let start = std::time::Instant::now();
    while cosmoscope::engine::now_secs() <= ts {
        assert!(start.elapsed().as_millis() < 2500, "clock did not advance");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
