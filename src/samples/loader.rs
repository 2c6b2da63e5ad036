//! Loading sets into a store: plan (exact item counts before writing anything), check that
//! none of the set's databases exist, create databases and containers, then stream items
//! through the engine's batched bulk import with progress and cancellation between batches.

use std::path::Path;

use std::time::Instant;

use serde::Serialize;

use super::manifest::Manifest;
use super::{Generator, Sink, registry};
use crate::engine::{Backend, IMPORT_BATCH_ITEMS, import};
use crate::engine::{ContainerSettings, ScriptSpec};
use crate::error::{Error, Result};

/// File in the data directory recording that first launch offered the samples, so a user
/// who deletes them all is not handed them again.
pub const FIRST_LAUNCH_MARKER: &str = "samples-loaded";

/// Bytes buffered per container before a batch is written (beside the item cap).
const BATCH_BYTES: usize = 8 * 1024 * 1024;

/// Status of a load cancelled through the progress callback (as for queries).

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadOptions {
    /// Item counts grow linearly with it; 1 is what first launch loads.
    pub scale: f64,
    pub seed: u64,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            scale: 1.0,
            seed: super::DEFAULT_SEED,
        }
    }
}

/// Where a load is: items written so far of the total over every set being loaded.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub set: &'a str,
    pub database: &'a str,
    pub container: &'a str,
    pub done: u64,
    pub total: u64,
}

/// What a load wrote.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    pub name: String,
    pub scale: f64,
    pub seed: u64,
    pub containers: Vec<ContainerLoad>,
    pub items: u64,
    pub request_charge: f64,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerLoad {
    pub database: String,
    pub container: String,
    pub items: u64,
    pub request_charge: f64,
}

/// A set ready to load: its manifest, generator and exact counts per container.
pub(crate) struct Plan {
    manifest: Manifest,
    options: LoadOptions,
    generator: Option<Generator>,
    containers: Vec<Planned>,
}

struct Planned {
    database: String,
    id: String,
    settings: ContainerSettings,
    /// Its stored procedures and triggers.
    scripts: Vec<ScriptSpec>,
    /// The contents of the container's item files.
    files: Vec<&'static str>,
    stream: Option<String>,
    items: u64,
}

impl Plan {
    pub(crate) fn items_of(&self, db: &str, container: &str) -> u64 {
        self.containers
            .iter()
            .find(|c| c.database == db && c.id == container)
            .map_or(0, |c| c.items)
    }

    pub(crate) fn total(&self) -> u64 {
        self.containers.iter().map(|c| c.items).sum()
    }
}

/// Counts what loading `manifest` with `options` writes, and checks that the manifest's
/// streams and the generator's agree.
pub(crate) fn plan(manifest: &Manifest, options: &LoadOptions) -> Result<Plan> {
    let name = &manifest.name;
    let generator = match &manifest.generator {
        Some(r) => Some(Generator::new(r, options.scale, options.seed)?),
        None if options.scale != 1.0 => {
            return Err(Error::bad_request(format!(
                "sample set {name} is fixed data; it has no generator for --scale"
            )));
        }
        None => None,
    };
    let counts = generator
        .as_ref()
        .map(Generator::counts)
        .transpose()?
        .unwrap_or_default();
    if let Some((stream, _)) = counts.iter().find(|(s, _)| {
        !manifest
            .containers()
            .any(|(_, c)| c.generated.as_deref() == Some(s))
    }) {
        return Err(Error::internal(format!(
            "sample set {name}: no container takes the generator's {stream:?} items"
        )));
    }
    let mut containers = Vec::new();
    for (db, c) in manifest.containers() {
        let mut items = 0;
        let mut files = Vec::new();
        for f in &c.items {
            let text = registry::require(f)?;
            items += import::read_all(text.as_bytes())?.len() as u64;
            files.push(text);
        }
        if let Some(stream) = &c.generated {
            items += counts
                .iter()
                .find(|(s, _)| s == stream)
                .map(|(_, n)| *n)
                .ok_or_else(|| {
                    Error::internal(format!(
                        "sample set {name}: the generator makes no {stream:?} items for {db}/{}",
                        c.id
                    ))
                })?;
        }
        containers.push(Planned {
            database: db.to_string(),
            id: c.id.clone(),
            settings: c.settings(),
            scripts: c
                .scripts
                .iter()
                .map(|s| s.spec())
                .collect::<Result<Vec<_>>>()?,
            files,
            stream: c.generated.clone(),
            items,
        });
    }
    Ok(Plan {
        manifest: manifest.clone(),
        options: *options,
        generator,
        containers,
    })
}

/// Loads one set. Fails with 409, writing nothing, if any of its databases exists.
pub fn load(
    engine: &dyn Backend,
    name: &str,
    options: &LoadOptions,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<LoadReport> {
    let mut reports = load_many(engine, &[(name, *options)], progress)?;
    reports
        .pop()
        .ok_or_else(|| Error::internal("loading a sample set reported nothing"))
}

/// Loads several sets with one progress total. Everything is planned and checked first,
/// so a bad name or an existing database fails before anything is written. `progress`
/// returning false cancels the load (499) after the batch being written.
pub fn load_many(
    engine: &dyn Backend,
    sets: &[(&str, LoadOptions)],
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Vec<LoadReport>> {
    let plans = sets
        .iter()
        .map(|(name, options)| plan(&Manifest::bundled(name)?, options))
        .collect::<Result<Vec<_>>>()?;
    let existing: Vec<String> = engine.list_databases()?.into_iter().map(|d| d.id).collect();
    let mut wanted: Vec<&str> = Vec::new();
    for p in &plans {
        for db in &p.manifest.databases {
            if existing.contains(&db.id) {
                return Err(Error::conflict(format!(
                    "database {:?} already exists, so sample set {} cannot be loaded into it; \
                     delete it first (`cosmoscope db delete {}`) or use another data directory",
                    db.id, p.manifest.name, db.id
                )));
            }
            if wanted.contains(&db.id.as_str()) {
                return Err(Error::conflict(format!(
                    "database {:?} would be loaded twice",
                    db.id
                )));
            }
            wanted.push(&db.id);
        }
    }
    let mut counter = Counter {
        done: 0,
        total: plans.iter().map(Plan::total).sum(),
        callback: progress,
    };
    plans
        .iter()
        .map(|p| load_plan(engine, p, &mut counter))
        .collect()
}

/// Every set at scale 1 with the default seed.
pub fn load_all_defaults(
    engine: &dyn Backend,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Vec<LoadReport>> {
    let sets: Vec<(&str, LoadOptions)> = registry::SETS
        .iter()
        .map(|s| (*s, LoadOptions::default()))
        .collect();
    load_many(engine, &sets, progress)
}

/// First launch: on a store with no databases that was never given the samples, loads
/// every set at scale 1 and returns the reports; otherwise does nothing and returns `None`.
/// The marker file [`FIRST_LAUNCH_MARKER`] in the store's data directory `dir` records that
/// it happened.
pub fn first_launch(
    engine: &dyn Backend,
    dir: &Path,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<Option<Vec<LoadReport>>> {
    let marker = dir.join(FIRST_LAUNCH_MARKER);
    if marker.exists() || !engine.list_databases()?.is_empty() {
        return Ok(None);
    }
    let reports = load_all_defaults(engine, progress)?;
    // Losing the marker only means the samples are offered again on an empty store.
    let _ = std::fs::write(&marker, registry::SETS.join("\n") + "\n");
    Ok(Some(reports))
}

struct Counter<'p> {
    done: u64,
    total: u64,
    callback: &'p mut dyn FnMut(&Progress) -> bool,
}

impl Counter<'_> {
    fn report(&mut self, set: &str, database: &str, container: &str, done: u64) -> bool {
        (self.callback)(&Progress {
            set,
            database,
            container,
            done,
            total: self.total,
        })
    }
}

fn load_plan(engine: &dyn Backend, plan: &Plan, counter: &mut Counter) -> Result<LoadReport> {
    let started = Instant::now();
    let set = plan.manifest.name.as_str();
    for db in &plan.manifest.databases {
        engine.create_database(&db.id)?;
    }
    for c in &plan.containers {
        engine.create_container(&c.database, &c.id, c.settings.clone())?;
        for script in &c.scripts {
            engine.create_script(&c.database, &c.id, script)?;
        }
    }
    let mut loads: Vec<ContainerLoad> = plan
        .containers
        .iter()
        .map(|c| ContainerLoad {
            database: c.database.clone(),
            container: c.id.clone(),
            items: 0,
            request_charge: 0.0,
        })
        .collect();
    for (c, load) in plan.containers.iter().zip(loads.iter_mut()) {
        for text in &c.files {
            let chunk = import::read_all(text.as_bytes())?;
            write(engine, set, load, &chunk.records(), counter)?;
        }
    }
    if let Some(generator) = &plan.generator {
        let mut sink = Loader {
            engine,
            set,
            targets: plan
                .containers
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.stream.clone().map(|s| (s, i)))
                .map(|(stream, index)| Target {
                    stream,
                    index,
                    buf: Vec::new(),
                    ends: Vec::new(),
                })
                .collect(),
            loads: &mut loads,
            counter,
        };
        generator.run(&mut sink)?;
        for t in 0..sink.targets.len() {
            sink.flush(t)?;
        }
    }
    let items = loads.iter().map(|l| l.items).sum();
    let request_charge = crate::charge::round(loads.iter().map(|l| l.request_charge).sum());
    for l in &mut loads {
        l.request_charge = crate::charge::round(l.request_charge);
    }
    Ok(LoadReport {
        name: set.to_string(),
        scale: plan.options.scale,
        seed: plan.options.seed,
        containers: loads,
        items,
        request_charge,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes records to one container through the engine's bulk import, reporting progress;
/// stops with 499 after the batch if the callback asked to cancel.
fn write(
    engine: &dyn Backend,
    set: &str,
    load: &mut ContainerLoad,
    records: &[import::Record],
    counter: &mut Counter,
) -> Result<()> {
    let base = counter.done;
    let mut go_on = true;
    let summary = engine.import_records(&load.database, &load.container, records, &mut |n| {
        go_on &= counter.report(set, &load.database, &load.container, base + n);
    })?;
    counter.done = base + summary.items;
    load.items += summary.items;
    load.request_charge += summary.request_charge;
    if go_on {
        Ok(())
    } else {
        Err(Error::cancelled(format!(
            "loading sample set {set} was cancelled; what was written so far stays"
        )))
    }
}

/// The generator's sink: buffers each stream's items and writes a batch when it is full.
struct Loader<'a, 'c> {
    engine: &'a dyn Backend,
    set: &'a str,
    targets: Vec<Target>,
    loads: &'a mut [ContainerLoad],
    counter: &'a mut Counter<'c>,
}

struct Target {
    stream: String,
    /// Index of the container in the plan (and in the loads).
    index: usize,
    /// Items back to back; `ends[i]` is where item `i` ends.
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Loader<'_, '_> {
    fn flush(&mut self, t: usize) -> Result<()> {
        let target = &mut self.targets[t];
        let mut start = 0;
        let records: Vec<import::Record> = target
            .ends
            .iter()
            .enumerate()
            .map(|(i, &end)| {
                let r = import::Record {
                    line: i + 1,
                    json: &target.buf[start..end],
                };
                start = end;
                r
            })
            .collect();
        if !records.is_empty() {
            write(
                self.engine,
                self.set,
                &mut self.loads[target.index],
                &records,
                self.counter,
            )?;
        }
        target.buf.clear();
        target.ends.clear();
        Ok(())
    }
}

impl Sink for Loader<'_, '_> {
    fn emit(&mut self, stream: &str, json: &[u8]) -> Result<()> {
        let t = self
            .targets
            .iter()
            .position(|t| t.stream == stream)
            .ok_or_else(|| {
                Error::internal(format!(
                    "sample set {}: no container takes the generator's {stream:?} items",
                    self.set
                ))
            })?;
        let target = &mut self.targets[t];
        target.buf.extend_from_slice(json);
        target.ends.push(target.buf.len());
        if target.ends.len() >= IMPORT_BATCH_ITEMS || target.buf.len() >= BATCH_BYTES {
            self.flush(t)?;
        }
        Ok(())
    }
}
