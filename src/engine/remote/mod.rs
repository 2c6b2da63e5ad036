//! The remote backend: the engine's [`Backend`] over the Azure Cosmos DB for NoSQL REST API
//! of a real account, the official emulator, or `cosmoscope serve` (DESIGN.md §9), so the
//! explorer and the CLI show an account's containers, physical partitions, charges, query
//! routing and change feed from the service's own answers.
//!
//! ## Why a hand-written client and not `azure_data_cosmos`
//!
//! The official Rust SDK (`azure_data_cosmos`, read at its 1.0 source in
//! Azure/azure-sdk-for-rust `sdk/cosmos/azure_data_cosmos`) was weighed against what this
//! backend must show:
//! - physical partitions: the SDK resolves `pkranges` inside its driver and exposes feed
//!   ranges as EPK spans (`ContainerClient::read_feed_ranges`), not the range ids and
//!   parents the explorer draws and a split changes;
//! - per-range paging: its query iterators (`FeedItemIterator`, `QueryFeedPage`) run the
//!   cross-partition pipeline inside and hand back merged pages, so which ranges a query
//!   contacted, which returned results and what each charged are not observable; the
//!   query plan is internal;
//! - raw JSON: items come back through serde into the caller's types, and writes return no
//!   body unless `content_response_on_write` is set; binary encoding is on by default;
//! - charges: each page and response carries its charge, but per range only inside the
//!   pipeline;
//! - weight: about 220 crates with a C build of aws-lc and HTTP/2 by prior knowledge
//!   (reference/gateway.md §6), against hyper, hyper-util and rustls already in this
//!   package for the gateway (this client adds hyper-rustls and rustls-native-certs).
//!
//! So the client is written here, following reference/gateway.md: signing (`signing`),
//! connection settings (`config`), the HTTP exchange with retries (`http`), and one module
//! per concern of the facade: `resources` (databases, containers, offers, pkranges),
//! `items`, `query` (plan, per-range execution) with `merge` (the client's half of a
//! cross-partition query) and `verdict` (the local planner's routing checked against the
//! account's), `feed`, `scripts`, and `meter` (this session's own RU per range).
//!
//! ## What it cannot do
//!
//! The service reports per-range counts and storage and a sample of each range's largest
//! logical partitions (`statistics`), but no exact listing of logical partitions, nor RU
//! history for other clients, and always enforces throughput: [`Capabilities`] says so, and
//! those operations fail with 501-style engine errors (400 naming the capability) that front
//! ends avoid by consulting the capabilities. Sessions are read-only until `--read-write` or
//! until the user turns writes on ([`Backend::set_writes`], for this run only): every write
//! answers 403 saying so, before anything is sent.

pub mod config;
mod feed;
pub mod http;
mod items;
mod merge;
mod meter;
mod query;
mod resources;
mod scripts;
pub mod signing;
mod statistics;
mod verdict;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use super::backend::{Backend, Capabilities, ContainerKey, KeyPage};
use super::batch::{BatchOperation, BatchResponse, PatchRequest};
use super::feed::{FeedPage, FeedRequest};
use super::import::Record;
use super::plan::QueryPlan;
use super::query::{QueryOptions, QueryResult};
use super::scripts::{
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, TriggeredWrite,
};
use super::views::{
    ContainerInfo, DatabaseInfo, EpkInfo, ImportSummary, ItemResponse, LogicalPartitionPage,
    PartitionKeyRange, PartitionsReport, StatisticsSource,
};
use crate::error::{Error, Result, StatusCode};
use crate::store::catalog::{ContainerSettings, Throughput};
use crate::store::indexing::IndexingPolicy;
pub use config::{RemoteConfig, Secret};
use http::{Answer, Call, Http};

/// The most items [`Backend::sample_documents`] asks each range for: completion samples a
/// remote container without the user asking, so what it reads (and pays for) is bounded.
pub const SAMPLE_LIMIT: usize = 100;

/// An account reached over its REST API.
pub struct RemoteBackend {
    http: Http,
    /// Writes are taken. Switched by the explorer's worker threads while others send, so
    /// atomic: a write checks it once, before anything is sent.
    read_write: AtomicBool,
    /// Containers' rids and keys, which never change while a container lives.
    keys: Mutex<HashMap<(String, String), ContainerKey>>,
    /// Merged cross-partition results, for their later pages.
    results: Mutex<HashMap<String, query::Merged>>,
    polls: Mutex<HashMap<(String, String), feed::Poll>>,
    meter: meter::Meter,
}

impl std::fmt::Debug for RemoteBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteBackend")
            .field("endpoint", &self.http.endpoint())
            .field("read_write", &self.writes_on())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RemoteBackend {
    /// A client for the account `config` names. Nothing is sent until the first operation.
    pub fn connect(config: &RemoteConfig) -> Result<RemoteBackend> {
        Ok(RemoteBackend {
            http: Http::new(config)?,
            read_write: AtomicBool::new(config.read_write),
            keys: Mutex::default(),
            results: Mutex::default(),
            polls: Mutex::default(),
            meter: meter::Meter::default(),
        })
    }

    /// The account's URL, for titles and messages.
    pub fn endpoint(&self) -> &str {
        self.http.endpoint()
    }

    fn writes_on(&self) -> bool {
        self.read_write.load(Ordering::SeqCst)
    }

    /// 403 unless writes are on (`--read-write`, or turned on in the explorer).
    fn writable(&self, what: &str) -> Result<()> {
        if self.writes_on() {
            return Ok(());
        }
        Err(Error::new(
            StatusCode::Forbidden,
            format!(
                "{what} is a write, and this remote session is read-only: start it with \
                 --read-write (or turn writes on in the explorer) to allow writes to {}",
                self.endpoint()
            ),
        ))
    }

    /// An operation this backend's capabilities leave out.
    fn unsupported(&self, what: &str) -> Error {
        Error::bad_request(format!(
            "{what} is not available on a remote account: the service does not report it (see \
             the backend's capabilities)"
        ))
    }

    /// Sends `call`, recording its charge against the container and range it reached.
    fn send(&self, call: &Call) -> Result<Answer> {
        let container = container_of(&call.path);
        let requested_range = call
            .headers
            .iter()
            .find(|(n, _)| *n == "x-ms-documentdb-partitionkeyrangeid")
            .map(|(_, v)| v.clone());
        let (result, throttled) = self.http.send_counting(call);
        if let Some((db, name)) = container {
            let range = match &result {
                Ok(answer) => requested_range.unwrap_or_else(|| items::range_of(answer)),
                Err(_) => requested_range.unwrap_or_default(),
            };
            // Each 429 on the way, retried or not, then the answer's charge.
            for _ in 0..throttled {
                self.meter.record(&db, &name, &range, 0.0, true);
            }
            if let Ok(answer) = &result {
                self.meter
                    .record(&db, &name, &range, answer.charge(), false);
            }
        }
        result
    }

    fn lock_keys(&self) -> MutexGuard<'_, HashMap<(String, String), ContainerKey>> {
        lock(&self.keys)
    }

    fn lock_results(&self) -> MutexGuard<'_, HashMap<String, query::Merged>> {
        lock(&self.results)
    }

    fn lock_polls(&self) -> MutexGuard<'_, HashMap<(String, String), feed::Poll>> {
        lock(&self.polls)
    }
}

/// A range that split while a request was addressed to it (410 with substatus 1002, or 1007
/// while the split completes): the client re-reads the ranges and goes on with the range's
/// children.
fn is_split(e: &Error) -> bool {
    use crate::error::substatus::{COMPLETING_SPLIT, PARTITION_KEY_RANGE_GONE};
    e.status == StatusCode::Gone
        && (e.substatus == PARTITION_KEY_RANGE_GONE || e.substatus == COMPLETING_SPLIT)
}

/// The database and container a resource path is under (`dbs/D/colls/C/...`).
fn container_of(path: &str) -> Option<(String, String)> {
    let s: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match s.as_slice() {
        ["dbs", db, "colls", c, ..] => Some((db.to_string(), c.to_string())),
        _ => None,
    }
}

impl Backend for RemoteBackend {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            partition_statistics: false,
            range_statistics: StatisticsSource::Sampled,
            metering: false,
            enforcement_switch: false,
            writes: self.writes_on(),
            write_switch: true,
            billed: true,
        }
    }

    fn account(&self) -> Option<String> {
        Some(self.endpoint().to_string())
    }

    fn set_writes(&self, on: bool) -> Result<()> {
        self.read_write.store(on, Ordering::SeqCst);
        Ok(())
    }

    fn create_database(&self, name: &str) -> Result<DatabaseInfo> {
        self.database_create(name)
    }

    fn delete_database(&self, name: &str) -> Result<()> {
        self.writable("deleting a database")?;
        self.send(&Call::new(hyper::Method::DELETE, format!("dbs/{name}")))
            .map(|_| ())
    }

    fn list_databases(&self) -> Result<Vec<DatabaseInfo>> {
        self.database_list()
    }

    fn create_container(
        &self,
        db: &str,
        name: &str,
        settings: ContainerSettings,
    ) -> Result<ContainerInfo> {
        self.container_create(db, name, settings)
    }

    fn delete_container(&self, db: &str, name: &str) -> Result<()> {
        self.writable("deleting a container")?;
        self.send(&Call::new(
            hyper::Method::DELETE,
            resources::container_path(db, name),
        ))?;
        self.lock_keys().remove(&(db.to_string(), name.to_string()));
        Ok(())
    }

    fn list_containers(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>> {
        self.container_list(db)
    }

    fn container(&self, db: &str, name: &str) -> Result<ContainerInfo> {
        self.container_info(db, name, true)
    }

    fn container_key(&self, db: &str, name: &str) -> Result<ContainerKey> {
        self.key_of(db, name)
    }

    fn partition_key_ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>> {
        self.ranges(db, name)
    }

    fn set_throughput(
        &self,
        db: &str,
        name: &str,
        throughput: Throughput,
    ) -> Result<ContainerInfo> {
        self.throughput_set(db, name, throughput)
    }

    fn set_throughput_enforcement(
        &self,
        _db: &str,
        _name: &str,
        _enforce: bool,
    ) -> Result<ContainerInfo> {
        Err(self.unsupported("switching throughput enforcement (the service always enforces)"))
    }

    fn set_indexing_policy(
        &self,
        db: &str,
        name: &str,
        policy: IndexingPolicy,
    ) -> Result<ContainerInfo> {
        self.indexing_set(db, name, policy)
    }

    /// The ranges as the account lists them, with their counts and storage and the `top`
    /// largest logical partitions from the service's partition statistics, and this
    /// session's own load on each; no hottest logical partitions (the service reports no
    /// RU per key).
    fn partitions(
        &self,
        db: &str,
        name: &str,
        top: usize,
        window: u64,
    ) -> Result<PartitionsReport> {
        let (info, stats) = self.container_statistics(db, name)?;
        let ranges = info.partitions.clone().unwrap_or_default();
        let budget = info.throughput.per_partition_budget;
        let ids: Vec<(String, f64)> = ranges.iter().map(|r| (r.id.clone(), budget)).collect();
        Ok(PartitionsReport {
            container: format!("{db}/{name}"),
            load: self.meter.load(db, name, &ids, window),
            partitions: ranges,
            window_seconds: window,
            statistics_source: info.statistics_source,
            largest_logical_partitions: stats
                .map(|s| statistics::largest(&info.partition_key, &s, top))
                .unwrap_or_default(),
            hottest_logical_partitions: Vec::new(),
        })
    }

    fn logical_partitions(
        &self,
        _db: &str,
        _name: &str,
        _range: &str,
        _after: Option<&str>,
        _limit: usize,
    ) -> Result<LogicalPartitionPage> {
        Err(self.unsupported("listing logical partitions from statistics"))
    }

    /// The range's largest logical partitions as the service sampled them (only those it
    /// reports: not every key of the range).
    fn largest_logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        skip: usize,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        let (info, stats) = self.container_statistics(db, name)?;
        let stats = stats.ok_or_else(|| {
            self.unsupported("the largest logical partitions (the server sent no statistics)")
        })?;
        let Some(of_range) = stats.iter().find(|s| s.id == range) else {
            return Err(Error::not_found(format!(
                "{db}/{name} has no physical partition {range} in the service's statistics"
            )));
        };
        let all = statistics::logical(&info.partition_key, of_range);
        let limit = limit.max(1);
        Ok(LogicalPartitionPage {
            range: range.to_string(),
            next: (all.len() > skip + limit).then(|| (skip + limit).to_string()),
            logical_partitions: all.into_iter().skip(skip).take(limit).collect(),
        })
    }

    fn item_keys(
        &self,
        _db: &str,
        _name: &str,
        _after: Option<&[u8]>,
        _limit: usize,
    ) -> Result<KeyPage> {
        Err(self.unsupported("listing item keys in storage order without a charge"))
    }

    /// Hashed here, with the container's key definition, and placed on the account's ranges.
    fn epk(&self, db: &str, name: &str, pk: &Value) -> Result<EpkInfo> {
        let def = self.key_of(db, name)?.partition_key;
        let ranges = self.ranges(db, name)?;
        let owners = |min: &str, max: Option<&str>| -> Vec<String> {
            ranges
                .iter()
                .filter(|r| match max {
                    None => r.min_inclusive.as_str() <= min && min < r.max_exclusive.as_str(),
                    Some(max) => r.min_inclusive.as_str() < max && min < r.max_exclusive.as_str(),
                })
                .map(|r| r.id.clone())
                .collect()
        };
        let components = def.parse_request_prefix(pk)?;
        if components.len() == def.paths.len() {
            let value = def.parse_request_value(pk)?;
            let epk = value.epk(&def).to_hex();
            return Ok(EpkInfo {
                partition_key: value.to_display_json(),
                partitions: owners(&epk, None),
                epk,
                epk_range: None,
            });
        }
        let (min, max) = crate::store::epk::prefix_range(&components, def.paths.len())
            .map_err(|e| Error::bad_request(format!("invalid partition key prefix: {e}")))?;
        let (min, max) = (min.to_hex(), max.to_hex());
        Ok(EpkInfo {
            partition_key: pk.clone(),
            partitions: owners(&min, Some(&max)),
            epk: min.clone(),
            epk_range: Some((min, max)),
        })
    }

    /// `SELECT TOP n * FROM c` with `n` at most [`SAMPLE_LIMIT`]: what the explorer reads
    /// on its own for completion is bounded to `n` items from each range (the plan's TOP runs
    /// per range before the merge).
    fn sample_documents(&self, db: &str, name: &str, limit: usize) -> Result<Vec<Vec<u8>>> {
        let n = limit.clamp(1, SAMPLE_LIMIT);
        let opts = QueryOptions {
            max_items: Some(n),
            ..QueryOptions::default()
        };
        let sql = format!("SELECT TOP {n} * FROM c");
        let page = self.run_query(db, name, &sql, &opts, &AtomicBool::new(false))?;
        Ok(page
            .documents
            .iter()
            .map(|d| d.json_bytes().to_vec())
            .collect())
    }

    fn create_item(&self, db: &str, name: &str, body: &[u8]) -> Result<ItemResponse> {
        self.item_write(db, name, body, false, None)
    }

    fn upsert_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.item_write(db, name, body, true, if_match)
    }

    fn replace_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.item_replace(db, name, body, if_match)
    }

    fn read_item(&self, db: &str, name: &str, id: &str, pk: &Value) -> Result<ItemResponse> {
        self.item_read(db, name, id, pk)
    }

    fn delete_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.item_delete(db, name, id, pk, if_match)
    }

    fn patch_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        request: &PatchRequest,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.item_patch(db, name, id, pk, request, if_match)
    }

    fn execute_batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse> {
        self.batch(db, name, pk, ops)
    }

    fn validate_records(&self, db: &str, name: &str, records: &[Record]) -> Result<()> {
        self.check_records(db, name, records)
    }

    fn import_records(
        &self,
        db: &str,
        name: &str,
        records: &[Record],
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        self.import(db, name, records, progress)
    }

    fn export(
        &self,
        db: &str,
        name: &str,
        pk: Option<&Value>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        self.export_items(db, name, pk, sink)
    }

    fn query_cancellable(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &AtomicBool,
    ) -> Result<QueryResult> {
        self.run_query(db, name, sql, opts, cancel)
    }

    fn query_plan(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
    ) -> Result<QueryPlan> {
        self.plan(db, name, sql, opts)
    }

    fn read_feed(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage> {
        self.feed_page(db, name, req)
    }

    /// A poll tick rather than a change sequence (the REST API has none): it moves at most
    /// once per poll interval, which backs off while the feed is idle (see `feed`), so a
    /// follower reads the feed at a bounded rate.
    fn feed_head(&self, db: &str, name: &str) -> Result<u64> {
        Ok(self.poll_tick(db, name))
    }

    fn create_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo> {
        self.script_put(db, name, script, false)
    }

    fn replace_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo> {
        self.script_put(db, name, script, true)
    }

    fn read_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<ScriptInfo> {
        self.script_read(db, name, kind, id)
    }

    fn list_scripts(&self, db: &str, name: &str, kind: ScriptKind) -> Result<Vec<ScriptInfo>> {
        self.script_list(db, name, kind)
    }

    fn delete_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<()> {
        self.script_delete(db, name, kind, id)
    }

    fn execute_stored_procedure(
        &self,
        db: &str,
        name: &str,
        id: &str,
        request: &SprocRequest,
    ) -> Result<SprocResponse> {
        self.sproc_execute(db, name, id, request)
    }

    fn write_item_with_triggers(
        &self,
        db: &str,
        name: &str,
        write: &TriggeredWrite,
    ) -> Result<ItemResponse> {
        self.triggered_write(db, name, write)
    }
}
