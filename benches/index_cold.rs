//! The index bench's cold reads (`INDEX_BENCH_COLD=1`; needs root to empty the page cache).
//!
//! On a store larger than memory a query's time is mostly its reads from the disk. Here each
//! case runs once per parameter with the page cache emptied before each side, and each side
//! reports its time, the bytes it had read from the disk (`read_bytes` of `/proc/self/io`)
//! and, for the engine, its major page faults (LMDB reads through its memory map, one 4 KB
//! page per fault with the store's `MDB_NORDAHEAD`). Beside them, each file's own latency for
//! random 4 KB reads that bypass the page cache (`O_DIRECT`): on a virtual disk it differs
//! from file to file, and it multiplies every page a query reads.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::Rng;

/// What one side of a cold run cost.
pub struct Cold {
    pub seconds: f64,
    pub read_bytes: u64,
    pub faults: u64,
}

/// Runs `f` and measures it against this process's I/O counters.
pub fn measure(f: impl FnOnce()) -> Cold {
    let (bytes, faults) = counters();
    let started = Instant::now();
    f();
    let seconds = started.elapsed().as_secs_f64();
    let (bytes_after, faults_after) = counters();
    Cold {
        seconds,
        read_bytes: bytes_after - bytes,
        faults: faults_after - faults,
    }
}

/// This process's bytes read from storage and major page faults so far.
fn counters() -> (u64, u64) {
    let io = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    let read_bytes = io
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("read_bytes in /proc/self/io");
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name, which may hold spaces: majflt is the tenth.
    let rest = &stat[stat.rfind(')').expect("stat") + 2..];
    let majflt = rest
        .split(' ')
        .nth(9)
        .and_then(|v| v.parse().ok())
        .expect("majflt in /proc/self/stat");
    (read_bytes, majflt)
}

/// Writes dirty pages out and drops every clean page the kernel caches. Pages a process has
/// mapped stay, so the engine and SQLite are closed before each call.
pub fn empty_page_cache() {
    let synced = std::process::Command::new("sync").status();
    assert!(
        synced.is_ok_and(|s| s.success()),
        "`sync` failed before emptying the page cache"
    );
    if let Err(e) = std::fs::write("/proc/sys/vm/drop_caches", "3") {
        panic!(
            "INDEX_BENCH_COLD empties the page cache before each run, which needs root \
             (writing /proc/sys/vm/drop_caches: {e})"
        );
    }
}

/// Mean time of `reads` random 4 KB reads of `path` past the page cache.
pub fn random_read_latency(path: &Path, reads: u32) -> Duration {
    const PAGE: usize = 4096;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {} with O_DIRECT: {e}", path.display()));
    let pages = file.metadata().expect("metadata").len() / PAGE as u64;
    // O_DIRECT needs a buffer aligned to the block size.
    let mut backing = vec![0u8; 2 * PAGE];
    let skip = backing.as_ptr().align_offset(PAGE);
    let buf = &mut backing[skip..skip + PAGE];
    let mut rng = Rng(0xD15C);
    let started = Instant::now();
    for _ in 0..reads {
        let at = rng.below(pages.max(1)) * PAGE as u64;
        file.read_exact_at(buf, at).expect("O_DIRECT read");
    }
    started.elapsed() / reads
}
