//! Server-side scripts on the embedded store: the resources' transactions, the execution
//! of a stored procedure in one logical partition as one write transaction, item writes
//! with their pre- and post-triggers in the write's transaction, and the UDFs a query
//! calls. The JavaScript runs in [`crate::scripts`]; its document operations come back to
//! `script_host` and run in the open transaction.

use serde_json::Value;

use super::script_host::ScriptHost;
use super::scripts::{
    ScriptInfo, ScriptKind, ScriptSpec, SprocRequest, SprocResponse, TriggerOperation, TriggerType,
    TriggeredOp, TriggeredWrite,
};
use super::{Engine, ItemResponse, charged, response};
use crate::charge;
use crate::error::{Error, Result};
use crate::scripts::{self, Invocation, Limits, Role};
use crate::store::catalog::ContainerDef;
use crate::store::item;
use crate::store::scripts::ScriptDef;
use crate::store::write::{WriteBatch, WriteKind};

impl Engine {
    pub(super) fn put_script(
        &self,
        db: &str,
        name: &str,
        spec: &ScriptSpec,
        replace: bool,
    ) -> Result<ScriptInfo> {
        scripts::compile(&spec.body)?;
        if spec.kind == ScriptKind::Trigger {
            if spec.trigger_type.is_none() || spec.trigger_operation.is_none() {
                return Err(Error::bad_request(
                    "a trigger needs its triggerType (Pre or Post) and triggerOperation \
                     (All, Create, Replace, Delete or Upsert)",
                ));
            }
        } else if spec.trigger_type.is_some() || spec.trigger_operation.is_some() {
            return Err(Error::bad_request(format!(
                "a {} has no triggerType or triggerOperation",
                spec.kind.noun()
            )));
        }
        let mut txn = self.store.write_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let stored = self.store.put_script(
            &mut txn,
            &def,
            ScriptDef {
                id: spec.id.clone(),
                kind: spec.kind,
                body: spec.body.clone(),
                trigger_type: spec.trigger_type,
                trigger_operation: spec.trigger_operation,
                number: 0,
                ts: 0,
                etag: String::new(),
            },
            replace,
        )?;
        txn.commit()?;
        Ok(ScriptInfo::new(&def, &stored))
    }

    pub(super) fn get_script(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
        id: &str,
    ) -> Result<ScriptInfo> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        let s = self.store.read_script(&txn, &def, kind, id)?;
        Ok(ScriptInfo::new(&def, &s))
    }

    pub(super) fn all_scripts(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
    ) -> Result<Vec<ScriptInfo>> {
        let txn = self.store.read_txn()?;
        let def = self.store.container(&txn, db, name)?;
        Ok(self
            .store
            .list_scripts(&txn, &def, kind)?
            .iter()
            .map(|s| ScriptInfo::new(&def, s))
            .collect())
    }

    pub(super) fn remove_script(
        &self,
        db: &str,
        name: &str,
        kind: ScriptKind,
        id: &str,
    ) -> Result<()> {
        let mut txn = self.store.write_txn()?;
        let def = self.store.container(&txn, db, name)?;
        self.store.delete_script(&mut txn, &def, kind, id)?;
        txn.commit()?;
        Ok(())
    }

    /// Runs stored procedure `id` in the logical partition of `request.partition_key`, as
    /// one write transaction: committed when the script returns, rolled back whole when it
    /// throws, aborts or runs out of time.
    pub(super) fn run_stored_procedure(
        &self,
        db: &str,
        name: &str,
        id: &str,
        request: &SprocRequest,
    ) -> Result<SprocResponse> {
        charged((|| {
            let script = self.get_script(db, name, ScriptKind::StoredProcedure, id)?;
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let def = batch.container().clone();
            let key = def
                .partition_key
                .parse_request_value(&request.partition_key)?;
            let range = def.owner(key.epk(&def.partition_key).as_bytes())?.id;
            let (links, alt) = links(&def);
            let invocation = Invocation {
                role: Role::StoredProcedure,
                body: script.body,
                args: request.params.clone(),
                request: None,
                response: None,
                self_link: links,
                alt_link: alt,
            };
            let mut host = ScriptHost::new(self, &mut batch, key, Limits::default());
            let outcome = scripts::execute(invocation, Limits::default(), &mut host);
            let operations = host.charge();
            match outcome {
                Ok(outcome) => {
                    batch.commit()?;
                    Ok(SprocResponse {
                        body: outcome.response,
                        request_charge: charge::script(operations, outcome.ticks),
                        log: request.enable_log.then_some(outcome.log),
                        range: range.to_string(),
                    })
                }
                Err(e) => {
                    drop(batch); // aborts the transaction: nothing is written
                    Err(e.with_charge(charge::script(operations, 0)))
                }
            }
        })())
    }

    /// An item write with its named triggers, all in one transaction: the pre-trigger may
    /// change the item, the post-trigger sees the stored item, and a throw from either
    /// undoes the write.
    pub(super) fn run_triggered_write(
        &self,
        db: &str,
        name: &str,
        write: &TriggeredWrite,
    ) -> Result<ItemResponse> {
        charged((|| {
            let mut batch = WriteBatch::begin(&self.store, db, name)?;
            let def = batch.container().clone();
            let (operation, mut doc, key) = match &write.op {
                TriggeredOp::Create(body)
                | TriggeredOp::Upsert(body)
                | TriggeredOp::Replace(body) => {
                    let doc = item::parse_body(body)?;
                    let key = def.partition_key.extract(&doc)?;
                    let operation = match &write.op {
                        TriggeredOp::Create(_) => TriggerOperation::Create,
                        TriggeredOp::Upsert(_) => TriggerOperation::Upsert,
                        _ => TriggerOperation::Replace,
                    };
                    (operation, Some(doc), key)
                }
                TriggeredOp::Delete { partition_key, .. } => (
                    TriggerOperation::Delete,
                    None,
                    def.partition_key.parse_request_value(partition_key)?,
                ),
            };
            let pre = self.trigger_for(
                &def,
                write.pre_trigger.as_deref(),
                TriggerType::Pre,
                operation,
            )?;
            let post = self.trigger_for(
                &def,
                write.post_trigger.as_deref(),
                TriggerType::Post,
                operation,
            )?;
            let (self_link, alt_link) = links(&def);
            let mut scripts_charge = 0.0;
            if let Some(body) = pre {
                let invocation = Invocation {
                    role: Role::PreTrigger,
                    body,
                    args: Vec::new(),
                    request: doc.clone().map(Value::Object),
                    response: None,
                    self_link: self_link.clone(),
                    alt_link: alt_link.clone(),
                };
                let outcome = run_trigger(self, &mut batch, &key, invocation, &mut scripts_charge)?;
                if doc.is_some() {
                    doc = match outcome.request {
                        Some(Value::Object(changed)) => Some(changed),
                        Some(other) => {
                            return Err(Error::bad_request(format!(
                                "the pre-trigger set the request body to {}, not an item",
                                crate::error::json_type_name(&other)
                            )));
                        }
                        None => doc,
                    };
                }
            }
            if let Some(doc) = &doc
                && def.partition_key.extract(doc)? != key
            {
                return Err(Error::bad_request(
                    "the pre-trigger moved the item to another logical partition; a trigger \
                     works in the partition of the write that named it",
                ));
            }
            let if_match = write.if_match.as_deref();
            let result = match (&write.op, doc) {
                (TriggeredOp::Delete { id, .. }, _) => batch.delete(id, &key, if_match)?,
                (TriggeredOp::Create(_), Some(doc)) => batch.write(WriteKind::Create, doc, None)?,
                (TriggeredOp::Upsert(_), Some(doc)) => {
                    batch.write(WriteKind::Upsert, doc, if_match)?
                }
                (_, Some(doc)) => batch.write(WriteKind::Replace, doc, if_match)?,
                (_, None) => return Err(Error::internal("a write without its item")),
            };
            if let Some(body) = post {
                let stored = result
                    .body
                    .as_deref()
                    .and_then(|b| serde_json::from_slice::<Value>(b).ok());
                let invocation = Invocation {
                    role: Role::PostTrigger,
                    body,
                    args: Vec::new(),
                    request: stored.clone(),
                    response: stored,
                    self_link,
                    alt_link,
                };
                run_trigger(self, &mut batch, &key, invocation, &mut scripts_charge)?;
            }
            batch.commit()?;
            let mut out = response(result);
            if write.pre_trigger.is_some() || write.post_trigger.is_some() {
                out.request_charge = charge::round(out.request_charge + scripts_charge);
            }
            Ok(out)
        })())
    }

    /// The body of the trigger a write names, checked against its type and operation
    /// (400 otherwise, as the service refuses a trigger named on the wrong write).
    fn trigger_for(
        &self,
        def: &ContainerDef,
        id: Option<&str>,
        wanted: TriggerType,
        operation: TriggerOperation,
    ) -> Result<Option<String>> {
        let Some(id) = id else { return Ok(None) };
        let txn = self.store.read_txn()?;
        let t = self.store.read_script(&txn, def, ScriptKind::Trigger, id)?;
        if t.trigger_type != Some(wanted) {
            return Err(Error::bad_request(format!(
                "trigger {id:?} is a {:?}-trigger; it cannot be named as a {wanted:?}-trigger",
                t.trigger_type.unwrap_or(TriggerType::Pre)
            )));
        }
        if !t.trigger_operation.is_some_and(|op| op.covers(operation)) {
            return Err(Error::bad_request(format!(
                "trigger {id:?} runs on {:?} operations, not on {operation:?}",
                t.trigger_operation.unwrap_or(TriggerOperation::All)
            )));
        }
        Ok(Some(t.body))
    }
}

/// Wall-clock budget of the UDFs of one query page (our choice; the service publishes none).
const UDF_SECONDS_PER_PAGE: u64 = 30;

impl Engine {
    /// The container's UDFs that `q` calls, compiled for one execution; `None` when it
    /// calls none. A name the container does not have is a 400 naming it.
    pub(super) fn query_udfs(
        &self,
        txn: &crate::store::RoTxn,
        def: &ContainerDef,
        sql: &str,
        q: &crate::query::syntax::ast::Query,
    ) -> Result<Option<std::rc::Rc<dyn crate::query::eval::udf::UdfCall>>> {
        // Most queries call no UDF: skip the walk unless the text could.
        if !sql.contains("udf") {
            return Ok(None);
        }
        let names = crate::query::eval::udf::names(q);
        if names.is_empty() {
            return Ok(None);
        }
        let mut bodies = Vec::with_capacity(names.len());
        for name in names {
            match self
                .store
                .read_script(txn, def, ScriptKind::UserDefinedFunction, &name)
            {
                Ok(s) => bodies.push((name, s.body)),
                Err(e) if e.is(crate::error::StatusCode::NotFound) => {
                    return Err(Error::bad_request(format!(
                        "udf.{name} is not a user-defined function of {}; create it with \
                         `udf create {} {name} FILE`",
                        def.full_name(),
                        def.full_name()
                    ))
                    .with_charge(charge::REJECTED));
                }
                Err(e) => return Err(e),
            }
        }
        // The 5-second budget is a stored procedure's; a query's UDFs share one runtime for
        // the whole page, and a fan-out page calls them once per item of every range, so
        // they get more (measured: a UDF call costs tens of microseconds, and 100,000 calls
        // overran 5 s on a loaded 2-core machine). Still bounded: an endless loop in a UDF
        // fails the query with 408.
        let limits = Limits {
            time: std::time::Duration::from_secs(UDF_SECONDS_PER_PAGE),
            ..Limits::default()
        };
        let udfs = scripts::udf::Udfs::new(&bodies, limits)?;
        Ok(Some(std::rc::Rc::new(udfs)))
    }
}

/// Runs one trigger in `batch`, adding what it cost to `total`; its error (with the cost
/// so far) fails the write.
fn run_trigger(
    engine: &Engine,
    batch: &mut WriteBatch,
    key: &crate::store::partition_key::PartitionKeyValue,
    invocation: Invocation,
    total: &mut f64,
) -> Result<scripts::Outcome> {
    let mut host = ScriptHost::new(engine, batch, key.clone(), Limits::default());
    let outcome = scripts::execute(invocation, Limits::default(), &mut host);
    let operations = host.charge();
    match outcome {
        Ok(o) => {
            *total += charge::script(operations, o.ticks);
            Ok(o)
        }
        Err(e) => Err(e.with_charge(*total + charge::script(operations, 0))),
    }
}

/// The container's `_self` link and its name-based link.
fn links(def: &ContainerDef) -> (String, String) {
    let rids = item::rids(def, 0);
    (
        format!("dbs/{}/colls/{}/", rids.database, rids.container),
        format!("dbs/{}/colls/{}", def.database, def.id),
    )
}
