//! The write transaction every mutation goes through.
//!
//! A [`WriteBatch`] is one LMDB write transaction on one container. Each operation checks
//! everything first — input, existence, `If-Match`, the RU budget, unique keys, the logical
//! partition's size — and only then mutates, so a failed operation leaves the transaction as
//! it was and a batch can go on (an import) or be dropped whole (a transactional batch).
//! Statistics, the feed and the meter are updated in the same transaction; statistics are
//! accumulated in memory and written once at commit. Storage splits happen at commit.

use std::collections::HashMap;
use std::sync::Arc;

use heed::RwTxn;
use serde_json::{Map, Value};

use super::catalog::ContainerDef;
use super::doc_tree::{self, Node};
use super::epk::Epk;
use super::feed::{FeedEvent, FeedOp};
use super::generations::Generations;
use super::index::DocEntries;
use super::index_delta::IndexDelta;
use super::item::{self, ItemHeader};
use super::keys::{self, RangeId};
use super::partition_key::{self, PartitionKeyValue};
use super::patch::{self, PatchOperation};
use super::prepare::{self, Ahead, Incoming, Preparer, Source, Stamp, Target};
use super::ranges::{self, PkRange};
use super::read::ReadResult;
use super::stats::{ContainerStats, Counters, LogicalStats, OpKind, RangeStats};
use super::tail::Tail;
use super::{Store, murmur3};
use crate::charge::{self, WriteWork};
use crate::error::{Error, Result, StatusCode, substatus};

/// How a write treats an existing item with the same id and partition key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Fails with 409 if the item exists.
    Create,
    /// Fails with 404 if the item does not exist.
    Replace,
    /// Creates or replaces.
    Upsert,
    /// Replaces with a patched image ([`WriteBatch::patch`]): 404 if the item does not
    /// exist, charged through [`charge::patch`].
    Patch,
}

/// The outcome of one successful operation.
#[derive(Debug, Clone)]
pub struct WriteResult {
    /// Created, Ok (replaced) or NoContent (deleted).
    pub status: StatusCode,
    /// The stored JSON (system properties included); `None` for deletes.
    pub body: Option<Vec<u8>>,
    pub etag: Option<String>,
    pub request_charge: f64,
    pub range: RangeId,
    pub lsn: u64,
}

/// One open write transaction on one container.
pub struct WriteBatch<'s> {
    store: &'s Store,
    txn: RwTxn<'s>,
    def: Arc<ContainerDef>,
    cstats: ContainerStats,
    rstats: HashMap<RangeId, RangeStats>,
    lstats: HashMap<Epk, LogicalStats>,
    /// RU and request count per range consumed in this transaction (for the meter).
    usage: HashMap<RangeId, (f64, u64)>,
    now: i64,
    /// The index generations writes maintain, compiled once per transaction.
    generations: Generations,
    index_delta: IndexDelta,
    /// The largest key in the `items` database as far as this transaction knows (read on
    /// the first put): items past it are appended.
    items_tail: Option<Tail>,
    /// The document number the next write gives its item if it creates one, instead of the
    /// next in sequence ([`WriteBatch::write_numbered`]).
    created_number: Option<u64>,
}

/// The existing version of an item, copied out of the transaction.
struct Existing {
    header: ItemHeader,
    json: Vec<u8>,
}

/// A live item with where it lives.
struct Live {
    key: Vec<u8>,
    epk: Epk,
    range: RangeId,
    existing: Existing,
}

/// The version a write stores, stamped and encoded before anything is mutated.
struct NewVersion {
    /// Its place in the container's change sequence and in its range's LSN sequence.
    seq: u64,
    lsn: u64,
    doc_number: u64,
    /// Bytes it adds to the logical partition (negative when it is smaller than the
    /// version it replaces).
    size_change: i64,
    etag: String,
    /// The stamped document, when it was kept (see `prepare::Encoded::doc`).
    doc: Option<Value>,
    json: Vec<u8>,
    /// Its index entries in every maintained generation.
    entries: Vec<DocEntries>,
}

/// What a write's new version is made from: its document, or a version encoded ahead.
enum Content {
    Doc(Map<String, Value>),
    Ahead(Ahead),
}

/// The unique key entries a write removes (the replaced version's) and adds.
struct UniqueChange {
    old: Vec<Vec<u8>>,
    new: Vec<Vec<u8>>,
}

impl<'s> WriteBatch<'s> {
    /// Opens a write transaction on `db/container` (404 if it does not exist).
    pub fn begin(store: &'s Store, db: &str, container: &str) -> Result<WriteBatch<'s>> {
        let txn = store.write_txn()?;
        let def = store.container(&txn, db, container)?;
        let cstats = store
            .container_stats
            .get(&txn, &keys::container_prefix(def.rid))?
            .and_then(ContainerStats::decode)
            .unwrap_or_default();
        // `_ts` never goes backwards within a container, whatever the clock does.
        let now = super::now_secs().max(cstats.last_ts);
        let generations = Generations::of(&def)?;
        Ok(WriteBatch {
            store,
            txn,
            def,
            cstats,
            rstats: HashMap::new(),
            lstats: HashMap::new(),
            usage: HashMap::new(),
            now,
            generations,
            index_delta: IndexDelta::new(store),
            items_tail: None,
            created_number: None,
        })
    }

    pub fn container(&self) -> &Arc<ContainerDef> {
        &self.def
    }

    /// A [`Preparer`] for the writes this batch is about to make, in their order: it
    /// expects each to create its item, one after the other.
    pub fn preparer(&self) -> Preparer {
        Preparer::new(
            self.def.clone(),
            self.generations.clone(),
            self.now,
            self.cstats.seq,
        )
    }

    fn range_stats(&mut self, range: RangeId) -> Result<&mut RangeStats> {
        if !self.rstats.contains_key(&range) {
            let s = self
                .store
                .range_stats
                .get(&self.txn, &keys::range(self.def.rid, range))?
                .and_then(RangeStats::decode)
                .unwrap_or_default();
            self.rstats.insert(range, s);
        }
        self.rstats
            .get_mut(&range)
            .ok_or_else(|| Error::internal("range statistics vanished"))
    }

    fn logical_stats(&mut self, epk: &Epk, pk: &PartitionKeyValue) -> Result<&mut LogicalStats> {
        if !self.lstats.contains_key(epk) {
            let s = self
                .store
                .logical
                .get(&self.txn, &keys::logical(self.def.rid, epk))?
                .and_then(LogicalStats::decode)
                .unwrap_or_else(|| LogicalStats {
                    counters: Counters::default(),
                    key: pk.to_json().to_string().into_bytes(),
                });
            self.lstats.insert(epk.clone(), s);
        }
        self.lstats
            .get_mut(epk)
            .ok_or_else(|| Error::internal("logical partition statistics vanished"))
    }

    fn existing(&self, key: &[u8]) -> Result<Option<Existing>> {
        match self.store.items.get(&self.txn, key)? {
            Some(record) => {
                let (header, json) = item::decode_record(record)?;
                Ok(Some(Existing {
                    header,
                    json: json.to_vec(),
                }))
            }
            None => Ok(None),
        }
    }

    /// Moves the index of the item at `key` from `old` entries to `new` ones, generation by
    /// generation.
    fn reindex(
        &mut self,
        key: &[u8],
        old: Option<&[DocEntries]>,
        new: Option<&[DocEntries]>,
    ) -> Result<()> {
        for (i, layout) in self.generations.layouts().iter().enumerate() {
            if !self.generations.maintains(i, key) {
                continue; // ahead of the builder: it indexes this item when it gets there
            }
            self.index_delta.apply(
                layout.generation,
                old.and_then(|o| o.get(i)),
                new.and_then(|n| n.get(i)),
            );
        }
        Ok(())
    }

    /// Entries of a stored image (empty when no generation is maintained). A stored image
    /// names each member once, so it is read in place ([`doc_tree`]), not built as a `Value`.
    fn stored_entries(&self, json: &[u8], key: &[u8], epk: &Epk, id: &str) -> Vec<DocEntries> {
        if !self.generations.any_enabled() {
            return Vec::new();
        }
        if let Some(members) = doc_tree::parse_object(json) {
            return self
                .generations
                .entries(&Node::Object(members), key, epk, id);
        }
        let doc: Value = serde_json::from_slice(json).unwrap_or(Value::Null);
        self.generations.entries(&doc, key, epk, id)
    }

    fn used(&self, range: RangeId) -> f64 {
        self.usage.get(&range).map_or(0.0, |u| u.0)
    }

    /// Creates, replaces or upserts one item given as a parsed JSON object.
    ///
    /// Every check comes before the first mutation, so a refused write leaves the
    /// transaction as it was.
    pub fn write(
        &mut self,
        kind: WriteKind,
        doc: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<WriteResult> {
        self.write_incoming(kind, doc.into(), if_match)
    }

    /// [`WriteBatch::write`] of a document that may have been encoded ahead.
    fn write_incoming(
        &mut self,
        kind: WriteKind,
        doc: Incoming,
        if_match: Option<&str>,
    ) -> Result<WriteResult> {
        let def = self.def.clone();
        let (target, doc) = match doc.0 {
            // The target depends on the document and `_ts` only.
            Source::Encoded(target, ahead) if ahead.stamp.now == self.now => {
                (target, Content::Ahead(ahead))
            }
            Source::Encoded(_, ahead) => {
                let doc = ahead.version.into_object()?;
                (Target::of(&def, &doc, self.now)?, Content::Doc(doc))
            }
            Source::Doc(doc) => (Target::of(&def, &doc, self.now)?, Content::Doc(doc)),
        };
        let stored = self.live_version(&target)?;
        let existing = stored.as_ref();
        let lookup_charge = check_preconditions(&def, kind, &target, existing, if_match)?;
        let version = self.new_version(&def, &target, existing, doc)?;
        let ru = self.check_limits(&def, kind, &target, existing, &version, lookup_charge)?;
        let unique = self.unique_changes(&def, &target, existing, &version, ru)?;

        // Every check passed: mutate.
        self.store_version(&def, &target, existing, &version, &unique)?;
        self.log_version(&def, &target, existing, &version)?;
        self.account_write(kind, &target, existing.is_some(), &version, ru)?;
        Ok(WriteResult {
            status: if existing.is_some() {
                StatusCode::Ok
            } else {
                StatusCode::Created
            },
            body: Some(version.json),
            etag: Some(version.etag),
            request_charge: ru,
            range: target.range,
            lsn: version.lsn,
        })
    }

    /// Sets the next `n` document numbers aside and returns the last number before them:
    /// an import numbers its items by their place in its input, whatever order and however
    /// many transactions it writes them in, and no other writer takes those numbers
    /// meanwhile. Numbers an import does not use (its upserts of items that exist) stay
    /// unused, as numbers of deleted items do.
    pub fn reserve_numbers(&mut self, n: u64) -> u64 {
        let base = self.cstats.doc_counter;
        self.cstats.doc_counter = base.saturating_add(n);
        base
    }

    /// [`WriteBatch::write`] of a document from [`WriteBatch::preparer`], numbering the item
    /// `number` if the write creates it. An import that writes its records in key order
    /// numbers its items in the order it was given them, the order queries without ORDER BY
    /// return them in. The caller keeps numbers distinct, and either past the container's
    /// last document number as it stood when it chose them, in this transaction, or set
    /// aside by [`WriteBatch::reserve_numbers`].
    pub fn write_numbered(
        &mut self,
        kind: WriteKind,
        doc: Incoming,
        number: u64,
    ) -> Result<WriteResult> {
        self.created_number = Some(number);
        let result = self.write_incoming(kind, doc, None);
        self.created_number = None;
        result
    }

    /// The stored version of a write's item if it is live. An expired one is already gone
    /// for readers: it is purged here, before the item is written anew.
    fn live_version(&mut self, target: &Target) -> Result<Option<Existing>> {
        let existing = self.existing(&target.key)?;
        if existing
            .as_ref()
            .is_some_and(|e| e.header.is_expired(self.now))
        {
            self.expire_at(&target.key, &target.epk, &target.id, &target.pk)?;
            return Ok(None);
        }
        Ok(existing)
    }

    /// Stamps the system properties on `doc` and encodes it: the version a write stores,
    /// with its place in the container's and the range's sequences and its index entries.
    /// A version encoded ahead for the same stamp is taken as it is.
    fn new_version(
        &mut self,
        def: &ContainerDef,
        target: &Target,
        existing: Option<&Existing>,
        doc: Content,
    ) -> Result<NewVersion> {
        let seq = self.cstats.seq + 1;
        let lsn = self.range_stats(target.range)?.lsn + 1;
        let doc_number = match existing {
            Some(e) => e.header.doc_number,
            None => self.created_number.unwrap_or(self.cstats.doc_counter + 1),
        };
        let stamp = Stamp {
            doc_number,
            seq,
            now: self.now,
        };
        let version = match doc {
            Content::Ahead(ahead) if ahead.stamp == stamp => ahead.version,
            // Stamping replaces the system properties, so the stamped document encodes
            // as the one it was made from. Its JSON, compact and naming each member once,
            // is read back in place when no `Value` of it was kept (an item that existed
            // keeps its number: every record of a re-import comes this way).
            Content::Ahead(ahead) => {
                let in_place = ahead
                    .version
                    .doc
                    .is_none()
                    .then(|| doc_tree::parse_object(&ahead.version.json))
                    .flatten();
                match in_place {
                    Some(members) => {
                        prepare::encode_in_place(def, &self.generations, target, members, stamp)?
                    }
                    None => {
                        let doc = ahead.version.into_object()?;
                        prepare::encode(def, &self.generations, target, doc, stamp)?
                    }
                }
            }
            Content::Doc(doc) => prepare::encode(def, &self.generations, target, doc, stamp)?,
        };
        let old_size = existing.map_or(0, |e| e.json.len() as i64);
        Ok(NewVersion {
            seq,
            lsn,
            doc_number,
            size_change: version.json.len() as i64 - old_size,
            etag: version.etag,
            doc: version.doc,
            json: version.json,
            entries: version.entries,
        })
    }

    /// The write's charge, and the limits it must stay within: a patched item's size
    /// (413), the range's RU budget (429) and the logical partition's size (403).
    fn check_limits(
        &mut self,
        def: &ContainerDef,
        kind: WriteKind,
        target: &Target,
        existing: Option<&Existing>,
        version: &NewVersion,
        lookup_charge: f64,
    ) -> Result<f64> {
        let work = WriteWork {
            bytes: version.json.len(),
            indexed_terms: version.entries.first().map_or(0, |e| e.terms),
            unique_keys: def.unique_key_policy.unique_keys.len(),
        };
        if kind == WriteKind::Patch && version.json.len() > item::MAX_ITEM_BYTES {
            // Other writes were measured as request bodies; a patch grows the item here.
            return Err(Error::too_large(format!(
                "the patched item would be {} bytes; the service's limit is {} bytes (2 MB)",
                version.json.len(),
                item::MAX_ITEM_BYTES
            ))
            .with_charge(lookup_charge));
        }
        let ru = match kind {
            WriteKind::Patch => charge::patch(work),
            _ if existing.is_some() => charge::replace(work),
            _ => charge::create(work),
        };
        self.store
            .check_budget(&self.txn, def, target.range, self.used(target.range), ru)?;

        let logical_bytes = self.logical_stats(&target.epk, &target.pk)?.counters.bytes as i64
            + version.size_change;
        if logical_bytes > def.max_logical_partition_bytes as i64 {
            return Err(Error::new(
                StatusCode::Forbidden,
                format!(
                    "Partition key reached maximum size of {}: logical partition {} of {} would \
                     hold {logical_bytes} bytes; choose a partition key with more distinct values",
                    format_limit(def.max_logical_partition_bytes),
                    target.pk.to_display_json(),
                    def.full_name()
                ),
            )
            .with_substatus(substatus::PARTITION_KEY_QUOTA_EXCEEDED)
            .with_charge(ru));
        }
        Ok(ru)
    }

    /// The unique key entries a write removes (the replaced version's) and adds; 409,
    /// charged `ru`, when another item of the logical partition holds the new values.
    fn unique_changes(
        &self,
        def: &ContainerDef,
        target: &Target,
        existing: Option<&Existing>,
        version: &NewVersion,
        ru: f64,
    ) -> Result<UniqueChange> {
        if def.unique_key_policy.unique_keys.is_empty() {
            return Ok(UniqueChange {
                old: Vec::new(),
                new: Vec::new(),
            });
        }
        let parsed;
        let doc = match &version.doc {
            Some(doc) => doc,
            None => {
                parsed = prepare::read_back(&version.json)?;
                &parsed
            }
        };
        let doc = doc
            .as_object()
            .ok_or_else(|| Error::internal("item is not an object"))?;
        let new = unique_entries(def, &target.epk, doc);
        let old = match existing {
            Some(e) if !new.is_empty() => {
                let old: Map<String, Value> = serde_json::from_slice(&e.json).unwrap_or_default();
                unique_entries(def, &target.epk, &old)
            }
            _ => Vec::new(),
        };
        for entry in &new {
            if let Some(owner) = self.store.unique.get(&self.txn, entry)?
                && owner != target.id.as_bytes()
            {
                return Err(Error::conflict(format!(
                    "Resource with specified id, name, or unique index already exists: item \
                         {:?} in logical partition {} already has these unique key values",
                    String::from_utf8_lossy(owner),
                    target.pk.to_display_json()
                ))
                .with_charge(ru));
            }
        }
        Ok(UniqueChange { old, new })
    }

    /// Stores a checked version: the superseded image moves to its feed event, the index,
    /// unique keys and TTL entry follow the new version, and its record is written.
    fn store_version(
        &mut self,
        def: &ContainerDef,
        target: &Target,
        existing: Option<&Existing>,
        version: &NewVersion,
        unique: &UniqueChange,
    ) -> Result<()> {
        if let Some(e) = existing {
            self.retire_image(e)?;
        }
        let old_entries =
            existing.map(|e| self.stored_entries(&e.json, &target.key, &target.epk, &target.id));
        self.reindex(&target.key, old_entries.as_deref(), Some(&version.entries))?;
        for entry in &unique.old {
            self.store.unique.delete(&mut self.txn, entry)?;
        }
        for entry in &unique.new {
            self.store
                .unique
                .put(&mut self.txn, entry, target.id.as_bytes())?;
        }
        if let Some(e) = existing
            && e.header.expires_at != 0
        {
            self.store.ttl.delete(
                &mut self.txn,
                &keys::ttl(def.rid, e.header.expires_at, &target.epk, &target.id),
            )?;
        }
        if target.expires_at != 0 {
            self.store.ttl.put(
                &mut self.txn,
                &keys::ttl(def.rid, target.expires_at, &target.epk, &target.id),
                &[],
            )?;
        }
        let header = ItemHeader {
            lsn: version.lsn,
            range: target.range,
            expires_at: target.expires_at,
            doc_number: version.doc_number,
        };
        self.put_item(&target.key, &item::encode_record(&header, &version.json))
    }

    /// Stores an item record; one past every key in the database is appended (see `tail`),
    /// so an import into a new container, written in key order, fills its pages whole.
    fn put_item(&mut self, key: &[u8], record: &[u8]) -> Result<()> {
        let tail = match &mut self.items_tail {
            Some(tail) => tail,
            unset => unset.insert(Tail::of(&self.store.items, &self.txn)?),
        };
        let flags = tail.flags_for(key);
        self.store
            .items
            .put_with_flags(&mut self.txn, flags, key, record)?;
        Ok(())
    }

    /// Logs a stored version in its range's change feed. Its image stays in the item
    /// record until a later write supersedes it ([`WriteBatch::retire_image`]).
    fn log_version(
        &mut self,
        def: &ContainerDef,
        target: &Target,
        existing: Option<&Existing>,
        version: &NewVersion,
    ) -> Result<()> {
        let event = FeedEvent {
            op: if existing.is_some() {
                FeedOp::Replace
            } else {
                FeedOp::Create
            },
            ttl_expired: false,
            crts: self.now,
            seq: version.seq,
            previous_image_lsn: existing.map_or(0, |e| e.header.lsn),
            epk: target.epk.as_bytes().to_vec(),
            id: target.id.clone(),
            pk: target.pk.to_json().to_string().into_bytes(),
            current: None,
            image_in_item: true,
            previous: existing
                .filter(|_| def.feed_previous_images)
                .map(|e| Arc::from(&e.json[..])),
        };
        self.store.feed.put(
            &mut self.txn,
            &keys::feed(def.rid, target.range, version.lsn),
            &event.encode(),
        )?;
        Ok(())
    }

    /// Counts a stored version in the statistics and the meter, and advances the
    /// container's sequence and document counter past it.
    fn account_write(
        &mut self,
        kind: WriteKind,
        target: &Target,
        replacing: bool,
        version: &NewVersion,
        ru: f64,
    ) -> Result<()> {
        let op = match kind {
            WriteKind::Create => OpKind::Create,
            WriteKind::Replace => OpKind::Replace,
            WriteKind::Upsert => OpKind::Upsert,
            WriteKind::Patch => OpKind::Patch,
        };
        let items_delta = if replacing { 0 } else { 1 };
        self.account(
            target.range,
            &target.epk,
            &target.pk,
            op,
            ru,
            items_delta,
            version.size_change,
            version.lsn,
        )?;
        self.cstats.seq = version.seq;
        self.cstats.doc_counter = self.cstats.doc_counter.max(version.doc_number);
        Ok(())
    }

    /// Deletes one item.
    pub fn delete(
        &mut self,
        id: &str,
        pk: &PartitionKeyValue,
        if_match: Option<&str>,
    ) -> Result<WriteResult> {
        let def = self.def.clone();
        let Live {
            key,
            epk,
            range,
            existing,
        } = self.require_live(id, pk)?;
        if let Some(expected) = if_match {
            check_etag(expected, &existing.json, id)
                .map_err(|e| e.with_charge(charge::point_read(existing.json.len())))?;
        }
        let old_entries = self.stored_entries(&existing.json, &key, &epk, id);
        let work = WriteWork {
            bytes: existing.json.len(),
            indexed_terms: old_entries.first().map_or(0, |e| e.terms),
            unique_keys: def.unique_key_policy.unique_keys.len(),
        };
        let ru = charge::delete(work);
        self.store
            .check_budget(&self.txn, &def, range, self.used(range), ru)?;
        let lsn = self.remove(&key, &epk, id, pk, existing, Some(old_entries), false)?;
        self.account(range, &epk, pk, OpKind::Delete, ru, 0, 0, lsn)?;
        Ok(WriteResult {
            status: StatusCode::NoContent,
            body: None,
            etag: None,
            request_charge: ru,
            range,
            lsn,
        })
    }

    /// Reads one item inside this transaction, so it sees the transaction's earlier writes
    /// (a read in a transactional batch), optionally only if its etag is `if_match` (412).
    /// Charged like a point read and metered with the transaction.
    pub fn read(
        &mut self,
        id: &str,
        pk: &PartitionKeyValue,
        if_match: Option<&str>,
    ) -> Result<ReadResult> {
        let Live {
            epk,
            range,
            existing,
            ..
        } = self.require_live(id, pk)?;
        let ru = charge::point_read(existing.json.len());
        if let Some(expected) = if_match {
            check_etag(expected, &existing.json, id).map_err(|e| e.with_charge(ru))?;
        }
        self.store
            .check_budget(&self.txn, &self.def, range, self.used(range), ru)?;
        self.account_read(range, &epk, pk, ru)?;
        Ok(ReadResult {
            json: existing.json,
            request_charge: ru,
            range,
            epk,
        })
    }

    /// Patches one item: reads it in this transaction, checks `If-Match` and `condition`
    /// (412 when either fails), applies `ops` ([`patch::apply`]) and writes the result like a
    /// replace, charged through [`charge::patch`]. `condition` is a predicate over the stored
    /// item; the engine compiles it from the query dialect, which the store does not know.
    pub fn patch(
        &mut self,
        id: &str,
        pk: &PartitionKeyValue,
        ops: &[PatchOperation],
        if_match: Option<&str>,
        condition: Option<&dyn Fn(&Value) -> bool>,
    ) -> Result<WriteResult> {
        patch::validate(ops, &self.def.partition_key.paths)
            .map_err(|e| e.with_charge(charge::REJECTED))?;
        let existing = self.require_live(id, pk)?.existing;
        let read_charge = charge::point_read(existing.json.len());
        if let Some(expected) = if_match {
            check_etag(expected, &existing.json, id).map_err(|e| e.with_charge(read_charge))?;
        }
        let mut doc: Value = serde_json::from_slice(&existing.json)
            .map_err(|e| Error::internal(format!("corrupt item {id:?} in the store: {e}")))?;
        if condition.is_some_and(|matches| !matches(&doc)) {
            return Err(Error::precondition_failed(format!(
                "item {id:?} does not match the patch condition, so it was not patched"
            ))
            .with_charge(read_charge));
        }
        patch::apply(&mut doc, ops).map_err(|e| e.with_charge(read_charge))?;
        let Value::Object(doc) = doc else {
            return Err(Error::internal(format!(
                "stored item {id:?} is not an object"
            )));
        };
        // If-Match was checked above against the same snapshot.
        self.write(WriteKind::Patch, doc, None)
    }

    /// The live (present, unexpired) item `id` in logical partition `pk`, or 404.
    fn require_live(&self, id: &str, pk: &PartitionKeyValue) -> Result<Live> {
        item::validate_id(id).map_err(|e| e.with_charge(charge::REJECTED))?;
        let epk = pk.epk(&self.def.partition_key);
        let range = self.def.owner(epk.as_bytes())?.id;
        let key = keys::item(self.def.rid, &epk, id);
        match self.existing(&key)? {
            Some(existing) if !existing.header.is_expired(self.now) => Ok(Live {
                key,
                epk,
                range,
                existing,
            }),
            _ => Err(Error::not_found(format!(
                "no item with id {id:?} in logical partition {} of {}",
                pk.to_display_json(),
                self.def.full_name()
            ))
            .with_charge(charge::NOT_FOUND_READ)),
        }
    }

    /// The id of the live item of logical partition `pk` whose document number (the end
    /// of its `_rid`) is `doc_number`, for a script that names an item by its `_self`
    /// link. Reads the partition's record headers, never their JSON.
    pub fn id_of_document(
        &self,
        pk: &PartitionKeyValue,
        doc_number: u64,
    ) -> Result<Option<String>> {
        let epk = pk.epk(&self.def.partition_key);
        let prefix = keys::item(self.def.rid, &epk, "");
        let epk_len = self.def.partition_key.epk_len();
        for entry in super::prefixed(&self.store.items, &self.txn, &prefix)? {
            let (k, v) = entry?;
            let (header, _) = item::decode_record(v)?;
            if header.doc_number & 0x0FFF_FFFF_FFFF_FFFF == doc_number
                && !header.is_expired(self.now)
            {
                let (_, id) = keys::split_item(k, epk_len)
                    .ok_or_else(|| Error::internal("corrupt item key"))?;
                return Ok(Some(id.to_string()));
            }
        }
        Ok(None)
    }

    /// Purges an expired item (TTL): a delete flagged `timeToLiveExpired`, charged to nobody.
    /// Returns false if the item is gone or no longer expired.
    pub fn expire(&mut self, epk: &Epk, id: &str) -> Result<bool> {
        let key = keys::item(self.def.rid, epk, id);
        let Some(existing) = self.existing(&key)? else {
            return Ok(false);
        };
        if !existing.header.is_expired(self.now) {
            return Ok(false);
        }
        let doc: Map<String, Value> = serde_json::from_slice(&existing.json).unwrap_or_default();
        let pk = self.def.partition_key.extract(&doc)?;
        self.expire_at(&key, epk, id, &pk)?;
        Ok(true)
    }

    fn expire_at(&mut self, key: &[u8], epk: &Epk, id: &str, pk: &PartitionKeyValue) -> Result<()> {
        let Some(existing) = self.existing(key)? else {
            return Ok(());
        };
        let range = self.def.owner(epk.as_bytes())?.id;
        let lsn = self.remove(key, epk, id, pk, existing, None, true)?;
        self.account(range, epk, pk, OpKind::Expire, 0.0, 0, 0, lsn)
    }

    /// Removes an item with its index entries (`entries` if the caller computed them) and
    /// logs the delete. Size statistics are adjusted here; the caller accounts the operation.
    #[allow(clippy::too_many_arguments)]
    fn remove(
        &mut self,
        key: &[u8],
        epk: &Epk,
        id: &str,
        pk: &PartitionKeyValue,
        existing: Existing,
        entries: Option<Vec<DocEntries>>,
        ttl_expired: bool,
    ) -> Result<u64> {
        let def = self.def.clone();
        let entries = match entries {
            Some(e) => e,
            None => self.stored_entries(&existing.json, key, epk, id),
        };
        self.reindex(key, Some(&entries), None)?;
        let range = def.owner(epk.as_bytes())?.id;
        if !def.unique_key_policy.unique_keys.is_empty() {
            let old: Map<String, Value> =
                serde_json::from_slice(&existing.json).unwrap_or_default();
            for entry in unique_entries(&def, epk, &old) {
                self.store.unique.delete(&mut self.txn, &entry)?;
            }
        }
        if existing.header.expires_at != 0 {
            self.store.ttl.delete(
                &mut self.txn,
                &keys::ttl(def.rid, existing.header.expires_at, epk, id),
            )?;
        }
        self.retire_image(&existing)?;
        self.store.items.delete(&mut self.txn, key)?;
        let seq = self.cstats.seq + 1;
        let lsn = self.range_stats(range)?.lsn + 1;
        let event = FeedEvent {
            op: FeedOp::Delete,
            ttl_expired,
            crts: self.now,
            seq,
            previous_image_lsn: existing.header.lsn,
            epk: epk.as_bytes().to_vec(),
            id: id.to_string(),
            pk: pk.to_json().to_string().into_bytes(),
            current: None,
            image_in_item: false,
            previous: def
                .feed_previous_images
                .then(|| Arc::from(&existing.json[..])),
        };
        self.store.feed.put(
            &mut self.txn,
            &keys::feed(def.rid, range, lsn),
            &event.encode(),
        )?;
        self.cstats.seq = seq;
        let bytes = existing.json.len() as i64;
        self.logical_stats(epk, pk)?.counters.resize(-1, -bytes);
        self.range_stats(range)?.counters.resize(-1, -bytes);
        self.cstats.counters.resize(-1, -bytes);
        Ok(lsn)
    }

    /// A version is being superseded: move its image from the item record into its own
    /// feed event, so the all-versions feed keeps it.
    fn retire_image(&mut self, existing: &Existing) -> Result<()> {
        let key = keys::feed(self.def.rid, existing.header.range, existing.header.lsn);
        let Some(bytes) = self.store.feed.get(&self.txn, &key)? else {
            return Ok(()); // the event is gone with a deleted container's history
        };
        let mut event =
            FeedEvent::decode(bytes).ok_or_else(|| Error::corrupt("change feed record"))?;
        if event.image_in_item {
            event.image_in_item = false;
            event.current = Some(Arc::from(&existing.json[..]));
            self.store.feed.put(&mut self.txn, &key, &event.encode())?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn account(
        &mut self,
        range: RangeId,
        epk: &Epk,
        pk: &PartitionKeyValue,
        op: OpKind,
        ru: f64,
        items: i64,
        bytes: i64,
        lsn: u64,
    ) -> Result<()> {
        let l = self.logical_stats(epk, pk)?;
        l.counters.resize(items, bytes);
        l.counters.record(op, ru);
        let r = self.range_stats(range)?;
        r.counters.resize(items, bytes);
        r.counters.record(op, ru);
        r.lsn = lsn;
        self.cstats.counters.resize(items, bytes);
        self.cstats.counters.record(op, ru);
        self.cstats.last_ts = self.now;
        let u = self.usage.entry(range).or_default();
        u.0 += ru;
        u.1 += 1;
        Ok(())
    }

    /// Accounts a read made inside the transaction: operation counts and RU, no size change.
    fn account_read(
        &mut self,
        range: RangeId,
        epk: &Epk,
        pk: &PartitionKeyValue,
        ru: f64,
    ) -> Result<()> {
        self.logical_stats(epk, pk)?
            .counters
            .record(OpKind::Read, ru);
        self.range_stats(range)?.counters.record(OpKind::Read, ru);
        self.cstats.counters.record(OpKind::Read, ru);
        let u = self.usage.entry(range).or_default();
        u.0 += ru;
        u.1 += 1;
        Ok(())
    }

    /// Writes statistics, meter usage and any storage splits, then commits.
    pub fn commit(mut self) -> Result<()> {
        let def = self.def.clone();
        let cid = def.rid;
        for (epk, stats) in &self.lstats {
            let key = keys::logical(cid, epk);
            if stats.counters.items == 0 && stats.counters.bytes == 0 {
                // An emptied logical partition disappears from listings, as on the service.
                self.store.logical.delete(&mut self.txn, &key)?;
            } else {
                self.store
                    .logical
                    .put(&mut self.txn, &key, &stats.encode())?;
            }
        }
        for (range, stats) in &self.rstats {
            self.store.range_stats.put(
                &mut self.txn,
                &keys::range(cid, *range),
                &stats.encode(),
            )?;
        }
        self.store.container_stats.put(
            &mut self.txn,
            &keys::container_prefix(cid),
            &self.cstats.encode(),
        )?;
        self.index_delta.commit(self.store, &mut self.txn, cid)?;
        let touched: Vec<RangeId> = self.rstats.keys().copied().collect();
        let mut def_mut = (*def).clone();
        if self
            .store
            .split_oversized(&mut self.txn, &mut def_mut, &touched)?
        {
            self.store.put_container(&mut self.txn, &def_mut)?;
        }
        let writes: u64 = self.usage.values().map(|(_, n)| n).sum();
        if writes >= super::writeback::LARGE_COMMIT_WRITES {
            self.store.commit_large(self.txn)?;
        } else {
            self.txn.commit()?;
        }
        self.store.record_write_usage(cid, &self.usage);
        Ok(())
    }
}

/// A write's conditions on the stored version of its item: a create needs there to be none
/// (409), a replace or patch needs one (404), and `If-Match` must match it (412). Returns
/// what looking the item up costs, the charge of a refusal from here on.
fn check_preconditions(
    def: &ContainerDef,
    kind: WriteKind,
    target: &Target,
    existing: Option<&Existing>,
    if_match: Option<&str>,
) -> Result<f64> {
    let (id, pk) = (&target.id, &target.pk);
    let lookup_charge = existing.map_or(charge::REJECTED, |e| charge::point_read(e.json.len()));
    match (kind, existing) {
        (WriteKind::Create, Some(_)) => {
            return Err(Error::conflict(format!(
                "an item with id {id:?} already exists in logical partition {}; use upsert or \
                 replace to overwrite it",
                pk.to_display_json()
            ))
            .with_charge(lookup_charge));
        }
        (WriteKind::Replace | WriteKind::Patch, None) => {
            return Err(Error::not_found(format!(
                "no item with id {id:?} in logical partition {} of {}",
                pk.to_display_json(),
                def.full_name()
            ))
            .with_charge(charge::NOT_FOUND_READ));
        }
        _ => {}
    }
    if let (Some(expected), Some(e)) = (if_match, existing) {
        check_etag(expected, &e.json, id).map_err(|err| err.with_charge(lookup_charge))?;
    } else if let (Some(_), None) = (if_match, existing) {
        // If-Match on a missing item: the condition cannot hold.
        return Err(Error::precondition_failed(format!(
            "If-Match was given but item {id:?} does not exist"
        ))
        .with_charge(charge::NOT_FOUND_READ));
    }
    Ok(lookup_charge)
}

/// `If-Match` compares the caller's etag with the stored `_etag` (quotes optional).
fn check_etag(expected: &str, stored_json: &[u8], id: &str) -> Result<()> {
    let current = item::stored_etag(stored_json).unwrap_or_default();
    let norm = |s: &str| s.trim().trim_matches('"').to_string();
    if norm(expected) == norm(&current) {
        Ok(())
    } else {
        Err(Error::precondition_failed(format!(
            "the item {id:?} changed since it was read: If-Match {expected} does not match its \
             current etag {current}; read it again and retry"
        )))
    }
}

/// Unique index keys of a document: per constraint, a hash of its values (a missing path
/// counts as null, as on the service).
fn unique_entries(def: &ContainerDef, epk: &Epk, doc: &Map<String, Value>) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(def.unique_key_policy.unique_keys.len());
    for (i, key) in def.unique_key_policy.unique_keys.iter().enumerate() {
        let mut buf = Vec::new();
        for path in &key.paths {
            let v = partition_key::lookup(doc, path).unwrap_or(&Value::Null);
            canonical(v, &mut buf);
        }
        let (h1, h2) = murmur3::hash128(&buf, 0);
        let mut hash = [0u8; 16];
        hash[..8].copy_from_slice(&h1.to_be_bytes());
        hash[8..].copy_from_slice(&h2.to_be_bytes());
        out.push(keys::unique(def.rid, epk, i as u8, &hash));
    }
    out
}

/// A self-delimiting encoding of a JSON value under which equal values encode equally:
/// numbers as doubles (1 and 1.0 are the same value, as on the service) and object members
/// in name order.
fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(1),
        Value::Bool(b) => out.push(if *b { 3 } else { 2 }),
        Value::Number(n) => {
            out.push(5);
            let f = n.as_f64().unwrap_or(f64::NAN);
            let f = if f == 0.0 { 0.0 } else { f }; // -0 == 0
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Value::String(s) => {
            out.push(8);
            out.extend_from_slice(&(s.len() as u64).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Array(items) => {
            out.push(10);
            out.extend_from_slice(&(items.len() as u64).to_be_bytes());
            for item in items {
                canonical(item, out);
            }
        }
        Value::Object(map) => {
            out.push(11);
            out.extend_from_slice(&(map.len() as u64).to_be_bytes());
            let mut members: Vec<_> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            for (k, item) in members {
                out.extend_from_slice(&(k.len() as u64).to_be_bytes());
                out.extend_from_slice(k.as_bytes());
                canonical(item, out);
            }
        }
    }
}

fn format_limit(bytes: u64) -> String {
    const GB: u64 = 1024 * 1024 * 1024;
    if bytes.is_multiple_of(GB) {
        format!("{} GB", bytes / GB)
    } else {
        format!("{bytes} bytes")
    }
}

impl Store {
    /// Splits every touched range whose storage exceeds the container's per-range limit, at
    /// the byte median of its logical partitions, until each fits or holds one logical
    /// partition. Returns whether the range table changed.
    fn split_oversized(
        &self,
        txn: &mut RwTxn,
        def: &mut ContainerDef,
        touched: &[RangeId],
    ) -> Result<bool> {
        let mut queue: Vec<RangeId> = touched.to_vec();
        let mut changed = false;
        while let Some(id) = queue.pop() {
            let Some(range) = def.range(id).cloned() else {
                continue;
            };
            let stats = self
                .range_stats
                .get(txn, &keys::range(def.rid, id))?
                .and_then(RangeStats::decode)
                .unwrap_or_default();
            if stats.counters.bytes <= def.max_partition_bytes {
                continue;
            }
            let partitions = self.logical_sizes(txn, def.rid, &range)?;
            let Some(at) = ranges::storage_split_point(&partitions) else {
                continue;
            };
            let (left, right) = self.split_range(txn, def, &range, at)?;
            queue.push(left);
            queue.push(right);
            changed = true;
        }
        Ok(changed)
    }

    /// (EPK, bytes) of every logical partition in a range, in EPK order.
    fn logical_sizes(&self, txn: &RwTxn, cid: u32, range: &PkRange) -> Result<Vec<(Epk, u64)>> {
        let start = keys::epk_bound(cid, &range.min_inclusive);
        let end = keys::epk_bound(cid, &range.max_exclusive);
        let mut out = Vec::new();
        for entry in self.logical.range(txn, &keys::half_open(&start, &end))? {
            let (k, v) = entry?;
            let stats = LogicalStats::decode(v)
                .ok_or_else(|| Error::corrupt("logical partition statistics"))?;
            out.push((Epk(k[4..].to_vec()), stats.counters.bytes));
        }
        Ok(out)
    }

    /// Replaces `parent` by two children split at `at`. Children continue the parent's LSN
    /// and get their statistics from the logical partitions they own.
    pub(crate) fn split_range(
        &self,
        txn: &mut RwTxn,
        def: &mut ContainerDef,
        parent: &PkRange,
        at: Epk,
    ) -> Result<(RangeId, RangeId)> {
        let (left_id, right_id) = (def.next_range_id, def.next_range_id + 1);
        def.next_range_id += 2;
        let (left, right) = ranges::split(parent, at, left_id, right_id);
        let parent_stats = self
            .range_stats
            .get(txn, &keys::range(def.rid, parent.id))?
            .and_then(RangeStats::decode)
            .unwrap_or_default();
        for child in [&left, &right] {
            let mut counters = Counters::default();
            let start = keys::epk_bound(def.rid, &child.min_inclusive);
            let end = keys::epk_bound(def.rid, &child.max_exclusive);
            for entry in self.logical.range(txn, &keys::half_open(&start, &end))? {
                let (_, v) = entry?;
                if let Some(s) = LogicalStats::decode(v) {
                    counters.add(&s.counters);
                }
            }
            let stats = RangeStats {
                counters,
                lsn: parent_stats.lsn,
            };
            self.range_stats
                .put(txn, &keys::range(def.rid, child.id), &stats.encode())?;
        }
        self.range_stats
            .delete(txn, &keys::range(def.rid, parent.id))?;
        let pos = def
            .ranges
            .iter()
            .position(|r| r.id == parent.id)
            .ok_or_else(|| Error::internal("split of a range that is not live"))?;
        def.ranges.splice(pos..=pos, [left, right]);
        def.retired_ranges.push(parent.clone());
        Ok((left_id, right_id))
    }

    /// Changes a container's throughput; raising it past `ranges × 10,000` RU/s splits the
    /// widest ranges at their midpoints, only as many as needed.
    pub fn set_throughput(
        &self,
        txn: &mut RwTxn,
        db: &str,
        name: &str,
        throughput: super::catalog::Throughput,
    ) -> Result<ContainerDef> {
        throughput.validate()?;
        let mut def = (*self.container(txn, db, name)?).clone();
        def.throughput = throughput;
        let target = ranges::required_for_throughput(throughput.max_ru());
        while def.ranges.len() < target {
            let widest = def
                .ranges
                .iter()
                .max_by(|a, b| a.width().total_cmp(&b.width()).then(b.id.cmp(&a.id)))
                .cloned()
                .ok_or_else(|| Error::internal("container has no ranges"))?;
            let Some(mid) = super::epk::midpoint(&widest.min_inclusive, &widest.max_exclusive)
            else {
                break;
            };
            self.split_range(txn, &mut def, &widest, mid)?;
        }
        self.put_container(txn, &def)?;
        Ok(def)
    }
}
