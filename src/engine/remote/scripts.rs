//! Stored procedures, triggers and user-defined functions on a remote account: the
//! container's `sprocs`, `triggers` and `udfs` feeds, a procedure's execution in one
//! logical partition (its log when asked), and item writes naming their triggers
//! (`x-ms-documentdb-pre-trigger-include`, `-post-trigger-include`).

use hyper::Method;
use serde_json::{Map, Value};

use super::RemoteBackend;
use super::http::Call;
use super::items::{item_path, range_of, with_if_match};
use super::resources::{container_path, str_of};
use crate::engine::scripts::{
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, TriggeredOp, TriggeredWrite,
};
use crate::engine::views::ItemResponse;
use crate::error::{Error, Result};

impl RemoteBackend {
    pub(super) fn script_put(
        &self,
        db: &str,
        name: &str,
        script: &ScriptSpec,
        replace: bool,
    ) -> Result<ScriptInfo> {
        self.writable(if replace {
            "replacing a script"
        } else {
            "creating a script"
        })?;
        let mut body = Map::new();
        body.insert("id".into(), script.id.clone().into());
        body.insert("body".into(), script.body.clone().into());
        if let Some(t) = script.trigger_type {
            body.insert(
                "triggerType".into(),
                serde_json::to_value(t).unwrap_or_default(),
            );
        }
        if let Some(op) = script.trigger_operation {
            body.insert(
                "triggerOperation".into(),
                serde_json::to_value(op).unwrap_or_default(),
            );
        }
        let feed = scripts_path(db, name, script.kind);
        let call = if replace {
            Call::new(Method::PUT, format!("{feed}/{}", script.id))
        } else {
            Call::new(Method::POST, feed)
        };
        let doc = self.send(&call.json(&Value::Object(body)))?.json()?;
        script_info(script.kind, &doc)
    }

    pub(super) fn script_read(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
        id: &str,
    ) -> Result<ScriptInfo> {
        let path = format!("{}/{id}", scripts_path(db, name, kind));
        script_info(kind, &self.send(&Call::new(Method::GET, path))?.json()?)
    }

    pub(super) fn script_list(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
    ) -> Result<Vec<ScriptInfo>> {
        let member = match kind {
            ScriptKind::StoredProcedure => "StoredProcedures",
            ScriptKind::Trigger => "Triggers",
            ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
        };
        let mut out = self
            .send(&Call::new(Method::GET, scripts_path(db, name, kind)))?
            .feed(member)?
            .iter()
            .map(|d| script_info(kind, d))
            .collect::<Result<Vec<_>>>()?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    pub(super) fn script_delete(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
        id: &str,
    ) -> Result<()> {
        self.writable("deleting a script")?;
        let path = format!("{}/{id}", scripts_path(db, name, kind));
        self.send(&Call::new(Method::DELETE, path)).map(|_| ())
    }

    pub(super) fn sproc_execute(
        &self,
        db: &str,
        name: &str,
        id: &str,
        request: &SprocRequest,
    ) -> Result<SprocResponse> {
        // A procedure may write; the account cannot say beforehand whether it will.
        self.writable("executing a stored procedure")?;
        let path = format!(
            "{}/{id}",
            scripts_path(db, name, ScriptKind::StoredProcedure)
        );
        let mut call = Call::new(Method::POST, path)
            .json(&Value::Array(request.params.clone()))
            .header(
                "x-ms-documentdb-partitionkey",
                self.wire_key(db, name, &request.partition_key)?,
            );
        if request.enable_log {
            call = call.header("x-ms-documentdb-script-enable-logging", "true");
        }
        let answer = self.send(&call)?;
        let body = if answer.body.is_empty() {
            None
        } else {
            Some(answer.json()?)
        };
        Ok(SprocResponse {
            body,
            request_charge: answer.charge(),
            log: answer
                .header("x-ms-documentdb-script-log-results")
                .map(|l| super::signing::percent_decode(l).unwrap_or_else(|| l.to_string())),
            range: range_of(&answer),
        })
    }

    pub(super) fn triggered_write(
        &self,
        db: &str,
        name: &str,
        write: &TriggeredWrite,
    ) -> Result<ItemResponse> {
        self.writable("writing an item")?;
        let docs = format!("{}/docs", container_path(db, name));
        let call = match &write.op {
            TriggeredOp::Create(body) | TriggeredOp::Upsert(body) => {
                let call = Call::new(Method::POST, docs)
                    .body("application/json", body.clone())
                    .header(
                        "x-ms-documentdb-partitionkey",
                        self.key_of_body(db, name, body)?,
                    );
                if matches!(write.op, TriggeredOp::Upsert(_)) {
                    call.header("x-ms-documentdb-is-upsert", "True")
                } else {
                    call
                }
            }
            TriggeredOp::Replace(body) => Call::new(
                Method::PUT,
                item_path(db, name, &super::items::id_of(body)?),
            )
            .body("application/json", body.clone())
            .header(
                "x-ms-documentdb-partitionkey",
                self.key_of_body(db, name, body)?,
            ),
            TriggeredOp::Delete { id, partition_key } => {
                Call::new(Method::DELETE, item_path(db, name, id)).header(
                    "x-ms-documentdb-partitionkey",
                    self.wire_key(db, name, partition_key)?,
                )
            }
        };
        let mut call = with_if_match(call, write.if_match.as_deref());
        if let Some(t) = &write.pre_trigger {
            call = call.header("x-ms-documentdb-pre-trigger-include", t.clone());
        }
        if let Some(t) = &write.post_trigger {
            call = call.header("x-ms-documentdb-post-trigger-include", t.clone());
        }
        self.item_call(call)
    }
}

fn scripts_path(db: &str, name: &str, kind: ScriptKind) -> String {
    format!("{}/{}", container_path(db, name), kind.segment())
}

fn script_info(kind: ScriptKind, doc: &Value) -> Result<ScriptInfo> {
    let spec = ScriptSpec::from_json(kind, doc).map_err(|e| {
        Error::internal(format!(
            "the account answered with a script this client cannot read: {}",
            e.message
        ))
    })?;
    Ok(ScriptInfo {
        kind,
        id: spec.id,
        body: spec.body,
        trigger_type: spec.trigger_type,
        trigger_operation: spec.trigger_operation,
        rid: str_of(doc, "_rid"),
        self_link: str_of(doc, "_self"),
        etag: str_of(doc, "_etag"),
        ts: doc.get("_ts").and_then(Value::as_i64).unwrap_or(0),
    })
}
