//! Loading a container without maintaining its index item by item, then building the index
//! in one sorted pass: how an import into an empty container keeps its rate as the
//! container grows.
//!
//! Written as items arrive, index entries land all over the index: every path with many
//! distinct values has entries on every page of its part of the tree, so each batch of an
//! import rewrites most of the index (LMDB copies a page on write), and an import slows
//! down in proportion to what is already loaded. Sorted first, the same entries are
//! appended: each page is written once, full, and the file holds no copies left behind.
//!
//! [`Store::defer_index`] starts an index build on an empty container whose previous
//! policy indexes nothing (as a format upgrade does, see [`super::reindex`]): writes then
//! maintain no index at all, and queries scan until the build is done. The build names
//! the loading process, and builders elsewhere leave it alone while that process lives.
//! [`Store::build_index_sorted`] reads every item from one snapshot, sorts the entries of
//! the new generation through [`KeySorter`] and appends them, then finishes the build in
//! one transaction if nothing was written to the container since the snapshot. If
//! something was, the sorted entries may miss it: they are retired, and the build starts
//! over item by item (the builder of [`super::reindex`], which follows concurrent writes).

use std::collections::HashMap;
use std::sync::mpsc;

use super::catalog::ContainerDef;
use super::external_sort::KeySorter;
use super::index::{DocEntries, IndexLayout, PathId, count_key};
use super::packed_keys::PackedKeys;
use super::read::StoredItem;
use super::tail::Tail;
use super::{Store, keys};
use crate::error::{Error, Result};

/// Memory the sort of one build holds at most; the rest goes to temporary runs.
pub const SORT_BUDGET: usize = 128 << 20;
/// Entries appended per write transaction, bounding its dirty pages (about 100 MB).
const APPEND_BATCH: usize = 1 << 20;
/// Bytes every key of one generation shares: container and generation.
const SHARED_PREFIX: usize = 8;
/// Items per chunk the computing thread is handed, and chunks it may be behind.
const CHUNK: usize = 256;
const AHEAD: usize = 8;

/// Keys per block handed from the merging thread to the one appending them.
const BLOCK_KEYS: usize = 16_384;

impl Store {
    /// Stops `db/name` from maintaining its index while it is loaded, and returns whether
    /// it did: when a build from nothing is pending (an earlier load that did not finish, a
    /// format upgrade), or, if `start` is true, when the container is empty and indexed (a
    /// non-empty container's entries would be inserted among its own anyway).
    /// [`Store::build_index_sorted`] then builds the index.
    pub fn defer_index(&self, db: &str, name: &str, start: bool) -> Result<bool> {
        let mut txn = self.write_txn()?;
        let mut def = (*self.container(&txn, db, name)?).clone();
        let pending = def
            .index_build
            .clone()
            .filter(|b| !b.previous_policy.is_indexing_enabled());
        match pending {
            // Started item by item: what it indexed may change while the load writes
            // without maintaining it, so the sorted build starts in a generation of its own.
            Some(build) if build.resume_after.is_some() => def.restart_index_build(),
            Some(_) => {}
            None if start
                && def.indexing_policy.is_indexing_enabled()
                && def.index_build.is_none()
                && self.container_stats(&txn, &def)?.counters.items == 0 =>
            {
                def.rebuild_index_from_nothing(0);
            }
            None => return Ok(false),
        }
        if let Some(build) = def.index_build.as_mut() {
            build.loader = Some(std::process::id());
        }
        self.put_container(&mut txn, &def)?;
        txn.commit()?;
        Ok(true)
    }

    /// Lets other builders take a build this process held for a load (one that
    /// [`Store::build_index_sorted`] did not finish).
    pub fn release_index_build(&self, db: &str, name: &str) -> Result<()> {
        let mut txn = self.write_txn()?;
        let mut def = (*self.container(&txn, db, name)?).clone();
        let ours = Some(std::process::id());
        match def.index_build.as_mut() {
            Some(build) if build.loader == ours => build.loader = None,
            _ => return Ok(()),
        }
        self.put_container(&mut txn, &def)?;
        txn.commit()?;
        Ok(())
    }

    /// Builds the pending index generation of `db/name` from a sorted pass over its items,
    /// when its build has not started item by item (see the module documentation). A build
    /// it leaves pending (none of this kind, replaced meanwhile, or restarted because the
    /// container was written) goes on item by item ([`Store::advance_index_build`]).
    pub fn build_index_sorted(&self, db: &str, name: &str) -> Result<()> {
        let txn = self.read_txn()?;
        let def = self.container(&txn, db, name)?;
        let Some(build) = def.index_build.clone().filter(|b| b.resume_after.is_none()) else {
            return Ok(());
        };
        let generation = def.index_generation;
        let seq = self.feed_head(&txn, &def)?;
        let layout = IndexLayout::current(&def);
        let mut sorter = KeySorter::new(self.path(), SHARED_PREFIX, SORT_BUDGET);
        let defined = self.sort_entries(&txn, &def, &layout, &mut sorter)?;
        drop(txn);
        if !self.append_sorted(sorter, db, name, &def, generation)? {
            return Ok(()); // replaced meanwhile, by whoever retired it
        }

        let mut txn = self.write_txn()?;
        if !self.still_building(&txn, db, name, def.rid, generation)? {
            return Ok(());
        }
        let mut current = (*self.container(&txn, db, name)?).clone();
        if self.feed_head(&txn, &current)? != seq {
            // The container was written since the snapshot: the sorted entries may miss it.
            current.restart_index_build();
            let items = self.container_stats(&txn, &current)?.counters.items;
            if let Some(restarted) = current.index_build.as_mut() {
                restarted.total = items; // for its progress
            }
            self.put_container(&mut txn, &current)?;
            txn.commit()?;
            return Ok(());
        }
        for (path, n) in defined {
            let key = count_key(def.rid, generation, path);
            self.index_counts.put(&mut txn, &key, &n.to_le_bytes())?;
        }
        current.index_build = None;
        if build.previous_generation != generation {
            current
                .retired_index_generations
                .push(build.previous_generation);
        }
        self.put_container(&mut txn, &current)?;
        txn.commit()?;
        Ok(())
    }

    /// Puts the entries of every item of `def` under `layout` into `sorter`, and returns
    /// how many items define each path. Parsing the items and computing their entries is
    /// half the work and sorting the other half: a second thread does the first, on chunks
    /// of items this one reads from the snapshot and sends it, while this one sorts.
    fn sort_entries(
        &self,
        txn: &super::RoTxn,
        def: &ContainerDef,
        layout: &IndexLayout,
        sorter: &mut KeySorter,
    ) -> Result<HashMap<PathId, u64>> {
        let mut defined: HashMap<PathId, u64> = HashMap::new();
        let mut absorb = |computed: Result<Vec<DocEntries>>| -> Result<()> {
            for entries in computed? {
                for key in entries.keys.iter() {
                    sorter.push(key)?;
                }
                for path in &entries.defined {
                    *defined.entry(*path).or_default() += 1;
                }
            }
            Ok(())
        };
        std::thread::scope(|s| -> Result<()> {
            let (work, todo) = mpsc::sync_channel::<Vec<StoredItem>>(AHEAD);
            // Unbounded, so the computing thread never waits on this one while this one
            // waits to hand it work; this one takes what is there after each chunk.
            let (done, computed) = mpsc::channel();
            s.spawn(move || {
                for chunk in todo {
                    let entries = chunk.iter().map(|item| item.entries(layout)).collect();
                    if done.send(entries).is_err() {
                        return; // the sort failed
                    }
                }
            });
            let mut chunk = Vec::with_capacity(CHUNK);
            for item in self.stored_items(txn, def, None)? {
                chunk.push(item?);
                if chunk.len() == CHUNK {
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                    work.send(full).map_err(|_| {
                        Error::internal("the thread computing index entries stopped")
                    })?;
                    computed.try_iter().try_for_each(&mut absorb)?;
                }
            }
            if !chunk.is_empty() {
                work.send(chunk)
                    .map_err(|_| Error::internal("the thread computing index entries stopped"))?;
            }
            drop(work);
            computed.into_iter().try_for_each(&mut absorb)
        })?;
        Ok(defined)
    }

    /// Appends the sorted keys to the index, [`APPEND_BATCH`] per transaction; false when
    /// `db/name` stopped building `generation` meanwhile. Merging the sorted runs is half
    /// the work: a second thread does it, a block of keys ahead of the puts.
    fn append_sorted(
        &self,
        sorter: KeySorter,
        db: &str,
        name: &str,
        def: &ContainerDef,
        generation: u32,
    ) -> Result<bool> {
        let mut sorted = sorter.into_sorted()?;
        std::thread::scope(|s| {
            let (send, blocks) = mpsc::sync_channel::<Result<PackedKeys>>(2);
            s.spawn(move || {
                let mut key = Vec::new();
                loop {
                    let mut block = PackedKeys::default();
                    let filled = (|| {
                        while block.len() < BLOCK_KEYS {
                            if !sorted.next_into(&mut key)? {
                                return Ok(false);
                            }
                            block.push(&[&key]);
                        }
                        Ok(true)
                    })();
                    let more = matches!(filled, Ok(true));
                    if send.send(filled.map(|_| block)).is_err() || !more {
                        return; // the writer stopped, or every key was sent
                    }
                }
            });
            let mut blocks = blocks.into_iter().peekable();
            while blocks.peek().is_some() {
                let mut txn = self.write_txn()?;
                if !self.still_building(&txn, db, name, def.rid, generation)? {
                    return Ok(false);
                }
                let mut tail = Tail::of(&self.index, &txn)?;
                let mut cursor = self.index.iter_mut(&mut txn)?;
                let mut written = 0;
                while written < APPEND_BATCH {
                    let Some(block) = blocks.next() else { break };
                    for key in block?.iter() {
                        tail.put_entry(&mut cursor, key)?;
                    }
                    written += BLOCK_KEYS;
                }
                drop(cursor);
                self.commit_large(txn)?;
            }
            Ok(true)
        })
    }

    /// Whether `db/name` is still the container `rid` building `generation`.
    fn still_building(
        &self,
        txn: &super::RoTxn,
        db: &str,
        name: &str,
        rid: keys::ContainerRid,
        generation: u32,
    ) -> Result<bool> {
        let def = match self.container(txn, db, name) {
            Ok(def) => def,
            Err(e) if e.status == crate::error::StatusCode::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        Ok(def.rid == rid && def.index_generation == generation && def.index_build.is_some())
    }
}
