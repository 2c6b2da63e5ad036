//! Metering: RU consumed per physical partition per second, 429 throttling, and the
//! accounting of reads.
//!
//! Reads must stay read-only (a commit per point read would cost more than the read), so
//! their RU and operation counts collect in [`Pending`] and are flushed to the store by the
//! engine's background thread every few hundred milliseconds — another process sees a read
//! workload with that delay. Writes add their RU there too once they commit, which keeps
//! the meter's pages out of every write's commit; their operation counts and sizes stay in
//! the write's own transaction. History older than [`RETENTION_SECS`] is pruned on flush.

use std::collections::HashMap;

use super::codec::{Reader, Writer};
use super::epk::Epk;
use super::keys::{self, ContainerRid, RangeId};
use super::stats::{ContainerStats, Counters, LogicalStats, OpKind, RangeStats};
use super::{RoTxn, Store};
use crate::error::{Error, Result, StatusCode, substatus};

/// Per-second history kept in the store (the issue asks for at least 10 minutes).
pub const RETENTION_SECS: u64 = 15 * 60;

/// One second of one range.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeterSample {
    pub second: u64,
    pub ru: f64,
    pub requests: u64,
    pub throttled: u64,
}

impl MeterSample {
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(24);
        w.f64(self.ru).u64(self.requests).u64(self.throttled);
        w.into_inner()
    }

    fn decode(second: u64, bytes: &[u8]) -> Option<MeterSample> {
        let mut r = Reader::new(bytes);
        Some(MeterSample {
            second,
            ru: r.f64()?,
            requests: r.u64()?,
            throttled: r.u64()?,
        })
    }

    fn add(&mut self, other: &MeterSample) {
        self.ru += other.ru;
        self.requests += other.requests;
        self.throttled += other.throttled;
    }
}

/// Small internal keys: a cheap hasher.
type Fold = std::hash::BuildHasherDefault<super::index::FoldHasher>;

/// Read-side accounting not yet written to the store.
#[derive(Default)]
pub struct Pending {
    /// (container, range, EPK) → RU and operation counts of requests on one logical
    /// partition.
    logical: HashMap<(ContainerRid, RangeId, Epk), Counters, Fold>,
    /// (container, range) → the same for requests on no single logical partition (query
    /// pages, feed pages): a key without an EPK to hash and compare, as every query page
    /// records one per range it read.
    ranges: HashMap<(ContainerRid, RangeId), Counters, Fold>,
    /// (container, range, second) → meter sample.
    samples: HashMap<(ContainerRid, RangeId, u64), MeterSample, Fold>,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.logical.is_empty() && self.ranges.is_empty() && self.samples.is_empty()
    }

    /// Adds `ru` and `requests` to one range's second.
    fn add_sample(&mut self, at: (ContainerRid, RangeId, u64), ru: f64, requests: u64) {
        let s = self.samples.entry(at).or_default();
        s.ru += ru;
        s.requests += requests;
    }
}

/// The current second as a meter key.
pub fn current_second() -> (u64, u64) {
    let now = chrono::Utc::now();
    let ms = now.timestamp_subsec_millis() as u64;
    (now.timestamp().max(0) as u64, ms)
}

impl Store {
    /// Records a read-side request (point read, query page, feed page).
    pub fn record_read(
        &self,
        cid: ContainerRid,
        range: RangeId,
        epk: Option<&Epk>,
        op: OpKind,
        ru: f64,
    ) {
        let (second, _) = current_second();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let counters = match epk {
            Some(epk) => pending
                .logical
                .entry((cid, range, epk.clone()))
                .or_default(),
            None => pending.ranges.entry((cid, range)).or_default(),
        };
        counters.record(op, ru);
        pending.add_sample((cid, range, second), ru, 1);
    }

    /// Records the per-range parts of one query page (one lock, one clock read).
    pub fn record_reads(&self, cid: ContainerRid, reads: &[(RangeId, f64)], op: OpKind) {
        let (second, _) = current_second();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for &(range, ru) in reads {
            pending
                .ranges
                .entry((cid, range))
                .or_default()
                .record(op, ru);
            pending.add_sample((cid, range, second), ru, 1);
        }
    }

    /// Records a throttled (429) request.
    pub fn record_throttle(&self, cid: ContainerRid, range: RangeId) {
        let (second, _) = current_second();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending
            .samples
            .entry((cid, range, second))
            .or_default()
            .throttled += 1;
    }

    /// RU already consumed by `range` in `second`: stored plus not yet flushed.
    pub fn usage(
        &self,
        txn: &RoTxn,
        cid: ContainerRid,
        range: RangeId,
        second: u64,
    ) -> Result<f64> {
        let stored = match self.meter.get(txn, &keys::meter(cid, range, second))? {
            Some(v) => MeterSample::decode(second, v).map(|s| s.ru).unwrap_or(0.0),
            None => 0.0,
        };
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let unflushed = pending
            .samples
            .get(&(cid, range, second))
            .map(|s| s.ru)
            .unwrap_or(0.0);
        Ok(stored + unflushed)
    }

    /// Fails with 429 (substatus 3200) when `charge` would exceed the range's budget for the
    /// current second; `already` is RU the caller's open transaction has consumed but not
    /// yet written. The throttle is recorded either way.
    pub fn check_budget(
        &self,
        txn: &RoTxn,
        container: &super::catalog::ContainerDef,
        range: RangeId,
        already: f64,
        charge: f64,
    ) -> Result<()> {
        if !container.enforce_throughput {
            return Ok(());
        }
        let (second, ms) = current_second();
        let used = self.usage(txn, container.rid, range, second)? + already;
        let budget = container.range_budget();
        // A request costlier than a whole second's budget still runs in an idle second;
        // otherwise it could never run at all.
        if used + charge <= budget || used == 0.0 {
            return Ok(());
        }
        self.record_throttle(container.rid, range);
        let mut err = Error::new(StatusCode::TooManyRequests,
            format!(
                "request rate is large: partition {range} of {} has used {used:.2} of its {budget:.0} \
                 RU this second and this request needs {charge:.2}; retry after the interval",
                container.full_name()
            ),
        )
        .with_substatus(substatus::RU_BUDGET_EXCEEDED);
        err.retry_after_ms = Some(1000 - ms.min(999));
        Err(err)
    }

    /// Adds RU consumed by the writes of a committed transaction to the current second:
    /// `usage` holds RU and requests per range. Like reads, they reach the stored meter with the
    /// next flush — a write transaction that also rewrote its second's meter record would
    /// carry that page (and its tree's) into every commit — while [`Store::usage`], which
    /// throttling consults, counts them at once.
    pub(crate) fn record_write_usage(
        &self,
        cid: ContainerRid,
        usage: &HashMap<RangeId, (f64, u64)>,
    ) {
        let (second, _) = current_second();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for (&range, &(ru, requests)) in usage {
            pending.add_sample((cid, range, second), ru, requests);
        }
    }

    /// Per-second samples of one range from `since` on, oldest first.
    pub fn meter_history(
        &self,
        txn: &RoTxn,
        cid: ContainerRid,
        range: RangeId,
        since: u64,
    ) -> Result<Vec<MeterSample>> {
        let start = keys::meter(cid, range, since);
        let end = keys::meter(cid, range, u64::MAX);
        let mut out = Vec::new();
        for entry in self.meter.range(txn, &keys::closed(&start, &end))? {
            let (k, v) = entry?;
            let second = keys::feed_lsn(k).unwrap_or(0);
            if let Some(s) = MeterSample::decode(second, v) {
                out.push(s);
            }
        }
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for (&(c, r, second), s) in pending.samples.iter() {
            if c == cid && r == range && second >= since {
                match out.iter_mut().find(|x| x.second == second) {
                    Some(x) => x.add(s),
                    None => out.push(MeterSample { second, ..*s }),
                }
            }
        }
        out.sort_by_key(|s| s.second);
        Ok(out)
    }

    /// Writes pending accounting (reads, and the meter usage of writes) to the store in one
    /// transaction and prunes old meter history. Returns whether anything was written.
    pub fn flush_pending(&self) -> Result<bool> {
        let _one_at_a_time = self.flushing.lock().unwrap_or_else(|e| e.into_inner());
        let taken = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            if pending.is_empty() {
                return Ok(false);
            }
            std::mem::take(&mut *pending)
        };
        let mut txn = self.write_txn()?;
        let mut range_acc: HashMap<(ContainerRid, RangeId), Counters> = HashMap::new();
        let mut container_acc: HashMap<ContainerRid, Counters> = HashMap::new();
        for (&(cid, range), counters) in &taken.ranges {
            range_acc.entry((cid, range)).or_default().add(counters);
            container_acc.entry(cid).or_default().add(counters);
        }
        for ((cid, range, epk), counters) in &taken.logical {
            range_acc.entry((*cid, *range)).or_default().add(counters);
            container_acc.entry(*cid).or_default().add(counters);
            // Only logical partitions that exist get read statistics (a 404 creates none).
            let key = keys::logical(*cid, epk);
            let Some(mut stats) = self.logical.get(&txn, &key)?.and_then(LogicalStats::decode)
            else {
                continue;
            };
            stats.counters.add_activity(counters);
            self.logical.put(&mut txn, &key, &stats.encode())?;
        }
        for ((cid, range), counters) in range_acc {
            let key = keys::range(cid, range);
            // A range split or a container deleted since the read: nothing to attribute to.
            let Some(mut stats) = self
                .range_stats
                .get(&txn, &key)?
                .and_then(RangeStats::decode)
            else {
                continue;
            };
            stats.counters.add_activity(&counters);
            self.range_stats.put(&mut txn, &key, &stats.encode())?;
        }
        for (cid, counters) in container_acc {
            let key = keys::container_prefix(cid);
            let Some(mut stats) = self
                .container_stats
                .get(&txn, &key)?
                .and_then(ContainerStats::decode)
            else {
                continue;
            };
            stats.counters.add_activity(&counters);
            self.container_stats.put(&mut txn, &key, &stats.encode())?;
        }
        let (now, _) = current_second();
        let mut seen = Vec::new();
        for (&(cid, range, second), s) in &taken.samples {
            if self
                .container_stats
                .get(&txn, &keys::container_prefix(cid))?
                .is_none()
            {
                continue;
            }
            let key = keys::meter(cid, range, second);
            let mut sample = match self.meter.get(&txn, &key)? {
                Some(v) => MeterSample::decode(second, v).unwrap_or_default(),
                None => MeterSample::default(),
            };
            sample.add(s);
            self.meter.put(&mut txn, &key, &sample.encode())?;
            if !seen.contains(&(cid, range)) {
                seen.push((cid, range));
            }
        }
        for (cid, range) in seen {
            let start = keys::meter(cid, range, 0);
            let end = keys::meter(cid, range, now.saturating_sub(RETENTION_SECS));
            self.meter
                .delete_range(&mut txn, &keys::half_open(&start, &end))?;
        }
        txn.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip() {
        let s = MeterSample {
            second: 5,
            ru: 2.5,
            requests: 3,
            throttled: 1,
        };
        assert_eq!(MeterSample::decode(5, &s.encode()), Some(s));
    }
}
