//! Replaying the workload under a candidate key: a [`Backend`] that the workbench's
//! executor sends a pattern's requests through, which sends those addressed to the advised
//! container to its copy under the candidate key ([`super::copy`]) instead, the way the
//! application would address them there:
//!
//! - a point operation names today's key; the copy is addressed with the candidate key of
//!   the item it means (found among the container's items, or among those the replay
//!   created);
//! - a write's item goes to its own logical partition under the candidate (with the
//!   synthetic property written, for a synthetic key); a transactional batch whose items
//!   fall in more than one logical partition under the candidate cannot run, and fails
//!   saying so;
//! - a query runs as written, without today's key in its options: the engine's planner
//!   routes it on the copy's key. For a synthetic key, a query whose filter binds every
//!   source path by equality is sent with the synthetic value as its partition key (once
//!   per value: per bucket, for a bucketed key whose `id` is not bound), as the
//!   application would compute it; otherwise it fans out.
//!
//! Requests to the design's other containers go to them unchanged when they read, and are
//! refused when they write: the advisor changes nothing but its copies. Every request to
//! the copy is logged with its charge per physical partition of the placement (the copy's
//! ranges are the placement's when the copy holds every item; a sampled copy's range
//! that no placement range matches shares its charge among those it overlaps, by their
//! share of the hash space). On a sampled copy, each query page is rescaled to the full
//! data first ([`super::scale`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use serde_json::{Map, Value, json};

use super::candidates::Candidate;
use super::candidates::request_form;
use super::items::Items;
use super::placement::Placement;
use super::scale::Scaler;
use crate::engine::import::Record;
use crate::engine::{
    Backend, BatchOperation, BatchResponse, Capabilities, ContainerInfo, ContainerKey,
    ContainerSettings, DatabaseInfo, EpkInfo, FeedPage, FeedRequest, ImportSummary, IndexingPolicy,
    ItemResponse, KeyPage, LogicalPartitionPage, OperationType, PartitionKeyDefinition,
    PartitionKeyRange, PartitionsReport, PatchRequest, QueryOptions, QueryPlan, QueryResult,
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, Throughput, TriggeredWrite,
};
use crate::error::{Error, Result, StatusCode};

/// One request the copy served.
#[derive(Debug, Clone, Default)]
pub struct Logged {
    /// RU per physical partition (range id) it touched.
    pub ranges: Vec<(String, f64)>,
    /// The candidate key it wrote to, for writes.
    pub written_key: Option<String>,
}

/// The advised container, its copy under one candidate, and what the replay did.
pub struct Replayer<'a> {
    pub engine: &'a dyn Backend,
    /// The advised container.
    pub database: &'a str,
    pub container: &'a str,
    /// The copy's database (the container has the same name there).
    pub copy_database: &'a str,
    pub candidate: &'a Candidate,
    /// Today's key and the candidate's.
    pub current: &'a PartitionKeyDefinition,
    pub definition: &'a PartitionKeyDefinition,
    /// Whether the candidate is today's key (requests then pass as they are).
    pub is_current: bool,
    pub items: &'a Items,
    /// Rescales query pages when the copy holds a sample of the items.
    scaler: Option<&'a Scaler<'a>>,
    /// Items the replay created: (id, today's key in wire form) → candidate key.
    created: Mutex<HashMap<(String, String), Value>>,
    /// The copy's range ids → the placement's ids for the same EPK bounds (the store
    /// numbers the ranges of a split in the order it happens to visit them), or those it
    /// overlaps with their shares.
    range_ids: HashMap<String, Vec<(String, f64)>>,
    log: Mutex<Vec<Logged>>,
    /// Every query text the replay saw, with its parameters.
    queries: Mutex<Vec<(String, HashMap<String, Value>)>>,
}

impl<'a> Replayer<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: &'a dyn Backend,
        database: &'a str,
        container: &'a str,
        copy_database: &'a str,
        candidate: &'a Candidate,
        current: &'a PartitionKeyDefinition,
        definition: &'a PartitionKeyDefinition,
        is_current: bool,
        items: &'a Items,
        placement: &'a Placement,
        copy_ranges: &[PartitionKeyRange],
    ) -> Replayer<'a> {
        let placed = placement.range_table();
        let range_ids = copy_ranges
            .iter()
            .map(|c| (c.id.clone(), shares(c, &placed)))
            .collect();
        Replayer {
            engine,
            database,
            container,
            copy_database,
            candidate,
            current,
            definition,
            is_current,
            items,
            scaler: None,
            created: Mutex::default(),
            range_ids,
            log: Mutex::default(),
            queries: Mutex::default(),
        }
    }

    /// Rescales the copy's query pages with `scaler` (the copy holds a sample).
    pub fn with_scaler(mut self, scaler: &'a Scaler<'a>) -> Replayer<'a> {
        self.scaler = Some(scaler);
        self
    }

    /// A query page from the copy, rescaled to the full data for a sampled copy.
    fn send(&self, sql: &str, opts: &QueryOptions, cancel: &AtomicBool) -> Result<QueryResult> {
        let mut page =
            self.engine
                .query_cancellable(self.copy_database, self.container, sql, opts, cancel)?;
        if let Some(s) = self.scaler {
            s.scale(&mut page, sql, opts);
        }
        Ok(page)
    }

    /// The requests logged since the last call.
    pub fn take_log(&self) -> Vec<Logged> {
        std::mem::take(&mut *lock(&self.log))
    }

    /// Every query the replay saw.
    pub fn queries(&self) -> Vec<(String, HashMap<String, Value>)> {
        lock(&self.queries).clone()
    }

    fn ours(&self, db: &str, name: &str) -> bool {
        db == self.database && name == self.container
    }

    fn record(&self, ranges: Vec<(String, f64)>, written_key: Option<&Value>) {
        let ranges = ranges
            .into_iter()
            .flat_map(|(id, ru)| match self.range_ids.get(&id) {
                Some(to) => to
                    .iter()
                    .map(|(p, share)| (p.clone(), ru * share))
                    .collect(),
                None => vec![(id, ru)],
            })
            .collect();
        lock(&self.log).push(Logged {
            ranges,
            written_key: written_key.map(Value::to_string),
        });
    }

    /// A write to one of the design's other containers: refused.
    fn refuse_write(&self, db: &str, name: &str) -> Error {
        Error::new(
            StatusCode::Forbidden,
            format!(
                "the advisor replays requests to {}/{} only and changes no other container; this \
                 pattern writes to {db}/{name}",
                self.database, self.container
            ),
        )
    }

    /// The candidate key (request form) of the item a request addresses with today's key.
    fn address(&self, id: &str, pk: &Value) -> Result<Value> {
        if self.is_current {
            return Ok(pk.clone());
        }
        let wire = self.wire(pk);
        if let Some(k) = lock(&self.created).get(&(id.to_string(), wire.to_string())) {
            return Ok(k.clone());
        }
        let i = self.items.find(self.current, id, pk).ok_or_else(|| {
            Error::not_found(format!(
                "item {id} with partition key {pk} is not in {}/{}",
                self.database, self.container
            ))
        })?;
        Ok(request_form(
            &self
                .candidate
                .key_of(self.definition, &self.items.docs[i])?
                .value,
        ))
    }

    /// Today's key value in wire form (an array).
    fn wire(&self, pk: &Value) -> Value {
        match pk {
            Value::Array(_) => pk.clone(),
            one => Value::Array(vec![one.clone()]),
        }
    }

    /// An item to write as the copy stores it, and its candidate key (request form).
    fn prepare(&self, body: &[u8]) -> Result<(Vec<u8>, Value)> {
        let mut doc: Map<String, Value> = serde_json::from_slice(body)
            .map_err(|e| Error::bad_request(format!("the item is not a JSON object: {e}")))?;
        let key = request_form(&self.candidate.key_of(self.definition, &doc)?.value);
        if !self.is_current {
            let today = crate::engine::item_key(self.current, &doc)?
                .value
                .to_string();
            let id = doc
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            lock(&self.created).insert((id, today), key.clone());
        }
        self.candidate.prepare(&mut doc)?;
        let bytes = serde_json::to_vec(&Value::Object(doc))
            .map_err(|e| Error::internal(format!("serializing an item: {e}")))?;
        Ok((bytes, key))
    }

    fn write(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        send: impl Fn(&dyn Backend, &str, &[u8]) -> Result<ItemResponse>,
    ) -> Result<ItemResponse> {
        if !self.ours(db, name) {
            return Err(self.refuse_write(db, name));
        }
        let (body, key) = self.prepare(body)?;
        let r = send(self.engine, self.copy_database, &body)?;
        self.record(vec![(r.range.clone(), r.request_charge)], Some(&key));
        Ok(r)
    }

    /// A write to an existing item addressed by `id` and today's key `pk`: sent to the copy
    /// with the item's candidate key.
    fn addressed_write(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        send: impl FnOnce(&dyn Backend, &str, &Value) -> Result<ItemResponse>,
    ) -> Result<ItemResponse> {
        if !self.ours(db, name) {
            return Err(self.refuse_write(db, name));
        }
        let key = self.address(id, pk)?;
        let r = send(self.engine, self.copy_database, &key)?;
        self.record(vec![(r.range.clone(), r.request_charge)], Some(&key));
        Ok(r)
    }

    /// The candidate key every operation of a batch addressed with today's key `pk` falls
    /// in; 400 when they fall in several (no transactional batch can then hold them).
    fn batch_key(&self, pk: &Value, ops: &mut [BatchOperation]) -> Result<Value> {
        let mut keys: Vec<Value> = Vec::new();
        for op in ops.iter_mut() {
            let key = match (&op.resource_body, op.operation_type) {
                (
                    Some(body),
                    OperationType::Create | OperationType::Upsert | OperationType::Replace,
                ) => {
                    let bytes = serde_json::to_vec(body).unwrap_or_default();
                    let (prepared, key) = self.prepare(&bytes)?;
                    op.resource_body = serde_json::from_slice(&prepared).ok();
                    key
                }
                _ => {
                    let id = op.id.clone().unwrap_or_default();
                    self.address(&id, pk)?
                }
            };
            op.partition_key = None;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        match keys.as_slice() {
            [one] => Ok(one.clone()),
            [] => Ok(pk.clone()),
            many => Err(Error::bad_request(format!(
                "its transactional batch's items fall in {} logical partitions under this key; \
                 a batch must stay in one",
                many.len()
            ))),
        }
    }

    /// The synthetic key values a query addresses, when its filter binds the key's source
    /// paths (see the module comment); empty when it fans out.
    fn synthetic_keys(&self, sql: &str, params: &HashMap<String, Value>) -> Result<Vec<String>> {
        let Candidate::Synthetic { buckets, .. } = self.candidate else {
            return Ok(Vec::new());
        };
        let paths = self.candidate.source_paths();
        let Some(bound) = crate::engine::bound_keys(sql, params, &paths)? else {
            return Ok(Vec::new());
        };
        if buckets.is_some() {
            let mut with_id = paths.clone();
            with_id.push("/id".into());
            if let Some(pairs) = crate::engine::bound_keys(sql, params, &with_id)? {
                let mut out = Vec::new();
                for pair in pairs {
                    let Value::Array(mut v) = pair else { continue };
                    let id = v.pop().unwrap_or(Value::Null);
                    let id = id
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| id.to_string());
                    out.extend(self.candidate.synthetic_keys(&[Value::Array(v)], Some(&id)));
                }
                return Ok(out);
            }
        }
        Ok(self.candidate.synthetic_keys(&bound, None))
    }

    /// Runs `sql` on the copy once per key in `keys`, each to its last page, as one result:
    /// documents in key order, charges added, every range touched.
    fn query_each(
        &self,
        sql: &str,
        opts: &QueryOptions,
        keys: &[String],
        cancel: &AtomicBool,
    ) -> Result<QueryResult> {
        let mut merged: Option<QueryResult> = None;
        for key in keys {
            let mut o = opts.clone();
            o.partition_key = Some(json!(key));
            o.continuation = None;
            loop {
                let page = self.send(sql, &o, cancel)?;
                let next = page.continuation.clone();
                merged = Some(match merged.take() {
                    None => page,
                    Some(mut m) => {
                        m.documents.extend(page.documents);
                        m.request_charge =
                            crate::charge::round(m.request_charge + page.request_charge);
                        m.partitions.extend(page.partitions);
                        m.metrics.add(&page.metrics);
                        m
                    }
                });
                match next {
                    Some(t) => o.continuation = Some(t),
                    None => break,
                }
            }
        }
        let mut m = merged.ok_or_else(|| Error::internal("a query with no key to address"))?;
        m.continuation = None;
        if keys.len() > 1 {
            m.routing.kind = "targeted";
            m.routing.reason = format!(
                "the application sends it once per synthetic key value ({} values)",
                keys.len()
            );
        }
        Ok(m)
    }
}

/// The placement's ranges a copy range `c` maps to: the one with its bounds, or else those
/// it overlaps, each with its share of the overlap in the hash space.
fn shares(c: &PartitionKeyRange, placed: &[PartitionKeyRange]) -> Vec<(String, f64)> {
    if let Some(p) = placed
        .iter()
        .find(|p| p.min_inclusive == c.min_inclusive && p.max_exclusive == c.max_exclusive)
    {
        return vec![(p.id.clone(), 1.0)];
    }
    let (lo, hi) = (point(&c.min_inclusive), point(&c.max_exclusive));
    let overlaps: Vec<(String, f64)> = placed
        .iter()
        .map(|p| {
            let w = hi.min(point(&p.max_exclusive)) - lo.max(point(&p.min_inclusive));
            (p.id.clone(), w.max(0.0))
        })
        .filter(|(_, w)| *w > 0.0)
        .collect();
    let total: f64 = overlaps.iter().map(|(_, w)| w).sum();
    if total <= 0.0 {
        return vec![(c.id.clone(), 1.0)];
    }
    overlaps
        .into_iter()
        .map(|(id, w)| (id, w / total))
        .collect()
}

/// An EPK bound's position in the hash space, 0 to 1 (its first 8 bytes; "FF" is the end).
fn point(bound: &str) -> f64 {
    if bound == "FF" {
        return 1.0;
    }
    let mut b = [0u8; 8];
    for (i, v) in super::scale::hex(bound).into_iter().take(8).enumerate() {
        b[i] = v;
    }
    u64::from_be_bytes(b) as f64 / 2f64.powi(64)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the replay does not send: the executor sends item requests and queries only.
fn not_replayed(what: &str) -> Error {
    Error::new(
        StatusCode::BadRequest,
        format!("the advisor's replay does not send {what} requests"),
    )
}

impl Backend for Replayer<'_> {
    fn capabilities(&self) -> Capabilities {
        self.engine.capabilities()
    }

    fn create_database(&self, _: &str) -> Result<DatabaseInfo> {
        Err(not_replayed("database"))
    }

    fn delete_database(&self, _: &str) -> Result<()> {
        Err(not_replayed("database"))
    }

    fn list_databases(&self) -> Result<Vec<DatabaseInfo>> {
        self.engine.list_databases()
    }

    fn create_container(&self, _: &str, _: &str, _: ContainerSettings) -> Result<ContainerInfo> {
        Err(not_replayed("container"))
    }

    fn delete_container(&self, _: &str, _: &str) -> Result<()> {
        Err(not_replayed("container"))
    }

    fn list_containers(&self, db: Option<&str>) -> Result<Vec<ContainerInfo>> {
        self.engine.list_containers(db)
    }

    fn container(&self, db: &str, name: &str) -> Result<ContainerInfo> {
        self.engine.container(db, name)
    }

    fn container_key(&self, db: &str, name: &str) -> Result<ContainerKey> {
        self.engine.container_key(db, name)
    }

    fn partition_key_ranges(&self, db: &str, name: &str) -> Result<Vec<PartitionKeyRange>> {
        self.engine.partition_key_ranges(db, name)
    }

    fn set_throughput(&self, _: &str, _: &str, _: Throughput) -> Result<ContainerInfo> {
        Err(not_replayed("throughput"))
    }

    fn set_throughput_enforcement(&self, _: &str, _: &str, _: bool) -> Result<ContainerInfo> {
        Err(not_replayed("throughput"))
    }

    fn set_indexing_policy(&self, _: &str, _: &str, _: IndexingPolicy) -> Result<ContainerInfo> {
        Err(not_replayed("indexing policy"))
    }

    fn partitions(
        &self,
        db: &str,
        name: &str,
        top: usize,
        window: u64,
    ) -> Result<PartitionsReport> {
        self.engine.partitions(db, name, top, window)
    }

    fn logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        self.engine
            .logical_partitions(db, name, range, after, limit)
    }

    fn largest_logical_partitions(
        &self,
        db: &str,
        name: &str,
        range: &str,
        skip: usize,
        limit: usize,
    ) -> Result<LogicalPartitionPage> {
        self.engine
            .largest_logical_partitions(db, name, range, skip, limit)
    }

    fn item_keys(
        &self,
        db: &str,
        name: &str,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<KeyPage> {
        self.engine.item_keys(db, name, after, limit)
    }

    fn epk(&self, db: &str, name: &str, pk: &Value) -> Result<EpkInfo> {
        self.engine.epk(db, name, pk)
    }

    fn sample_documents(&self, db: &str, name: &str, limit: usize) -> Result<Vec<Vec<u8>>> {
        self.engine.sample_documents(db, name, limit)
    }

    fn create_item(&self, db: &str, name: &str, body: &[u8]) -> Result<ItemResponse> {
        self.write(db, name, body, |e, copy, b| {
            e.create_item(copy, self.container, b)
        })
    }

    fn upsert_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write(db, name, body, |e, copy, b| {
            e.upsert_item(copy, self.container, b, if_match)
        })
    }

    fn replace_item(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.write(db, name, body, |e, copy, b| {
            e.replace_item(copy, self.container, b, if_match)
        })
    }

    fn read_item(&self, db: &str, name: &str, id: &str, pk: &Value) -> Result<ItemResponse> {
        if !self.ours(db, name) {
            return self.engine.read_item(db, name, id, pk);
        }
        let key = self.address(id, pk)?;
        let r = self
            .engine
            .read_item(self.copy_database, self.container, id, &key)?;
        self.record(vec![(r.range.clone(), r.request_charge)], None);
        Ok(r)
    }

    fn delete_item(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.addressed_write(db, name, id, pk, |e, copy, key| {
            e.delete_item(copy, self.container, id, key, if_match)
        })
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
        self.addressed_write(db, name, id, pk, |e, copy, key| {
            e.patch_item(copy, self.container, id, key, request, if_match)
        })
    }

    fn execute_batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse> {
        if !self.ours(db, name) {
            return Err(self.refuse_write(db, name));
        }
        let mut ops = ops.to_vec();
        let key = if self.is_current {
            pk.clone()
        } else {
            self.batch_key(pk, &mut ops)?
        };
        let r = self
            .engine
            .execute_batch(self.copy_database, self.container, &key, &ops)?;
        let writes = ops.iter().any(|o| o.operation_type != OperationType::Read);
        self.record(
            vec![(r.range.clone(), r.request_charge)],
            writes.then_some(&key),
        );
        Ok(r)
    }

    fn validate_records(&self, _: &str, _: &str, _: &[Record]) -> Result<()> {
        Err(not_replayed("import"))
    }

    fn import_records(
        &self,
        _: &str,
        _: &str,
        _: &[Record],
        _: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        Err(not_replayed("import"))
    }

    fn export(
        &self,
        _: &str,
        _: &str,
        _: Option<&Value>,
        _: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        Err(not_replayed("export"))
    }

    fn query_cancellable(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
        cancel: &AtomicBool,
    ) -> Result<QueryResult> {
        if !self.ours(db, name) {
            return self.engine.query_cancellable(db, name, sql, opts, cancel);
        }
        if opts.continuation.is_none() {
            lock(&self.queries).push((sql.to_string(), opts.params.clone()));
        }
        let result = if self.is_current {
            self.send(sql, opts, cancel)?
        } else {
            let keys = match opts.continuation {
                None => self.synthetic_keys(sql, &opts.params)?,
                // A later page of a query sent with one key carries it in its options.
                Some(_) => Vec::new(),
            };
            match keys.as_slice() {
                [] => {
                    // Today's key means nothing to the copy: the filter routes the query.
                    let mut o = opts.clone();
                    o.partition_key = None;
                    self.send(sql, &o, cancel)?
                }
                many => self.query_each(sql, opts, many, cancel)?,
            }
        };
        self.record(
            result
                .partitions
                .iter()
                .map(|p| (p.id.to_string(), p.request_charge))
                .collect(),
            None,
        );
        Ok(result)
    }

    fn query_plan(
        &self,
        db: &str,
        name: &str,
        sql: &str,
        opts: &QueryOptions,
    ) -> Result<QueryPlan> {
        self.engine.query_plan(db, name, sql, opts)
    }

    fn read_feed(&self, db: &str, name: &str, req: &FeedRequest) -> Result<FeedPage> {
        self.engine.read_feed(db, name, req)
    }

    fn feed_head(&self, db: &str, name: &str) -> Result<u64> {
        self.engine.feed_head(db, name)
    }

    fn create_script(&self, _: &str, _: &str, _: &ScriptSpec) -> Result<ScriptInfo> {
        Err(not_replayed("script"))
    }

    fn replace_script(&self, _: &str, _: &str, _: &ScriptSpec) -> Result<ScriptInfo> {
        Err(not_replayed("script"))
    }

    fn read_script(&self, db: &str, name: &str, kind: ScriptKind, id: &str) -> Result<ScriptInfo> {
        self.engine.read_script(db, name, kind, id)
    }

    fn list_scripts(&self, db: &str, name: &str, kind: ScriptKind) -> Result<Vec<ScriptInfo>> {
        self.engine.list_scripts(db, name, kind)
    }

    fn delete_script(&self, _: &str, _: &str, _: ScriptKind, _: &str) -> Result<()> {
        Err(not_replayed("script"))
    }

    fn execute_stored_procedure(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &SprocRequest,
    ) -> Result<SprocResponse> {
        Err(not_replayed("stored procedure"))
    }

    fn write_item_with_triggers(
        &self,
        _: &str,
        _: &str,
        _: &TriggeredWrite,
    ) -> Result<ItemResponse> {
        Err(not_replayed("triggered write"))
    }
}
