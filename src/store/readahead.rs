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

/// What a walk asks the kernel to read ahead of it at a time.
const WINDOW: usize = 2 << 20;

/// How far a walk reads forward through one stretch before it counts as sequential: a
/// lookup that seeks and steps a few items on (the change feed's item follower does) must
/// not read a window for each seek, which would bring back the read-around.
const PROVEN: usize = 64 << 10;

/// Steps forward up to this far stay in the stream; a longer one, or one back, starts
/// another.
const NEAR: usize = 64 << 10;

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
        let at = bytes.as_ptr() as usize;
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
            let from = s.ahead_to.max(at & !(page_size() - 1));
            advise(from);
            s.ahead_to = from + WINDOW;
        }
    }
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

fn page_size() -> usize {
    // The store's pages are 4 KB, as LMDB's on Linux; the map is aligned to them.
    4096
}

#[cfg(test)]
mod tests {
    use super::{NEAR, PROVEN, ReadAhead, WINDOW};

    /// The window the most recent stream has asked for up to.
    fn ahead(ra: &ReadAhead) -> usize {
        ra.streams[0].ahead_to
    }

    #[test]
    fn a_walk_reads_ahead_once_it_proves_sequential_and_seeks_never_do() {
        let buf = vec![0u8; 4 * WINDOW];
        let at = |offset: usize| &buf[offset..offset + 8];
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
        assert!(first > buf.as_ptr() as usize + offset);
        let middle = first - WINDOW / 2 - buf.as_ptr() as usize;
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
}
