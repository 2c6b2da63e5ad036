//! The container's items as the advisor holds them: each item's JSON and stored size, and
//! an index from (id, current partition key) to the item, so a request the workload
//! addresses with today's key finds the item it means under any candidate key.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::engine::{self, Backend, PartitionKeyDefinition};
use crate::error::{Error, Result};

/// Items read per progress report.
const PROGRESS_EVERY: u64 = 10_000;

pub struct Items {
    pub docs: Vec<Map<String, Value>>,
    /// Stored size of each item (its JSON with system properties), as a container's
    /// statistics count it.
    pub bytes: Vec<u64>,
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
        let mut items = Items {
            docs: Vec::new(),
            bytes: Vec::new(),
            by_address: HashMap::new(),
        };
        engine.export(db, container, None, &mut |json| {
            let doc: Map<String, Value> = serde_json::from_slice(json).map_err(|e| {
                Error::internal(format!("an exported item is not a JSON object: {e}"))
            })?;
            let id = doc
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let pk = engine::item_key(key, &doc)?.value.to_string();
            items.by_address.insert((id, pk), items.docs.len());
            items.docs.push(doc);
            items.bytes.push(json.len() as u64);
            if (items.docs.len() as u64).is_multiple_of(PROGRESS_EVERY) {
                progress(items.docs.len() as u64);
            }
            Ok(())
        })?;
        if items.docs.is_empty() {
            return Err(Error::bad_request(format!(
                "{db}/{container} holds no items: the advisor measures keys on the container's \
                 data, so load or import some first"
            )));
        }
        progress(items.docs.len() as u64);
        Ok(items)
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
