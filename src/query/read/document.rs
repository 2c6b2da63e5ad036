//! One query result as compact JSON text, parsed into a [`Value`] only when a consumer looks
//! inside it.
//!
//! A `SELECT *` result is the stored item, whose bytes are already the compact JSON the
//! result would serialize to (items are stored as `serde_json` writes them), so the result
//! keeps those bytes and skips building and dropping a `Value` per document (several µs for
//! a 1 KB item). Reading a document (`doc["id"]`, `doc.as_u64()`, printing it) parses it
//! once, on first use; serializing it writes exactly what the parsed value would.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::query::eval::value::Val;

/// A query result: compact JSON text plus its value, parsed lazily.
#[derive(Clone)]
pub struct Document {
    /// Compact JSON (UTF-8: stored items are written by `serde_json`).
    json: Arc<[u8]>,
    value: OnceLock<Value>,
}

impl Document {
    /// A stored item's JSON as it is (shared, not copied).
    pub fn from_stored(json: Arc<[u8]>) -> Document {
        Document {
            json,
            value: OnceLock::new(),
        }
    }

    /// A computed result (a projection, an aggregate).
    pub fn from_value(value: Value) -> Document {
        let json = serde_json::to_vec(&value).unwrap_or_default();
        Document {
            json: Arc::from(json),
            value: OnceLock::from(value),
        }
    }

    /// A computed value as the result a page returns: `None` for undefined (it is no
    /// result), and a 400 for a value holding NaN or an infinity, which the service can't
    /// write as JSON ("SQRT(-25) gives this error", sqrt.md) and so fails the query rather
    /// than drop the row.
    pub fn from_result(v: &Val) -> Result<Option<Document>> {
        if v.has_non_finite() {
            return Err(Error::bad_request(
                "a result holds a number JSON can't represent (NaN or Infinity, as from \
                 SQRT(-25), LOG(0) or 1/0); guard the expression with IS_FINITE_NUMBER",
            ));
        }
        if v.is_undefined() {
            return Ok(None);
        }
        // Written straight from the value; the `Value` is parsed back only if asked for.
        let json = serde_json::to_vec(v)
            .map_err(|e| Error::internal(format!("a result could not be written: {e}")))?;
        Ok(Some(Document {
            json: Arc::from(json),
            value: OnceLock::new(),
        }))
    }

    /// The compact JSON text.
    pub fn json(&self) -> &str {
        std::str::from_utf8(&self.json).unwrap_or_default()
    }

    /// The compact JSON bytes.
    pub fn json_bytes(&self) -> &[u8] {
        &self.json
    }

    /// Size of the compact JSON in bytes (what the output charge counts).
    pub fn json_len(&self) -> usize {
        self.json.len()
    }

    /// The parsed value (parsed on first use).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| parse(&self.json))
    }

    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(v) => v,
            None => parse(&self.json),
        }
    }
}

fn parse(json: &[u8]) -> Value {
    serde_json::from_slice(json).unwrap_or(Value::Null)
}

impl Deref for Document {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl From<Value> for Document {
    fn from(v: Value) -> Document {
        Document::from_value(v)
    }
}

impl From<Document> for Value {
    fn from(d: Document) -> Value {
        d.into_value()
    }
}

impl PartialEq for Document {
    fn eq(&self, other: &Document) -> bool {
        self.json == other.json || self.value() == other.value()
    }
}

impl PartialEq<Value> for Document {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl PartialEq<Document> for Value {
    fn eq(&self, other: &Document) -> bool {
        self == other.value()
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

impl fmt::Display for Document {
    /// Compact JSON, as `Value`'s `Display` writes it (`{:#}` pretty-prints).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            fmt::Display::fmt(self.value(), f)
        } else {
            f.write_str(self.json())
        }
    }
}

impl Serialize for Document {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_text_is_what_the_value_serializes_to() {
        let v = json!({"id": "a", "n": 1.5, "i": 3, "s": "é\n\"", "a": [null, true, -0.0, 1e300], "o": {}});
        let bytes = serde_json::to_vec(&v).unwrap();
        let d = Document::from_stored(Arc::from(bytes.as_slice()));
        assert_eq!(d, v);
        assert_eq!(d.to_string(), v.to_string());
        assert_eq!(format!("{d:#}"), format!("{v:#}"));
        assert_eq!(
            serde_json::to_string_pretty(&d).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        assert_eq!(d["id"], "a");
        let computed = Document::from_value(v.clone());
        assert_eq!(computed.json().as_bytes(), bytes.as_slice());
        assert_eq!(computed.into_value(), v);
    }
}
