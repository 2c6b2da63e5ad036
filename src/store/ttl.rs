//! Time to live: purging expired items.
//!
//! Expired items are invisible to reads the moment they expire (readers check the expiry
//! in the item header); this module deletes them physically, in the background, through the
//! same write path as any delete so the all-versions feed shows them with
//! `timeToLiveExpired: true` and statistics stay exact.

use super::Store;
use super::epk::Epk;
use super::keys;
use super::write::WriteBatch;
use crate::error::{Result, StatusCode};

/// Items purged per transaction, so a large expiry never holds the writer long.
const PURGE_BATCH: usize = 1000;

impl Store {
    /// Purges items whose expiry is at or before `now` in every container with TTL on.
    /// Returns how many were purged.
    pub fn purge_expired(&self, now: i64) -> Result<usize> {
        let containers = {
            let txn = self.read_txn()?;
            let mut all = Vec::new();
            for db in self.list_databases(&txn)? {
                for c in self.list_containers(&txn, &db.id)? {
                    if c.ttl_enabled() {
                        all.push(c);
                    }
                }
            }
            all
        };
        let mut purged = 0;
        for def in containers {
            loop {
                let due = {
                    let txn = self.read_txn()?;
                    let start = keys::ttl(def.rid, 0, &Epk::min(), "");
                    let end = keys::ttl(def.rid, now.max(0) as u64 + 1, &Epk::min(), "");
                    let epk_len = def.partition_key.epk_len();
                    let mut due = Vec::new();
                    for entry in self.ttl.range(&txn, &keys::half_open(&start, &end))? {
                        let (k, _) = entry?;
                        let Some(rest) = k.get(12..) else { continue };
                        if rest.len() < epk_len {
                            continue;
                        }
                        let (epk, id) = rest.split_at(epk_len);
                        let Ok(id) = std::str::from_utf8(id) else {
                            continue;
                        };
                        due.push((Epk(epk.to_vec()), id.to_string()));
                        if due.len() >= PURGE_BATCH {
                            break;
                        }
                    }
                    due
                };
                if due.is_empty() {
                    break;
                }
                let mut batch = match WriteBatch::begin(self, &def.database, &def.id) {
                    Ok(b) => b,
                    Err(e) if e.status == StatusCode::NotFound => break, // deleted meanwhile
                    Err(e) => return Err(e),
                };
                let mut progressed = 0;
                for (epk, id) in &due {
                    if batch.expire(epk, id)? {
                        progressed += 1;
                    }
                }
                batch.commit()?;
                purged += progressed;
                if progressed == 0 || due.len() < PURGE_BATCH {
                    break;
                }
            }
        }
        Ok(purged)
    }
}
