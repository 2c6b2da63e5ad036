//! Databases: create, read, list, query and delete. A database here holds containers and
//! nothing else: shared (database-level) throughput is not modelled, so a request for it is
//! refused rather than silently ignored.

use serde_json::{Value, json};

use super::queries::query_spec;
use super::{Context, created, resource_etag};
use crate::engine::{DatabaseInfo, query_values};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::Reply;

/// A database in the service's shape.
pub fn document(d: &DatabaseInfo) -> Value {
    json!({
        "id": d.id,
        "_rid": d.rid,
        "_self": format!("dbs/{}/", d.rid),
        "_etag": resource_etag(&d.rid, d.ts),
        "_colls": "colls/",
        "_users": "users/",
        "_ts": d.ts,
    })
}

pub fn create(ctx: &Context, call: &Call) -> Result<Reply> {
    if call.header(header::OFFER_THROUGHPUT).is_some()
        || call.header(header::OFFER_AUTOPILOT).is_some()
    {
        return Err(Error::bad_request(
            "database-level (shared) throughput is not modelled by cosmoscope; provision \
             throughput on each container instead",
        ));
    }
    let body = call.json_object()?;
    let id = match body.get("id") {
        Some(Value::String(id)) => id,
        _ => return Err(Error::bad_request("a database needs a string \"id\"")),
    };
    Ok(created(&document(&ctx.backend.create_database(id)?)))
}

pub fn read(ctx: &Context, db: &str) -> Result<Reply> {
    let d = find(ctx, db)?;
    Ok(Reply::json(StatusCode::Ok, &document(&d)))
}

fn find(ctx: &Context, db: &str) -> Result<DatabaseInfo> {
    ctx.backend
        .list_databases()?
        .into_iter()
        .find(|d| d.id == db)
        .ok_or_else(|| Error::not_found(format!("database {db} does not exist")))
}

pub fn list(ctx: &Context) -> Result<Reply> {
    let docs: Vec<Value> = ctx.backend.list_databases()?.iter().map(document).collect();
    Ok(feed_of("Databases", "", &docs))
}

pub fn query(ctx: &Context, call: &Call) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    let docs: Vec<Value> = ctx.backend.list_databases()?.iter().map(document).collect();
    Ok(feed_of(
        "Databases",
        "",
        &query_values(&sql, &params, &docs)?,
    ))
}

pub fn delete(ctx: &Context, db: &str) -> Result<Reply> {
    ctx.backend.delete_database(db)?;
    Ok(Reply::new(StatusCode::NoContent))
}

/// A feed of resources (not documents): `{"_rid", "<Kind>": [...], "_count"}`.
pub(super) fn feed_of(kind: &str, rid: &str, docs: &[Value]) -> Reply {
    let texts: Vec<Vec<u8>> = docs.iter().map(|d| d.to_string().into_bytes()).collect();
    let slices: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
    Reply::feed(rid, kind, &slices)
}
