//! Encoding documents ahead of their writes, away from the writing thread.
//!
//! Most of what an import spends per item needs no transaction: parsing its JSON, stamping
//! the system properties, encoding the stored text and computing the index entries. A
//! [`Preparer`] does that work on another thread for the stamp the write is expected to
//! give the item: the next number in the container's sequence, the document number the
//! import hands it, the batch's `_ts`. The write uses the result when the stamp it gives is
//! that one. When it is not (the item existed, so it keeps its document number; a write
//! before it failed or expired an item, so the sequence moved on), the write stamps and
//! encodes the document again itself. A prediction only ever saves work; what is stored is
//! what the write would have stored from the document alone.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::catalog::ContainerDef;
use super::doc_tree::{self, Node};
use super::epk::Epk;
use super::generations::Generations;
use super::index::DocEntries;
use super::item;
use super::keys::{self, RangeId};
use super::partition_key::PartitionKeyValue;
use crate::charge;
use crate::error::{Error, Result};

/// Where a written item goes: its id, partition key and expiry as its document gives them,
/// and the EPK, range and record key they lead to.
pub(super) struct Target {
    pub id: String,
    pub pk: PartitionKeyValue,
    /// Unix second at which the new version expires; 0 = never.
    pub expires_at: u64,
    pub epk: Epk,
    pub range: RangeId,
    pub key: Vec<u8>,
}

/// The top-level members of a document that its item key ([`key_of`]) and its write's
/// [`Target`] are read from: what a check, or a read in place, builds of a document before
/// the rest. Made once per container, as it is asked of every member of every document.
pub struct TargetMembers {
    /// The first member of each partition key path.
    partition_key: Vec<String>,
}

impl TargetMembers {
    pub fn of(def: &ContainerDef) -> TargetMembers {
        TargetMembers {
            partition_key: def
                .partition_key
                .first_members()
                .map(String::from)
                .collect(),
        }
    }

    /// Whether [`key_of`] reads `name`: `id` and the partition key's members.
    pub fn key_reads(&self, name: &str) -> bool {
        name == "id" || self.partition_key.iter().any(|m| m == name)
    }

    /// Whether [`Target::of`] reads `name`: the key's members and `ttl`.
    pub fn target_reads(&self, name: &str) -> bool {
        name == "ttl" || self.key_reads(name)
    }
}

impl Target {
    /// Reads the id, partition key and expiry of `doc` (a bad one is refused, charged as
    /// rejected) and locates the item.
    pub(super) fn of(def: &ContainerDef, doc: &Map<String, Value>, now: i64) -> Result<Target> {
        let id = item::item_id(doc)
            .map_err(|e| e.with_charge(charge::REJECTED))?
            .to_string();
        let pk = def
            .partition_key
            .extract(doc)
            .map_err(|e| e.with_charge(charge::REJECTED))?;
        let expires_at =
            item::expiry(def, doc, now).map_err(|e| e.with_charge(charge::REJECTED))?;
        let epk = pk.epk(&def.partition_key);
        let range = def.owner(epk.as_bytes())?.id;
        let key = keys::item(def.rid, &epk, &id);
        Ok(Target {
            id,
            pk,
            expires_at,
            epk,
            range,
            key,
        })
    }
}

/// What a version's stored form depends on besides its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub doc_number: u64,
    /// Its place in the container's change sequence (the `_etag` is made from it).
    pub seq: u64,
    /// The batch's `_ts`.
    pub now: i64,
}

/// A version's stored form: the stamped document, its JSON and its index entries in every
/// maintained generation.
pub(super) struct Encoded {
    pub etag: String,
    /// The stamped document. A version encoded ahead for a container without unique keys
    /// leaves it out ([`Preparer::prepare`]): its write needs only `json`, and a document
    /// freed on the thread that parsed it costs less than one freed on the writing thread.
    /// [`Encoded::into_object`] parses `json` back when a write needs it after all.
    pub doc: Option<Value>,
    pub json: Vec<u8>,
    pub entries: Vec<DocEntries>,
}

impl Encoded {
    /// The stamped document as an object, parsed back from `json` if it was left out.
    /// Stamping it again stores the same JSON: stamping removes the system properties and
    /// appends them last.
    pub(super) fn into_object(self) -> Result<Map<String, Value>> {
        let doc = match self.doc {
            Some(doc) => doc,
            None => read_back(&self.json)?,
        };
        match doc {
            Value::Object(map) => Ok(map),
            _ => Err(Error::internal("a stamped item is not an object")),
        }
    }
}

/// The stamped document of an encoded `json`, for a write whose version left it out (see
/// [`Encoded::doc`]).
pub(super) fn read_back(json: &[u8]) -> Result<Value> {
    serde_json::from_slice(json)
        .map_err(|e| Error::internal(format!("cannot read back an encoded item: {e}")))
}

/// Stamps `doc` and encodes it for `target` under `generations`.
pub(super) fn encode(
    def: &ContainerDef,
    generations: &Generations,
    target: &Target,
    mut doc: Map<String, Value>,
    stamp: Stamp,
) -> Result<Encoded> {
    let etag = item::etag(stamp.seq, stamp.now);
    item::stamp_system_properties(&mut doc, def, stamp.doc_number, &etag, stamp.now);
    let mut doc = Value::Object(doc);
    item::canonical_numbers(&mut doc);
    let json = serde_json::to_vec(&doc)
        .map_err(|e| Error::internal(format!("cannot encode item: {e}")))?;
    let entries = generations.entries(&doc, &target.key, &target.epk, &target.id);
    Ok(Encoded {
        etag,
        doc: Some(doc),
        json,
        entries,
    })
}

/// [`encode`] for a document read in place ([`doc_tree`]): the same stamp and bytes, its
/// entries computed on the members as they are, and no `Value` kept (see [`Encoded::doc`]).
pub(super) fn encode_in_place(
    def: &ContainerDef,
    generations: &Generations,
    target: &Target,
    mut members: doc_tree::Members,
    stamp: Stamp,
) -> Result<Encoded> {
    let etag = item::etag(stamp.seq, stamp.now);
    doc_tree::stamp(
        &mut members,
        item::system_properties(def, stamp.doc_number, &etag, stamp.now),
    );
    let doc = Node::Object(members);
    let json = serde_json::to_vec(&doc)
        .map_err(|e| Error::internal(format!("cannot encode item: {e}")))?;
    let entries = generations.entries(&doc, &target.key, &target.epk, &target.id);
    Ok(Encoded {
        etag,
        doc: None,
        json,
        entries,
    })
}

/// The key under which the document `json` would be stored in `def` (container, EPK, id):
/// the order in which writes touch the fewest pages. Only `id` and the members the
/// partition key's paths start in are parsed, the rest is skipped, so an import can order
/// its records without holding their parsed documents; the answer is the one the write
/// finds on the whole document. `None` for text that is not such a document, which its
/// write refuses.
pub fn item_key(def: &ContainerDef, json: &[u8]) -> Option<Vec<u8>> {
    let members = TargetMembers::of(def);
    let doc = item::parse_members(json, |name| members.key_reads(name)).ok()?;
    key_of(def, &doc).ok()
}

/// The key under which `doc` is stored in `def` (container, EPK, id), from its `id` and
/// partition key, which it must have.
pub fn key_of(def: &ContainerDef, doc: &Map<String, Value>) -> Result<Vec<u8>> {
    let id = item::item_id(doc)?;
    let pk = def.partition_key.extract(doc)?;
    Ok(keys::item(def.rid, &pk.epk(&def.partition_key), id))
}

/// A document on its way to a write: as it was given, or already encoded for the stamp
/// its write was expected to give it.
pub struct Incoming(pub(super) Source);

#[expect(
    clippy::large_enum_variant,
    reason = "an import's documents are nearly all encoded: boxing them would cost each an allocation"
)]
pub(super) enum Source {
    Doc(Map<String, Value>),
    Encoded(Target, Ahead),
}

/// A version encoded ahead of its write, and the stamp it was encoded for.
pub(super) struct Ahead {
    pub stamp: Stamp,
    pub version: Encoded,
}

impl From<Map<String, Value>> for Incoming {
    fn from(doc: Map<String, Value>) -> Incoming {
        Incoming(Source::Doc(doc))
    }
}

/// Encodes the documents of one write batch ahead of their writes, each as if the batch's
/// writes before it had each created an item ([`super::write::WriteBatch::preparer`]).
/// Shared by threads: a document's encoding depends only on its position in the batch and
/// the number it is given.
pub struct Preparer {
    def: Arc<ContainerDef>,
    generations: Generations,
    now: i64,
    /// The container's sequence number before the batch's first write.
    seq: u64,
    /// What a document read in place is read for its target.
    reads: TargetMembers,
}

impl Preparer {
    pub(super) fn new(
        def: Arc<ContainerDef>,
        generations: Generations,
        now: i64,
        seq: u64,
    ) -> Preparer {
        Preparer {
            reads: TargetMembers::of(&def),
            def,
            generations,
            now,
            seq,
        }
    }

    /// `doc` encoded for the batch's write number `position` (from 0), as the creation of
    /// an item numbered `number`. A document its write will refuse is passed on as it is,
    /// for the write to refuse it with the service's answer.
    pub fn prepare(
        &self,
        doc: Map<String, Value>,
        position: usize,
        number: u64,
    ) -> Result<Incoming> {
        let Ok(target) = Target::of(&self.def, &doc, self.now) else {
            return Ok(Incoming(Source::Doc(doc)));
        };
        let stamp = Stamp {
            doc_number: number,
            seq: self.seq + position as u64 + 1,
            now: self.now,
        };
        let mut version = encode(&self.def, &self.generations, &target, doc, stamp)?;
        if self.def.unique_key_policy.unique_keys.is_empty() {
            version.doc = None; // freed here, see `Encoded::doc`
        }
        Ok(Incoming(Source::Encoded(target, Ahead { stamp, version })))
    }

    /// [`Preparer::prepare`] for a document given as its text, read in place
    /// ([`doc_tree`]) rather than built as a `Value`. A text that is not read so (not an
    /// object, too large, or one a `Value` reads differently, see [`doc_tree`]), a
    /// document whose write will refuse it, and a container with unique keys (whose writes
    /// read the document) take the `Value` path, which says what is wrong or encodes the
    /// same bytes.
    pub fn prepare_text(&self, json: &[u8], position: usize, number: u64) -> Result<Incoming> {
        let by_value = || self.prepare(item::parse_body(json)?, position, number);
        if json.len() > item::MAX_ITEM_BYTES || !self.def.unique_key_policy.unique_keys.is_empty() {
            return by_value();
        }
        let Some(members) = doc_tree::parse_object(json) else {
            return by_value();
        };
        let read = doc_tree::object_of(&members, |name| self.reads.target_reads(name));
        let Ok(target) = Target::of(&self.def, &read, self.now) else {
            return by_value();
        };
        let stamp = Stamp {
            doc_number: number,
            seq: self.seq + position as u64 + 1,
            now: self.now,
        };
        let version = encode_in_place(&self.def, &self.generations, &target, members, stamp)?;
        Ok(Incoming(Source::Encoded(target, Ahead { stamp, version })))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::stats::ContainerStats;
    use crate::store::write::{WriteBatch, WriteKind};
    use crate::store::{ContainerSettings, Store};

    /// A `_ts` later than any clock reading: both stores of a test stamp it.
    const TS: i64 = 4_000_000_000;

    fn store(dir: &std::path::Path) -> Store {
        let store = Store::open(dir).expect("open");
        let mut txn = store.write_txn().expect("write txn");
        store.create_database(&mut txn, "db", 1).expect("database");
        let settings = ContainerSettings::new(vec!["/pk".to_string()]);
        let def = store
            .create_container(&mut txn, "db", "c", settings, 1)
            .expect("container");
        let stats = ContainerStats {
            last_ts: TS,
            ..ContainerStats::default()
        };
        let key = keys::container_prefix(def.rid);
        store
            .container_stats
            .put(&mut txn, &key, &stats.encode())
            .expect("stats");
        txn.commit().expect("commit");
        store
    }

    fn doc(i: u64) -> Map<String, Value> {
        let Value::Object(doc) = json!({
            "id": format!("d{i}"),
            "pk": i % 3,
            "price": i as f64 + 0.0,
            "tags": ["a", i],
            "_etag": "a client's copy",
        }) else {
            unreachable!()
        };
        doc
    }

    /// Every key and value of the databases a write touches.
    fn contents(store: &Store) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        let txn = store.read_txn().expect("read txn");
        [&store.items, &store.feed, &store.index, &store.index_counts]
            .iter()
            .map(|db| {
                db.iter(&txn)
                    .expect("iter")
                    .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("entry"))
                    .collect()
            })
            .collect()
    }

    /// How the second store's documents are prepared ahead.
    #[derive(Clone, Copy, Debug)]
    enum Prepared {
        /// Parsed as a `Value`, then prepared ([`Preparer::prepare`]).
        Parsed,
        /// From their text ([`Preparer::prepare_text`]).
        Text,
    }

    /// One batch of upserts into both stores: plain documents into `plain`, documents
    /// prepared ahead into `ahead`; each write's outcome must be the same.
    fn batch(plain: &Store, ahead: &Store, writes: &[(String, u64)], how: Prepared) {
        let mut a = WriteBatch::begin(plain, "db", "c").expect("batch");
        let mut b = WriteBatch::begin(ahead, "db", "c").expect("batch");
        let preparer = b.preparer();
        for (i, (text, number)) in writes.iter().enumerate() {
            let doc = item::parse_body(text.as_bytes()).expect("a document");
            let prepared = match how {
                Prepared::Parsed => preparer.prepare(doc.clone(), i, *number),
                Prepared::Text => preparer.prepare_text(text.as_bytes(), i, *number),
            }
            .expect("prepare");
            let x = a.write_numbered(WriteKind::Upsert, doc.into(), *number);
            let y = b.write_numbered(WriteKind::Upsert, prepared, *number);
            match (x, y) {
                (Ok(x), Ok(y)) => {
                    assert_eq!((x.status, x.body, x.etag), (y.status, y.body, y.etag));
                    assert_eq!(x.request_charge, y.request_charge);
                }
                (Err(x), Err(y)) => assert_eq!((x.status, x.message), (y.status, y.message)),
                (x, y) => panic!("write {i} ({how:?}): {x:?} against {y:?}"),
            }
        }
        a.commit().expect("commit");
        b.commit().expect("commit");
    }

    fn text(doc: Map<String, Value>) -> String {
        Value::Object(doc).to_string()
    }

    /// Whether the predicted stamps hold (new items with the numbers given) or not (items
    /// that exist keep their numbers, a refused write leaves a position unused), the store
    /// ends up holding the same bytes as without preparing.
    #[test]
    fn documents_prepared_ahead_are_stored_as_the_documents_themselves() {
        for how in [Prepared::Parsed, Prepared::Text] {
            let (da, db) = (
                tempfile::tempdir().expect("dir"),
                tempfile::tempdir().expect("dir"),
            );
            let (plain, ahead) = (store(da.path()), store(db.path()));
            let first: Vec<_> = (0..10).map(|i| (text(doc(i)), i + 1)).collect();
            batch(&plain, &ahead, &first, how);
            let mut second: Vec<_> = (5..15).map(|i| (text(doc(i)), i + 6)).collect();
            second.insert(3, (text(Map::new()), 30)); // no id: refused
            batch(&plain, &ahead, &second, how);
            let third: Vec<_> = (15..20).map(|i| (text(doc(i)), 100 + i)).collect();
            batch(&plain, &ahead, &third, how);
            assert_eq!(contents(&plain), contents(&ahead));
            assert_eq!(contents(&plain)[0].len(), 20);
        }
    }

    /// Texts a document read in place could get wrong: escapes, numbers of every kind,
    /// whitespace, system properties, member names given twice (read as a `Value`
    /// instead), refused documents. Stored the same as by plain writes, index included.
    #[test]
    fn documents_prepared_from_their_text_are_stored_as_parsed_ones() {
        let many: Vec<String> = (0..200).map(|i| format!("\"m{i}\":{i}")).collect();
        let many = many.join(",");
        let texts = [
            r#"{"id":"e1","pk":1,"s":"caf\u00e9 \"q\" \\ \/ \n\t\u0001","\u0061b":2,"n":[1.0,1e2,-0.0,2.5,18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,0.1e-5,123456789012345678901234567890],"o":{},"a":[],"deep":{"x":[{"y":[null,true,false]}]}}"#.to_string(),
            "{ \"id\" : \"e2\" ,\n \"pk\" : \"x\" , \"v\" : [ 1 , 2.50 ] }".to_string(),
            r#"{"_ts":5,"id":"e3","_rid":"zzz","pk":2,"_self":"x","_attachments":1,"_etag":"e","z":0}"#.to_string(),
            r#"{"id":"e4","pk":1,"a":1,"b":0,"a":2}"#.to_string(),
            r#"{"id":"e5","pk":1,"ab":1,"a\u0062":2}"#.to_string(),
            r#"{"id":"e6","pk":1,"o":{"k":1,"k":[2]}}"#.to_string(),
            r#"{"pk":1,"no":"id"}"#.to_string(),
            r#"{"id":"e7","pk":{"an":"object"}}"#.to_string(),
            r#"{"id":"é","pk":"ü","x":"日本"}"#.to_string(),
            r#"{"id":"e8","pk":1.0,"t":3.0}"#.to_string(),
            r#"{"id":"e\u0031\u0030","pk":3}"#.to_string(),
            format!("{{\"id\":\"e11\",\"pk\":4,{many}}}"),
            format!("{{\"id\":\"e12\",\"pk\":4,{many},\"m150\":0}}"),
            r#"{"id":"e13","pk":5,"o":{"$serde_json::private::RawValue":"[1,{\"x\":2}]"}}"#
                .to_string(),
        ];
        let (da, db) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let (plain, ahead) = (store(da.path()), store(db.path()));
        let writes: Vec<_> = texts.iter().cloned().zip(1..).collect();
        batch(&plain, &ahead, &writes, Prepared::Text);
        assert_eq!(contents(&plain), contents(&ahead));
        assert_eq!(contents(&plain)[0].len(), texts.len() - 2, "two refused");
    }
}
