//! Bundled sample sets: data models from the Cosmos DB modelling guides, ready to explore.
//!
//! Each set is a manifest in `sample-data/SET/` (databases, containers, partition keys,
//! throughput, indexing) plus what fills each container: bundled item files (the
//! `modeling` set) or a stream of a deterministic generator (the web store and the blog,
//! scaled by `--scale` and seeded by `--seed`). Everything is embedded in the binary.
//!
//! - [`list`] describes the sets; [`load`] creates a set's database and fills it through
//!   the engine's bulk import; [`load_all_defaults`] loads every set at scale 1, and
//!   [`first_launch`] does so once, on a store that has no databases yet.
//! - [`blog`] and [`webstore`] expose the underlying entities (user `i`, customer `i`,
//!   the short form of a post) so the workbench and simulator can draw parameters and
//!   produce new items consistent with the loaded data.

pub mod blog;
pub mod denormalize;
mod loader;
pub mod manifest;
pub mod registry;
pub mod rng;
pub mod vocab;
pub mod webstore;

use serde::Serialize;

pub use loader::{
    FIRST_LAUNCH_MARKER, LoadOptions, LoadReport, Progress, first_launch, load, load_all_defaults,
    load_many,
};
use manifest::{GeneratorRef, Manifest};

use crate::engine::Throughput;
use crate::error::{Error, Result};

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 1;
/// The largest `--scale`: far past millions of items, short of exhausting memory on the
/// per-entity bookkeeping.
pub const MAX_SCALE: f64 = 10_000.0;

/// Where generated items go: one named stream per kind of container the generator fills
/// (the manifest maps streams to containers).
pub trait Sink {
    fn emit(&mut self, stream: &str, json: &[u8]) -> Result<()>;
}

/// Serializes generated documents into a reused buffer and hands them to a sink.
pub(crate) struct Writer<'s> {
    sink: &'s mut dyn Sink,
    scratch: Vec<u8>,
}

impl<'s> Writer<'s> {
    pub(crate) fn new(sink: &'s mut dyn Sink) -> Writer<'s> {
        Writer {
            sink,
            scratch: Vec::with_capacity(8192),
        }
    }

    pub(crate) fn emit<T: Serialize + ?Sized>(&mut self, stream: &str, doc: &T) -> Result<()> {
        self.scratch.clear();
        serde_json::to_writer(&mut self.scratch, doc)
            .map_err(|e| Error::internal(format!("serializing a generated item: {e}")))?;
        self.sink.emit(stream, &self.scratch)
    }
}

/// A set's generator at a scale and seed.
#[derive(Debug, Clone)]
pub enum Generator {
    Blog(blog::Blog),
    Webstore(webstore::Webstore),
}

impl Generator {
    pub fn new(r: &GeneratorRef, scale: f64, seed: u64) -> Result<Generator> {
        check_scale(scale)?;
        let scaled = |base: f64| (base * scale).round().max(1.0) as u64;
        match r.name.as_str() {
            "blog" => Ok(Generator::Blog(blog::Blog::new(
                seed,
                scaled(blog::BASE_USERS),
                blog::Design::parse(&r.design)?,
            ))),
            "webstore" => Ok(Generator::Webstore(webstore::Webstore::new(
                seed,
                scaled(webstore::BASE_CUSTOMERS),
                scaled(webstore::BASE_PRODUCTS),
                webstore::Design::parse(&r.design)?,
            ))),
            other => Err(Error::internal(format!("there is no generator {other:?}"))),
        }
    }

    /// Exact item count per stream.
    pub fn counts(&self) -> Result<Vec<(&'static str, u64)>> {
        match self {
            Generator::Blog(b) => Ok(b.counts()),
            Generator::Webstore(w) => w.counts(),
        }
    }

    pub fn run(&self, sink: &mut dyn Sink) -> Result<()> {
        match self {
            Generator::Blog(b) => b.run(sink),
            Generator::Webstore(w) => w.run(sink),
        }
    }
}

fn check_scale(scale: f64) -> Result<()> {
    if scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE {
        Ok(())
    } else {
        Err(Error::bad_request(format!(
            "--scale must be a number above 0 and at most {MAX_SCALE}, got {scale}"
        )))
    }
}

/// A set as `sample list` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleInfo {
    pub name: String,
    pub description: String,
    /// Whether `--scale` and `--seed` apply (the set has a generator).
    pub generated: bool,
    pub databases: Vec<SampleDatabase>,
    /// Items loaded at scale 1.
    pub default_item_count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SampleDatabase {
    pub id: String,
    pub containers: Vec<SampleContainer>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleContainer {
    pub id: String,
    pub partition_key: Vec<String>,
    pub throughput: Throughput,
    /// Items at scale 1.
    pub items: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Every bundled set, in load order.
pub fn list() -> Result<Vec<SampleInfo>> {
    registry::SETS.iter().map(|s| info(s)).collect()
}

/// One set with its item counts at the default scale.
pub fn info(name: &str) -> Result<SampleInfo> {
    let manifest = Manifest::bundled(name)?;
    let plan = loader::plan(&manifest, &LoadOptions::default())?;
    let databases = manifest
        .databases
        .iter()
        .map(|d| SampleDatabase {
            id: d.id.clone(),
            containers: d
                .containers
                .iter()
                .map(|c| SampleContainer {
                    id: c.id.clone(),
                    partition_key: c.partition_key.paths(),
                    throughput: c.throughput,
                    items: plan.items_of(&d.id, &c.id),
                    note: c.note.clone(),
                })
                .collect(),
        })
        .collect();
    Ok(SampleInfo {
        name: manifest.name.clone(),
        description: manifest.description.clone(),
        generated: manifest.generator.is_some(),
        databases,
        default_item_count: plan.total(),
    })
}
