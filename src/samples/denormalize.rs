//! Denormalization as the sample designs prescribe it, driven by the store's own mechanisms:
//! change feed processors ([`crate::processor`]) with their leases in a `leases`
//! container of the design's database, writing through the engine facade.
//!
//! - **Usernames** (blog v2 and v3): a processor on `users` reacts to every user item; for
//!   each it finds the posts, comments and likes in `posts` whose `userUsername` differs from
//!   the user's `username` (a fan-out query: `posts` is partitioned by `/postId`, so this is
//!   the expensive, rare path the article accepts) and patches them, one transactional
//!   batch per post's logical partition.
//! - **Post copies** (blog v3): a processor on `posts` copies each new or updated post, in
//!   the generator's [short form](super::blog::short_form) so the bytes match a fresh load,
//!   into `users` (the author's partition) and into `feed`, then trims `feed` to the
//!   [`FEED_SIZE`] newest posts (by `creationDate`, ties by `id`, as the generator orders
//!   them). The article trims with a post-trigger after every insert; here the processor
//!   reads the feed's ids once per batch and writes only what changes: posts that belong in
//!   the newest 100 are upserted, the ones pushed out are deleted.
//! - **Catalog names** (webstore): a processor on `productMeta` reacts to categories and
//!   tags; a category's products are one logical partition of `product` (partitioned by
//!   `/categoryId`), a tag's products need a fan-out query; both are patched in batches.
//!
//! Counters are not processors: a comment or like and its post's count, an order and its
//! customer's `salesOrderCount`, change in one transactional batch (the workbench suites'
//! C3, C4 and W7 patterns).
//!
//! Processors start at "now" when their leases are first created, so the items a sample
//! load wrote (already consistent) are not reprocessed; later runs resume from the leases'
//! checkpoints, so writes made while no processor ran are caught up. Handlers only write
//! idempotent changes (set a name, upsert a copy, delete an overflow), as at-least-once
//! delivery requires.

use crate::engine::Document;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::blog::{FEED_SIZE, short_form};
use super::manifest::Manifest;
use crate::engine::ContainerSettings;
use crate::engine::retry::RetryPolicy;
use crate::engine::{Backend, BatchOperation, PatchOperation, PatchRequest, QueryOptions};
use crate::error::{Error, Result, StatusCode};
use crate::processor::{ChangeFeedProcessor, LeaseBatch, ProcessorError, ProcessorOptions};

/// The lease container the processors create in the design's database.
pub const LEASE_CONTAINER: &str = "leases";

/// How often an idle background thread checks the monitored containers' change sequence.
/// The SDKs poll every 5 s by default; an explorer shows propagation as it happens, and a
/// check that finds nothing new costs nothing (it reads one counter, not the feed).
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// An idle processor still runs a round this often, to renew its leases (renewed every
/// 17 s, expired after 60 s) and to pick up leases other instances released.
const IDLE_ROUND: Duration = Duration::from_secs(5);

/// Rounds [`Denormalizer::drain`] runs before it gives up on catching up.
const MAX_DRAIN_ROUNDS: usize = 100_000;
/// Consecutive failed rounds [`Denormalizer::drain`] tolerates.
const MAX_DRAIN_FAILURES: usize = 5;

/// Feed items per query page and batch size (the service's limit on batch operations).
const PAGE: usize = 1000;
const BATCH: usize = crate::engine::batch::MAX_BATCH_OPERATIONS;

/// The instance name of this process: unique among processes sharing a store.
pub fn instance_name() -> String {
    format!("cosmoscope-{}", std::process::id())
}

/// What a processor keeps in sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duty {
    /// `users` → `userUsername` on posts, comments and likes in `posts` (blog v2, v3).
    Usernames,
    /// `posts` → short copies in `users` and `feed`, `feed` trimmed (blog v3).
    PostCopies,
    /// `productMeta` → `categoryName` and tag names on products (webstore).
    CatalogNames,
}

impl Duty {
    /// The processor name (lease ids start with it).
    pub fn name(self) -> &'static str {
        match self {
            Duty::Usernames => "usernames",
            Duty::PostCopies => "post-copies",
            Duty::CatalogNames => "catalog-names",
        }
    }

    /// The container whose change feed it follows.
    pub fn monitored(self) -> &'static str {
        match self {
            Duty::Usernames => "users",
            Duty::PostCopies => "posts",
            Duty::CatalogNames => "productMeta",
        }
    }

    /// The duties a bundled sample set's design calls for (none for the normalized ones).
    pub fn of_set(set: &str) -> Result<Vec<Duty>> {
        let manifest = Manifest::bundled(set)?;
        let generator = manifest.generator.as_ref();
        Ok(
            match generator.map(|g| (g.name.as_str(), g.design.as_str())) {
                Some(("blog", "v2")) => vec![Duty::Usernames],
                Some(("blog", "v3")) => vec![Duty::Usernames, Duty::PostCopies],
                Some(("webstore", "denormalized")) => vec![Duty::CatalogNames],
                _ => Vec::new(),
            },
        )
    }
}

/// What the processors of one database did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessorStats {
    /// Changes handed to handlers (a redelivered batch counts again: at-least-once).
    pub changes: u64,
    /// Item writes the handlers made (patches, upserts, deletes).
    pub writes: u64,
    /// RU of the feed reads and of the handlers' requests (leases not included).
    pub request_charge: f64,
    /// 429s the handlers met (each retried after its retry-after).
    pub throttled: u64,
    /// Failed rounds; their batches come again.
    pub errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl ProcessorStats {
    fn add(&mut self, o: &ProcessorStats) {
        self.changes += o.changes;
        self.writes += o.writes;
        self.request_charge += o.request_charge;
        self.throttled += o.throttled;
        self.errors += o.errors;
        if o.last_error.is_some() {
            self.last_error.clone_from(&o.last_error);
        }
    }

    fn failed(&mut self, e: &Error) {
        self.errors += 1;
        self.last_error = Some(e.message.clone());
    }

    /// The charge rounded like every other figure.
    pub fn rounded(mut self) -> ProcessorStats {
        self.request_charge = crate::charge::round(self.request_charge);
        self
    }
}

struct Job<'e> {
    duty: Duty,
    processor: ChangeFeedProcessor<'e>,
    seen_head: Option<u64>,
    last_round: Instant,
}

/// The change feed processors of one database, run by whoever owns it: a round at a time
/// ([`Denormalizer::poll`], [`Denormalizer::drain`]) or on a background thread
/// ([`spawn`]).
pub struct Denormalizer<'e> {
    engine: &'e dyn Backend,
    db: String,
    jobs: Vec<Job<'e>>,
    stats: ProcessorStats,
    retry: RetryPolicy,
}

impl<'e> Denormalizer<'e> {
    /// The processors bundled set `set` needs over database `db`; `None` for designs that
    /// denormalize nothing.
    pub fn for_set(
        engine: &'e dyn Backend,
        set: &str,
        db: &str,
    ) -> Result<Option<Denormalizer<'e>>> {
        let duties = Duty::of_set(set)?;
        if duties.is_empty() {
            return Ok(None);
        }
        Denormalizer::new(engine, db, &duties).map(Some)
    }

    /// Creates the lease container if needed and the processors, and runs a first round
    /// so their leases exist (starting now) before the caller writes anything: changes
    /// made from here on are all delivered.
    pub fn new(engine: &'e dyn Backend, db: &str, duties: &[Duty]) -> Result<Denormalizer<'e>> {
        ensure_lease_container(engine, db)?;
        let instance = instance_name();
        let jobs = duties
            .iter()
            .map(|&duty| {
                let options = ProcessorOptions::new(duty.name(), &instance, db, LEASE_CONTAINER);
                Ok(Job {
                    duty,
                    processor: ChangeFeedProcessor::new(engine, db, duty.monitored(), options)?,
                    seen_head: None,
                    last_round: Instant::now(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut d = Denormalizer {
            engine,
            db: db.to_string(),
            jobs,
            stats: ProcessorStats::default(),
            retry: RetryPolicy::default(),
        };
        for i in 0..d.jobs.len() {
            d.round(i)?;
        }
        Ok(d)
    }

    pub fn database(&self) -> &str {
        &self.db
    }

    pub fn duties(&self) -> Vec<Duty> {
        self.jobs.iter().map(|j| j.duty).collect()
    }

    pub fn stats(&self) -> &ProcessorStats {
        &self.stats
    }

    /// One round of every processor whose container changed since its last empty round
    /// (or that has been idle for a while). Returns the changes delivered; failures are
    /// counted in the stats and their batches come again.
    pub fn poll(&mut self) -> usize {
        let mut delivered = 0;
        for i in 0..self.jobs.len() {
            let monitored = self.jobs[i].duty.monitored();
            let head = match self.engine.feed_head(&self.db, monitored) {
                Ok(h) => h,
                Err(e) => {
                    self.stats.failed(&e);
                    continue;
                }
            };
            let job = &self.jobs[i];
            if job.seen_head == Some(head) && job.last_round.elapsed() < IDLE_ROUND {
                continue;
            }
            match self.round(i) {
                Ok(0) => self.jobs[i].seen_head = Some(head),
                Ok(n) => delivered += n,
                Err(e) => self.stats.failed(&e),
            }
        }
        delivered
    }

    /// Runs rounds until every processor has caught up (a round of all of them delivers
    /// nothing). Returns the changes delivered.
    pub fn drain(&mut self) -> Result<u64> {
        let mut total = 0u64;
        let mut failures = 0;
        for _ in 0..MAX_DRAIN_ROUNDS {
            let mut n = 0;
            let mut failure = None;
            for i in 0..self.jobs.len() {
                match self.round(i) {
                    Ok(k) => n += k,
                    Err(e) => {
                        self.stats.failed(&e);
                        failure = Some(e);
                    }
                }
            }
            match failure {
                Some(e) => {
                    failures += 1;
                    if failures >= MAX_DRAIN_FAILURES {
                        return Err(e);
                    }
                }
                None if n == 0 => return Ok(total),
                None => failures = 0,
            }
            total += n as u64;
        }
        Err(Error::internal(format!(
            "the processors of {} did not catch up in {MAX_DRAIN_ROUNDS} rounds",
            self.db
        )))
    }

    /// Like [`Denormalizer::drain`], but stops after `limit` even if changes remain (they
    /// stay in the feed, and the next processor run picks them up from the checkpoints).
    pub fn drain_for(&mut self, limit: Duration) -> u64 {
        let started = Instant::now();
        let mut total = 0;
        while started.elapsed() < limit {
            let mut n = 0;
            for i in 0..self.jobs.len() {
                match self.round(i) {
                    Ok(k) => n += k,
                    Err(e) => self.stats.failed(&e),
                }
            }
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        total
    }

    /// Gives up every lease (keeping the checkpoints), so another process takes over at
    /// once rather than after the leases expire. Call it when stopping.
    pub fn release(&mut self) -> Result<()> {
        let mut first = None;
        for job in &mut self.jobs {
            if let Err(e) = job.processor.release_all() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn round(&mut self, i: usize) -> Result<usize> {
        let Denormalizer {
            engine,
            db,
            jobs,
            stats,
            retry,
        } = self;
        let job = &mut jobs[i];
        let duty = job.duty;
        let mut ctx = Ctx {
            engine: *engine,
            db,
            stats,
            retry: *retry,
        };
        let result = job.processor.run_once(|batch: &LeaseBatch| -> Result<()> {
            ctx.stats.changes += batch.changes.len() as u64;
            ctx.stats.request_charge += batch.request_charge;
            let docs = batch.documents();
            match duty {
                Duty::Usernames => ctx.usernames(&docs),
                Duty::PostCopies => ctx.post_copies(&docs),
                Duty::CatalogNames => ctx.catalog_names(&docs),
            }
        });
        job.last_round = Instant::now();
        result.map_err(|e| match e {
            ProcessorError::Store(e) => e,
            ProcessorError::Handler { lease_token, error } => Error {
                message: format!(
                    "processor {} on {}/{} (lease {lease_token}): {}",
                    duty.name(),
                    db,
                    duty.monitored(),
                    error.message
                ),
                ..error
            },
        })
    }
}

fn ensure_lease_container(engine: &dyn Backend, db: &str) -> Result<()> {
    match engine.container(db, LEASE_CONTAINER) {
        Ok(_) => Ok(()),
        Err(e) if e.status == StatusCode::NotFound => {
            let settings = ContainerSettings::new(vec!["/id".into()]);
            match engine.create_container(db, LEASE_CONTAINER, settings) {
                Ok(_) => Ok(()),
                Err(e) if e.status == StatusCode::Conflict => Ok(()), // another process was first
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// What a handler works with.
struct Ctx<'a> {
    engine: &'a dyn Backend,
    db: &'a str,
    stats: &'a mut ProcessorStats,
    retry: RetryPolicy,
}

impl Ctx<'_> {
    /// Every document of a query, all pages.
    fn query(
        &mut self,
        container: &str,
        sql: &str,
        params: &[(&str, &Value)],
        pk: Option<Value>,
    ) -> Result<Vec<Value>> {
        let mut opts = QueryOptions {
            params: params
                .iter()
                .map(|(n, v)| (n.trim_start_matches('@').to_string(), (*v).clone()))
                .collect(),
            partition_key: pk,
            max_items: Some(PAGE),
            ..QueryOptions::default()
        };
        let mut docs = Vec::new();
        loop {
            let (engine, db) = (self.engine, self.db);
            let page = self.retry.run(&mut self.stats.throttled, || {
                engine.query(db, container, sql, &opts)
            })?;
            self.stats.request_charge += page.request_charge;
            docs.extend(page.documents.into_iter().map(Document::into_value));
            match page.continuation {
                Some(token) => opts.continuation = Some(token),
                None => return Ok(docs),
            }
        }
    }

    /// Runs `ops` on one logical partition in transactional batches of up to 100. An item
    /// gone since it was found (404) is dropped from its batch, which is sent again.
    fn batches(&mut self, container: &str, pk: &Value, ops: Vec<BatchOperation>) -> Result<()> {
        for chunk in ops.chunks(BATCH) {
            let mut chunk = chunk.to_vec();
            while !chunk.is_empty() {
                let (engine, db) = (self.engine, self.db);
                let resp = self.retry.run(&mut self.stats.throttled, || {
                    engine.execute_batch(db, container, pk, &chunk)
                })?;
                self.stats.request_charge += resp.request_charge;
                match resp.failure {
                    None => {
                        self.stats.writes += chunk
                            .iter()
                            .filter(|o| o.operation_type != crate::engine::OperationType::Read)
                            .count() as u64;
                        break;
                    }
                    Some(f) if f.error.status == StatusCode::NotFound => {
                        chunk.remove(f.index);
                    }
                    Some(f) => return Err(f.error),
                }
            }
        }
        Ok(())
    }

    /// A username on every post, comment and like of its user.
    fn usernames(&mut self, docs: &[Value]) -> Result<()> {
        for doc in docs {
            // v3 keeps post copies in `users` too; only user items carry usernames.
            if doc.get("type").is_some_and(|t| t != "user") {
                continue;
            }
            let (Some(id), Some(name)) = (doc.get("id"), doc.get("username")) else {
                continue;
            };
            let stale = self.query(
                "posts",
                "SELECT c.id, c.postId FROM c WHERE c.userId = @userId AND c.userUsername != @username",
                &[("userId", id), ("username", name)],
                None,
            )?;
            let set = PatchRequest::new(vec![PatchOperation::Set {
                path: "/userUsername".into(),
                value: name.clone(),
            }]);
            for (post, ids) in group_by(&stale, "postId") {
                let ops = ids
                    .iter()
                    .map(|i| BatchOperation::patch(i.clone(), &set))
                    .collect();
                self.batches("posts", &post, ops)?;
            }
        }
        Ok(())
    }

    /// Short copies of posts in `users` and `feed`; `feed` kept to the newest posts.
    fn post_copies(&mut self, docs: &[Value]) -> Result<()> {
        let shorts: Vec<Value> = docs
            .iter()
            .filter(|d| d.get("type").is_some_and(|t| t == "post"))
            .map(short_form)
            .collect();
        if shorts.is_empty() {
            return Ok(());
        }
        let mut by_user: BTreeMap<String, Vec<BatchOperation>> = BTreeMap::new();
        for s in &shorts {
            if let Some(user) = s.get("userId").and_then(Value::as_str) {
                by_user
                    .entry(user.to_string())
                    .or_default()
                    .push(BatchOperation::upsert(s.clone()));
            }
        }
        for (user, ops) in by_user {
            self.batches("users", &Value::String(user), ops)?;
        }
        self.trim_feed(&shorts)
    }

    /// The newest [`FEED_SIZE`] of the feed's posts and `incoming` stay (incoming ones
    /// upserted); the rest are deleted.
    fn trim_feed(&mut self, incoming: &[Value]) -> Result<()> {
        let pk = json!("post");
        let current = self.query(
            "feed",
            "SELECT c.id, c.creationDate FROM c",
            &[],
            Some(pk.clone()),
        )?;
        let key = |d: &Value| -> Option<(String, String)> {
            Some((
                d.get("creationDate")?.as_str()?.to_string(),
                d.get("id")?.as_str()?.to_string(),
            ))
        };
        let mut all: BTreeSet<(String, String)> = current.iter().filter_map(key).collect();
        all.extend(incoming.iter().filter_map(key));
        // Newest first: creationDate descending, then id descending (the generator's order).
        let keep: BTreeSet<&str> = all
            .iter()
            .rev()
            .take(FEED_SIZE)
            .map(|(_, id)| id.as_str())
            .collect();
        let mut ops: Vec<BatchOperation> = incoming
            .iter()
            .filter(|s| key(s).is_some_and(|(_, id)| keep.contains(id.as_str())))
            .map(|s| BatchOperation::upsert(s.clone()))
            .collect();
        let upserted: BTreeSet<&str> = incoming
            .iter()
            .filter_map(|s| s.get("id").and_then(Value::as_str))
            .collect();
        ops.extend(
            current
                .iter()
                .filter_map(|d| d.get("id").and_then(Value::as_str))
                .filter(|id| !keep.contains(id) && !upserted.contains(id))
                .map(BatchOperation::delete),
        );
        if ops.is_empty() {
            return Ok(());
        }
        self.batches("feed", &pk, ops)
    }

    /// Category and tag names on products.
    fn catalog_names(&mut self, docs: &[Value]) -> Result<()> {
        for doc in docs {
            let (Some(id), Some(name)) = (doc.get("id"), doc.get("name")) else {
                continue;
            };
            match doc.get("type").and_then(Value::as_str) {
                Some("category") => {
                    // A category's products are one logical partition of `product`.
                    let stale = self.query(
                        "product",
                        "SELECT c.id FROM c WHERE c.categoryName != @name",
                        &[("name", name)],
                        Some(id.clone()),
                    )?;
                    let set = PatchRequest::new(vec![PatchOperation::Set {
                        path: "/categoryName".into(),
                        value: name.clone(),
                    }]);
                    let ops = stale
                        .iter()
                        .filter_map(|d| d.get("id").and_then(Value::as_str))
                        .map(|i| BatchOperation::patch(i, &set))
                        .collect();
                    self.batches("product", id, ops)?;
                }
                Some("tag") => {
                    let stale = self.query(
                        "product",
                        "SELECT c.id, c.categoryId, c.tags FROM c JOIN t IN c.tags \
                         WHERE t.id = @id AND t.name != @name",
                        &[("id", id), ("name", name)],
                        None,
                    )?;
                    let mut by_category: BTreeMap<String, Vec<BatchOperation>> = BTreeMap::new();
                    for p in &stale {
                        let (Some(pid), Some(cat)) = (
                            p.get("id").and_then(Value::as_str),
                            p.get("categoryId").and_then(Value::as_str),
                        ) else {
                            continue;
                        };
                        let tags = p.get("tags").and_then(Value::as_array);
                        let ops: Vec<PatchOperation> = tags
                            .into_iter()
                            .flatten()
                            .enumerate()
                            .filter(|(_, t)| t.get("id") == Some(id))
                            .map(|(i, _)| PatchOperation::Set {
                                path: format!("/tags/{i}/name"),
                                value: name.clone(),
                            })
                            .collect();
                        if !ops.is_empty() {
                            by_category
                                .entry(cat.to_string())
                                .or_default()
                                .push(BatchOperation::patch(pid, &PatchRequest::new(ops)));
                        }
                    }
                    for (cat, ops) in by_category {
                        self.batches("product", &Value::String(cat), ops)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Ids of `docs` grouped by the value of `field` (their logical partition).
fn group_by(docs: &[Value], field: &str) -> Vec<(Value, Vec<String>)> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in docs {
        if let (Some(k), Some(id)) = (
            d.get(field).and_then(Value::as_str),
            d.get("id").and_then(Value::as_str),
        ) {
            groups
                .entry(k.to_string())
                .or_default()
                .push(id.to_string());
        }
    }
    groups
        .into_iter()
        .map(|(k, ids)| (Value::String(k), ids))
        .collect()
}

// ---- background ----

struct Shared {
    stop: AtomicBool,
    stats: Mutex<BTreeMap<String, ProcessorStats>>,
}

/// Denormalizers polling on a background thread of a [`std::thread::scope`].
pub struct Background<'scope, 'e> {
    shared: Arc<Shared>,
    handle: ScopedJoinHandle<'scope, Vec<Denormalizer<'e>>>,
}

/// Runs `denormalizers` on a thread of `scope`, polling every [`POLL_INTERVAL`] while idle,
/// until [`Background::stop`].
pub fn spawn<'scope, 'env, 'e: 'scope>(
    scope: &'scope Scope<'scope, 'env>,
    mut denormalizers: Vec<Denormalizer<'e>>,
) -> Background<'scope, 'e> {
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        stats: Mutex::new(BTreeMap::new()),
    });
    let thread_shared = shared.clone();
    let handle = scope.spawn(move || {
        let shared = thread_shared;
        while !shared.stop.load(Ordering::Acquire) {
            let mut delivered = 0;
            for d in &mut denormalizers {
                delivered += d.poll();
            }
            if let Ok(mut stats) = shared.stats.lock() {
                for d in &denormalizers {
                    stats.insert(d.db.clone(), d.stats.clone());
                }
            }
            if delivered == 0 {
                std::thread::park_timeout(POLL_INTERVAL);
            }
        }
        denormalizers
    });
    Background { shared, handle }
}

impl<'e> Background<'_, 'e> {
    /// What the processors did so far, per database.
    pub fn stats(&self) -> BTreeMap<String, ProcessorStats> {
        self.shared
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// The sum over every database.
    pub fn total(&self) -> ProcessorStats {
        let mut total = ProcessorStats::default();
        for s in self.stats().values() {
            total.add(s);
        }
        total
    }

    /// Stops the thread after its current round and hands the denormalizers back (to drain
    /// and release).
    pub fn stop(self) -> Result<Vec<Denormalizer<'e>>> {
        self.shared.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        self.handle
            .join()
            .map_err(|_| Error::internal("a change feed processor thread panicked"))
    }
}

/// The sum of several denormalizers' stats.
pub fn total(denormalizers: &[Denormalizer]) -> ProcessorStats {
    let mut total = ProcessorStats::default();
    for d in denormalizers {
        total.add(&d.stats);
    }
    total
}
