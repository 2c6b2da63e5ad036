//! Checking a store whole (`cosmoscope check`): first the data file's structure, read with
//! `pread` so a damaged file cannot fault the check itself, then, if the structure holds,
//! each container's records against each other (see `store::check`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Engine;
use crate::error::Result;
use crate::store::{DATA_FILE, check, pages};

/// What checking a store found.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub data_file: PathBuf,
    /// Pages reached from the current meta page, per database; empty for a new store.
    pub pages: Vec<(String, u64)>,
    /// Damage to the file's structure; when there is some, no container was read.
    pub damage: Option<String>,
    pub containers: Vec<ContainerReport>,
}

/// One container's check.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerReport {
    pub database: String,
    pub container: String,
    pub items: u64,
    pub feed_records: u64,
    pub index_entries: u64,
    /// False while an indexing policy change is being built (the index is then partial).
    pub index_compared: bool,
    pub problems: Vec<String>,
}

impl CheckReport {
    /// No damage and no container with a problem.
    pub fn is_sound(&self) -> bool {
        self.damage.is_none() && self.containers.iter().all(|c| c.problems.is_empty())
    }

    pub fn to_json(&self) -> Value {
        json!({
            "dataFile": self.data_file.display().to_string(),
            "sound": self.is_sound(),
            "damage": self.damage,
            "pages": self.pages.iter().map(|(db, n)| json!({"database": db, "pages": n})).collect::<Vec<_>>(),
            "containers": self.containers.iter().map(|c| json!({
                "database": c.database,
                "container": c.container,
                "items": c.items,
                "feedRecords": c.feed_records,
                "indexEntries": c.index_entries,
                "indexCompared": c.index_compared,
                "problems": c.problems,
            })).collect::<Vec<_>>(),
        })
    }
}

impl Engine {
    /// The data file's structure in `dir`, without opening the store: every page the
    /// trees reach is in the file and is the page it should be.
    pub fn check_file(dir: &Path) -> Result<CheckReport> {
        let data_file = dir.join(DATA_FILE);
        let mut report = CheckReport {
            data_file: data_file.clone(),
            pages: Vec::new(),
            damage: None,
            containers: Vec::new(),
        };
        if !data_file.exists() {
            return Ok(report);
        }
        match pages::walk(&data_file)? {
            Ok(walk) => report.pages = walk.pages,
            Err(damage) => report.damage = Some(damage.0),
        }
        Ok(report)
    }

    /// Every container's records checked against each other, added to `report` (from
    /// [`Engine::check_file`], which must have found no damage).
    pub fn check_containers(&self, report: &mut CheckReport) -> Result<()> {
        let txn = self.store.read_txn()?;
        for db in self.store.list_databases(&txn)? {
            for def in self.store.list_containers(&txn, &db.id)? {
                let found = check::check_container(&self.store, &txn, &def)?;
                report.containers.push(ContainerReport {
                    database: db.id.clone(),
                    container: def.id.clone(),
                    items: found.items,
                    feed_records: found.feed_records,
                    index_entries: found.index_entries,
                    index_compared: found.index_compared,
                    problems: found.problems,
                });
            }
        }
        Ok(())
    }
}
