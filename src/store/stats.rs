//! Statistics kept per container, per physical partition and per logical partition.
//!
//! They are maintained in the same write transaction as the items they describe, so a count
//! or a size is always exact and never needs a scan. Reads (which do not open write
//! transactions) reach them through the meter's short flush interval instead.

use serde::Serialize;

use super::codec::{Reader, Writer};

/// Kinds of operation counted in statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Create = 0,
    Read = 1,
    Replace = 2,
    Upsert = 3,
    Delete = 4,
    Query = 5,
    Feed = 6,
    Patch = 7,
    Batch = 8,
    Expire = 9,
}

pub const OP_KINDS: usize = 10;

impl OpKind {
    pub const ALL: [OpKind; OP_KINDS] = [
        OpKind::Create,
        OpKind::Read,
        OpKind::Replace,
        OpKind::Upsert,
        OpKind::Delete,
        OpKind::Query,
        OpKind::Feed,
        OpKind::Patch,
        OpKind::Batch,
        OpKind::Expire,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::Read => "read",
            OpKind::Replace => "replace",
            OpKind::Upsert => "upsert",
            OpKind::Delete => "delete",
            OpKind::Query => "query",
            OpKind::Feed => "feed",
            OpKind::Patch => "patch",
            OpKind::Batch => "batch",
            OpKind::Expire => "expire",
        }
    }
}

/// Counters shared by all three levels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub items: u64,
    pub bytes: u64,
    pub ru: f64,
    pub ops: [u64; OP_KINDS],
}

impl Counters {
    fn write(&self, w: &mut Writer) {
        w.u64(self.items).u64(self.bytes).f64(self.ru);
        for op in self.ops {
            w.u64(op);
        }
    }

    fn read(r: &mut Reader) -> Option<Counters> {
        let mut c = Counters {
            items: r.u64()?,
            bytes: r.u64()?,
            ru: r.f64()?,
            ops: [0; OP_KINDS],
        };
        for op in c.ops.iter_mut() {
            *op = r.u64()?;
        }
        Some(c)
    }

    pub fn record(&mut self, op: OpKind, ru: f64) {
        self.ops[op as usize] += 1;
        self.ru += ru;
    }

    pub fn add(&mut self, other: &Counters) {
        self.items += other.items;
        self.bytes += other.bytes;
        self.add_activity(other);
    }

    /// Adds another counter's RU and operation counts (activity), leaving sizes alone.
    pub fn add_activity(&mut self, other: &Counters) {
        self.ru += other.ru;
        for (a, b) in self.ops.iter_mut().zip(other.ops) {
            *a += b;
        }
    }

    /// Applies a size change: `items` and `bytes` deltas may be negative.
    pub fn resize(&mut self, items: i64, bytes: i64) {
        self.items = self.items.saturating_add_signed(items);
        self.bytes = self.bytes.saturating_add_signed(bytes);
    }

    pub fn ops_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for op in OpKind::ALL {
            let n = self.ops[op as usize];
            if n > 0 {
                m.insert(op.name().to_string(), n.into());
            }
        }
        serde_json::Value::Object(m)
    }
}

/// Container record: counters plus the sequences the container owns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContainerStats {
    pub counters: Counters,
    /// Container-wide change sequence: the feed head followers poll, also used for etags.
    pub seq: u64,
    /// Last document number handed out (the document part of `_rid`).
    pub doc_counter: u64,
    /// Latest `_ts` written, so timestamps never go backwards within a container.
    pub last_ts: i64,
}

impl ContainerStats {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(128);
        w.u64(self.seq).u64(self.doc_counter).i64(self.last_ts);
        self.counters.write(&mut w);
        w.into_inner()
    }

    pub fn decode(bytes: &[u8]) -> Option<ContainerStats> {
        let mut r = Reader::new(bytes);
        let (seq, doc_counter, last_ts) = (r.u64()?, r.u64()?, r.i64()?);
        Some(ContainerStats {
            counters: Counters::read(&mut r)?,
            seq,
            doc_counter,
            last_ts,
        })
    }
}

/// Physical partition record: counters plus the range's own LSN.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RangeStats {
    pub counters: Counters,
    pub lsn: u64,
}

impl RangeStats {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(112);
        w.u64(self.lsn);
        self.counters.write(&mut w);
        w.into_inner()
    }

    pub fn decode(bytes: &[u8]) -> Option<RangeStats> {
        let mut r = Reader::new(bytes);
        let lsn = r.u64()?;
        Some(RangeStats {
            counters: Counters::read(&mut r)?,
            lsn,
        })
    }
}

/// Logical partition record: counters plus the key value (JSON wire form) it belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogicalStats {
    pub counters: Counters,
    pub key: Vec<u8>,
}

impl LogicalStats {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(112 + self.key.len());
        self.counters.write(&mut w);
        w.bytes(&self.key);
        w.into_inner()
    }

    pub fn decode(bytes: &[u8]) -> Option<LogicalStats> {
        let mut r = Reader::new(bytes);
        let counters = Counters::read(&mut r)?;
        Some(LogicalStats {
            counters,
            key: r.bytes()?.to_vec(),
        })
    }
}

/// Counters as the engine and CLI present them.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StatsView {
    pub item_count: u64,
    pub size_bytes: u64,
    pub request_charge_total: f64,
    pub operations: serde_json::Value,
}

impl From<&Counters> for StatsView {
    fn from(c: &Counters) -> StatsView {
        StatsView {
            item_count: c.items,
            size_bytes: c.bytes,
            request_charge_total: crate::charge::round(c.ru),
            operations: c.ops_json(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut c = Counters::default();
        c.resize(3, 300);
        c.record(OpKind::Create, 6.5);
        let cs = ContainerStats {
            counters: c,
            seq: 9,
            doc_counter: 4,
            last_ts: 1700000000,
        };
        assert_eq!(ContainerStats::decode(&cs.encode()), Some(cs));
        let rs = RangeStats {
            counters: c,
            lsn: 42,
        };
        assert_eq!(RangeStats::decode(&rs.encode()), Some(rs));
        let ls = LogicalStats {
            counters: c,
            key: b"[\"a\"]".to_vec(),
        };
        assert_eq!(LogicalStats::decode(&ls.encode()), Some(ls));
        assert_eq!(RangeStats::decode(&[1, 2, 3]), None);
    }

    #[test]
    fn resize_never_underflows() {
        let mut c = Counters::default();
        c.resize(-1, -10);
        assert_eq!((c.items, c.bytes), (0, 0));
    }
}
