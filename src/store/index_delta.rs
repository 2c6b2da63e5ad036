//! The index changes of one write transaction, buffered and written at its commit.
//!
//! A write adds and removes index entries by the dozen, one per indexed node. Written as they
//! come, each would land on a random page of the index. Instead a transaction buffers its
//! operations and, at commit, writes them in key order: neighbouring entries share the pages
//! LMDB walks and dirties, and entries past the database's last key are appended
//! ([`Tail`]). Per-path document counts are summed in memory and added once.
//!
//! Operations are grouped by the key's first [`GROUP`] bytes: container, generation and path
//! (or composite index), so one group per indexed path. Each group is sorted on its own, and
//! the groups are written in the order of their keys, which is the order of the whole. The
//! grouping is for the memory the sort reads: a 50,000-item import buffers about 1.5 million
//! operations and 100 MB of keys, and putting them in key order reads the keys in an order
//! unrelated to the one they were made in. Over one buffer for everything each of those
//! reads missed the caches (most of the commit's time in a profile of an import); within one
//! path's buffer, a few MB, they mostly hit.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use heed::RwTxn;

use super::Store;
use super::codec::be_words;
use super::index::{DocEntries, FoldHasher, PathId, count_key};
use super::keys::ContainerRid;
use super::packed_keys::{PackedKeys, reserve};
use super::tail::Tail;
use crate::error::{Error, Result};

/// Key bytes that name an operation's group: container, generation and path.
const GROUP: usize = 16;

/// A group's key bytes, zero-padded, and how many of them the keys really have (fewer than
/// [`GROUP`] only for a key that short, which index keys never are).
type GroupKey = ([u8; GROUP], u8);

/// Key bytes after the group's that the sort compares as integers before it reads the rest
/// of a key: the value, the EPK and mostly the id.
const HEAD: usize = 16 * HEAD_WORDS;
const HEAD_WORDS: usize = 3;

type Fold = BuildHasherDefault<FoldHasher>;

/// Index changes of one write transaction, applied at commit.
#[derive(Default)]
pub struct IndexDelta {
    defined: HashMap<(u32, PathId), i64, Fold>,
    scratch: Scratch,
}

/// The buffers of an [`IndexDelta`], reused from one transaction to the next.
#[derive(Default)]
pub struct Scratch {
    /// Where each group of this transaction is in `groups`.
    placed: HashMap<GroupKey, usize, Fold>,
    /// The groups: the first `used` are this transaction's, the rest spare buffers.
    groups: Vec<(GroupKey, Group)>,
    used: usize,
    sorted: Sorted,
    /// The writing thread's own, for the groups it sorts while a second thread sorts too.
    sorted_here: Sorted,
    /// Buffers for groups' operations in key order: one for a delta sorted by the thread
    /// that writes it, up to about 2 × [`SORTED_AHEAD`] + 3 when a second thread sorts.
    ordered: Vec<Ordered>,
}

/// The operations of one group.
#[derive(Default)]
struct Group {
    /// The keys' bytes after the group's, in the order the operations came.
    arena: Arena,
    /// (where in `arena`, put or delete) per operation, in the order they came.
    ops: Vec<(Span, bool)>,
}

/// One group's operations in key order, a buffer shared by the groups (each is sorted and
/// written in turn, so it holds one group's at a time).
#[derive(Default)]
struct Sorted {
    /// The operations by key: the first [`HEAD`] bytes of the rest as three integers, then
    /// the position in the group's `ops`.
    order: Vec<(u128, u128, u128, u32)>,
    /// The operations to write, as positions in `ops`: for each key only its last.
    last: Vec<u32>,
}

/// One group's operations in key order, each the last on its key, with their whole keys
/// back to back: what the puts read, front to back.
#[derive(Default)]
struct Ordered {
    keys: PackedKeys,
    /// Per operation, whether it is a put.
    puts: Vec<bool>,
}

/// Operations a delta needs before its groups are sorted on a second thread while this one
/// writes: below it, starting the thread costs more than it saves.
const SORT_BESIDE: usize = 16_384;

/// Groups the sorting thread may have sorted and not yet handed over. Groups differ in size
/// (in a 20,000-item import, a path every document has holds 20,000 entries, and one inside
/// an array of three elements 60,000), and a large group sorts slower than a small one
/// writes: one group ahead, the writer waited for the sort at each large group after a small
/// one (about 40 ms of an import's 70 ms of waiting, in a measurement). Each buffer holds
/// one group's keys, so this bounds what the hand-over adds to the delta's memory; the
/// writing thread holds at most as many groups it sorted ahead of their turn.
const SORTED_AHEAD: usize = 4;

/// Bytes kept back to back in chunks that never move. A growing `Vec` would copy everything
/// it holds each time it doubled: a tenth of an import's time, in a profile, went to that.
#[derive(Default)]
struct Arena {
    chunks: Vec<Vec<u8>>,
    /// Chunks in use: the last of them is the one being filled, the rest are kept for reuse.
    used: usize,
}

/// Where some bytes are in an [`Arena`]: chunk, offset, length.
#[derive(Clone, Copy)]
struct Span(u32, u32, u32);

/// Bytes per arena chunk (a key that is longer gets a chunk of its own size).
const CHUNK: usize = 256 * 1024;

impl Arena {
    fn push(&mut self, bytes: &[u8]) -> Span {
        let fits = self.used > 0 && {
            let chunk = &self.chunks[self.used - 1];
            chunk.capacity() - chunk.len() >= bytes.len()
        };
        if !fits {
            if self.used == self.chunks.len() {
                self.chunks.push(Vec::with_capacity(CHUNK.max(bytes.len())));
            }
            let chunk = &mut self.chunks[self.used];
            chunk.clear();
            chunk.reserve(bytes.len());
            self.used += 1;
        }
        let chunk = &mut self.chunks[self.used - 1];
        let at = chunk.len();
        chunk.extend_from_slice(bytes);
        Span((self.used - 1) as u32, at as u32, bytes.len() as u32)
    }

    fn get(&self, Span(chunk, at, len): Span) -> &[u8] {
        &self.chunks[chunk as usize][at as usize..(at + len) as usize]
    }

    fn clear(&mut self) {
        self.used = 0;
    }

    /// Bytes held in the chunks in use.
    fn len(&self) -> usize {
        self.chunks[..self.used].iter().map(Vec::len).sum()
    }
}

impl IndexDelta {
    /// A delta using the buffers the store kept from the last transaction.
    pub fn new(store: &Store) -> IndexDelta {
        let scratch = std::mem::take(
            &mut *store
                .index_scratch
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        IndexDelta {
            defined: HashMap::default(),
            scratch,
        }
    }

    /// Replaces the entries of `old` by those of `new` (either may be absent): only the
    /// difference touches the database, so a replace that changes one property rewrites
    /// one entry.
    pub fn apply(&mut self, generation: u32, old: Option<&DocEntries>, new: Option<&DocEntries>) {
        let empty = DocEntries::default();
        let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
        let (mut i, mut j) = (0, 0);
        while i < old.keys.len() || j < new.keys.len() {
            match (old.keys.get(i), new.keys.get(j)) {
                (Some(a), Some(b)) if a == b => {
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a < b => {
                    self.scratch.push(a, false);
                    i += 1;
                }
                (Some(a), None) => {
                    self.scratch.push(a, false);
                    i += 1;
                }
                (_, Some(b)) => {
                    self.scratch.push(b, true);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        for path in &old.defined {
            *self.defined.entry((generation, *path)).or_default() -= 1;
        }
        for path in &new.defined {
            *self.defined.entry((generation, *path)).or_default() += 1;
        }
    }

    /// Writes the buffered entries in key order (the last operation on a key decides) and
    /// the summed per-path counts.
    pub fn commit(&mut self, store: &Store, txn: &mut RwTxn, cid: ContainerRid) -> Result<()> {
        self.scratch.write(store, txn)?;
        self.scratch.give_back(store);
        self.write_counts(store, txn, cid)
    }

    /// Adds the summed per-path document counts to the stored ones.
    fn write_counts(&mut self, store: &Store, txn: &mut RwTxn, cid: ContainerRid) -> Result<()> {
        for ((generation, path), delta) in self.defined.drain() {
            if delta == 0 {
                continue;
            }
            let key = count_key(cid, generation, path);
            let current = store
                .index_counts
                .get(txn, &key)?
                .and_then(super::catalog::read_u64)
                .unwrap_or(0);
            let next = (current as i64 + delta).max(0) as u64;
            if next == 0 {
                store.index_counts.delete(txn, &key)?;
            } else {
                store.index_counts.put(txn, &key, &next.to_le_bytes())?;
            }
        }
        Ok(())
    }
}

impl Scratch {
    /// Buffers a put or a delete of `key`.
    fn push(&mut self, key: &[u8], put: bool) {
        let cut = key.len().min(GROUP);
        let mut bytes = [0u8; GROUP];
        bytes[..cut].copy_from_slice(&key[..cut]);
        let group = (bytes, cut as u8);
        let at = match self.placed.get(&group) {
            Some(&at) => at,
            None => {
                if self.used == self.groups.len() {
                    self.groups.push((group, Group::default()));
                } else {
                    self.groups[self.used].0 = group;
                }
                self.placed.insert(group, self.used);
                self.used += 1;
                self.used - 1
            }
        };
        let g = &mut self.groups[at].1;
        let span = g.arena.push(&key[cut..]);
        g.ops.push((span, put));
    }

    /// Writes every group's operations in key order, group after group. Sorting a group
    /// reads its keys all over its arena; for a large delta a second thread sorts groups
    /// ahead of the puts, and this one, when the next group is not sorted yet, sorts a later
    /// one rather than wait (sorting takes longer than writing: alone, the second thread
    /// kept this one waiting for about 40 % of a large commit).
    fn write(&mut self, store: &Store, txn: &mut RwTxn) -> Result<()> {
        let Scratch {
            groups,
            used,
            sorted,
            sorted_here,
            ordered,
            ..
        } = self;
        let groups = &mut groups[..*used];
        // Group keys order the groups as their keys order the entries: a shorter group key
        // is a whole key, which sorts before the keys it is a prefix of.
        groups.sort_unstable_by_key(|a| a.0);
        let mut tail = Tail::of(&store.index, txn)?;
        let ops: usize = groups.iter().map(|(_, g)| g.ops.len()).sum();
        if ops < SORT_BESIDE {
            let mut next = ordered.pop().unwrap_or_default();
            let written = groups.iter().try_for_each(|(name, group)| {
                sorted.order(name, group, &mut next);
                next.write(store, txn, &mut tail)
            });
            ordered.push(next);
            return written;
        }
        let groups = &*groups;
        let claimed = AtomicUsize::new(0);
        let claim = || {
            let at = claimed.fetch_add(1, Ordering::Relaxed);
            (at < groups.len()).then_some(at)
        };
        let mut spare = std::mem::take(ordered);
        // This thread's own buffers; the rest go to the sorting thread.
        let mut here: Vec<Ordered> = spare.split_off(spare.len().saturating_sub(1));
        std::thread::scope(|s| {
            // Buffers go round: sorted by the second thread, written here, given back.
            let (send, ready) = mpsc::sync_channel::<(usize, Ordered)>(SORTED_AHEAD);
            let (give_back, reuse) = mpsc::channel::<Ordered>();
            for buffer in spare {
                let _ = give_back.send(buffer);
            }
            let claim = &claim;
            let sorter = s.spawn(move || {
                while let Some(at) = claim() {
                    let (name, group) = &groups[at];
                    let mut next = reuse.try_recv().unwrap_or_default();
                    sorted.order(name, group, &mut next);
                    if send.send((at, next)).is_err() {
                        break; // the writer failed
                    }
                }
                reuse
            });
            // Groups sorted before their turn, by either thread.
            let mut early: BTreeMap<usize, Ordered> = BTreeMap::new();
            let written = (0..groups.len()).try_for_each(|at| {
                let next = loop {
                    if let Some(next) = early.remove(&at) {
                        break next;
                    }
                    let (sorted_at, next) = match ready.try_recv() {
                        Ok(sorted) => sorted,
                        Err(_) => match (early.len() < SORTED_AHEAD).then(claim).flatten() {
                            Some(mine) => {
                                let (name, group) = &groups[mine];
                                let mut next = here.pop().unwrap_or_default();
                                sorted_here.order(name, group, &mut next);
                                (mine, next)
                            }
                            None => ready.recv().map_err(|_| {
                                Error::internal("the thread sorting the index changes stopped")
                            })?,
                        },
                    };
                    early.insert(sorted_at, next);
                };
                next.write(store, txn, &mut tail)?;
                // Buffers come back here for this thread's sorting first, then for the
                // sorting thread's, and whatever it no longer needs below.
                if here.is_empty() {
                    here.push(next);
                } else {
                    let _ = give_back.send(next);
                }
                Ok(())
            });
            drop(ready);
            let reuse = sorter
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            ordered.extend(reuse.try_iter());
            ordered.extend(here);
            ordered.extend(early.into_values());
            written
        })
    }

    /// Empties the buffers and hands them back to the store for the next transaction.
    fn give_back(&mut self, store: &Store) {
        for (_, group) in &mut self.groups[..self.used] {
            group.clear();
        }
        self.used = 0;
        self.placed.clear();
        std::mem::swap(
            &mut *store
                .index_scratch
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
            self,
        );
    }
}

impl Group {
    fn clear(&mut self) {
        self.arena.clear();
        self.ops.clear();
    }
}

impl Sorted {
    /// Fills `order` with the operations of `group` sorted by key, then by the order they
    /// were made, and `last` with the last operation on each key, in key order.
    fn sort(&mut self, group: &Group) {
        let Sorted { order, last } = self;
        let (arena, ops) = (&group.arena, &group.ops);
        let rest = |i: u32| arena.get(ops[i as usize].0);
        // Most comparisons never read the arena: the first HEAD bytes are held in `order`.
        order.clear();
        reserve(order, ops.len());
        order.extend((0..ops.len() as u32).map(|i| {
            // Zero-padded, so a key shorter than the head sorts before its extensions
            // (the tie is settled by length below).
            let [a, b, c] = be_words::<HEAD_WORDS>(rest(i));
            (a, b, c, i)
        }));
        order.sort_unstable();
        // Keys with equal heads: order them by the bytes past the head (a key no longer than
        // the head is a prefix of the others and sorts first), then by the order the
        // operations were made.
        let past_head = |i: u32| {
            let r = rest(i);
            (
                r.len() > HEAD,
                r.get(HEAD..).unwrap_or_default(),
                r.len(),
                i,
            )
        };
        let mut at = 0;
        while at < order.len() {
            let mut end = at + 1;
            while end < order.len() && same_head(&order[end], &order[at]) {
                end += 1;
            }
            if end - at > 1 {
                order[at..end].sort_unstable_by(|x, y| {
                    let (xl, xr, xn, xi) = past_head(x.3);
                    let (yl, yr, yn, yi) = past_head(y.3);
                    match (xl, yl) {
                        (true, true) => xr.cmp(yr).then(xi.cmp(&yi)),
                        _ => xn.cmp(&yn).then(xi.cmp(&yi)),
                    }
                });
            }
            at = end;
        }
        // Equal keys are neighbours with equal heads: the arena is read only when heads match.
        last.clear();
        reserve(last, order.len());
        for (n, x) in order.iter().enumerate() {
            let superseded = order
                .get(n + 1)
                .is_some_and(|y| same_head(x, y) && rest(x.3) == rest(y.3));
            if !superseded {
                last.push(x.3);
            }
        }
    }

    /// `group`'s operations in key order (the last on each key) into `out`, whole keys.
    fn order(&mut self, (bytes, len): &GroupKey, group: &Group, out: &mut Ordered) {
        self.sort(group);
        let name = &bytes[..usize::from(*len)];
        out.keys.clear();
        out.puts.clear();
        let n = self.last.len();
        out.keys.reserve(n, group.arena.len() + n * name.len());
        reserve(&mut out.puts, n);
        for &i in &self.last {
            let (span, put) = group.ops[i as usize];
            out.keys.push(&[name, group.arena.get(span)]);
            out.puts.push(put);
        }
    }
}

impl Ordered {
    /// The operations with their keys, in key order.
    fn iter(&self) -> impl Iterator<Item = (&[u8], bool)> {
        self.keys.iter().zip(self.puts.iter().copied())
    }

    /// Writes the operations: deletes first, then the puts through one cursor (LMDB
    /// searches the cursor's current leaf page before descending from the root, and
    /// consecutive entries mostly share it). Each key has one operation, so the two can be
    /// apart.
    fn write(&self, store: &Store, txn: &mut RwTxn, tail: &mut Tail) -> Result<()> {
        for (key, put) in self.iter() {
            if !put {
                store.index.delete(txn, key)?;
            }
        }
        let mut cursor = store.index.iter_mut(txn)?;
        for (key, put) in self.iter() {
            if put {
                tail.put_entry(&mut cursor, key)?;
            }
        }
        Ok(())
    }
}

fn same_head(x: &(u128, u128, u128, u32), y: &(u128, u128, u128, u32)) -> bool {
    (x.0, x.1, x.2) == (y.0, y.1, y.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of `group` (16 bytes, as index keys have) followed by `rest`.
    fn key(group: u8, rest: &[u8]) -> Vec<u8> {
        let mut k = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, group];
        k.extend_from_slice(rest);
        k
    }

    fn entries(keys: &[&Vec<u8>]) -> DocEntries {
        DocEntries {
            keys: keys.iter().collect(),
            ..DocEntries::default()
        }
    }

    fn stored(store: &Store) -> Vec<Vec<u8>> {
        let txn = store.read_txn().expect("read");
        store
            .index
            .iter(&txn)
            .expect("iter")
            .map(|e| e.expect("entry").0.to_vec())
            .collect()
    }

    fn commit(store: &Store, delta: &mut IndexDelta) {
        let mut txn = store.write_txn().expect("write");
        delta.commit(store, &mut txn, 1).expect("commit");
        txn.commit().expect("commit");
    }

    #[test]
    fn operations_are_written_in_key_order_and_the_last_on_a_key_decides() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path()).expect("open");
        let long = [b'x'; HEAD + 7];
        let (a, b, c) = (key(2, b"a"), key(1, b"b"), key(2, &long));
        let mut delta = IndexDelta::new(&store);
        delta.apply(0, None, Some(&entries(&[&a, &b, &c])));
        // The same document again: nothing changes.
        delta.apply(0, Some(&entries(&[&a])), Some(&entries(&[&a])));
        commit(&store, &mut delta);
        assert_eq!(stored(&store), vec![b.clone(), a.clone(), c.clone()]);

        // A key deleted then put again stays; one put then deleted goes; keys that share
        // their head (the first HEAD bytes past the group) are told apart by the rest.
        let (c2, d) = (key(2, &[&long[..], b"y"].concat()), key(3, b""));
        let mut delta = IndexDelta::new(&store);
        delta.apply(0, Some(&entries(&[&a, &b])), None);
        delta.apply(0, None, Some(&entries(&[&a, &c2, &d])));
        delta.apply(0, Some(&entries(&[&d])), None);
        commit(&store, &mut delta);
        assert_eq!(stored(&store), vec![a, c, c2]);
    }

    #[test]
    fn keys_shorter_than_a_group_sort_before_their_extensions() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path()).expect("open");
        let whole = key(5, b"");
        let short = whole[..10].to_vec();
        let shorter = whole[..3].to_vec();
        let mut delta = IndexDelta::new(&store);
        delta.apply(0, None, Some(&entries(&[&whole, &short])));
        delta.apply(0, None, Some(&entries(&[&shorter])));
        commit(&store, &mut delta);
        assert_eq!(stored(&store), vec![shorter, short, whole]);
    }

    #[test]
    fn a_large_delta_sorted_on_two_threads_writes_what_one_would() {
        // Enough operations for the second thread, over groups of very different sizes so
        // that the writing thread sorts some of them itself; two commits, the second
        // reusing the first's buffers, deleting some keys and putting others.
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path()).expect("open");
        let mut expected = std::collections::BTreeSet::new();
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..2 {
            let mut delta = IndexDelta::new(&store);
            let mut ops = 0;
            while ops < 2 * SORT_BESIDE {
                let group = (next() % 97) as u8;
                let n = if group.is_multiple_of(7) { 40 } else { 1 };
                let keys: Vec<Vec<u8>> = (0..n)
                    .map(|_| key(group, &(next() % 5_000).to_be_bytes()))
                    .collect();
                let refs: Vec<&Vec<u8>> = keys.iter().collect();
                let put = round == 0 || next() % 3 > 0;
                let mut doc = entries(&refs);
                doc.keys.sort();
                if put {
                    delta.apply(0, None, Some(&doc));
                } else {
                    delta.apply(0, Some(&doc), None);
                }
                for k in keys {
                    if put {
                        expected.insert(k);
                    } else {
                        expected.remove(&k);
                    }
                }
                ops += n;
            }
            commit(&store, &mut delta);
            assert_eq!(stored(&store), expected.iter().cloned().collect::<Vec<_>>());
        }
    }
}
