//! The engine's background thread: flushes read metering, purges expired items and
//! advances index transformations.
//!
//! It runs for as long as the engine is open and makes a last flush when the engine is
//! dropped, so even a one-shot CLI read leaves its RU in the store's statistics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::store::Store;

/// How often read metering reaches the store (and so other processes).
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// Wall time per tick given to index builds (about a third of the tick).
const INDEX_BUILD_BUDGET: Duration = Duration::from_millis(70);
/// How often expired items are purged.
const PURGE_EVERY: Duration = Duration::from_secs(1);

pub struct Worker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    store: Arc<Store>,
}

impl Worker {
    pub fn start(store: Arc<Store>) -> Worker {
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::Builder::new()
                .name("cosmoscope-background".into())
                .spawn(move || run(&store, &stop))
                .ok()
        };
        Worker {
            stop,
            handle,
            store,
        }
    }
}

fn run(store: &Store, stop: &AtomicBool) {
    let mut last_purge = Instant::now();
    while !stop.load(Ordering::Acquire) {
        std::thread::park_timeout(FLUSH_EVERY);
        if stop.load(Ordering::Acquire) {
            break;
        }
        // Errors here are retried on the next tick; a failing disk also fails requests,
        // which is where the user sees it.
        let _ = store.flush_pending();
        let _ = store.advance_index_builds(INDEX_BUILD_BUDGET);
        if last_purge.elapsed() >= PURGE_EVERY {
            let _ = store.purge_expired(crate::store::now_secs());
            last_purge = Instant::now();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(handle) = self.handle.take() {
            handle.thread().unpark();
            let _ = handle.join();
        }
        let _ = self.store.flush_pending();
    }
}
