//! Reading the items a query reads by key on two cores: a helper thread reads them from the
//! last back while the query reads from the first on, until the two meet.
//!
//! An item lookup in memory is a descent of the items tree (five levels at ten million
//! items, about 0.25 µs) that waits on nothing but the CPU's caches, and a query reading a
//! page of a thousand items an index lookup selected spends half its time in those descents
//! (49 % of the samples of a ~1,000-item range read at 10M). A second core halves that.
//!
//! The helper reads in a read transaction of its own, which must see the query's snapshot.
//! Every read transaction of an environment reads the same map, and LMDB neither writes nor
//! reuses a page of a snapshot while a reader holds it, so the records the helper finds are
//! the bytes the query's own lookups would return, at the same addresses, and stay valid
//! for as long as the query's transaction does. The helper compares its transaction's id
//! with the query's and reads nothing when they differ: a write committed in between, or a
//! query running inside a write transaction (whose id is the next one to commit).
//!
//! Helpers are kept threads, one per core beyond the first (up to [`MAX_HELPERS`]). From a
//! query's hand-over to its helper's start takes 3–4 µs on this project's machines when the
//! process was idle before (the median; a tenth take over 25 µs), but about 20 µs between
//! queries run back to back; starting a thread takes 15–35 µs. So a split pays only where
//! the lookups take much longer than that (a ~1,000-item range: about 300 µs), and a
//! TOP 100's 15 µs of lookups are read by the query alone. A query takes an idle helper or
//! reads alone; each helper holds one of the environment's reader slots only while it reads
//! for a query.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, mpsc};

use heed::{Env, WithoutTls};

use super::packed_keys::PackedKeys;
use super::{Db, RoTxn, Store};

/// Fewer keys than this are read by the query alone: waking a helper and handing it the
/// keys costs about what a dozen lookups do.
pub const SPLIT_MIN_KEYS: usize = 64;

/// Helper threads at most, over every query of the process.
const MAX_HELPERS: usize = 3;

/// What a query and the helper reading for it share.
struct Shared {
    /// Per position: the record's address and length, or `(0, 0)` for a key without an item.
    /// Written by the helper before it lowers `low` past the position.
    found: Vec<(AtomicUsize, AtomicUsize)>,
    /// The lowest position the helper has read (the number of keys before it reads one):
    /// every position from it on is in `found`.
    low: AtomicUsize,
    /// The position the query reads next: the helper stops below it.
    next: AtomicUsize,
    /// The environment to read, until the helper takes it to start. A query that ends
    /// before the helper started takes it back instead, and so need not wait for a helper
    /// the scheduler has not run yet.
    env: Mutex<Option<Env<WithoutTls>>>,
    /// Set once the helper is done with the query (read its part, gave up or was stopped)
    /// and holds no transaction or environment of it any more.
    done: Mutex<bool>,
    finished: Condvar,
}

impl Shared {
    fn finish(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.finished.notify_all();
    }
}

/// Keys being read by a helper for a query whose read transaction is `'t`: ask
/// [`SplitRead::take`] for each position the query reads. Dropping it stops the helper: one
/// that started is waited for (at most the read it is in), one that has not will not start.
pub struct SplitRead<'t> {
    shared: Arc<Shared>,
    /// Records borrow the query's transaction.
    _txn: PhantomData<&'t RoTxn<'t>>,
}

/// A kept helper thread.
struct Helper {
    idle: AtomicBool,
    jobs: Mutex<mpsc::Sender<Job>>,
}

/// A query's keys for a helper to read (the environment is in `done.shared`).
struct Job {
    items: Db,
    keys: PackedKeys,
    /// The id of the query's read transaction.
    snapshot: usize,
    done: Done,
}

/// Tells the query the helper is done with its job, and makes the helper idle again, when
/// the job is dropped: after its reads, or unread if the helper's thread is gone.
struct Done {
    shared: Arc<Shared>,
    idle: &'static AtomicBool,
}

impl Drop for Done {
    fn drop(&mut self) {
        // Idle first: a query that waited for this one and asks at once finds it free.
        self.idle.store(true, Ordering::Release);
        self.shared.finish();
    }
}

/// The kept helpers, started on first use: none on a machine with one core.
fn helpers() -> &'static [Helper] {
    static HELPERS: OnceLock<Vec<Helper>> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (0..cores.saturating_sub(1).min(MAX_HELPERS))
            .filter_map(|_| {
                let (jobs, inbox) = mpsc::channel::<Job>();
                std::thread::Builder::new()
                    .name("split-read".into())
                    .spawn(move || {
                        for job in inbox {
                            read_back(job);
                        }
                    })
                    .ok()?;
                Some(Helper {
                    idle: AtomicBool::new(true),
                    jobs: Mutex::new(jobs),
                })
            })
            .collect()
    })
}

impl Store {
    /// Has an idle helper read `keys` (item keys, by the positions the query will read
    /// them at) from the last back, in `txn`'s snapshot; `None` (the query reads alone)
    /// with fewer than `SPLIT_MIN_KEYS` keys or no idle helper.
    pub fn split_read<'t, 'k>(
        &self,
        txn: &'t RoTxn,
        keys: impl ExactSizeIterator<Item = &'k [u8]>,
    ) -> Option<SplitRead<'t>> {
        if keys.len() < SPLIT_MIN_KEYS {
            return None;
        }
        let pool = helpers();
        let helper = pool.iter().position(|h| {
            h.idle
                .compare_exchange(true, false, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        })?;
        let mut list = PackedKeys::default();
        let mut keys = keys.peekable();
        let n = keys.len();
        list.reserve(n, n * keys.peek().map_or(0, |k| k.len()));
        for key in keys {
            list.push(&[key]);
        }
        let n = list.len();
        let shared = Arc::new(Shared {
            found: (0..n)
                .map(|_| (AtomicUsize::new(0), AtomicUsize::new(0)))
                .collect(),
            low: AtomicUsize::new(n),
            next: AtomicUsize::new(0),
            env: Mutex::new(Some(self.env.clone())),
            done: Mutex::new(false),
            finished: Condvar::new(),
        });
        let job = Job {
            items: self.items,
            keys: list,
            snapshot: txn.id(),
            done: Done {
                shared: shared.clone(),
                idle: &pool[helper].idle,
            },
        };
        let sent = pool[helper]
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job);
        if sent.is_err() {
            // The helper's thread is gone (it panicked): read alone.
            return None;
        }
        Some(SplitRead {
            shared,
            _txn: PhantomData,
        })
    }
}

/// A helper's work for one query: the keys from the last back, each published as it is
/// read, until the query's position or an error; nothing if the query has ended. The
/// environment is dropped before the job, whose drop tells the query the helper is done (a
/// store closed after the query can be opened again at once).
fn read_back(job: Job) {
    let shared = &*job.done.shared;
    let Some(env) = shared.env.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return; // the query ended before this started
    };
    if let Ok(txn) = env.read_txn()
        && txn.id() == job.snapshot
    {
        for at in (0..job.keys.len()).rev() {
            if at < shared.next.load(Ordering::Relaxed) {
                break; // the query reads this one itself
            }
            let Some(key) = job.keys.get(at) else { break };
            let (addr, len) = match job.items.get(&txn, key) {
                Ok(Some(record)) => (record.as_ptr() as usize, record.len()),
                Ok(None) => (0, 0),
                // The query reads it, and meets the error itself.
                Err(_) => break,
            };
            let slot = &shared.found[at];
            slot.0.store(addr, Ordering::Relaxed);
            slot.1.store(len, Ordering::Relaxed);
            shared.low.store(at, Ordering::Release);
        }
    }
}

impl<'t> SplitRead<'t> {
    /// The record at `position` if the helper has read it (`Some(None)`: no item has that
    /// key), or `None` for the query to read it itself. The query reads positions in
    /// rising order; asking tells the helper it need not read below.
    pub fn take(&self, position: usize) -> Option<Option<&'t [u8]>> {
        let shared = &*self.shared;
        shared
            .next
            .store(position.saturating_add(1), Ordering::Relaxed);
        if position < shared.low.load(Ordering::Acquire) {
            return None;
        }
        let slot = shared.found.get(position)?;
        let (addr, len) = (
            slot.0.load(Ordering::Relaxed),
            slot.1.load(Ordering::Relaxed),
        );
        if addr == 0 {
            return Some(None);
        }
        // SAFETY: the helper read this record in a transaction with the id of the query's,
        // so in the same snapshot and the same map (see the module comment): the bytes at
        // `addr` are the record the query's own lookup would return, and LMDB keeps them
        // as they are while the query's transaction, which `'t` borrows, is open.
        Some(Some(unsafe {
            std::slice::from_raw_parts(addr as *const u8, len)
        }))
    }
}

impl SplitRead<'_> {
    /// Waits until the helper is done with this read.
    fn wait(&self) {
        let mut done = self.shared.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self
                .shared
                .finished
                .wait(done)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for SplitRead<'_> {
    fn drop(&mut self) {
        self.shared.next.store(usize::MAX, Ordering::Relaxed);
        let unstarted = self
            .shared
            .env
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        // A helper that had not started never will; one that has stops after its read.
        if unstarted.is_none() {
            self.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys;

    /// A split read of `keys` in `txn`, waiting for a helper other tests may be using; `None`
    /// only on a machine without helpers (one core).
    fn split<'t>(store: &Store, txn: &'t RoTxn, keys: &[Vec<u8>]) -> Option<SplitRead<'t>> {
        for _ in 0..10_000 {
            if let Some(read) = store.split_read(txn, keys.iter().map(Vec::as_slice)) {
                return Some(read);
            }
            if helpers().is_empty() {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("no helper became idle in 10 s");
    }

    fn no_helpers_here() -> bool {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(
            helpers().is_empty(),
            cores == 1,
            "helpers on every machine with cores to spare"
        );
        cores == 1
    }

    /// Takes every position in order once the helper is done.
    fn take_all<'t>(read: &SplitRead<'t>, n: usize) -> Vec<Option<Option<&'t [u8]>>> {
        read.wait();
        (0..n).map(|i| read.take(i)).collect()
    }

    #[test]
    fn the_helper_finds_what_the_query_would_at_the_same_addresses() {
        let (_dir, store, mut keys) = crate::store::store_with_records(400);
        // A key without an item among them.
        keys.insert(200, keys::epk_bound_bytes(7, b"item00199~"));
        let txn = store.read_txn().unwrap();
        let Some(read) = split(&store, &txn, &keys) else {
            assert!(no_helpers_here());
            return;
        };
        let taken = take_all(&read, keys.len());
        for (i, (key, took)) in keys.iter().zip(&taken).enumerate() {
            let own = store.items.get(&txn, key).unwrap();
            let took = took.unwrap_or_else(|| panic!("position {i} was read by the helper"));
            assert_eq!(took, own, "position {i}");
            if let (Some(a), Some(b)) = (took, own) {
                assert_eq!(a.as_ptr(), b.as_ptr(), "the same bytes of the map");
            }
        }
        assert_eq!(taken[200], Some(None));
    }

    #[test]
    fn the_helper_stops_where_the_query_is_and_the_query_reads_the_rest() {
        let (_dir, store, keys) = crate::store::store_with_records(300);
        let txn = store.read_txn().unwrap();
        let Some(read) = split(&store, &txn, &keys) else {
            assert!(no_helpers_here());
            return;
        };
        // The query reads every position as soon as it can: whatever the helper had not
        // read yet is the query's, and the rest agrees with the query's own reads.
        for (i, key) in keys.iter().enumerate() {
            if let Some(took) = read.take(i) {
                assert_eq!(took, store.items.get(&txn, key).unwrap(), "position {i}");
            }
        }
        drop(read);
        // Dropping waited for the helper, which is free again.
        assert!(split(&store, &txn, &keys).is_some());
    }

    #[test]
    fn a_helper_reads_nothing_in_another_snapshot() {
        let (_dir, store, keys) = crate::store::store_with_records(100);
        let txn = store.read_txn().unwrap();
        // A write commits after the query's transaction began.
        let mut wtxn = store.env.write_txn().unwrap();
        store.items.put(&mut wtxn, &keys[99], b"changed").unwrap();
        wtxn.commit().unwrap();
        let Some(read) = split(&store, &txn, &keys) else {
            assert!(no_helpers_here());
            return;
        };
        assert!(take_all(&read, keys.len()).iter().all(Option::is_none));
        drop(read);

        // Nor for a query inside a write transaction, which sees what it wrote.
        let mut wtxn = store.env.write_txn().unwrap();
        store.items.put(&mut wtxn, &keys[0], b"mine").unwrap();
        if let Some(read) = split(&store, &wtxn, &keys) {
            assert!(take_all(&read, keys.len()).iter().all(Option::is_none));
        }
        wtxn.abort();
    }

    #[test]
    fn too_few_keys_are_read_by_the_query_alone() {
        let (_dir, store, keys) = crate::store::store_with_records(SPLIT_MIN_KEYS - 1);
        let txn = store.read_txn().unwrap();
        assert!(
            store
                .split_read(&txn, keys.iter().map(Vec::as_slice))
                .is_none()
        );
    }
}
