//! Index transformations: replacing a container's indexing policy and rebuilding its index
//! in the background, as the service does ("adding an index takes some time; removing one
//! takes effect immediately").
//!
//! A replacement starts a new index *generation* and records an [`IndexBuild`] in the
//! container's definition. The builder walks the items in key order in small write
//! transactions, adding each item's entries under the new policy and advancing a cursor.
//! Writes keep the previous generation current for every item and the new one for items
//! the builder has passed (the builder indexes the others when it reaches them, in their
//! latest version), so the new generation is exact the moment the cursor reaches the end.
//! Until then queries read the previous generation and rely only on paths both policies
//! index. Finished and abandoned generations are deleted in bounded batches afterwards.

use std::time::{Duration, Instant};

use super::Store;
use super::catalog::{ContainerDef, IndexBuild};
use super::epk::Epk;
use super::index::IndexLayout;
use super::index_delta::IndexDelta;
use super::indexing::IndexingPolicy;
use crate::error::{Error, Result, StatusCode};

/// Items indexed per write transaction, so a rebuild never holds the writer long.
pub const BUILD_BATCH: usize = 1000;
/// Entries of a retired generation deleted per write transaction.
const DROP_BATCH: usize = 20_000;

/// Meta key holding the store's on-disk format version.
const FORMAT_KEY: &[u8] = b"format";
/// The format this build writes. 2: every item has its index entries.
pub const FORMAT: u32 = 2;

impl Store {
    /// Whether the store's recorded format is this build's (or newer).
    fn format_is_current(&self, txn: &super::RoTxn) -> Result<bool> {
        let version = self
            .meta
            .get(txn, FORMAT_KEY)?
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes);
        Ok(version.is_some_and(|v| v >= FORMAT))
    }

    /// For a store opened read-only, which cannot be upgraded: 403 when it would need it.
    pub(crate) fn check_format_read_only(&self) -> Result<()> {
        if self.format_is_current(&self.read_txn()?)? {
            return Ok(());
        }
        Err(crate::error::Error::new(
            crate::error::StatusCode::Forbidden,
            format!(
                "the store in {} was written by an older version and must be upgraded, which \
                 needs write access once ({})",
                self.path().display(),
                self.read_only().unwrap_or("it is read-only")
            ),
        ))
    }

    /// Brings a store written by an older build up to [`FORMAT`]. A store from before the
    /// index existed has items without index entries: each container's index is rebuilt
    /// in the background like a policy replacement whose previous policy indexed nothing,
    /// so queries scan until it is complete. A new store is simply marked current.
    pub(crate) fn upgrade_format(&self) -> Result<()> {
        let mut txn = self.write_txn()?;
        if self.format_is_current(&txn)? {
            return Ok(());
        }
        for db in self.list_databases(&txn)? {
            for def in self.list_containers(&txn, &db.id)? {
                if !def.indexing_policy.is_indexing_enabled() || def.index_build.is_some() {
                    continue;
                }
                let mut def = def.clone();
                let total = self.container_stats(&txn, &def)?.counters.items;
                def.rebuild_index_from_nothing(total);
                self.put_container(&mut txn, &def)?;
            }
        }
        self.meta.put(&mut txn, FORMAT_KEY, &FORMAT.to_le_bytes())?;
        txn.commit()?;
        Ok(())
    }

    /// Replaces the indexing policy of `db/name`. The new index builds in the background;
    /// see the module documentation. Its vector and full-text indexes must be on paths of
    /// the container's policies, and its vector indexes equal the current ones (they are
    /// immutable on the service); 400 otherwise.
    pub fn set_indexing_policy(
        &self,
        db: &str,
        name: &str,
        policy: IndexingPolicy,
    ) -> Result<ContainerDef> {
        let policy = policy.normalized();
        policy
            .validate()
            .map_err(|e| Error::bad_request(format!("invalid indexing policy: {e}")))?;
        let mut txn = self.write_txn()?;
        let mut def = (*self.container(&txn, db, name)?).clone();
        super::search_policy::validate_search_indexes(
            &policy,
            def.vector_embedding_policy.as_ref(),
            def.full_text_policy.as_ref(),
        )?;
        super::search_policy::check_vector_indexes_unchanged(&def.indexing_policy, &policy)?;
        if def.ttl_enabled() && !policy.is_indexing_enabled() {
            return Err(Error::bad_request(
                "The indexing mode 'none' cannot be used while time to live is on: TTL needs \
                 the index. Turn off the container's default TTL first.",
            ));
        }
        let abandoned = def.index_build.take();
        // Generations only grow: the previous one is at most the current one.
        let (replaced_generation, replaced_string_bytes) = def.start_index_generation();
        let (previous_generation, previous_string_bytes, previous_policy) = match abandoned {
            // A build in progress is abandoned; the last complete index stays the base.
            Some(build) => {
                def.retired_index_generations.push(replaced_generation);
                (
                    build.previous_generation,
                    build.previous_string_bytes,
                    build.previous_policy,
                )
            }
            None => (
                replaced_generation,
                replaced_string_bytes,
                def.indexing_policy.clone(),
            ),
        };
        if policy.is_indexing_enabled() {
            let total = self.container_stats(&txn, &def)?.counters.items;
            def.index_build = Some(IndexBuild {
                previous_policy,
                previous_generation,
                previous_string_bytes,
                resume_after: None,
                done: 0,
                total,
                loader: None,
            });
        } else {
            // Nothing to build: the old index stops serving at once.
            def.retired_index_generations.push(previous_generation);
        }
        def.indexing_policy = policy;
        self.put_container(&mut txn, &def)?;
        txn.commit()?;
        Ok(def)
    }

    /// Advances the index build (or the cleanup of retired generations) of one container
    /// by up to `batches` transactions. Returns whether nothing is left to do.
    pub fn advance_index_build(&self, db: &str, name: &str, batches: usize) -> Result<bool> {
        for _ in 0..batches {
            let mut txn = self.write_txn()?;
            let mut def = (*self.container(&txn, db, name)?).clone();
            if let Some(build) = def.index_build.clone() {
                let layout = IndexLayout::current(&def);
                let start = match &build.resume_after {
                    Some(hex) => {
                        let mut k = Epk::from_hex(hex)
                            .ok_or_else(|| Error::corrupt("index build cursor"))?
                            .0;
                        k.push(0); // strictly after the last item indexed
                        Some(k)
                    }
                    None => None,
                };
                let mut batch = Vec::with_capacity(BUILD_BATCH);
                for item in self.stored_items(&txn, &def, start.as_deref())? {
                    let item = item?;
                    batch.push((item.key.to_vec(), item.entries(&layout)?));
                    if batch.len() >= BUILD_BATCH {
                        break;
                    }
                }
                let mut delta = IndexDelta::new(self);
                for (_, entries) in &batch {
                    delta.apply(def.index_generation, None, Some(entries));
                }
                delta.commit(self, &mut txn, def.rid)?;
                let finished = batch.len() < BUILD_BATCH;
                if finished {
                    def.index_build = None;
                    if build.previous_generation != def.index_generation {
                        def.retired_index_generations
                            .push(build.previous_generation);
                    }
                } else if let Some(b) = def.index_build.as_mut() {
                    b.done += batch.len() as u64;
                    b.resume_after = batch.last().map(|(k, _)| Epk(k.clone()).to_hex());
                }
                self.put_container(&mut txn, &def)?;
                // A thousand documents' entries, landing all over the index.
                self.commit_large(txn)?;
                continue;
            }
            let Some(&generation) = def.retired_index_generations.first() else {
                return Ok(true);
            };
            if self.drop_index_generation(&mut txn, def.rid, generation, DROP_BATCH)? {
                def.retired_index_generations.remove(0);
                self.put_container(&mut txn, &def)?;
            }
            txn.commit()?;
        }
        let txn = self.read_txn()?;
        let def = self.container(&txn, db, name)?;
        Ok(def.index_build.is_none() && def.retired_index_generations.is_empty())
    }

    /// Runs every pending index build and cleanup for about `budget` of wall time (the
    /// background thread calls this on each tick).
    pub fn advance_index_builds(&self, budget: Duration) -> Result<()> {
        let started = Instant::now();
        let pending: Vec<(String, String)> = {
            let txn = self.read_txn()?;
            let mut out = Vec::new();
            for db in self.list_databases(&txn)? {
                for c in self.list_containers(&txn, &db.id)? {
                    if c.index_build
                        .as_ref()
                        .is_some_and(|b| b.is_held_by_a_loader())
                    {
                        continue; // its loader builds the index when it is done
                    }
                    if c.index_build.is_some() || !c.retired_index_generations.is_empty() {
                        out.push((c.database.clone(), c.id.clone()));
                    }
                }
            }
            out
        };
        for (db, name) in pending {
            while started.elapsed() < budget {
                match self.advance_index_build(&db, &name, 1) {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) if e.status == StatusCode::NotFound => break, // deleted meanwhile
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }
}
