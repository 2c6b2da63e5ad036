//! Opening a store that cannot be written: on read-only media, or without write permission
//! on its directory or data file. Reads, queries, exports and the explorer work; writes are
//! refused with the reason (see `Store::write_txn`).
//!
//! LMDB opens read-only with `MDB_RDONLY`. Its lock file is still opened for writing when
//! it can be (readers register in it, so a writer elsewhere keeps their pages); on a
//! read-only file system LMDB goes on without it by itself, and where the lock file exists
//! but may not be written (no permission), the store is opened with `MDB_NOLOCK`: this
//! process then does not announce its readers, which is safe while nobody writes, the only
//! way a directory one may not write to is used.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use heed::{Env, EnvFlags, EnvOpenOptions, WithoutTls};

/// Why the store in `dir` cannot be written, if it cannot: the directory (or, for a new
/// store, its nearest existing parent) or the data file refuses writes.
pub fn reason(dir: &Path) -> Option<String> {
    let existing = dir.ancestors().find(|d| d.exists())?;
    if !existing.is_dir() {
        return None; // a file where the directory should be: `check_dir` says so
    }
    let data = dir.join(super::DATA_FILE);
    for path in [existing, data.as_path()] {
        if path == data && !data.exists() {
            continue;
        }
        if let Err(e) = writable(path) {
            return Some(match e.raw_os_error() {
                Some(libc::EROFS) => format!("{} is on a read-only file system", path.display()),
                _ => format!("{} cannot be written: {e}", path.display()),
            });
        }
    }
    None
}

/// `access(path, W_OK)`: the kernel's own answer, file system flags included.
fn writable(path: &Path) -> std::io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a NUL-terminated path and a mode; access has no other effect.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The environment opened read-only, without its lock file when that cannot be written.
pub fn open_env(dir: &Path, map_size: usize) -> heed::Result<Env<WithoutTls>> {
    let lock = dir.join("lock.mdb");
    let no_lock = lock.exists() && writable(&lock).is_err()
        || !lock.exists() && writable(dir).is_err_and(|e| e.raw_os_error() != Some(libc::EROFS));
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    options.map_size(map_size).max_dbs(16).max_readers(254);
    // SAFETY: READ_ONLY maps the file without write access; NO_LOCK only where the
    // directory cannot be written by anyone opening it this way (see the module comment);
    // NO_READ_AHEAD as the store's own environment (see `readahead`).
    unsafe {
        options.flags(EnvFlags::READ_ONLY | EnvFlags::NO_READ_AHEAD);
        if no_lock {
            options.flags(EnvFlags::NO_LOCK);
        }
        options.open(dir)
    }
}
