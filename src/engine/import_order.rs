//! An import's records in item-key order across the whole import, whatever its size.
//!
//! Written in key order, each item lands right after the one before it: the items tree is
//! appended to, every page is written once and full, and a change-feed reader later walks
//! the items its events name instead of seeking each. Ordered one transaction at a time,
//! each of a large import's batches lands among the earlier batches' items instead: pages
//! split and are rewritten, the items tree of a million-order import ends up half empty,
//! and every batch costs more than the one before.
//!
//! An [`ImportOrder`] takes each record's item key and where its text lies (its file, its
//! offset there, its line and its place in the input) while the import checks the files,
//! and sorts them through the store's external sort, which holds a bounded amount in
//! memory and the rest in temporary files in the data directory. The import then reads the
//! records back in that order ([`PlacedRecords`]). The sort is stable: two versions of one item keep their
//! order, and the last one wins, as when the file is written line by line.

use std::sync::Arc;

use super::Engine;
use super::import::{Chunk, Origin, Record, at_line};
use crate::error::{Error, Result};
use crate::store::catalog::ContainerDef;
use crate::store::external_sort::{KeySorter, SortedKeys};
use crate::store::{item, keys, prepare};

/// Memory an import's ordering holds at most (about a million records); the rest goes to
/// temporary runs.
const ORDER_BUDGET: usize = 96 << 20;

/// Records below this many have their keys read on the calling thread alone, where a
/// second thread would cost more than it saves.
const SMALL: usize = 64;

/// Bytes after each entry's item key: its place in the input, its file, its offset and
/// length there, and its line.
const PLACE: usize = 8 + 4 + 8 + 8 + 8;

/// A record of an import, placed: where its text is, and its place in the input (which
/// numbers the item it creates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// Its place among every record of the import, from 0.
    pub position: u64,
    /// The file it was read from, as numbered by [`ImportOrder::add`]'s caller.
    pub source: u32,
    pub origin: Origin,
    pub line: usize,
}

/// The records of an import being placed in item-key order (see the module comment).
pub struct ImportOrder {
    def: Arc<ContainerDef>,
    sorter: KeySorter,
    records: u64,
    entry: Vec<u8>,
}

impl Engine {
    /// An empty ordering for an import into `db/name`.
    pub fn import_order(&self, db: &str, name: &str) -> Result<ImportOrder> {
        let def = self.def(db, name)?;
        let shared = keys::container_prefix(def.rid).len();
        Ok(ImportOrder {
            sorter: KeySorter::new(self.data_dir(), shared, ORDER_BUDGET),
            def,
            records: 0,
            entry: Vec::new(),
        })
    }
}

impl ImportOrder {
    /// Checks the records of `chunk`, read from the import's file number `source`, as
    /// their writes will (valid JSON, an id, the partition key, a valid `ttl`), and places
    /// them after the records placed before. The first record refused is refused at its
    /// line, and nothing of the chunk is placed.
    pub fn add(&mut self, source: u32, chunk: &Chunk) -> Result<()> {
        let records = chunk.records();
        let keys = check_records(&self.def, &records)?;
        for ((key, rec), origin) in keys.into_iter().zip(&records).zip(chunk.origins()) {
            self.entry.clear();
            self.entry.extend_from_slice(&key);
            self.entry.extend_from_slice(&self.records.to_be_bytes());
            self.entry.extend_from_slice(&source.to_be_bytes());
            self.entry.extend_from_slice(&origin.offset.to_be_bytes());
            self.entry.extend_from_slice(&origin.len.to_be_bytes());
            self.entry
                .extend_from_slice(&(rec.line as u64).to_be_bytes());
            self.sorter.push(&self.entry)?;
            self.records += 1;
        }
        Ok(())
    }

    /// Records placed so far.
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The records in the order to write them.
    pub fn into_sorted(self) -> Result<PlacedRecords> {
        Ok(PlacedRecords {
            sorted: self.sorter.into_sorted()?,
            entry: Vec::new(),
        })
    }
}

/// An import's records in item-key order ([`ImportOrder::into_sorted`]).
pub struct PlacedRecords {
    sorted: SortedKeys,
    entry: Vec<u8>,
}

impl Iterator for PlacedRecords {
    type Item = Result<Placed>;

    fn next(&mut self) -> Option<Result<Placed>> {
        match self.sorted.next_into(&mut self.entry) {
            Ok(true) => Some(place(&self.entry)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The place an entry of the sort records after its item key.
fn place(entry: &[u8]) -> Result<Placed> {
    let at = entry
        .len()
        .checked_sub(PLACE)
        .ok_or_else(|| Error::internal("a temporary import-order file is damaged"))?;
    let place = &entry[at..];
    let word = |from: usize, to: usize| {
        place[from..to]
            .iter()
            .fold(0u64, |v, b| (v << 8) | u64::from(*b))
    };
    Ok(Placed {
        position: word(0, 8),
        source: word(8, 12) as u32,
        origin: Origin {
            offset: word(12, 20),
            len: word(20, 28),
        },
        line: word(28, 36) as usize,
    })
}

/// The item key of each record (`None` for a record its write will refuse), read on two
/// threads when there are many.
pub(super) fn item_keys(def: &ContainerDef, records: &[Record]) -> Vec<Option<Vec<u8>>> {
    let parts = halves(records, |part| -> Vec<Option<Vec<u8>>> {
        part.iter()
            .map(|rec| prepare::item_key(def, rec.json))
            .collect()
    });
    parts.into_iter().flatten().collect()
}

/// Checks each record as its write will (valid JSON, an id, the partition key, a valid
/// `ttl`), building only those members, and returns their item keys; on two threads when
/// there are many. The first record refused, in their order, is refused at its line.
pub(super) fn check_records(def: &ContainerDef, records: &[Record]) -> Result<Vec<Vec<u8>>> {
    let now = crate::store::now_secs();
    let reads = prepare::TargetMembers::of(def);
    let check = |json: &[u8]| -> Result<Vec<u8>> {
        let doc = item::check_body(json, |name| reads.target_reads(name))?;
        let key = prepare::key_of(def, &doc)?;
        item::expiry(def, &doc, now)?;
        Ok(key)
    };
    let parts = halves(records, |part| {
        part.iter()
            .map(|rec| check(rec.json).map_err(|e| at_line(e, rec.line)))
            .collect::<Result<Vec<_>>>()
    });
    // The first half's refusal, if any, comes first.
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// `work` over the records, on this thread when they are few, else over each half on a
/// thread of its own; the results in the records' order.
fn halves<T: Send>(records: &[Record], work: impl Fn(&[Record]) -> T + Sync) -> Vec<T> {
    if records.len() < SMALL {
        return vec![work(records)];
    }
    let (first, second) = records.split_at(records.len() / 2);
    std::thread::scope(|s| {
        let later = s.spawn(|| work(second));
        let first = work(first);
        let second = later
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        vec![first, second]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_decode_as_they_were_encoded() {
        let mut entry = b"some item key".to_vec();
        for word in [7u64, 3, 1 << 40, 250, 12] {
            let bytes = word.to_be_bytes();
            // The file number is four bytes.
            entry.extend_from_slice(if word == 3 { &bytes[4..] } else { &bytes });
        }
        assert_eq!(
            place(&entry).unwrap(),
            Placed {
                position: 7,
                source: 3,
                origin: Origin {
                    offset: 1 << 40,
                    len: 250
                },
                line: 12,
            }
        );
        assert!(place(b"short").is_err());
    }
}
