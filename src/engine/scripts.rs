//! Server-side scripts in the engine's words: a script to create ([`ScriptSpec`]) and as
//! stored ([`ScriptInfo`]), a stored procedure's execution request and response, and an
//! item write naming its triggers. The operations on them are the [`super::Backend`]'s;
//! the embedded store runs them in `script_run` (the transactions) and `script_host` (a
//! script's document operations).

use serde_json::{Map, Value};

use super::json_f64;
use crate::error::{Error, Result};
use crate::store::catalog::ContainerDef;
use crate::store::item;
use crate::store::scripts::ScriptDef;
pub use crate::store::scripts::{ScriptKind, TriggerOperation, TriggerType};

/// A script to create or replace.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSpec {
    pub kind: ScriptKind,
    pub id: String,
    pub body: String,
    /// Triggers only: when it runs and on which writes.
    pub trigger_type: Option<TriggerType>,
    pub trigger_operation: Option<TriggerOperation>,
}

impl ScriptSpec {
    pub fn new(kind: ScriptKind, id: impl Into<String>, body: impl Into<String>) -> ScriptSpec {
        ScriptSpec {
            kind,
            id: id.into(),
            body: body.into(),
            trigger_type: None,
            trigger_operation: None,
        }
    }

    /// A trigger of `trigger_type` for `operation` writes.
    pub fn trigger(
        id: impl Into<String>,
        body: impl Into<String>,
        trigger_type: TriggerType,
        operation: TriggerOperation,
    ) -> ScriptSpec {
        ScriptSpec {
            trigger_type: Some(trigger_type),
            trigger_operation: Some(operation),
            ..ScriptSpec::new(ScriptKind::Trigger, id, body)
        }
    }

    /// Reads the REST API's resource body: `{"id", "body", "triggerType"?,
    /// "triggerOperation"?}` (system properties are ignored).
    pub fn from_json(kind: ScriptKind, v: &Value) -> Result<ScriptSpec> {
        let text = |k: &str| v.get(k).and_then(Value::as_str);
        let id = text("id").ok_or_else(|| {
            Error::bad_request(format!("a {} needs a string \"id\"", kind.noun()))
        })?;
        let body = text("body").ok_or_else(|| {
            Error::bad_request(format!(
                "a {} needs its JavaScript function as a string \"body\"",
                kind.noun()
            ))
        })?;
        let mut spec = ScriptSpec::new(kind, id, body);
        if kind == ScriptKind::Trigger {
            let parse = |k: &str| -> Result<Option<Value>> {
                Ok(v.get(k).filter(|x| !x.is_null()).cloned())
            };
            spec.trigger_type = parse("triggerType")?
                .map(|t| serde_json::from_value(canonical_case(t)))
                .transpose()
                .map_err(|_| Error::bad_request("triggerType must be \"Pre\" or \"Post\""))?;
            spec.trigger_operation = parse("triggerOperation")?
                .map(|t| serde_json::from_value(canonical_case(t)))
                .transpose()
                .map_err(|_| {
                    Error::bad_request(
                        "triggerOperation must be one of All, Create, Update, Replace, \
                         Delete, Upsert",
                    )
                })?;
        }
        Ok(spec)
    }
}

/// `"pre"` and `"PRE"` as `"Pre"`: the SDKs send either case.
fn canonical_case(v: Value) -> Value {
    match v {
        Value::String(s) => {
            let mut chars = s.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            Value::String(
                first
                    .into_iter()
                    .chain(chars.map(|c| c.to_ascii_lowercase()))
                    .collect(),
            )
        }
        other => other,
    }
}

/// A stored script as front ends show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptInfo {
    pub kind: ScriptKind,
    pub id: String,
    pub body: String,
    pub trigger_type: Option<TriggerType>,
    pub trigger_operation: Option<TriggerOperation>,
    pub rid: String,
    pub self_link: String,
    pub etag: String,
    pub ts: i64,
}

impl ScriptInfo {
    pub(super) fn new(def: &ContainerDef, s: &ScriptDef) -> ScriptInfo {
        let rids = item::rids(def, 0);
        // The script's rid: the container's and its number; the resource type nibble is
        // our choice (the service's encoding of script rids is not in the references).
        let rid = format!("{}{}", rids.container, script_rid_suffix(s));
        ScriptInfo {
            kind: s.kind,
            id: s.id.clone(),
            body: s.body.clone(),
            trigger_type: s.trigger_type,
            trigger_operation: s.trigger_operation,
            self_link: format!(
                "dbs/{}/colls/{}/{}/{rid}/",
                rids.database,
                rids.container,
                s.kind.segment()
            ),
            rid,
            etag: s.etag.clone(),
            ts: s.ts,
        }
    }

    /// The REST API's resource: `{"id", "body", "triggerType"?, "triggerOperation"?, "_rid",
    /// "_self", "_etag", "_ts"}`.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("id".into(), self.id.clone().into());
        obj.insert("body".into(), self.body.clone().into());
        if let Some(t) = self.trigger_type {
            obj.insert(
                "triggerType".into(),
                serde_json::to_value(t).unwrap_or_default(),
            );
        }
        if let Some(op) = self.trigger_operation {
            obj.insert(
                "triggerOperation".into(),
                serde_json::to_value(op).unwrap_or_default(),
            );
        }
        obj.insert("_rid".into(), self.rid.clone().into());
        obj.insert("_self".into(), self.self_link.clone().into());
        obj.insert("_etag".into(), self.etag.clone().into());
        obj.insert("_ts".into(), self.ts.into());
        Value::Object(obj)
    }
}

fn script_rid_suffix(s: &ScriptDef) -> String {
    use base64::Engine as _;
    let kind: u8 = match s.kind {
        ScriptKind::StoredProcedure => 0x08,
        ScriptKind::Trigger => 0x07,
        ScriptKind::UserDefinedFunction => 0x06,
    };
    let mut bytes = (s.number & 0x00FF_FFFF_FFFF_FFFF).to_le_bytes();
    bytes[7] = kind << 4;
    base64::engine::general_purpose::STANDARD
        .encode(bytes)
        .replace('/', "-")
}

/// A stored procedure execution request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SprocRequest {
    /// The logical partition it runs in (JSON, as `--pk` takes it).
    pub partition_key: Value,
    /// Its parameters, in order.
    pub params: Vec<Value>,
    /// Return `console.log` output (`x-ms-documentdb-script-enable-logging`).
    pub enable_log: bool,
}

/// The outcome of a committed stored procedure execution.
#[derive(Debug, Clone, PartialEq)]
pub struct SprocResponse {
    /// The response body the script set (`None` when it set none).
    pub body: Option<Value>,
    pub request_charge: f64,
    /// The script's log, when asked for.
    pub log: Option<String>,
    /// The physical partition it ran on.
    pub range: String,
}

impl SprocResponse {
    /// `{"body", "requestCharge", "partitionKeyRangeId", "log"?}`: the CLI's output.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("body".into(), self.body.clone().unwrap_or(Value::Null));
        obj.insert("requestCharge".into(), json_f64(self.request_charge));
        obj.insert("partitionKeyRangeId".into(), self.range.clone().into());
        if let Some(log) = &self.log {
            obj.insert("log".into(), log.clone().into());
        }
        Value::Object(obj)
    }
}

/// What an item write with triggers does.
#[derive(Debug, Clone, PartialEq)]
pub enum TriggeredOp {
    Create(Vec<u8>),
    Upsert(Vec<u8>),
    Replace(Vec<u8>),
    Delete { id: String, partition_key: Value },
}

/// An item write naming its pre- and post-trigger (at most one of each, as the service
/// allows).
#[derive(Debug, Clone, PartialEq)]
pub struct TriggeredWrite {
    pub op: TriggeredOp,
    pub if_match: Option<String>,
    pub pre_trigger: Option<String>,
    pub post_trigger: Option<String>,
}
