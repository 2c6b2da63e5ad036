//! Items on a remote account: point reads and writes with their partition key header,
//! `If-Match`, and each response's charge, etag, range and LSN; patches; transactional
//! batches; and the bulk paths (import as upserts, export as a read of every range).
//!
//! The partition key header comes from the body (writes) or the caller's value (reads,
//! deletes), in the wire form `["value"]`, computed with the container's key definition.

use std::sync::atomic::AtomicBool;

use hyper::Method;
use serde_json::Value;

use super::RemoteBackend;
use super::http::{Answer, Call};
use super::resources::container_path;
use crate::engine::batch::{
    BatchFailure, BatchOperation, BatchOperationResult, BatchResponse, PatchRequest,
};
use crate::engine::import::Record;
use crate::engine::query::QueryOptions;
use crate::engine::views::{ImportSummary, ItemResponse};
use crate::error::{Error, Result, StatusCode};

/// Items per request when exporting.
const EXPORT_PAGE: usize = 1000;

impl RemoteBackend {
    /// A create (or, with `upsert`, an upsert) of `body`.
    pub(super) fn item_write(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        upsert: bool,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.writable(if upsert {
            "upserting an item"
        } else {
            "creating an item"
        })?;
        let pk = self.key_of_body(db, name, body)?;
        let mut call = Call::new(Method::POST, format!("{}/docs", container_path(db, name)))
            .body("application/json", body.to_vec())
            .header("x-ms-documentdb-partitionkey", pk);
        if upsert {
            call = call.header("x-ms-documentdb-is-upsert", "True");
        }
        self.item_call(with_if_match(call, if_match))
    }

    pub(super) fn item_replace(
        &self,
        db: &str,
        name: &str,
        body: &[u8],
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.writable("replacing an item")?;
        let pk = self.key_of_body(db, name, body)?;
        let id = id_of(body)?;
        let call = Call::new(Method::PUT, item_path(db, name, &id))
            .body("application/json", body.to_vec())
            .header("x-ms-documentdb-partitionkey", pk);
        self.item_call(with_if_match(call, if_match))
    }

    pub(super) fn item_read(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
    ) -> Result<ItemResponse> {
        let call = Call::new(Method::GET, item_path(db, name, id))
            .header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?);
        self.item_call(call)
    }

    pub(super) fn item_delete(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.writable("deleting an item")?;
        let call = Call::new(Method::DELETE, item_path(db, name, id))
            .header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?);
        self.item_call(with_if_match(call, if_match))
    }

    pub(super) fn item_patch(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        request: &PatchRequest,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        self.writable("patching an item")?;
        let body = serde_json::to_vec(request)
            .map_err(|e| Error::bad_request(format!("invalid patch request: {e}")))?;
        let call = Call::new(Method::PATCH, item_path(db, name, id))
            .body("application/json_patch+json", body)
            .header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?);
        self.item_call(with_if_match(call, if_match))
    }

    pub(super) fn batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse> {
        let reads_only = ops
            .iter()
            .all(|o| o.operation_type == crate::engine::batch::OperationType::Read);
        if !reads_only {
            self.writable("a transactional batch that writes")?;
        }
        let body = serde_json::to_vec(ops)
            .map_err(|e| Error::bad_request(format!("invalid batch: {e}")))?;
        let call = Call::new(Method::POST, format!("{}/docs", container_path(db, name)))
            .body("application/json", body)
            .header("x-ms-documentdb-partitionkey", self.wire_key(db, name, pk)?)
            .header("x-ms-cosmos-is-batch-request", "True")
            .header("x-ms-cosmos-batch-atomic", "True");
        let answer = self.send(&call)?;
        let rows = match answer.json()? {
            Value::Array(rows) => rows,
            _ => {
                return Err(Error::internal(
                    "the account's batch answer is not an array",
                ));
            }
        };
        let results: Vec<BatchOperationResult> = rows.iter().map(operation_result).collect();
        let failure = results
            .iter()
            .position(|r| {
                r.status_code.as_u16() >= 400 && r.status_code != StatusCode::FailedDependency
            })
            .map(|index| {
                let r = &results[index];
                let mut error = Error::new(
                    r.status_code,
                    r.message
                        .clone()
                        .unwrap_or_else(|| format!("operation {index} failed")),
                );
                error.substatus = r.substatus;
                BatchFailure { index, error }
            });
        Ok(BatchResponse {
            status_code: answer.status,
            request_charge: answer.charge(),
            range: range_of(&answer),
            results,
            failure,
        })
    }

    /// Checks records as an import would write them, without sending anything.
    pub(super) fn check_records(&self, db: &str, name: &str, records: &[Record]) -> Result<()> {
        for rec in records {
            self.key_of_body(db, name, rec.json)
                .map_err(|e| crate::engine::import::at_line(e, rec.line))?;
            id_of(rec.json).map_err(|e| crate::engine::import::at_line(e, rec.line))?;
        }
        Ok(())
    }

    /// Upserts records one request each.
    pub(super) fn import(
        &self,
        db: &str,
        name: &str,
        records: &[Record],
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportSummary> {
        self.writable("importing items")?;
        let started = std::time::Instant::now();
        let throttled_before = self.http.throttled();
        let mut summary = ImportSummary::default();
        for rec in records {
            let r = self
                .item_write(db, name, rec.json, true, None)
                .map_err(|e| crate::engine::import::at_line(e, rec.line))?;
            if r.status == StatusCode::Created {
                summary.created += 1;
            } else {
                summary.replaced += 1;
            }
            summary.items += 1;
            summary.bytes += rec.json.len() as u64;
            summary.request_charge += r.request_charge;
            progress(summary.items);
        }
        summary.batches = summary.items;
        summary.throttled = self.http.throttled() - throttled_before;
        summary.request_charge = crate::charge::round(summary.request_charge);
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Every item (of one logical partition, with `pk`), range by range.
    pub(super) fn export_items(
        &self,
        db: &str,
        name: &str,
        pk: Option<&Value>,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        let mut opts = QueryOptions {
            partition_key: pk.cloned(),
            max_items: Some(EXPORT_PAGE),
            ..QueryOptions::default()
        };
        let never = AtomicBool::new(false);
        let mut count = 0;
        loop {
            let page = self.run_query(db, name, "SELECT * FROM c", &opts, &never)?;
            for doc in &page.documents {
                sink(doc.json_bytes())?;
                count += 1;
            }
            match page.continuation {
                Some(c) => opts.continuation = Some(c),
                None => return Ok(count),
            }
        }
    }

    pub(super) fn key_of_body(&self, db: &str, name: &str, body: &[u8]) -> Result<String> {
        let doc: Value = serde_json::from_slice(body)
            .map_err(|e| Error::bad_request(format!("the item is not valid JSON: {e}")))?;
        let obj = doc
            .as_object()
            .ok_or_else(|| Error::bad_request("an item must be a JSON object"))?;
        let def = self.key_of(db, name)?.partition_key;
        Ok(def.extract(obj)?.to_json().to_string())
    }

    pub(super) fn item_call(&self, call: Call) -> Result<ItemResponse> {
        let answer = self.send(&call)?;
        Ok(ItemResponse {
            status: answer.status,
            body: (!answer.body.is_empty()).then(|| answer.body.to_vec()),
            etag: answer.header("etag").map(str::to_string),
            request_charge: answer.charge(),
            range: range_of(&answer),
            lsn: answer.header("lsn").and_then(|l| l.trim().parse().ok()),
        })
    }
}

pub(super) fn item_path(db: &str, name: &str, id: &str) -> String {
    format!("{}/docs/{id}", container_path(db, name))
}

pub(super) fn with_if_match(call: Call, if_match: Option<&str>) -> Call {
    match if_match {
        Some(etag) => call.header("if-match", etag),
        None => call,
    }
}

pub(super) fn id_of(body: &[u8]) -> Result<String> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| Error::bad_request(format!("the item is not valid JSON: {e}")))?;
    match doc.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        _ => Err(Error::bad_request(
            "the item needs a non-empty string \"id\"",
        )),
    }
}

/// The range that served a request: its own header, else the session token's prefix.
pub(super) fn range_of(answer: &Answer) -> String {
    answer
        .header("x-ms-documentdb-partitionkeyrangeid")
        .map(str::to_string)
        .or_else(|| super::query::session_range(answer))
        .unwrap_or_default()
}

fn operation_result(row: &Value) -> BatchOperationResult {
    let code = row.get("statusCode").and_then(Value::as_u64).unwrap_or(500) as u16;
    BatchOperationResult {
        status_code: StatusCode::from_u16(code).unwrap_or(StatusCode::InternalServerError),
        request_charge: row
            .get("requestCharge")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        etag: row.get("eTag").and_then(Value::as_str).map(str::to_string),
        resource_body: row.get("resourceBody").cloned(),
        substatus: row
            .get("subStatusCode")
            .or_else(|| row.get("substatus"))
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
        message: row
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}
