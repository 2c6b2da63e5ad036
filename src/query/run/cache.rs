//! Complete results of queries that cannot stream — ORDER BY through a sort, GROUP BY,
//! DISTINCT, aggregates, OFFSET — kept so that their later pages are cut from the result the
//! first page computed instead of running the query again.
//!
//! The service resumes such queries from per-range state in the continuation; we compute
//! the whole result once (the cross-range merge needs it) and page through it. Without this
//! cache every page would recompute it, so draining a large sorted result would cost
//! pages × one full run. An entry holds only while its container is unchanged: the key
//! carries the container's change sequence, its physical partitions and the index
//! generation, so any write, split or index rebuild makes later pages compute afresh (which
//! stays correct: pages are windows of the result, as before).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::background::Computations;
use super::between_pages::BetweenPages;
pub use super::computed::{CacheKey, Computed};
use super::spill::Spill;

/// Entries kept at once (the oldest goes first).
const ENTRIES: usize = 8;
/// JSON bytes of results kept at once; a larger result is not cached.
const BUDGET_BYTES: usize = 256 << 20;

/// The cache an engine keeps (see the module comment), in memory and, with a [`Spill`],
/// on disk for later pages in other processes too.
#[derive(Default)]
pub struct ResultCache {
    entries: Mutex<VecDeque<(CacheKey, Arc<Computed>)>>,
    spill: Option<Spill>,
    /// Results still being computed after the page that started them returned (see
    /// [`super::background`]).
    pub(super) computations: Computations,
    /// What streamed pages leave for the next page of their query (see
    /// [`super::between_pages`]).
    pub(super) between_pages: BetweenPages,
}

impl ResultCache {
    /// A cache that also keeps results in files under `dir`.
    pub fn spilling_to(dir: std::path::PathBuf) -> ResultCache {
        ResultCache {
            entries: Mutex::default(),
            spill: Some(Spill::new(dir)),
            computations: Computations::default(),
            between_pages: BetweenPages::default(),
        }
    }

    /// Waits until the results still being computed are kept (see
    /// [`Computations::settle`]).
    pub fn settle(&self) -> crate::error::Result<bool> {
        self.computations.settle()
    }

    /// Stops the results still being computed (the engine is closing).
    pub fn cancel_computations(&self) {
        self.computations.cancel_all();
    }

    /// The window of a result kept on disk for `key` that a page from result `skip` of at
    /// most `max_items` results needs (see [`Spill::window`]).
    pub fn spilled(&self, key: &CacheKey, page: (usize, usize)) -> Option<Computed> {
        self.spill.as_ref()?.window(key, page)
    }

    pub fn get(&self, key: &CacheKey) -> Option<Arc<Computed>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, c)| c.clone())
    }

    /// Keeps `computed` (a whole result) for `key`: on disk with a [`Spill`], and in memory
    /// unless it is too large, evicting the oldest entries.
    pub fn put(&self, key: CacheKey, computed: Arc<Computed>) {
        if !computed.is_whole() {
            return;
        }
        // Each page of a result held in memory puts it again (the newest entry is evicted
        // last); only a new one goes to disk.
        let known = self
            .get(&key)
            .is_some_and(|held| Arc::ptr_eq(&held, &computed));
        if let Some(spill) = self.spill.as_ref().filter(|_| !known) {
            spill.put(&key, &computed);
        }
        if computed.bytes > BUDGET_BYTES / 2 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        // An older result of the same query on the same container is stale now.
        entries.retain(|(k, _)| !(k.container == key.container && k.query == key.query));
        entries.push_back((key, computed));
        let mut total: usize = entries.iter().map(|(_, c)| c.bytes).sum();
        while entries.len() > ENTRIES || total > BUDGET_BYTES {
            match entries.pop_front() {
                Some((_, c)) => total -= c.bytes,
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(query: u64, version: u64) -> CacheKey {
        CacheKey {
            container: 1,
            query,
            version,
            index_generation: 0,
            ranges: vec![0],
        }
    }

    fn computed(n: usize) -> Arc<Computed> {
        Arc::new(Computed::numbered(n))
    }

    #[test]
    fn a_result_holds_only_for_its_exact_key() {
        let cache = ResultCache::default();
        cache.put(key(7, 1), computed(3));
        assert_eq!(cache.get(&key(7, 1)).map(|c| c.results.len()), Some(3));
        assert!(cache.get(&key(7, 2)).is_none(), "a write invalidates");
        assert!(cache.get(&key(8, 1)).is_none());
        // A newer run of the same query replaces the old one.
        cache.put(key(7, 2), computed(4));
        assert!(cache.get(&key(7, 1)).is_none());
        assert_eq!(cache.get(&key(7, 2)).map(|c| c.results.len()), Some(4));
    }

    #[test]
    fn the_oldest_entries_go_first() {
        let cache = ResultCache::default();
        for q in 0..(ENTRIES as u64 + 2) {
            cache.put(key(q, 0), computed(1));
        }
        assert!(cache.get(&key(0, 0)).is_none());
        assert!(cache.get(&key(1, 0)).is_none());
        assert!(cache.get(&key(ENTRIES as u64 + 1, 0)).is_some());
    }
}
