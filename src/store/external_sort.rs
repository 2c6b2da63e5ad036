//! Sorting more byte keys than memory should hold: keys are buffered up to a budget, each
//! full buffer is sorted and written to an anonymous temporary file (a *run*), and reading
//! back merges the runs. Used to build a whole index generation in key order
//! ([`super::bulk_index`]), so that its entries are appended to the tree, which fills every
//! page, instead of inserted among each other, which splits pages and rewrites them.
//!
//! The sort compares keys by two integers made of their first 32 bytes after a prefix that
//! every key shares (`skip`: an index generation's container and generation), and only
//! when those are equal by the rest of the bytes: the sort then reads the keys' bytes
//! rarely, and the 48-byte records it moves are all it touches.
//!
//! A full buffer is sorted and written on a thread of its own while the caller fills the
//! other half of the budget: sorting a run and copying it into the page cache took half of
//! the pushing thread's time in a profile of a million-order import's index build, which
//! it spent while the thread computing the entries waited.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::codec::be_words;
use crate::error::{Error, Result};

/// Buffered bytes per run file, reading or writing.
const IO_BUFFER: usize = 1 << 20;
/// Read buffers of all the runs a merge reads, together: with one [`IO_BUFFER`] per run, a
/// ten-million-order index build (about 190 runs) held 190 MB of them, growing with the
/// data. Each run gets its share, at least [`MIN_READ_BUFFER`].
const MERGE_BUFFERS: usize = 64 << 20;
const MIN_READ_BUFFER: usize = 64 << 10;

/// One buffered key: its leading bytes as integers, and where its bytes are.
#[derive(Clone, Copy)]
struct Head {
    high: u128,
    low: u128,
    at: u32,
    len: u32,
}

/// Keys pushed in any order, read back in byte order (duplicates included).
pub struct KeySorter {
    dir: PathBuf,
    skip: usize,
    /// Bytes one buffer holds at most: half the budget, the other half being the buffer
    /// that is sorted and written meanwhile.
    budget: usize,
    buffer: Buffer,
    runs: Vec<File>,
    /// The run being sorted and written, which gives its buffer back.
    spilling: Option<std::thread::JoinHandle<Result<(File, Buffer)>>>,
    #[cfg(test)]
    pushed: u64,
}

/// Keys held in memory: their bytes back to back, and a head for each.
#[derive(Default)]
struct Buffer {
    arena: Vec<u8>,
    heads: Vec<Head>,
}

impl KeySorter {
    /// A sorter holding at most about `budget` bytes in memory, writing its runs in `dir`.
    /// `skip` leading bytes are the same in every key.
    pub fn new(dir: &Path, skip: usize, budget: usize) -> KeySorter {
        KeySorter {
            dir: dir.to_path_buf(),
            skip,
            budget: (budget / 2).max(1 << 16),
            buffer: Buffer::default(),
            runs: Vec::new(),
            spilling: None,
            #[cfg(test)]
            pushed: 0,
        }
    }

    /// Keys pushed so far.
    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.pushed
    }

    /// Runs written to disk so far, or being written.
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len() + usize::from(self.spilling.is_some())
    }

    pub fn push(&mut self, key: &[u8]) -> Result<()> {
        let buffer = &self.buffer;
        let held = buffer.arena.len() + buffer.heads.len() * std::mem::size_of::<Head>();
        if held + key.len() > self.budget && !buffer.heads.is_empty() {
            self.spill()?;
        }
        // Equal heads fall back to the tails, then to the lengths (a zero byte and the
        // padding tie).
        let [high, low] = be_words::<2>(key.get(self.skip..).unwrap_or_default());
        let buffer = &mut self.buffer;
        let at = u32::try_from(buffer.arena.len())
            .map_err(|_| Error::internal("a sort buffer outgrew 4 GB"))?;
        buffer.arena.extend_from_slice(key);
        buffer.heads.push(Head {
            high,
            low,
            at,
            len: key.len() as u32,
        });
        #[cfg(test)]
        {
            self.pushed += 1;
        }
        Ok(())
    }

    /// The keys in order: from memory when they all fitted, else merged from the runs.
    pub fn into_sorted(mut self) -> Result<SortedKeys> {
        self.written_run()?;
        if self.runs.is_empty() {
            let Buffer { arena, mut heads } = self.buffer;
            sort(&arena, &mut heads, self.skip);
            return Ok(SortedKeys(Source::Memory {
                arena,
                heads,
                next: 0,
            }));
        }
        if !self.buffer.heads.is_empty() {
            self.spill()?;
            self.written_run()?;
        }
        let mut merge = Merge {
            readers: Vec::with_capacity(self.runs.len()),
            heap: BinaryHeap::with_capacity(self.runs.len()),
        };
        let buffer = (MERGE_BUFFERS / self.runs.len()).clamp(MIN_READ_BUFFER, IO_BUFFER);
        for mut file in self.runs {
            file.seek(SeekFrom::Start(0))?;
            let mut reader = BufReader::with_capacity(buffer, file);
            let mut key = Vec::new();
            if read_key(&mut reader, &mut key)? {
                merge.heap.push(Reverse((key, merge.readers.len())));
            }
            merge.readers.push(reader);
        }
        Ok(SortedKeys(Source::Runs(merge)))
    }

    /// Hands what is buffered to a thread that sorts it and writes it to a new run (after
    /// the run before it is written), and goes on with the buffer that run gave back.
    fn spill(&mut self) -> Result<()> {
        let spare = self.written_run()?;
        let full = std::mem::replace(&mut self.buffer, spare);
        // The buffer is sent once the thread runs, so that it stays here if none can start.
        let (send, receive) = std::sync::mpsc::channel::<Buffer>();
        let (dir, skip) = (self.dir.clone(), self.skip);
        let spawned = std::thread::Builder::new()
            .name("cosmoscope-sort".into())
            .spawn(move || {
                let full = receive
                    .recv()
                    .map_err(|_| Error::internal("a sort run was never handed over"))?;
                write_run(&dir, skip, full)
            });
        match spawned {
            Ok(handle) => {
                // The thread holds the receiver until it has the buffer: this cannot fail.
                let _ = send.send(full);
                self.spilling = Some(handle);
            }
            // No thread to be had: written on this one.
            Err(_) => {
                let (file, spare) = write_run(&self.dir, self.skip, full)?;
                self.runs.push(file);
                self.buffer = spare;
            }
        }
        Ok(())
    }

    /// Waits for the run being written, if any, and keeps it; returns the buffer it held,
    /// emptied (or a new one).
    fn written_run(&mut self) -> Result<Buffer> {
        let Some(handle) = self.spilling.take() else {
            return Ok(Buffer::default());
        };
        let (file, buffer) = handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        self.runs.push(file);
        Ok(buffer)
    }
}

/// Orders `heads` by the keys they point to in `arena`.
fn sort(arena: &[u8], heads: &mut [Head], skip: usize) {
    let bytes = |h: &Head| &arena[h.at as usize..(h.at + h.len) as usize];
    heads.sort_unstable_by(|a, b| {
        (a.high, a.low)
            .cmp(&(b.high, b.low))
            .then_with(|| tail(bytes(a), skip).cmp(tail(bytes(b), skip)))
            // Equal so far: one is the other padded with zero bytes, and the shorter is its
            // prefix.
            .then_with(|| a.len.cmp(&b.len))
    });
}

/// Sorts `buffer` and writes it to a new run in `dir`; returns the run and the buffer,
/// emptied for reuse.
fn write_run(dir: &Path, skip: usize, mut buffer: Buffer) -> Result<(File, Buffer)> {
    sort(&buffer.arena, &mut buffer.heads, skip);
    let file = tempfile::tempfile_in(dir).map_err(|e| {
        Error::internal(format!(
            "cannot create a temporary sort file in {}: {e}",
            dir.display()
        ))
    })?;
    let mut out = BufWriter::with_capacity(IO_BUFFER, file);
    let mut previous: &[u8] = &[];
    for h in &buffer.heads {
        let key = &buffer.arena[h.at as usize..(h.at + h.len) as usize];
        let shared = shared_prefix(key, previous);
        write_varint(&mut out, shared)?;
        write_varint(&mut out, key.len() - shared)?;
        out.write_all(&key[shared..])?;
        previous = key;
    }
    let file = out
        .into_inner()
        .map_err(|e| Error::internal(format!("cannot write a temporary sort file: {e}")))?;
    buffer.arena.clear();
    buffer.heads.clear();
    Ok((file, buffer))
}

/// How many leading bytes `a` and `b` have in common, compared eight at a time (byte by
/// byte this was a sixth of a million-order import's sort).
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    let (a8, _) = a.as_chunks::<8>();
    let (b8, _) = b.as_chunks::<8>();
    let words = a8.iter().zip(b8).take_while(|(x, y)| x == y).count() * 8;
    let rest = a[words..].iter().zip(&b[words..]);
    words + rest.take_while(|(x, y)| x == y).count()
}

/// Bytes past the shared prefix and the 32 the heads hold.
fn tail(key: &[u8], skip: usize) -> &[u8] {
    key.get(skip + 32..).unwrap_or_default()
}

fn write_varint(out: &mut impl Write, mut n: usize) -> Result<()> {
    loop {
        let byte = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.write_all(&[byte])?;
            return Ok(());
        }
        out.write_all(&[byte | 0x80])?;
    }
}

/// A varint, or `None` at the end of the run (before its first byte).
fn read_varint(reader: &mut impl Read) -> Result<Option<usize>> {
    let mut n = 0usize;
    for shift in (0..64).step_by(7) {
        let mut byte = [0u8];
        match reader.read_exact(&mut byte) {
            Ok(()) => {}
            Err(e) if shift == 0 && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        }
        n |= usize::from(byte[0] & 0x7F) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(Some(n));
        }
    }
    Err(Error::internal("a temporary sort file is damaged"))
}

/// Reads the next key of a run into `key`, which holds the run's previous key: runs store
/// each key as the length it shares with the one before and the bytes after (sorted keys
/// share long prefixes, so a run is a fraction of its keys' size). False at the run's end.
fn read_key(reader: &mut BufReader<File>, key: &mut Vec<u8>) -> Result<bool> {
    let Some(shared) = read_varint(reader)? else {
        return Ok(false);
    };
    let rest =
        read_varint(reader)?.ok_or_else(|| Error::internal("a temporary sort file ends early"))?;
    if shared > key.len() {
        return Err(Error::internal("a temporary sort file is damaged"));
    }
    key.truncate(shared);
    let at = key.len();
    key.resize(at + rest, 0);
    reader.read_exact(&mut key[at..])?;
    Ok(true)
}

/// The runs being merged: each one's next key in a heap.
struct Merge {
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
}

/// Sorted keys, read one at a time.
pub struct SortedKeys(Source);

enum Source {
    Memory {
        arena: Vec<u8>,
        heads: Vec<Head>,
        next: usize,
    },
    Runs(Merge),
}

impl SortedKeys {
    /// Puts the next key into `out`; false when every key was read.
    pub fn next_into(&mut self, out: &mut Vec<u8>) -> Result<bool> {
        match &mut self.0 {
            Source::Memory { arena, heads, next } => {
                let Some(h) = heads.get(*next) else {
                    return Ok(false);
                };
                *next += 1;
                out.clear();
                out.extend_from_slice(&arena[h.at as usize..(h.at + h.len) as usize]);
                Ok(true)
            }
            Source::Runs(merge) => {
                let Some(Reverse((mut key, run))) = merge.heap.pop() else {
                    return Ok(false);
                };
                // Copied out: the run's next key is read over this one, which it extends.
                out.clear();
                out.extend_from_slice(&key);
                if read_key(&mut merge.readers[run], &mut key)? {
                    merge.heap.push(Reverse((key, run)));
                }
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shared_prefix_is_counted_across_words() {
        let naive = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let base: Vec<u8> = (0..40).collect();
        for cut in 0..=40 {
            for change in [0, 3, 7, 8, 9, 15, 16, 17, 39] {
                let a = &base[..cut];
                let mut b = base.clone();
                if change < b.len() {
                    b[change] ^= 0xFF;
                }
                assert_eq!(
                    shared_prefix(a, &b),
                    naive(a, &b),
                    "cut {cut} change {change}"
                );
                assert_eq!(
                    shared_prefix(&b, a),
                    naive(&b, a),
                    "cut {cut} change {change}"
                );
            }
        }
    }

    use super::*;

    /// Keys of random length and bytes (a shared prefix, then mostly few distinct bytes
    /// so that heads tie and tails decide), pushed in random order.
    fn keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let len = 8 + (next() % 60) as usize;
                let mut k = vec![7u8; 8];
                k.extend((8..len).map(|_| (next() % 3) as u8));
                k
            })
            .collect()
    }

    fn drain(mut sorted: SortedKeys) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut key = Vec::new();
        while sorted.next_into(&mut key).unwrap() {
            out.push(key.clone());
        }
        out
    }

    #[test]
    fn sorts_in_memory_and_through_runs_alike() {
        let dir = tempfile::tempdir().unwrap();
        let input = keys(20_000, 0x5EED);
        let mut expected = input.clone();
        expected.sort();
        for budget in [usize::MAX, 1 << 16] {
            let mut sorter = KeySorter::new(dir.path(), 8, budget);
            for k in &input {
                sorter.push(k).unwrap();
            }
            assert_eq!(sorter.len(), input.len() as u64);
            let spilled = sorter.runs() > 0;
            assert_eq!(spilled, budget != usize::MAX);
            assert_eq!(drain(sorter.into_sorted().unwrap()), expected);
        }
    }

    #[test]
    fn a_zero_byte_orders_after_the_key_it_extends() {
        let dir = tempfile::tempdir().unwrap();
        let mut sorter = KeySorter::new(dir.path(), 0, usize::MAX);
        for k in [&b"a\0"[..], b"a", b"a\0\0", b"", b"a\x01"] {
            sorter.push(k).unwrap();
        }
        let out = drain(sorter.into_sorted().unwrap());
        let expected: Vec<Vec<u8>> = [&b""[..], b"a", b"a\0", b"a\0\0", b"a\x01"]
            .iter()
            .map(|k| k.to_vec())
            .collect();
        assert_eq!(out, expected);
    }
}
