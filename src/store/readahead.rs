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

/// Windows followed at once: a walk reads its leaf pages and, for large values, overflow
/// pages written elsewhere in the file.
const STREAMS: usize = 2;

/// The stretches of the map a walk has asked to be read ahead (see the module comment).
#[derive(Debug, Default)]
pub(crate) struct ReadAhead {
    /// Per stream, the map addresses `[start, end)` asked for, most recent first.
    windows: [(usize, usize); STREAMS],
}

impl ReadAhead {
    /// Notes that the walk read `bytes` (a key or value borrowed from the map); when they
    /// lie outside every window asked for, or in the second half of one, asks for the
    /// window from their page on.
    #[inline]
    pub(crate) fn touch(&mut self, bytes: &[u8]) {
        let at = bytes.as_ptr() as usize;
        for k in 0..STREAMS {
            let (start, end) = self.windows[k];
            if (start..end).contains(&at) {
                if at >= end - WINDOW / 2 {
                    self.windows[k] = (end, end + WINDOW);
                    advise(end);
                }
                return;
            }
        }
        let page = at & !(page_size() - 1);
        self.windows.rotate_right(1);
        self.windows[0] = (page, page + WINDOW);
        advise(page);
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
    use super::{ReadAhead, WINDOW};

    #[test]
    fn a_walk_advises_each_window_once_and_follows_two_streams() {
        let buf = vec![0u8; 4 * WINDOW];
        let base = buf.as_ptr() as usize;
        let mut ra = ReadAhead::default();
        // A walk through the first window asks for it once, then for the next one at its
        // second half.
        ra.touch(&buf[0..16]);
        let first = ra.windows[0];
        assert!(first.0 <= base && base < first.1);
        ra.touch(&buf[100..116]);
        assert_eq!(ra.windows[0], first);
        ra.touch(&buf[first.1 - base - WINDOW / 2 + 8..][..8]);
        assert_eq!(ra.windows[0], (first.1, first.1 + WINDOW));
        // A value elsewhere opens a second window without losing the first stream.
        let far = &buf[3 * WINDOW + 64..][..8];
        ra.touch(far);
        assert!(ra.windows[0].0 <= far.as_ptr() as usize);
        assert_eq!(ra.windows[1], (first.1, first.1 + WINDOW));
        ra.touch(&buf[first.1 - base + 32..][..8]);
        assert_eq!(
            ra.windows[1],
            (first.1, first.1 + WINDOW),
            "the first stream is kept"
        );
    }
}
