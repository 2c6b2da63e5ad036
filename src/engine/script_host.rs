//! The document operations of a running script, performed in the execution's write
//! transaction and confined to its logical partition (reference/cosmos.md §7.1).
//!
//! Writes and point reads go through the open [`WriteBatch`], so a script reads its own
//! writes by id. Queries read the snapshot from before the transaction: the service's
//! scripts see the state before their own writes (the blog's `truncateFeed` adds 1 to its
//! count because "the query didn't count the newly inserted doc"), and the index is only
//! brought up to date at commit anyway.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::Engine;
use super::backend::Backend;
use super::query::QueryOptions;
use crate::charge;
use crate::error::{Error, Result, StatusCode};
use crate::scripts::{Host, Limits, Operation, Reply};
use crate::store::item;
use crate::store::partition_key::PartitionKeyValue;
use crate::store::write::{WriteBatch, WriteKind, WriteResult};

/// Share of the time budget after which operations are no longer accepted, leaving the
/// script the rest to return its progress. Our choice: the service does not say when
/// `isAccepted` turns false.
const ACCEPTING_SHARE: f64 = 0.8;

/// The service's message for a script that writes outside its logical partition.
const OTHER_PARTITION: &str = "Requests originating from scripts cannot reference partition \
                               keys other than the one for which client request was submitted.";

pub(super) struct ScriptHost<'a, 's> {
    engine: &'a Engine,
    batch: &'a mut WriteBatch<'s>,
    key: PartitionKeyValue,
    started: Instant,
    accepting: Duration,
    charge: f64,
}

impl<'a, 's> ScriptHost<'a, 's> {
    pub fn new(
        engine: &'a Engine,
        batch: &'a mut WriteBatch<'s>,
        key: PartitionKeyValue,
        limits: Limits,
    ) -> ScriptHost<'a, 's> {
        ScriptHost {
            engine,
            batch,
            key,
            started: Instant::now(),
            accepting: limits.time.mul_f64(ACCEPTING_SHARE),
            charge: 0.0,
        }
    }

    /// What the script's operations cost so far, failed ones included.
    pub fn charge(&self) -> f64 {
        self.charge
    }

    fn accepting(&self) -> bool {
        self.started.elapsed() < self.accepting && self.charge < charge::SCRIPT_RU_BUDGET
    }

    fn run(&mut self, op: Operation) -> Result<(Value, Map<String, Value>)> {
        match op {
            Operation::Create { link, doc, options } => {
                self.collection(&link)?;
                let doc = self.new_item(doc, &options, true)?;
                self.write(WriteKind::Create, doc, None)
            }
            Operation::Upsert { link, doc, options } => {
                self.collection(&link)?;
                let doc = self.new_item(doc, &options, true)?;
                self.write(WriteKind::Upsert, doc, etag(&options))
            }
            Operation::Replace { link, doc, options } => {
                let id = self.document(&link)?;
                let doc = self.new_item(doc, &options, false)?;
                if item::item_id(&doc).ok() != Some(id.as_str()) {
                    return Err(Error::bad_request(format!(
                        "replaceDocument: the link names item {id:?} but the document's id is \
                         {:?}",
                        item::item_id(&doc).unwrap_or_default()
                    )));
                }
                self.write(WriteKind::Replace, doc, etag(&options))
            }
            Operation::Delete { link, options } => {
                let id = self.document(&link)?;
                let r = self.batch.delete(&id, &self.key, etag(&options))?;
                self.charge += r.request_charge;
                Ok((Value::Object(Map::new()), Map::new()))
            }
            Operation::Read { link, options } => {
                let id = self.document(&link)?;
                let r = self.batch.read(&id, &self.key, etag(&options))?;
                self.charge += r.request_charge;
                let doc = serde_json::from_slice(&r.json)
                    .map_err(|e| Error::internal(format!("corrupt item {id:?}: {e}")))?;
                Ok((doc, Map::new()))
            }
            Operation::Query {
                link,
                query,
                parameters,
                options,
            } => {
                self.collection(&link)?;
                self.query(&query, parameters, &options)
            }
        }
    }

    /// A document a script writes: an object in this logical partition, with an id
    /// generated when it has none (unless `disableAutomaticIdGeneration`).
    fn new_item(
        &self,
        doc: Value,
        options: &Map<String, Value>,
        may_generate: bool,
    ) -> Result<Map<String, Value>> {
        let Value::Object(mut doc) = doc else {
            return Err(Error::bad_request(format!(
                "a document must be a JSON object, not {}",
                crate::error::json_type_name(&doc)
            )));
        };
        let generate = may_generate
            && !options
                .get("disableAutomaticIdGeneration")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        if generate && !doc.contains_key("id") {
            doc.insert("id".into(), super::new_guid().into());
        }
        let def = self.batch.container();
        let key = def.partition_key.extract(&doc)?;
        if key != self.key {
            return Err(Error::bad_request(OTHER_PARTITION));
        }
        Ok(doc)
    }

    fn write(
        &mut self,
        kind: WriteKind,
        doc: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<(Value, Map<String, Value>)> {
        let r: WriteResult = self.batch.write(kind, doc, if_match)?;
        self.charge += r.request_charge;
        let stored = r
            .body
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(Value::Null);
        Ok((stored, Map::new()))
    }

    /// One page of a query in this logical partition (`pageSize` -1: all of it).
    fn query(
        &mut self,
        sql: &str,
        parameters: Vec<(String, Value)>,
        options: &Map<String, Value>,
    ) -> Result<(Value, Map<String, Value>)> {
        let def = self.batch.container().clone();
        let page_size = options
            .get("pageSize")
            .and_then(Value::as_i64)
            .unwrap_or(100);
        let mut opts = QueryOptions {
            params: parameters
                .into_iter()
                .map(|(name, v)| (name.trim_start_matches('@').to_string(), v))
                .collect(),
            partition_key: Some(self.key.to_json()),
            max_items: (page_size > 0).then_some(page_size as usize),
            continuation: options
                .get("continuation")
                .and_then(Value::as_str)
                .map(str::to_string),
            ..QueryOptions::default()
        };
        let mut documents = Vec::new();
        let continuation = loop {
            let page = self.engine.query(&def.database, &def.id, sql, &opts)?;
            self.charge += page.request_charge;
            documents.extend(page.documents.iter().map(|d| d.value().clone()));
            match page.continuation {
                Some(next) if page_size <= 0 => opts.continuation = Some(next),
                other => break other,
            }
        };
        let mut response = Map::new();
        if let Some(token) = continuation {
            response.insert("continuation".into(), token.into());
        }
        Ok((Value::Array(documents), response))
    }

    /// Checks that a collection link names this container: its name-based link or its
    /// `_self` link, with or without slashes around it.
    fn collection(&self, link: &str) -> Result<()> {
        let link = link.trim_matches('/');
        let (self_link, alt) = self.links();
        if link == self_link.trim_matches('/') || link == alt {
            return Ok(());
        }
        Err(Error::bad_request(format!(
            "{link:?} is not the link of this collection; use \
             getContext().getCollection().getSelfLink() or {alt:?}"
        )))
    }

    /// The id of the item a document link names: `<collection>/docs/<id>` by name, or by
    /// `_rid` after the collection's `_self` link.
    fn document(&self, link: &str) -> Result<String> {
        let link = link.trim_matches('/');
        let (self_link, alt) = self.links();
        if let Some(id) = link
            .strip_prefix(alt.as_str())
            .and_then(|rest| rest.strip_prefix("/docs/"))
        {
            return Ok(id.to_string());
        }
        if let Some(rid) = link
            .strip_prefix(self_link.trim_matches('/'))
            .and_then(|rest| rest.strip_prefix("/docs/"))
        {
            let number = document_number(rid).ok_or_else(|| {
                Error::bad_request(format!("{rid:?} is not a document resource id"))
            })?;
            return self
                .batch
                .id_of_document(&self.key, number)?
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "no item with resource id {rid:?} in this logical partition"
                    ))
                    .with_charge(charge::NOT_FOUND_READ)
                });
        }
        Err(Error::bad_request(format!(
            "{link:?} is not a document link of this collection; use \
             `${{collectionLink}}/docs/${{id}}` or the item's _self"
        )))
    }

    fn links(&self) -> (String, String) {
        let def = self.batch.container();
        let rids = item::rids(def, 0);
        (
            format!("dbs/{}/colls/{}/", rids.database, rids.container),
            format!("dbs/{}/colls/{}", def.database, def.id),
        )
    }
}

impl Host for ScriptHost<'_, '_> {
    fn perform(&mut self, op: Operation) -> Reply {
        if !self.accepting() {
            return Reply::NotAccepted;
        }
        match self.run(op) {
            Ok((result, options)) => Reply::Done { result, options },
            Err(e) => {
                // A throttled or failing store fails the operation like any error; its
                // charge counts either way.
                if !matches!(e.status, StatusCode::TooManyRequests) {
                    self.charge += e.request_charge;
                }
                Reply::Failed(e)
            }
        }
    }
}

/// `If-Match` for a write: the `etag` option (the service's `options.etag` /
/// `accessCondition` with type IfMatch).
fn etag(options: &Map<String, Value>) -> Option<&str> {
    options.get("etag").and_then(Value::as_str).or_else(|| {
        options
            .get("accessCondition")
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("IfMatch"))
            .and_then(|c| c.get("condition"))
            .and_then(Value::as_str)
    })
}

/// The document number at the end of a document `_rid` (the last 8 of its 16 bytes).
fn document_number(rid: &str) -> Option<u64> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(rid.replace('-', "/"))
        .ok()?;
    let tail: [u8; 8] = bytes.get(8..16)?.try_into().ok()?;
    Some(u64::from_le_bytes(tail) & 0x0FFF_FFFF_FFFF_FFFF)
}
