//! Containers (`colls`): create with their partition key, indexing policy, unique keys,
//! TTL, vector and full-text policies and throughput; read, list, query, replace (the
//! indexing policy, the one setting that changes in place here) and delete.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::databases::feed_of;
use super::queries::query_spec;
use super::{Context, created, resource_etag, statistics};
use crate::engine::{
    ContainerInfo, ContainerSettings, FullTextPolicy, IndexingPolicy, Throughput,
    VectorEmbeddingPolicy, query_values,
};
use crate::error::{Error, Result, StatusCode, json_type_name};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};

/// A container in the service's shape.
pub fn document(c: &ContainerInfo) -> Value {
    let mut doc = json!({
        "id": c.id,
        "indexingPolicy": c.indexing_policy,
        "partitionKey": c.partition_key,
        "uniqueKeyPolicy": c.unique_key_policy,
        "conflictResolutionPolicy": {
            "mode": "LastWriterWins", "conflictResolutionPath": "/_ts",
            "conflictResolutionProcedure": ""
        },
        "geospatialConfig": { "type": "Geography" },
    });
    if let Value::Object(o) = &mut doc {
        if let Some(ttl) = c.default_ttl {
            o.insert("defaultTtl".into(), ttl.into());
        }
        if let Some(p) = &c.vector_embedding_policy {
            o.insert("vectorEmbeddingPolicy".into(), json!(p));
        }
        if let Some(p) = &c.full_text_policy {
            o.insert("fullTextPolicy".into(), json!(p));
        }
        let system = [
            ("_rid", json!(c.rid)),
            ("_ts", json!(c.ts)),
            ("_self", json!(self_link(c))),
            ("_etag", json!(resource_etag(&c.rid, c.ts))),
            ("_docs", json!("docs/")),
            ("_sprocs", json!("sprocs/")),
            ("_triggers", json!("triggers/")),
            ("_udfs", json!("udfs/")),
            ("_conflicts", json!("conflicts/")),
        ];
        for (k, v) in system {
            o.insert(k.into(), v);
        }
    }
    doc
}

/// `dbs/<database rid>/colls/<container rid>/`: a container's rid is its database's four
/// bytes followed by its own.
pub fn self_link(c: &ContainerInfo) -> String {
    format!("dbs/{}/colls/{}/", database_rid(&c.rid), c.rid)
}

fn database_rid(container_rid: &str) -> String {
    STANDARD
        .decode(container_rid.replace('-', "/"))
        .ok()
        .filter(|b| b.len() >= 4)
        .map(|b| STANDARD.encode(&b[..4]).replace('/', "-"))
        .unwrap_or_default()
}

pub fn create(ctx: &Context, call: &Call, db: &str) -> Result<Reply> {
    let body = call.json_object()?;
    let id = match body.get("id") {
        Some(Value::String(id)) => id.clone(),
        _ => return Err(Error::bad_request("a container needs a string \"id\"")),
    };
    let mut settings = settings_of(body)?;
    if let Some(t) = throughput_of(call)? {
        settings.throughput = t;
    }
    settings.enforce_throughput = ctx.enforce_throughput;
    let info = ctx.backend.create_container(db, &id, settings)?;
    Ok(created(&document(&info)))
}

/// The container definition's settings, as the service reads them.
fn settings_of(body: &Map<String, Value>) -> Result<ContainerSettings> {
    let key = body.get("partitionKey").ok_or_else(|| {
        Error::bad_request(
            "a container needs a \"partitionKey\" ({\"paths\": [\"/pk\"], \"kind\": \"Hash\", \
             \"version\": 2}); containers without one are a legacy the gateway does not serve",
        )
    })?;
    let paths = strings(key.get("paths"));
    if let Some(v) = key
        .get("version")
        .and_then(Value::as_u64)
        .filter(|v| *v != 2)
    {
        return Err(Error::bad_request(format!(
            "partition key hash version {v} is not supported: cosmoscope hashes keys with \
             version 2, the default of current SDKs"
        )));
    }
    let mut s = ContainerSettings::new(paths);
    s.default_ttl = match body.get("defaultTtl") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| {
            Error::bad_request(format!(
                "defaultTtl must be a number, not {}",
                json_type_name(v)
            ))
        })?),
    };
    if let Some(policy) = body.get("indexingPolicy").filter(|v| !v.is_null()) {
        s.indexing_policy = Some(parse::<IndexingPolicy>("indexingPolicy", policy)?);
    }
    if let Some(u) = body
        .get("uniqueKeyPolicy")
        .and_then(|u| u.get("uniqueKeys"))
    {
        s.unique_keys = u
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| strings(k.get("paths")))
            .collect();
    }
    if let Some(p) = body.get("vectorEmbeddingPolicy").filter(|v| !v.is_null()) {
        s.vector_embedding_policy = Some(VectorEmbeddingPolicy::from_json(p.clone())?);
    }
    if let Some(p) = body.get("fullTextPolicy").filter(|v| !v.is_null()) {
        s.full_text_policy = Some(FullTextPolicy::from_json(p.clone())?);
    }
    Ok(s)
}

/// The strings of a JSON array of paths (anything else in it is not a path).
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, v: &Value) -> Result<T> {
    serde_json::from_value(v.clone())
        .map_err(|e| Error::bad_request(format!("invalid {what}: {e}")))
}

/// `x-ms-offer-throughput: N` (manual) or `x-ms-cosmos-offer-autopilot-settings:
/// {"maxThroughput": N}` (autoscale).
fn throughput_of(call: &Call) -> Result<Option<Throughput>> {
    if let Some(v) = call.header(header::OFFER_THROUGHPUT) {
        let ru = v.trim().parse::<u64>().map_err(|_| {
            Error::bad_request(format!(
                "{} must be a number of RU/s, not {v:?}",
                header::OFFER_THROUGHPUT
            ))
        })?;
        return Ok(Some(Throughput::Manual(ru)));
    }
    if let Some(v) = call.header(header::OFFER_AUTOPILOT) {
        let max = serde_json::from_str::<Value>(v)
            .ok()
            .and_then(|s| s.get("maxThroughput").and_then(Value::as_u64))
            .ok_or_else(|| {
                Error::bad_request(format!(
                    "{} must be {{\"maxThroughput\": N}}, not {v:?}",
                    header::OFFER_AUTOPILOT
                ))
            })?;
        return Ok(Some(Throughput::Autoscale(max)));
    }
    Ok(None)
}

pub fn read(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let info = ctx.backend.container(db, container)?;
    let mut doc = document(&info);
    if call.flag(header::POPULATE_PARTITION_STATISTICS)
        && let Some(stats) = statistics::partition_statistics(ctx, &info)?
        && let Value::Object(o) = &mut doc
    {
        o.insert("statistics".into(), stats);
    }
    let reply = Reply::json(StatusCode::Ok, &doc).header(
        out::INDEX_PROGRESS,
        info.index_transformation_progress.to_string(),
    );
    Ok(if call.flag(header::POPULATE_QUOTA_INFO) {
        reply
            .header(out::RESOURCE_USAGE, statistics::usage(&info))
            .header(out::RESOURCE_QUOTA, statistics::QUOTA)
    } else {
        reply
    })
}

pub fn list(ctx: &Context, db: &str) -> Result<Reply> {
    let (rid, docs) = containers_of(ctx, db)?;
    Ok(feed_of("DocumentCollections", &rid, &docs))
}

pub fn query(ctx: &Context, call: &Call, db: &str) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    let (rid, docs) = containers_of(ctx, db)?;
    Ok(feed_of(
        "DocumentCollections",
        &rid,
        &query_values(&sql, &params, &docs)?,
    ))
}

/// The database's rid and its containers' documents (404 for an unknown database).
fn containers_of(ctx: &Context, db: &str) -> Result<(String, Vec<Value>)> {
    let database = ctx
        .backend
        .list_databases()?
        .into_iter()
        .find(|d| d.id == db)
        .ok_or_else(|| Error::not_found(format!("database {db} does not exist")))?;
    let docs = ctx
        .backend
        .list_containers(Some(db))?
        .iter()
        .map(document)
        .collect();
    Ok((database.rid, docs))
}

/// Replaces a container's definition. Only the indexing policy changes in place (its new
/// index builds in the background); the partition key cannot change on the service either,
/// and the other settings are fixed at creation here, so a change to them is refused.
pub fn replace(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let body = call.json_object()?;
    let current = ctx.backend.container(db, container)?;
    if let Some(key) = body.get("partitionKey")
        && key.get("paths") != Some(&json!(current.partition_key.paths))
    {
        return Err(Error::bad_request(
            "the partition key of a container cannot be changed",
        ));
    }
    let ttl = body.get("defaultTtl").and_then(Value::as_i64);
    if ttl != current.default_ttl {
        return Err(Error::bad_request(
            "changing a container's defaultTtl is not supported by cosmoscope yet; recreate the \
             container with the new value",
        ));
    }
    let info = match body.get("indexingPolicy").filter(|v| !v.is_null()) {
        Some(p) => {
            let policy = parse::<IndexingPolicy>("indexingPolicy", p)?;
            ctx.backend.set_indexing_policy(db, container, policy)?
        }
        None => current,
    };
    Ok(Reply::json(StatusCode::Ok, &document(&info)))
}

pub fn delete(ctx: &Context, db: &str, container: &str) -> Result<Reply> {
    ctx.backend.delete_container(db, container)?;
    Ok(Reply::new(StatusCode::NoContent))
}
