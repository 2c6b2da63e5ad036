//! What a streamed page leaves for the next page of the same query: the index lookup's
//! candidates, and the items of a range it read in document order and stopped inside.
//!
//! A streamed query resumes from an item key or a document number in its continuation, and
//! each page would otherwise repeat two things the first one did:
//! - the index lookup, which reads every matching entry and sorts the item keys;
//! - without ORDER BY, a small range is delivered in document order ([`super::compute`]'s
//!   `DOCUMENT_ORDER_MAX_ITEMS`), which is not the key order its candidates come in, so a
//!   page reads every candidate in the range to sort them. Pages of 100 through a range of
//!   5,000 candidates read 5,000 items each.
//!
//! Both are kept here, for the snapshot they were made on only: the key carries the
//! container's change sequence and index generation and the query (text, parameters,
//! scope), so after any write a page looks up and reads afresh, as the first page did. The
//! service resumes from per-range state in its continuation instead; what a page returns
//! and charges is the same either way.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::candidates::Candidate;
use super::result::AccessView;
use crate::store::keys::{ContainerRid, RangeId};

/// Lookups and ranges kept at once, each (the oldest goes first).
const ENTRIES: usize = 16;
/// Bytes kept at once, each; one entry holding more than a quarter of it is not kept. A
/// range of `DOCUMENT_ORDER_MAX_ITEMS` items of 2 KB holds 10 MB; a lookup of 100,000
/// candidates about 8 MB.
const BUDGET_BYTES: usize = 64 << 20;

/// The snapshot and query a page ran: what kept state is valid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PageKey {
    pub(super) container: ContainerRid,
    /// The result cache's id of the query ([`super::cache::CacheKey::query`]).
    pub(super) query: u64,
    /// The container's change sequence (moves on every write).
    pub(super) version: u64,
    pub(super) index_generation: u32,
}

/// An index lookup's candidates (none read yet; `None` when a scan reads less) and how it
/// found them.
#[derive(Clone)]
pub(super) struct Lookup {
    pub(super) candidates: Option<Arc<[Candidate<'static>]>>,
    pub(super) access: AccessView,
    /// The candidates are exactly the items the probes are true for (see
    /// [`super::candidates::Selection::exact`]).
    pub(super) exact: bool,
}

/// A range's items in document order.
pub(super) type Order = Arc<[KeptItem]>;

pub(super) struct KeptItem {
    pub(super) number: u64,
    pub(super) key: Box<[u8]>,
    /// The stored record, as the page read it.
    pub(super) record: Box<[u8]>,
}

/// The state an engine keeps between pages (see the module comment).
#[derive(Default)]
pub struct BetweenPages {
    lookups: Mutex<Kept<PageKey, Lookup>>,
    orders: Mutex<Kept<(PageKey, RangeId), Order>>,
}

impl BetweenPages {
    pub(super) fn lookup(&self, key: &PageKey) -> Option<Lookup> {
        lock(&self.lookups).get(key)
    }

    pub(super) fn keep_lookup(&self, key: PageKey, lookup: Lookup) {
        let bytes = lookup.candidates.iter().flat_map(|c| c.iter());
        let bytes = bytes
            .map(|c| c.key.len() + std::mem::size_of::<Candidate>())
            .sum();
        lock(&self.lookups).put(key, lookup, bytes);
    }

    pub(super) fn order(&self, key: &PageKey, range: RangeId) -> Option<Order> {
        lock(&self.orders).get(&(key.clone(), range))
    }

    pub(super) fn keep_order(&self, key: PageKey, range: RangeId, order: Order) {
        let bytes = order.iter().map(|i| i.key.len() + i.record.len()).sum();
        lock(&self.orders).put((key, range), order, bytes);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Entries in the order they were kept, within [`ENTRIES`] and [`BUDGET_BYTES`].
struct Kept<K, V> {
    entries: VecDeque<(K, V, usize)>,
}

impl<K, V> Default for Kept<K, V> {
    fn default() -> Self {
        Kept {
            entries: VecDeque::new(),
        }
    }
}

impl<K: PartialEq, V: Clone> Kept<K, V> {
    fn get(&self, key: &K) -> Option<V> {
        self.entries
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(_, v, _)| v.clone())
    }

    /// Keeps `value` (of `bytes`) for `key`, unless it is too large, evicting the oldest.
    fn put(&mut self, key: K, value: V, bytes: usize) {
        if bytes > BUDGET_BYTES / 4 {
            return;
        }
        self.entries.retain(|(k, ..)| *k != key);
        self.entries.push_back((key, value, bytes));
        let mut total: usize = self.entries.iter().map(|(.., b)| b).sum();
        while self.entries.len() > ENTRIES || total > BUDGET_BYTES {
            match self.entries.pop_front() {
                Some((.., b)) => total -= b,
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(version: u64) -> PageKey {
        PageKey {
            container: 1,
            query: 7,
            version,
            index_generation: 0,
        }
    }

    fn order(n: u64, record_len: usize) -> Order {
        (0..n)
            .map(|i| KeptItem {
                number: i,
                key: vec![i as u8].into_boxed_slice(),
                record: vec![0; record_len].into_boxed_slice(),
            })
            .collect()
    }

    #[test]
    fn an_order_holds_only_for_its_exact_key() {
        let pages = BetweenPages::default();
        pages.keep_order(key(1), 0, order(3, 9));
        assert_eq!(pages.order(&key(1), 0).map(|o| o.len()), Some(3));
        assert!(pages.order(&key(2), 0).is_none(), "a write invalidates");
        assert!(pages.order(&key(1), 1).is_none(), "another range");
        assert!(pages.lookup(&key(1)).is_none(), "no lookup was kept");
        pages.keep_order(key(1), 0, order(4, 9));
        assert_eq!(pages.order(&key(1), 0).map(|o| o.len()), Some(4));
    }

    #[test]
    fn a_lookup_holds_only_for_its_exact_key() {
        let pages = BetweenPages::default();
        let candidates: Arc<[Candidate<'static>]> = (0..5u8)
            .map(|i| Candidate {
                key: vec![i],
                record: None,
            })
            .collect();
        let access = AccessView {
            kind: "index-lookup",
            indexes: Vec::new(),
            reason: String::new(),
        };
        let candidates = Some(candidates);
        pages.keep_lookup(
            key(1),
            Lookup {
                candidates,
                access,
                exact: false,
            },
        );
        let kept = pages.lookup(&key(1)).and_then(|l| l.candidates);
        assert_eq!(kept.map(|c| c.len()), Some(5));
        assert!(pages.lookup(&key(2)).is_none(), "a write invalidates");
    }

    #[test]
    fn the_oldest_entries_go_first_by_count_and_by_bytes() {
        let pages = BetweenPages::default();
        for range in 0..ENTRIES as RangeId + 2 {
            pages.keep_order(key(1), range, order(1, 9));
        }
        assert!(pages.order(&key(1), 0).is_none());
        assert!(pages.order(&key(1), 1).is_none());
        assert!(pages.order(&key(1), 2).is_some());
        // A quarter of the budget each: the fifth evicts the first.
        let pages = BetweenPages::default();
        let n = (BUDGET_BYTES / 4 / 101) as u64;
        for range in 0..5 {
            pages.keep_order(key(1), range, order(n, 100));
        }
        assert!(pages.order(&key(1), 0).is_none());
        assert!(pages.order(&key(1), 4).is_some());
        // Past a quarter: not kept.
        pages.keep_order(key(1), 9, order(n + 1, 100));
        assert!(pages.order(&key(1), 9).is_none());
    }
}
