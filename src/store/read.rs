//! Reads: point reads, item scans by key range, and statistics.
//!
//! Counts and sizes always come from the statistics records; listing the logical partitions
//! of one physical partition reads only that range's slice of the `logical` database.

use super::catalog::ContainerDef;
use super::doc_tree::{self, Node};
use super::epk::Epk;
use super::index::{DocEntries, IndexLayout};
use super::item;
use super::keys;
use super::partition_key::PartitionKeyValue;
use super::ranges::PkRange;
use super::readahead::ReadAhead;
use super::stats::{ContainerStats, Counters, LogicalStats, OpKind, RangeStats};
use super::{RoTxn, Store};
use crate::charge;
use crate::error::{Error, Result};

/// A point read's result: the stored JSON as a read returns it.
#[derive(Debug, Clone)]
pub struct ReadResult {
    pub json: Vec<u8>,
    pub request_charge: f64,
    pub range: keys::RangeId,
    pub epk: Epk,
}

/// One logical partition's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalPartitionInfo {
    pub epk: Epk,
    /// The key value in wire form (a JSON array).
    pub key: serde_json::Value,
    pub counters: Counters,
}

/// A page of `(partition key, id)` pairs and the key to resume after.
pub type KeyPage = (Vec<(serde_json::Value, String)>, Option<Vec<u8>>);

/// A stored item met by a scan.
#[derive(Debug, Clone)]
pub struct ScannedItem {
    pub epk: Epk,
    pub id: String,
    pub json: Vec<u8>,
}

/// A stored item as a pass over a container's items meets it, borrowed from the
/// transaction (expired ones included).
pub(crate) struct StoredItem<'t> {
    pub key: &'t [u8],
    pub epk: &'t [u8],
    pub id: &'t str,
    pub json: &'t [u8],
}

impl StoredItem<'_> {
    /// The item's index entries under `layout`. A stored item is an object naming each
    /// member once, so it is read in place ([`doc_tree`]) rather than built as a `Value`.
    pub fn entries(&self, layout: &IndexLayout) -> Result<DocEntries> {
        if let Some(members) = doc_tree::parse_object(self.json) {
            return Ok(layout.entries(&Node::Object(members), self.epk, self.id));
        }
        let doc: serde_json::Value = serde_json::from_slice(self.json)
            .map_err(|e| Error::corrupt(format!("item {}: {e}", self.id)))?;
        Ok(layout.entries(&doc, self.epk, self.id))
    }
}

impl Store {
    /// Every stored item of `def` from the item key `from` (or the container's first) to
    /// its last, in key order: what index builders and checks walk.
    pub(crate) fn stored_items<'t>(
        &self,
        txn: &'t RoTxn,
        def: &ContainerDef,
        from: Option<&[u8]>,
    ) -> Result<impl Iterator<Item = Result<StoredItem<'t>>> + use<'t>> {
        let epk_len = def.partition_key.epk_len();
        let prefix = keys::container_prefix(def.rid);
        let end = keys::prefix_end(&prefix).unwrap_or_else(|| vec![0xFF; 5]);
        let start = from.unwrap_or(&prefix);
        let range = self.items.range(txn, &keys::half_open(start, &end))?;
        let mut ahead = ReadAhead::default();
        Ok(range.map(move |entry| {
            let (key, record) = entry?;
            ahead.touch(record);
            let (epk, id) =
                keys::split_item(key, epk_len).ok_or_else(|| Error::corrupt("item key"))?;
            let (_, json) = item::decode_record(record)?;
            Ok(StoredItem { key, epk, id, json })
        }))
    }

    /// Reads one item by id and partition key; 404 if missing or expired.
    pub fn read_item(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        id: &str,
        pk: &PartitionKeyValue,
    ) -> Result<ReadResult> {
        item::validate_id(id).map_err(|e| e.with_charge(charge::REJECTED))?;
        let epk = pk.epk(&def.partition_key);
        let range = def.owner(epk.as_bytes())?.id;
        let key = keys::item(def.rid, &epk, id);
        let found = match self.items.get(txn, &key)? {
            Some(record) => {
                let (header, json) = item::decode_record(record)?;
                (!header.is_expired(super::now_secs())).then(|| json.to_vec())
            }
            None => None,
        };
        match found {
            Some(json) => {
                let ru = charge::point_read(json.len());
                self.check_budget(txn, def, range, 0.0, ru)?;
                self.record_read(def.rid, range, Some(&epk), OpKind::Read, ru);
                Ok(ReadResult {
                    json,
                    request_charge: ru,
                    range,
                    epk,
                })
            }
            None => {
                self.record_read(def.rid, range, None, OpKind::Read, charge::NOT_FOUND_READ);
                Err(Error::not_found(format!(
                    "no item with id {id:?} in logical partition {} of {}",
                    pk.to_display_json(),
                    def.full_name()
                ))
                .with_charge(charge::NOT_FOUND_READ))
            }
        }
    }

    /// Live items with EPK in `[min, max)`, in key order, resuming after `after` (an item
    /// key from a previous call), at most `limit`. Expired items are skipped.
    pub fn scan_items(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        min: &Epk,
        max: &Epk,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<(Vec<ScannedItem>, Option<Vec<u8>>)> {
        self.scan_items_counted(txn, def, min, max, after, limit, &mut 0)
    }

    /// [`Store::scan_items`], adding the expired items it skipped to `expired` (an export
    /// checks that the items it saw add up to the container's count).
    #[allow(clippy::too_many_arguments)]
    pub fn scan_items_counted(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        min: &Epk,
        max: &Epk,
        after: Option<&[u8]>,
        limit: usize,
        expired: &mut u64,
    ) -> Result<(Vec<ScannedItem>, Option<Vec<u8>>)> {
        let start = keys::epk_bound(def.rid, min);
        let end = keys::epk_bound(def.rid, max);
        let lower = match after {
            Some(a) => std::ops::Bound::Excluded(a),
            None => std::ops::Bound::Included(&start[..]),
        };
        let epk_len = def.partition_key.epk_len();
        let now = super::now_secs();
        let mut out = Vec::new();
        let mut last = None;
        let mut ahead = ReadAhead::default();
        for entry in self
            .items
            .range(txn, &(lower, std::ops::Bound::Excluded(&end[..])))?
        {
            let (k, v) = entry?;
            ahead.touch(v);
            let (header, json) = item::decode_record(v)?;
            if header.is_expired(now) {
                *expired += 1;
                continue;
            }
            let (epk, id) =
                keys::split_item(k, epk_len).ok_or_else(|| Error::corrupt("item key"))?;
            out.push(ScannedItem {
                epk: Epk(epk.to_vec()),
                id: id.to_string(),
                json: json.to_vec(),
            });
            if out.len() >= limit {
                last = Some(k.to_vec());
                break;
            }
        }
        Ok((out, last))
    }

    /// Item ids with their partition key values (wire form), in key order, resuming after
    /// `after`, at most `limit`; reads keys and logical-partition statistics only, never
    /// item bodies (for listings such as the palette's id index).
    pub fn item_keys(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<KeyPage> {
        let prefix = keys::container_prefix(def.rid);
        let end = keys::prefix_end(&prefix).unwrap_or_default();
        let lower = match after {
            Some(a) => std::ops::Bound::Excluded(a),
            None => std::ops::Bound::Included(&prefix[..]),
        };
        let epk_len = def.partition_key.epk_len();
        let items = self.items.remap_data_type::<heed::types::DecodeIgnore>();
        let mut out = Vec::new();
        let mut last = None;
        let mut current: Option<(Vec<u8>, serde_json::Value)> = None;
        let mut ahead = ReadAhead::default();
        for entry in items.range(txn, &(lower, std::ops::Bound::Excluded(&end[..])))? {
            let (k, ()) = entry?;
            ahead.touch(k);
            let (epk, id) =
                keys::split_item(k, epk_len).ok_or_else(|| Error::corrupt("item key"))?;
            if current.as_ref().is_none_or(|(e, _)| e != epk) {
                let epk = Epk(epk.to_vec());
                let key = self
                    .logical
                    .get(txn, &keys::logical(def.rid, &epk))?
                    .and_then(LogicalStats::decode)
                    .and_then(|s| serde_json::from_slice(&s.key).ok())
                    .unwrap_or(serde_json::Value::Null);
                current = Some((epk.0, key));
            }
            let pk = current.as_ref().map(|(_, v)| v.clone()).unwrap_or_default();
            out.push((pk, id.to_string()));
            if out.len() >= limit {
                last = Some(k.to_vec());
                break;
            }
        }
        Ok((out, last))
    }

    /// The stored record (header and JSON, see `super::item::Record`) under an `items`
    /// key (`cid ‖ EPK ‖ id`, as `super::index::IndexReader::item_key` builds it).
    pub fn read_record<'t>(&self, txn: &'t RoTxn, key: &[u8]) -> Result<Option<&'t [u8]>> {
        Ok(self.items.get(txn, key)?)
    }

    pub fn container_stats(&self, txn: &RoTxn, def: &ContainerDef) -> Result<ContainerStats> {
        Ok(self
            .container_stats
            .get(txn, &keys::container_prefix(def.rid))?
            .and_then(ContainerStats::decode)
            .unwrap_or_default())
    }

    /// Every live range with its statistics, in EPK order.
    pub fn ranges_with_stats(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
    ) -> Result<Vec<(PkRange, RangeStats)>> {
        def.ranges
            .iter()
            .map(|r| {
                let s = self
                    .range_stats
                    .get(txn, &keys::range(def.rid, r.id))?
                    .and_then(RangeStats::decode)
                    .unwrap_or_default();
                Ok((r.clone(), s))
            })
            .collect()
    }

    /// Logical partitions with EPK in `[min, max)`, resuming after `after`, at most `limit`.
    pub fn logical_partitions(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        min: &Epk,
        max: &Epk,
        after: Option<&Epk>,
        limit: usize,
    ) -> Result<Vec<LogicalPartitionInfo>> {
        let start = match after {
            Some(a) => {
                let mut k = keys::epk_bound(def.rid, a);
                k.push(0); // strictly after `a`
                k
            }
            None => keys::epk_bound(def.rid, min),
        };
        let end = keys::epk_bound(def.rid, max);
        let mut out = Vec::new();
        if start >= end {
            return Ok(out);
        }
        for entry in self.logical.range(txn, &keys::half_open(&start, &end))? {
            let (k, v) = entry?;
            out.push(decode_logical(k, v)?);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// The `n` largest logical partitions of the EPK range `[min, max)`, largest first, and
    /// whether the range holds more than `n`.
    pub fn largest_in_range(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        min: &Epk,
        max: &Epk,
        n: usize,
    ) -> Result<(Vec<LogicalPartitionInfo>, bool)> {
        let start = keys::epk_bound(def.rid, min);
        let end = keys::epk_bound(def.rid, max);
        let mut top = Vec::new();
        let mut seen = 0usize;
        if start < end {
            for entry in self.logical.range(txn, &keys::half_open(&start, &end))? {
                let (k, v) = entry?;
                seen += 1;
                keep_top(&mut top, decode_logical(k, v)?, n, |i| {
                    i.counters.bytes as f64
                });
            }
        }
        Ok((top, seen > n))
    }

    /// The `n` largest and `n` hottest (most RU consumed) logical partitions of a container,
    /// from statistics only.
    pub fn top_logical_partitions(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        n: usize,
    ) -> Result<(Vec<LogicalPartitionInfo>, Vec<LogicalPartitionInfo>)> {
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let prefix = keys::container_prefix(def.rid);
        let mut largest: Vec<LogicalPartitionInfo> = Vec::new();
        let mut hottest: Vec<LogicalPartitionInfo> = Vec::new();
        for entry in super::prefixed(&self.logical, txn, &prefix)? {
            let (k, v) = entry?;
            let info = decode_logical(k, v)?;
            keep_top(&mut largest, info.clone(), n, |i| i.counters.bytes as f64);
            keep_top(&mut hottest, info, n, |i| i.counters.ru);
        }
        Ok((largest, hottest))
    }
}

fn decode_logical(k: &[u8], v: &[u8]) -> Result<LogicalPartitionInfo> {
    let stats =
        LogicalStats::decode(v).ok_or_else(|| Error::corrupt("logical partition statistics"))?;
    let key = serde_json::from_slice(&stats.key).unwrap_or(serde_json::Value::Null);
    Ok(LogicalPartitionInfo {
        epk: Epk(k.get(4..).unwrap_or_default().to_vec()),
        key,
        counters: stats.counters,
    })
}

/// Keeps the `n` entries with the highest score, sorted descending.
fn keep_top<T>(top: &mut Vec<T>, item: T, n: usize, score: impl Fn(&T) -> f64) {
    if n == 0 {
        return;
    }
    let s = score(&item);
    if top.len() == n && top.last().is_some_and(|last| score(last) >= s) {
        return;
    }
    let pos = top.partition_point(|x| score(x) >= s);
    top.insert(pos, item);
    top.truncate(n);
}

/// Items looked up by key in ascending key order — the candidates an index gives. Keys in
/// one logical partition sit next to each other, so the next one is reached by stepping
/// the cursor forward a few entries instead of descending from the root again; keys in
/// other logical partitions are sought (one descent each, as a point read).
pub struct OrderedLookup<'t, 'e> {
    items: super::Db,
    txn: &'t RoTxn<'e>,
    /// Length of the logical-partition prefix of an item key (`cid ‖ EPK`).
    prefix_len: usize,
    cursor: Option<super::DbRange<'t>>,
    /// The cursor's current entry.
    at: Option<(&'t [u8], &'t [u8])>,
    /// The logical-partition prefix of the key asked for last, and its length (held here:
    /// a fan-out makes a lookup for each range it reads, and a buffer of its own was one
    /// allocation in every one of them).
    previous: ([u8; MAX_PREFIX], usize),
}

/// Entries a lookup steps over inside a logical partition before it seeks instead.
const MAX_STEPS: usize = 8;

/// The longest logical-partition prefix of an item key: the container id and the EPK of a
/// key of three paths, the most the service allows. A longer one is never taken for the
/// same partition as the key before it (each such key is sought).
const MAX_PREFIX: usize = 4 + 3 * 16;

impl<'t, 'e> OrderedLookup<'t, 'e> {
    pub fn new(store: &Store, txn: &'t RoTxn<'e>, def: &ContainerDef) -> OrderedLookup<'t, 'e> {
        OrderedLookup {
            items: store.items,
            txn,
            prefix_len: 4 + def.partition_key.epk_len(),
            cursor: None,
            at: None,
            previous: ([0; MAX_PREFIX], 0),
        }
    }

    /// The stored record of `key`, if the item exists. Keys must come in ascending order
    /// for the stepping to help; any order is answered correctly.
    pub fn get(&mut self, key: &[u8]) -> Result<Option<&'t [u8]>> {
        if let (Some(cursor), Some((at, record))) = (&mut self.cursor, self.at) {
            let same_partition = at.len() >= self.prefix_len
                && key.len() >= self.prefix_len
                && at[..self.prefix_len] == key[..self.prefix_len];
            if at == key {
                return Ok(Some(record));
            }
            if same_partition && at < key {
                for _ in 0..MAX_STEPS {
                    match cursor.next().transpose()? {
                        Some((k, v)) => {
                            self.at = Some((k, v));
                            match k.cmp(key) {
                                std::cmp::Ordering::Equal => return Ok(Some(v)),
                                std::cmp::Ordering::Greater => return Ok(None),
                                std::cmp::Ordering::Less => {}
                            }
                        }
                        None => {
                            self.at = None;
                            return Ok(None);
                        }
                    }
                }
            }
        }
        // A key in another logical partition than the one before it is read on its own: a
        // point read needs no cursor to be set up. A second key in a partition opens one for
        // the keys after it to step to.
        let prefix = key
            .get(..self.prefix_len)
            .filter(|p| (1..=MAX_PREFIX).contains(&p.len()));
        let (buf, len) = &mut self.previous;
        let run = prefix.is_some_and(|p| p == &buf[..*len]);
        *len = prefix.map_or(0, |p| {
            buf[..p.len()].copy_from_slice(p);
            p.len()
        });
        if !run {
            self.cursor = None;
            self.at = None;
            return Ok(self.items.get(self.txn, key)?);
        }
        let bounds = (std::ops::Bound::Included(key), std::ops::Bound::Unbounded);
        let mut cursor = self.items.range(self.txn, &bounds)?;
        self.at = cursor.next().transpose()?;
        self.cursor = Some(cursor);
        Ok(match self.at {
            Some((k, v)) if k == key => Some(v),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{OrderedLookup, keep_top};
    use crate::engine::Backend;
    use crate::engine::Engine;
    use crate::store::catalog::ContainerSettings;

    #[test]
    fn ordered_lookup_answers_as_point_reads_do() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open_without_background(dir.path()).unwrap();
        engine.create_database("d").unwrap();
        engine
            .create_container("d", "c", ContainerSettings::new(vec!["/pk".into()]))
            .unwrap();
        for pk in 0..5 {
            for i in 0..30 {
                let body = format!(r#"{{"id":"i{i:02}","pk":"p{pk}"}}"#);
                engine.create_item("d", "c", body.as_bytes()).unwrap();
            }
        }
        let store = engine.store();
        let txn = store.read_txn().unwrap();
        let def = store.container(&txn, "d", "c").unwrap();
        let prefix = crate::store::keys::container_prefix(def.rid);
        let all: Vec<Vec<u8>> = crate::store::prefixed(&store.items, &txn, &prefix)
            .unwrap()
            .map(|e| e.unwrap().0.to_vec())
            .collect();
        assert_eq!(all.len(), 150);
        // Neighbours, gaps longer than the stepping bound, keys that do not exist, a key
        // out of order, and a repeat.
        let mut missing = all[3].clone();
        missing.push(b'x');
        let wanted: Vec<Vec<u8>> = vec![
            all[0].clone(),
            all[1].clone(),
            all[3].clone(),
            missing,
            all[4].clone(),
            all[25].clone(),
            all[31].clone(),
            all[90].clone(),
            all[2].clone(),
            all[2].clone(),
            all[149].clone(),
            vec![0xFF; 40],
        ];
        let mut lookup = OrderedLookup::new(store, &txn, &def);
        for key in &wanted {
            let expected = store.items.get(&txn, key).unwrap();
            assert_eq!(lookup.get(key).unwrap(), expected, "key {key:?}");
        }
    }

    #[test]
    fn keep_top_keeps_the_highest() {
        let mut top = Vec::new();
        for x in [3.0, 1.0, 5.0, 4.0, 2.0] {
            keep_top(&mut top, x, 3, |v| *v);
        }
        assert_eq!(top, vec![5.0, 4.0, 3.0]);
    }
}
