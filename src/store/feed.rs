//! The change feed: a log per physical partition, read in latest-version or all-versions
//! mode, resumable with continuation tokens that survive splits.
//!
//! Every write appends one event to its range's log (`cid ‖ range ‖ LSN`) in the write's own
//! transaction. A split leaves the parent's log in place and starts the children's LSNs where
//! the parent's ended, so the history of a live range is its ancestors' logs filtered to its
//! EPK bounds followed by its own log — and one LSN is a position in that whole chain. A
//! continuation token records, per EPK range, the last LSN delivered; after a split each
//! child finds the token entry that covers it and resumes from that LSN.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::catalog::ContainerDef;
use super::codec::{Reader, Writer};
use super::epk::Epk;
use super::item;
use super::keys::{self, RangeId};
use super::ranges::PkRange;
use super::stats::{OpKind, RangeStats};
use super::{RoTxn, Store};
use crate::charge;
use crate::error::{Error, Result, StatusCode, substatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FeedOp {
    Create,
    Replace,
    Delete,
}

impl FeedOp {
    pub fn name(self) -> &'static str {
        match self {
            FeedOp::Create => "create",
            FeedOp::Replace => "replace",
            FeedOp::Delete => "delete",
        }
    }
}

/// One logged change.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEvent {
    pub op: FeedOp,
    pub ttl_expired: bool,
    /// Conflict-resolved timestamp (Unix seconds), the `_ts` of the change.
    pub crts: i64,
    /// Container-wide commit sequence: orders changes across ranges.
    pub seq: u64,
    /// LSN of the version this change replaced or deleted; 0 for creates.
    pub previous_image_lsn: u64,
    pub epk: Vec<u8>,
    pub id: String,
    /// Partition key value in wire form (JSON array).
    pub pk: Vec<u8>,
    /// The new image (absent for deletes). While this version is the item's current one the
    /// log does not copy it (`image_in_item`): readers take it from the item record, and a
    /// write that supersedes the version moves the image here. Each image is stored once.
    /// Shared, not copied, as it travels out to readers.
    pub current: Option<Arc<[u8]>>,
    pub image_in_item: bool,
    /// The prior image, when the container keeps previous images.
    pub previous: Option<Arc<[u8]>>,
}

impl FeedEvent {
    pub fn encode(&self) -> Vec<u8> {
        let size = 64 + self.epk.len() + self.id.len() + self.pk.len();
        let size = size
            + self.current.as_ref().map_or(0, |c| c.len())
            + self.previous.as_ref().map_or(0, |p| p.len());
        let mut w = Writer::with_capacity(size);
        let flags = (self.ttl_expired as u8)
            | ((self.current.is_some() as u8) << 1)
            | ((self.previous.is_some() as u8) << 2)
            | ((self.image_in_item as u8) << 3);
        w.u8(self.op as u8)
            .u8(flags)
            .i64(self.crts)
            .u64(self.seq)
            .u64(self.previous_image_lsn);
        w.bytes(&self.epk).bytes(self.id.as_bytes()).bytes(&self.pk);
        w.bytes(self.current.as_deref().unwrap_or_default());
        w.bytes(self.previous.as_deref().unwrap_or_default());
        w.into_inner()
    }

    pub fn decode(bytes: &[u8]) -> Option<FeedEvent> {
        FeedRecord::parse(bytes).map(|r| r.to_event())
    }
}

/// A logged change read in place: what a reader filters on before it copies anything.
pub(crate) struct FeedRecord<'a> {
    pub op: FeedOp,
    pub ttl_expired: bool,
    pub crts: i64,
    pub seq: u64,
    pub previous_image_lsn: u64,
    pub epk: &'a [u8],
    pub id: &'a str,
    pub pk: &'a [u8],
    pub current: Option<&'a [u8]>,
    pub image_in_item: bool,
    pub previous: Option<&'a [u8]>,
}

impl<'a> FeedRecord<'a> {
    pub fn parse(bytes: &'a [u8]) -> Option<FeedRecord<'a>> {
        let mut r = Reader::new(bytes);
        let op = match r.u8()? {
            0 => FeedOp::Create,
            1 => FeedOp::Replace,
            2 => FeedOp::Delete,
            _ => return None,
        };
        let flags = r.u8()?;
        let crts = r.i64()?;
        let seq = r.u64()?;
        let previous_image_lsn = r.u64()?;
        let epk = r.bytes()?;
        let id = std::str::from_utf8(r.bytes()?).ok()?;
        let pk = r.bytes()?;
        let current = r.bytes()?;
        let previous = r.bytes()?;
        Some(FeedRecord {
            op,
            ttl_expired: flags & 1 != 0,
            crts,
            seq,
            previous_image_lsn,
            epk,
            id,
            pk,
            current: (flags & 2 != 0).then_some(current),
            previous: (flags & 4 != 0).then_some(previous),
            image_in_item: flags & 8 != 0,
        })
    }

    pub fn to_event(&self) -> FeedEvent {
        FeedEvent {
            op: self.op,
            ttl_expired: self.ttl_expired,
            crts: self.crts,
            seq: self.seq,
            previous_image_lsn: self.previous_image_lsn,
            epk: self.epk.to_vec(),
            id: self.id.to_string(),
            pk: self.pk.to_vec(),
            current: self.current.map(Arc::from),
            image_in_item: self.image_in_item,
            previous: self.previous.map(Arc::from),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedMode {
    /// Creates and updates, each item once at its newest version, no deletes.
    #[default]
    LatestVersion,
    /// Every create, replace and delete (TTL expiries flagged), in order.
    AllVersions,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FeedStart {
    Beginning,
    Now,
    /// Changes at or after this Unix second.
    Time(i64),
    Continuation(String),
}

#[derive(Debug, Clone)]
pub struct FeedRequest {
    pub start: FeedStart,
    pub mode: FeedMode,
    /// Read one physical partition instead of the whole container.
    pub range: Option<RangeId>,
    /// Read only the changes whose EPK lies in `[min, max)`: a feed range smaller than a
    /// physical partition (the service's `x-ms-start-epk` / `x-ms-end-epk`).
    pub span: Option<(Epk, Epk)>,
    pub max_items: usize,
}

impl Default for FeedRequest {
    fn default() -> FeedRequest {
        FeedRequest {
            start: FeedStart::Beginning,
            mode: FeedMode::LatestVersion,
            range: None,
            span: None,
            max_items: 100,
        }
    }
}

/// A change as delivered, with where it came from: the logged change less what only
/// readers of the log need (its EPK, whether its image is the item's).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedChange {
    pub range: RangeId,
    pub lsn: u64,
    pub op: FeedOp,
    pub ttl_expired: bool,
    /// Conflict-resolved timestamp (Unix seconds), the `_ts` of the change.
    pub crts: i64,
    /// Container-wide commit sequence: orders changes across ranges.
    pub seq: u64,
    /// LSN of the version this change replaced or deleted; 0 for creates.
    pub previous_image_lsn: u64,
    pub id: String,
    /// Partition key value in wire form (JSON array).
    pub pk: Vec<u8>,
    /// The new image (absent for deletes).
    pub current: Option<Arc<[u8]>>,
    /// The prior image, when the container keeps previous images.
    pub previous: Option<Arc<[u8]>>,
}

impl FeedChange {
    /// The change `record` logged at `lsn` in `range`, with its current image.
    fn of(range: RangeId, lsn: u64, record: &FeedRecord, current: Option<Arc<[u8]>>) -> Self {
        FeedChange {
            range,
            lsn,
            op: record.op,
            ttl_expired: record.ttl_expired,
            crts: record.crts,
            seq: record.seq,
            previous_image_lsn: record.previous_image_lsn,
            id: record.id.to_string(),
            pk: record.pk.to_vec(),
            current,
            previous: record.previous.map(Arc::from),
        }
    }

    /// Bytes of the images delivered.
    pub fn size(&self) -> usize {
        self.current.as_ref().map_or(0, |c| c.len()) + self.previous.as_ref().map_or(0, |p| p.len())
    }
}

/// A page of changes and the token to continue after it.
#[derive(Debug, Clone)]
pub struct FeedPage {
    pub changes: Vec<FeedChange>,
    pub continuation: String,
    pub request_charge: f64,
    /// Ranges read for this page.
    pub ranges: Vec<RangeId>,
}

/// Continuation: per EPK range, the last LSN delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedToken {
    #[serde(rename = "v")]
    pub version: u8,
    pub rid: String,
    pub mode: String,
    pub ranges: Vec<TokenRange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRange {
    pub min: String,
    pub max: String,
    pub lsn: u64,
}

impl FeedToken {
    pub fn parse(s: &str, def: &ContainerDef) -> Result<FeedToken> {
        let token: FeedToken = serde_json::from_str(s).map_err(|e| {
            Error::bad_request(format!(
                "the continuation token is not one this store issued: {e}"
            ))
        })?;
        if token.rid != item::container_rid(def) {
            return Err(Error::bad_request(format!(
                "the continuation token belongs to another container, not {}",
                def.full_name()
            )));
        }
        Ok(token)
    }

    /// Where a live range resumes: the entry whose EPK range covers it.
    fn position(&self, range: &PkRange) -> Option<u64> {
        self.ranges.iter().find_map(|t| {
            let min = Epk::from_hex(&t.min)?;
            let max = Epk::from_hex(&t.max)?;
            // After a split the live range is a part of the range the token recorded.
            (min <= range.min_inclusive && range.max_exclusive <= max).then_some(t.lsn)
        })
    }
}

/// The live ranges a request reads: the one it names, or all of them. A range that was
/// split is gone (410, naming its children); one that never existed is not found (404).
fn feed_targets(def: &ContainerDef, range: Option<RangeId>) -> Result<Vec<&PkRange>> {
    let Some(id) = range else {
        return Ok(def.ranges.iter().collect());
    };
    if let Some(r) = def.range(id) {
        return Ok(vec![r]);
    }
    let children: Vec<String> = def
        .ranges
        .iter()
        .filter(|r| r.parents.contains(&id))
        .map(|r| r.id.to_string())
        .collect();
    if children.is_empty() {
        return Err(Error::not_found(format!(
            "container {} has no partition key range {id}",
            def.full_name()
        )));
    }
    Err(Error::new(
        StatusCode::Gone,
        format!(
            "partition key range {id} is gone: it was split into {}; read those ranges or \
             resume with a continuation token",
            children.join(", ")
        ),
    )
    .with_substatus(substatus::PARTITION_KEY_RANGE_GONE))
}

/// The request's continuation token, if it resumes from one; 400 when the token was issued
/// for the other feed mode.
fn continuation(def: &ContainerDef, req: &FeedRequest) -> Result<Option<FeedToken>> {
    let FeedStart::Continuation(s) = &req.start else {
        return Ok(None);
    };
    let token = FeedToken::parse(s, def)?;
    if token.mode != mode_name(req.mode) {
        return Err(Error::bad_request(format!(
            "the continuation token was issued for the {} feed; read it in that mode",
            if token.mode == "all" {
                "all-versions"
            } else {
                "latest-version"
            }
        )));
    }
    Ok(Some(token))
}

/// Merges the ranges' logs in commit order into a page of at most `max_items` changes,
/// reading each log only as far as the page needs.
fn merge_logs<'t>(
    logs: &mut [RangeLog<'t, '_>],
    txn: &'t RoTxn,
    cx: &ReadContext,
    max_items: usize,
) -> Result<Vec<FeedChange>> {
    let mut changes = Vec::with_capacity(max_items.min(1024));
    while changes.len() < max_items {
        let next = logs
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.head.as_ref().map(|h| (h.seq, i)))
            .min();
        let Some((_, i)) = next else { break };
        let log = &mut logs[i];
        if let Some(change) = log.head.take() {
            log.taken_to = Some(change.lsn);
            log.bytes += change.size();
            changes.push(change);
        }
        log.advance(txn, cx)?;
    }
    Ok(changes)
}

fn mode_name(mode: FeedMode) -> &'static str {
    match mode {
        FeedMode::LatestVersion => "latest",
        FeedMode::AllVersions => "all",
    }
}

/// What every range log of one request filters by.
struct ReadContext<'a> {
    store: &'a Store,
    def: &'a ContainerDef,
    mode: FeedMode,
    since: Option<i64>,
    now: i64,
}

/// A lazy reader of one live range's history: its ancestors' logs (filtered to its EPK
/// bounds) then its own, yielding deliverable changes in LSN order.
struct RangeLog<'t, 'd> {
    range: &'d PkRange,
    /// Logs still to open, oldest ancestor first.
    chain: std::vec::IntoIter<RangeId>,
    iter: Option<super::DbRange<'t>>,
    /// Position before this page.
    from: u64,
    /// Last LSN scanned (delivered or skipped).
    scanned_to: u64,
    /// Last LSN delivered in this page.
    taken_to: Option<u64>,
    /// The next deliverable change, read ahead for the merge.
    head: Option<FeedChange>,
    bytes: usize,
    /// Room for the `items` key of each current image read.
    key: Vec<u8>,
    /// Where the last current image was found.
    items: ItemFollower<'t>,
    /// The log is read in LSN order, which is its order in the file.
    ahead: super::readahead::ReadAhead,
}

impl<'t, 'd> RangeLog<'t, 'd> {
    fn new(range: &'d PkRange, from: u64) -> RangeLog<'t, 'd> {
        let mut chain = range.parents.clone();
        chain.push(range.id);
        RangeLog {
            range,
            chain: chain.into_iter(),
            iter: None,
            from,
            scanned_to: from,
            taken_to: None,
            head: None,
            bytes: 0,
            key: Vec::new(),
            items: ItemFollower::default(),
            ahead: Default::default(),
        }
    }

    /// A log that delivers nothing (reads that start from "now").
    fn at_end(range: &'d PkRange, from: u64) -> RangeLog<'t, 'd> {
        let mut log = RangeLog::new(range, from);
        log.chain = Vec::new().into_iter();
        log
    }

    /// Reads ahead to the next deliverable change.
    fn advance(&mut self, txn: &'t RoTxn, cx: &ReadContext) -> Result<()> {
        self.head = None;
        loop {
            let entry = match self.iter.as_mut().and_then(Iterator::next) {
                Some(entry) => entry?,
                None => {
                    let Some(log) = self.chain.next() else {
                        return Ok(());
                    };
                    let start = keys::feed(cx.def.rid, log, self.scanned_to.saturating_add(1));
                    let end = keys::feed(cx.def.rid, log, u64::MAX);
                    // The bounds are copied into the iterator's cursor position on creation.
                    self.iter = Some(cx.store.feed.range(txn, &keys::closed(&start, &end))?);
                    continue;
                }
            };
            let (k, v) = entry;
            self.ahead.touch(v);
            let lsn = keys::feed_lsn(k).unwrap_or(0);
            let record =
                FeedRecord::parse(v).ok_or_else(|| Error::corrupt("change feed record"))?;
            if !self.range.contains(record.epk) {
                continue;
            }
            self.scanned_to = lsn;
            if cx.since.is_some_and(|t| record.crts < t) {
                continue;
            }
            let latest = cx.mode == FeedMode::LatestVersion;
            let current = if record.image_in_item {
                // This version is still current: its image is the item itself. Latest-version
                // mode also hides an item that has expired but is not purged yet.
                let live_at = latest.then_some(cx.now);
                keys::item_into(&mut self.key, cx.def.rid, record.epk, record.id);
                let stored = self.items.get(txn, cx.store, &self.key)?;
                match current_image(stored, lsn, live_at)? {
                    Some(json) => Some(json),
                    None => continue,
                }
            } else if latest {
                // A delete, or a version a later write superseded.
                continue;
            } else {
                record.current.map(Arc::from)
            };
            self.head = Some(FeedChange::of(self.range.id, lsn, &record, current));
            return Ok(());
        }
    }

    /// Where the next page resumes in this range.
    fn position(&self) -> u64 {
        match (&self.head, self.taken_to) {
            // Read to the end: everything scanned is done with.
            (None, _) => self.scanned_to,
            // A change was read ahead but not delivered: resume before it.
            (Some(_), Some(taken)) => taken,
            (Some(_), None) => self.from,
        }
    }
}

impl Store {
    /// Current LSN of every live range of a container.
    pub fn range_lsn(&self, txn: &RoTxn, def: &ContainerDef, range: RangeId) -> Result<u64> {
        Ok(self
            .range_stats
            .get(txn, &keys::range(def.rid, range))?
            .and_then(RangeStats::decode)
            .map(|s| s.lsn)
            .unwrap_or(0))
    }

    /// Reads one page of the feed. Pages across several ranges are merged in commit order.
    pub fn read_feed(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        req: &FeedRequest,
    ) -> Result<FeedPage> {
        // The ranges to read, cut down to the request's span. A span's log reads the whole
        // range's records but delivers only the span's, and its continuation records the
        // span's bounds, which a later request for the same span (or, after a split, for a
        // part of it) resumes from.
        let targets: Vec<PkRange> = feed_targets(def, req.range)?
            .into_iter()
            .filter_map(|r| match &req.span {
                Some((min, max)) => r.narrowed(min, max),
                None => Some(r.clone()),
            })
            .collect();
        let targets: Vec<&PkRange> = targets.iter().collect();
        let token = continuation(def, req)?;
        let cx = ReadContext {
            store: self,
            def,
            mode: req.mode,
            since: match req.start {
                FeedStart::Time(t) => Some(t),
                _ => None,
            },
            now: super::now_secs(),
        };
        let mut logs = self.open_logs(txn, def, &req.start, token.as_ref(), targets)?;
        for log in logs.iter_mut() {
            log.advance(txn, &cx)?;
        }
        let changes = merge_logs(&mut logs, txn, &cx, req.max_items.max(1))?;
        self.finish_page(def, req.mode, &logs, changes)
    }

    /// A log for each range to read, placed where the request starts: at the range's end
    /// (`Now`), where the continuation left it (ranges it does not cover are skipped), or
    /// at the beginning.
    fn open_logs<'t, 'd>(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        start: &FeedStart,
        token: Option<&FeedToken>,
        targets: Vec<&'d PkRange>,
    ) -> Result<Vec<RangeLog<'t, 'd>>> {
        let mut logs = Vec::with_capacity(targets.len());
        for range in targets {
            let log = match (start, token) {
                (FeedStart::Now, _) => RangeLog::at_end(range, self.range_lsn(txn, def, range.id)?),
                (_, Some(token)) => match token.position(range) {
                    Some(lsn) => RangeLog::new(range, lsn),
                    None => continue, // the token does not cover this range
                },
                _ => RangeLog::new(range, 0),
            };
            logs.push(log);
        }
        Ok(logs)
    }

    /// Charges and meters each range read for a page, and writes the continuation: where
    /// each range resumes.
    fn finish_page(
        &self,
        def: &ContainerDef,
        mode: FeedMode,
        logs: &[RangeLog],
        changes: Vec<FeedChange>,
    ) -> Result<FeedPage> {
        let mut token_ranges = Vec::with_capacity(logs.len());
        let mut charge_total = 0.0;
        let mut ranges_read = Vec::with_capacity(logs.len());
        for log in logs {
            let ru = charge::feed_range_read(log.bytes);
            charge_total += ru;
            self.record_read(def.rid, log.range.id, None, OpKind::Feed, ru);
            ranges_read.push(log.range.id);
            token_ranges.push(TokenRange {
                min: log.range.min_inclusive.to_hex(),
                max: log.range.max_exclusive.to_hex(),
                lsn: log.position(),
            });
        }
        let token = FeedToken {
            version: 1,
            rid: item::container_rid(def),
            mode: mode_name(mode).to_string(),
            ranges: token_ranges,
        };
        let continuation = serde_json::to_string(&token)
            .map_err(|e| Error::internal(format!("cannot encode continuation: {e}")))?;
        Ok(FeedPage {
            changes,
            continuation,
            request_charge: charge::round(charge_total),
            ranges: ranges_read,
        })
    }

    /// The container-wide change sequence: followers poll it and read only when it moves.
    pub fn feed_head(&self, txn: &RoTxn, def: &ContainerDef) -> Result<u64> {
        Ok(self
            .container_stats
            .get(txn, &keys::container_prefix(def.rid))?
            .and_then(super::stats::ContainerStats::decode)
            .map(|s| s.seq)
            .unwrap_or(0))
    }
}

/// The item's JSON if the version logged at `lsn` is still its current one (and, when
/// `live_at` is given, not expired at that second), from its stored `record`.
fn current_image(
    record: Option<&[u8]>,
    lsn: u64,
    live_at: Option<i64>,
) -> Result<Option<Arc<[u8]>>> {
    let Some(record) = record else {
        return Ok(None);
    };
    let (header, json) = item::decode_record(record)?;
    let expired = live_at.is_some_and(|now| header.is_expired(now));
    Ok((header.lsn == lsn && !expired).then(|| Arc::from(json)))
}

/// How many items past the last one found a lookup steps before it seeks instead.
const FOLLOW_STEPS: usize = 8;

/// Looks up the items a range's events name, following them through the `items` tree: a
/// lookup first steps forward from the last item found, and seeks only when its item is
/// behind that one or more than [`FOLLOW_STEPS`] ahead. Events written in key order — an
/// import's, a bulk load's — name consecutive items, and reading their images becomes a
/// walk through the tree instead of a descent from its root for each (which costs the
/// more the larger the container, as the descent's pages fall out of the caches).
#[derive(Default)]
struct ItemFollower<'t> {
    iter: Option<super::DbRange<'t>>,
    /// The entry the iterator stands on: the first not yet passed by a lookup.
    at: Option<(&'t [u8], &'t [u8])>,
    /// Events of one range name items across the container's key space, but a large
    /// share of them (an import's) in key order: read ahead of the walk.
    ahead: super::readahead::ReadAhead,
}

impl<'t> ItemFollower<'t> {
    /// The stored record of the item at `key`, if there is one.
    fn get(&mut self, txn: &'t RoTxn, store: &Store, key: &[u8]) -> Result<Option<&'t [u8]>> {
        if self.at.is_some_and(|(k, _)| k <= key) {
            for _ in 0..FOLLOW_STEPS {
                match self.at {
                    Some((k, v)) if k == key => return Ok(Some(v)),
                    Some((k, _)) if k > key => return Ok(None),
                    Some(_) => self.step()?,
                    None => break,
                }
            }
        }
        let bounds = (std::ops::Bound::Included(key), std::ops::Bound::Unbounded);
        self.iter = Some(store.items.range(txn, &bounds)?);
        self.step()?;
        Ok(self.at.filter(|(k, _)| *k == key).map(|(_, v)| v))
    }

    fn step(&mut self) -> Result<()> {
        self.at = match self.iter.as_mut().and_then(Iterator::next) {
            Some(entry) => Some(entry?),
            None => None,
        };
        if let Some((_, v)) = self.at {
            self.ahead.touch(v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip() {
        let e = FeedEvent {
            op: FeedOp::Replace,
            ttl_expired: false,
            crts: 1_700_000_000,
            seq: 12,
            previous_image_lsn: 3,
            epk: vec![1; 16],
            id: "a".into(),
            pk: b"[\"x\"]".to_vec(),
            current: Some(Arc::from(&b"{}"[..])),
            previous: None,
            image_in_item: false,
        };
        assert_eq!(FeedEvent::decode(&e.encode()), Some(e.clone()));
        let d = FeedEvent {
            op: FeedOp::Delete,
            current: None,
            ttl_expired: true,
            previous: Some(Arc::from(&b"{}"[..])),
            ..e
        };
        assert_eq!(FeedEvent::decode(&d.encode()), Some(d));
        assert_eq!(FeedEvent::decode(&[9, 0]), None);
    }
}
