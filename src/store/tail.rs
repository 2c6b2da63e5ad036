//! Appending past a database's last key.
//!
//! A put whose key sorts after every key in the database can be made with LMDB's
//! `MDB_APPEND`: it neither searches for the key's place nor splits the last page in half,
//! so keys written in ascending order past the end (a new container's first import batch:
//! the newest container's keys sort last) fill their pages whole. A [`Tail`] remembers the
//! largest key one transaction's writes know of and says which puts may append.

use heed::types::Bytes;
use heed::{PutFlags, RwIter, RwTxn};

use super::Db;
use crate::error::Result;

/// The largest key of one database as far as a transaction's writes know: read once, then
/// raised by every appended key. Deletes never lower it, which only makes a later key less
/// likely to be appended, never wrongly.
pub(crate) struct Tail {
    /// `None` while the database is empty.
    key: Option<Vec<u8>>,
}

impl Tail {
    pub(crate) fn of(db: &Db, txn: &RwTxn) -> Result<Tail> {
        Ok(Tail {
            key: db.last(txn)?.map(|(k, _)| k.to_vec()),
        })
    }

    /// `APPEND` for a key past the tail (which it becomes), no flags for any other.
    pub(crate) fn flags_for(&mut self, key: &[u8]) -> PutFlags {
        if self.key.as_deref().is_some_and(|tail| key <= tail) {
            return PutFlags::empty();
        }
        let tail = self.key.get_or_insert_with(Vec::new);
        tail.clear();
        tail.extend_from_slice(key);
        PutFlags::APPEND
    }

    /// Puts `key` with an empty value (an index entry) through `cursor`, appended when it
    /// is past the tail. A cursor kept across puts in key order mostly finds the next key's
    /// place on the leaf page it stands on, without a descent from the root.
    #[inline]
    pub(crate) fn put_entry(
        &mut self,
        cursor: &mut RwIter<'_, Bytes, Bytes>,
        key: &[u8],
    ) -> Result<()> {
        let flags = self.flags_for(key);
        // SAFETY: the key and the (empty) value are the caller's, not borrowed from the
        // database, so no reference into the database is held across the put. APPEND is
        // only asked for a key greater than every key in the database.
        unsafe { cursor.put_current_with_options::<Bytes>(flags, key, &[])? };
        Ok(())
    }
}
