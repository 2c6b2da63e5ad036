//! Large commits: the disk starts on a commit's pages while LMDB is still writing them.
//!
//! At commit LMDB writes the transaction's dirty pages into the file (`writev`, a copy into
//! the kernel's page cache) and then flushes the file (`fdatasync`). The disk does nothing
//! while the pages are copied, and the flush then waits for all of them: of a 20,000-order
//! import's 116 MB commit, 40–60 ms of copying and 150–200 ms of flushing, one after the
//! other. For a commit that large a second thread asks the kernel, every
//! [`KICK_INTERVAL`] while the commit runs, to start writing the file's dirty pages
//! (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`, which starts writeback and waits for
//! nothing), so the disk writes while LMDB copies and the flush finds most of it done.
//!
//! Nothing LMDB relies on changes: it writes its meta page, which makes the commit visible,
//! only after its own flush of the data pages has returned, and a page written early is
//! only durable sooner. In periodic durability commits do not flush, and nothing is kicked.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use heed::RwTxn;

use super::durability::Durability;
use super::{DATA_FILE, Store};
use crate::error::Result;

/// How often the kicking thread starts writeback during a large commit. Each call walks only
/// the file's dirty pages; a 116 MB commit makes a few dozen calls.
const KICK_INTERVAL: Duration = Duration::from_millis(4);

/// Requests a write batch accounts (its writes, and the reads made inside it) from which it
/// commits through [`Store::commit_large`]: 1,000 writes of 1 KB documents with the default
/// index dirty about 5 MB, where starting a thread (tens of microseconds) costs nothing next
/// to the copy.
pub(crate) const LARGE_COMMIT_WRITES: u64 = 1_000;

impl Store {
    /// Commits `txn`, which has written much (an import's batch, a block of a sorted index
    /// build, a batch of a policy change's rebuild), with the disk writing while LMDB copies
    /// (see the module documentation). A store that cannot start the thread or open its
    /// file commits as any other.
    pub(crate) fn commit_large(&self, txn: RwTxn) -> Result<()> {
        if self.durability() != Durability::EveryCommit {
            return Ok(txn.commit()?);
        }
        let Ok(file) = std::fs::File::open(self.path().join(DATA_FILE)) else {
            return Ok(txn.commit()?);
        };
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            let kicker = std::thread::Builder::new()
                .name("cosmoscope-writeback".into())
                .spawn_scoped(s, || {
                    while !done.load(Ordering::Acquire) {
                        start_writeback(&file);
                        std::thread::park_timeout(KICK_INTERVAL);
                    }
                });
            let committed = txn.commit();
            done.store(true, Ordering::Release);
            if let Ok(kicker) = kicker {
                kicker.thread().unpark();
            }
            Ok(committed?)
        })
    }
}

/// Asks the kernel to start writing every dirty page of `file` to the disk, without waiting.
/// A failure (a file system without the call) only loses the head start.
#[cfg(target_os = "linux")]
fn start_writeback(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call's duration; offset 0 and length 0 name
    // the whole file, and SYNC_FILE_RANGE_WRITE only starts writeback.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &std::fs::File) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_commit_is_stored_in_both_durability_modes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("open");
        for (n, durability) in [Durability::EveryCommit, Durability::Periodic]
            .into_iter()
            .enumerate()
        {
            store.set_durability(durability).expect("durability");
            let mut txn = store.write_txn().expect("txn");
            for i in 0..2_000u32 {
                let key = [&[n as u8][..], &i.to_be_bytes()].concat();
                store.meta.put(&mut txn, &key, &[7u8; 512]).expect("put");
            }
            store.commit_large(txn).expect("commit");
        }
        drop(store);
        let store = Store::open(dir.path()).expect("reopen");
        let txn = store.read_txn().expect("read");
        for n in 0..2u8 {
            let key = [&[n][..], &1_999u32.to_be_bytes()].concat();
            assert_eq!(
                store.meta.get(&txn, &key).expect("get"),
                Some(&[7u8; 512][..])
            );
        }
    }
}
