//! A container's stored procedures, triggers and user-defined functions (`sprocs`,
//! `triggers`, `udfs`): create, read, replace, delete, list and query, and the execution of
//! a stored procedure (POST to the procedure, its parameters as a JSON array, in the
//! logical partition of the partition key header).

use serde_json::Value;

use super::databases::feed_of;
use super::queries::query_spec;
use super::{Context, created};
use crate::engine::{ScriptKind, ScriptSpec, SprocRequest, query_values};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::auth::percent_encode;
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};

/// Request header: return the script's `console.log` output.
pub const ENABLE_LOGGING: &str = "x-ms-documentdb-script-enable-logging";

/// The feed's name for each kind, as the service's list responses carry it.
fn feed_kind(kind: ScriptKind) -> &'static str {
    match kind {
        ScriptKind::StoredProcedure => "StoredProcedures",
        ScriptKind::Trigger => "Triggers",
        ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
    }
}

pub fn create(ctx: &Context, call: &Call, db: &str, c: &str, kind: ScriptKind) -> Result<Reply> {
    let spec = ScriptSpec::from_json(kind, &call.json()?)?;
    Ok(created(&ctx.backend.create_script(db, c, &spec)?.to_json()))
}

pub fn replace(
    ctx: &Context,
    call: &Call,
    db: &str,
    c: &str,
    kind: ScriptKind,
    id: &str,
) -> Result<Reply> {
    let spec = ScriptSpec::from_json(kind, &call.json()?)?;
    if spec.id != id {
        return Err(Error::bad_request(format!(
            "the {}'s id must be the one in the URL ({id:?}) to replace it",
            kind.noun()
        )));
    }
    let info = ctx.backend.replace_script(db, c, &spec)?;
    Ok(Reply::json(StatusCode::Ok, &info.to_json()))
}

pub fn read(ctx: &Context, db: &str, c: &str, kind: ScriptKind, id: &str) -> Result<Reply> {
    let info = ctx.backend.read_script(db, c, kind, id)?;
    Ok(Reply::json(StatusCode::Ok, &info.to_json()).header(out::ETAG, info.etag.clone()))
}

pub fn delete(ctx: &Context, db: &str, c: &str, kind: ScriptKind, id: &str) -> Result<Reply> {
    ctx.backend.delete_script(db, c, kind, id)?;
    Ok(Reply::new(StatusCode::NoContent))
}

fn all(ctx: &Context, db: &str, c: &str, kind: ScriptKind) -> Result<(String, Vec<Value>)> {
    let rid = ctx.backend.container_key(db, c)?.rid;
    let docs = ctx
        .backend
        .list_scripts(db, c, kind)?
        .iter()
        .map(|s| s.to_json())
        .collect();
    Ok((rid, docs))
}

pub fn list(ctx: &Context, db: &str, c: &str, kind: ScriptKind) -> Result<Reply> {
    let (rid, docs) = all(ctx, db, c, kind)?;
    Ok(feed_of(feed_kind(kind), &rid, &docs))
}

pub fn query(ctx: &Context, call: &Call, db: &str, c: &str, kind: ScriptKind) -> Result<Reply> {
    let (sql, params) = query_spec(call)?;
    let (rid, docs) = all(ctx, db, c, kind)?;
    Ok(feed_of(
        feed_kind(kind),
        &rid,
        &query_values(&sql, &params, &docs)?,
    ))
}

/// Executes a stored procedure: its response body as the reply's, the charge, and the
/// script log (percent-encoded, as the service sends it) when asked for.
pub fn execute(ctx: &Context, call: &Call, db: &str, c: &str, id: &str) -> Result<Reply> {
    let partition_key = call.partition_key()?.ok_or_else(|| {
        Error::bad_request(format!(
            "PartitionKey value must be supplied for this operation: a stored procedure runs \
             in one logical partition; send the {} header",
            header::PARTITION_KEY
        ))
    })?;
    let params = match call.json() {
        Ok(Value::Array(params)) => params,
        Ok(Value::Null) => Vec::new(),
        Ok(other) => vec![other],
        Err(_) if call.body.is_empty() => Vec::new(),
        Err(e) => return Err(e),
    };
    let r = ctx.backend.execute_stored_procedure(
        db,
        c,
        id,
        &SprocRequest {
            partition_key,
            params,
            enable_log: call.flag(ENABLE_LOGGING),
        },
    )?;
    // A body the script never set is an empty one; the SDKs then return nothing.
    let mut reply = match &r.body {
        Some(body) => Reply::json(StatusCode::Ok, body),
        None => Reply::new(StatusCode::Ok),
    }
    .charge(r.request_charge)
    .header(out::RANGE_ID, r.range.clone());
    if let Some(log) = &r.log {
        reply = reply.header(out::SCRIPT_LOG, percent_encode(log));
    }
    Ok(reply.ranges(vec![r.range]))
}
