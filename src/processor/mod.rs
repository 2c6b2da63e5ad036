//! The change feed processor: leases, load balancing, checkpoints and split handling on top
//! of the engine's change feed, the way the SDKs' change feed processor works
//! (reference/cosmos.md §5.4).
//!
//! This file owns the lease document format and the processor's round. Leases are ordinary
//! items in a lease container the caller creates, partitioned by `/id`: one per live physical
//! partition of the monitored container, recording its owner, its last renewal and the feed
//! continuation up to which changes were handled. Instances that share a processor name share
//! the leases. Every ownership change and checkpoint is a replace with `If-Match` on the
//! lease's `_etag`, so races between instances resolve by 412 (and 409 on create) without
//! locks. Delivery is at-least-once: a batch is checkpointed only after the handler accepted
//! it, and a lease that changes hands resumes from its last checkpoint.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use crate::engine::{
    Backend, FeedChange, FeedMode, FeedPage, FeedRequest, FeedStart, PartitionKeyDefinition,
    PartitionKeyRange,
};
use crate::error::{Error, Result, StatusCode};

/// Lease document version: leases name an EPK range (the .NET SDK's `EPKRangeBasedLease`).
const LEASE_VERSION: u64 = 1;
/// Tries at a conditional update of a lease this instance still owns while others keep
/// touching it; past this the round gives up with 412 rather than spin.
const UPDATE_ATTEMPTS: usize = 3;

/// Where leases start reading when they are first created; existing leases keep their
/// checkpoints whatever this says (as `WithStartTime` in the SDKs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessorStart {
    /// Every change still in the feed.
    Beginning,
    /// Only changes made after the leases were created (the SDKs' default).
    Now,
    /// Changes at or after this Unix second.
    Time(i64),
}

#[derive(Debug, Clone)]
pub struct ProcessorOptions {
    /// Instances with the same processor name share one set of leases.
    pub processor_name: String,
    /// This instance; unique among the instances of one processor.
    pub instance_name: String,
    pub lease_db: String,
    pub lease_container: String,
    pub mode: FeedMode,
    pub start: ProcessorStart,
    /// Changes read per lease per round.
    pub max_items: usize,
    /// A lease whose owner has not renewed it for this long is free to take.
    pub lease_expiry: Duration,
    /// How often an owner refreshes its leases' timestamps (at most half of `lease_expiry`;
    /// zero renews every round).
    pub renew_interval: Duration,
}

impl ProcessorOptions {
    /// Options with the SDKs' defaults: latest-version mode, start now, 100 items a page,
    /// leases expire after 60 s and are renewed every 17 s.
    pub fn new(
        processor_name: impl Into<String>,
        instance_name: impl Into<String>,
        lease_db: impl Into<String>,
        lease_container: impl Into<String>,
    ) -> ProcessorOptions {
        ProcessorOptions {
            processor_name: processor_name.into(),
            instance_name: instance_name.into(),
            lease_db: lease_db.into(),
            lease_container: lease_container.into(),
            mode: FeedMode::LatestVersion,
            start: ProcessorStart::Now,
            max_items: 100,
            lease_expiry: Duration::from_secs(60),
            renew_interval: Duration::from_secs(17),
        }
    }
}

/// One page of changes of one lease, handed to the handler.
#[derive(Debug, Clone)]
pub struct LeaseBatch {
    /// The lease's range id (the SDKs' `LeaseToken`).
    pub lease_token: String,
    pub changes: Vec<FeedChange>,
    pub mode: FeedMode,
    /// The monitored container's partition key, for rendering changes.
    pub partition_key: PartitionKeyDefinition,
    pub request_charge: f64,
}

impl LeaseBatch {
    /// The changes in the service's wire shape for the processor's mode.
    pub fn documents(&self) -> Vec<Value> {
        self.changes
            .iter()
            .map(|c| c.to_json(self.mode, &self.partition_key))
            .collect()
    }
}

/// Why a round failed: the store refused something, or the handler rejected a batch (that
/// batch was not checkpointed and comes again next round; other leases went on).
#[derive(Debug)]
pub enum ProcessorError<E> {
    Store(Error),
    Handler { lease_token: String, error: E },
}

impl<E> From<Error> for ProcessorError<E> {
    fn from(e: Error) -> Self {
        ProcessorError::Store(e)
    }
}

impl<E: fmt::Display> fmt::Display for ProcessorError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessorError::Store(e) => e.fmt(f),
            ProcessorError::Handler { lease_token, error } => {
                write!(f, "the handler failed on lease {lease_token}: {error}")
            }
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for ProcessorError<E> {}

/// A lease document as read, with the fields the processor relies on parsed out.
#[derive(Debug, Clone)]
struct Lease {
    /// The whole document, so fields other tools add (`properties`, ...) survive updates.
    doc: Map<String, Value>,
    id: String,
    /// The range's id (the lease token).
    range_id: String,
    /// The EPK range it covers, as upper-case hex: the text order is the EPKs' byte order
    /// (each byte is two digits), so bounds compare as strings.
    min: String,
    max: String,
    etag: String,
}

impl Lease {
    fn parse(json: &[u8]) -> Result<Lease> {
        let doc = match serde_json::from_slice::<Value>(json) {
            Ok(Value::Object(doc)) => doc,
            _ => return Err(Error::internal("a lease document is not a JSON object")),
        };
        let text = |name: &str| doc.get(name).and_then(Value::as_str);
        let id = text("id").unwrap_or_default().to_string();
        let bad = |what: &str| {
            Error::internal(format!(
                "lease {id:?} is malformed ({what}); delete it and the processor recreates it"
            ))
        };
        let range_id = text("LeaseToken")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| bad("LeaseToken"))?
            .to_string();
        let bound = |name: &str| {
            doc.get("FeedRange")
                .and_then(|r| r.get(name))
                .and_then(Value::as_str)
                .filter(|h| h.len() % 2 == 0 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                .map(str::to_ascii_uppercase)
                .ok_or_else(|| bad("FeedRange"))
        };
        let (min, max) = (bound("min")?, bound("max")?);
        let etag = text("_etag").ok_or_else(|| bad("_etag"))?.to_string();
        Ok(Lease {
            id,
            range_id,
            min,
            max,
            etag,
            doc,
        })
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.doc.get(name).and_then(Value::as_str)
    }

    fn token(&self) -> String {
        self.range_id.clone()
    }

    fn owner(&self) -> Option<&str> {
        self.text("Owner").filter(|o| !o.is_empty())
    }

    fn continuation(&self) -> Option<&str> {
        self.text("ContinuationToken").filter(|c| !c.is_empty())
    }

    /// Last renewal: `timestamp` (RFC 3339 or Unix seconds), else the document's `_ts`, as
    /// the .NET lease falls back to `_ts`.
    fn renewed_at(&self) -> Option<DateTime<Utc>> {
        let secs = |v: &Value| v.as_i64().and_then(|s| DateTime::from_timestamp(s, 0));
        match self.doc.get("timestamp") {
            Some(Value::String(s)) => DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            Some(v @ Value::Number(_)) => secs(v),
            _ => self.doc.get("_ts").and_then(secs),
        }
    }

    fn age(&self, now: DateTime<Utc>) -> Option<Duration> {
        // A timestamp ahead of our clock counts as just renewed.
        self.renewed_at()
            .map(|t| (now - t).to_std().unwrap_or(Duration::ZERO))
    }

    fn expired(&self, now: DateTime<Utc>, expiry: Duration) -> bool {
        self.age(now).is_none_or(|age| age >= expiry)
    }

    /// True when the live range lies inside this lease's range (it is the lease's range or
    /// a descendant of it).
    fn covers(&self, range: &PartitionKeyRange) -> bool {
        self.min <= range.min_inclusive && range.max_exclusive <= self.max
    }

    /// True when the live range overlaps this lease's range.
    fn overlaps(&self, range: &PartitionKeyRange) -> bool {
        range.min_inclusive < self.max && self.min < range.max_exclusive
    }
}

/// What happened to one owned lease in a round.
enum Step<E> {
    /// Still owned; `n` changes delivered and checkpointed.
    Kept(Lease, usize),
    /// Another instance took it (after `n` changes were delivered, which it will deliver
    /// again: at-least-once).
    Lost(usize),
    /// Its range split: the parent lease is gone and these child leases are ours.
    Split(Vec<Lease>),
    /// The handler rejected the batch; nothing was checkpointed.
    Failed(Lease, E),
}

/// One instance of a change feed processor over one monitored container.
pub struct ChangeFeedProcessor<'e> {
    engine: &'e dyn Backend,
    db: String,
    container: String,
    options: ProcessorOptions,
    /// Leases owned at the end of the last round, sorted by range id.
    owned: Vec<Lease>,
}

impl<'e> ChangeFeedProcessor<'e> {
    /// Checks the options and that both containers exist; the lease container must be
    /// partitioned by `/id` and differ from the monitored one.
    pub fn new(
        engine: &'e dyn Backend,
        db: &str,
        container: &str,
        options: ProcessorOptions,
    ) -> Result<Self> {
        if options.processor_name.trim().is_empty() {
            return Err(Error::bad_request(
                "the change feed processor needs a processor name",
            ));
        }
        if options.instance_name.trim().is_empty() {
            return Err(Error::bad_request(
                "the change feed processor needs an instance name",
            ));
        }
        engine.partition_key_ranges(db, container)?;
        let leases = engine.container(&options.lease_db, &options.lease_container)?;
        if leases.partition_key.paths != ["/id"] {
            return Err(Error::bad_request(format!(
                "lease container {}/{} is partitioned by {}; create one partitioned by /id",
                leases.database,
                leases.id,
                leases.partition_key.paths.join(", ")
            )));
        }
        if options.lease_db == db && options.lease_container == container {
            return Err(Error::bad_request(
                "the lease container cannot be the monitored container: lease updates would feed themselves",
            ));
        }
        Ok(ChangeFeedProcessor {
            engine,
            db: db.to_string(),
            container: container.to_string(),
            options,
            owned: Vec::new(),
        })
    }

    pub fn options(&self) -> &ProcessorOptions {
        &self.options
    }

    /// Lease tokens (range ids) this instance owned at the end of the last round.
    pub fn owned_leases(&self) -> Vec<String> {
        self.owned.iter().map(Lease::token).collect()
    }

    /// One round: create leases for live ranges no lease covers, acquire, steal and renew
    /// leases toward an even share, then read one page per owned lease, hand it to
    /// `handler` and checkpoint it when the handler returns `Ok`. A lease whose range split
    /// is replaced by leases for the children, which resume from its checkpoint.
    ///
    /// Returns how many changes the handler accepted. If the handler fails on a lease, the
    /// other leases still run and the first failure is returned; that batch comes again.
    pub fn run_once<E>(
        &mut self,
        mut handler: impl FnMut(&LeaseBatch) -> Result<(), E>,
    ) -> Result<usize, ProcessorError<E>> {
        let mut ranges = self.ranges()?;
        let mut leases = self.load_leases()?;
        if self.create_missing_leases(&ranges, &leases)? {
            leases = self.load_leases()?;
        }
        let mut queue: VecDeque<Lease> = self.balance(leases)?.into();

        let mut kept = Vec::with_capacity(queue.len());
        let mut delivered = 0;
        let mut failure = None;
        let mut store_error = None;
        while let Some(lease) = queue.pop_front() {
            match self.process(lease, &ranges, &mut handler) {
                Ok(Step::Kept(lease, n)) => {
                    delivered += n;
                    kept.push(lease);
                }
                Ok(Step::Lost(n)) => delivered += n,
                Ok(Step::Split(children)) => {
                    // The children are live only in the container as it is now.
                    match self.ranges() {
                        Ok(fresh) => ranges = fresh,
                        Err(e) => {
                            store_error = Some(e);
                            break;
                        }
                    }
                    queue.extend(children);
                }
                Ok(Step::Failed(lease, error)) => {
                    failure.get_or_insert((lease.token(), error));
                    kept.push(lease);
                }
                Err(e) => {
                    store_error = Some(e);
                    break;
                }
            }
        }
        // Leases not reached because of an error are still ours.
        kept.extend(queue);
        kept.sort_by(by_token);
        self.owned = kept;

        if let Some(e) = store_error {
            return Err(ProcessorError::Store(e));
        }
        match failure {
            Some((lease_token, error)) => Err(ProcessorError::Handler { lease_token, error }),
            None => Ok(delivered),
        }
    }

    /// Gives up every owned lease (keeping its checkpoint) so other instances take them at
    /// once instead of after expiry; call it on a graceful shutdown.
    pub fn release_all(&mut self) -> Result<()> {
        let mut first_error = None;
        for lease in std::mem::take(&mut self.owned) {
            let released = self.update_owned(lease, |doc| {
                doc.insert("Owner".into(), Value::Null);
                doc.insert("timestamp".into(), stamp(Utc::now()).into());
            });
            if let Err(e) = released {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    // ---- the round ----

    /// Creates unowned leases for live ranges that no lease's range overlaps. A range inside
    /// an old lease's range is left alone: it is a split child, and the old lease's owner
    /// creates its lease from the old checkpoint. Returns whether leases changed.
    fn create_missing_leases(
        &self,
        ranges: &[PartitionKeyRange],
        leases: &[Lease],
    ) -> Result<bool> {
        let mut changed = false;
        for range in ranges {
            if leases.iter().any(|l| l.overlaps(range)) {
                continue;
            }
            // Starting now means a position fixed when the lease is created, not whenever
            // it is first read, so changes in between are not lost.
            let continuation = match self.options.start {
                ProcessorStart::Now => match self.read(&range.id, FeedStart::Now, 1) {
                    Ok(page) => Some(page.continuation),
                    Err(e) if e.status == StatusCode::Gone => continue, // split since `ranges` was read
                    Err(e) => return Err(e),
                },
                _ => None,
            };
            let doc = self.new_lease_doc(range, None, continuation.as_deref());
            match self.create_lease(&doc) {
                Ok(_) => changed = true,
                Err(e) if e.status == StatusCode::Conflict => changed = true, // another instance was first
                Err(e) => return Err(e),
            }
        }
        Ok(changed)
    }

    /// Renews our leases and moves toward `ceil(leases / active instances)` of them: free
    /// or expired leases first, else one stolen from the busiest instance if it holds more
    /// than that. Returns the leases owned now.
    fn balance(&self, leases: Vec<Lease>) -> Result<Vec<Lease>> {
        let now = Utc::now();
        let me = self.options.instance_name.as_str();
        let expiry = self.options.lease_expiry;
        let total = leases.len();
        // Active instances (owners of unexpired leases, and us) and how many leases each holds.
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let (mut mine, mut free, mut others) = (Vec::new(), Vec::new(), Vec::new());
        for lease in leases {
            match lease.owner() {
                // Our own stale leases stay ours: they are renewed below.
                Some(owner) if owner == me => mine.push(lease),
                Some(owner) if !lease.expired(now, expiry) => {
                    *counts.entry(owner.to_string()).or_default() += 1;
                    others.push(lease);
                }
                _ => free.push(lease),
            }
        }
        counts.insert(me.to_string(), mine.len());
        let target = total.div_ceil(counts.len());
        let mut needed = target.saturating_sub(mine.len());

        if needed > 0 && !free.is_empty() {
            free.sort_by(by_token);
            for lease in &free {
                if needed == 0 {
                    break;
                }
                if let Some(taken) = self.acquire(lease, now)? {
                    mine.push(taken);
                    needed -= 1;
                }
            }
        } else if needed > 0 {
            // Steal one lease from the busiest instance, only if it holds more than its share.
            let victim = counts
                .iter()
                .filter(|(owner, count)| owner.as_str() != me && **count > target)
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .and_then(|(owner, _)| {
                    others
                        .iter()
                        .filter(|l| l.owner() == Some(owner.as_str()))
                        .max_by(|a, b| by_token(a, b))
                });
            if let Some(victim) = victim {
                mine.extend(self.acquire(victim, now)?);
            }
        }

        let renew_after = self.options.renew_interval.min(expiry / 2);
        let mut owned = Vec::with_capacity(mine.len());
        for lease in mine {
            if lease.age(now).is_some_and(|age| age < renew_after) {
                owned.push(lease);
            } else if let Some(renewed) = self.update_owned(lease, |doc| {
                doc.insert("timestamp".into(), stamp(Utc::now()).into());
            })? {
                owned.push(renewed);
            }
        }
        owned.sort_by(by_token);
        Ok(owned)
    }

    /// Reads one page of an owned lease, hands it to the handler and checkpoints it.
    fn process<E>(
        &self,
        lease: Lease,
        ranges: &[PartitionKeyRange],
        handler: &mut impl FnMut(&LeaseBatch) -> Result<(), E>,
    ) -> Result<Step<E>> {
        if !ranges.iter().any(|r| r.id == lease.range_id) {
            return self.split(lease);
        }
        let start = match lease.continuation() {
            Some(token) => FeedStart::Continuation(token.to_string()),
            None => match self.options.start {
                ProcessorStart::Beginning => FeedStart::Beginning,
                ProcessorStart::Now => FeedStart::Now,
                ProcessorStart::Time(t) => FeedStart::Time(t),
            },
        };
        let page = match self.read(&lease.range_id, start, self.options.max_items) {
            Ok(read) => read,
            // The range split after this round listed the ranges.
            Err(e) if e.status == StatusCode::Gone => return self.split(lease),
            Err(e) => return Err(e),
        };
        if page.changes.is_empty() {
            // Nothing to deliver, but the position may have moved past skipped entries.
            if lease.continuation() == Some(page.continuation.as_str()) {
                return Ok(Step::Kept(lease, 0));
            }
            return Ok(match self.checkpoint(lease, &page.continuation)? {
                Some(lease) => Step::Kept(lease, 0),
                None => Step::Lost(0),
            });
        }
        let batch = LeaseBatch {
            lease_token: lease.token(),
            changes: page.changes,
            mode: self.options.mode,
            partition_key: page.partition_key,
            request_charge: page.request_charge,
        };
        if let Err(error) = handler(&batch) {
            return Ok(Step::Failed(lease, error));
        }
        let n = batch.changes.len();
        Ok(match self.checkpoint(lease, &page.continuation)? {
            Some(lease) => Step::Kept(lease, n),
            None => Step::Lost(n),
        })
    }

    /// Replaces the lease of a split-away range by leases, owned by us, for the live ranges
    /// inside it, carrying its checkpoint (feed tokens are valid across splits: a child
    /// finds the token entry covering it). Children are created before the parent is
    /// deleted, so a crash in between leaves the parent to finish the job, never a gap.
    fn split<E>(&self, lease: Lease) -> Result<Step<E>> {
        let ranges = self.ranges()?;
        let children: Vec<&PartitionKeyRange> = ranges.iter().filter(|r| lease.covers(r)).collect();
        if children.is_empty() || ranges.iter().any(|r| r.id == lease.range_id) {
            // Not a split (ranges here only ever split, and this one is live); leave it be.
            return Ok(Step::Kept(lease, 0));
        }
        let me = self.options.instance_name.as_str();
        let mut mine = Vec::with_capacity(children.len());
        for child in children {
            let doc = self.new_lease_doc(child, Some(me), lease.continuation());
            match self.create_lease(&doc) {
                Ok(created) => mine.push(created),
                // Left by an earlier attempt at this split: take it if nobody holds it.
                Err(e) if e.status == StatusCode::Conflict => {
                    let id = lease_id(&self.options.processor_name, &child.id);
                    if let Some(existing) = self.read_lease(&id)? {
                        let now = Utc::now();
                        if existing.owner() == Some(me) {
                            mine.push(existing);
                        } else if existing.owner().is_none()
                            || existing.expired(now, self.options.lease_expiry)
                        {
                            mine.extend(self.acquire(&existing, now)?);
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        match self.engine.delete_item(
            &self.options.lease_db,
            &self.options.lease_container,
            &lease.id,
            &Value::String(lease.id.clone()),
            Some(&lease.etag),
        ) {
            // 404/412: someone else finished or took over the parent; the children stand.
            Ok(_) => {}
            Err(e)
                if e.status == StatusCode::NotFound
                    || e.status == StatusCode::PreconditionFailed => {}
            Err(e) => return Err(e),
        }
        Ok(Step::Split(mine))
    }

    fn checkpoint(&self, lease: Lease, continuation: &str) -> Result<Option<Lease>> {
        self.update_owned(lease, |doc| {
            doc.insert("ContinuationToken".into(), continuation.into());
            doc.insert("timestamp".into(), stamp(Utc::now()).into());
        })
    }

    // ---- lease documents ----

    /// The monitored container's live ranges.
    fn ranges(&self) -> Result<Vec<PartitionKeyRange>> {
        self.engine.partition_key_ranges(&self.db, &self.container)
    }

    fn read(&self, range: &str, start: FeedStart, max_items: usize) -> Result<FeedPage> {
        let req = FeedRequest {
            start,
            mode: self.options.mode,
            range: Some(range.to_string()),
            max_items: max_items.max(1),
            ..FeedRequest::default()
        };
        self.engine.read_feed(&self.db, &self.container, &req)
    }

    fn new_lease_doc(
        &self,
        range: &PartitionKeyRange,
        owner: Option<&str>,
        continuation: Option<&str>,
    ) -> Map<String, Value> {
        let mut feed_range = Map::new();
        feed_range.insert("min".into(), range.min_inclusive.clone().into());
        feed_range.insert("max".into(), range.max_exclusive.clone().into());
        let mut doc = Map::new();
        doc.insert(
            "id".into(),
            lease_id(&self.options.processor_name, &range.id).into(),
        );
        doc.insert("version".into(), LEASE_VERSION.into());
        doc.insert(
            "processorName".into(),
            self.options.processor_name.clone().into(),
        );
        doc.insert("monitoredContainer".into(), self.monitored().into());
        doc.insert("mode".into(), mode_name(self.options.mode).into());
        doc.insert("LeaseToken".into(), range.id.clone().into());
        doc.insert("FeedRange".into(), Value::Object(feed_range));
        doc.insert("Owner".into(), owner.map_or(Value::Null, Value::from));
        doc.insert(
            "ContinuationToken".into(),
            continuation.map_or(Value::Null, Value::from),
        );
        doc.insert("timestamp".into(), stamp(Utc::now()).into());
        doc.insert("properties".into(), Value::Object(Map::new()));
        doc
    }

    fn monitored(&self) -> String {
        format!("{}/{}", self.db, self.container)
    }

    /// Every lease of this processor. Leases of the same processor name over another
    /// container or in another mode are an error: their tokens would not fit.
    fn load_leases(&self) -> Result<Vec<Lease>> {
        let name = self.options.processor_name.as_str();
        let monitored = self.monitored();
        let mode = mode_name(self.options.mode);
        let mut leases = Vec::new();
        self.engine.export(&self.options.lease_db, &self.options.lease_container, None, &mut |json| {
            #[derive(serde::Deserialize)]
            struct Header {
                #[serde(rename = "processorName")]
                processor_name: Option<String>,
            }
            let mine = serde_json::from_slice::<Header>(json)
                .ok()
                .and_then(|h| h.processor_name)
                .is_some_and(|n| n == name);
            if !mine {
                return Ok(()); // another processor's lease, or not a lease at all
            }
            let lease = Lease::parse(json)?;
            if lease.text("monitoredContainer").is_some_and(|m| m != monitored) || lease.text("mode").is_some_and(|m| m != mode) {
                return Err(Error::conflict(format!(
                    "lease container {}/{} already holds leases of processor {name:?} for {} in mode {}; \
                     use another processor name for {monitored} in mode {mode}",
                    self.options.lease_db,
                    self.options.lease_container,
                    lease.text("monitoredContainer").unwrap_or("?"),
                    lease.text("mode").unwrap_or("?"),
                )));
            }
            leases.push(lease);
            Ok(())
        })?;
        leases.sort_by(by_token);
        Ok(leases)
    }

    fn create_lease(&self, doc: &Map<String, Value>) -> Result<Lease> {
        let body = encode(doc)?;
        let resp = self.engine.create_item(
            &self.options.lease_db,
            &self.options.lease_container,
            &body,
        )?;
        Lease::parse(resp.body.as_deref().unwrap_or_default())
    }

    fn replace_lease(&self, doc: &Map<String, Value>, etag: &str) -> Result<Lease> {
        let body = encode(doc)?;
        let resp = self.engine.replace_item(
            &self.options.lease_db,
            &self.options.lease_container,
            &body,
            Some(etag),
        )?;
        Lease::parse(resp.body.as_deref().unwrap_or_default())
    }

    fn read_lease(&self, id: &str) -> Result<Option<Lease>> {
        let pk = Value::String(id.to_string());
        match self.engine.read_item(
            &self.options.lease_db,
            &self.options.lease_container,
            id,
            &pk,
        ) {
            Ok(resp) => Lease::parse(resp.body.as_deref().unwrap_or_default()).map(Some),
            Err(e) if e.status == StatusCode::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Takes a lease we do not own; `None` when another instance changed it first.
    fn acquire(&self, lease: &Lease, now: DateTime<Utc>) -> Result<Option<Lease>> {
        let mut doc = lease.doc.clone();
        doc.insert("Owner".into(), self.options.instance_name.clone().into());
        doc.insert("timestamp".into(), stamp(now).into());
        match self.replace_lease(&doc, &lease.etag) {
            Ok(taken) => Ok(Some(taken)),
            Err(e)
                if e.status == StatusCode::PreconditionFailed
                    || e.status == StatusCode::NotFound =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Applies `edit` to a lease we own, conditionally on its etag. On 412 it re-reads the
    /// lease: still ours (only its etag moved) → retry; another owner or deleted → `None`,
    /// the lease is lost.
    fn update_owned(
        &self,
        lease: Lease,
        edit: impl Fn(&mut Map<String, Value>),
    ) -> Result<Option<Lease>> {
        let me = self.options.instance_name.as_str();
        let mut current = lease;
        for _ in 0..UPDATE_ATTEMPTS {
            let mut doc = current.doc.clone();
            edit(&mut doc);
            match self.replace_lease(&doc, &current.etag) {
                Ok(updated) => return Ok(Some(updated)),
                Err(e) if e.status == StatusCode::NotFound => return Ok(None),
                Err(e) if e.status == StatusCode::PreconditionFailed => {
                    match self.read_lease(&current.id)? {
                        Some(fresh) if fresh.owner() == Some(me) => current = fresh,
                        _ => return Ok(None),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::precondition_failed(format!(
            "lease {} kept changing under instance {me}; is another instance using the same name?",
            current.id
        )))
    }
}

/// `{processorName}..{rangeId}`: stable across restarts, unique per processor and range.
fn lease_id(processor_name: &str, range: &str) -> String {
    format!("{processor_name}..{range}")
}

/// Leases in the order of their range ids, numerically: ids are decimal numbers, which a
/// shorter text is the smaller of.
fn by_token(a: &Lease, b: &Lease) -> std::cmp::Ordering {
    (a.range_id.len(), &a.range_id).cmp(&(b.range_id.len(), &b.range_id))
}

fn mode_name(mode: FeedMode) -> &'static str {
    match mode {
        FeedMode::LatestVersion => "LatestVersion",
        FeedMode::AllVersions => "AllVersionsAndDeletes",
    }
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn encode(doc: &Map<String, Value>) -> Result<Vec<u8>> {
    serde_json::to_vec(doc).map_err(|e| Error::internal(format!("cannot encode a lease: {e}")))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;
    use tempfile::TempDir;

    use super::*;
    use crate::engine::{ContainerSettings, Engine, Throughput};

    const DB: &str = "db";
    const MONITORED: &str = "orders";
    const LEASES: &str = "leases";

    fn setup(ru: u64) -> (TempDir, Engine) {
        let dir = TempDir::new().unwrap();
        let engine = Engine::open(dir.path()).unwrap();
        engine.create_database(DB).unwrap();
        let settings = ContainerSettings {
            throughput: Throughput::Manual(ru),
            ..ContainerSettings::new(vec!["/pk".into()])
        };
        engine.create_container(DB, MONITORED, settings).unwrap();
        engine
            .create_container(DB, LEASES, ContainerSettings::new(vec!["/id".into()]))
            .unwrap();
        (dir, engine)
    }

    fn write(engine: &Engine, items: std::ops::Range<usize>) {
        for i in items {
            let body = json!({"id": format!("item{i}"), "pk": format!("pk{i}"), "n": i});
            engine
                .create_item(DB, MONITORED, body.to_string().as_bytes())
                .unwrap();
        }
    }

    fn ids(items: std::ops::Range<usize>) -> Vec<String> {
        let mut v: Vec<String> = items.map(|i| format!("item{i}")).collect();
        v.sort();
        v
    }

    fn options(instance: &str) -> ProcessorOptions {
        ProcessorOptions {
            start: ProcessorStart::Beginning,
            max_items: 5,
            ..ProcessorOptions::new("denorm", instance, DB, LEASES)
        }
    }

    fn processor<'e>(engine: &'e Engine, instance: &str) -> ChangeFeedProcessor<'e> {
        ChangeFeedProcessor::new(engine, DB, MONITORED, options(instance)).unwrap()
    }

    /// Runs rounds until one delivers nothing; returns the ids delivered, sorted.
    fn drain(p: &mut ChangeFeedProcessor) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..200 {
            let n = p
                .run_once(|b: &LeaseBatch| -> Result<(), String> {
                    seen.extend(b.changes.iter().map(|c| c.id.clone()));
                    Ok(())
                })
                .unwrap();
            if n == 0 {
                seen.sort();
                return seen;
            }
        }
        panic!("the processor never caught up");
    }

    /// Lease documents of the test processor, by lease token.
    fn lease_docs(engine: &Engine) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        engine
            .export(DB, LEASES, None, &mut |json| {
                let v: Value = serde_json::from_slice(json).unwrap();
                out.insert(v["LeaseToken"].as_str().unwrap().to_string(), v);
                Ok(())
            })
            .unwrap();
        out
    }

    /// Live range ids of the monitored container, sorted like lease tokens in a `BTreeMap`.
    fn live_ranges(engine: &Engine) -> Vec<String> {
        let mut ids: Vec<String> = engine
            .container(DB, MONITORED)
            .unwrap()
            .partitions
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        ids.sort();
        ids
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    #[test]
    fn delivers_each_change_once_and_resumes_after_restart() {
        let (dir, engine) = setup(24000);
        write(&engine, 0..30);
        let mut a = processor(&engine, "a");
        assert_eq!(drain(&mut a), ids(0..30));
        assert_eq!(sorted(a.owned_leases()), live_ranges(&engine));

        // One lease per range, shaped like the SDK's.
        let docs = lease_docs(&engine);
        assert_eq!(
            docs.keys().cloned().collect::<Vec<_>>(),
            live_ranges(&engine)
        );
        let doc = &docs["0"];
        assert_eq!(doc["id"], "denorm..0");
        assert_eq!(doc["Owner"], "a");
        assert_eq!(doc["processorName"], "denorm");
        assert!(doc["FeedRange"]["min"].is_string() && doc["FeedRange"]["max"].is_string());
        assert!(
            doc["ContinuationToken"]
                .as_str()
                .unwrap()
                .contains("\"lsn\"")
        );
        assert!(DateTime::parse_from_rfc3339(doc["timestamp"].as_str().unwrap()).is_ok());

        // A crash (no release) and a restart under the same instance name resumes.
        write(&engine, 30..40);
        drop(a);
        let mut a = processor(&engine, "a");
        assert_eq!(drain(&mut a), ids(30..40));

        // A graceful stop hands the leases over at once, checkpoints included.
        write(&engine, 40..45);
        a.release_all().unwrap();
        assert!(a.owned_leases().is_empty());
        assert!(lease_docs(&engine).values().all(|d| d["Owner"].is_null()));
        drop(a);

        // Reopening the store keeps the checkpoints too.
        drop(engine);
        let engine = Engine::open(dir.path()).unwrap();
        let mut b = processor(&engine, "b");
        assert_eq!(drain(&mut b), ids(40..45));
        assert_eq!(b.owned_leases().len(), 4);
    }

    #[test]
    fn start_now_skips_earlier_changes() {
        let (_dir, engine) = setup(400);
        write(&engine, 0..5);
        let opts = ProcessorOptions {
            max_items: 5,
            ..ProcessorOptions::new("denorm", "a", DB, LEASES)
        };
        let mut p = ChangeFeedProcessor::new(&engine, DB, MONITORED, opts).unwrap();
        assert_eq!(drain(&mut p), Vec::<String>::new());
        write(&engine, 5..8);
        assert_eq!(drain(&mut p), ids(5..8));
    }

    #[test]
    fn a_failing_handler_gets_the_same_changes_again() {
        let (_dir, engine) = setup(400);
        write(&engine, 0..3);
        let mut p = processor(&engine, "a");
        let mut first = Vec::new();
        let err = p
            .run_once(|b: &LeaseBatch| {
                first.extend(b.changes.iter().map(|c| (c.id.clone(), c.lsn)));
                Err("downstream unavailable")
            })
            .unwrap_err();
        assert!(
            matches!(err, ProcessorError::Handler { ref lease_token, error: "downstream unavailable" } if lease_token == "0")
        );
        assert_eq!(first.len(), 3);
        assert!(lease_docs(&engine)["0"]["ContinuationToken"].is_null());

        let mut second = Vec::new();
        let n = p
            .run_once(|b: &LeaseBatch| -> Result<(), String> {
                second.extend(b.changes.iter().map(|c| (c.id.clone(), c.lsn)));
                Ok(())
            })
            .unwrap();
        assert_eq!((n, &second), (3, &first));
        assert_eq!(drain(&mut p), Vec::<String>::new());
    }

    #[test]
    fn two_instances_split_the_leases_evenly() {
        let (_dir, engine) = setup(24000);
        assert_eq!(live_ranges(&engine).len(), 4);
        let mut a = processor(&engine, "a");
        let mut b = processor(&engine, "b");
        let mut seen = Vec::new();
        let mut by_instance = [0, 0];
        let mut written = 0;
        for round in 0..6 {
            write(&engine, written..written + 10);
            written += 10;
            for (i, p) in [&mut a, &mut b].into_iter().enumerate() {
                by_instance[i] += p
                    .run_once(|batch: &LeaseBatch| -> Result<(), String> {
                        seen.extend(batch.changes.iter().map(|c| c.id.clone()));
                        Ok(())
                    })
                    .unwrap();
            }
            if round == 0 {
                // "a" took everything before it knew of "b"; "b" then stole one.
                assert_eq!(a.owned_leases().len(), 4);
                assert_eq!(b.owned_leases().len(), 1);
            }
        }
        // Catch up: both keep running until neither delivers.
        loop {
            let mut n = 0;
            for p in [&mut a, &mut b] {
                n += p
                    .run_once(|batch: &LeaseBatch| -> Result<(), String> {
                        seen.extend(batch.changes.iter().map(|c| c.id.clone()));
                        Ok(())
                    })
                    .unwrap();
            }
            if n == 0 {
                break;
            }
        }
        let (owned_a, owned_b) = (a.owned_leases(), b.owned_leases());
        assert_eq!((owned_a.len(), owned_b.len()), (2, 2));
        assert!(owned_a.iter().all(|l| !owned_b.contains(l)));
        assert!(
            by_instance.iter().all(|&n| n > 0),
            "both delivered: {by_instance:?}"
        );
        // Rounds ran one after another, so each handoff resumed at a checkpoint: no repeats.
        seen.sort();
        assert_eq!(seen, ids(0..written));
    }

    #[test]
    fn expired_leases_are_taken_over() {
        let (_dir, engine) = setup(24000);
        write(&engine, 0..20);
        let mut a = processor(&engine, "a");
        let mut first = Vec::new();
        a.run_once(|b: &LeaseBatch| -> Result<(), String> {
            first.extend(b.changes.iter().map(|c| c.id.clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(a.owned_leases().len(), 4);
        // "a" dies: its leases stop being renewed. Age them past the expiry.
        for (_, mut doc) in lease_docs(&engine) {
            doc["timestamp"] = stamp(Utc::now() - chrono::Duration::seconds(120)).into();
            engine
                .replace_item(DB, LEASES, doc.to_string().as_bytes(), None)
                .unwrap();
        }
        let mut b = processor(&engine, "b");
        let rest = drain(&mut b);
        assert_eq!(b.owned_leases().len(), 4);
        // "a" delivered (and checkpointed) one page per lease; "b" delivers the rest.
        assert_eq!(sorted([first, rest].concat()), ids(0..20));
        // "a" comes back and finds it owns nothing; it steals back toward an even share.
        a.run_once(|_: &LeaseBatch| -> Result<(), String> { Ok(()) })
            .unwrap();
        assert_eq!(a.owned_leases().len(), 1);
    }

    #[test]
    fn a_split_creates_child_leases_that_resume_from_the_parent() {
        let (_dir, engine) = setup(24000);
        write(&engine, 0..40);
        let mut p = processor(&engine, "a");
        assert_eq!(drain(&mut p), ids(0..40));
        // Changes before the split that were not processed yet.
        write(&engine, 40..60);
        let before = live_ranges(&engine);
        engine
            .set_throughput(DB, MONITORED, Throughput::Manual(60000))
            .unwrap();
        let after = live_ranges(&engine);
        assert_eq!(after.len(), 6);
        write(&engine, 60..80);

        assert_eq!(drain(&mut p), ids(40..80));
        let docs = lease_docs(&engine);
        assert_eq!(docs.keys().cloned().collect::<Vec<_>>(), after);
        assert!(
            before.iter().any(|r| !docs.contains_key(r)),
            "parent leases are deleted"
        );
        assert_eq!(sorted(p.owned_leases()), after);
        assert_eq!(drain(&mut p), Vec::<String>::new());
    }

    #[test]
    fn a_split_during_a_round_is_handled_on_gone() {
        let (_dir, engine) = setup(24000);
        write(&engine, 0..40);
        let mut p = processor(&engine, "a");
        let mut seen = Vec::new();
        let mut split = false;
        for _ in 0..100 {
            let n = p
                .run_once(|b: &LeaseBatch| -> Result<(), String> {
                    seen.extend(b.changes.iter().map(|c| c.id.clone()));
                    if !split {
                        // Later leases of this round find their ranges gone (410).
                        engine
                            .set_throughput(DB, MONITORED, Throughput::Manual(60000))
                            .unwrap();
                        split = true;
                    }
                    Ok(())
                })
                .unwrap();
            if n == 0 {
                break;
            }
        }
        seen.sort();
        assert_eq!(seen, ids(0..40));
        assert_eq!(
            lease_docs(&engine).keys().cloned().collect::<Vec<_>>(),
            live_ranges(&engine)
        );
    }

    #[test]
    fn all_versions_mode_delivers_every_operation() {
        let (_dir, engine) = setup(400);
        let opts = ProcessorOptions {
            mode: FeedMode::AllVersions,
            ..ProcessorOptions::new("audit", "a", DB, LEASES)
        };
        let mut p = ChangeFeedProcessor::new(&engine, DB, MONITORED, opts).unwrap();
        p.run_once(|_: &LeaseBatch| -> Result<(), String> { Ok(()) })
            .unwrap();
        write(&engine, 0..1);
        let body = json!({"id": "item0", "pk": "pk0", "n": 1});
        engine
            .replace_item(DB, MONITORED, body.to_string().as_bytes(), None)
            .unwrap();
        engine
            .delete_item(DB, MONITORED, "item0", &json!("pk0"), None)
            .unwrap();
        let mut ops = Vec::new();
        p.run_once(|b: &LeaseBatch| -> Result<(), String> {
            let docs = b.documents();
            ops.extend(docs.iter().map(|d| d["metadata"]["operationType"].clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(ops, [json!("create"), json!("replace"), json!("delete")]);
        assert_eq!(lease_docs(&engine)["0"]["mode"], "AllVersionsAndDeletes");
    }

    #[test]
    fn rejects_bad_setups() {
        let (_dir, engine) = setup(400);
        engine
            .create_container(DB, "bad-leases", ContainerSettings::new(vec!["/pk".into()]))
            .unwrap();
        let bad = |o: ProcessorOptions| {
            ChangeFeedProcessor::new(&engine, DB, MONITORED, o)
                .err()
                .map(|e| e.status)
        };
        assert_eq!(
            bad(ProcessorOptions::new("p", "a", DB, "bad-leases")),
            Some(StatusCode::BadRequest)
        );
        assert_eq!(
            bad(ProcessorOptions::new("p", "a", DB, MONITORED)),
            Some(StatusCode::BadRequest)
        );
        assert_eq!(
            bad(ProcessorOptions::new("p", "a", DB, "missing")),
            Some(StatusCode::NotFound)
        );
        assert_eq!(
            bad(ProcessorOptions::new("", "a", DB, LEASES)),
            Some(StatusCode::BadRequest)
        );
        assert_eq!(
            bad(ProcessorOptions::new("p", " ", DB, LEASES)),
            Some(StatusCode::BadRequest)
        );

        // The same processor name over another container is refused, not mixed up.
        engine
            .create_container(DB, "other", ContainerSettings::new(vec!["/pk".into()]))
            .unwrap();
        let mut p = processor(&engine, "a");
        p.run_once(|_: &LeaseBatch| -> Result<(), String> { Ok(()) })
            .unwrap();
        let mut q = ChangeFeedProcessor::new(&engine, DB, "other", options("a")).unwrap();
        let err = q
            .run_once(|_: &LeaseBatch| -> Result<(), String> { Ok(()) })
            .unwrap_err();
        assert!(
            matches!(err, ProcessorError::Store(ref e) if e.status == StatusCode::Conflict),
            "{err}"
        );
    }
}
