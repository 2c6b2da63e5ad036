//! The manifest of a sample set (`sample-data/SET/manifest.json`): its databases and
//! containers with their settings, and what fills each container — bundled item files, a
//! stream of the set's generator, or both.
//!
//! ```json
//! {
//!   "name": "blog-v1",
//!   "description": "...",
//!   "generator": { "name": "blog", "design": "v1" },
//!   "databases": [{
//!     "id": "blog-v1",
//!     "containers": [{
//!       "id": "posts",
//!       "partitionKey": "/postId",
//!       "throughput": { "autoscale": 40000 },
//!       "generated": "posts",
//!       "scripts": [{ "kind": "sprocs", "id": "createComment", "file": "scripts/createComment.js" }],
//!       "note": "why this key"
//!     }]
//!   }]
//! }
//! ```

use serde::{Deserialize, Serialize};

use super::registry;
use crate::engine::IndexingPolicy;
use crate::engine::{ContainerSettings, Throughput};
use crate::engine::{FullTextPolicy, VectorEmbeddingPolicy};
use crate::engine::{ScriptKind, ScriptSpec, TriggerOperation, TriggerType};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// The generator that fills containers with a `generated` stream.
    #[serde(default)]
    pub generator: Option<GeneratorRef>,
    pub databases: Vec<DatabaseManifest>,
}

/// Which generator, in which design (`{"name": "blog", "design": "v2"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorRef {
    pub name: String,
    pub design: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseManifest {
    pub id: String,
    pub containers: Vec<ContainerManifest>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerManifest {
    pub id: String,
    pub partition_key: PartitionKeyPaths,
    #[serde(default = "default_throughput")]
    pub throughput: Throughput,
    #[serde(default)]
    pub max_partition_bytes: Option<u64>,
    #[serde(default)]
    pub max_logical_partition_bytes: Option<u64>,
    #[serde(default)]
    pub default_ttl: Option<i64>,
    #[serde(default)]
    pub unique_keys: Vec<Vec<String>>,
    #[serde(default)]
    pub indexing_policy: Option<IndexingPolicy>,
    #[serde(default)]
    pub enforce_throughput: bool,
    #[serde(default)]
    pub feed_previous_images: bool,
    #[serde(default)]
    pub vector_embedding_policy: Option<VectorEmbeddingPolicy>,
    #[serde(default)]
    pub full_text_policy: Option<FullTextPolicy>,
    /// Item files (paths under `sample-data/`, JSON arrays or NDJSON).
    #[serde(default)]
    pub items: Vec<String>,
    /// The generator stream that fills this container.
    #[serde(default)]
    pub generated: Option<String>,
    /// Server-side scripts the design keeps its logic in (the guides' stored procedures
    /// and triggers), created with the container.
    #[serde(default)]
    pub scripts: Vec<ScriptManifest>,
    /// Why the container is shaped the way it is, for people reading the sample.
    #[serde(default)]
    pub note: Option<String>,
}

/// A script of a container: `{"kind": "sprocs"|"triggers"|"udfs", "id", "file",
/// "triggerType"?, "triggerOperation"?}`, its body in `file` under `sample-data/`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScriptManifest {
    pub kind: ScriptKind,
    pub id: String,
    pub file: String,
    #[serde(default)]
    pub trigger_type: Option<TriggerType>,
    #[serde(default)]
    pub trigger_operation: Option<TriggerOperation>,
}

impl ScriptManifest {
    /// The script to create, its body read from the bundled file.
    pub fn spec(&self) -> Result<ScriptSpec> {
        Ok(ScriptSpec {
            kind: self.kind,
            id: self.id.clone(),
            body: registry::require(&self.file)?.to_string(),
            trigger_type: self.trigger_type,
            trigger_operation: self.trigger_operation,
        })
    }
}

/// One path (`"/id"`) or a hierarchical key (`["/tenant", "/user"]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PartitionKeyPaths {
    One(String),
    Many(Vec<String>),
}

impl PartitionKeyPaths {
    pub fn paths(&self) -> Vec<String> {
        match self {
            PartitionKeyPaths::One(p) => vec![p.clone()],
            PartitionKeyPaths::Many(ps) => ps.clone(),
        }
    }
}

fn default_throughput() -> Throughput {
    Throughput::Manual(400)
}

impl ContainerManifest {
    pub fn settings(&self) -> ContainerSettings {
        ContainerSettings {
            partition_key_paths: self.partition_key.paths(),
            throughput: self.throughput,
            max_partition_bytes: self.max_partition_bytes,
            max_logical_partition_bytes: self.max_logical_partition_bytes,
            default_ttl: self.default_ttl,
            unique_keys: self.unique_keys.clone(),
            indexing_policy: self.indexing_policy.clone(),
            enforce_throughput: self.enforce_throughput,
            feed_previous_images: self.feed_previous_images,
            vector_embedding_policy: self.vector_embedding_policy.clone(),
            full_text_policy: self.full_text_policy.clone(),
        }
    }
}

impl Manifest {
    /// The bundled manifest of set `name`; 404 naming the sets when there is none.
    pub fn bundled(name: &str) -> Result<Manifest> {
        let text = registry::manifest_text(name).ok_or_else(|| {
            Error::not_found(format!(
                "there is no sample set {name:?}; the bundled sets are {}",
                registry::SETS.join(", ")
            ))
        })?;
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| {
            Error::internal(format!("the bundled manifest of {name} is invalid: {e}"))
        })?;
        manifest.check(name)?;
        Ok(manifest)
    }

    /// Every container with its database.
    pub fn containers(&self) -> impl Iterator<Item = (&str, &ContainerManifest)> {
        self.databases
            .iter()
            .flat_map(|d| d.containers.iter().map(move |c| (d.id.as_str(), c)))
    }

    /// Checks what the loader relies on: files exist, every container has a source, and
    /// generated streams come with a generator.
    fn check(&self, name: &str) -> Result<()> {
        let bad = |why: String| Err(Error::internal(format!("sample manifest {name}: {why}")));
        if self.name != name {
            return bad(format!("it names itself {:?}", self.name));
        }
        for (db, c) in self.containers() {
            if c.items.is_empty() && c.generated.is_none() {
                return bad(format!(
                    "container {db}/{} has no items and no generator",
                    c.id
                ));
            }
            if c.generated.is_some() && self.generator.is_none() {
                return bad(format!(
                    "container {db}/{} is generated but no generator is named",
                    c.id
                ));
            }
            if let Some(missing) = c.items.iter().find(|f| registry::file(f).is_none()) {
                return bad(format!("item file {missing} is not bundled"));
            }
        }
        Ok(())
    }
}
