//! The partition key value of a stored item, as results report it in each range's logical
//! partitions.

use std::cell::OnceCell;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::eval::value::Val;
use crate::query::read::demand;
use crate::query::read::extractor::Extractor;
use crate::store::catalog::ContainerDef;
use crate::store::item::Record;

/// The document's partition key value for display (bare for one level, `{}` if undefined).
fn key_of(doc: &Val, def: &ContainerDef) -> Value {
    let mut parts: Vec<Value> = def
        .partition_key
        .paths
        .iter()
        .map(|p| {
            let v = p
                .trim_start_matches('/')
                .split('/')
                .fold(doc.clone(), |v, seg| v.get(seg.trim_matches('"')));
            v.to_json()
                .unwrap_or_else(|| Value::Object(Default::default()))
        })
        .collect();
    if parts.len() == 1 {
        parts.pop().unwrap_or(Value::Null)
    } else {
        Value::Array(parts)
    }
}

/// Reads [`key_of`] from stored items: straight from the JSON for the common key, one
/// top-level property holding a string; otherwise through an extractor of the key's paths,
/// made the first time it is needed (every query has a reader, and most never need it).
pub(super) struct KeyReader<'d> {
    def: &'d ContainerDef,
    /// The property name of a key with one top-level path.
    top: Option<&'d str>,
    extractor: OnceCell<Extractor>,
}

impl<'d> KeyReader<'d> {
    pub(super) fn new(def: &'d ContainerDef) -> KeyReader<'d> {
        let top = match def.partition_key.paths.as_slice() {
            [path] => Some(path.trim_start_matches('/'))
                .filter(|name| !name.contains('/'))
                .map(|name| name.trim_matches('"')),
            _ => None,
        };
        KeyReader {
            def,
            top,
            extractor: OnceCell::new(),
        }
    }

    fn extractor(&self) -> &Extractor {
        self.extractor.get_or_init(|| {
            let paths: Vec<Vec<String>> = self
                .def
                .partition_key
                .paths
                .iter()
                .map(|p| {
                    p.trim_start_matches('/')
                        .split('/')
                        .map(|s| s.trim_matches('"').to_string())
                        .collect()
                })
                .collect();
            Extractor::new(
                demand::Demand::Some(Default::default())
                    .with_paths(paths.iter().map(Vec::as_slice)),
            )
        })
    }

    pub(super) fn read(&self, record: &Record) -> Result<Value> {
        let (json, directory) = (record.json, record.members.as_ref());
        if let Some(name) = self.top {
            match crate::query::read::lazy::stored_member(json, directory, name) {
                Some(None) => return Ok(Value::Object(Default::default())),
                Some(Some(raw)) => {
                    if let Some(s) = crate::query::read::lazy::plain_str(raw) {
                        return Ok(Value::String(s.to_owned()));
                    }
                }
                None => {}
            }
        }
        let doc = self
            .extractor()
            .extract_stored(json, directory)
            .map_err(|e| Error::internal(format!("corrupt item: {e}")))?;
        Ok(key_of(&doc, self.def))
    }
}
