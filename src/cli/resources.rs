//! Commands on databases, containers and partitions: `db`, `container`, `partitions`,
//! `epk`, and the status printed without a subcommand.

use serde_json::json;

use super::args::{ContainerCommand, ContainerCreate, DbCommand, ThroughputArgs};
use super::{CliResult, Failure, parse_json_arg, print_json, split_target};
use crate::engine::IndexingPolicy;
use crate::engine::{Backend, ContainerSettings, Engine, Throughput};
use crate::engine::{FullTextPolicy, VectorEmbeddingPolicy};
use crate::samples::LoadReport;

/// No subcommand, not on a terminal: the store's status as one JSON document (its data
/// directory, databases and containers with their counts, and what a first launch loaded)
/// for a script to read.
/// `location` names where the store is: its data directory, or a remote account's endpoint.
pub fn status(
    engine: &dyn Backend,
    location: (String, serde_json::Value),
    first_launch: Option<&[LoadReport]>,
) -> CliResult {
    let containers = engine.list_containers(None)?;
    let databases: Vec<serde_json::Value> = engine
        .list_databases()?
        .into_iter()
        .map(|db| {
            let own: Vec<serde_json::Value> = containers
                .iter()
                .filter(|c| c.database == db.id)
                .map(|c| {
                    json!({
                        "id": c.id,
                        "partitionKey": c.partition_key.paths,
                        "physicalPartitions": c.partition_count,
                        "items": c.statistics.item_count,
                        "bytes": c.statistics.size_bytes,
                    })
                })
                .collect();
            json!({ "id": db.id, "containers": own })
        })
        .collect();
    let empty = databases.is_empty();
    let mut out = serde_json::Map::new();
    out.insert(location.0, location.1);
    out.insert("databases".into(), databases.into());
    let mut out = serde_json::Value::Object(out);
    if let Some(reports) = first_launch {
        out["firstLaunch"] = super::samples::summary_json(reports);
    }
    if empty {
        out["hint"] = json!(
            "The store is empty: create a database with `cosmoscope db create NAME`, or load a sample set with `cosmoscope sample load NAME` (see `cosmoscope sample list`)."
        );
    }
    print_json(&out);
    Ok(())
}

pub fn db(engine: &dyn Backend, cmd: DbCommand) -> CliResult {
    match cmd {
        DbCommand::Create { name } => print_json(&engine.create_database(&name)?),
        DbCommand::Delete { name } => {
            engine.delete_database(&name)?;
            print_json(&json!({ "deleted": name }));
        }
        DbCommand::List => print_json(&engine.list_databases()?),
    }
    Ok(())
}

/// `local` is the embedded store, whose index build `set-indexing` waits for; a remote
/// account builds in the background and reports its progress in the container.
pub fn container(engine: &dyn Backend, local: Option<&Engine>, cmd: ContainerCommand) -> CliResult {
    match cmd {
        ContainerCommand::Create(args) => {
            let (db, name) = split_target(&args.target)?;
            let settings = settings(&args)?;
            print_json(&engine.create_container(db, name, settings)?);
        }
        ContainerCommand::List { database } => {
            print_json(&engine.list_containers(database.as_deref())?)
        }
        ContainerCommand::Show { target } => {
            let (db, name) = split_target(&target)?;
            print_json(&engine.container(db, name)?);
        }
        ContainerCommand::Delete { target } => {
            let (db, name) = split_target(&target)?;
            engine.delete_container(db, name)?;
            print_json(&json!({ "deleted": target }));
        }
        ContainerCommand::SetIndexing { target, file } => {
            let (db, name) = split_target(&target)?;
            let policy = read_policy(&file)?;
            engine.set_indexing_policy(db, name, policy)?;
            if let Some(local) = local {
                while !local.advance_index_build(db, name, 8)? {}
            }
            print_json(&engine.container(db, name)?);
        }
        ContainerCommand::SetThroughput {
            target,
            throughput,
            enforce_throughput,
        } => {
            let (db, name) = split_target(&target)?;
            let t = throughput_of(&throughput)?;
            if t.is_none() && enforce_throughput.is_none() {
                return Err(Failure::Usage(
                    "give --throughput RU, --autoscale MAX or --enforce-throughput true|false"
                        .into(),
                ));
            }
            if let Some(t) = t {
                engine.set_throughput(db, name, t)?;
            }
            if let Some(on) = enforce_throughput {
                engine.set_throughput_enforcement(db, name, on)?;
            }
            print_json(&engine.container(db, name)?);
        }
    }
    Ok(())
}

fn throughput_of(args: &ThroughputArgs) -> CliResult<Option<Throughput>> {
    Ok(match (args.throughput, args.autoscale) {
        (Some(ru), None) => Some(Throughput::Manual(ru)),
        (None, Some(max)) => Some(Throughput::Autoscale(max)),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(Failure::Usage(
                "give either --throughput or --autoscale, not both".into(),
            ));
        }
    })
}

fn settings(args: &ContainerCreate) -> CliResult<ContainerSettings> {
    let paths: Vec<String> = args
        .partition_key
        .split(',')
        .map(|p| p.trim().to_string())
        .collect();
    let mut s = ContainerSettings::new(paths);
    if let Some(t) = throughput_of(&args.throughput)? {
        s.throughput = t;
    }
    s.max_partition_bytes = args.max_partition_bytes;
    s.max_logical_partition_bytes = args.max_logical_partition_bytes;
    s.default_ttl = args.default_ttl;
    s.unique_keys = args
        .unique_key
        .iter()
        .map(|k| k.split(',').map(|p| p.trim().to_string()).collect())
        .collect();
    if let Some(file) = &args.indexing_policy {
        s.indexing_policy = Some(read_policy(file)?);
    }
    if let Some(file) = &args.vector_policy {
        let value = read_json_file(file, "vector embedding policy", "vectorEmbeddingPolicy")?;
        s.vector_embedding_policy = Some(VectorEmbeddingPolicy::from_json(value).map_err(|e| {
            crate::error::Error::bad_request(format!("{} (in {})", e.message, file.display()))
        })?);
    }
    if let Some(file) = &args.full_text_policy {
        let value = read_json_file(file, "full-text policy", "fullTextPolicy")?;
        s.full_text_policy = Some(FullTextPolicy::from_json(value).map_err(|e| {
            crate::error::Error::bad_request(format!("{} (in {})", e.message, file.display()))
        })?);
    }
    s.enforce_throughput = args.enforce_throughput;
    s.feed_previous_images = args.feed_previous_images;
    Ok(s)
}

/// Reads a policy file holding the policy object, or an object with the policy under
/// `key` alone (as in a container definition's `{"vectorEmbeddingPolicy": {...}}`).
fn read_json_file(file: &std::path::Path, what: &str, key: &str) -> CliResult<serde_json::Value> {
    let text = std::fs::read(file)
        .map_err(|e| Failure::Usage(format!("cannot read {what} {}: {e}", file.display())))?;
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        crate::error::Error::bad_request(format!("invalid {what} in {}: {e}", file.display()))
    })?;
    Ok(match value {
        serde_json::Value::Object(mut map) if map.len() == 1 && map.contains_key(key) => {
            map.remove(key).unwrap_or_default()
        }
        other => other,
    })
}

fn read_policy(file: &std::path::Path) -> CliResult<IndexingPolicy> {
    let text = std::fs::read(file).map_err(|e| {
        Failure::Usage(format!(
            "cannot read indexing policy {}: {e}",
            file.display()
        ))
    })?;
    Ok(serde_json::from_slice(&text).map_err(|e| {
        crate::error::Error::bad_request(format!(
            "invalid indexing policy in {}: {e}",
            file.display()
        ))
    })?)
}

pub fn partitions(engine: &dyn Backend, target: &str, top: usize, window: u64) -> CliResult {
    let (db, name) = split_target(target)?;
    print_json(&engine.partitions(db, name, top, window)?);
    Ok(())
}

pub fn logical_partitions(
    engine: &dyn Backend,
    target: &str,
    range: u32,
    after: Option<&str>,
    limit: usize,
) -> CliResult {
    let (db, name) = split_target(target)?;
    print_json(&engine.logical_partitions(db, name, &range.to_string(), after, limit)?);
    Ok(())
}

pub fn epk(engine: &dyn Backend, target: &str, value: &str) -> CliResult {
    let (db, name) = split_target(target)?;
    let pk = parse_json_arg("the partition key value", value)?;
    print_json(&engine.epk(db, name, &pk)?);
    Ok(())
}
