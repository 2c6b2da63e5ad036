//! Transactional batch and patch, as the engine offers them.
//!
//! A batch runs up to 100 operations on one logical partition in order, in one write
//! transaction: all of them commit together (one `_ts`, one commit of the change feed) or
//! none does. On failure the failing operation reports its own status and every other one
//! 424 Failed Dependency (reference/cosmos.md §7.4). Patch applies the service's partial
//! update operations (the store's `patch` module), optionally only when the item matches a
//! condition in the query dialect, compiled here because the store does not know queries.
//!
//! The JSON shapes are the SDKs' (`@azure/cosmos` `OperationInput`/`OperationResponse`):
//! an operation is `{"operationType": "Create"|"Read"|"Replace"|"Upsert"|"Delete"|"Patch",
//! "id"?, "resourceBody"?, "ifMatch"?, "partitionKey"?}`; a patch body is an array of
//! operations or `{"operations": [...], "condition": "FROM c WHERE ..."}`.
//!
//! ```no_run
//! use cosmoscope::engine::{Backend, BatchOperation, Engine, PatchOperation, PatchRequest};
//! use serde_json::json;
//! # fn demo(engine: &Engine) -> cosmoscope::Result<()> {
//! // Create a comment and count it on its post, atomically.
//! let comment = json!({"id": "c-1", "postId": "p-1", "type": "comment", "text": "Nice"});
//! let count = PatchRequest::new(vec![PatchOperation::Incr {
//!     path: "/commentCount".into(),
//!     value: 1.into(),
//! }]);
//! let response = engine.execute_batch(
//!     "blog",
//!     "posts",
//!     &json!("p-1"),
//!     &[BatchOperation::create(comment), BatchOperation::patch("p-1", &count)],
//! )?;
//! assert!(response.is_success());
//! # Ok(())
//! # }
//! ```

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Engine, ItemResponse, charged, json_f64, response};
use crate::charge;
use crate::error::{Error, Result, StatusCode, substatus};
use crate::query::run::condition::Condition;
use crate::store::item::{self, MAX_ITEM_BYTES};
use crate::store::partition_key::PartitionKeyValue;
use crate::store::patch::PatchOperation;
use crate::store::write::{WriteBatch, WriteKind, WriteResult};

/// The service's limit on operations in one transactional batch.
pub const MAX_BATCH_OPERATIONS: usize = 100;
/// The service's limit on a batch's payload: the 2 MB request size limit.
pub const MAX_BATCH_BYTES: usize = MAX_ITEM_BYTES;

/// What a batch operation does (`operationType`; lowercase is accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OperationType {
    #[serde(alias = "create")]
    Create,
    #[serde(alias = "read")]
    Read,
    #[serde(alias = "replace")]
    Replace,
    #[serde(alias = "upsert")]
    Upsert,
    #[serde(alias = "delete")]
    Delete,
    #[serde(alias = "patch")]
    Patch,
}

/// One operation of a transactional batch, in the SDKs' JSON shape. Build it with the
/// constructors ([`BatchOperation::create`], ...) or read it from JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchOperation {
    pub operation_type: OperationType,
    /// The item id: required for read, delete and patch; for replace it defaults to the
    /// body's id (and must equal it when both are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The item (create, replace, upsert) or the patch request (patch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_body: Option<Value>,
    /// Run only if the item's current `_etag` is this (412 otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_match: Option<String>,
    /// The operation's partition key; when given it must be the batch's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_key: Option<Value>,
}

impl BatchOperation {
    fn new(operation_type: OperationType, id: Option<String>, body: Option<Value>) -> Self {
        BatchOperation {
            operation_type,
            id,
            resource_body: body,
            if_match: None,
            partition_key: None,
        }
    }

    pub fn create(item: Value) -> Self {
        Self::new(OperationType::Create, None, Some(item))
    }

    pub fn upsert(item: Value) -> Self {
        Self::new(OperationType::Upsert, None, Some(item))
    }

    pub fn replace(id: impl Into<String>, item: Value) -> Self {
        Self::new(OperationType::Replace, Some(id.into()), Some(item))
    }

    pub fn read(id: impl Into<String>) -> Self {
        Self::new(OperationType::Read, Some(id.into()), None)
    }

    pub fn delete(id: impl Into<String>) -> Self {
        Self::new(OperationType::Delete, Some(id.into()), None)
    }

    pub fn patch(id: impl Into<String>, request: &PatchRequest) -> Self {
        Self::new(
            OperationType::Patch,
            Some(id.into()),
            Some(request.to_json()),
        )
    }

    /// Adds an `If-Match` precondition.
    pub fn if_match(mut self, etag: impl Into<String>) -> Self {
        self.if_match = Some(etag.into());
        self
    }
}

/// A patch request: 1 to 10 operations and an optional condition (`FROM c WHERE ...`)
/// the item must match, else 412.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchRequest {
    pub operations: Vec<PatchOperation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

impl PatchRequest {
    pub fn new(operations: Vec<PatchOperation>) -> Self {
        PatchRequest {
            operations,
            condition: None,
        }
    }

    pub fn with_condition(mut self, condition: impl Into<String>) -> Self {
        self.condition = Some(condition.into());
        self
    }

    /// Reads either body shape the service accepts: an array of operations, or
    /// `{"operations": [...], "condition"?: "FROM c WHERE ..."}`.
    pub fn from_json(body: Value) -> Result<PatchRequest> {
        let bad = |e: serde_json::Error| {
            Error::bad_request(format!(
                "invalid patch request: {e}; give an array of operations such as \
                 [{{\"op\": \"set\", \"path\": \"/status\", \"value\": \"done\"}}] or \
                 {{\"operations\": [...], \"condition\": \"FROM c WHERE ...\"}}"
            ))
        };
        match body {
            Value::Array(_) => serde_json::from_value(body)
                .map(PatchRequest::new)
                .map_err(bad),
            Value::Object(_) => serde_json::from_value(body).map_err(bad),
            other => Err(Error::bad_request(format!(
                "a patch request is an array of operations or an object with \"operations\", \
                 not {}",
                crate::error::json_type_name(&other)
            ))),
        }
    }

    fn to_json(&self) -> Value {
        // Plain data (strings, JSON values): serializing cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The outcome of one operation of a batch (`OperationResponse`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOperationResult {
    /// The operation's own status when the batch committed (201, 200, 204); when it failed,
    /// the failing operation's error status and 424 for every other.
    pub status_code: StatusCode,
    pub request_charge: f64,
    #[serde(rename = "eTag", skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The item as stored (reads and writes other than delete) when the batch committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_body: Option<Value>,
    /// Only on the failing operation.
    #[serde(skip_serializing_if = "is_zero")]
    pub substatus: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl BatchOperationResult {
    fn ok(status: StatusCode, charge: f64, etag: Option<String>, body: Option<&[u8]>) -> Self {
        BatchOperationResult {
            status_code: status,
            request_charge: charge,
            etag,
            resource_body: body.map(|b| serde_json::from_slice(b).unwrap_or(Value::Null)),
            substatus: 0,
            message: None,
        }
    }

    fn written(r: WriteResult) -> Self {
        Self::ok(r.status, r.request_charge, r.etag, r.body.as_deref())
    }

    /// An operation rolled back or never run because another one failed.
    fn failed_dependency(request_charge: f64) -> Self {
        BatchOperationResult {
            status_code: StatusCode::FailedDependency,
            request_charge,
            etag: None,
            resource_body: None,
            substatus: 0,
            message: None,
        }
    }
}

/// Why a batch failed: the failing operation's index and error.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchFailure {
    pub index: usize,
    pub error: Error,
}

/// The outcome of a transactional batch (`TransactionalBatchResponse`).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchResponse {
    /// 200 when the batch committed; otherwise the failing operation's status.
    pub status_code: StatusCode,
    /// The sum of the operations' charges ([`charge::batch`]).
    pub request_charge: f64,
    /// The physical partition that owns the batch's logical partition.
    pub range: String,
    /// One result per operation, in order.
    pub results: Vec<BatchOperationResult>,
    pub failure: Option<BatchFailure>,
}

impl BatchResponse {
    pub fn is_success(&self) -> bool {
        self.failure.is_none()
    }

    fn committed(results: Vec<BatchOperationResult>, range: String) -> Self {
        BatchResponse {
            status_code: StatusCode::Ok,
            request_charge: charge::batch(results.iter().map(|r| r.request_charge)),
            range,
            results,
            failure: None,
        }
    }

    /// Operation `index` failed with `error` after `done` succeeded (and were rolled back);
    /// the `total - index - 1` after it never ran.
    fn rolled_back(
        done: Vec<BatchOperationResult>,
        index: usize,
        error: Error,
        total: usize,
        range: String,
    ) -> Self {
        let mut results: Vec<BatchOperationResult> = done
            .iter()
            .map(|r| BatchOperationResult::failed_dependency(r.request_charge))
            .collect();
        results.push(BatchOperationResult {
            status_code: error.status,
            request_charge: error.request_charge,
            etag: None,
            resource_body: None,
            substatus: error.substatus,
            message: Some(error.message.clone()),
        });
        results.resize_with(total, || BatchOperationResult::failed_dependency(0.0));
        BatchResponse {
            status_code: error.status,
            request_charge: charge::batch(results.iter().map(|r| r.request_charge)),
            range,
            results,
            failure: Some(BatchFailure { index, error }),
        }
    }

    /// `{"statusCode", "requestCharge", "partitionKeyRangeId", "results": [...]}`, plus
    /// `"error": {status, substatus, code, message, requestCharge, operationIndex}` when the
    /// batch failed (the CLI's error contract).
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("statusCode".into(), self.status_code.as_u16().into());
        obj.insert("requestCharge".into(), json_f64(self.request_charge));
        obj.insert("partitionKeyRangeId".into(), self.range.clone().into());
        obj.insert(
            "results".into(),
            serde_json::to_value(&self.results).unwrap_or(Value::Null),
        );
        if let Some(f) = &self.failure {
            let mut error = f.error.to_json();
            if let Some(e) = error.as_object_mut() {
                e.insert("operationIndex".into(), f.index.into());
            }
            obj.insert("error".into(), error);
        }
        Value::Object(obj)
    }
}

impl Engine {
    /// [`Backend::execute_batch`](super::Backend::execute_batch) on the embedded store: runs
    /// a transactional batch on the logical partition `pk` (JSON, as `--pk` takes it).
    /// Returns `Ok` whether the batch committed or not — look at
    /// [`BatchResponse::is_success`]; `Err` is for a request that could not run at all (no
    /// such container, a bad key, too many operations or bytes, a throttled or faulty
    /// store).
    pub(super) fn run_batch(
        &self,
        db: &str,
        name: &str,
        pk: &Value,
        ops: &[BatchOperation],
    ) -> Result<BatchResponse> {
        charged((|| {
            check_limits(ops)?;
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let def = batch.container().clone();
            let key = def.partition_key.parse_request_value(pk)?;
            let range = def
                .owner(key.epk(&def.partition_key).as_bytes())?
                .id
                .to_string();
            let mut done = Vec::with_capacity(ops.len());
            for (index, op) in ops.iter().enumerate() {
                match charged(run(&mut batch, &key, op)) {
                    Ok(result) => done.push(result),
                    // Throttling and store faults fail the request itself, as on the service.
                    Err(e)
                        if e.status == StatusCode::TooManyRequests
                            || e.status.is_server_error() =>
                    {
                        return Err(e);
                    }
                    Err(e) => {
                        drop(batch); // aborts the transaction: nothing is written
                        return Ok(BatchResponse::rolled_back(done, index, e, ops.len(), range));
                    }
                }
            }
            batch.commit()?;
            Ok(BatchResponse::committed(done, range))
        })())
    }

    /// [`Backend::patch_item`](super::Backend::patch_item) on the embedded store: patches
    /// one item (`pk` as JSON). `request.condition`, when given, must match the item (412
    /// otherwise), as must `if_match`. Charged like a replace of the result.
    pub(super) fn patch_one(
        &self,
        db: &str,
        name: &str,
        id: &str,
        pk: &Value,
        request: &PatchRequest,
        if_match: Option<&str>,
    ) -> Result<ItemResponse> {
        charged((|| {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let key = batch.container().partition_key.parse_request_value(pk)?;
            let result = patch(&mut batch, id, &key, request, if_match)?;
            batch.commit()?;
            Ok(response(result))
        })())
    }
}

/// The service's per-request limits, checked before anything runs.
fn check_limits(ops: &[BatchOperation]) -> Result<()> {
    if ops.is_empty() {
        return Err(Error::bad_request(
            "the batch has no operations; give 1 to 100",
        ));
    }
    if ops.len() > MAX_BATCH_OPERATIONS {
        return Err(Error::bad_request(format!(
            "Batch request has more operations than what is supported: {} operations, the \
             limit is {MAX_BATCH_OPERATIONS}; split it into several batches (each one is \
             atomic on its own)",
            ops.len()
        )));
    }
    let bytes = payload_bytes(ops);
    if bytes > MAX_BATCH_BYTES {
        // The service answers an oversized request with 413, batches included (EF Core
        // met RequestEntityTooLarge on batches over 2 MB: dotnet/efcore#36903).
        return Err(Error::too_large(format!(
            "the batch's payload is {bytes} bytes; the service's request limit is \
             {MAX_BATCH_BYTES} bytes (2 MB) — split it into smaller batches"
        )));
    }
    Ok(())
}

/// Size of the operations as JSON, counted without building the text.
fn payload_bytes(ops: &[BatchOperation]) -> usize {
    struct Counter(usize);
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Serializing strings and JSON values into a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, ops);
    counter.0
}

/// Runs one operation inside the batch's transaction.
fn run(
    batch: &mut WriteBatch,
    key: &PartitionKeyValue,
    op: &BatchOperation,
) -> Result<BatchOperationResult> {
    if let Some(given) = &op.partition_key {
        let given = batch.container().partition_key.parse_request_value(given)?;
        same_partition(&given, key)?;
    }
    let if_match = op.if_match.as_deref();
    match op.operation_type {
        OperationType::Create => write(batch, key, op, WriteKind::Create, None),
        OperationType::Upsert => write(batch, key, op, WriteKind::Upsert, if_match),
        OperationType::Replace => write(batch, key, op, WriteKind::Replace, if_match),
        OperationType::Read => {
            let r = batch.read(required_id(op)?, key, if_match)?;
            let etag = item::stored_etag(&r.json);
            Ok(BatchOperationResult::ok(
                StatusCode::Ok,
                r.request_charge,
                etag,
                Some(&r.json),
            ))
        }
        OperationType::Delete => batch
            .delete(required_id(op)?, key, if_match)
            .map(BatchOperationResult::written),
        OperationType::Patch => {
            let body = op.resource_body.clone().ok_or_else(|| {
                Error::bad_request("a Patch operation needs a resourceBody with its operations")
            })?;
            let request = PatchRequest::from_json(body)?;
            patch(batch, required_id(op)?, key, &request, if_match)
                .map(BatchOperationResult::written)
        }
    }
}

/// Create, upsert or replace of the operation's body, which must live in `key`.
fn write(
    batch: &mut WriteBatch,
    key: &PartitionKeyValue,
    op: &BatchOperation,
    kind: WriteKind,
    if_match: Option<&str>,
) -> Result<BatchOperationResult> {
    let doc = match &op.resource_body {
        Some(Value::Object(doc)) => doc.clone(),
        Some(other) => {
            return Err(Error::bad_request(format!(
                "the resourceBody of a {:?} operation must be the item as a JSON object, not {}",
                op.operation_type,
                crate::error::json_type_name(other)
            )));
        }
        None => {
            return Err(Error::bad_request(format!(
                "a {:?} operation needs the item as its resourceBody",
                op.operation_type
            )));
        }
    };
    if let (Some(id), Ok(body_id)) = (&op.id, item::item_id(&doc))
        && id != body_id
    {
        return Err(Error::bad_request(format!(
            "the operation's id {id:?} differs from its resourceBody's id {body_id:?}"
        )));
    }
    same_partition(&batch.container().partition_key.extract(&doc)?, key)?;
    batch
        .write(kind, doc, if_match)
        .map(BatchOperationResult::written)
}

fn required_id(op: &BatchOperation) -> Result<&str> {
    op.id.as_deref().ok_or_else(|| {
        Error::bad_request(format!(
            "a {:?} operation needs the id of its item",
            op.operation_type
        ))
    })
}

/// Every operation of a batch works in the batch's logical partition (400, substatus 1001
/// like the service's partition key mismatch).
fn same_partition(given: &PartitionKeyValue, key: &PartitionKeyValue) -> Result<()> {
    if given == key {
        return Ok(());
    }
    Err(Error::bad_request(format!(
        "the operation's partition key {} is not the batch's {}; a transactional batch works \
         in one logical partition",
        given.to_display_json(),
        key.to_display_json()
    ))
    .with_substatus(substatus::PARTITION_KEY_MISMATCH))
}

/// Patches inside `batch`, compiling the request's condition first.
fn patch(
    batch: &mut WriteBatch,
    id: &str,
    key: &PartitionKeyValue,
    request: &PatchRequest,
    if_match: Option<&str>,
) -> Result<WriteResult> {
    let condition = request
        .condition
        .as_deref()
        .map(Condition::parse)
        .transpose()?;
    let matches = condition
        .as_ref()
        .map(|c| move |doc: &Value| c.matches(doc));
    batch.patch(
        id,
        key,
        &request.operations,
        if_match,
        matches.as_ref().map(|f| f as &dyn Fn(&Value) -> bool),
    )
}
