//! The operations front ends use, as one trait a backend implements: the embedded store
//! ([`super::Engine`]) today, and a REST client for a real account or any Cosmos endpoint
//! next (DESIGN.md §9). Every operation takes and returns the engine's own types and fails
//! with the engine's [`Error`], which carries the Cosmos status code (and substatus) the
//! service would answer with, so a front end handles both backends alike.
//!
//! Some of what the explorer shows is not something every backend can answer: the
//! embedded store keeps exact statistics per logical partition and an RU history per
//! physical partition, which the service does not expose. A backend says what it offers in
//! its [`Capabilities`]; an operation outside them fails with an error naming what is
//! missing, and front ends consult the capabilities rather than meet that error.

use std::sync::atomic::AtomicBool;

use serde_json::Value;

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
use crate::error::Result;
use crate::store::catalog::{ContainerSettings, Throughput};
use crate::store::indexing::IndexingPolicy;
use crate::store::partition_key::PartitionKeyDefinition;

/// A page of `(partition key, id)` pairs in storage order, and the opaque cursor that
/// continues after it (`None` when the listing is done).
pub type KeyPage = (Vec<(Value, String)>, Option<Vec<u8>>);

/// A container's identity and partition key ([`Backend::container_key`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerKey {
    pub rid: String,
    pub partition_key: PartitionKeyDefinition,
}

/// What a backend can answer beyond the operations every Cosmos endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Exact statistics per logical partition, read without reading items: the listing of
    /// a range's logical partitions ([`Backend::logical_partitions`]), the hottest logical
    /// partitions of [`Backend::partitions`], and the listing of item keys in storage order
    /// ([`Backend::item_keys`]).
    pub partition_statistics: bool,
    /// Where per-range item counts and storage and the largest logical partitions of each
    /// range ([`Backend::partitions`], [`Backend::largest_logical_partitions`]) come from:
    /// the store's exact figures, or the service's sampled partition statistics.
    pub range_statistics: StatisticsSource,
    /// RU consumed and throttled per physical partition per second, from any process
    /// (the load in [`Backend::partitions`]).
    pub metering: bool,
    /// Throughput enforcement can be switched off ([`Backend::set_throughput_enforcement`]),
    /// as the official emulator runs; the service always enforces.
    pub enforcement_switch: bool,
    /// Writes are taken. False for a store on read-only media or without write permission
    /// (every write answers 403 saying why).
    pub writes: bool,
    /// Writes can be turned on and off for the session ([`Backend::set_writes`]): a remote
    /// account is read-only until the user says otherwise.
    pub write_switch: bool,
    /// Requests are billed: an account reached over the network, where a query that fans
    /// out or scans costs real RU. Front ends estimate such a query's charge and ask first.
    pub billed: bool,
}

/// The operations of a Cosmos DB for NoSQL account as front ends use them. Names are the
/// user's: database and container ids, partition key values as JSON (a bare value, or an
/// array for hierarchical keys), item bodies as JSON text.
pub trait Backend: Send + Sync {
    /// What this backend can answer beyond the common operations.
    fn capabilities(&self) -> Capabilities;

    /// Waits for work this backend goes on with after answering, so that another process
    /// can take it up: a query result still being computed when its page returned empty
    /// (the embedded store keeps it for the next page). True when there was such work; the
    /// first failure of that work (then nothing was kept).
    fn settle(&self) -> Result<bool> {
        Ok(false)
    }

    /// The account a remote backend reaches (its endpoint URL, never its key), for
    /// confirmations and titles; `None` for a store on this machine.
    fn account(&self) -> Option<String> {
        None
    }

    /// Takes writes (`true`) or refuses them (`false`) from now on, for this session only,
    /// where [`Capabilities::write_switch`] allows it; 400 elsewhere.
    fn set_writes(&self, _on: bool) -> Result<()> {
        Err(crate::error::Error::bad_request(
            "this backend's writes cannot be switched: a store on this machine takes writes \
             unless its media or permissions forbid them",
        ))
    }

    // ---- databases ----

    fn create_database(&self, name: &str) -> Result<DatabaseInfo>;

    fn delete_database(&self, name: &str) -> Result<()>;

    fn list_databases(&self) -> Result<Vec<DatabaseInfo>>;

    // ---- containers ----

    fn create_container(
        &self,
        db: &str,
        name: &str,
        settings: ContainerSettings,
    ) -> Result<ContainerInfo>;

    fn delete_container(&self, db: &str, name: &str) -> Result<()>;

    /// Containers of one database, or of all databases.
    fn list_containers(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>>;

    /// Settings, statistics and physical partitions of one container.
    fn container(&self, db: &str, name: &str) -> Result<ContainerInfo>;

    /// The container's rid and partition key, without its statistics: what a request
    /// needs to route and check a write or label a page.
    fn container_key(&self, db: &str, name: &str) -> Result<ContainerKey>;

    /// The container's live physical partitions, in EPK order (the service's `pkranges`).
    fn partition_key_ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>>;

    /// Changes throughput; raising it past `ranges × 10,000` RU/s splits ranges.
    fn set_throughput(&self, db: &str, name: &str, throughput: Throughput)
    -> Result<ContainerInfo>;

    /// Turns RU budget enforcement on or off (see [`Capabilities::enforcement_switch`]).
    fn set_throughput_enforcement(
        &self,
        db: &str,
        name: &str,
        enforce: bool,
    ) -> Result<ContainerInfo>;

    /// Replaces the container's indexing policy; the new index builds in the background.
    fn set_indexing_policy(
        &self,
        db: &str,
        name: &str,
        policy: IndexingPolicy,
    ) -> Result<ContainerInfo>;

    // ---- partitions ----

    /// Ranges with statistics and recent load (`window` seconds of it), and the `top`
    /// largest and hottest logical partitions.
    fn partitions(&self, db: &str, name: &str, top: usize, window: u64)
    -> Result<PartitionsReport>;

    /// Logical partitions of one physical partition in EPK order, `limit` per page; pass
    /// the last page's `next` as `after`.
    fn logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<LogicalPartitionPage>;

    /// The logical partitions of one physical partition, largest first: `skip` then
    /// `limit` of them.
    fn largest_logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        skip: usize,
        limit: usize,
    ) -> Result<LogicalPartitionPage>;

    /// A page of `(partition key, id)` pairs in storage order; pass the returned cursor
    /// back as `after` to continue. The explorer's own listing: no RU.
    fn item_keys(
        &self,
        db: &str,
        name: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<KeyPage>;

    /// A key's EPK and the range that owns it; for a hierarchical prefix, the EPK range it
    /// spans and every range overlapping it.
    fn epk(&self, db: &str, name: &str, pk: &Value) -> Result<EpkInfo>;

    /// The JSON of up to `limit` items, for the explorer to look at (query completion).
    fn sample_documents(&self, db: &str, name: &str, limit: usize) -> Result<Vec<Vec<u8>>>;

    // ---- items ----

    fn create_item(&self, db: &str, name: &str, body: &[u8]) -> Result<ItemResponse>;

    fn upsert_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse>;

    fn replace_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse>;

    fn read_item(&self, db: &str, name: &str, id: &str, pk: &Value) -> Result<ItemResponse>;

    fn delete_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse>;

    /// Patches one item; `request.condition`, when given, must match it (412 otherwise).
    fn patch_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        request: &PatchRequest,
        if_match: Option<&str>,
    ) -> Result<ItemResponse>;

    /// Runs a transactional batch on one logical partition: `Ok` whether it committed or
    /// not ([`BatchResponse::is_success`]); `Err` when it could not run at all.
    fn execute_batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse>;

    /// Checks an import file's records (JSON, id, partition key, ttl) without writing.
    fn validate_records(&self, db: &str, name: &str, records: &[Record]) -> Result<()>;

    /// Upserts records in bulk; `progress` gets the count written so far.
    fn import_records(
        &self,
        db: &str,
        name: &str,
        records: &[Record],
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary>;

    /// Streams every item of a container (or of one logical partition) to `sink`.
    fn export(
        &self,
        db: &str,
        name: &str,
        pk: Option<&Value>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64>;

    // ---- queries ----

    /// Runs one page of a query, stopping with 499 when `cancel` becomes true. Syntax and
    /// semantic errors are 400s with the line and column of the offending token.
    fn query_cancellable(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &AtomicBool,
    ) -> Result<QueryResult>;

    /// Runs one page of a query.
    fn query(&self, db: &str, name: &str, sql: &str, opts: &QueryOptions) -> Result<QueryResult> {
        self.query_cancellable(db, name, sql, opts, &AtomicBool::new(false))
    }

    /// The query plan a client needs to run `sql` range by range (the service's answer to
    /// a query-plan request): the EPK ranges it reads, the query each range runs and how
    /// the ranges' results merge. Of `opts`, the parameters and the partition key count.
    /// Syntax and semantic errors are 400s with line and column, as for [`Backend::query`].
    fn query_plan(&self, db: &str, name: &str, sql: &str, opts: &QueryOptions)
    -> Result<QueryPlan>;

    // ---- change feed ----

    /// A page of the container's change feed.
    fn read_feed(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage>;

    /// The container's change sequence: it moves on every write, so a follower polls it
    /// and reads the feed only when it changed.
    fn feed_head(&self, db: &str, name: &str) -> Result<u64>;

    // ---- server-side scripts ----

    /// Creates a stored procedure, trigger or UDF (409 if the id is taken). A body that
    /// does not compile is a 400 with the JavaScript engine's message and position.
    fn create_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo>;

    /// Replaces a script's body (and a trigger's type and operation); 404 if it is absent.
    fn replace_script(&self, db: &str, name: &str, script: &ScriptSpec) -> Result<ScriptInfo>;

    fn read_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<ScriptInfo>;

    /// The container's scripts of one kind, by id.
    fn list_scripts(&self, db: &str, name: &str, kind: ScriptKind) -> Result<Vec<ScriptInfo>>;

    fn delete_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<()>;

    /// Executes a stored procedure in one logical partition, as one transaction: what it
    /// wrote is kept only if it returns; a throw, an abort or the time budget rolls it all
    /// back and fails the request with the script's error.
    fn execute_stored_procedure(
        &self,
        db: &str,
        name: &str,
        id: &str,
        request: &SprocRequest,
    ) -> Result<SprocResponse>;

    /// Writes or deletes one item with its named pre- and post-trigger, in one transaction.
    fn write_item_with_triggers(
        &self,
        db: &str,
        name: &str,
        write: &TriggeredWrite,
    ) -> Result<ItemResponse>;

    /// Creates, upserts or replaces one item without blocking the caller: `done` gets the
    /// result once the write's commit is done, on the thread that made it (so `done` must
    /// be quick and must not write through this backend: the next commit waits for it).
    /// For a caller that must not block (the gateway's async side), which therefore reads
    /// nothing of the container: `key`, the partition key the request names (its wire
    /// form), is checked against the body's here (400, substatus 1001, uncharged). The
    /// result is otherwise the one [`Backend::create_item`], [`Backend::upsert_item`] or
    /// [`Backend::replace_item`] gives. `Err(done)` hands the callback back when this
    /// backend has no such path: the caller then makes the write through those.
    #[allow(clippy::too_many_arguments)]
    fn submit_item_write(
        &self,
        _db: &str,
        _name: &str,
        _kind: ItemWriteKind,
        _body: &[u8],
        _key: Option<&Value>,
        _if_match: Option<&str>,
        done: WriteDone,
    ) -> std::result::Result<(), WriteDone> {
        Err(done)
    }
}

/// The writes [`Backend::submit_item_write`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemWriteKind {
    Create,
    Upsert,
    Replace,
}

/// Where [`Backend::submit_item_write`] sends a write's result.
pub type WriteDone = Box<dyn FnOnce(Result<ItemResponse>) + Send>;
