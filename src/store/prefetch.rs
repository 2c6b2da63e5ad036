//! Reading the items an index lookup selected ahead of the query, on helper threads, when
//! they are not in memory.
//!
//! The store's map is read without read-around (see [`super::readahead`]), so a lookup of
//! items that are not in memory waits for one 4 KB read per page its descent misses, one
//! after the other: on this machine's disk about 50 µs each, three or four per item. A
//! disk serves many reads at once. So when an item a query reads by key, of several it
//! will read, was not in memory (the first read, and one in 16 after it, are timed against
//! [`COLD_READ`]), [`PREFETCH_THREADS`] threads read the ones after it in the same order
//! beside the query, each from its own read transaction: their page
//! faults overlap, and the query finds the pages in memory or on their way. They only
//! read, and only what the query reads next (at most 16,384 items); they stop when the
//! query drops the [`ItemPrefetch`] it was given. At most 32 such threads run at once over
//! every query, each holding one of the environment's reader slots.
//!
//! Items in memory are never prefetched: a lookup takes about 0.25 µs there, and the
//! threads would only cost their start.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use heed::{Env, WithoutTls};

use super::packed_keys::PackedKeys;
use super::{Db, Store};

/// Threads reading ahead of one query: reads in flight at once.
pub const PREFETCH_THREADS: usize = 8;

/// Fewer keys than this are read by the query alone: threads would start for little (an
/// item from the disk takes three or four faults of about 50 µs; starting the threads
/// about 100 µs).
pub const PREFETCH_MIN_KEYS: usize = 8;

/// At most this many keys are read ahead at a time (a page of a query reads a few thousand
/// items at most, and the next page starts its own).
pub const PREFETCH_MAX_KEYS: usize = 16_384;

/// Helper threads alive at once, over every query: each holds one of the environment's 254
/// reader slots, and the queries themselves need theirs.
const MAX_ACTIVE_THREADS: usize = 32;

/// Helper threads alive now.
static ACTIVE_THREADS: AtomicUsize = AtomicUsize::new(0);

/// A helper thread's place among [`ACTIVE_THREADS`], given back when it ends.
struct Slot;

impl Slot {
    fn take() -> Option<Slot> {
        let before = ACTIVE_THREADS.fetch_add(1, Ordering::Relaxed);
        if before >= MAX_ACTIVE_THREADS {
            ACTIVE_THREADS.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        ACTIVE_THREADS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A read of an item slower than this went to the disk: an item in memory takes about
/// 0.25 µs, a page fault tens of microseconds.
pub const COLD_READ: Duration = Duration::from_micros(15);

/// Reads of many items by key in order, watched: the first read and one in
/// [`SAMPLE_EVERY`] after it are timed, and when a timed read went to the disk while no
/// helper threads are reading (none started yet, or they read every key they were given),
/// the keys after it are read ahead until the watch is dropped or the next start. Owns
/// what the threads need, so an iterator can hold it past the store borrow it was made
/// from.
pub struct ColdWatch {
    /// `None`: too few keys to watch.
    prefetcher: Option<ItemPrefetcher>,
    ahead: Option<ItemPrefetch>,
    reads: u32,
    /// A read that takes this long went to the disk ([`COLD_READ`]).
    cold_after: Duration,
}

/// Reads timed: one in this many (a clock read costs tens of nanoseconds, an item read in
/// memory about 250). A query that an earlier page's helpers read ahead for finds its
/// first items in memory, and the items after them not: a later sample notices.
const SAMPLE_EVERY: u32 = 16;

impl ColdWatch {
    /// A watch over reads of `keys` items (fewer than [`PREFETCH_MIN_KEYS`]: none).
    pub fn new(store: &Store, keys: usize) -> ColdWatch {
        ColdWatch {
            prefetcher: (keys >= PREFETCH_MIN_KEYS).then(|| store.item_prefetcher()),
            ahead: None,
            reads: 0,
            cold_after: COLD_READ,
        }
    }

    /// Runs `read`, an item's read; when it is timed, took [`COLD_READ`] or longer and no
    /// threads are reading ahead, starts reading the keys `rest` gives ahead.
    pub fn read<'k, T, I: Iterator<Item = &'k [u8]>>(
        &mut self,
        read: impl FnOnce() -> T,
        rest: impl FnOnce() -> I,
    ) -> T {
        let timed = self.prefetcher.is_some()
            && self.reads.is_multiple_of(SAMPLE_EVERY)
            && self.ahead.as_ref().is_none_or(ItemPrefetch::finished);
        self.reads = self.reads.wrapping_add(1);
        if !timed {
            return read();
        }
        let started = Instant::now();
        let out = read();
        if started.elapsed() >= self.cold_after
            && let Some(prefetcher) = &self.prefetcher
        {
            self.ahead = Some(prefetcher.start(rest()));
        }
        out
    }
}

/// Starts helper threads reading items (see the module comment).
pub struct ItemPrefetcher {
    env: Env<WithoutTls>,
    items: Db,
}

/// Items being read ahead of a query; dropping it stops the threads and waits for them
/// (each ends after the read it is in), so none holds the environment open once the query
/// has returned: a store closed after it (a test's engine, a compaction) can open again.
pub struct ItemPrefetch {
    stop: Arc<AtomicBool>,
    /// The next key a thread takes: past the last, every key was read.
    next: Arc<AtomicUsize>,
    keys: usize,
    /// Each thread gives back how many items it found.
    threads: Vec<std::thread::JoinHandle<usize>>,
}

impl ItemPrefetch {
    /// Whether the threads have taken every key they were given.
    fn finished(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.keys
    }

    /// Waits for the threads to read every key; the items they found.
    #[cfg(test)]
    fn join(mut self) -> usize {
        std::mem::take(&mut self.threads)
            .into_iter()
            .map(|t| t.join().unwrap_or(0))
            .sum()
    }
}

impl Drop for ItemPrefetch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            // A thread that panicked read nothing more: the query has what it read itself.
            let _ = thread.join();
        }
    }
}

impl Store {
    /// What starts helper threads reading this store's items (see the module comment).
    pub fn item_prefetcher(&self) -> ItemPrefetcher {
        ItemPrefetcher {
            env: self.env.clone(),
            items: self.items,
        }
    }
}

impl ItemPrefetcher {
    /// Reads the items at `keys` (item keys, in the order the query reads them) on
    /// [`PREFETCH_THREADS`] threads, in order, until every one is read or the returned
    /// guard is dropped.
    pub fn start<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> ItemPrefetch {
        let mut list = PackedKeys::default();
        for key in keys.take(PREFETCH_MAX_KEYS) {
            list.push(&[key]);
        }
        let list = Arc::new(list);
        let next = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::with_capacity(PREFETCH_THREADS);
        for _ in 0..PREFETCH_THREADS {
            let Some(slot) = Slot::take() else {
                // As many threads read ahead for other queries as may: read with fewer.
                break;
            };
            let (env, items) = (self.env.clone(), self.items);
            let (list, next, stop) = (list.clone(), next.clone(), stop.clone());
            let spawned = std::thread::Builder::new()
                .name("item-prefetch".into())
                .spawn(move || {
                    let _slot = slot;
                    // A thread that cannot read stops: the query reads the items anyway.
                    let Ok(txn) = env.read_txn() else { return 0 };
                    let mut found = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(key) = list.get(i) else { break };
                        if let Ok(Some(record)) = items.get(&txn, key) {
                            touch(record);
                            found += 1;
                        }
                    }
                    found
                });
            match spawned {
                Ok(thread) => threads.push(thread),
                // Out of threads: those started (if any) read ahead alone.
                Err(_) => break,
            }
        }
        let keys = list.len();
        ItemPrefetch {
            stop,
            next,
            keys,
            threads,
        }
    }
}

/// Reads a byte of every page of a record, so that a record on overflow pages is in memory
/// too (one in a leaf page is already: finding it read the page).
fn touch(record: &[u8]) {
    for at in (0..record.len()).step_by(4096) {
        std::hint::black_box(record[at]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys;

    #[test]
    fn the_threads_read_every_key_given() {
        let (_dir, store, keys) = crate::store::store_with_records(500);
        let missing = keys::epk_bound_bytes(7, b"none");
        let given = keys.iter().map(Vec::as_slice).chain([missing.as_slice()]);
        assert_eq!(store.item_prefetcher().start(given).join(), 500);
    }

    #[test]
    fn a_store_closed_after_reading_ahead_opens_again() {
        let (dir, store, keys) = crate::store::store_with_records(5000);
        let ahead = store
            .item_prefetcher()
            .start(keys.iter().map(Vec::as_slice));
        // Dropped while its threads read: they are stopped and gone with it.
        drop(ahead);
        drop(store);
        Store::open(dir.path()).expect("no thread holds the environment open");
    }

    #[test]
    fn only_a_slow_first_read_of_many_starts_reading_ahead() {
        let (_dir, store, keys) = crate::store::store_with_records(PREFETCH_MIN_KEYS);
        let asked = std::cell::Cell::new(0);
        let counted = || {
            asked.set(asked.get() + 1);
            keys[1..].iter().map(Vec::as_slice)
        };
        // The thresholds make every read slow, or none: no test depends on a clock.
        let watch = |keys: usize, cold_after: Duration| ColdWatch {
            cold_after,
            ..ColdWatch::new(&store, keys)
        };

        let mut slow = watch(keys.len(), Duration::ZERO);
        slow.read(|| (), counted);
        assert_eq!(asked.get(), 1, "a slow first read starts it");
        if let Some(ahead) = slow.ahead.take() {
            // Its threads read every key: the next timed read may start them again.
            assert_eq!(ahead.join(), keys.len() - 1);
        }
        for _ in 1..SAMPLE_EVERY {
            slow.read(|| (), counted);
        }
        assert_eq!(asked.get(), 1, "reads between samples are not timed");
        slow.read(|| (), counted);
        assert_eq!(asked.get(), 2, "the next sample is");

        let mut fast = watch(keys.len(), Duration::from_secs(3600));
        fast.read(|| (), counted);
        fast.cold_after = Duration::ZERO;
        for _ in 1..SAMPLE_EVERY {
            fast.read(|| (), counted);
        }
        assert_eq!(
            asked.get(),
            2,
            "a fast first read: in memory until the next sample"
        );
        fast.read(|| (), counted);
        assert_eq!(asked.get(), 3);

        // Threads still reading ahead (10 keys given, none taken): no second start.
        let next = Arc::new(AtomicUsize::new(0));
        fast.ahead = Some(ItemPrefetch {
            stop: Arc::new(AtomicBool::new(false)),
            next: next.clone(),
            keys: 10,
            threads: Vec::new(),
        });
        for _ in 0..SAMPLE_EVERY {
            fast.read(|| (), counted);
        }
        assert_eq!(asked.get(), 3, "busy threads are not started again");
        next.store(10, Ordering::Relaxed);
        for _ in 0..SAMPLE_EVERY {
            fast.read(|| (), counted);
        }
        assert_eq!(asked.get(), 4, "finished ones are");

        let mut few = watch(PREFETCH_MIN_KEYS - 1, Duration::ZERO);
        few.read(|| (), counted);
        assert_eq!(asked.get(), 4, "too few keys");
    }
}
