//! Secondary indexes: the `index` database, its key encoding, maintenance of a document's
//! entries, and the cursor walks queries use.
//!
//! One entry per indexed node of a document:
//!
//! ```text
//! cid ‖ generation ‖ path hash (8) ‖ value ‖ EPK ‖ id          → (empty)
//! cid ‖ generation ‖ composite hash (8) ‖ value ‖ … ‖ value ‖ EPK ‖ id
//! ```
//!
//! - *Path*: the node's location with every array position written `[]`
//!   (`/tags/[]/name`), hashed to 8 bytes, so all elements of an array share one path and
//!   `ARRAY_CONTAINS` or a JOIN is one lookup. A lookup on one position reads the `[]` path
//!   and the query's filter keeps the right element: index candidates are a superset the
//!   executor always filters again.
//! - *Value*: type-tagged and order-preserving, in the service's type order
//!   (undefined < null < false < true < numbers < strings < arrays < objects). Numbers are
//!   doubles with the usual sortable bit flip; strings are their UTF-8 bytes (ordinal order)
//!   with `00` escaped and a terminator, cut at the generation's string length (longer
//!   strings share one truncated value, still in order; see [`STRING_BYTES`]). Arrays and
//!   objects are a bare tag: ORDER BY and IS_DEFINED find them, and their order within the
//!   type is settled by the executor.
//! - *EPK ‖ id* last: one value's entries sort by EPK, so a physical or logical partition is
//!   a sub-range of every value, and a range filter or an ORDER BY is one cursor walk.
//! - *Generation*: a policy change builds a new generation beside the live one (see
//!   [`crate::store::catalog::IndexBuild`]); the old one is dropped when the new is complete.
//!
//! Composite indexes store one entry per document with the value of every path (undefined
//! included), descending components bit-inverted so one forward walk yields the declared
//! order. Next to the entries, `index_counts` keeps per path the number of documents that
//! define it (`cid ‖ generation ‖ path hash → u64`): an ORDER BY served from a single-path
//! index is complete only when no document leaves the path undefined.

#[cfg(feature = "test-harness")]
use std::collections::HashMap;
use std::hash::Hasher;
use std::ops::Bound;

use heed::RwTxn;
use serde_json::Value;

use super::catalog::ContainerDef;
use super::epk::Epk;
use super::indexing::{
    CompiledPolicy, CompositeOrder, DocStep, IndexingPolicy, PolicySegment, Tree,
};
use super::keys::ContainerRid;
use super::packed_keys::KeySet;
use super::{RoTxn, Store, murmur3};
use crate::error::Result;

pub use super::catalog::STRING_BYTES;

/// Type tags, in the service's type order.
pub mod tag {
    pub const UNDEFINED: u8 = 0x00;
    pub const NULL: u8 = 0x01;
    pub const FALSE: u8 = 0x02;
    pub const TRUE: u8 = 0x03;
    pub const NUMBER: u8 = 0x04;
    pub const STRING: u8 = 0x05;
    pub const ARRAY: u8 = 0x06;
    pub const OBJECT: u8 = 0x07;
}

/// String terminators: an exact string, or one cut at its generation's length (sorts after
/// the exact string equal to its prefix, as the longer originals do).
const END_EXACT: [u8; 2] = [0x00, 0x01];
const END_TRUNCATED: [u8; 2] = [0x00, 0x02];
/// A `00` byte inside a string.
const ESCAPED_ZERO: [u8; 2] = [0x00, 0xFF];

/// An indexable value as queries and documents both see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Term<'a> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Str(&'a str),
    /// Any array (its elements have entries of their own at `path/[]`).
    Array,
    /// Any object.
    Object,
}

impl<'a> Term<'a> {
    pub fn of(v: &'a Value) -> Term<'a> {
        match v {
            Value::Null => Term::Null,
            Value::Bool(b) => Term::Bool(*b),
            Value::Number(n) => Term::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Term::Str(s),
            Value::Array(_) => Term::Array,
            Value::Object(_) => Term::Object,
        }
    }

    pub fn tag(&self) -> u8 {
        match self {
            Term::Undefined => tag::UNDEFINED,
            Term::Null => tag::NULL,
            Term::Bool(false) => tag::FALSE,
            Term::Bool(true) => tag::TRUE,
            Term::Number(_) => tag::NUMBER,
            Term::Str(_) => tag::STRING,
            Term::Array => tag::ARRAY,
            Term::Object => tag::OBJECT,
        }
    }
}

/// A document node the index encodes: the [`Term`] it is.
pub trait Indexed: Tree {
    fn term(&self) -> Term<'_>;
}

impl Indexed for Value {
    fn term(&self) -> Term<'_> {
        Term::of(self)
    }
}

/// Appends the order-preserving encoding of `term`, a string cut at `string_bytes`.
pub fn encode(term: Term<'_>, string_bytes: usize, out: &mut Vec<u8>) {
    out.push(term.tag());
    match term {
        Term::Number(n) => out.extend_from_slice(&sortable_f64(n)),
        Term::Str(s) => {
            let bytes = s.as_bytes();
            let cut = bytes.len().min(string_bytes);
            escape_into(&bytes[..cut], out);
            out.extend_from_slice(if cut < bytes.len() {
                &END_TRUNCATED
            } else {
                &END_EXACT
            });
        }
        _ => {}
    }
}

/// The bytes every string starting with `prefix` begins with (for STARTSWITH), in a
/// generation that cuts strings at `string_bytes`.
pub fn encode_string_prefix(prefix: &str, string_bytes: usize, out: &mut Vec<u8>) {
    out.push(tag::STRING);
    let bytes = prefix.as_bytes();
    escape_into(&bytes[..bytes.len().min(string_bytes)], out);
}

/// Whether `encoded` (one value) is a cut string: it stands for many strings, so range
/// bounds on it must include it.
pub fn is_truncated(encoded: &[u8]) -> bool {
    encoded.first() == Some(&tag::STRING) && encoded.ends_with(&END_TRUNCATED)
}

fn escape_into(mut bytes: &[u8], out: &mut Vec<u8>) {
    while let Some(at) = memchr::memchr(0, bytes) {
        out.extend_from_slice(&bytes[..at]);
        out.extend_from_slice(&ESCAPED_ZERO);
        bytes = &bytes[at + 1..];
    }
    out.extend_from_slice(bytes);
}

/// Doubles as big-endian bytes that sort numerically (−0 is 0, as in the query language).
fn sortable_f64(n: f64) -> [u8; 8] {
    let n = if n == 0.0 { 0.0 } else { n };
    let bits = n.to_bits();
    let flipped = if bits >> 63 == 1 {
        !bits
    } else {
        bits ^ (1 << 63)
    };
    flipped.to_be_bytes()
}

/// Length of the encoded value at the start of `bytes` (bit-inverted when `inverted`).
pub fn value_len(bytes: &[u8], inverted: bool) -> Option<usize> {
    let at = |i: usize| bytes.get(i).map(|b| if inverted { !b } else { *b });
    match at(0)? {
        tag::NUMBER => (bytes.len() >= 9).then_some(9),
        tag::STRING => {
            let mut i = 1;
            loop {
                if at(i)? == 0 {
                    match at(i + 1)? {
                        0xFF => i += 2,
                        0x01 | 0x02 => return Some(i + 2),
                        _ => return None,
                    }
                } else {
                    i += 1;
                }
            }
        }
        tag::UNDEFINED..=tag::TRUE | tag::ARRAY | tag::OBJECT => Some(1),
        _ => None,
    }
}

/// Whether the `values` encoded values at the start of `bytes` (composite components may
/// be bit-inverted) are each exact: equal encodings mean equal values and the encodings sort
/// as the query language's total order sorts the values. Not exact: an array or an object
/// (a bare tag), a cut string, and zero (−0 and 0 share one encoding but not one place in
/// the total order).
pub fn is_exact(bytes: &[u8], values: usize) -> bool {
    let mut at = 0;
    for _ in 0..values {
        let Some(rest) = bytes.get(at..) else {
            return false;
        };
        let inverted = rest.first().is_some_and(|b| *b > tag::OBJECT);
        let Some(len) = value_len(rest, inverted) else {
            return false;
        };
        let byte = |i: usize| if inverted { !rest[i] } else { rest[i] };
        let exact = match byte(0) {
            tag::UNDEFINED..=tag::TRUE => true,
            tag::NUMBER => (1..9).any(|i| byte(i) != ZERO[i - 1]),
            tag::STRING => byte(len - 1) == END_EXACT[1],
            _ => false,
        };
        if !exact {
            return false;
        }
        at += len;
    }
    true
}

/// [`is_exact`] for `value`, exactly one encoded value (not inverted), without finding its
/// end.
pub fn is_exact_value(value: &[u8]) -> bool {
    match value.first() {
        Some(tag::UNDEFINED..=tag::TRUE) => value.len() == 1,
        Some(&tag::NUMBER) => value.len() == 9 && value[1..] != ZERO,
        Some(&tag::STRING) => value.ends_with(&END_EXACT),
        _ => false,
    }
}

/// The encoding of 0 after the number tag.
const ZERO: [u8; 8] = [0x80, 0, 0, 0, 0, 0, 0, 0];

/// 8-byte hash of a path whose array steps are all `[]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathId(pub [u8; 8]);

/// Builds [`PathId`]s step by step.
#[derive(Default, Clone)]
pub struct PathHasher {
    bytes: Vec<u8>,
}

impl PathHasher {
    pub fn property(&mut self, name: &str) {
        self.bytes.push(1);
        self.bytes
            .extend_from_slice(&(name.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(name.as_bytes());
    }

    pub fn any_index(&mut self) {
        self.bytes.push(2);
    }

    pub fn finish(&self) -> PathId {
        PathId(murmur3::hash128(&self.bytes, 0x1D).0.to_be_bytes())
    }

    fn extend(&mut self, steps: &[DocStep<'_>]) {
        for step in steps {
            match step {
                DocStep::Property(p) => self.property(p),
                DocStep::Index(_) => self.any_index(),
            }
        }
    }
}

/// The id of a composite index: its paths and directions.
fn composite_id(paths: &[(Vec<String>, bool)]) -> PathId {
    let mut h = PathHasher::default();
    h.bytes.push(3);
    for (path, desc) in paths {
        h.bytes.push(if *desc { 4 } else { 5 });
        for name in path {
            h.property(name);
        }
    }
    h.finish()
}

/// A composite index the store maintains: property paths (no `[]` steps) and directions.
#[derive(Debug, Clone)]
pub struct Composite {
    pub id: PathId,
    /// (property path, descending) per component.
    pub paths: Vec<(Vec<String>, bool)>,
}

/// The composite indexes of a policy that can be stored: those whose paths name
/// properties only (a `[]` step in a composite path has no single value per document).
pub fn composites(policy: &IndexingPolicy) -> Vec<Composite> {
    if !policy.is_indexing_enabled() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for ci in &policy.composite_indexes {
        let mut paths = Vec::with_capacity(ci.len());
        for entry in ci {
            let Ok(segments) = super::indexing::parse_composite_path(&entry.path) else {
                break;
            };
            let names: Option<Vec<String>> = segments
                .into_iter()
                .map(|s| match s {
                    PolicySegment::Name(n) => Some(n),
                    _ => None,
                })
                .collect();
            let Some(names) = names else { break };
            paths.push((names, entry.order == CompositeOrder::Descending));
        }
        if paths.len() == ci.len() {
            out.push(Composite {
                id: composite_id(&paths),
                paths,
            });
        }
    }
    out
}

/// Everything the index holds for one document version under one policy.
#[derive(Debug, Default)]
pub struct DocEntries {
    /// Full index keys, sorted and without duplicates.
    pub keys: KeySet,
    /// Paths (object members only, no array steps) the document defines.
    pub defined: Vec<PathId>,
    /// Scalar terms plus composite entries: the write charge's indexed terms.
    pub terms: usize,
}

/// One generation of a container's index, as writes maintain it.
#[derive(Clone)]
pub struct IndexLayout {
    pub cid: ContainerRid,
    pub generation: u32,
    pub policy: CompiledPolicy,
    pub composites: Vec<Composite>,
    /// Where the generation cuts strings (see [`STRING_BYTES`]).
    pub string_bytes: usize,
}

impl IndexLayout {
    pub fn new(
        cid: ContainerRid,
        generation: u32,
        policy: &IndexingPolicy,
        string_bytes: usize,
    ) -> IndexLayout {
        IndexLayout {
            cid,
            generation,
            policy: policy.compile(),
            composites: composites(policy),
            string_bytes,
        }
    }

    /// The layout of `def`'s current generation: the one its policy and string length are
    /// recorded for.
    pub fn current(def: &ContainerDef) -> IndexLayout {
        IndexLayout::new(
            def.rid,
            def.index_generation,
            &def.indexing_policy,
            def.index_string_bytes,
        )
    }

    pub fn enabled(&self) -> bool {
        self.policy.is_indexing_enabled()
    }

    /// `cid ‖ generation`: the prefix of every entry of this generation.
    pub fn prefix(&self) -> [u8; 8] {
        generation_prefix(self.cid, self.generation)
    }

    /// Only the number of entries `doc` has ([`DocEntries::terms`]), the keys left out.
    pub fn counted(&self, doc: &impl Tree) -> DocEntries {
        let terms = if self.enabled() {
            self.policy.count_indexed_terms(doc) + self.composites.len()
        } else {
            0
        };
        DocEntries {
            terms,
            ..DocEntries::default()
        }
    }

    /// The entries of `doc` stored at `epk ‖ id`.
    pub fn entries(&self, doc: &impl Indexed, epk: &[u8], id: &str) -> DocEntries {
        let mut out = DocEntries::default();
        if !self.enabled() {
            return out;
        }
        let prefix = self.prefix();
        let suffix_len = epk.len() + id.len();
        // A sales order of about 1 KB has some 40 entries.
        out.keys = KeySet::with_capacity(48, 48 * (32 + suffix_len));
        let push = |path: PathId, value: &[u8], out: &mut DocEntries| {
            out.keys
                .push(&[&prefix, &path.0, value, epk, id.as_bytes()]);
        };
        let mut value = Vec::with_capacity(32);
        let mut hasher = PathHasher::default();
        self.policy.walk(doc, |steps, v, indexed| {
            let plain = steps.iter().all(|s| matches!(s, DocStep::Property(_)));
            hasher.bytes.clear();
            hasher.extend(steps);
            let path = hasher.finish();
            if plain {
                out.defined.push(path);
            }
            if indexed {
                if !v.is_container() {
                    out.terms += 1;
                }
                value.clear();
                encode(v.term(), self.string_bytes, &mut value);
                push(path, &value, &mut out);
            }
        });
        for composite in &self.composites {
            value.clear();
            for (path, desc) in &composite.paths {
                let start = value.len();
                let term = lookup(doc, path).map_or(Term::Undefined, Indexed::term);
                encode(term, self.string_bytes, &mut value);
                if *desc {
                    value[start..].iter_mut().for_each(|b| *b = !*b);
                }
            }
            push(composite.id, &value, &mut out);
            out.terms += 1;
        }
        out.keys.sort();
        out
    }
}

fn lookup<'a, T: Tree>(doc: &'a T, path: &[String]) -> Option<&'a T> {
    path.iter().try_fold(doc, |v, name| v.member(name))
}

pub fn generation_prefix(cid: ContainerRid, generation: u32) -> [u8; 8] {
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&cid.to_be_bytes());
    p[4..].copy_from_slice(&generation.to_be_bytes());
    p
}

pub(crate) fn count_key(cid: ContainerRid, generation: u32, path: PathId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&generation_prefix(cid, generation));
    k[8..].copy_from_slice(&path.0);
    k
}

/// A cheap hasher for keys that are hashes already (path ids): folds the bytes into a word.
#[derive(Default)]
pub struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Store {
    /// Documents of the container that define `path` (a property path) in `generation`.
    pub fn index_defined_count(
        &self,
        txn: &RoTxn,
        cid: ContainerRid,
        generation: u32,
        path: PathId,
    ) -> Result<u64> {
        Ok(self
            .index_counts
            .get(txn, &count_key(cid, generation, path))?
            .and_then(super::catalog::read_u64)
            .unwrap_or(0))
    }

    /// Deletes up to `limit` entries (and counts) of a retired generation; returns whether
    /// it is gone.
    pub(crate) fn drop_index_generation(
        &self,
        txn: &mut RwTxn,
        cid: ContainerRid,
        generation: u32,
        limit: usize,
    ) -> Result<bool> {
        let prefix = generation_prefix(cid, generation);
        let end = super::keys::prefix_end(&prefix).unwrap_or_else(|| vec![0xFF; 9]);
        let mut doomed: Vec<Vec<u8>> = Vec::new();
        for entry in self
            .index
            .range(txn, &super::keys::half_open(&prefix, &end))?
        {
            let (k, _) = entry?;
            if doomed.len() >= limit {
                break;
            }
            doomed.push(k.to_vec());
        }
        let finished = doomed.len() < limit;
        for k in &doomed {
            self.index.delete(txn, k)?;
        }
        if finished {
            self.index_counts
                .delete_range(txn, &super::keys::half_open(&prefix, &end))?;
        }
        Ok(finished)
    }
}

/// A bound on encoded values: inclusive bounds take every entry of that value.
pub type ValueBound = Bound<Vec<u8>>;

/// Read access to one generation of a container's index.
pub struct IndexReader<'t> {
    store: &'t Store,
    txn: &'t RoTxn<'t>,
    prefix: [u8; 8],
    cid: ContainerRid,
    epk_len: usize,
}

/// The key of the item an entry points to: `cid ‖ EPK ‖ id`.
pub type ItemKey = Vec<u8>;

impl<'t> IndexReader<'t> {
    pub fn new(
        store: &'t Store,
        txn: &'t RoTxn<'t>,
        def: &ContainerDef,
        generation: u32,
    ) -> IndexReader<'t> {
        IndexReader {
            store,
            txn,
            prefix: generation_prefix(def.rid, generation),
            cid: def.rid,
            epk_len: def.partition_key.epk_len(),
        }
    }

    fn path_prefix(&self, path: PathId) -> Vec<u8> {
        let mut k = Vec::with_capacity(64);
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(&path.0);
        k
    }

    /// Splits an entry key (after the path) into its values and the item's address in the
    /// container (`EPK ‖ id`, see [`IndexReader::item_key`]).
    fn split_entry<'k>(&self, rest: &'k [u8], values: usize) -> Option<(&'k [u8], &'k [u8])> {
        let mut at = 0;
        for _ in 0..values {
            // Composite components may be inverted; the tag says which.
            let inverted = rest.get(at).is_some_and(|b| *b > tag::OBJECT);
            at += value_len(rest.get(at..)?, inverted)?;
        }
        let item = rest.get(at..)?;
        (item.len() >= self.epk_len).then(|| (&rest[..at], item))
    }

    /// The `items` key of an entry's item address (`EPK ‖ id`).
    pub fn item_key(&self, item: &[u8]) -> ItemKey {
        let mut key = Vec::with_capacity(4 + item.len());
        key.extend_from_slice(&self.cid.to_be_bytes());
        key.extend_from_slice(item);
        key
    }

    /// Items with a value of `path` in `[lo, hi]` (per the bounds) whose EPK lies in one of
    /// `spans` (normalized: [`normalize_spans`]), in entry order. Stops with `Ok(false)` once
    /// more than `limit` are found (the caller then prefers a scan).
    pub fn lookup(
        &self,
        path: PathId,
        lo: &ValueBound,
        hi: &ValueBound,
        spans: &[(Vec<u8>, Vec<u8>)],
        limit: usize,
        out: &mut Vec<ItemKey>,
    ) -> Result<bool> {
        let base = self.path_prefix(path);
        let with = |v: &[u8]| {
            let mut k = base.clone();
            k.extend_from_slice(v);
            k
        };
        // An exact value: its entries are in EPK order, so read them from the first span on
        // and, at an entry outside every span, seek to the next span's start: one seek per
        // span at most, and none for the gaps between them.
        if let (Bound::Included(a), Bound::Included(b)) = (lo, hi)
            && a == b
        {
            let value = with(a);
            let key_at = |epk: &[u8]| {
                let mut k = value.clone();
                k.extend_from_slice(epk);
                k
            };
            let Some(last) = spans.last() else {
                return Ok(true);
            };
            let end = key_at(&last.1);
            let inside = in_spans(spans);
            let mut next = 0; // the first span not yet passed
            'seek: while let Some((smin, _)) = spans.get(next) {
                let from = key_at(smin);
                for entry in self
                    .store
                    .index
                    .range(self.txn, &super::keys::half_open(&from, &end))?
                {
                    let (k, _) = entry?;
                    let Some((_, item)) = self.split_entry(&k[base.len()..], 1) else {
                        continue;
                    };
                    let epk = &item[..self.epk_len];
                    if !inside(epk) {
                        // In a gap: continue at the next span, if any.
                        next = spans.partition_point(|(a, _)| a.as_slice() <= epk);
                        continue 'seek;
                    }
                    out.push(self.item_key(item));
                    if out.len() > limit {
                        return Ok(false);
                    }
                }
                break;
            }
            return Ok(true);
        }
        let start = match lo {
            Bound::Included(v) => Bound::Included(with(v)),
            // Past every entry of the value: its keys continue with EPK bytes.
            Bound::Excluded(v) => Bound::Included(after_value(with(v))),
            Bound::Unbounded => Bound::Included(base.clone()),
        };
        let end = match hi {
            Bound::Included(v) => Bound::Excluded(after_value(with(v))),
            Bound::Excluded(v) => Bound::Excluded(with(v)),
            Bound::Unbounded => match super::keys::prefix_end(&base) {
                Some(e) => Bound::Excluded(e),
                None => Bound::Unbounded,
            },
        };
        let range = (
            start.as_ref().map(Vec::as_slice),
            end.as_ref().map(Vec::as_slice),
        );
        let inside = in_spans(spans);
        let mut ahead = super::readahead::ReadAhead::default();
        for entry in self.store.index.range(self.txn, &range)? {
            let (k, _) = entry?;
            ahead.touch(k);
            let Some((_, item)) = self.split_entry(&k[base.len()..], 1) else {
                continue;
            };
            if inside(&item[..self.epk_len]) {
                out.push(self.item_key(item));
                if out.len() > limit {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Walks the entries of `path` (a single path, or a composite of `values` components)
    /// whose values start with the encoded `prefix` (a composite's leading components fixed
    /// by equality filters; empty for all), in order — backwards when `reverse` — calling
    /// `f(values, item)` for those inside `spans` (normalized: [`normalize_spans`]) until it
    /// returns false. `item` is the item's address, `EPK ‖ id` ([`IndexReader::item_key`]
    /// makes it a key); both slices borrow the entry, which lives as long as the transaction.
    /// With `from`, the walk starts at the entries of that value (all `values` components)
    /// instead of the first: a later page of an ORDER BY resumes where the last one ended.
    #[allow(clippy::too_many_arguments)]
    pub fn walk(
        &self,
        path: PathId,
        values: usize,
        (reverse, from): (bool, Option<&[u8]>),
        prefix: &[u8],
        spans: &[(Vec<u8>, Vec<u8>)],
        mut f: impl FnMut(&'t [u8], &'t [u8]) -> Result<bool>,
    ) -> Result<()> {
        let base = self.path_prefix(path);
        let mut start = base.clone();
        start.extend_from_slice(prefix);
        let mut end =
            super::keys::prefix_end(&start).unwrap_or_else(|| vec![0xFF; start.len() + 1]);
        if let Some(value) = from {
            // Values are self-delimiting, so the entries of `value` are those under it.
            let mut at = base.clone();
            at.extend_from_slice(value);
            if reverse {
                let after =
                    super::keys::prefix_end(&at).unwrap_or_else(|| vec![0xFF; at.len() + 1]);
                end = end.min(after);
            } else {
                start = start.max(at);
            }
        }
        if start >= end {
            return Ok(());
        }
        let range = super::keys::half_open(&start, &end);
        let inside = in_spans(spans);
        let mut visit = |k: &'t [u8]| -> Result<bool> {
            let Some((value, item)) = self.split_entry(&k[base.len()..], values) else {
                return Ok(true);
            };
            if !inside(&item[..self.epk_len]) {
                return Ok(true);
            }
            f(value, item)
        };
        if reverse {
            for entry in self.store.index.rev_range(self.txn, &range)? {
                let (k, _) = entry?;
                if !visit(k)? {
                    break;
                }
            }
        } else {
            for entry in self.store.index.range(self.txn, &range)? {
                let (k, _) = entry?;
                if !visit(k)? {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// `spans` (half-open, of EPKs as bytes or [`Epk`]s) sorted by their start, overlapping ones
/// merged: the form [`IndexReader::lookup`] and [`IndexReader::walk`] take, so that one
/// binary search places an EPK (a query may route to thousands of keys, each a span), and
/// the form routing gives so that no item is read twice.
pub fn normalize_spans<T: Ord>(mut spans: Vec<(T, T)>) -> Vec<(T, T)> {
    spans.sort_unstable();
    let mut merged: Vec<(T, T)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => {
                if b > last.1 {
                    last.1 = b;
                }
            }
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// A test of whether an EPK lies in one of `spans` (half-open, normalized:
/// [`normalize_spans`]). A fan-out covers the whole key space, and then no entry needs
/// comparing.
fn in_spans(spans: &[(Vec<u8>, Vec<u8>)]) -> impl Fn(&[u8]) -> bool + '_ {
    debug_assert!(
        spans.windows(2).all(|w| w[0].1 < w[1].0),
        "spans not normalized"
    );
    let everywhere =
        matches!(spans, [(a, b)] if a.is_empty() && b.as_slice() >= Epk::max().as_bytes());
    move |epk| {
        everywhere || {
            let after = spans.partition_point(|(a, _)| a.as_slice() <= epk);
            after > 0 && epk < spans[after - 1].1.as_slice()
        }
    }
}

/// The smallest key greater than every key that starts with `value_key` (a path prefix and
/// one encoded value): values are prefix-free, so only their own entries start with it.
fn after_value(mut value_key: Vec<u8>) -> Vec<u8> {
    match super::keys::prefix_end(&value_key) {
        Some(end) => end,
        None => {
            value_key.push(0xFF);
            value_key
        }
    }
}

/// Index keys in order, and documents per defined path.
#[cfg(feature = "test-harness")]
pub type IndexSnapshot = (Vec<Vec<u8>>, HashMap<PathId, u64>);

/// Entries of every document of a container under `layout`, rebuilt from the items: what
/// the index must equal after any sequence of writes (tests compare the two).
#[cfg(feature = "test-harness")]
pub fn rebuild_from_items(
    store: &Store,
    txn: &RoTxn,
    def: &ContainerDef,
    layout: &IndexLayout,
) -> Result<IndexSnapshot> {
    let mut keys = Vec::new();
    let mut defined: HashMap<PathId, u64> = HashMap::new();
    for item in store.stored_items(txn, def, None)? {
        let e = item?.entries(layout)?;
        keys.extend(e.keys.iter().map(<[u8]>::to_vec));
        for p in e.defined {
            *defined.entry(p).or_default() += 1;
        }
    }
    keys.sort_unstable();
    Ok((keys, defined))
}

/// The stored entries and counts of one generation (for the same comparison).
#[cfg(feature = "test-harness")]
pub fn stored_entries(
    store: &Store,
    txn: &RoTxn,
    cid: ContainerRid,
    generation: u32,
) -> Result<IndexSnapshot> {
    let prefix = generation_prefix(cid, generation);
    let end = super::keys::prefix_end(&prefix).unwrap_or_else(|| vec![0xFF; 9]);
    let mut keys = Vec::new();
    for entry in store
        .index
        .range(txn, &super::keys::half_open(&prefix, &end))?
    {
        keys.push(entry?.0.to_vec());
    }
    let mut defined = HashMap::new();
    for entry in store
        .index_counts
        .range(txn, &super::keys::half_open(&prefix, &end))?
    {
        let (k, v) = entry?;
        let mut path = [0u8; 8];
        path.copy_from_slice(k.get(8..16).unwrap_or(&[0; 8]));
        defined.insert(PathId(path), super::catalog::read_u64(v).unwrap_or(0));
    }
    Ok((keys, defined))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::catalog::LEGACY_STRING_BYTES;
    use serde_json::json;

    fn enc(v: Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode(Term::of(&v), STRING_BYTES, &mut out);
        out
    }

    #[test]
    fn encoding_follows_the_type_order_and_values() {
        let ordered = [
            json!(null),
            json!(false),
            json!(true),
            json!(-1e300),
            json!(-2.5),
            json!(-0.0),
            json!(0),
            json!(1),
            json!(1.5),
            json!(1e300),
            json!(""),
            json!("\u{0}"),
            json!("A"),
            json!("a"),
            json!("ab"),
            json!("b"),
            json!([1]),
            json!({"a": 1}),
        ];
        let mut undefined = Vec::new();
        encode(Term::Undefined, STRING_BYTES, &mut undefined);
        let mut prev = undefined;
        for v in ordered {
            let e = enc(v.clone());
            assert!(prev <= e, "{v} sorts after its predecessor");
            assert_eq!(value_len(&e, false), Some(e.len()), "{v}");
            prev = e;
        }
        assert_eq!(enc(json!(-0.0)), enc(json!(0)), "-0 is 0");
        assert_eq!(enc(json!(1)), enc(json!(1.0)));
    }

    #[test]
    fn exactness_of_encoded_values() {
        let inv = |v: &[u8]| v.iter().map(|b| !b).collect::<Vec<u8>>();
        for v in [
            json!(null),
            json!(true),
            json!(-2.5),
            json!(7),
            json!("a\u{0}b"),
            json!(""),
        ] {
            let e = enc(v.clone());
            assert!(is_exact(&e, 1), "{v}");
            assert!(is_exact(&inv(&e), 1), "{v} inverted");
        }
        for v in [json!(0), json!(-0.0), json!([1]), json!({"a": 1})] {
            assert!(!is_exact(&enc(v.clone()), 1), "{v}");
            assert!(!is_exact(&inv(&enc(v.clone())), 1), "{v} inverted");
        }
        assert_eq!(sortable_f64(0.0)[..], ZERO[..]);
        assert!(!is_exact(&enc(json!("x".repeat(STRING_BYTES + 1))), 1));
        let mut two = enc(json!("a"));
        two.extend(inv(&enc(json!(3))));
        assert!(is_exact(&two, 2));
        two.extend(enc(json!([])));
        assert!(!is_exact(&two, 3));
        let mut undefined = Vec::new();
        encode(Term::Undefined, STRING_BYTES, &mut undefined);
        assert!(is_exact(&undefined, 1));
        for v in [
            json!(null),
            json!(false),
            json!(2.5),
            json!(0),
            json!("a"),
            json!([]),
        ] {
            let e = enc(v.clone());
            assert_eq!(is_exact_value(&e), is_exact(&e, 1), "{v}");
        }
        let long = enc(json!("y".repeat(STRING_BYTES + 3)));
        assert!(!is_exact_value(&long));
    }

    #[test]
    fn long_strings_are_cut_but_stay_in_order() {
        let long_a = "x".repeat(STRING_BYTES) + "a";
        let long_b = "x".repeat(STRING_BYTES) + "b";
        let exact = "x".repeat(STRING_BYTES);
        assert_eq!(enc(json!(long_a)), enc(json!(long_b)));
        assert!(enc(json!(exact)) < enc(json!(long_a)));
        assert!(is_truncated(&enc(json!(long_a))));
        assert!(!is_truncated(&enc(json!(exact))));
        // A generation keeps the length it was made with.
        let mut legacy = Vec::new();
        encode(Term::Str(&long_a), LEGACY_STRING_BYTES, &mut legacy);
        assert!(!is_truncated(&legacy));
        assert_eq!(value_len(&legacy, false), Some(legacy.len()));
    }

    #[test]
    fn inverted_values_reverse_the_order_and_keep_their_length() {
        let a = enc(json!("abc"));
        let b = enc(json!("abd"));
        let inv = |v: &[u8]| v.iter().map(|b| !b).collect::<Vec<u8>>();
        assert!(inv(&a) > inv(&b));
        assert_eq!(value_len(&inv(&a), true), Some(a.len()));
    }

    #[test]
    fn entries_cover_indexed_nodes_and_count_scalar_terms() {
        let doc = json!({"id": "1", "tags": [{"name": "a"}, {"name": "a"}, 3], "o": {"x": null}});
        let policy = IndexingPolicy::default();
        let layout = IndexLayout::new(1, 0, &policy, STRING_BYTES);
        let e = layout.entries(&doc, &[0; 16], "1");
        assert_eq!(e.terms, policy.count_indexed_terms(&doc));
        // id, tags (array), tags/[] object ×2 → one, tags/[]/name "a" ×2 → one, 3, o, o/x
        assert_eq!(e.keys.len(), 7);
        assert_eq!(e.defined.len(), 4, "id, tags, o, o/x");
    }

    #[test]
    fn counting_entries_counts_what_computing_them_does() {
        let doc = json!({"id": "1", "n": 2, "tags": [{"name": "a"}, 3], "_ts": 5});
        let policy: IndexingPolicy = serde_json::from_value(json!({
            "compositeIndexes": [[{"path": "/n"}, {"path": "/_ts", "order": "descending"}]]
        }))
        .unwrap();
        for policy in [policy, IndexingPolicy::default(), IndexingPolicy::none()] {
            let layout = IndexLayout::new(1, 0, &policy, STRING_BYTES);
            let counted = layout.counted(&doc);
            assert_eq!(counted.terms, layout.entries(&doc, &[0; 16], "1").terms);
            assert!(counted.keys.len() == 0 && counted.defined.is_empty());
        }
    }
}
