//! A real container with a candidate key: created through the facade in a database of its
//! own, filled with a bulk copy of the container's items, and deleted when dropped. The
//! advisor replays the workload on it, so every charge and routing it reports is the
//! engine's own for a container with that key.

use serde_json::Value;

use super::candidates::Candidate;
use super::items::Items;
use crate::engine::{Backend, ContainerInfo, ContainerSettings, import::Record};
use crate::error::Result;
use crate::workbench::projection::throughput_of;

/// The logical partition limit the copy is created with: the placement reports partitions
/// over the container's limit; the copy must still hold them to replay the workload.
const UNLIMITED_LOGICAL_BYTES: u64 = i64::MAX as u64;

/// A temporary copy of a container under a candidate key.
pub struct Copy<'e> {
    engine: &'e dyn Backend,
    pub database: String,
    pub container: String,
}

impl<'e> Copy<'e> {
    /// Creates database `database` (which must not exist) with a container named like
    /// `source` but keyed by `candidate`, with `source`'s throughput, storage limit,
    /// indexing and search policies and unique keys (its TTL off, so nothing expires
    /// mid-replay), and copies `items` into it; `progress` gets the items written so far.
    pub fn create(
        engine: &'e dyn Backend,
        database: &str,
        source: &ContainerInfo,
        candidate: &Candidate,
        items: &Items,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Copy<'e>> {
        engine.create_database(database)?;
        let copy = Copy {
            engine,
            database: database.to_string(),
            container: source.id.clone(),
        };
        let mut settings = settings_for(source, candidate);
        settings.max_logical_partition_bytes = Some(UNLIMITED_LOGICAL_BYTES);
        engine.create_container(database, &copy.container, settings)?;
        let mut bodies = Vec::with_capacity(items.len());
        for doc in &items.docs {
            let mut doc = doc.clone();
            candidate.prepare(&mut doc)?;
            bodies.push(serde_json::to_vec(&Value::Object(doc)).unwrap_or_default());
        }
        let records: Vec<Record> = bodies
            .iter()
            .enumerate()
            .map(|(i, json)| Record { line: i + 1, json })
            .collect();
        engine.import_records(database, &copy.container, &records, progress)?;
        Ok(copy)
    }
}

/// A container like `source` (throughput, storage limits, indexing and search policies,
/// unique keys) keyed by `candidate`, its TTL off.
pub fn settings_for(source: &ContainerInfo, candidate: &Candidate) -> ContainerSettings {
    let mut settings = ContainerSettings::new(candidate.container_paths());
    settings.throughput = throughput_of(source);
    settings.max_partition_bytes = Some(source.max_partition_bytes);
    settings.max_logical_partition_bytes = Some(source.max_logical_partition_bytes);
    settings.indexing_policy = Some(source.indexing_policy.clone());
    // The search policies the indexing policy's vector and full-text indexes rest on.
    settings.vector_embedding_policy = source.vector_embedding_policy.clone();
    settings.full_text_policy = source.full_text_policy.clone();
    settings.unique_keys = source
        .unique_key_policy
        .unique_keys
        .iter()
        .map(|k| k.paths.clone())
        .collect();
    settings
}

impl Drop for Copy<'_> {
    fn drop(&mut self) {
        // A copy left behind is visible and deletable by the user; nothing to report here.
        let _ = self.engine.delete_database(&self.database);
    }
}
