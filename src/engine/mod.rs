//! The engine: the facade every front end (CLI, TUI, benchmarks) uses.
//!
//! It names resources the way users do (`database`, `container`, partition key values as
//! JSON) and speaks its own vocabulary: query requests and results ([`query`]), query plans
//! for clients that run a query range by range ([`plan`]), change feed
//! requests and pages ([`feed`]), containers, partitions and item responses ([`views`]),
//! batches and patches ([`batch`]), server-side scripts and their executions ([`scripts`]),
//! hypothetical partition layouts for the advisor and projections ([`layout`]),
//! and the container settings and policies re-exported
//! below. The operations on them are the [`Backend`] trait (`backend.rs`); [`Engine`] is
//! its embedded implementation (`embedded.rs`) on the store of a data directory, which also
//! offers what only a local store can: opening a directory, compaction, and stepping the
//! background work by hand for tests.
//!
//! An open [`Engine`] runs the store's background work — flushing read metering, purging
//! expired items, building indexes — on its own thread.

mod backend;
mod background;
pub mod batch;
mod check;
mod embedded;
pub mod feed;
mod group_commit;
pub mod import;
mod import_batches;
pub mod import_order;
pub mod layout;
pub mod plan;
pub mod query;
pub mod remote;
pub mod retry;
mod script_host;
mod script_run;
pub mod scripts;
pub mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Result, StatusCode};
use crate::store::Store;
use crate::store::catalog::ContainerDef;
use crate::store::item;
pub use crate::store::patch::PatchOperation;
use crate::store::write::{WriteKind, WriteResult};
pub use backend::{Backend, Capabilities, ContainerKey, ItemWriteKind, KeyPage, WriteDone};
pub use batch::{
    BatchFailure, BatchOperation, BatchOperationResult, BatchResponse, OperationType, PatchRequest,
};
pub use check::{CheckReport, ContainerReport};
pub use feed::{FeedChange, FeedMode, FeedOp, FeedPage, FeedRequest, FeedStart};
pub use layout::{
    ItemKey, Layout, bound_keys, item_key, projected_range_count, projected_throughput, value_epk,
};
pub use plan::QueryPlan;
pub use query::{
    AccessView, Document, IndexMetrics, PartitionResult, Progress, QueryLimits, QueryMetrics,
    QueryOptions, QueryResult, RangeProgress, RoutingView, query_values,
};
pub use scripts::{
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, TriggerOperation, TriggerType,
    TriggeredOp, TriggeredWrite,
};
pub use views::*;

pub use crate::store::catalog::{ContainerSettings, Throughput, UniqueKeyPolicy};
pub use crate::store::compact::{Outcome as CompactOutcome, When as CompactWhen};
pub use crate::store::durability::{Durability, FLUSH_INTERVAL};
pub use crate::store::footprint::{Footprint, Part as FootprintPart};
pub use crate::store::indexing::{
    CompositeOrder, CompositePath, FullTextIndex, IndexingMode, IndexingPolicy, PathSpec,
    VectorIndex, VectorIndexType,
};
pub use crate::store::now_secs;
pub use crate::store::partition_key::PartitionKeyDefinition;
pub use crate::store::search_policy::{
    DistanceFunction, FullTextPath, FullTextPolicy, VectorDataType, VectorEmbedding,
    VectorEmbeddingPolicy,
};

/// Environment variable naming the default data directory.
pub const DATA_DIR_ENV: &str = "COSMOSCOPE_DATA_DIR";

/// Items per import transaction, and the byte budget of one. Large transactions amortize
/// the random pages each commit rewrites (items, logical partition statistics, feed, and
/// above all index entries, whose random values touch leaf pages all over the index): a
/// commit rewrites about min(entries, index leaf pages), so fewer commits write less.
/// Measured with 1 KB documents and default indexing: 10,000 per commit gave 20.9k docs/s
/// at 100k items and ~7k at 1M; 50,000 gives 35k and 12.6k, for a larger file (1M items:
/// 6.2 GB → 8.2 GB, as a big commit copies more pages before freeing the old ones). A crash
/// loses at most the open batch.
pub const IMPORT_BATCH_ITEMS: usize = 50_000;
/// JSON bytes an import writes per transaction at most (besides [`IMPORT_BATCH_ITEMS`]).
pub const IMPORT_BATCH_BYTES: usize = 64 * 1024 * 1024;

/// An open store plus its background worker.
pub struct Engine {
    store: Arc<Store>,
    _background: Option<background::Worker>,
    /// Parsed and checked query texts, as a statement cache: an application runs the same
    /// texts with new parameters.
    queries:
        std::sync::Mutex<std::collections::HashMap<String, Arc<crate::query::syntax::ast::Query>>>,
    /// Complete results of queries that cannot stream, for their later pages.
    results: Arc<crate::query::run::cache::ResultCache>,
    /// Concurrent single-item writes share a durable commit.
    group_commit: Arc<group_commit::GroupCommit>,
}

/// The folder of the data directory where complete query results are kept for their later
/// pages, in any process (see `query::run::spill`).
const QUERY_RESULTS_DIR: &str = "query-results";

impl Drop for Engine {
    /// Results still being computed for later pages are of no use once the engine closes
    /// (a front end that wants them kept settles first: [`Backend::settle`]).
    fn drop(&mut self) {
        self.results.cancel_computations();
        self.group_commit.stop();
    }
}

/// Query texts the statement cache keeps (it starts over when full).
const CACHED_QUERIES: usize = 256;

impl Engine {
    /// Opens (creating if needed) the store in `dir` and starts background work.
    pub fn open(dir: &Path) -> Result<Engine> {
        let store = Arc::new(Store::open(dir)?);
        // The worker's jobs all write (metering, expiry, index builds): a read-only store
        // has none to do.
        let worker = match store.read_only() {
            Some(_) => None,
            None => Some(background::Worker::start(store.clone())),
        };
        Ok(Engine::assemble(dir, store, worker))
    }

    /// Opens the store without the background worker: metering is flushed, expired items
    /// purged and index builds advanced only when the caller asks ([`Engine::flush_metrics`],
    /// [`Engine::purge_expired`], [`Engine::advance_index_build`]). For tests and tools that
    /// must see each step.
    pub fn open_without_background(dir: &Path) -> Result<Engine> {
        Ok(Engine::assemble(dir, Arc::new(Store::open(dir)?), None))
    }

    /// Opens the store in `dir` for reading only, whatever the directory allows: every
    /// write answers 403 with `reason`, and nothing in the directory changes.
    pub fn open_read_only(dir: &Path, reason: &str) -> Result<Engine> {
        let store = Store::open_read_only(dir, reason.to_string())?;
        Ok(Engine::assemble(dir, Arc::new(store), None))
    }

    fn assemble(dir: &Path, store: Arc<Store>, background: Option<background::Worker>) -> Engine {
        Engine {
            store,
            _background: background,
            queries: Default::default(),
            results: Arc::new(crate::query::run::cache::ResultCache::spilling_to(
                dir.join(QUERY_RESULTS_DIR),
            )),
            group_commit: Default::default(),
        }
    }

    /// `$COSMOSCOPE_DATA_DIR`, else the platform's data directory for cosmoscope.
    pub fn default_data_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        directories::ProjectDirs::from("", "", "cosmoscope")
            .map(|p| p.data_dir().to_path_buf())
            .unwrap_or_else(|| PathBuf::from(".cosmoscope"))
    }

    pub fn data_dir(&self) -> &Path {
        self.store.path()
    }

    /// Why the store takes no writes (read-only media, no write permission); `None` when
    /// it does.
    pub fn read_only(&self) -> Option<&str> {
        self.store.read_only()
    }

    /// What the data file holds: its parts (items, indexes, feed, statistics, ...) with
    /// their entries and sizes, and its free pages.
    pub fn footprint(&self) -> Result<Footprint> {
        self.store.footprint()
    }

    /// The underlying store, for white-box tests and benchmarks; front ends and the
    /// facade's clients use the [`Backend`] operations.
    #[cfg(any(test, feature = "test-harness"))]
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    fn def(&self, db: &str, container: &str) -> Result<Arc<ContainerDef>> {
        let txn = self.store.read_txn()?;
        self.store.container(&txn, db, container)
    }

    /// Runs the container's pending index transformation in this thread, `batches`
    /// transactions at a time; returns whether it is complete.
    pub fn advance_index_build(&self, db: &str, name: &str, batches: usize) -> Result<bool> {
        self.store.advance_index_build(db, name, batches)
    }

    fn write_one(
        &self,
        db: &str,
        name: &str,
        kind: WriteKind,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        let doc = charged(item::parse_body(body))?;
        self.group_commit
            .write(&self.store, db, name, kind, doc, if_match)
    }

    /// Changes when this process's commits reach the disk ([`Durability`]): every commit
    /// (the default), or every [`FLUSH_INTERVAL`] for a store serving an application's tests.
    pub fn set_durability(&self, durability: Durability) -> Result<()> {
        self.store.set_durability(durability)
    }

    /// Runs `load`, an import into `db/name` of `items` items in transactions of
    /// `batch_items`, with the container's index built once at the end from a sorted pass
    /// instead of item by item, when the container is empty and indexed and the load takes
    /// more than one transaction (one transaction already writes its entries in key order),
    /// or when an earlier such load did not finish building it.
    /// Each later transaction would otherwise rewrite most of the index's pages, so the
    /// load's rate would fall as the container grows; sorted, the index's pages are written
    /// once and full. Meanwhile queries on the container scan (its index is being built, as
    /// after a policy change). The index is built whether `load` succeeds or fails;
    /// `load`'s error comes first.
    pub fn bulk_load<T, E: From<crate::error::Error>>(
        &self,
        db: &str,
        name: &str,
        (items, batch_items): (usize, usize),
        load: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        let deferred = self
            .store
            .defer_index(db, name, items > batch_items.max(1))?;
        let loaded = load();
        if deferred {
            let built = self.finish_index_build(db, name);
            if loaded.is_ok() {
                built?;
            }
        }
        loaded
    }

    /// Builds a deferred index by sorting; if the container changed meanwhile (or another
    /// build replaced it), item by item. Either way, in this thread and to the end.
    fn finish_index_build(&self, db: &str, name: &str) -> Result<()> {
        let sorted = self.store.build_index_sorted(db, name);
        self.store.release_index_build(db, name)?;
        sorted?;
        while !self.store.advance_index_build(db, name, 8)? {}
        Ok(())
    }

    /// `sql` parsed and checked, from the statement cache when it was seen before (only
    /// texts that pass are kept, so errors are reported every time).
    fn parsed(&self, sql: &str) -> Result<Arc<crate::query::syntax::ast::Query>> {
        let cache = || self.queries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(q) = cache().get(sql) {
            return Ok(q.clone());
        }
        let q = crate::query::syntax::parser::parse(sql)
            .map_err(|e| e.with_charge(crate::charge::REJECTED))?;
        crate::query::syntax::check::check(&q)
            .map_err(|e| e.with_charge(crate::charge::REJECTED))?;
        let q = Arc::new(q);
        let mut cache = cache();
        if cache.len() >= CACHED_QUERIES {
            cache.clear();
        }
        cache.insert(sql.to_string(), q.clone());
        Ok(q)
    }

    /// Writes pending read metering now (the background thread does it every 200 ms).
    pub fn flush_metrics(&self) -> Result<()> {
        self.store.flush_pending().map(|_| ())
    }

    /// Closes the store (its file can only be replaced while nobody has it open) and
    /// compacts it: rewrites the data file without its free pages, `when` it is worth it.
    /// [`CompactOutcome::InUse`] when another process has the store open.
    pub fn close_and_compact(self, when: CompactWhen) -> Result<CompactOutcome> {
        let dir = self.data_dir().to_path_buf();
        drop(self);
        Engine::compact(&dir, when)
    }

    /// Compacts the store in `dir` (see [`Engine::close_and_compact`]) when no process,
    /// this one included, has it open; [`CompactOutcome::InUse`] otherwise.
    pub fn compact(dir: &Path, when: CompactWhen) -> Result<CompactOutcome> {
        crate::store::compact::compact(dir, when)
    }

    /// Purges expired items now (the background thread does it every second).
    pub fn purge_expired(&self) -> Result<usize> {
        self.store.purge_expired(crate::store::now_secs())
    }
}

fn response(r: WriteResult) -> ItemResponse {
    ItemResponse {
        status: r.status,
        body: r.body,
        etag: r.etag,
        request_charge: r.request_charge,
        range: r.range.to_string(),
        lsn: Some(r.lsn),
    }
}

/// The service charges failed requests too: one rejected before it touched data (bad
/// input, a missing container) costs the minimum; 429s and internal faults cost nothing.
fn charged<T>(result: Result<T>) -> Result<T> {
    result.map_err(|e| {
        if e.request_charge == 0.0
            && e.status != StatusCode::TooManyRequests
            && !e.status.is_server_error()
        {
            e.with_charge(crate::charge::REJECTED)
        } else {
            e
        }
    })
}

fn charge_round(v: f64) -> f64 {
    crate::charge::round(v)
}

/// A random version-4 GUID in its text form: the ids the service generates (a script's
/// `createDocument` of an item without one) and the activity ids it answers with.
pub fn new_guid() -> String {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 16];
    // Without the system's randomness the GUID is all zeros but for its version bits; an id
    // clash is then a 409, never a panic.
    let _ = ring::rand::SystemRandom::new().fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
