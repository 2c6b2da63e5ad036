//! Running a pattern's steps against one design: parameter pools drawn from the data,
//! per-iteration parameters, and the requests themselves with what each cost.
//!
//! The simulator runs patterns through the same [`Executor`], so a design's workload is
//! the same requests the workbench measures.

use crate::engine::Document;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::suite::{Action, Design, Generate, ParamSource, Step, Suite, Triggers, WriteKind};
use super::template::{Scope, Template};
use crate::engine::retry::RetryPolicy;
use crate::engine::{
    Backend, BatchOperation, ItemResponse, PatchRequest, QueryOptions, SprocRequest, TriggeredOp,
    TriggeredWrite,
};
use crate::error::{Error, Result};
use crate::samples::rng::Rng;
use crate::samples::vocab::{Vocabulary, iso_millis, vocabulary};

/// Values a `partitionKeys` parameter draws from at most: spread over the container's
/// physical partitions, the first keys of each in EPK (hash) order — a sample as random
/// as the hash, read from statistics without touching items.
pub const POOL_SIZE: usize = 1000;

/// Where a request went: one logical partition, some ranges, or all of them.
pub const SINGLE: &str = "single-partition";
pub const TARGETED: &str = "targeted";
pub const FAN_OUT: &str = "fan-out";

fn routing_rank(r: &str) -> u8 {
    match r {
        FAN_OUT => 2,
        TARGETED => 1,
        _ => 0,
    }
}

/// A number unique to this moment, for [`Vars::draw`]'s `run`.
pub fn run_nonce() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 48)
}

/// The values drawn parameters of one design pick from.
#[derive(Debug, Clone, Default)]
pub struct Pools {
    values: HashMap<String, Vec<Value>>,
}

impl Pools {
    /// Reads the values of every drawn parameter (the suite's and the design's) from
    /// design `design`'s data. Values are sorted, so designs holding the same data draw the
    /// same values for the same seed.
    pub fn load(engine: &dyn Backend, suite: &Suite, design: &Design) -> Result<Pools> {
        let mut values = HashMap::new();
        for (name, source) in suite.params.iter().chain(&design.params) {
            let mut pool = match source {
                ParamSource::PartitionKeys { container } => {
                    partition_keys(engine, &design.database, container)?
                }
                ParamSource::Query {
                    container,
                    sql,
                    limit,
                } => query_pool(engine, &design.database, container, sql, *limit)?,
                ParamSource::Values(v) => v.clone(),
                ParamSource::Generate(_) => continue,
            };
            pool.sort_by_cached_key(sort_key);
            if pool.is_empty() {
                return Err(Error::not_found(format!(
                    "design {}: parameter {name} has nothing to draw from ({} is empty)",
                    design.id,
                    source_name(source)
                )));
            }
            values.insert(name.clone(), pool);
        }
        Ok(Pools { values })
    }

    pub fn get(&self, name: &str) -> Option<&[Value]> {
        self.values.get(name).map(Vec::as_slice)
    }
}

fn source_name(s: &ParamSource) -> String {
    match s {
        ParamSource::PartitionKeys { container } => format!("container {container}"),
        ParamSource::Query { container, .. } => format!("its query on {container}"),
        _ => "its list".into(),
    }
}

/// Documents sort by their id when they have one, so projections of the same items in
/// two designs line up.
fn sort_key(v: &Value) -> String {
    match v.get("id") {
        Some(Value::String(id)) => id.clone(),
        _ => v.to_string(),
    }
}

fn partition_keys(engine: &dyn Backend, db: &str, container: &str) -> Result<Vec<Value>> {
    let info = engine.container(db, container)?;
    let ranges = info.partitions.unwrap_or_default();
    let per_range = POOL_SIZE.div_ceil(ranges.len().max(1));
    let mut out = Vec::new();
    for r in ranges {
        let page = engine.logical_partitions(db, container, &r.id, None, per_range)?;
        out.extend(page.logical_partitions.into_iter().map(|l| l.partition_key));
    }
    Ok(out)
}

fn query_pool(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    sql: &str,
    limit: usize,
) -> Result<Vec<Value>> {
    let mut opts = QueryOptions {
        max_items: Some(limit.min(1000)),
        ..QueryOptions::default()
    };
    let mut out = Vec::new();
    loop {
        let page = engine.query(db, c, sql, &opts)?;
        out.extend(page.documents.into_iter().map(Document::into_value));
        match page.continuation {
            Some(t) if out.len() < limit => opts.continuation = Some(t),
            _ => break,
        }
    }
    out.truncate(limit);
    Ok(out)
}

/// The variables of one iteration: parameters, then what steps bind.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: HashMap<String, Value>,
}

impl Scope for Vars {
    fn var(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
}

impl Vars {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub fn set(&mut self, name: impl Into<String>, v: Value) {
        self.values.insert(name.into(), v);
    }

    /// Draws every parameter of `design` for iteration `iteration` of stream `label`.
    /// Each parameter has its own stream, so two designs with the same pools draw the
    /// same values. `pinned` overrides parameters (the simulator's hot key).
    ///
    /// Generated ids also mix in `run`, a number unique to the run: the same seed must
    /// not create an item that a previous run with that seed already created (409).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        suite: &Suite,
        design: &Design,
        pools: &Pools,
        seed: u64,
        run: u64,
        label: &str,
        iteration: u64,
        pinned: &[(&str, &Value)],
    ) -> Result<Vars> {
        let mut values = HashMap::new();
        for (name, source) in suite.params.iter().chain(&design.params) {
            if let Some((_, v)) = pinned.iter().find(|(n, _)| n == name) {
                values.insert(name.clone(), (*v).clone());
                continue;
            }
            let mut rng = Rng::derive(seed, &format!("{label}/{name}"), iteration);
            let v = match source {
                ParamSource::Generate(Generate::Uuid) => {
                    let mut unique = Rng::derive(seed ^ run, &format!("{label}/{name}"), iteration);
                    Value::String(unique.uuid())
                }
                ParamSource::Generate(g) => generate(g, &mut rng)?,
                _ => {
                    let pool = pools.get(name).ok_or_else(|| {
                        Error::internal(format!("parameter {name} has no values loaded"))
                    })?;
                    pool.get(rng.below(pool.len() as u64) as usize)
                        .cloned()
                        .unwrap_or(Value::Null)
                }
            };
            values.insert(name.clone(), v);
        }
        Ok(Vars { values })
    }
}

fn generate(g: &Generate, rng: &mut Rng) -> Result<Value> {
    let v = vocabulary()?;
    Ok(match g {
        Generate::Uuid => Value::String(rng.uuid()),
        Generate::Now => Value::String(iso_millis(chrono::Utc::now().timestamp_millis())),
        Generate::Username => {
            let first = Vocabulary::pick(rng, &v.people.first_names).to_lowercase();
            let last = Vocabulary::pick(rng, &v.people.last_names).to_lowercase();
            Value::String(format!("{first}_{last}{}", rng.between(100, 9999)))
        }
        Generate::Title => Value::String(v.title(rng, 3, 9)),
        Generate::Sentence => Value::String(v.paragraph(rng, 1, 3)),
        Generate::Paragraphs => Value::String(v.paragraphs(rng, 2, 6)),
        Generate::Name => Value::String(v.title(rng, 2, 2)),
        Generate::Int { min, max } => {
            let span = (*max - *min) as u64;
            json!(*min + rng.between(0, span) as i64)
        }
    })
}

/// One request a pattern sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRecord {
    pub kind: &'static str,
    pub container: String,
    pub routing: &'static str,
    /// Physical partitions (range ids) it touched.
    pub partitions: Vec<String>,
    pub request_charge: f64,
    pub latency: Duration,
    /// The statement or the item it addressed.
    pub detail: String,
    /// A setup step: not counted.
    pub setup: bool,
    /// For a query page: the work the RU model priced, for projections.
    pub work: Option<QueryWorkCount>,
}

/// What a query page did, as the RU model counts it: the projection recomputes its charge
/// from these at another scale.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryWorkCount {
    /// Physical partitions the page read.
    pub ranges: usize,
    /// Documents loaded (the service's retrieved document count) and their bytes.
    pub loaded_docs: u64,
    pub loaded_bytes: u64,
    pub output_bytes: u64,
    /// The documents were found by scanning (every document in scope loaded) rather than
    /// through the index.
    pub scan: bool,
}

/// The requests of one run of a pattern.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatternRun {
    pub ops: Vec<OpRecord>,
    /// 429s met (and retried).
    pub throttled: u64,
}

impl PatternRun {
    pub fn measured(&self) -> impl Iterator<Item = &OpRecord> {
        self.ops.iter().filter(|o| !o.setup)
    }

    pub fn request_charge(&self) -> f64 {
        crate::charge::round(self.measured().map(|o| o.request_charge).sum())
    }

    pub fn latency(&self) -> Duration {
        self.measured().map(|o| o.latency).sum()
    }

    pub fn requests(&self) -> usize {
        self.measured().count()
    }

    /// Distinct physical partitions touched, over every container.
    pub fn partitions_touched(&self) -> usize {
        self.measured()
            .flat_map(|o| o.partitions.iter().map(move |p| (o.container.as_str(), p)))
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The widest routing of any measured request.
    pub fn routing(&self) -> &'static str {
        self.measured()
            .map(|o| o.routing)
            .max_by_key(|r| routing_rank(r))
            .unwrap_or(SINGLE)
    }

    /// Whether any measured request wrote.
    pub fn wrote(&self) -> bool {
        self.measured().any(|o| !matches!(o.kind, "read" | "query"))
    }
}

/// Sends a pattern's requests through the engine.
pub struct Executor<'e> {
    engine: &'e dyn Backend,
    pub retry: RetryPolicy,
}

impl<'e> Executor<'e> {
    pub fn new(engine: &'e dyn Backend) -> Executor<'e> {
        Executor {
            engine,
            retry: RetryPolicy::default(),
        }
    }

    /// Runs `steps` on database `db` with `vars` (which steps extend with what they bind).
    /// A failed step fails the run with its status and a message naming the step.
    pub fn run(&self, db: &str, steps: &[Step], vars: &mut Vars) -> Result<PatternRun> {
        let mut run = PatternRun::default();
        for (i, step) in steps.iter().enumerate() {
            let context = |e: Error| Error {
                message: format!(
                    "step {} ({} {}): {}",
                    i + 1,
                    step.action.kind(),
                    step.action.container(),
                    e.message
                ),
                ..e
            };
            let result = match &step.for_each {
                Some(list) => {
                    let items = match vars.get(list) {
                        Some(Value::Array(items)) => items.clone(),
                        Some(other) => {
                            return Err(context(Error::bad_request(format!(
                                "forEach {list}: expected a list, got {}",
                                short(other)
                            ))));
                        }
                        None => {
                            return Err(context(Error::bad_request(format!(
                                "forEach {list}: not defined"
                            ))));
                        }
                    };
                    let saved = vars.values.remove("item");
                    let mut results = Vec::with_capacity(items.len());
                    for item in items {
                        vars.set("item", item);
                        results.push(self.step(db, step, vars, &mut run).map_err(context)?);
                    }
                    vars.values.remove("item");
                    if let Some(s) = saved {
                        vars.set("item", s);
                    }
                    Value::Array(results)
                }
                None => self.step(db, step, vars, &mut run).map_err(context)?,
            };
            if let Some(name) = &step.bind {
                vars.set(name.clone(), result);
            }
        }
        Ok(run)
    }

    /// Sends one step's requests and returns its result; the 429s they met count in `run`
    /// only when the step succeeds.
    fn step(&self, db: &str, step: &Step, vars: &Vars, run: &mut PatternRun) -> Result<Value> {
        let mut call = Call {
            engine: self.engine,
            retry: &self.retry,
            db,
            vars,
            rec: Recorder {
                run: &mut *run,
                kind: step.action.kind(),
                container: step.action.container(),
                setup: step.setup,
            },
            throttled: 0,
        };
        let result = match &step.action {
            Action::Read { container, id, pk } => call.read(container, id, pk),
            Action::Query {
                container,
                sql,
                params,
                pk,
            } => call
                .query(container, sql, params, pk.as_ref())
                .map(|docs| arrange(docs, step)),
            Action::Write {
                kind,
                container,
                body,
            } => call.write(*kind, container, body),
            Action::Patch {
                container,
                id,
                pk,
                operations,
                condition,
            } => call.patch(container, id, pk, operations, condition.as_deref()),
            Action::Delete { container, id, pk } => call.delete(container, id, pk),
            Action::Batch {
                container,
                pk,
                operations,
            } => call.batch(container, pk, operations),
            Action::Execute {
                container,
                sproc,
                pk,
                args,
            } => call.execute(container, sproc, pk, args),
            Action::Triggered { write, triggers } => call.triggered(write, triggers),
        }?;
        run.throttled += call.throttled;
        Ok(result)
    }
}

/// One step's requests: the database and variables they are filled from, where they are
/// recorded, and the 429s they met.
struct Call<'s, 'r> {
    engine: &'s dyn Backend,
    retry: &'s RetryPolicy,
    db: &'s str,
    vars: &'s Vars,
    rec: Recorder<'r>,
    throttled: u64,
}

impl Call<'_, '_> {
    /// A template's value with this iteration's variables.
    fn fill(&self, t: &Template) -> Result<Value> {
        t.eval(self.vars).map_err(Error::bad_request)
    }

    /// An item id's template as text.
    fn fill_id(&self, t: &Template) -> Result<String> {
        t.eval_string(self.vars).map_err(Error::bad_request)
    }

    /// Sends a request addressed to item `id` in partition `pk` (retrying 429s) and
    /// records it; returns the item it returned.
    fn addressed(
        &mut self,
        id: &str,
        pk: &Value,
        mut send: impl FnMut(&dyn Backend, &str) -> Result<ItemResponse>,
    ) -> Result<Value> {
        let (engine, db) = (self.engine, self.db);
        let started = Instant::now();
        let r = self.retry.run(&mut self.throttled, || send(engine, db))?;
        Ok(self
            .rec
            .point(&r, started, format!("id {id}, partition key {pk}")))
    }

    /// Reads an item; returns it.
    fn read(&mut self, container: &str, id: &Template, pk: &Template) -> Result<Value> {
        let (id, pk) = (self.fill_id(id)?, self.fill(pk)?);
        self.addressed(&id, &pk, |engine, db| {
            engine.read_item(db, container, &id, &pk)
        })
    }

    /// Runs a query to its last page, recording each page; returns every document.
    fn query(
        &mut self,
        container: &str,
        sql: &str,
        params: &[(String, Template)],
        pk: Option<&Template>,
    ) -> Result<Vec<Value>> {
        let mut opts = QueryOptions {
            params: params
                .iter()
                .map(|(n, t)| Ok((n.clone(), self.fill(t)?)))
                .collect::<Result<_>>()?,
            partition_key: pk.map(|t| self.fill(t)).transpose()?,
            ..QueryOptions::default()
        };
        let (engine, db) = (self.engine, self.db);
        let mut docs = Vec::new();
        loop {
            let started = Instant::now();
            let page = self.retry.run(&mut self.throttled, || {
                engine.query(db, container, sql, &opts)
            })?;
            self.rec.op(
                page.routing.kind,
                page.partitions.iter().map(|p| p.id.to_string()).collect(),
                page.request_charge,
                started.elapsed(),
                sql.to_string(),
            );
            if let Some(last) = self.rec.run.ops.last_mut() {
                last.work = Some(QueryWorkCount {
                    ranges: page.partitions.len(),
                    loaded_docs: page.metrics.retrieved_document_count,
                    loaded_bytes: page.metrics.retrieved_document_size,
                    output_bytes: page.metrics.output_document_size,
                    scan: page.access.kind == "scan",
                });
            }
            docs.extend(page.documents.into_iter().map(Document::into_value));
            match page.continuation {
                Some(token) => opts.continuation = Some(token),
                None => break,
            }
        }
        Ok(docs)
    }

    /// Creates, upserts or replaces an item; returns what the engine returned.
    fn write(&mut self, kind: WriteKind, container: &str, body: &Template) -> Result<Value> {
        let doc = self.fill(body)?;
        let bytes = serde_json::to_vec(&doc)
            .map_err(|e| Error::internal(format!("serializing an item: {e}")))?;
        let (engine, db) = (self.engine, self.db);
        let started = Instant::now();
        let r = self.retry.run(&mut self.throttled, || match kind {
            WriteKind::Create => engine.create_item(db, container, &bytes),
            WriteKind::Upsert => engine.upsert_item(db, container, &bytes, None),
            WriteKind::Replace => engine.replace_item(db, container, &bytes, None),
        })?;
        let detail = format!("id {}", doc.get("id").map_or("?".into(), |v| v.to_string()));
        Ok(self.rec.point(&r, started, detail))
    }

    /// Patches an item, under the step's filter condition if any; returns the item.
    fn patch(
        &mut self,
        container: &str,
        id: &Template,
        pk: &Template,
        operations: &Template,
        condition: Option<&str>,
    ) -> Result<Value> {
        let (id, pk) = (self.fill_id(id)?, self.fill(pk)?);
        let mut req = json!({ "operations": self.fill(operations)? });
        if let Some(c) = condition {
            req["condition"] = Value::String(c.to_string());
        }
        let req = PatchRequest::from_json(req)?;
        self.addressed(&id, &pk, |engine, db| {
            engine.patch_item(db, container, &id, &pk, &req, None)
        })
    }

    /// Deletes an item; the result is null.
    fn delete(&mut self, container: &str, id: &Template, pk: &Template) -> Result<Value> {
        let (id, pk) = (self.fill_id(id)?, self.fill(pk)?);
        self.addressed(&id, &pk, |engine, db| {
            engine.delete_item(db, container, &id, &pk, None)
        })?;
        Ok(Value::Null)
    }

    /// Runs a transactional batch in one logical partition; returns the operations'
    /// results, or fails with the operation that failed the batch.
    fn batch(&mut self, container: &str, pk: &Template, operations: &Template) -> Result<Value> {
        let pk = self.fill(pk)?;
        let ops: Vec<BatchOperation> = serde_json::from_value(self.fill(operations)?)
            .map_err(|e| Error::bad_request(format!("invalid batch operation: {e}")))?;
        let (engine, db) = (self.engine, self.db);
        let started = Instant::now();
        let r = self.retry.run(&mut self.throttled, || {
            engine.execute_batch(db, container, &pk, &ops)
        })?;
        let detail = format!("{} operations, partition key {pk}", ops.len());
        self.rec.single(&r.range, r.request_charge, started, detail);
        if let Some(f) = r.failure {
            return Err(Error {
                message: format!(
                    "the batch failed at operation {}: {}",
                    f.index + 1,
                    f.error.message
                ),
                ..f.error
            });
        }
        Ok(Value::Array(
            r.results
                .into_iter()
                .map(|o| o.resource_body.unwrap_or(Value::Null))
                .collect(),
        ))
    }

    /// Sends a create, upsert, replace or delete with its triggers, in one transaction;
    /// returns what the write returned. A trigger that throws fails the step and undoes
    /// the write.
    fn triggered(&mut self, write: &Action, triggers: &Triggers) -> Result<Value> {
        let (op, detail) = match write {
            Action::Write { kind, body, .. } => {
                let doc = self.fill(body)?;
                let bytes = serde_json::to_vec(&doc)
                    .map_err(|e| Error::internal(format!("serializing an item: {e}")))?;
                let detail = format!("id {}", doc.get("id").map_or("?".into(), |v| v.to_string()));
                let op = match kind {
                    WriteKind::Create => TriggeredOp::Create(bytes),
                    WriteKind::Upsert => TriggeredOp::Upsert(bytes),
                    WriteKind::Replace => TriggeredOp::Replace(bytes),
                };
                (op, detail)
            }
            Action::Delete { id, pk, .. } => {
                let (id, partition_key) = (self.fill_id(id)?, self.fill(pk)?);
                let detail = format!("id {id}, partition key {partition_key}");
                (TriggeredOp::Delete { id, partition_key }, detail)
            }
            other => {
                return Err(Error::internal(format!(
                    "a {} step cannot name triggers",
                    other.kind()
                )));
            }
        };
        let request = TriggeredWrite {
            op,
            if_match: None,
            pre_trigger: triggers.pre.clone(),
            post_trigger: triggers.post.clone(),
        };
        let (engine, db, container) = (self.engine, self.db, write.container());
        let started = Instant::now();
        let r = self.retry.run(&mut self.throttled, || {
            engine.write_item_with_triggers(db, container, &request)
        })?;
        let names: Vec<String> = triggers.named().map(|(f, t)| format!("{f} {t}")).collect();
        Ok(self
            .rec
            .point(&r, started, format!("{detail}, {}", names.join(", "))))
    }

    /// Executes stored procedure `sproc` in partition `pk` with `args`; returns the body it
    /// set. A script that throws rolls back and fails the step with the script's error.
    fn execute(
        &mut self,
        container: &str,
        sproc: &str,
        pk: &Template,
        args: &Template,
    ) -> Result<Value> {
        let request = SprocRequest {
            partition_key: self.fill(pk)?,
            params: match self.fill(args)? {
                Value::Array(args) => args,
                other => vec![other],
            },
            enable_log: false,
        };
        let (engine, db) = (self.engine, self.db);
        let started = Instant::now();
        let r = self.retry.run(&mut self.throttled, || {
            engine.execute_stored_procedure(db, container, sproc, &request)
        })?;
        let detail = format!("{sproc}, partition key {}", request.partition_key);
        self.rec.single(&r.range, r.request_charge, started, detail);
        Ok(r.body.unwrap_or(Value::Null))
    }
}

/// A query step's documents as the application would keep them: sorted by the step's
/// field, then cut to its count (both client-side).
fn arrange(mut docs: Vec<Value>, step: &Step) -> Value {
    if let Some((field, desc)) = &step.order_by {
        docs.sort_by(|a, b| compare(a.get(field), b.get(field)));
        if *desc {
            docs.reverse();
        }
    }
    if let Some(n) = step.take {
        docs.truncate(n);
    }
    Value::Array(docs)
}

/// Appends what a step's requests did to a run.
struct Recorder<'r> {
    run: &'r mut PatternRun,
    /// The step's action, which is also the kind of each of its requests.
    kind: &'static str,
    container: &'r str,
    setup: bool,
}

impl Recorder<'_> {
    fn op(
        &mut self,
        routing: &'static str,
        partitions: Vec<String>,
        request_charge: f64,
        latency: Duration,
        detail: String,
    ) {
        self.run.ops.push(OpRecord {
            kind: self.kind,
            container: self.container.to_string(),
            routing,
            partitions,
            request_charge,
            latency,
            detail,
            setup: self.setup,
            work: None,
        });
    }

    /// A request to one logical partition (one range), sent at `started`.
    fn single(&mut self, range: &str, request_charge: f64, started: Instant, detail: String) {
        let partitions = vec![range.to_string()];
        self.op(
            SINGLE,
            partitions,
            request_charge,
            started.elapsed(),
            detail,
        );
    }

    /// A point operation: one logical partition, one range. Returns the item it returned.
    fn point(&mut self, r: &ItemResponse, started: Instant, detail: String) -> Value {
        self.single(&r.range, r.request_charge, started, detail);
        body(r.body.as_deref())
    }
}

fn body(b: Option<&[u8]>) -> Value {
    b.and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// Numbers by value, strings by text, anything else after them.
fn compare(a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        _ => Ordering::Equal,
    }
}
