//! The catalog: databases and containers with their settings, and their LMDB records.
//!
//! Definitions are small JSON records in the `meta` database (`db/NAME`, `coll/DB/NAME`);
//! they change rarely, so every change bumps a catalog *epoch* that each process checks at
//! the start of a transaction to drop its cached copies — a split made by another process
//! is seen by the next request.
//!
//! The catalog sits above [`super::ranges`]: a container definition holds its range table,
//! and what its settings mean for the table (the ranges a throughput starts with) is said
//! here, from the range limits there. Ranges know nothing of the catalog.

use std::sync::Arc;

use heed::{RoTxn, RwTxn};
use serde::{Deserialize, Serialize};

use super::Store;
use super::indexing::IndexingPolicy;
use super::keys::{ContainerRid, RangeId};
use super::partition_key::PartitionKeyDefinition;
use super::ranges::{self, PkRange, RangeNamesCache};
use super::search_policy::{self, FullTextPolicy, VectorEmbeddingPolicy};
use crate::error::{Error, Result};

/// Storage limits of the real service (reference/cosmos.md §2.2).
pub const DEFAULT_MAX_PARTITION_BYTES: u64 = 50 * 1024 * 1024 * 1024;
pub const DEFAULT_MAX_LOGICAL_PARTITION_BYTES: u64 = 20 * 1024 * 1024 * 1024;
pub const MAX_THROUGHPUT: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Throughput {
    /// Provisioned RU/s.
    Manual(u64),
    /// Autoscale maximum RU/s (scales between 10% and 100% of it).
    Autoscale(u64),
}

impl Throughput {
    /// The RU/s the container can serve at most, which decides its range count.
    pub fn max_ru(&self) -> u64 {
        match *self {
            Throughput::Manual(ru) | Throughput::Autoscale(ru) => ru,
        }
    }

    /// Number of ranges a new container with this throughput gets (reference/cosmos.md
    /// §2.1).
    pub fn initial_range_count(&self) -> usize {
        let n = match *self {
            Throughput::Manual(ru) => ru.div_ceil(ranges::MANUAL_RU_PER_INITIAL_RANGE),
            Throughput::Autoscale(max) => max.div_ceil(ranges::MAX_RU_PER_RANGE),
        };
        n.max(1) as usize
    }

    pub fn validate(&self) -> Result<()> {
        match *self {
            Throughput::Manual(ru) if !(400..=MAX_THROUGHPUT).contains(&ru) || ru % 100 != 0 => {
                Err(Error::bad_request(format!(
                    "manual throughput must be a multiple of 100 between 400 and {MAX_THROUGHPUT} RU/s, got {ru}"
                )))
            }
            Throughput::Autoscale(max)
                if !(1000..=MAX_THROUGHPUT).contains(&max) || max % 1000 != 0 =>
            {
                Err(Error::bad_request(format!(
                    "autoscale max throughput must be a multiple of 1000 between 1000 and {MAX_THROUGHPUT} RU/s, got {max}"
                )))
            }
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseDef {
    pub id: String,
    pub rid: u32,
    pub ts: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UniqueKeyPolicy {
    pub unique_keys: Vec<UniqueKey>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UniqueKey {
    pub paths: Vec<String>,
}

/// What a user chooses when creating a container.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSettings {
    pub partition_key_paths: Vec<String>,
    pub throughput: Throughput,
    pub max_partition_bytes: Option<u64>,
    pub max_logical_partition_bytes: Option<u64>,
    /// `None` = TTL off; `-1` = on, items never expire unless they say so; `n` seconds.
    pub default_ttl: Option<i64>,
    pub unique_keys: Vec<Vec<String>>,
    pub indexing_policy: Option<IndexingPolicy>,
    pub enforce_throughput: bool,
    /// Keep the previous image of replaced and deleted items in the change feed.
    pub feed_previous_images: bool,
    /// Vector paths with their data type, dimensions and distance function; fixed at
    /// creation, like the service's.
    pub vector_embedding_policy: Option<VectorEmbeddingPolicy>,
    /// Text paths and their languages for full-text search; set at creation.
    pub full_text_policy: Option<FullTextPolicy>,
}

impl ContainerSettings {
    pub fn new(partition_key_paths: Vec<String>) -> ContainerSettings {
        ContainerSettings {
            partition_key_paths,
            throughput: Throughput::Manual(400),
            max_partition_bytes: None,
            max_logical_partition_bytes: None,
            default_ttl: None,
            unique_keys: Vec::new(),
            indexing_policy: None,
            enforce_throughput: false,
            feed_previous_images: false,
            vector_embedding_policy: None,
            full_text_policy: None,
        }
    }
}

/// Strings longer than this are indexed (`store::index`) by their first `STRING_BYTES`
/// bytes, in index generations made by this build (the catalog records each generation's
/// length: [`ContainerDef::index_string_bytes`], [`IndexBuild::previous_string_bytes`]).
///
/// Which length the service cuts at is not documented. Results do not depend on it (the
/// executor filters what a cut term selects), but two things do:
/// - the store's size and depth: at 512 bytes, one 700-character text property made a
///   third of a 1M-order index's key bytes, in entries of 555 bytes seven to a page, and
///   every lookup of every path descended eight levels;
/// - how selective a lookup is, and so what it loads and is charged: every string sharing
///   its first `STRING_BYTES` bytes is a candidate (URLs with one long base, say).
///
/// 256 bytes takes most of the size off (see the README's benchmarks) and keeps whole ids,
/// names, emails and nearly every URL exact; 128 bytes took a little more off but made
/// strings sharing a 128-byte prefix one index value.
pub const STRING_BYTES: usize = 256;

/// The length generations written before generations kept their own were cut at.
pub const LEGACY_STRING_BYTES: usize = 512;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerDef {
    pub id: String,
    pub database: String,
    pub rid: ContainerRid,
    pub db_rid: u32,
    pub ts: i64,
    pub partition_key: PartitionKeyDefinition,
    pub throughput: Throughput,
    pub max_partition_bytes: u64,
    pub max_logical_partition_bytes: u64,
    pub default_ttl: Option<i64>,
    pub unique_key_policy: UniqueKeyPolicy,
    pub indexing_policy: IndexingPolicy,
    pub enforce_throughput: bool,
    pub feed_previous_images: bool,
    /// Live ranges, sorted by `minInclusive`, tiling the whole EPK space.
    pub ranges: Vec<PkRange>,
    /// Ranges that were split away; kept so feed continuations survive splits.
    pub retired_ranges: Vec<PkRange>,
    pub next_range_id: RangeId,
    /// The index generation writes maintain under `indexing_policy` (see `store::index`).
    #[serde(default)]
    pub index_generation: u32,
    /// Where that generation cuts indexed strings: 256 bytes for one made by this build; a
    /// catalog written before generations kept their own length says nothing, and its
    /// generations cut at 512.
    #[serde(default = "legacy_string_bytes")]
    pub index_string_bytes: usize,
    /// A policy replacement whose index is still being built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_build: Option<IndexBuild>,
    /// Generations of earlier policies, deleted in the background.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired_index_generations: Vec<u32>,
    /// The `vectorEmbeddingPolicy` given at creation (see `store::search_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_embedding_policy: Option<VectorEmbeddingPolicy>,
    /// The `fullTextPolicy` given at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_text_policy: Option<FullTextPolicy>,
    /// Names of the live ranges, made when a query first needs them ([`Self::range_names`]).
    #[serde(skip)]
    pub(crate) range_name_cache: RangeNamesCache,
}

/// The index queries read: the last complete generation (see [`ContainerDef::ready_index`]).
#[derive(Debug, Clone, Copy)]
pub struct ReadyIndex<'d> {
    pub generation: u32,
    pub policy: &'d IndexingPolicy,
    /// Where it cuts indexed strings.
    pub string_bytes: usize,
}

fn legacy_string_bytes() -> usize {
    LEGACY_STRING_BYTES
}

/// An index transformation in progress: the new generation is filled item by item while
/// writes keep both generations current, and queries use the previous one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexBuild {
    pub previous_policy: IndexingPolicy,
    pub previous_generation: u32,
    /// Where the previous generation cuts indexed strings.
    #[serde(default = "legacy_string_bytes")]
    pub previous_string_bytes: usize,
    /// The last item key (hex) already indexed; `None` before the first batch.
    pub resume_after: Option<String>,
    pub done: u64,
    /// Items in the container when the build started (for progress).
    pub total: u64,
    /// The process loading the container while its index waits to be built by sorting
    /// ([`super::bulk_index`]): builders in other processes leave the build alone while it
    /// runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader: Option<u32>,
}

impl IndexBuild {
    /// Whether a process is loading the container to build this index by sorting at its
    /// end. A process that is gone (a load that crashed) no longer holds the build; where
    /// processes cannot be looked up (no `/proc`), neither does any.
    pub fn is_held_by_a_loader(&self) -> bool {
        self.loader
            .is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
    }

    /// Percent complete, as the service's `x-ms-documentdb-collection-index-transformation-progress`.
    pub fn progress(&self) -> u8 {
        if self.total == 0 {
            return 99;
        }
        ((self.done.min(self.total) * 100 / self.total).min(99)) as u8
    }
}

impl ContainerDef {
    /// The names of `range`, one of this container's live ranges, made once and kept with
    /// the definition (`store::ranges::RangeNamesCache`).
    pub fn range_names(&self, range: &PkRange) -> super::ranges::RangeNames {
        self.range_name_cache.get(&self.ranges, range)
    }

    /// A generation number no index of this container has used.
    pub fn next_index_generation(&self) -> u32 {
        self.retired_index_generations
            .iter()
            .copied()
            .chain([self.index_generation])
            .max()
            .unwrap_or(0)
            + 1
    }

    /// Makes a new generation current, which cuts strings at this build's length; returns
    /// the generation and string length it replaces.
    pub fn start_index_generation(&mut self) -> (u32, usize) {
        let previous = (self.index_generation, self.index_string_bytes);
        self.index_generation = self.next_index_generation();
        self.index_string_bytes = STRING_BYTES;
        previous
    }

    /// Starts building the index into a new generation as if nothing had been indexed
    /// before: writes maintain no index for items the build has not reached, and queries
    /// scan until it is done (a format upgrade, a bulk load).
    pub fn rebuild_index_from_nothing(&mut self, total: u64) {
        let (previous_generation, previous_string_bytes) = self.start_index_generation();
        self.index_build = Some(IndexBuild {
            previous_policy: IndexingPolicy::none(),
            previous_generation,
            previous_string_bytes,
            resume_after: None,
            done: 0,
            total,
            loader: None,
        });
    }

    /// Retires the generation being built and starts the same build over, from its
    /// beginning, in a fresh one (for a build whose entries can no longer be trusted).
    pub fn restart_index_build(&mut self) {
        let Some(build) = self.index_build.take() else {
            return;
        };
        self.retired_index_generations.push(self.index_generation);
        self.start_index_generation();
        self.index_build = Some(IndexBuild {
            resume_after: None,
            done: 0,
            loader: None,
            ..build
        });
    }

    /// The index queries can rely on: generation, policy and string length. While a
    /// replacement builds, that is the previous one.
    pub fn ready_index(&self) -> ReadyIndex<'_> {
        match &self.index_build {
            Some(b) => ReadyIndex {
                generation: b.previous_generation,
                policy: &b.previous_policy,
                string_bytes: b.previous_string_bytes,
            },
            None => ReadyIndex {
                generation: self.index_generation,
                policy: &self.indexing_policy,
                string_bytes: self.index_string_bytes,
            },
        }
    }

    /// RU/s budget of one range for the current second.
    pub fn range_budget(&self) -> f64 {
        self.throughput.max_ru() as f64 / self.ranges.len().max(1) as f64
    }

    pub fn range(&self, id: RangeId) -> Option<&PkRange> {
        self.ranges.iter().find(|r| r.id == id)
    }

    /// A live or retired range by id.
    pub fn any_range(&self, id: RangeId) -> Option<&PkRange> {
        self.range(id)
            .or_else(|| self.retired_ranges.iter().find(|r| r.id == id))
    }

    pub fn owner(&self, epk: &[u8]) -> Result<&PkRange> {
        ranges::owner(&self.ranges, epk).ok_or_else(|| {
            Error::internal(format!("container {} has no range owning an EPK", self.id))
        })
    }

    /// Whether items of this container can expire at all.
    pub fn ttl_enabled(&self) -> bool {
        self.default_ttl.is_some()
    }

    pub fn full_name(&self) -> String {
        format!("{}/{}", self.database, self.id)
    }
}

/// Database and container names follow the service: 1–255 characters, none of `/ \ # ?`,
/// no trailing space.
pub fn validate_name(kind: &str, name: &str) -> Result<()> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.chars().count() > 255 {
        Some("it is longer than 255 characters")
    } else if name.contains(['/', '\\', '#', '?']) {
        Some("it contains one of / \\ # ?")
    } else if name.ends_with(' ') {
        Some("it ends with a space")
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::bad_request(format!(
            "invalid {kind} name {name:?}: {why}"
        ))),
        None => Ok(()),
    }
}

fn validate_ttl(ttl: Option<i64>) -> Result<()> {
    match ttl {
        None | Some(-1) => Ok(()),
        Some(n) if (1..=i32::MAX as i64).contains(&n) => Ok(()),
        Some(n) => Err(Error::bad_request(format!(
            "default TTL must be -1 (on, no default expiry) or 1 to 2147483647 seconds, got {n}"
        ))),
    }
}

fn validate_unique_keys(keys: &[Vec<String>]) -> Result<()> {
    if keys.len() > 10 {
        return Err(Error::bad_request(
            "a unique key policy holds at most 10 unique keys",
        ));
    }
    let total: usize = keys.iter().map(Vec::len).sum();
    if total > 16 {
        return Err(Error::bad_request(
            "a unique key policy holds at most 16 paths in total",
        ));
    }
    for key in keys {
        if key.is_empty() {
            return Err(Error::bad_request("a unique key needs at least one path"));
        }
        for p in key {
            if !p.starts_with('/') || p.len() < 2 || p.contains('*') || p.ends_with('?') {
                return Err(Error::bad_request(format!(
                    "invalid unique key path {p:?}; write paths like /email or /address/zip"
                )));
            }
        }
    }
    Ok(())
}

pub(crate) fn db_key(name: &str) -> String {
    format!("db/{name}")
}

pub(crate) fn container_key(db: &str, name: &str) -> String {
    format!("coll/{db}/{name}")
}

const EPOCH_KEY: &str = "epoch";
const DB_COUNTER: &str = "counter/db";
const CONTAINER_COUNTER: &str = "counter/coll";

impl Store {
    pub(crate) fn catalog_epoch(&self, txn: &RoTxn) -> Result<u64> {
        Ok(self
            .meta
            .get(txn, EPOCH_KEY.as_bytes())?
            .and_then(read_u64)
            .unwrap_or(0))
    }

    pub(crate) fn bump_epoch(&self, txn: &mut RwTxn) -> Result<()> {
        let next = self.catalog_epoch(txn)? + 1;
        self.meta
            .put(txn, EPOCH_KEY.as_bytes(), &next.to_le_bytes())?;
        Ok(())
    }

    fn next_counter(&self, txn: &mut RwTxn, key: &str) -> Result<u32> {
        let n = self
            .meta
            .get(txn, key.as_bytes())?
            .and_then(read_u64)
            .unwrap_or(0)
            + 1;
        self.meta.put(txn, key.as_bytes(), &n.to_le_bytes())?;
        u32::try_from(n).map_err(|_| Error::internal("resource id counter exhausted"))
    }

    pub fn get_database(&self, txn: &RoTxn, name: &str) -> Result<Option<DatabaseDef>> {
        match self.meta.get(txn, db_key(name).as_bytes())? {
            Some(bytes) => Ok(Some(decode_json(bytes, "database")?)),
            None => Ok(None),
        }
    }

    pub fn require_database(&self, txn: &RoTxn, name: &str) -> Result<DatabaseDef> {
        self.get_database(txn, name)?.ok_or_else(|| {
            Error::not_found(format!(
                "database {name:?} does not exist; create it with `db create {name}`"
            ))
        })
    }

    pub fn list_databases(&self, txn: &RoTxn) -> Result<Vec<DatabaseDef>> {
        let mut out = Vec::new();
        for entry in super::prefixed(&self.meta, txn, b"db/")? {
            let (_, v) = entry?;
            out.push(decode_json(v, "database")?);
        }
        Ok(out)
    }

    pub fn create_database(&self, txn: &mut RwTxn, name: &str, ts: i64) -> Result<DatabaseDef> {
        validate_name("database", name)?;
        if self.get_database(txn, name)?.is_some() {
            return Err(Error::conflict(format!("database {name:?} already exists")));
        }
        let rid = self.next_counter(txn, DB_COUNTER)?;
        let def = DatabaseDef {
            id: name.to_string(),
            rid,
            ts,
        };
        self.meta
            .put(txn, db_key(name).as_bytes(), &encode_json(&def)?)?;
        self.bump_epoch(txn)?;
        Ok(def)
    }

    pub fn delete_database(&self, txn: &mut RwTxn, name: &str) -> Result<()> {
        self.require_database(txn, name)?;
        for c in self.list_containers(txn, name)? {
            self.delete_container_data(txn, &c)?;
            self.meta
                .delete(txn, container_key(name, &c.id).as_bytes())?;
        }
        self.meta.delete(txn, db_key(name).as_bytes())?;
        self.bump_epoch(txn)?;
        Ok(())
    }

    pub fn list_containers(&self, txn: &RoTxn, db: &str) -> Result<Vec<ContainerDef>> {
        let prefix = format!("coll/{db}/");
        let mut out = Vec::new();
        for entry in super::prefixed(&self.meta, txn, prefix.as_bytes())? {
            let (_, v) = entry?;
            out.push(decode_json(v, "container")?);
        }
        Ok(out)
    }

    /// Reads a container definition straight from the catalog (no cache).
    pub fn read_container(
        &self,
        txn: &RoTxn,
        db: &str,
        name: &str,
    ) -> Result<Option<ContainerDef>> {
        match self.meta.get(txn, container_key(db, name).as_bytes())? {
            Some(bytes) => Ok(Some(decode_json(bytes, "container")?)),
            None => Ok(None),
        }
    }

    /// The container definition, from this process's cache while the catalog epoch is
    /// unchanged. 404 names what is missing.
    pub fn container(&self, txn: &RoTxn, db: &str, name: &str) -> Result<Arc<ContainerDef>> {
        let epoch = self.catalog_epoch(txn)?;
        {
            let cache = self.cache.read().unwrap_or_else(|e| e.into_inner());
            if cache.epoch == epoch
                && let Some(def) = cache.containers.get(db).and_then(|m| m.get(name))
            {
                return Ok(def.clone());
            }
        }
        let def = match self.read_container(txn, db, name)? {
            Some(def) => Arc::new(def),
            None => {
                self.require_database(txn, db)?;
                return Err(Error::not_found(format!(
                    "container {db}/{name} does not exist; list containers with `container list {db}`"
                )));
            }
        };
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        if cache.epoch != epoch {
            cache.containers.clear();
            cache.epoch = epoch;
        }
        cache
            .containers
            .entry(db.to_string())
            .or_default()
            .insert(name.to_string(), def.clone());
        Ok(def)
    }

    pub fn create_container(
        &self,
        txn: &mut RwTxn,
        db: &str,
        name: &str,
        settings: ContainerSettings,
        ts: i64,
    ) -> Result<ContainerDef> {
        validate_name("container", name)?;
        let database = self.require_database(txn, db)?;
        if self.read_container(txn, db, name)?.is_some() {
            return Err(Error::conflict(format!(
                "container {db}/{name} already exists"
            )));
        }
        let partition_key = PartitionKeyDefinition::new(settings.partition_key_paths)?;
        settings.throughput.validate()?;
        validate_ttl(settings.default_ttl)?;
        validate_unique_keys(&settings.unique_keys)?;
        // Stored as the service stores it: defaults filled in, `_etag` excluded.
        let indexing_policy = settings.indexing_policy.unwrap_or_default().normalized();
        indexing_policy
            .validate()
            .map_err(|e| Error::bad_request(format!("invalid indexing policy: {e}")))?;
        if let Some(policy) = &settings.vector_embedding_policy {
            policy.validate()?;
        }
        if let Some(policy) = &settings.full_text_policy {
            policy.validate()?;
        }
        search_policy::validate_search_indexes(
            &indexing_policy,
            settings.vector_embedding_policy.as_ref(),
            settings.full_text_policy.as_ref(),
        )?;
        let max_partition_bytes = settings
            .max_partition_bytes
            .unwrap_or(DEFAULT_MAX_PARTITION_BYTES);
        let max_logical_partition_bytes = settings
            .max_logical_partition_bytes
            .unwrap_or(DEFAULT_MAX_LOGICAL_PARTITION_BYTES);
        if max_partition_bytes == 0 || max_logical_partition_bytes == 0 {
            return Err(Error::bad_request(
                "storage limits must be positive byte counts",
            ));
        }
        let rid = self.next_counter(txn, CONTAINER_COUNTER)?;
        let layout = ranges::initial_layout(settings.throughput.initial_range_count());
        let def = ContainerDef {
            id: name.to_string(),
            database: db.to_string(),
            rid,
            db_rid: database.rid,
            ts,
            partition_key,
            throughput: settings.throughput,
            max_partition_bytes,
            max_logical_partition_bytes,
            default_ttl: settings.default_ttl,
            unique_key_policy: UniqueKeyPolicy {
                unique_keys: settings
                    .unique_keys
                    .into_iter()
                    .map(|paths| UniqueKey { paths })
                    .collect(),
            },
            indexing_policy,
            enforce_throughput: settings.enforce_throughput,
            feed_previous_images: settings.feed_previous_images,
            next_range_id: layout.len() as RangeId,
            ranges: layout,
            retired_ranges: Vec::new(),
            index_generation: 0,
            index_string_bytes: STRING_BYTES,
            index_build: None,
            retired_index_generations: Vec::new(),
            vector_embedding_policy: settings.vector_embedding_policy,
            full_text_policy: settings.full_text_policy,
            range_name_cache: Default::default(),
        };
        self.put_container(txn, &def)?;
        let stats = super::stats::ContainerStats {
            last_ts: ts,
            ..Default::default()
        };
        self.container_stats
            .put(txn, &super::keys::container_prefix(rid), &stats.encode())?;
        for r in &def.ranges {
            let rs = super::stats::RangeStats::default();
            self.range_stats
                .put(txn, &super::keys::range(rid, r.id), &rs.encode())?;
        }
        Ok(def)
    }

    /// Writes a changed definition and invalidates every process's cache.
    pub(crate) fn put_container(&self, txn: &mut RwTxn, def: &ContainerDef) -> Result<()> {
        self.meta.put(
            txn,
            container_key(&def.database, &def.id).as_bytes(),
            &encode_json(def)?,
        )?;
        self.bump_epoch(txn)
    }

    /// Rewrites `db/name`'s catalog entry as a build from before index generations kept
    /// their own string length wrote it (no `indexStringBytes`), for tests of the stores
    /// such builds left. Only for a container with nothing indexed yet: its generation is
    /// then read as cutting strings at [`LEGACY_STRING_BYTES`].
    #[cfg(feature = "test-harness")]
    pub fn write_as_before_string_lengths(&self, db: &str, name: &str) -> Result<()> {
        let mut txn = self.write_txn()?;
        let def = self
            .read_container(&txn, db, name)?
            .ok_or_else(|| Error::not_found(format!("container {db}/{name} does not exist")))?;
        let mut json = serde_json::to_value(&def)
            .map_err(|e| Error::internal(format!("cannot encode container: {e}")))?;
        if let Some(fields) = json.as_object_mut() {
            fields.remove("indexStringBytes");
        }
        self.meta.put(
            &mut txn,
            container_key(db, name).as_bytes(),
            &encode_json(&json)?,
        )?;
        self.bump_epoch(&mut txn)?;
        txn.commit()?;
        Ok(())
    }

    pub fn delete_container(&self, txn: &mut RwTxn, db: &str, name: &str) -> Result<()> {
        let def = self
            .read_container(txn, db, name)?
            .ok_or_else(|| Error::not_found(format!("container {db}/{name} does not exist")))?;
        self.delete_container_data(txn, &def)?;
        self.meta.delete(txn, container_key(db, name).as_bytes())?;
        self.bump_epoch(txn)
    }

    /// Removes items, statistics, feed, meter history and indexes of a container.
    fn delete_container_data(&self, txn: &mut RwTxn, def: &ContainerDef) -> Result<()> {
        self.delete_container_scripts(txn, def.rid)?;
        let prefix = def.rid.to_be_bytes();
        let end = super::keys::prefix_end(&prefix);
        let upper = match &end {
            Some(end) => std::ops::Bound::Excluded(end.as_slice()),
            None => std::ops::Bound::Unbounded,
        };
        let range = (std::ops::Bound::Included(&prefix[..]), upper);
        for db in self.all_data_dbs() {
            db.delete_range(txn, &range)?;
        }
        Ok(())
    }
}

pub(crate) fn read_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?))
}

pub(crate) fn encode_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| Error::internal(format!("cannot encode catalog record: {e}")))
}

pub(crate) fn decode_json<T: for<'de> Deserialize<'de>>(bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::corrupt(format!("{what} record in the catalog: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_service() {
        assert!(validate_name("database", "shop").is_ok());
        assert!(validate_name("database", "").is_err());
        assert!(validate_name("database", "a/b").is_err());
        assert!(validate_name("database", "a#b").is_err());
        assert!(validate_name("database", "a?b").is_err());
        assert!(validate_name("database", "a\\b").is_err());
        assert!(validate_name("database", "trailing ").is_err());
        assert!(validate_name("database", &"x".repeat(256)).is_err());
        assert!(validate_name("database", &"x".repeat(255)).is_ok());
    }

    #[test]
    fn initial_range_counts_follow_the_service() {
        assert_eq!(Throughput::Manual(400).initial_range_count(), 1);
        assert_eq!(Throughput::Manual(6000).initial_range_count(), 1);
        assert_eq!(Throughput::Manual(6001).initial_range_count(), 2);
        assert_eq!(Throughput::Manual(60_000).initial_range_count(), 10);
        assert_eq!(Throughput::Autoscale(4000).initial_range_count(), 1);
        assert_eq!(Throughput::Autoscale(40_000).initial_range_count(), 4);
    }

    #[test]
    fn throughput_limits() {
        assert!(Throughput::Manual(400).validate().is_ok());
        assert!(Throughput::Manual(300).validate().is_err());
        assert!(Throughput::Manual(450).validate().is_err());
        assert!(Throughput::Autoscale(4000).validate().is_ok());
        assert!(Throughput::Autoscale(4500).validate().is_err());
    }

    #[test]
    fn ttl_and_unique_key_rules() {
        assert!(validate_ttl(Some(0)).is_err());
        assert!(validate_ttl(Some(-2)).is_err());
        assert!(validate_ttl(Some(-1)).is_ok());
        assert!(validate_ttl(Some(3600)).is_ok());
        assert!(validate_unique_keys(&[vec!["/email".into()]]).is_ok());
        assert!(validate_unique_keys(&[vec!["email".into()]]).is_err());
        assert!(validate_unique_keys(&vec![vec!["/a".into()]; 11]).is_err());
    }

    #[test]
    fn definitions_without_search_policies_keep_their_old_shape() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut txn = store.write_txn().unwrap();
        store.create_database(&mut txn, "db", 1).unwrap();
        let settings = ContainerSettings::new(vec!["/pk".into()]);
        store
            .create_container(&mut txn, "db", "c", settings, 1)
            .unwrap();
        txn.commit().unwrap();
        let txn = store.read_txn().unwrap();
        let raw = store
            .meta
            .get(&txn, container_key("db", "c").as_bytes())
            .unwrap()
            .unwrap();
        let record: serde_json::Value = serde_json::from_slice(raw).unwrap();
        // The record is what builds before these settings wrote, and it reads back.
        assert!(record.get("vectorEmbeddingPolicy").is_none(), "{record}");
        assert!(record.get("fullTextPolicy").is_none(), "{record}");
        let def: ContainerDef = decode_json(raw, "container").unwrap();
        assert_eq!(def.vector_embedding_policy, None);
        assert_eq!(def.full_text_policy, None);
    }
}
