//! Writing an import: its records in item-key order across the whole import
//! ([`super::import_order`]), in transactions of up to a batch each, the documents parsed
//! and encoded on a second thread while this one writes.
//!
//! Each record creates its item with the document number its place in the input gives it
//! (the numbers are set aside first, [`WriteBatch::reserve_numbers`]), so the items are
//! numbered, and returned by queries without ORDER BY, in the order they were given. The
//! service delivers changes that share a `_ts` in any order among themselves; the sort is
//! stable, so two versions of one item keep theirs and the last wins.
//!
//! Most of an import's time per item goes to work that needs no transaction: parsing,
//! stamping, encoding, computing index entries (in a profile of 20,000 orders, 55 % of the
//! time with indexing off and 40 % with the default policy). A scoped thread does it for
//! the batch's records in the order they will be written, a few chunks ahead of the writer
//! ([`crate::store::prepare`]); a writer that catches up prepares the next chunk itself
//! rather than wait.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::{Engine, IMPORT_BATCH_BYTES, ImportSummary, charge_round, import, import_order};
use crate::error::{Error, Result, StatusCode};
use crate::store::prepare::{Incoming, Preparer};
use crate::store::write::{WriteBatch, WriteKind};

/// Records per message from the preparing thread: enough that the channel costs nothing
/// next to them, few enough that the writer starts at once.
const CHUNK: usize = 32;
/// Chunks the preparing thread may run ahead of the writer: the prepared documents it
/// holds (about 10 KB per 1 KB item) stay within a few MB.
const AHEAD: usize = 16;
/// Batches smaller than this are prepared on the writing thread, where a second thread
/// would cost more than it saves.
const SMALL: usize = 64;

/// An import record waiting for its write.
struct Pending {
    /// Its index in the records written.
    index: usize,
    /// The document number of the item it creates, if it creates one (set aside).
    number: u64,
}

/// Where an import's records came from: names the record a write refused, as the caller
/// knows it (its line, and the file it is in).
pub type Locate<'a> = &'a (dyn Fn(usize, Error) -> Error + Sync);

/// How [`Engine::import_placed`]'s caller puts a placed record's text into a buffer.
pub type ReadPlaced<'a, E> =
    &'a mut dyn FnMut(&import_order::Placed, &mut Vec<u8>) -> std::result::Result<(), E>;

/// The records an import writes, and how to name one of them in an error.
struct Input<'a> {
    records: &'a [import::Record<'a>],
    locate: Locate<'a>,
}

/// A write refused with 429: the batch stops there and commits what it wrote.
struct Throttled {
    retry_after_ms: Option<u64>,
}

impl Engine {
    /// [`Engine::import_records`](super::Backend::import_records) with at most
    /// `batch_items` items per transaction: the records ordered by item key, then written.
    pub fn import_records_in_batches(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        batch_items: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        let started = std::time::Instant::now();
        let def = self.def(db, name)?;
        let mut order: Vec<(Vec<u8>, usize)> = import_order::item_keys(&def, records)
            .into_iter()
            // A record without a key goes first, and its write refuses it.
            .map(|key| key.unwrap_or_default())
            .zip(0..)
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0));
        let base = self.reserve_doc_numbers(db, name, records.len())?;
        let locate = |i: usize, e: Error| import::at_line(e, records[i].line);
        let input = Input {
            records,
            locate: &locate,
        };
        let mut summary = ImportSummary::default();
        let mut next = 0;
        while next < order.len() {
            let (mut end, mut bytes) = (next, 0);
            while end < order.len() && end - next < batch_items.max(1) && bytes < IMPORT_BATCH_BYTES
            {
                bytes += records[order[end].1].json.len();
                end += 1;
            }
            let pending = order[next..end]
                .iter()
                .map(|&(_, index)| Pending {
                    index,
                    number: base + index as u64 + 1,
                })
                .collect();
            self.write_in_order(db, name, &input, pending, &mut summary, progress)?;
            next = end;
        }
        summary.request_charge = charge_round(summary.request_charge);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Writes `records`, which are in item-key order ([`import_order::PlacedRecords`]), in
    /// one transaction (more if the container throttles it), each creating its item as
    /// number `numbers[i]` (set aside by [`Engine::reserve_doc_numbers`]). `locate` names a
    /// record the write refuses.
    pub fn import_in_order(
        &self,
        db: &str,
        name: &str,
        records: &[import::Record],
        numbers: &[u64],
        locate: Locate,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        let started = std::time::Instant::now();
        let pending = numbers
            .iter()
            .enumerate()
            .map(|(index, &number)| Pending { index, number })
            .collect();
        let mut summary = ImportSummary::default();
        let input = Input { records, locate };
        self.write_in_order(db, name, &input, pending, &mut summary, progress)?;
        summary.request_charge = charge_round(summary.request_charge);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Writes the records `order` placed ([`import_order`]), in that order, in
    /// transactions of up to `batch_items` records and [`IMPORT_BATCH_BYTES`], each record
    /// numbered by its place in the input (the numbers set aside first). `read` puts a
    /// placed record's text into its buffer, from wherever the caller keeps it (a file, a
    /// generator); `locate` names the source of a record a write refuses (the record's line
    /// is added); `written` gets each transaction's summary. Run it inside
    /// [`Engine::bulk_load`], which builds a new container's index at the end.
    pub fn import_placed<E: From<Error>>(
        &self,
        (db, name): (&str, &str),
        order: import_order::ImportOrder,
        batch_items: usize,
        read: ReadPlaced<E>,
        locate: &(dyn Fn(u32, Error) -> Error + Sync),
        written: &mut dyn FnMut(&ImportSummary),
    ) -> std::result::Result<(), E> {
        let base = self.reserve_doc_numbers(db, name, order.len() as usize)?;
        let mut placed = order.into_sorted()?.peekable();
        let mut text = Vec::new();
        while placed.peek().is_some() {
            // The next transaction's records in order, their numbers and sources.
            let mut chunk = import::Chunk::default();
            let (mut numbers, mut sources) = (Vec::new(), Vec::new());
            while chunk.len() < batch_items.max(1) && chunk.bytes() < IMPORT_BATCH_BYTES {
                let Some(record) = placed.next() else { break };
                let record = record?;
                text.clear();
                read(&record, &mut text)?;
                chunk.push(record.line, &text, record.origin);
                numbers.push(base + record.position + 1);
                sources.push(record.source);
            }
            let records = chunk.records();
            let locate =
                |i: usize, e: Error| locate(sources[i], import::at_line(e, records[i].line));
            written(&self.import_in_order(db, name, &records, &numbers, &locate, &mut |_| {})?);
        }
        Ok(())
    }

    /// Sets the next `n` document numbers of `db/name` aside for an import, and returns
    /// the last number before them.
    pub fn reserve_doc_numbers(&self, db: &str, name: &str, n: usize) -> Result<u64> {
        let mut batch = WriteBatch::begin(&self.store, db, name)?;
        let base = batch.reserve_numbers(n as u64);
        if n > 0 {
            batch.commit()?;
        }
        Ok(base)
    }

    /// Writes `pending` in its order, a transaction at a time: all of it in one unless the
    /// container throttles it, when each transaction commits what it wrote, waits the
    /// retry-after and goes on, as the SDKs' bulk mode does.
    fn write_in_order(
        &self,
        db: &str,
        name: &str,
        input: &Input,
        mut pending: Vec<Pending>,
        summary: &mut ImportSummary,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        while !pending.is_empty() {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let preparer = batch.preparer();
            let work = Work {
                preparer: &preparer,
                input,
                pending: &pending,
                claimed: AtomicUsize::new(0),
            };
            let stopped = write_pending(&mut batch, &work, summary)?;
            batch.commit()?;
            summary.batches += 1;
            progress(summary.items);
            match stopped {
                None => pending.clear(),
                Some((written, throttled)) => {
                    pending.drain(..written);
                    if let Some(ms) = throttled.retry_after_ms {
                        std::thread::sleep(std::time::Duration::from_millis(ms.max(1)));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Writes the records of `work.pending` in order, prepared ahead on a second thread when
/// there are many; until a 429: then how many it wrote, and the 429.
fn write_pending(
    batch: &mut WriteBatch,
    work: &Work,
    summary: &mut ImportSummary,
) -> Result<Option<(usize, Throttled)>> {
    if work.pending.len() < SMALL {
        let docs = (0..work.pending.len()).map(|i| work.prepare(i));
        return write_all(batch, work, docs, summary);
    }
    std::thread::scope(|s| {
        let (send, prepared) = mpsc::sync_channel(AHEAD);
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
        if let Some(t) = write(batch, work, &work.pending[i], doc, summary)? {
            return Ok(Some((i, t)));
        }
    }
    Ok(None)
}

/// A batch's documents to prepare, in chunks that the preparing thread and the writer
/// claim in turn.
struct Work<'a> {
    preparer: &'a Preparer,
    input: &'a Input<'a>,
    pending: &'a [Pending],
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

    /// The document of the `i`-th pending record, read and encoded for its write.
    fn prepare(&self, i: usize) -> Result<Incoming> {
        let rec = &self.pending[i];
        self.preparer
            .prepare_text(self.input.records[rec.index].json, i, rec.number)
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
    work: &Work,
    rec: &Pending,
    doc: Result<Incoming>,
    summary: &mut ImportSummary,
) -> Result<Option<Throttled>> {
    let doc = doc.map_err(|e| (work.input.locate)(rec.index, e))?;
    match batch.write_numbered(WriteKind::Upsert, doc, rec.number) {
        Ok(r) => {
            summary.request_charge += r.request_charge;
            if r.status == StatusCode::Created {
                summary.created += 1
            } else {
                summary.replaced += 1
            }
            summary.bytes += work.input.records[rec.index].json.len() as u64;
            summary.items += 1;
            Ok(None)
        }
        Err(e) if e.status == StatusCode::TooManyRequests => {
            summary.throttled += 1;
            Ok(Some(Throttled {
                retry_after_ms: e.retry_after_ms,
            }))
        }
        Err(e) => Err((work.input.locate)(rec.index, e)),
    }
}
