//! The embedded store: one LMDB environment per data directory.
//!
//! Several processes may open the same directory at once (a TUI and a CLI importer, say):
//! LMDB gives them one writer at a time and snapshot readers. This module owns the
//! environment and its named databases; the submodules own one concern each:
//!
//! - `catalog`: databases and containers, their settings and the range table
//! - `partition_key`, `epk`, `murmur3`: key values and V2 effective partition keys
//! - `ranges`: physical partitions and split planning
//! - `item`: item records, system properties and the service's item rules;
//!   `json_text`: skipping through JSON text (member directories, lazy reads)
//! - `write`: the write transaction every mutation goes through (stats, feed, splits)
//! - `patch`: partial document update operations on JSON-pointer paths
//! - `read`: point reads, listings and statistics
//! - `feed`: the change feed log and its readers
//! - `meter`: RU per range per second, throttling, and read accounting
//! - `ttl`: purging expired items
//! - `indexing`: the indexing policy; `index`: the index entries it asks for;
//!   `index_delta`: a transaction's entry changes, buffered and written in key order;
//!   `reindex`: replacing the policy and rebuilding the index in the background;
//!   `search_policy`: the vector embedding and full-text policies their indexes rely on
//! - `scripts`: a container's stored procedures, triggers and UDFs as catalog records
//! - `stats`, `keys`, `codec`: records and layouts; `key_order`: how every database
//!   compares its keys
//! - `compact`: rewriting the file without its free pages and with full ones, and the lock
//!   that allows it
//!
//! The submodules are the crate's own: the engine facade and the query engine, the layers
//! above, reach into them. Outside the crate the store is [`Store`] and the names below;
//! white-box tests reach its internals through `testing` (feature `test-harness`).

pub(crate) mod bulk_index;
pub(crate) mod catalog;
pub(crate) mod check;
pub(crate) mod codec;
pub(crate) mod compact;
pub(crate) mod doc_tree;
pub(crate) mod durability;
pub(crate) mod epk;
pub(crate) mod external_sort;
pub(crate) mod feed;
pub(crate) mod footprint;
pub(crate) mod generations;
pub(crate) mod index;
pub(crate) mod index_delta;
pub(crate) mod indexing;
pub(crate) mod item;
pub(crate) mod json_text;
pub(crate) mod key_order;
pub(crate) mod keys;
pub(crate) mod meter;
pub(crate) mod murmur3;
pub(crate) mod packed_keys;
pub(crate) mod pages;
pub(crate) mod partition_key;
pub(crate) mod patch;
pub(crate) mod prefetch;
pub(crate) mod prepare;
pub(crate) mod ranges;
pub(crate) mod read;
mod read_only;
pub(crate) mod readahead;
pub(crate) mod reindex;
pub(crate) mod scripts;
pub(crate) mod search_policy;
pub(crate) mod split_read;
pub(crate) mod stats;
pub(crate) mod tail;
pub(crate) mod ttl;
pub(crate) mod write;
pub(crate) mod writeback;

pub use catalog::{ContainerDef, ContainerSettings, Throughput, UniqueKeyPolicy};
pub use compact::LOCK_FILE;
pub use epk::Epk;
pub use partition_key::PartitionKeyDefinition;

/// Internals for white-box tests of the store (index consistency, record layout, the raw
/// change feed), outside the crate: never part of the program.
#[cfg(feature = "test-harness")]
pub mod testing {
    pub use super::catalog::{LEGACY_STRING_BYTES, STRING_BYTES};
    pub use super::feed::FeedRequest;
    pub use super::index::{
        IndexLayout, IndexReader, PathHasher, rebuild_from_items, stored_entries,
    };
    pub use super::item::Record;
}

use std::collections::HashMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions, WithoutTls};

use crate::error::{Error, Result, StatusCode};
use key_order::KeyOrder;

pub type Db = Database<'static, Bytes, Bytes, KeyOrder>;
pub type RoTxn<'e> = heed::RoTxn<'e, WithoutTls>;
/// A walk over a range of one of the store's databases.
pub(crate) type DbRange<'t> = heed::RoRange<'t, Bytes, Bytes, KeyOrder>;

/// The options every database of the store is opened with: byte keys and values, in the
/// store's key order.
fn db_options<'e, 'o, T>(
    opener: &'o heed::DatabaseOpener<'e, T>,
) -> heed::DatabaseOpenOptions<'e, 'o, T, Bytes, Bytes, KeyOrder> {
    opener
        .database_options()
        .types::<Bytes, Bytes>()
        .key_comparator::<KeyOrder>()
}

/// Creates (or opens) the database `name` in the store's key order.
fn create_db<'e, T>(
    opener: &heed::DatabaseOpener<'e, T>,
    wtxn: &mut heed::RwTxn,
    name: &str,
) -> heed::Result<Database<'e, Bytes, Bytes, KeyOrder>> {
    db_options(opener).name(name).create(wtxn)
}

/// Every entry of `db` whose key starts with `prefix`, in key order (heed's `prefix_iter`
/// needs its byte-by-byte comparator trait, which [`KeyOrder`] is not).
pub(crate) fn prefixed<'t>(
    db: &Db,
    txn: &'t heed::RoTxn<'_>,
    prefix: &[u8],
) -> heed::Result<DbRange<'t>> {
    let end = keys::prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    db.range(txn, &(Bound::Included(prefix), end))
}

/// A store in a temporary directory holding `n` raw item records under made-up keys (every
/// tenth on overflow pages, each filled with a byte of its own), and those keys: for tests
/// of reads by key.
#[cfg(test)]
pub(crate) fn store_with_records(n: usize) -> (tempfile::TempDir, Store, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let keys: Vec<Vec<u8>> = (0..n)
        .map(|i| keys::epk_bound_bytes(7, format!("item{i:05}").as_bytes()))
        .collect();
    let mut wtxn = store.env.write_txn().unwrap();
    for (i, key) in keys.iter().enumerate() {
        let record = vec![b'a' + (i % 26) as u8; if i % 10 == 0 { 9000 } else { 120 }];
        store.items.put(&mut wtxn, key, &record).unwrap();
    }
    wtxn.commit().unwrap();
    (dir, store, keys)
}

/// Virtual size of the memory map. LMDB files are sparse, so this only reserves address
/// space; it bounds how large a store can grow.
const MAP_SIZE: usize = 1 << 40;

/// LMDB's data file in the store's directory.
pub(crate) const DATA_FILE: &str = "data.mdb";

/// The named databases of the environment, in the order [`Store::databases`] lists them.
const DATABASES: [&str; 11] = [
    "meta",
    "items",
    "logical",
    "range_stats",
    "container_stats",
    "feed",
    "meter",
    "ttl",
    "unique",
    "index",
    "index_counts",
];

#[derive(Default)]
pub(crate) struct CatalogCache {
    pub epoch: u64,
    /// database → container → definition (nested so lookups borrow `&str`, no allocation).
    pub containers: HashMap<String, HashMap<String, Arc<ContainerDef>>>,
}

/// The opened store. Cheap to share behind an `Arc`; every method takes the transaction it
/// works in, so callers decide what is atomic.
pub struct Store {
    env: Env<WithoutTls>,
    path: PathBuf,
    /// Catalog records, counters and the epoch (string keys).
    pub(crate) meta: Db,
    /// Items: cid ‖ EPK ‖ id → header ‖ JSON.
    pub(crate) items: Db,
    /// Per logical partition statistics: cid ‖ EPK.
    pub(crate) logical: Db,
    /// Per physical partition statistics and LSN: cid ‖ range id.
    pub(crate) range_stats: Db,
    /// Per container statistics and sequences: cid.
    pub(crate) container_stats: Db,
    /// Change feed log: cid ‖ range id ‖ LSN.
    pub(crate) feed: Db,
    /// RU per range per second: cid ‖ range id ‖ second.
    pub(crate) meter: Db,
    /// Expiry index: cid ‖ second ‖ EPK ‖ id.
    pub(crate) ttl: Db,
    /// Unique key index: cid ‖ EPK ‖ constraint ‖ hash → id.
    pub(crate) unique: Db,
    /// Index entries: cid ‖ generation ‖ path ‖ value ‖ EPK ‖ id (see [`index`]).
    pub(crate) index: Db,
    /// Documents defining each property path: cid ‖ generation ‖ path → u64.
    pub(crate) index_counts: Db,
    pub(crate) cache: RwLock<CatalogCache>,
    pub(crate) pending: Mutex<meter::Pending>,
    /// Held while pending accounting is written, so a flush that finds nothing pending
    /// because another (the background thread's) has just taken it waits for that one to
    /// commit: after [`Store::flush_pending`] returns, everything recorded before is stored.
    pub(crate) flushing: Mutex<()>,
    /// Buffers of the last write transaction's index changes, kept for the next one (an
    /// import's are tens of megabytes: growing them anew each time costs page faults).
    pub(crate) index_scratch: Mutex<index_delta::Scratch>,
    /// The flusher thread while commits skip their flush ([`durability`]).
    flusher: Mutex<durability::Flusher>,
    /// The shared lock on the store's directory ([`compact`]), held while open.
    _open_lock: Option<std::fs::File>,
    /// The map's faults are reported as damage to the data file while the store is open.
    _fault_guard: crate::fault::MapGuard,
    /// Why the store was opened read-only (read-only media, no write permission, or the
    /// user's asking); `None` when it takes writes.
    read_only: Option<String>,
}

/// Stops the C allocator from giving memory back to the system page by page as LMDB frees
/// its dirty pages.
///
/// LMDB allocates a write transaction's dirty pages with `malloc`, one page at a time (a
/// 50,000-order import dirties about 70,000), keeps them for later transactions, and frees
/// them one by one when the environment closes. glibc returns the top of its heap to the
/// system whenever more than its trim threshold (128 KB) lies free there, so those frees,
/// newest page first, shrank the heap once per page: 0.45 s of system calls at the end of a
/// 50,000-order import, a tenth of its time. Raising the threshold keeps the freed pages for
/// the process (which then exits, or reuses them for the next transaction). Only C code
/// allocates from glibc here: Rust's allocations go to mimalloc in the binary.
fn keep_lmdb_pages_allocated() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes a tuning parameter of glibc's allocator; it is
            // safe to call at any time from any thread.
            unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) };
        });
    }
}

impl Store {
    /// Opens (creating if needed) the store in `dir`; read-only when the directory or its
    /// data file cannot be written (read-only media, no permission).
    pub fn open(dir: &Path) -> Result<Store> {
        match read_only::reason(dir) {
            Some(reason) => Self::open_read_only(dir, reason),
            None => {
                Self::check_dir(dir)?;
                let lock = compact::lock_shared(dir)?;
                let mut store = Self::open_unlocked(dir)?;
                store._open_lock = lock;
                Ok(store)
            }
        }
    }

    /// Opens the store in `dir` for reading only: nothing in the directory is written
    /// (not even LMDB's lock file when it cannot be), and every write is refused with
    /// `reason`.
    pub fn open_read_only(dir: &Path, reason: String) -> Result<Store> {
        if !dir.join(DATA_FILE).is_file() {
            return Err(Error::new(
                StatusCode::Forbidden,
                format!(
                    "there is no store in {} to open, and none can be made there: {reason}",
                    dir.display()
                ),
            ));
        }
        check_file(dir)?;
        let lock = compact::lock_shared_read_only(dir);
        let env = read_only::open_env(dir, MAP_SIZE).map_err(|e| open_error(dir, e))?;
        let fault_guard = crate::fault::register_file(&dir.join(DATA_FILE));
        let rtxn = env.read_txn()?;
        let opened: [Option<Db>; 11] = env
            .open_databases_and_commit(rtxn, |opener, rtxn| -> Result<_> {
                let mut out = Vec::with_capacity(DATABASES.len());
                for name in DATABASES {
                    out.push(db_options(opener).name(name).open(rtxn)?);
                }
                Ok(CommitOrAbort::<_, ()>::Commit(handles(out)?))
            })?
            .unwrap_commit();
        let missing = || {
            Error::new(
                StatusCode::Forbidden,
                format!(
                    "the store in {} predates this version and must be upgraded, which needs \
                     write access once ({reason})",
                    dir.display()
                ),
            )
        };
        let dbs = handles(
            opened
                .into_iter()
                .map(|db| db.ok_or_else(missing))
                .collect::<Result<Vec<Db>>>()?,
        )?;
        let mut store = Self::assemble(env, dir, dbs, fault_guard);
        store.read_only = Some(reason);
        store._open_lock = lock;
        store.check_format_read_only()?;
        Ok(store)
    }

    /// Why the store takes no writes, if it does not.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    fn check_dir(dir: &Path) -> Result<()> {
        if dir.exists() && !dir.is_dir() {
            return Err(Error::bad_request(format!(
                "data directory {} is a file, not a directory",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::internal(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })
    }

    /// [`Store::open`] without taking the lock that keeps compaction out.
    fn open_unlocked(dir: &Path) -> Result<Store> {
        Self::check_dir(dir)?;
        check_file(dir)?;
        keep_lmdb_pages_allocated();
        prepare_lock_file(&dir.join("lock.mdb"))?;
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options.map_size(MAP_SIZE).max_dbs(16).max_readers(254);
        // Point reads must not pull in the pages around them; walks read ahead themselves
        // (see `readahead`).
        // SAFETY: NO_READ_AHEAD only changes the kernel's paging advice for the map.
        unsafe { options.flags(EnvFlags::NO_READ_AHEAD) };
        // SAFETY: the environment is opened once per process for this path (the engine
        // holds it for its lifetime) and the files are only touched through LMDB (and by
        // compaction, which no open store lets in).
        let env = unsafe { options.open(dir) }.map_err(|e| open_error(dir, e))?;
        let fault_guard = crate::fault::register_file(&dir.join(DATA_FILE));
        let wtxn = env.write_txn()?;
        let dbs: [Db; 11] = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> Result<_> {
                let mut out = Vec::with_capacity(DATABASES.len());
                for name in DATABASES {
                    out.push(create_db(opener, wtxn, name)?);
                }
                Ok(CommitOrAbort::<_, ()>::Commit(handles(out)?))
            })?
            .unwrap_commit();
        let store = Self::assemble(env, dir, dbs, fault_guard);
        store.upgrade_format()?;
        Ok(store)
    }

    fn assemble(
        env: Env<WithoutTls>,
        dir: &Path,
        dbs: [Db; 11],
        fault_guard: crate::fault::MapGuard,
    ) -> Store {
        let [
            meta,
            items,
            logical,
            range_stats,
            container_stats,
            feed,
            meter,
            ttl,
            unique,
            index,
            index_counts,
        ] = dbs;
        Store {
            env,
            path: dir.to_path_buf(),
            meta,
            items,
            logical,
            range_stats,
            container_stats,
            feed,
            meter,
            ttl,
            unique,
            index,
            index_counts,
            cache: RwLock::new(CatalogCache::default()),
            pending: Mutex::new(meter::Pending::default()),
            flushing: Mutex::new(()),
            index_scratch: Mutex::new(index_delta::Scratch::default()),
            flusher: Mutex::new(durability::Flusher::default()),
            _open_lock: None,
            _fault_guard: fault_guard,
            read_only: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn read_txn(&self) -> Result<RoTxn<'_>> {
        Ok(self.env.read_txn()?)
    }

    pub fn write_txn(&self) -> Result<heed::RwTxn<'_>> {
        if let Some(reason) = &self.read_only {
            return Err(Error::new(
                StatusCode::Forbidden,
                format!(
                    "the store in {} is open read-only ({reason}): reads, queries and exports \
                     work, writes do not",
                    self.path.display()
                ),
            ));
        }
        Ok(self.env.write_txn()?)
    }

    /// Bytes the data file occupies on disk.
    pub fn disk_size(&self) -> u64 {
        self.env.real_disk_size().unwrap_or(0)
    }

    /// Every named database with its name.
    pub(crate) fn databases(&self) -> [(&'static str, &Db); 11] {
        let mut dbs = [&self.meta; 11];
        dbs[1..].copy_from_slice(&self.all_data_dbs());
        std::array::from_fn(|i| (DATABASES[i], dbs[i]))
    }

    /// Every database whose keys start with a container id.
    pub(crate) fn all_data_dbs(&self) -> [&Db; 10] {
        [
            &self.items,
            &self.logical,
            &self.range_stats,
            &self.container_stats,
            &self.feed,
            &self.meter,
            &self.ttl,
            &self.unique,
            &self.index,
            &self.index_counts,
        ]
    }
}

/// One handle per name of [`DATABASES`], in its order.
fn handles<T>(opened: Vec<T>) -> Result<[T; 11]> {
    opened
        .try_into()
        .map_err(|_| Error::internal("database handle count mismatch"))
}

/// Bytes reserved for an LMDB lock file: at least what LMDB sizes it to for 254 readers
/// (16 KiB; it uses a larger file whole, as more reader slots).
const LOCK_FILE_BYTES: i64 = 64 * 1024;

/// Gives LMDB's lock file its blocks before LMDB maps it. LMDB extends the file with
/// `ftruncate`, which on a full disk leaves a hole the first write through the map cannot
/// fill: SIGBUS. Allocated here, a full disk is an error instead.
pub(crate) fn prepare_lock_file(path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::internal(format!("cannot open {}: {e}", path.display())))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len >= LOCK_FILE_BYTES as u64 {
        return Ok(());
    }
    // SAFETY: a valid descriptor of a file this function opened; fallocate only
    // allocates its blocks.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, LOCK_FILE_BYTES) };
    match rc {
        0 => Ok(()),
        // File systems without fallocate: LMDB's own ftruncate is all there is.
        libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        libc::ENOSPC => Err(disk_full(path)),
        errno => Err(Error::internal(format!(
            "cannot allocate {}: {}",
            path.display(),
            std::io::Error::from_raw_os_error(errno)
        ))),
    }
}

/// The disk holding `path` has no room left.
pub(crate) fn disk_full(path: &Path) -> Error {
    Error::internal(format!(
        "the disk holding {} is full: free some space, then retry (the store is unchanged)",
        path.parent().unwrap_or(path).display()
    ))
}

/// The data file, checked before it is mapped: a file shorter than the pages it uses would
/// fault (SIGBUS) at the first read of a missing page.
fn check_file(dir: &Path) -> Result<()> {
    let path = dir.join(DATA_FILE);
    match pages::check_on_open(&path) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(damage)) => Err(Error::damaged(format!(
            "the data file {} is damaged: {}. Restore it from a copy, or move the directory \
             away and start a new store; `cosmoscope check` reports what can still be read",
            path.display(),
            damage.0
        ))),
        Err(e) => Err(Error::internal(format!(
            "cannot read the data file {}: {e}",
            path.display()
        ))),
    }
}

fn open_error(dir: &Path, err: heed::Error) -> Error {
    match &err {
        heed::Error::Mdb(heed::MdbError::Invalid) | heed::Error::Mdb(heed::MdbError::Corrupted) => {
            Error::internal(format!(
                "{} holds a file that is not a cosmoscope store or is corrupt ({err}); move it \
                 away or choose another --data-dir",
                dir.display()
            ))
        }
        heed::Error::Mdb(heed::MdbError::VersionMismatch) => Error::internal(format!(
            "{} was written by an incompatible LMDB version ({err})",
            dir.display()
        )),
        heed::Error::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            Error::internal(format!("cannot open {}: permission denied", dir.display()))
        }
        heed::Error::Io(io) if io.raw_os_error() == Some(11) => Error::internal(format!(
            "{} is locked by another process in a way that prevents sharing ({err})",
            dir.display()
        )),
        _ => Error::internal(format!("cannot open the store in {}: {err}", dir.display())),
    }
}

/// Current Unix time in seconds.
pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}
