//! The engine: the facade every front end (CLI, TUI, benchmarks) uses.
//!
//! It names resources the way users do (`database`, `container`, partition key values as
//! JSON), opens the right transactions, and returns typed results that carry their RU
//! charge. It also runs the store's background work — flushing read metering and purging
//! expired items — on its own thread for as long as it is open.

pub mod background;
pub mod batch;
pub mod feed;
pub mod import;
pub mod query;
pub mod retry;
pub mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result, StatusCode};
use crate::store::Store;
use crate::store::catalog::ContainerDef;
use crate::store::epk;
use crate::store::item;
use crate::store::keys::RangeId;
use crate::store::meter;
pub use crate::store::patch::PatchOperation;
use crate::store::stats::StatsView;
use crate::store::write::{WriteBatch, WriteKind, WriteResult};
pub use batch::{
    BatchFailure, BatchOperation, BatchOperationResult, BatchResponse, OperationType, PatchRequest,
};
pub use feed::{FeedChange, FeedMode, FeedOp, FeedPage, FeedRequest, FeedStart};
pub use query::{
    AccessView, Document, IndexMetrics, PartitionResult, Progress, QueryMetrics, QueryOptions,
    QueryResult, RangeProgress, RoutingView,
};
pub use views::*;

pub use crate::store::catalog::{ContainerSettings, Throughput, UniqueKeyPolicy};
pub use crate::store::compact::{Outcome as CompactOutcome, When as CompactWhen};
pub use crate::store::indexing::{
    CompositeOrder, CompositePath, FullTextIndex, IndexingMode, IndexingPolicy, PathSpec,
    VectorIndex, VectorIndexType,
};
pub use crate::store::now_secs;
pub use crate::store::partition_key::PartitionKeyDefinition;
pub use crate::store::search_policy::{FullTextPolicy, VectorEmbeddingPolicy};

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
const IMPORT_BATCH_BYTES: usize = 64 * 1024 * 1024;

/// An open store plus its background worker.
pub struct Engine {
    store: Arc<Store>,
    _background: Option<background::Worker>,
    /// Parsed and checked query texts, as a statement cache: an application runs the same
    /// texts with new parameters.
    queries:
        std::sync::Mutex<std::collections::HashMap<String, Arc<crate::query::syntax::ast::Query>>>,
    /// Complete results of queries that cannot stream, for their later pages.
    results: crate::query::run::cache::ResultCache,
}

/// Query texts the statement cache keeps (it starts over when full).
const CACHED_QUERIES: usize = 256;

impl Engine {
    /// Opens (creating if needed) the store in `dir` and starts background work.
    pub fn open(dir: &Path) -> Result<Engine> {
        let store = Arc::new(Store::open(dir)?);
        let worker = background::Worker::start(store.clone());
        Ok(Engine {
            store,
            _background: Some(worker),
            queries: Default::default(),
            results: Default::default(),
        })
    }

    /// Opens the store without the background worker: metering is flushed, expired items
    /// purged and index builds advanced only when the caller asks ([`Engine::flush_metrics`],
    /// [`Engine::purge_expired`], [`Engine::advance_index_build`]). For tests and tools that
    /// must see each step.
    pub fn open_without_background(dir: &Path) -> Result<Engine> {
        Ok(Engine {
            store: Arc::new(Store::open(dir)?),
            _background: None,
            queries: Default::default(),
            results: Default::default(),
        })
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

    /// The underlying store, for code in this crate that composes lower-level operations.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    fn def(&self, db: &str, container: &str) -> Result<Arc<ContainerDef>> {
        let txn = self.store.read_txn()?;
        self.store.container(&txn, db, container)
    }

    // ---- databases ----

    pub fn create_database(&self, name: &str) -> Result<DatabaseInfo> {
        let mut txn = self.store.write_txn()?;
        let def = self
            .store
            .create_database(&mut txn, name, crate::store::now_secs())?;
        txn.commit()?;
        Ok(DatabaseInfo::new(&def, 0))
    }

    pub fn delete_database(&self, name: &str) -> Result<()> {
        let mut txn = self.store.write_txn()?;
        self.store.delete_database(&mut txn, name)?;
        txn.commit()?;
        Ok(())
    }

    pub fn list_databases(&self) -> Result<Vec<DatabaseInfo>> {
        let txn = self.store.read_txn()?;
        self.store
            .list_databases(&txn)?
            .iter()
            .map(|d| {
                Ok(DatabaseInfo::new(
                    d,
                    self.store.list_containers(&txn, &d.id)?.len(),
                ))
            })
            .collect()
    }

    // ---- containers ----

    pub fn create_container(
        &self,
        db: &str,
        name: &str,
        settings: ContainerSettings,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        let def =
            self.store
                .create_container(&mut txn, db, name, settings, crate::store::now_secs())?;
        txn.commit()?;
        self.container(&def.database, &def.id)
    }

    pub fn delete_container(&self, db: &str, name: &str) -> Result<()> {
        let mut txn = self.store.write_txn()?;
        self.store.delete_container(&mut txn, db, name)?;
        txn.commit()?;
        Ok(())
    }

    /// Containers of one database, or of all databases.
    pub fn list_containers(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>> {
        let txn = self.store.read_txn()?;
        let dbs = match db {
            Some(db) => vec![self.store.require_database(&txn, db)?],
            None => self.store.list_databases(&txn)?,
        };
        let mut out = Vec::new();
        for d in dbs {
            for c in self.store.list_containers(&txn, &d.id)? {
                let stats = self.store.container_stats(&txn, &c)?;
                out.push(ContainerInfo::new(
                    &c,
                    StatsView::from(&stats.counters),
                    None,
                ));
            }
        }
        Ok(out)
    }

    /// Settings, statistics and physical partitions of one container.
    pub fn container(&self, db: &str, name: &str) -> Result<ContainerInfo> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let stats = self.store.container_stats(&txn, &def)?;
        let ranges = self
            .store
            .ranges_with_stats(&txn, &def)?
            .iter()
            .map(|(r, s)| RangeInfo::new(&def, r, s))
            .collect();
        Ok(ContainerInfo::new(
            &def,
            StatsView::from(&stats.counters),
            Some(ranges),
        ))
    }

    /// The container's live physical partitions, in EPK order (the service's `pkranges`).
    pub fn partition_key_ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>> {
        let def = self.def(db, name)?;
        Ok(def.ranges.iter().map(PartitionKeyRange::new).collect())
    }

    /// Changes throughput; raising it past `ranges × 10,000` RU/s splits ranges.
    pub fn set_throughput(
        &self,
        db: &str,
        name: &str,
        throughput: Throughput,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        self.store.set_throughput(&mut txn, db, name, throughput)?;
        txn.commit()?;
        self.container(db, name)
    }

    /// Turns RU budget enforcement on or off: with it on, a request that finds its
    /// partition's budget for the current second spent gets 429 (retry-after in ms).
    pub fn set_throughput_enforcement(
        &self,
        db: &str,
        name: &str,
        enforce: bool,
    ) -> Result<ContainerInfo> {
        let mut txn = self.store.write_txn()?;
        let mut def = (*self.store.container(&txn, db, name)?).clone();
        def.enforce_throughput = enforce;
        self.store.put_container(&mut txn, &def)?;
        txn.commit()?;
        self.container(db, name)
    }

    /// Replaces the container's indexing policy (400 for an invalid one, for vector or
    /// full-text indexes off the container's policies, and for changed vector indexes,
    /// which the service fixes at creation). The new index
    /// builds in the background; `container` shows `indexTransformationProgress` and
    /// queries stay correct meanwhile.
    pub fn set_indexing_policy(
        &self,
        db: &str,
        name: &str,
        policy: crate::store::indexing::IndexingPolicy,
    ) -> Result<ContainerInfo> {
        self.store.set_indexing_policy(db, name, policy)?;
        self.container(db, name)
    }

    /// Runs the container's pending index transformation in this thread, `batches`
    /// transactions at a time; returns whether it is complete.
    pub fn advance_index_build(&self, db: &str, name: &str, batches: usize) -> Result<bool> {
        self.store.advance_index_build(db, name, batches)
    }

    /// Ranges with statistics and recent load, and the largest and hottest logical
    /// partitions. `window` is how many seconds of meter history to include.
    pub fn partitions(
        &self,
        db: &str,
        name: &str,
        top: usize,
        window: u64,
    ) -> Result<PartitionsReport> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let ranges = self.store.ranges_with_stats(&txn, &def)?;
        let (now, _) = meter::current_second();
        let since = now.saturating_sub(window);
        let mut load = Vec::with_capacity(ranges.len());
        for (r, _) in &ranges {
            let samples = self.store.meter_history(&txn, def.rid, r.id, since)?;
            let last = samples
                .iter()
                .find(|s| s.second + 1 == now)
                .map_or(0.0, |s| s.ru);
            load.push(RangeLoad {
                id: r.id.to_string(),
                budget_per_second: charge_round(def.range_budget()),
                ru_last_second: charge_round(last),
                ru_peak: charge_round(samples.iter().map(|s| s.ru).fold(0.0, f64::max)),
                throttled: samples.iter().map(|s| s.throttled).sum(),
                requests: samples.iter().map(|s| s.requests).sum(),
                samples: samples.iter().map(SampleView::from).collect(),
            });
        }
        let (largest, hottest) = self.store.top_logical_partitions(&txn, &def, top)?;
        Ok(PartitionsReport {
            container: def.full_name(),
            partitions: ranges
                .iter()
                .map(|(r, s)| RangeInfo::new(&def, r, s))
                .collect(),
            load,
            window_seconds: window,
            largest_logical_partitions: largest
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            hottest_logical_partitions: hottest
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
        })
    }

    /// Logical partitions of one physical partition in EPK order, read from that range's
    /// statistics only, `limit` per page; pass the last EPK (hex) as `after` for the next.
    pub fn logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: u32,
        after: Option<&str>,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let r = def.range(range).ok_or_else(|| {
            Error::not_found(format!(
                "container {} has no live partition key range {range}",
                def.full_name()
            ))
        })?;
        let after = after
            .map(|a| {
                epk::Epk::from_hex(a)
                    .ok_or_else(|| Error::bad_request(format!("{a:?} is not an EPK (hex digits)")))
            })
            .transpose()?;
        let limit = limit.max(1);
        let items = self.store.logical_partitions(
            &txn,
            &def,
            &r.min_inclusive,
            &r.max_exclusive,
            after.as_ref(),
            limit,
        )?;
        let next = (items.len() == limit)
            .then(|| items.last().map(|l| l.epk.to_hex()))
            .flatten();
        Ok(LogicalPartitionPage {
            range: range.to_string(),
            logical_partitions: items
                .iter()
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            next,
        })
    }

    /// The logical partitions of one physical partition, largest first: `skip` then
    /// `limit` of them, from that range's statistics (no item is read). `next` is the skip
    /// for the following page.
    pub fn largest_logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: u32,
        skip: usize,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let r = def.range(range).ok_or_else(|| {
            Error::not_found(format!(
                "container {} has no live partition key range {range}",
                def.full_name()
            ))
        })?;
        let limit = limit.max(1);
        let (top, more) = self.store.largest_in_range(
            &txn,
            &def,
            &r.min_inclusive,
            &r.max_exclusive,
            skip + limit,
        )?;
        Ok(LogicalPartitionPage {
            range: range.to_string(),
            logical_partitions: top
                .iter()
                .skip(skip)
                .map(|l| LogicalPartitionView::new(&def, l))
                .collect(),
            next: more.then(|| (skip + limit).to_string()),
        })
    }

    /// A page of `(partition key, id)` pairs of a container in storage order, read from keys
    /// and statistics only (no RU: this is the explorer's own listing, not a service
    /// request). Pass the returned cursor back to continue; `None` means done.
    pub fn item_keys(
        &self,
        db: &str,
        name: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<crate::store::read::KeyPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let (keys, last) = self.store.item_keys(&txn, &def, after, limit.max(1))?;
        // Wire form to request form: bare for one-level keys.
        let keys = keys
            .into_iter()
            .map(|(pk, id)| match pk {
                Value::Array(mut a) if a.len() == 1 => (a.pop().unwrap_or(Value::Null), id),
                other => (other, id),
            })
            .collect();
        Ok((keys, last))
    }

    /// A key's EPK and the range that owns it; for a hierarchical prefix, the EPK range it
    /// spans and every range overlapping it.
    pub fn epk(&self, db: &str, name: &str, pk: &Value) -> Result<EpkInfo> {
        let def = self.def(db, name)?;
        let pkdef = &def.partition_key;
        let components = pkdef.parse_request_prefix(pk)?;
        if components.len() == pkdef.paths.len() {
            let value = pkdef.parse_request_value(pk)?;
            let e = value.epk(pkdef);
            let owner = def.owner(e.as_bytes())?;
            return Ok(EpkInfo {
                partition_key: value.to_display_json(),
                epk: e.to_hex(),
                epk_range: None,
                partitions: vec![owner.id.to_string()],
            });
        }
        let (min, max) = epk::prefix_range(&components, pkdef.paths.len())
            .map_err(|e| Error::bad_request(format!("invalid partition key prefix: {e}")))?;
        let partitions = def
            .ranges
            .iter()
            .filter(|r| r.overlaps(&min, &max))
            .map(|r| r.id.to_string())
            .collect();
        Ok(EpkInfo {
            partition_key: pk.clone(),
            epk: min.to_hex(),
            epk_range: Some((min.to_hex(), max.to_hex())),
            partitions,
        })
    }

    // ---- items ----

    fn write_one(
        &self,
        db: &str,
        name: &str,
        kind: WriteKind,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        charged((|| {
            let doc = item::parse_body(body)?;
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let result = batch.write(kind, doc, if_match)?;
            batch.commit()?;
            Ok(response(result))
        })())
    }

    pub fn create_item(&self, db: &str, name: &str, body: &[u8]) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Create, body, None)
    }

    pub fn upsert_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Upsert, body, if_match)
    }

    pub fn replace_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write_one(db, name, WriteKind::Replace, body, if_match)
    }

    pub fn read_item(&self, db: &str, name: &str, id: &str, pk: &Value) -> Result<ItemResponse> {
        charged((|| {
            let txn = self.store.read_txn()?;
            let def = self.store.container(&txn, db, name)?;
            let value = def.partition_key.parse_request_value(pk)?;
            let r = self.store.read_item(&txn, &def, id, &value)?;
            Ok(ItemResponse {
                status: StatusCode::Ok,
                etag: item::stored_etag(&r.json),
                body: Some(r.json),
                request_charge: r.request_charge,
                range: r.range.to_string(),
                lsn: None,
            })
        })())
    }

    pub fn delete_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        charged((|| {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let value = batch.container().partition_key.parse_request_value(pk)?;
            let result = batch.delete(id, &value, if_match)?;
            batch.commit()?;
            Ok(response(result))
        })())
    }

    /// Checks an import file's records (JSON, id, partition key, ttl) without writing.
    pub fn validate_records(&self, db: &str, name: &str, records: &[import::Record]) -> Result<()> {
        let def = self.def(db, name)?;
        let now = crate::store::now_secs();
        for rec in records {
            let check = || -> Result<()> {
                let doc = item::parse_body(rec.json)?;
                item::item_id(&doc)?;
                def.partition_key.extract(&doc)?;
                item::expiry(&def, &doc, now)?;
                Ok(())
            };
            check().map_err(|e| import::at_line(e, rec.line))?;
        }
        Ok(())
    }

    /// Upserts records in batched transactions (each batch is atomic). With throughput
    /// enforcement on, a throttled batch commits what it has, waits the retry-after and
    /// goes on, as the SDKs' bulk mode does. `progress` gets the count written so far.
    pub fn import_records(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        self.import_records_in_batches(db, name, records, IMPORT_BATCH_ITEMS, progress)
    }

    /// [`Engine::import_records`] with at most `batch_items` items per transaction.
    pub fn import_records_in_batches(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        batch_items: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        let batch_items = batch_items.max(1);
        let started = std::time::Instant::now();
        let mut summary = ImportSummary::default();
        let mut next = 0;
        while next < records.len() {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let mut bytes = 0;
            let mut in_batch = 0;
            let mut throttle = None;
            while next < records.len() && in_batch < batch_items && bytes < IMPORT_BATCH_BYTES {
                let rec = records[next];
                let doc = item::parse_body(rec.json).map_err(|e| import::at_line(e, rec.line))?;
                match batch.write(WriteKind::Upsert, doc, None) {
                    Ok(r) => {
                        summary.request_charge += r.request_charge;
                        if r.status == StatusCode::Created {
                            summary.created += 1
                        } else {
                            summary.replaced += 1
                        }
                        bytes += rec.json.len();
                        summary.bytes += rec.json.len() as u64;
                        in_batch += 1;
                        next += 1;
                    }
                    Err(e) if e.status == StatusCode::TooManyRequests => {
                        throttle = e.retry_after_ms;
                        summary.throttled += 1;
                        break;
                    }
                    Err(e) => return Err(import::at_line(e, rec.line)),
                }
            }
            batch.commit()?;
            summary.batches += 1;
            summary.items += in_batch as u64;
            progress(summary.items);
            if let Some(ms) = throttle {
                std::thread::sleep(std::time::Duration::from_millis(ms.max(1)));
            }
        }
        summary.request_charge = charge_round(summary.request_charge);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Streams every live item of a container (or of one logical partition) to `sink`, in
    /// key order, without holding one read transaction for the whole export.
    pub fn export(
        &self,
        db: &str,
        name: &str,
        pk: Option<&Value>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        let def = self.def(db, name)?;
        let (min, max) = match pk {
            Some(pk) => {
                let value = def.partition_key.parse_request_value(pk)?;
                let e = value.epk(&def.partition_key);
                let mut end = e.as_bytes().to_vec();
                end.push(0xFF);
                (e, epk::Epk(end))
            }
            None => (epk::Epk::min(), epk::Epk::max()),
        };
        let mut after: Option<Vec<u8>> = None;
        let mut count = 0;
        loop {
            let (items, last) = {
                let txn = self.store.read_txn()?;
                self.store
                    .scan_items(&txn, &def, &min, &max, after.as_deref(), 1000)?
            };
            for it in &items {
                sink(&it.json)?;
                count += 1;
            }
            match last {
                Some(k) => after = Some(k),
                None => return Ok(count),
            }
        }
    }

    /// The stored JSON of up to `limit` items, the first in key order. Keys begin with the
    /// hash of the partition key, so these are spread over the logical partitions. Unmetered:
    /// it is the explorer looking at the data (query completion), not a request.
    pub fn sample_documents(&self, db: &str, name: &str, limit: usize) -> Result<Vec<Vec<u8>>> {
        let def = self.def(db, name)?;
        let txn = self.store.read_txn()?;
        let (items, _) =
            self.store
                .scan_items(&txn, &def, &epk::Epk::min(), &epk::Epk::max(), None, limit)?;
        Ok(items.into_iter().map(|it| it.json).collect())
    }

    // ---- queries ----

    /// Runs one page of a NoSQL query. Syntax and semantic errors are 400s with the line
    /// and column of the offending token.
    pub fn query(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
    ) -> Result<QueryResult> {
        self.query_cancellable(
            db,
            name,
            sql,
            opts,
            &std::sync::atomic::AtomicBool::new(false),
        )
    }

    /// Like [`Engine::query`], stopping with 499 when `cancel` becomes true (checked between
    /// documents and ranges).
    pub fn query_cancellable(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<QueryResult> {
        let q = self.parsed(sql)?;
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        crate::query::run::run(
            &self.store,
            &txn,
            &def,
            sql,
            &q,
            &opts.request(),
            cancel,
            &self.results,
        )
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

    // ---- change feed ----

    /// A page of the container's change feed.
    pub fn read_feed(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let page = self
            .store
            .read_feed(&txn, &def, &req.to_store(&def.full_name())?)?;
        Ok(FeedPage {
            changes: page
                .changes
                .into_iter()
                .map(FeedChange::from_store)
                .collect(),
            continuation: page.continuation,
            request_charge: page.request_charge,
            ranges: page.ranges.iter().map(RangeId::to_string).collect(),
            partition_key: def.partition_key.clone(),
        })
    }

    /// The container's change sequence; it moves on every write, so a follower polls this
    /// and reads the feed only when it changed.
    pub fn feed_head(&self, db: &str, name: &str) -> Result<u64> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        self.store.feed_head(&txn, &def)
    }

    // ---- maintenance ----

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
        crate::store::compact::compact(&dir, when)
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
