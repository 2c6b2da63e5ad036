//! Writing an import: its records in transactions of up to a batch each, every batch in
//! item-key order, the documents parsed and encoded on a second thread while this one
//! writes.
//!
//! Written in key order, a batch puts each item next to the one before it, so its items'
//! pages are touched once each and in file order instead of at random, and its change-feed
//! events follow the items' order, which a feed reader then walks instead of seeking. The
//! service delivers a batch's changes in any order among themselves (they share one `_ts`);
//! the sort is stable, so two versions of one item keep theirs and the last wins.
//!
//! Most of an import's time per item goes to work that needs no transaction: parsing,
//! stamping, encoding, computing index entries (in a profile of 20,000 orders, 55 % of the
//! time with indexing off and 40 % with the default policy). A scoped thread does it for
//! the batch's records in the order they will be written, a few chunks ahead of the writer
//! ([`crate::store::prepare`]); a writer that catches up prepares the next chunk itself
//! rather than wait. Finding the records' keys is split between two threads likewise.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::{Engine, IMPORT_BATCH_BYTES, ImportSummary, charge_round, import};
use crate::error::{Error, Result, StatusCode};
use crate::store::item;
use crate::store::prepare::{Incoming, Preparer};
use crate::store::write::{WriteBatch, WriteKind};

/// Records per message from the preparing thread: enough that the channel costs nothing
/// next to them, few enough that the writer starts at once.
const CHUNK: usize = 32;
/// Chunks the preparing thread may run ahead of the writer: the prepared documents it
/// holds (about 10 KB per 1 KB item) stay within a few MB.
const AHEAD: usize = 16;
/// Batches smaller than this are keyed and prepared on the writing thread, where a second
/// thread would cost more than it saves.
const SMALL: usize = 64;

/// An import record placed, waiting for its write.
struct KeyedRecord {
    /// Where it is stored (container, EPK, id); empty for a record its write will refuse.
    key: Vec<u8>,
    /// Its position in the import's records, and its line in the source.
    index: usize,
    line: usize,
    /// Its item's document number if it creates one: by its place in the input, so the
    /// batch's items are numbered in the order they were given.
    number: Option<u64>,
}

/// A write refused with 429: the batch stops there and commits what it wrote.
struct Throttled {
    retry_after_ms: Option<u64>,
}

impl Engine {
    /// [`Engine::import_records`](super::Backend::import_records) with at most
    /// `batch_items` items per transaction.
    pub fn import_records_in_batches(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        batch_items: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        let batch_items = batch_items.max(1);
        let started = std::time::Instant::now();
        let mut summary = ImportSummary::default();
        let mut next = 0;
        // Records in item-key order, not yet written: a batch's, or what a 429 left of it.
        let mut pending = Vec::new();
        while next < records.len() || !pending.is_empty() {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let preparer = batch.preparer();
            if pending.is_empty() {
                let numbered_from = batch.doc_counter();
                pending = sort_window(&preparer, records, next, batch_items, numbered_from);
                next += pending.len();
            }
            let throttled =
                write_pending(&mut batch, &preparer, records, &mut pending, &mut summary)?;
            batch.commit()?;
            summary.batches += 1;
            progress(summary.items);
            if let Some(ms) = throttled.and_then(|t| t.retry_after_ms) {
                std::thread::sleep(std::time::Duration::from_millis(ms.max(1)));
            }
        }
        summary.request_charge = charge_round(summary.request_charge);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }
}

/// The records of one import transaction — from `next`, up to `batch_items` of them and
/// [`IMPORT_BATCH_BYTES`] — in item-key order. Only their keys are read here (each record
/// is parsed when it is prepared), so ordering a batch holds a key per record, not its
/// documents. Each record takes the document number its place in the input gives it, past
/// `numbered_from`, so the items a batch creates are numbered (and returned by queries
/// without ORDER BY) in the order they were given.
fn sort_window(
    preparer: &Preparer,
    records: &[import::Record],
    next: usize,
    batch_items: usize,
    numbered_from: u64,
) -> Vec<KeyedRecord> {
    let (mut end, mut bytes) = (next, 0);
    while end < records.len() && end - next < batch_items && bytes < IMPORT_BATCH_BYTES {
        bytes += records[end].json.len();
        end += 1;
    }
    let keyed = |from: usize, window: &[import::Record]| -> Vec<KeyedRecord> {
        window
            .iter()
            .enumerate()
            .map(|(i, rec)| KeyedRecord {
                key: preparer.item_key(rec.json).unwrap_or_default(),
                index: from + i,
                line: rec.line,
                number: Some(numbered_from + (from - next + i) as u64 + 1),
            })
            .collect()
    };
    let window = &records[next..end];
    let mut sorted = if window.len() < SMALL {
        keyed(next, window)
    } else {
        let half = window.len() / 2;
        std::thread::scope(|s| {
            let second = s.spawn(|| keyed(next + half, &window[half..]));
            let mut first = keyed(next, &window[..half]);
            let second = second
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            first.extend(second);
            first
        })
    };
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    sorted
}

/// Writes the records of `pending` in order, prepared by `preparer`. A 429 stops it: the
/// records not written stay in `pending`, without their numbers (in the next transaction
/// those may no longer be free, so its items take the next ones).
fn write_pending(
    batch: &mut WriteBatch,
    preparer: &Preparer,
    records: &[import::Record],
    pending: &mut Vec<KeyedRecord>,
    summary: &mut ImportSummary,
) -> Result<Option<Throttled>> {
    let work = Work {
        preparer,
        records,
        pending,
        claimed: AtomicUsize::new(0),
    };
    let stopped = if pending.len() < SMALL {
        let docs = (0..pending.len()).map(|i| work.prepare(i));
        write_all(batch, &work, docs, summary)?
    } else {
        std::thread::scope(|s| {
            let (send, prepared) = mpsc::sync_channel(AHEAD);
            let work = &work;
            s.spawn(move || {
                while let Some(chunk) = work.claim() {
                    if send.send((chunk, work.prepare_chunk(chunk))).is_err() {
                        return; // the writer stopped
                    }
                }
            });
            // Returning drops `prepared`, which stops the preparing thread.
            let docs = InOrder {
                work,
                prepared,
                early: BTreeMap::new(),
                current: Vec::new().into_iter(),
                next_chunk: 0,
            };
            write_all(batch, work, docs, summary)
        })?
    };
    Ok(match stopped {
        None => {
            pending.clear();
            None
        }
        Some((i, throttled)) => {
            pending.drain(..i);
            for rec in pending.iter_mut() {
                rec.number = None;
            }
            Some(throttled)
        }
    })
}

/// Writes `docs`, the documents of `work.pending` in order, until a 429: then where it
/// stopped and the 429.
fn write_all(
    batch: &mut WriteBatch,
    work: &Work,
    docs: impl Iterator<Item = Result<Incoming>>,
    summary: &mut ImportSummary,
) -> Result<Option<(usize, Throttled)>> {
    for (i, doc) in docs.enumerate() {
        if let Some(t) = write(batch, work.records, &work.pending[i], doc, summary)? {
            return Ok(Some((i, t)));
        }
    }
    Ok(None)
}

/// A batch's documents to prepare, in chunks that the preparing thread and the writer
/// claim in turn.
struct Work<'a> {
    preparer: &'a Preparer,
    records: &'a [import::Record<'a>],
    pending: &'a [KeyedRecord],
    /// The next chunk nobody has claimed (past the last once all are).
    claimed: AtomicUsize,
}

impl Work<'_> {
    fn chunks(&self) -> usize {
        self.pending.len().div_ceil(CHUNK)
    }

    fn claim(&self) -> Option<usize> {
        let chunk = self.claimed.fetch_add(1, Ordering::Relaxed);
        (chunk < self.chunks()).then_some(chunk)
    }

    fn prepare_chunk(&self, chunk: usize) -> Vec<Result<Incoming>> {
        let start = chunk * CHUNK;
        (start..(start + CHUNK).min(self.pending.len()))
            .map(|i| self.prepare(i))
            .collect()
    }

    /// The document of the `i`-th pending record, parsed and encoded for its write.
    fn prepare(&self, i: usize) -> Result<Incoming> {
        let rec = &self.pending[i];
        let doc = item::parse_body(self.records[rec.index].json)?;
        self.preparer.prepare(doc, i, rec.number)
    }
}

/// The documents of a [`Work`] in write order: from the preparing thread, or, when the
/// next is not there yet, prepared by the writer itself from the next unclaimed chunk, so
/// that neither thread waits while there is preparing left.
struct InOrder<'w, 'a> {
    work: &'w Work<'a>,
    prepared: mpsc::Receiver<(usize, Vec<Result<Incoming>>)>,
    /// Chunks prepared before their turn.
    early: BTreeMap<usize, Vec<Result<Incoming>>>,
    current: std::vec::IntoIter<Result<Incoming>>,
    next_chunk: usize,
}

impl InOrder<'_, '_> {
    fn take(&mut self, chunk: usize) -> Result<Vec<Result<Incoming>>> {
        loop {
            if let Some(docs) = self.early.remove(&chunk) {
                return Ok(docs);
            }
            let (at, docs) = match self.prepared.try_recv() {
                Ok(prepared) => prepared,
                Err(_) => match self.work.claim() {
                    Some(at) => (at, self.work.prepare_chunk(at)),
                    None => self
                        .prepared
                        .recv()
                        .map_err(|_| Error::internal("the thread preparing the import stopped"))?,
                },
            };
            self.early.insert(at, docs);
        }
    }
}

impl Iterator for InOrder<'_, '_> {
    type Item = Result<Incoming>;

    fn next(&mut self) -> Option<Result<Incoming>> {
        loop {
            if let Some(doc) = self.current.next() {
                return Some(doc);
            }
            if self.next_chunk == self.work.chunks() {
                return None;
            }
            match self.take(self.next_chunk) {
                Ok(docs) => self.current = docs.into_iter(),
                Err(e) => return Some(Err(e)),
            }
            self.next_chunk += 1;
        }
    }
}

/// Upserts one record; [`Throttled`] when its range refused it with 429.
fn write(
    batch: &mut WriteBatch,
    records: &[import::Record],
    rec: &KeyedRecord,
    doc: Result<Incoming>,
    summary: &mut ImportSummary,
) -> Result<Option<Throttled>> {
    let doc = doc.map_err(|e| import::at_line(e, rec.line))?;
    match batch.write_numbered(WriteKind::Upsert, doc, rec.number) {
        Ok(r) => {
            summary.request_charge += r.request_charge;
            if r.status == StatusCode::Created {
                summary.created += 1
            } else {
                summary.replaced += 1
            }
            summary.bytes += records[rec.index].json.len() as u64;
            summary.items += 1;
            Ok(None)
        }
        Err(e) if e.status == StatusCode::TooManyRequests => {
            summary.throttled += 1;
            Ok(Some(Throttled {
                retry_after_ms: e.retry_after_ms,
            }))
        }
        Err(e) => Err(import::at_line(e, rec.line)),
    }
}
