//! Reading ahead of a walk through the memory map.
//!
//! The store opens LMDB with `MDB_NORDAHEAD` (the map is `MADV_RANDOM`). Without it, every
//! page fault on a page not in memory reads the 128 KB around it: a point read or an index
//! lookup of a store larger than memory, or of any store just after a restart, then reads
//! thirty-two pages for the one it needs (10,000,000 orders, a cold cache: an indexed
//! lookup of about 10 items took 87–110 ms with the read-around and 2.4–3.1 ms without, one
//! of about 1,000 items 1.0–1.3 s and 0.14–0.15 s).
//!
//! A walk in key order is the other case: imports, index builds and compaction append
//! pages in key order, so the pages a walk reads next mostly lie next in the file, and
//! reading them 4 KB per fault would cost a full scan of a cold store many times the disk's
//! sequential speed. So a walk asks the kernel to read the next stretch of the map itself
//! ([`ReadAhead::touch`], `MADV_WILLNEED`), a window at a time.
//!
//! Windows are aligned, and a window asked for in the last [`FRESH`] is not asked for again
//! ([`advise_once`]): a query or change-feed read resumed page by page starts a new walk
//! each page, and each walk asked anew for windows the one before had asked for. Asking
//! costs a page-cache lookup per page even when every page is in memory: draining 100,000
//! changes in pages of 1,000 took 102–127 ms with it against 77 ms without any read-ahead.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a walk asks the kernel to read ahead of it at a time, aligned to its size.
const WINDOW: usize = 2 << 20;

/// How far a walk reads forward through one stretch before it counts as sequential: a
/// lookup that seeks and steps a few items on (the change feed's item follower does) must
/// not read a window for each seek, which would bring back the read-around.
const PROVEN: usize = 64 << 10;

/// Steps forward up to this far stay in the stream; a longer one, or one back, starts
/// another.
const NEAR: usize = 64 << 10;

/// How long a window asked for counts as asked for: the kernel has its pages in memory or
/// on their way, unless memory is short enough to evict them within that time.
const FRESH: Duration = Duration::from_secs(1);

/// Windows remembered before the stale ones are forgotten.
const REMEMBERED: usize = 1024;

/// The store's page size (LMDB's on Linux); the map is aligned to it.
const PAGE: usize = 4096;

/// Streams followed at once: a walk reads its leaf pages and, for large values, overflow
/// pages written elsewhere in the file.
const STREAMS: usize = 2;

/// One stretch of the map a walk reads forward through.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Stream {
    /// Where it began, and the last address read.
    start: usize,
    last: usize,
    /// The end of what was asked to be read ahead (0: nothing yet).
    ahead_to: usize,
}

/// The stretches of the map a walk reads forward through (see the module comment).
#[derive(Debug, Default)]
pub(crate) struct ReadAhead {
    /// Most recently read first.
    streams: [Stream; STREAMS],
}

impl ReadAhead {
    /// Notes that the walk read `bytes` (a key or value borrowed from the map). Once a
    /// stream has gone [`PROVEN`] forward, asks for the next [`WINDOW`] of the map each time
    /// it passes the middle of the last one.
    #[inline]
    pub(crate) fn touch(&mut self, bytes: &[u8]) {
        // By page: LMDB fills a leaf page from its end, so the entries of one page lie at
        // falling addresses in key order, and a byte-exact walk would seem to jump back at
        // every entry and never prove itself.
        let at = bytes.as_ptr() as usize & !(PAGE - 1);
        let Some(k) = self
            .streams
            .iter()
            .position(|s| at >= s.last && at - s.last <= NEAR && s.last != 0)
        else {
            // A jump: a new stream, in place of the least recent.
            self.streams.rotate_right(1);
            self.streams[0] = Stream {
                start: at,
                last: at,
                ahead_to: 0,
            };
            return;
        };
        self.streams.swap(0, k);
        let s = &mut self.streams[0];
        s.last = at;
        if at - s.start >= PROVEN && at + WINDOW / 2 >= s.ahead_to {
            let from = s.ahead_to.max(at & !(WINDOW - 1));
            advise_once(from);
            s.ahead_to = from + WINDOW;
        }
    }
}

/// Asks for the window at `start` unless it was asked for within [`FRESH`], by any walk.
/// Keyed by address: a window of a store closed and mapped again at the same address within
/// [`FRESH`] is read at fault speed until then, which costs time, never a wrong answer.
/// Returns whether it asked.
fn advise_once(start: usize) -> bool {
    static ADVISED: Mutex<Vec<(usize, Instant)>> = Mutex::new(Vec::new());
    let now = Instant::now();
    {
        let mut advised = ADVISED.lock().unwrap_or_else(|e| e.into_inner());
        if advised
            .iter()
            .any(|&(w, at)| w == start && now.duration_since(at) < FRESH)
        {
            return false;
        }
        if advised.len() >= REMEMBERED {
            advised.retain(|&(_, at)| now.duration_since(at) < FRESH);
            if advised.len() >= REMEMBERED {
                advised.remove(0);
            }
        }
        advised.retain(|&(w, _)| w != start);
        advised.push((start, now));
    }
    advise(start);
    true
}

/// Asks the kernel to read the window at `start` into memory, without waiting for it. A
/// window past the file's end, or a refusal, only means nothing is read ahead.
fn advise(start: usize) {
    // SAFETY: `start` is page-aligned and lies in the store's map, which stays mapped while
    // any transaction (and so any walk) is open; MADV_WILLNEED changes no memory, it only
    // starts reads into the page cache.
    unsafe {
        libc::madvise(start as *mut libc::c_void, WINDOW, libc::MADV_WILLNEED);
    }
}

#[cfg(test)]
mod tests {
    use super::{NEAR, PAGE, PROVEN, REMEMBERED, ReadAhead, WINDOW, advise_once};

    /// The window the most recent stream has asked for up to.
    fn ahead(ra: &ReadAhead) -> usize {
        ra.streams[0].ahead_to
    }

    #[test]
    fn a_walk_reads_ahead_once_it_proves_sequential_and_seeks_never_do() {
        // Offsets from a window boundary, where the windows asked for are aligned.
        let buf = vec![0u8; 5 * WINDOW];
        let base = (buf.as_ptr() as usize).next_multiple_of(WINDOW) - buf.as_ptr() as usize;
        let at = |offset: usize| &buf[base + offset..base + offset + 8];
        let mut ra = ReadAhead::default();
        // Seeks that step a little on, far apart: never a window.
        for k in 0..3 {
            ra.touch(at(k * WINDOW));
            ra.touch(at(k * WINDOW + 4096));
            assert_eq!(ahead(&ra), 0);
        }
        // A walk: nothing until it has gone PROVEN forward, then a window, then the next
        // one only past the middle of it.
        let mut ra = ReadAhead::default();
        let mut offset = 0;
        while offset < PROVEN {
            ra.touch(at(offset));
            assert_eq!(ahead(&ra), 0, "at {offset}");
            offset += 1000;
        }
        ra.touch(at(offset));
        let first = ahead(&ra);
        let start = at(0).as_ptr() as usize;
        assert_eq!(first, start + WINDOW, "the window the walk is in");
        let middle = first - WINDOW / 2 - start;
        while offset + 1000 < middle {
            offset += 1000;
            ra.touch(at(offset));
            assert_eq!(ahead(&ra), first);
        }
        offset = middle + 8;
        ra.touch(at(offset));
        assert_eq!(ahead(&ra), first + WINDOW);
        // Values elsewhere (overflow pages) start a second stream; the first one goes on.
        ra.touch(at(3 * WINDOW));
        ra.touch(at(offset + NEAR / 2));
        assert_eq!(ahead(&ra), first + WINDOW, "the first stream is kept");
    }

    #[test]
    fn a_walk_through_leaf_pages_filled_from_their_end_proves_itself() {
        // LMDB puts a page's first entry at its end: in key order the entries of a page lie
        // at falling addresses, the pages at rising ones.
        let buf = vec![0u8; 2 * WINDOW];
        let base = (buf.as_ptr() as usize).next_multiple_of(PAGE) - buf.as_ptr() as usize;
        let mut ra = ReadAhead::default();
        for page in 0..(PROVEN / PAGE + 1) {
            for entry in (0..3).rev() {
                let offset = base + page * PAGE + entry * 1200;
                ra.touch(&buf[offset..offset + 8]);
            }
        }
        assert_ne!(
            ahead(&ra),
            0,
            "a walk of {} pages reads ahead",
            PROVEN / PAGE + 1
        );
    }

    #[test]
    fn a_window_asked_for_is_not_asked_for_again_while_fresh() {
        // Addresses no map uses (madvise refuses them, harmlessly), unique to this test.
        let window = |k: usize| usize::MAX - (REMEMBERED + 8 + k) * WINDOW + 1;
        assert!(advise_once(window(0)));
        assert!(!advise_once(window(0)), "asked again while fresh");
        assert!(advise_once(window(1)), "another window");
        // More windows than it remembers: the oldest are forgotten, none asked for twice.
        for k in 2..REMEMBERED + 4 {
            assert!(advise_once(window(k)));
        }
        assert!(!advise_once(window(REMEMBERED + 3)));
    }
}
