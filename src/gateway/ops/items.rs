//! Point operations on documents — create (and upsert), read, replace, delete, patch — and
//! transactional batches. The partition key travels in `x-ms-documentdb-partitionkey`; on
//! writes it must equal the key in the body, as the service checks (400, substatus 1001).

use serde_json::Value;

use std::sync::Arc;

use hyper::Method;

use super::Context;
use crate::engine::{
    BatchOperation, ItemResponse, ItemWriteKind, PatchRequest, TriggeredOp, TriggeredWrite,
    WriteDone,
};
use crate::error::{Error, Result, StatusCode};
use crate::gateway::call::{Call, header};
use crate::gateway::reply::{Reply, header as out};
use crate::gateway::resource::Resource;

/// The service's answer to a point operation: the item (unless the client asked for a
/// minimal response), its etag and LSN, the session token of its partition, the charge.
fn item_reply(call: &Call, r: ItemResponse) -> Reply {
    let minimal = call
        .header("prefer")
        .is_some_and(|p| p.contains("return=minimal"));
    let mut reply = match r.body {
        Some(body) if !minimal => Reply::raw(r.status, body),
        _ => Reply::new(r.status),
    }
    .charge(r.request_charge)
    .header(out::RANGE_ID, r.range.clone());
    if let Some(etag) = r.etag {
        reply = reply.header(out::ETAG, etag);
    }
    if let Some(lsn) = r.lsn {
        reply = reply
            .header(out::LSN, lsn.to_string())
            .header(out::ITEM_LSN, lsn.to_string())
            .header(out::SESSION_TOKEN, format!("{}:-1#{lsn}", r.range));
    }
    reply.ranges(vec![r.range])
}

/// The request's partition key, which point reads and deletes cannot do without.
fn required_key(call: &Call) -> Result<Value> {
    call.partition_key()?.ok_or_else(|| {
        Error::bad_request(format!(
            "PartitionKey value must be supplied for this operation: send the {} header",
            header::PARTITION_KEY
        ))
    })
}

/// A write's body, checked against the partition key header when there is one.
fn write_body<'c>(ctx: &Context, call: &'c Call, db: &str, container: &str) -> Result<&'c Value> {
    let (body, given) = body_and_key(call)?;
    if let (Value::Object(doc), Some(given)) = (body, given) {
        let def = ctx.backend.container_key(db, container)?.partition_key;
        def.check_request_value(doc, &given)?;
    }
    Ok(body)
}

/// A write's body, refused unless it is a JSON object, and the partition key its header
/// names, if any: what can be checked without the container.
fn body_and_key(call: &Call) -> Result<(&Value, Option<Value>)> {
    let body = call.json_ref()?;
    if !body.is_object() {
        return Err(Error::bad_request("a document must be a JSON object"));
    }
    Ok((body, call.partition_key()?))
}

/// The triggers a write names (`x-ms-documentdb-pre-trigger-include` and
/// `-post-trigger-include`), as a write that runs them; `None` when it names none. The
/// service takes at most one of each per write.
fn triggered(call: &Call, op: impl FnOnce() -> TriggeredOp) -> Result<Option<TriggeredWrite>> {
    let (pre_trigger, post_trigger) = trigger_names(call)?;
    if pre_trigger.is_none() && post_trigger.is_none() {
        return Ok(None);
    }
    Ok(Some(TriggeredWrite {
        op: op(),
        if_match: call.etag(header::IF_MATCH).map(str::to_string),
        pre_trigger,
        post_trigger,
    }))
}

/// The pre- and post-trigger a write names; 400 when it names several of one.
fn trigger_names(call: &Call) -> Result<(Option<String>, Option<String>)> {
    let one = |name: &str| -> Result<Option<String>> {
        match call.header(name).map(str::trim).filter(|v| !v.is_empty()) {
            Some(v) if v.contains(',') => Err(Error::bad_request(format!(
                "{name} names several triggers ({v}); a write runs at most one pre-trigger \
                 and one post-trigger"
            ))),
            other => Ok(other.map(str::to_string)),
        }
    };
    Ok((one(header::PRE_TRIGGER)?, one(header::POST_TRIGGER)?))
}

pub fn create(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    write_body(ctx, call, db, container)?;
    // The body as sent: it parsed as a JSON object, and the engine parses it again anyway.
    let bytes = &call.body[..];
    let op = || {
        if call.flag(header::IS_UPSERT) {
            TriggeredOp::Upsert(bytes.to_vec())
        } else {
            TriggeredOp::Create(bytes.to_vec())
        }
    };
    if let Some(write) = triggered(call, op)? {
        let r = ctx
            .backend
            .write_item_with_triggers(db, container, &write)?;
        return Ok(item_reply(call, r));
    }
    let r = if call.flag(header::IS_UPSERT) {
        ctx.backend
            .upsert_item(db, container, bytes, call.etag(header::IF_MATCH))?
    } else {
        ctx.backend.create_item(db, container, bytes)?
    };
    Ok(item_reply(call, r))
}

/// A create or upsert handed to the engine without blocking ([`submit`]).
pub enum Submitted {
    /// Refused before it was handed over.
    Refused(Reply),
    /// Its reply, once the write's commit is done.
    Pending(tokio::sync::oneshot::Receiver<Reply>),
}

/// Hands a plain create or upsert (no triggers) to the engine's committer instead of
/// blocking a thread on it; `None` for any other request, or a backend without that path.
/// `observe` runs on the reply before it is sent (the traffic recorder).
pub fn submit(
    ctx: &Context,
    call: &Arc<Call>,
    observe: impl FnOnce(&Call, &Reply) + Send + 'static,
) -> Option<Submitted> {
    let Resource::Documents { db, container } = &call.target.resource else {
        return None;
    };
    // Anything else, a write with triggers included (or an error in naming them), goes the
    // blocking way.
    let plain = call.method == Method::POST
        && super::document_post(call) == super::DocumentPost::Write
        && matches!(trigger_names(call), Ok((None, None)));
    if !plain {
        return None;
    }
    // Only what needs no store read is checked here, on the async side: the body and the
    // key header are parsed, and the engine checks one against the other when it writes.
    let key = match body_and_key(call) {
        Ok((_, key)) => key,
        Err(e) => return Some(Submitted::Refused(Reply::error(&e))),
    };
    let kind = if call.flag(header::IS_UPSERT) {
        ItemWriteKind::Upsert
    } else {
        ItemWriteKind::Create
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let answered = call.clone();
    let done: WriteDone = Box::new(move |result| {
        let reply = match result {
            Ok(r) => item_reply(&answered, r),
            Err(e) => Reply::error(&e),
        };
        observe(&answered, &reply);
        let _ = tx.send(reply);
    });
    let if_match = match kind {
        ItemWriteKind::Upsert => call.etag(header::IF_MATCH),
        _ => None,
    };
    match ctx.backend.submit_item_write(
        db,
        container,
        kind,
        &call.body,
        key.as_ref(),
        if_match,
        done,
    ) {
        Ok(()) => Some(Submitted::Pending(rx)),
        Err(_) => None,
    }
}

pub fn read(ctx: &Context, call: &Call, db: &str, container: &str, id: &str) -> Result<Reply> {
    let pk = required_key(call)?;
    let r = ctx.backend.read_item(db, container, id, &pk)?;
    if let (Some(etag), Some(given)) = (&r.etag, call.etag(header::IF_NONE_MATCH))
        && etag == given
    {
        let mut reply = item_reply(call, r);
        reply.status = StatusCode::NotModified;
        reply.body = Default::default();
        return Ok(reply);
    }
    Ok(item_reply(call, r))
}

pub fn replace(ctx: &Context, call: &Call, db: &str, container: &str, id: &str) -> Result<Reply> {
    let body = write_body(ctx, call, db, container)?;
    if body.get("id").and_then(Value::as_str) != Some(id) {
        return Err(Error::bad_request(format!(
            "the document's id must be the one in the URL ({id:?}) to replace it"
        )));
    }
    let bytes = &call.body[..];
    if let Some(write) = triggered(call, || TriggeredOp::Replace(bytes.to_vec()))? {
        let r = ctx
            .backend
            .write_item_with_triggers(db, container, &write)?;
        return Ok(item_reply(call, r));
    }
    let r = ctx
        .backend
        .replace_item(db, container, bytes, call.etag(header::IF_MATCH))?;
    Ok(item_reply(call, r))
}

pub fn delete(ctx: &Context, call: &Call, db: &str, container: &str, id: &str) -> Result<Reply> {
    let pk = required_key(call)?;
    let op = || TriggeredOp::Delete {
        id: id.to_string(),
        partition_key: pk.clone(),
    };
    if let Some(write) = triggered(call, op)? {
        let r = ctx
            .backend
            .write_item_with_triggers(db, container, &write)?;
        return Ok(item_reply(call, r));
    }
    let r = ctx
        .backend
        .delete_item(db, container, id, &pk, call.etag(header::IF_MATCH))?;
    Ok(item_reply(call, r))
}

pub fn patch(ctx: &Context, call: &Call, db: &str, container: &str, id: &str) -> Result<Reply> {
    let pk = required_key(call)?;
    let request = PatchRequest::from_json(call.json()?)?;
    let r = ctx.backend.patch_item(
        db,
        container,
        id,
        &pk,
        &request,
        call.etag(header::IF_MATCH),
    )?;
    Ok(item_reply(call, r))
}

/// A transactional batch: 200 with every operation's result when it committed; when an
/// operation failed, 207 Multi-Status with the failing operation's status and 424 for the
/// others, which the SDKs turn into their batch errors.
pub fn batch(ctx: &Context, call: &Call, db: &str, container: &str) -> Result<Reply> {
    let pk = required_key(call)?;
    let ops = batch_operations(call.json()?)?;
    let r = ctx.backend.execute_batch(db, container, &pk, &ops)?;
    let status = if r.is_success() {
        StatusCode::Ok
    } else {
        StatusCode::MultiStatus
    };
    let mut reply = Reply::json(status, &r.results)
        .charge(r.request_charge)
        .header(out::RANGE_ID, r.range.clone())
        .with_items(r.results.len());
    if let Some(f) = &r.failure {
        reply.substatus = f.error.substatus;
    }
    Ok(reply.ranges(vec![r.range]))
}

/// The operations of a batch body. SDKs send each operation's partition key as JSON text
/// (`"[\"a\"]"`); the engine takes it as JSON.
fn batch_operations(body: Value) -> Result<Vec<BatchOperation>> {
    let Value::Array(items) = body else {
        return Err(Error::bad_request(
            "a batch body is a JSON array of operations",
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, mut op)| {
            if let Some(Value::String(text)) = op.get("partitionKey")
                && let Ok(parsed) = serde_json::from_str::<Value>(text)
                && let Some(o) = op.as_object_mut()
            {
                let key = match parsed {
                    Value::Array(mut a) if a.len() == 1 => a.pop().unwrap_or(Value::Null),
                    other => other,
                };
                o.insert("partitionKey".into(), key);
            }
            serde_json::from_value(op)
                .map_err(|e| Error::bad_request(format!("batch operation {i}: {e}")))
        })
        .collect()
}
