//! When a commit reaches the disk.
//!
//! By default every write transaction ends in a flush to disk (LMDB's default), so what a
//! write reports done survives a power loss. That flush is the cost of a small write: on a
//! virtual disk a durable commit of a few random pages takes milliseconds, and no design that
//! flushes per commit can take more concurrent single-item writes per second than the disk
//! takes flushes (the gateway benchmark measures that floor beside the engine).
//!
//! [`Durability::Periodic`] is the trade SQLite makes with `synchronous=OFF`, for a store
//! that serves an application's tests: commits are handed to the operating system without a
//! flush (LMDB's `MDB_NOSYNC`) and a flusher thread syncs the file every
//! [`FLUSH_INTERVAL`]. A crash of the process loses nothing — the kernel holds the written
//! pages — but a crash of the operating system or a power loss can lose the writes of the
//! last interval and, since LMDB may then find a commit's root written before its pages,
//! damage the data file (`cosmoscope check` says so). It is never the default.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use heed::{EnvFlags, FlagSetMode};

use super::Store;
use crate::error::Result;

/// How often a periodic store flushes its file.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// When a commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Each commit is flushed before it returns (the default).
    #[default]
    EveryCommit,
    /// Commits are flushed by a background thread every [`FLUSH_INTERVAL`].
    Periodic,
}

/// The flusher of a periodic store: a thread and the flag that stops it.
#[derive(Default)]
pub(crate) struct Flusher {
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Store {
    /// Changes when this process's commits reach the disk. Going back to
    /// [`Durability::EveryCommit`] flushes what the periodic mode left unflushed. A read-only
    /// store writes nothing and keeps its mode.
    pub fn set_durability(&self, durability: Durability) -> Result<()> {
        if self.read_only().is_some() {
            return Ok(());
        }
        let mut flusher = self.flusher.lock().unwrap_or_else(|e| e.into_inner());
        match durability {
            Durability::Periodic if flusher.running.is_none() => {
                // SAFETY: NO_SYNC only skips the flush at commit (the user asked for that
                // trade, documented above); the flusher below syncs the file on a timer and
                // `stop` syncs it before the mode ends. Other processes keep their own flags.
                unsafe { self.env.set_flags(EnvFlags::NO_SYNC, FlagSetMode::Enable) }?;
                let stop = Arc::new(AtomicBool::new(false));
                let (env, done) = (self.env.clone(), stop.clone());
                let thread = std::thread::Builder::new()
                    .name("cosmoscope-flusher".into())
                    .spawn(move || {
                        while !done.load(Ordering::Relaxed) {
                            std::thread::park_timeout(FLUSH_INTERVAL);
                            // A failed flush is retried at the next tick; the final one in
                            // `stop` reports its error.
                            let _ = env.force_sync();
                        }
                    })
                    .map_err(|e| {
                        crate::error::Error::internal(format!(
                            "cannot start the store's flusher thread: {e}"
                        ))
                    })?;
                flusher.running = Some((stop, thread));
            }
            Durability::EveryCommit => stop(&self.env, &mut flusher)?,
            Durability::Periodic => {}
        }
        Ok(())
    }

    /// This process's durability mode.
    pub fn durability(&self) -> Durability {
        let flusher = self.flusher.lock().unwrap_or_else(|e| e.into_inner());
        if flusher.running.is_some() {
            Durability::Periodic
        } else {
            Durability::EveryCommit
        }
    }

    /// Ends a periodic mode as the store closes, flushing what is left.
    fn stop_flusher(&self) {
        let mut flusher = self.flusher.lock().unwrap_or_else(|e| e.into_inner());
        let _ = stop(&self.env, &mut flusher);
    }
}

impl Drop for Store {
    /// A periodic store flushes what it wrote before it closes.
    fn drop(&mut self) {
        self.stop_flusher();
    }
}

/// Stops the flusher thread, restores flush-at-commit and syncs the file.
fn stop(env: &heed::Env<heed::WithoutTls>, flusher: &mut Flusher) -> Result<()> {
    let Some((done, thread)) = flusher.running.take() else {
        return Ok(());
    };
    done.store(true, Ordering::Relaxed);
    thread.thread().unpark();
    let _ = thread.join();
    // SAFETY: turning NO_SYNC off restores LMDB's default, flush-at-commit behaviour.
    unsafe { env.set_flags(EnvFlags::NO_SYNC, FlagSetMode::Disable) }?;
    env.force_sync()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_periodic_store_flushes_what_it_wrote_and_goes_back_to_flushing_each_commit() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path()).expect("open");
        assert_eq!(store.durability(), Durability::EveryCommit);
        store
            .set_durability(Durability::Periodic)
            .expect("periodic");
        assert_eq!(store.durability(), Durability::Periodic);
        let flags = store.env.get_flags().expect("flags");
        assert_ne!(flags & EnvFlags::NO_SYNC.bits(), 0);
        // Asking again changes nothing (one flusher).
        store
            .set_durability(Durability::Periodic)
            .expect("periodic");
        let mut txn = store.write_txn().expect("write");
        store.create_database(&mut txn, "db", 1).expect("create");
        txn.commit().expect("commit");
        store.set_durability(Durability::EveryCommit).expect("back");
        assert_eq!(store.durability(), Durability::EveryCommit);
        let flags = store.env.get_flags().expect("flags");
        assert_eq!(flags & EnvFlags::NO_SYNC.bits(), 0);
        drop(store);
        let store = Store::open(dir.path()).expect("reopen");
        let txn = store.read_txn().expect("read");
        let names: Vec<String> = store
            .list_databases(&txn)
            .expect("list")
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(names, ["db"]);
    }
}
