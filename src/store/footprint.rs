//! What the data file holds: each of the store's databases (its parts) with its entries and
//! the pages it occupies, and the file's free pages, from LMDB's own page counts (no entry is
//! read, so it costs the same for any store).

use serde::Serialize;

use super::Store;
use crate::error::Result;

/// What each part of the data file holds, for people (`cosmoscope stats`, the README).
const HOLDS: [(&str, &str); 11] = [
    (
        "meta",
        "the catalog: databases, containers, scripts, counters",
    ),
    (
        "items",
        "every item's JSON with its header (etag, timestamps, LSN)",
    ),
    ("logical", "statistics per logical partition (items, bytes)"),
    ("range_stats", "statistics and LSN per physical partition"),
    ("container_stats", "statistics and sequences per container"),
    (
        "feed",
        "the change feed: one record per write, images of superseded versions",
    ),
    ("meter", "RU consumed per physical partition per second"),
    ("ttl", "when items expire"),
    ("unique", "unique key constraints"),
    (
        "index",
        "index entries: one per indexed path and value of every item",
    ),
    ("index_counts", "how many items define each indexed path"),
];

/// One part of the data file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    pub name: &'static str,
    pub holds: &'static str,
    pub entries: u64,
    pub pages: u64,
    pub bytes: u64,
}

/// The data file's size, its parts and its free pages.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Footprint {
    pub file_bytes: u64,
    pub page_size: u64,
    pub parts: Vec<Part>,
    /// Pages no part uses: left by earlier transactions, reused by later ones (`compact`
    /// gives them back to the file system).
    pub free_bytes: u64,
}

impl Store {
    pub fn footprint(&self) -> Result<Footprint> {
        let rtxn = self.read_txn()?;
        let unnamed = self.env.unnamed_database_stat();
        let page_size = u64::from(unnamed.page_size);
        // The unnamed database holds the names of the others.
        let mut used = (unnamed.branch_pages + unnamed.leaf_pages + unnamed.overflow_pages) as u64;
        let mut parts = Vec::with_capacity(HOLDS.len());
        for (name, db) in self.databases() {
            let stat = db.stat(&rtxn)?;
            let pages = (stat.branch_pages + stat.leaf_pages + stat.overflow_pages) as u64;
            used += pages;
            parts.push(Part {
                name,
                holds: HOLDS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, holds)| holds),
                entries: stat.entries as u64,
                pages,
                bytes: pages * page_size,
            });
        }
        // Two meta pages, then pages up to the last one used.
        let file_pages = self.env.info().last_page_number as u64 + 1;
        Ok(Footprint {
            file_bytes: file_pages * page_size,
            page_size,
            parts,
            free_bytes: file_pages.saturating_sub(used + 2) * page_size,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_part_says_what_it_holds() {
        let names: Vec<&str> = super::HOLDS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, super::super::DATABASES);
    }
}
