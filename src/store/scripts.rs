//! Server-side scripts of a container in the catalog: stored procedures, triggers and
//! user-defined functions, each a small JSON record in `meta` under
//! `script/<container rid>/<kind>/<id>`.
//!
//! Keyed by the container's rid, not its name, so a container created again under an old
//! name starts with no scripts; deleting a container (or its database) deletes its scripts.
//! The store keeps the records and the service's naming and count rules; compiling a body
//! is the `scripts` layer's business, done by the engine before it calls in here.

use heed::{RoTxn, RwTxn};
use serde::{Deserialize, Serialize};

use super::Store;
use super::catalog::{ContainerDef, decode_json, encode_json, validate_name};
use super::keys::ContainerRid;
use crate::error::{Error, Result};

/// The three kinds of script a container holds, by the REST API's resource names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScriptKind {
    #[serde(rename = "sprocs")]
    StoredProcedure,
    #[serde(rename = "triggers")]
    Trigger,
    #[serde(rename = "udfs")]
    UserDefinedFunction,
}

impl ScriptKind {
    /// The REST resource segment: `sprocs`, `triggers`, `udfs`.
    pub fn segment(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "sprocs",
            ScriptKind::Trigger => "triggers",
            ScriptKind::UserDefinedFunction => "udfs",
        }
    }

    /// How messages name one: "stored procedure", "trigger", "user-defined function".
    pub fn noun(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "stored procedure",
            ScriptKind::Trigger => "trigger",
            ScriptKind::UserDefinedFunction => "user-defined function",
        }
    }

    /// The service's quota per container: 50 UDFs (reference/cosmos.md §7.3); the same
    /// figure is taken for stored procedures and triggers, whose quota the references do
    /// not state (**unconfirmed**).
    pub fn quota(self) -> usize {
        50
    }
}

/// When a trigger runs: before or after the write that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerType {
    Pre,
    Post,
}

/// Which writes a trigger may be named on (`triggerOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerOperation {
    All,
    Create,
    Update,
    Replace,
    Delete,
    Upsert,
}

impl TriggerOperation {
    /// Whether a trigger declared for `self` may run on a write of kind `write`.
    pub fn covers(self, write: TriggerOperation) -> bool {
        // `Update` is the service's older name covering replaces (and upserts that replace
        // are also replaces); it is kept as the SDKs still send it.
        self == TriggerOperation::All
            || self == write
            || (self == TriggerOperation::Update
                && matches!(write, TriggerOperation::Replace | TriggerOperation::Upsert))
    }
}

/// One script as stored: the user's id and body, the trigger's type and operation, and the
/// system properties the service gives a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptDef {
    pub id: String,
    pub kind: ScriptKind,
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_type: Option<TriggerType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_operation: Option<TriggerOperation>,
    /// A number unique within the container, for `_rid`.
    pub number: u64,
    pub ts: i64,
    pub etag: String,
}

fn prefix(container: ContainerRid, kind: Option<ScriptKind>) -> String {
    match kind {
        Some(kind) => format!("script/{container}/{}/", kind.segment()),
        None => format!("script/{container}/"),
    }
}

fn key(container: ContainerRid, kind: ScriptKind, id: &str) -> String {
    format!("{}{id}", prefix(container, Some(kind)))
}

const SCRIPT_COUNTER: &str = "counter/script";

impl Store {
    /// One script of the container, or 404.
    pub fn read_script(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        kind: ScriptKind,
        id: &str,
    ) -> Result<ScriptDef> {
        match self.meta.get(txn, key(def.rid, kind, id).as_bytes())? {
            Some(bytes) => decode_json(bytes, "script"),
            None => Err(Error::not_found(format!(
                "{} {id:?} does not exist in {}",
                kind.noun(),
                def.full_name()
            ))),
        }
    }

    /// The container's scripts of one kind, in id order.
    pub fn list_scripts(
        &self,
        txn: &RoTxn,
        def: &ContainerDef,
        kind: ScriptKind,
    ) -> Result<Vec<ScriptDef>> {
        let mut out = Vec::new();
        for entry in super::prefixed(&self.meta, txn, prefix(def.rid, Some(kind)).as_bytes())? {
            let (_, v) = entry?;
            out.push(decode_json(v, "script")?);
        }
        Ok(out)
    }

    /// Stores a new script (409 if the id is taken) or replaces one (404 if it is not),
    /// with fresh system properties. `script.number`, `ts` and `etag` are set here.
    pub fn put_script(
        &self,
        txn: &mut RwTxn,
        def: &ContainerDef,
        mut script: ScriptDef,
        replace: bool,
    ) -> Result<ScriptDef> {
        validate_name(script.kind.noun(), &script.id)?;
        let k = key(def.rid, script.kind, &script.id);
        let existing: Option<ScriptDef> = match self.meta.get(txn, k.as_bytes())? {
            Some(bytes) => Some(decode_json(bytes, "script")?),
            None => None,
        };
        match (&existing, replace) {
            (Some(_), false) => {
                return Err(Error::conflict(format!(
                    "{} {:?} already exists in {}; replace it instead",
                    script.kind.noun(),
                    script.id,
                    def.full_name()
                )));
            }
            (None, true) => {
                return Err(Error::not_found(format!(
                    "{} {:?} does not exist in {}",
                    script.kind.noun(),
                    script.id,
                    def.full_name()
                )));
            }
            (None, false) => {
                let count = self.list_scripts(txn, def, script.kind)?.len();
                if count >= script.kind.quota() {
                    return Err(Error::new(
                        crate::error::StatusCode::Forbidden,
                        format!(
                            "{} already has {count} of the {} {}s a container may hold",
                            def.full_name(),
                            script.kind.quota(),
                            script.kind.noun()
                        ),
                    ));
                }
            }
            (Some(_), true) => {}
        }
        // Every write takes the next counter value: a new script's number, and the etag's
        // sequence, so a replace within the same second still changes the etag.
        let n = self
            .meta
            .get(txn, SCRIPT_COUNTER.as_bytes())?
            .and_then(super::catalog::read_u64)
            .unwrap_or(0)
            + 1;
        self.meta
            .put(txn, SCRIPT_COUNTER.as_bytes(), &n.to_le_bytes())?;
        script.number = existing.as_ref().map_or(n, |old| old.number);
        script.ts = super::now_secs();
        script.etag = super::item::etag(n, script.ts);
        self.meta.put(txn, k.as_bytes(), &encode_json(&script)?)?;
        Ok(script)
    }

    /// Deletes one script, or 404.
    pub fn delete_script(
        &self,
        txn: &mut RwTxn,
        def: &ContainerDef,
        kind: ScriptKind,
        id: &str,
    ) -> Result<()> {
        self.read_script(txn, def, kind, id)?;
        self.meta.delete(txn, key(def.rid, kind, id).as_bytes())?;
        Ok(())
    }

    /// Deletes every script of a container (the container is being deleted).
    pub(crate) fn delete_container_scripts(
        &self,
        txn: &mut RwTxn,
        container: ContainerRid,
    ) -> Result<()> {
        let p = prefix(container, None);
        let keys: Vec<Vec<u8>> = super::prefixed(&self.meta, txn, p.as_bytes())?
            .map(|e| e.map(|(k, _)| k.to_vec()))
            .collect::<std::result::Result<_, _>>()?;
        for k in keys {
            self.meta.delete(txn, &k)?;
        }
        Ok(())
    }
}
