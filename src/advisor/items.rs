//! The items the advisor replays the workload on (all the container's items, or a sample
//! of them for a large container: see [`super::sample`]): each item's JSON and stored
//! size, and an index from (id, current partition key) to the item, so a request the
//! workload addresses with today's key finds the item it means under any candidate key.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::engine::{self, Backend, PartitionKeyDefinition};
use crate::error::{Error, Result};

/// Items read per progress report.
const PROGRESS_EVERY: u64 = 10_000;

#[derive(Default)]
pub struct Items {
    pub docs: Vec<Map<String, Value>>,
    /// Stored size of each item (its JSON with system properties), as a container's
    /// statistics count it.
    pub bytes: Vec<u64>,
    /// The workload draws its random items from the first `drawable` items (all of them,
    /// or a sample's uniform part, not the groups added for the draws' parameters).
    pub drawable: usize,
    /// (id, today's key in wire form as JSON text) → index into `docs`.
    by_address: HashMap<(String, String), usize>,
}

impl Items {
    /// Reads every item of `db`/`container`; `progress` gets the count read so far.
    /// 400 when the container is empty: there is nothing to measure.
    pub fn load(
        engine: &dyn Backend,
        db: &str,
        container: &str,
        key: &PartitionKeyDefinition,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Items> {
        let mut items = Items::default();
        engine.export(db, container, None, &mut |json| {
            items.push(parse(json)?, json.len() as u64, key)?;
            if (items.docs.len() as u64).is_multiple_of(PROGRESS_EVERY) {
                progress(items.docs.len() as u64);
            }
            Ok(())
        })?;
        if items.docs.is_empty() {
            return Err(empty(db, container));
        }
        items.drawable = items.len();
        progress(items.docs.len() as u64);
        Ok(items)
    }

    /// Adds an item of `bytes` stored bytes (its key under today's key `key` indexed);
    /// false when an item with its id and key is there already.
    pub fn push(
        &mut self,
        doc: Map<String, Value>,
        bytes: u64,
        key: &PartitionKeyDefinition,
    ) -> Result<bool> {
        let id = doc
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let pk = engine::item_key(key, &doc)?.value.to_string();
        if self.by_address.contains_key(&(id.clone(), pk.clone())) {
            return Ok(false);
        }
        self.by_address.insert((id, pk), self.docs.len());
        self.docs.push(doc);
        self.bytes.push(bytes);
        Ok(true)
    }

    /// The items' stored bytes in all.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The item a request addresses by `id` and today's key `pk` (request form).
    pub fn find(&self, key: &PartitionKeyDefinition, id: &str, pk: &Value) -> Option<usize> {
        let wire = match pk {
            Value::Array(_) => pk.clone(),
            one if key.paths.len() == 1 => Value::Array(vec![one.clone()]),
            other => other.clone(),
        };
        self.by_address
            .get(&(id.to_string(), wire.to_string()))
            .copied()
    }

    /// Whether any item has a value at `path`.
    pub fn any_has(&self, path: &str) -> bool {
        self.docs
            .iter()
            .any(|d| engine::layout::value_at(d, path).is_some())
    }
}

/// An exported item's JSON as an object.
pub fn parse(json: &[u8]) -> Result<Map<String, Value>> {
    serde_json::from_slice(json)
        .map_err(|e| Error::internal(format!("an exported item is not a JSON object: {e}")))
}

/// The error for a container with nothing to measure.
pub fn empty(db: &str, container: &str) -> Error {
    Error::bad_request(format!(
        "{db}/{container} holds no items: the advisor measures keys on the container's data, \
         so load or import some first"
    ))
}

/// An exported item's top-level properties named in `keep` (the rest skipped unparsed):
/// what a scan that reads a few paths of every item needs, at a fraction of a whole parse.
pub fn parse_fields(json: &[u8], keep: &HashSet<String>) -> Result<Map<String, Value>> {
    engine::layout::parse_members(json, |name| keep.contains(name))
        .map_err(|e| Error::internal(format!("an exported item is not a JSON object: {e}")))
}
