//! Partition key definitions and partition key values.
//!
//! A container's key is one path (`Hash`) or 2–3 paths (`MultiHash`, hierarchical), always
//! hashed with V2. A value is one component per path; a document that lacks a path has the
//! *undefined* component there, which is a different logical partition from JSON `null`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::epk::{self, Epk, PkComponent};
use crate::error::{Error, Result};

/// The service's limit on a V2 partition key value, in bytes.
pub const MAX_KEY_BYTES: usize = 2048;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionKeyDefinition {
    pub paths: Vec<String>,
    /// `Hash` for one path, `MultiHash` for hierarchical keys.
    pub kind: String,
    pub version: u8,
}

impl PartitionKeyDefinition {
    /// The top-level properties the key's paths start in ([`first_member`]): all of a
    /// document that reading its key needs parsed.
    pub fn first_members(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().filter_map(|p| first_member(p))
    }

    /// Validates paths the way the service does and picks the kind.
    pub fn new(paths: Vec<String>) -> Result<PartitionKeyDefinition> {
        if paths.is_empty() || paths.len() > 3 {
            return Err(Error::bad_request(format!(
                "a partition key has 1 to 3 paths (3 levels for hierarchical keys), got {}",
                paths.len()
            )));
        }
        for path in &paths {
            validate_path(path)?;
        }
        for (i, p) in paths.iter().enumerate() {
            if paths[..i].contains(p) {
                return Err(Error::bad_request(format!(
                    "partition key path {p} is listed twice"
                )));
            }
        }
        let kind = if paths.len() > 1 { "MultiHash" } else { "Hash" };
        Ok(PartitionKeyDefinition {
            paths,
            kind: kind.to_string(),
            version: 2,
        })
    }

    pub fn is_hierarchical(&self) -> bool {
        self.kind == "MultiHash"
    }

    /// Bytes of an EPK for a full key of this container.
    pub fn epk_len(&self) -> usize {
        if self.is_hierarchical() {
            16 * self.paths.len()
        } else {
            16
        }
    }

    /// The key value of a document: one component per path, undefined where the path is
    /// missing. Objects and arrays are not valid key values.
    pub fn extract(&self, doc: &serde_json::Map<String, Value>) -> Result<PartitionKeyValue> {
        let mut components = Vec::with_capacity(self.paths.len());
        for path in &self.paths {
            let value = lookup(doc, path);
            let component = epk::component_from_json(value).map_err(|_| {
                Error::bad_request(format!(
                    "the partition key value at {path} must be a string, number, boolean or \
                     null, not an object or array"
                ))
            })?;
            components.push(component);
        }
        PartitionKeyValue::checked(components)
    }

    /// Parses a partition key value given with a request (`--pk`): a JSON scalar for one
    /// path (or a one-element array), an array of scalars for hierarchical keys. `{}` inside
    /// the array (or alone) means undefined, as the service's wire format writes it.
    pub fn parse_request_value(&self, v: &Value) -> Result<PartitionKeyValue> {
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            other if self.paths.len() == 1 => vec![other],
            _ => {
                return Err(Error::bad_request(format!(
                    "this container has a hierarchical key ({}); give its value as a JSON \
                     array with one element per level",
                    self.paths.join(", ")
                )));
            }
        };
        if items.len() != self.paths.len() {
            return Err(Error::bad_request(format!(
                "the partition key value has {} component(s) but the container's key has {} \
                 path(s): {}",
                items.len(),
                self.paths.len(),
                self.paths.join(", ")
            )));
        }
        let mut components = Vec::with_capacity(items.len());
        for item in items {
            components.push(request_component(item)?);
        }
        PartitionKeyValue::checked(components)
    }

    /// Checks the partition key a write names in its request (the header's wire form)
    /// against the one its document holds: 400 (substatus 1001) when they differ, as the
    /// service refuses it.
    pub fn check_request_value(
        &self,
        doc: &serde_json::Map<String, Value>,
        given: &Value,
    ) -> Result<()> {
        let in_body = self.extract(doc)?;
        if self.parse_request_value(given)? != in_body {
            return Err(Error::bad_request(
                "PartitionKey extracted from the document doesn't match the one specified in \
                 the header",
            )
            .with_substatus(crate::error::substatus::PARTITION_KEY_MISMATCH));
        }
        Ok(())
    }

    /// Parses a prefix of a hierarchical key (fewer components than paths) or a full key.
    pub fn parse_request_prefix(&self, v: &Value) -> Result<Vec<PkComponent>> {
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        if items.is_empty() || items.len() > self.paths.len() {
            return Err(Error::bad_request(format!(
                "a partition key prefix has 1 to {} component(s)",
                self.paths.len()
            )));
        }
        items.into_iter().map(request_component).collect()
    }
}

impl PartitionKeyDefinition {
    /// The key's values as an object of its last path segments (a metadata document's form),
    /// from a value in wire form (a JSON array); undefined levels are left out.
    pub fn metadata_object_from_wire(&self, wire: &Value) -> Value {
        let mut obj = serde_json::Map::new();
        if let Value::Array(items) = wire {
            for (path, v) in self.paths.iter().zip(items) {
                if matches!(v, Value::Object(o) if o.is_empty()) {
                    continue; // undefined
                }
                let name = path.rsplit('/').next().unwrap_or(path).to_string();
                obj.insert(name, v.clone());
            }
        }
        Value::Object(obj)
    }
}

fn request_component(v: &Value) -> Result<PkComponent> {
    match v {
        Value::Object(o) if o.is_empty() => Ok(PkComponent::Undefined),
        other => epk::component_from_json(Some(other)).map_err(|_| {
            Error::bad_request(format!(
                "partition key components are strings, numbers, booleans, null or {{}} for \
                 undefined; got {other}"
            ))
        }),
    }
}

/// Partition key paths: `/name` or nested `/address/zip`; segments of letters, digits and `_`
/// (the service's documented character set), optionally quoted.
fn validate_path(path: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::bad_request(format!(
            "invalid partition key path {path:?}: {why}; write paths like /customerId or /address/zip"
        )))
    };
    let Some(rest) = path.strip_prefix('/') else {
        return bad("it must start with /");
    };
    if rest.is_empty() {
        return bad("it names no property");
    }
    for seg in rest.split('/') {
        let seg = seg
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(seg);
        if seg.is_empty() {
            return bad("it has an empty segment");
        }
        if seg == "*" || seg == "?" || seg == "[]" {
            return bad("wildcards and array segments are not allowed in a partition key path");
        }
        if !seg
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '$')
        {
            return bad("segments may hold letters, digits and _");
        }
    }
    Ok(())
}

/// The property names of a path (`/a/"b c"` → `a`, `b c`), as [`lookup`] reads them.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('/').split('/').map(|seg| {
        seg.strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(seg)
    })
}

/// The top-level property a path starts in: all of a document a reader of that path needs
/// parsed ([`super::item::parse_members`]).
pub fn first_member(path: &str) -> Option<&str> {
    segments(path).next()
}

/// Follows a `/a/b` path into a document; `None` when any step is missing.
pub fn lookup<'v>(doc: &'v serde_json::Map<String, Value>, path: &str) -> Option<&'v Value> {
    let mut segs = segments(path);
    let mut cur = doc.get(segs.next()?)?;
    for seg in segs {
        cur = cur.as_object()?.get(seg)?;
    }
    Some(cur)
}

/// A full partition key value: one component per path of the container's key.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionKeyValue {
    pub components: Vec<PkComponent>,
}

impl PartitionKeyValue {
    /// Enforces the service's 2,048-byte limit on the key's value (the UTF-8 bytes of its
    /// strings, summed over the levels of a hierarchical key).
    fn checked(components: Vec<PkComponent>) -> Result<PartitionKeyValue> {
        let bytes: usize = components
            .iter()
            .map(|c| match c {
                PkComponent::String(s) => s.len(),
                _ => 0,
            })
            .sum();
        if bytes > MAX_KEY_BYTES {
            return Err(Error::bad_request(format!(
                "the partition key value is {bytes} bytes; the limit is {MAX_KEY_BYTES} bytes"
            )));
        }
        Ok(PartitionKeyValue { components })
    }

    pub fn epk(&self, def: &PartitionKeyDefinition) -> Epk {
        epk::effective_partition_key(&self.components, def.is_hierarchical())
    }

    /// The value as the wire format writes it: a JSON array, `{}` for undefined.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.components
                .iter()
                .map(|c| {
                    epk::component_to_json(c).unwrap_or_else(|| Value::Object(Default::default()))
                })
                .collect(),
        )
    }

    /// The compact display form: the bare value for a one-level key, the array otherwise.
    pub fn to_display_json(&self) -> Value {
        match self.to_json() {
            Value::Array(mut a) if a.len() == 1 => a.pop().unwrap_or(Value::Null),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> &serde_json::Map<String, Value> {
        v.as_object().unwrap()
    }

    #[test]
    fn a_path_starts_in_its_first_member() {
        assert_eq!(first_member("/pk"), Some("pk"));
        assert_eq!(first_member("/a/b"), Some("a"));
        assert_eq!(first_member("/\"odd name\"/c"), Some("odd name"));
    }

    fn def(paths: &[&str]) -> PartitionKeyDefinition {
        PartitionKeyDefinition::new(paths.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    #[test]
    fn paths_are_validated() {
        assert!(PartitionKeyDefinition::new(vec!["customerId".into()]).is_err());
        assert!(PartitionKeyDefinition::new(vec!["/a/*".into()]).is_err());
        assert!(PartitionKeyDefinition::new(vec![]).is_err());
        assert!(
            PartitionKeyDefinition::new(vec!["/a".into(), "/b".into(), "/c".into(), "/d".into()])
                .is_err()
        );
        assert_eq!(def(&["/a", "/b"]).kind, "MultiHash");
        assert_eq!(def(&["/address/zip"]).kind, "Hash");
    }

    #[test]
    fn missing_is_undefined_not_null() {
        let d = def(&["/address/zip"]);
        let missing = d.extract(obj(&json!({"id": "1"}))).unwrap();
        let null = d
            .extract(obj(&json!({"id": "1", "address": {"zip": null}})))
            .unwrap();
        assert_eq!(missing.components, vec![PkComponent::Undefined]);
        assert_eq!(null.components, vec![PkComponent::Null]);
        assert_ne!(missing.epk(&d), null.epk(&d));
        assert_eq!(missing.epk(&d).to_hex(), "11622DAA78F835834610ABE56EFF5CB5");
    }

    #[test]
    fn wrong_types_and_long_keys_are_rejected() {
        let d = def(&["/pk"]);
        assert_eq!(
            d.extract(obj(&json!({"pk": {"a": 1}}))).unwrap_err().status,
            400
        );
        assert_eq!(d.extract(obj(&json!({"pk": [1]}))).unwrap_err().status, 400);
        assert_eq!(
            d.extract(obj(&json!({"pk": "x".repeat(3000)})))
                .unwrap_err()
                .status,
            400
        );
    }

    #[test]
    fn request_values() {
        let d = def(&["/pk"]);
        assert_eq!(
            d.parse_request_value(&json!("a")).unwrap().components,
            vec![PkComponent::String("a".into())]
        );
        assert_eq!(
            d.parse_request_value(&json!(["a"])).unwrap().components,
            vec![PkComponent::String("a".into())]
        );
        assert_eq!(
            d.parse_request_value(&json!({})).unwrap().components,
            vec![PkComponent::Undefined]
        );
        let h = def(&["/a", "/b"]);
        assert!(h.parse_request_value(&json!("x")).is_err());
        assert!(h.parse_request_value(&json!(["x"])).is_err());
        assert_eq!(
            h.parse_request_value(&json!(["x", 1]))
                .unwrap()
                .components
                .len(),
            2
        );
        assert_eq!(h.parse_request_prefix(&json!(["x"])).unwrap().len(), 1);
    }
}
