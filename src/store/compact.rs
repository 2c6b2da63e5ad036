//! Rewriting the data file without its free pages and with full pages, and the lock that
//! makes it safe.
//!
//! LMDB never shrinks its file, and copy-on-write leaves behind every page a write
//! replaced. A bulk import reaches across the whole index in every transaction, so after a
//! large one most of the file is free pages. Beyond the disk they take, a large free list
//! makes every later commit slow: LMDB 0.9 reloads free-list records of hundreds of
//! thousands of pages and searches them linearly for runs of contiguous pages to write them
//! back. On 1,000,000 orders imported 50,000 items per transaction the file was 17.6 GB, of
//! which 8.8 GB live; a one-item upsert took 540 ms, and 1.2 ms after compaction.
//!
//! The live pages are also about half full, and scattered: a B-tree filled by inserts in
//! random key order (EPKs are hashes) splits its pages in the middle and takes new ones
//! wherever the free list has them. On those 1,000,000 orders a leaf held 1.9 items, and an
//! index leaf 28 entries. Compaction therefore does not copy pages as they are (LMDB's
//! compacting copy keeps their fill); it writes every database anew in key order with
//! LMDB's append mode, which fills each page before it starts the next and lays them out in
//! key order, as SQLite's VACUUM does. The 1,000,000 orders went from 8.8 to 5.9 GB (40 s;
//! the page copy took 17 s), 100,000 from 855 to 591 MB, and a first scan of those 100,000
//! after a restart (nothing cached) from 250–350 ms to 125–133 ms; once cached, scans and
//! lookups take as long as before. The first writes after it split full pages.
//!
//! The new file replaces the old one by a rename, so no other process may have the store
//! open meanwhile. Every process holds a shared lock on [`LOCK_FILE`] for as long as it has
//! the store open; compaction takes it exclusively, and is skipped when it cannot.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Instant;

use heed::{CommitOrAbort, EnvFlags, EnvOpenOptions, PutFlags};

use super::readahead::ReadAhead;
use super::{Db, Store};
use crate::error::{Error, Result};

/// Held shared by every process with the store open, exclusively while compacting.
pub const LOCK_FILE: &str = "cosmoscope.lock";
/// The compacted copy while it is being written, and the lock file LMDB gives it.
const COMPACTING_FILE: &str = "data.mdb.compacting";
const COMPACTING_LOCK_FILE: &str = "data.mdb.compacting-lock";
/// Bytes of keys and values a write transaction of the rewrite takes before it commits:
/// LMDB spills a transaction's dirty pages to disk past 512 MB.
const COMMIT_BYTES: usize = 256 << 20;

/// Free space worth a compaction when a caller asks only if it is worthwhile: at least this
/// many bytes, and at least [`WORTHWHILE_SHARE`] of the file.
const WORTHWHILE_BYTES: u64 = 256 << 20;
const WORTHWHILE_SHARE: f64 = 1.0 / 3.0;

/// When to compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Whatever the free space.
    Always,
    /// When the free pages are at least 256 MB and a third of the file.
    Worthwhile,
}

/// What `compact` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Compacted {
        /// File size before and after, in bytes.
        before: u64,
        after: u64,
        seconds: f64,
    },
    /// Too little free space for [`When::Worthwhile`].
    NotWorthwhile { file: u64, free: u64 },
    /// Another process (or this one) has the store open; `worthwhile` says whether
    /// [`When::Worthwhile`] would have compacted.
    InUse { worthwhile: bool },
}

/// The shared lock every open store holds: waits while another process compacts, and
/// removes a compacted copy a crash left behind (nobody can be writing it once the lock is
/// granted). `None` where the file system has no locks: the store then opens without one,
/// and compaction, which cannot take its exclusive lock there either, never runs.
pub(crate) fn lock_shared(dir: &Path) -> Result<Option<File>> {
    let file = lock_file(dir)?;
    match file.try_lock_shared() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            eprintln!(
                "cosmoscope: another process is compacting the store in {}; waiting for it",
                dir.display()
            );
            file.lock_shared().map_err(|e| lock_error(dir, e))?;
        }
        Err(TryLockError::Error(_)) => return Ok(None),
    }
    for stale in [COMPACTING_FILE, COMPACTING_LOCK_FILE] {
        let stale = dir.join(stale);
        if stale.exists() {
            let _ = std::fs::remove_file(stale);
        }
    }
    Ok(Some(file))
}

/// The shared lock of a store opened read-only: taken on the lock file if there is one
/// (a shared lock needs only read access), so compaction elsewhere waits for this reader;
/// none when there is no lock file, which nobody compacting can have made.
pub(crate) fn lock_shared_read_only(dir: &Path) -> Option<File> {
    let file = File::open(dir.join(LOCK_FILE)).ok()?;
    file.lock_shared().ok()?;
    Some(file)
}

/// Compacts the store in `dir` if `when` says so and no process has it open (this one
/// included: drop the engine first).
pub fn compact(dir: &Path, when: When) -> Result<Outcome> {
    let lock = lock_file(dir)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            // Measured through a store opened as any other process opens it (which fails
            // when this process has it open: then nothing is known).
            let measured = Store::open(dir).and_then(|s| s.free_space());
            return Ok(Outcome::InUse {
                worthwhile: measured.is_ok_and(|(file, free)| worthwhile(file, free)),
            });
        }
        Err(TryLockError::Error(e)) => return Err(lock_error(dir, e)),
    }
    let started = Instant::now();
    let store = Store::open_unlocked(dir)?;
    let (file, free) = store.free_space()?;
    if when == When::Worthwhile && !worthwhile(file, free) {
        return Ok(Outcome::NotWorthwhile { file, free });
    }
    let copy: PathBuf = dir.join(COMPACTING_FILE);
    let written = rewrite(&store, &copy);
    let _ = std::fs::remove_file(dir.join(COMPACTING_LOCK_FILE));
    if written.is_err() {
        // A full disk, say: the store stays as it was.
        let _ = std::fs::remove_file(&copy);
    }
    written?;
    // Closes the environment: nothing else holds it.
    drop(store);
    let data = dir.join(super::DATA_FILE);
    if let Ok(meta) = std::fs::metadata(&data) {
        let _ = std::fs::set_permissions(&copy, meta.permissions());
    }
    std::fs::rename(&copy, &data).map_err(|e| io_error(&data, e.into()))?;
    // The rename is durable once the directory is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    let after = std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    drop(lock);
    Ok(Outcome::Compacted {
        before: file,
        after,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes every database of `store` into a new environment in the file `path`, in key
/// order and in append mode (see the module comment), synced and closed on return.
fn rewrite(store: &Store, path: &Path) -> Result<()> {
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    options.map_size(super::MAP_SIZE).max_dbs(16);
    // SAFETY: `path` is a new file that only this function opens (the compaction lock keeps
    // other processes out of the directory). Commits skip their sync: the file is synced
    // once, whole, before it can replace the store's.
    unsafe { options.flags(EnvFlags::NO_SUB_DIR | EnvFlags::NO_SYNC) };
    super::prepare_lock_file(&dir_lock_of(path))?;
    // SAFETY: as above; the environment is opened once and closed before returning.
    let env = unsafe { options.open(path) }.map_err(|e| io_error(path, e))?;
    let rtxn = store.read_txn()?;
    for (name, from) in store.databases() {
        let wtxn = env.write_txn()?;
        let to: Db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> Result<_> {
                let db = super::create_db(opener, wtxn, name)?;
                Ok(CommitOrAbort::<_, ()>::Commit(db))
            })?
            .unwrap_commit();
        let mut wtxn = env.write_txn()?;
        let mut pending = 0;
        let mut ahead = ReadAhead::default();
        for entry in from.iter(&rtxn)? {
            let (key, value) = entry?;
            ahead.touch(key);
            ahead.touch(value);
            // Keys come in the order the database keeps them: each goes after the last.
            to.put_with_flags(&mut wtxn, PutFlags::APPEND, key, value)?;
            pending += key.len() + value.len();
            if pending >= COMMIT_BYTES {
                wtxn.commit()?;
                wtxn = env.write_txn()?;
                pending = 0;
            }
        }
        wtxn.commit()?;
    }
    env.force_sync().map_err(|e| io_error(path, e))?;
    env.prepare_for_closing().wait();
    Ok(())
}

/// The lock file LMDB makes beside a data file opened with `NO_SUB_DIR`.
fn dir_lock_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-lock");
    PathBuf::from(name)
}

/// Whether `free` bytes of a `file`-byte data file are worth a compaction.
fn worthwhile(file: u64, free: u64) -> bool {
    free >= WORTHWHILE_BYTES && free as f64 >= file as f64 * WORTHWHILE_SHARE
}

impl Store {
    /// The data file's size and how much of it is free pages, in bytes.
    pub fn free_space(&self) -> Result<(u64, u64)> {
        let footprint = self.footprint()?;
        Ok((footprint.file_bytes, footprint.free_bytes))
    }
}

fn lock_file(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| io_error(&path, e.into()))
}

fn lock_error(dir: &Path, e: std::io::Error) -> Error {
    Error::internal(format!("cannot lock the store in {}: {e}", dir.display()))
}

fn io_error(path: &Path, e: heed::Error) -> Error {
    Error::internal(format!("compacting the store: {}: {e}", path.display()))
}
