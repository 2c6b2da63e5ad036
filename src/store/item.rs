//! Stored items: the record layout, system properties, and the service's item rules.
//!
//! A record is a 29-byte header (format version, LSN and range of the last write, expiry
//! second, document number) followed by the item's JSON exactly as a read returns it, system
//! properties included, so a point read hands out stored bytes without re-serializing.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::catalog::ContainerDef;
use super::codec::{Reader, Writer};
use crate::error::{Error, Result};

/// The service's item size limit (UTF-8 length of the JSON).
pub const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;
/// The service's `id` length limit in bytes.
pub const MAX_ID_BYTES: usize = 1023;

const FORMAT: u8 = 1;
pub const HEADER_LEN: usize = 29;

/// System properties the store writes; any client-supplied values are replaced.
pub const SYSTEM_PROPERTIES: [&str; 5] = ["_rid", "_self", "_etag", "_attachments", "_ts"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemHeader {
    /// LSN (in the owning range's sequence) of the write that produced this version.
    pub lsn: u64,
    /// The range whose change feed log holds that write's event (the owner at the time; an
    /// ancestor of today's owner after a split).
    pub range: u32,
    /// Unix second at which the item expires; 0 = never.
    pub expires_at: u64,
    /// Document number, the last 8 bytes of `_rid`; kept across replaces.
    pub doc_number: u64,
}

impl ItemHeader {
    pub fn is_expired(&self, now: i64) -> bool {
        self.expires_at != 0 && now >= 0 && self.expires_at <= now as u64
    }
}

pub fn encode_record(header: &ItemHeader, json: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(HEADER_LEN + json.len());
    w.u8(FORMAT)
        .u64(header.lsn)
        .u32(header.range)
        .u64(header.expires_at)
        .u64(header.doc_number);
    let mut buf = w.into_inner();
    buf.extend_from_slice(json);
    buf
}

/// Splits a stored record into its header and JSON.
pub fn decode_record(bytes: &[u8]) -> Result<(ItemHeader, &[u8])> {
    let corrupt = || Error::internal("corrupt item record in the store");
    let mut r = Reader::new(bytes);
    if r.u8().ok_or_else(corrupt)? != FORMAT {
        return Err(corrupt());
    }
    let header = ItemHeader {
        lsn: r.u64().ok_or_else(corrupt)?,
        range: r.u32().ok_or_else(corrupt)?,
        expires_at: r.u64().ok_or_else(corrupt)?,
        doc_number: r.u64().ok_or_else(corrupt)?,
    };
    Ok((header, r.rest()))
}

/// Parses a request body into a JSON object, with the service's errors.
pub fn parse_body(body: &[u8]) -> Result<Map<String, Value>> {
    if body.len() > MAX_ITEM_BYTES {
        return Err(Error::too_large(format!(
            "the item is {} bytes; the service's limit is {MAX_ITEM_BYTES} bytes (2 MB)",
            body.len()
        )));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(Error::bad_request(format!(
            "an item must be a JSON object, got {}",
            json_type_name(&other)
        ))),
        Err(e) => Err(Error::bad_request(format!(
            "the item is not valid JSON: {e}"
        ))),
    }
}

pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The item's `id`, checked like the service checks it.
pub fn item_id(doc: &Map<String, Value>) -> Result<&str> {
    match doc.get("id") {
        Some(Value::String(id)) => validate_id(id).map(|_| id.as_str()),
        Some(other) => Err(Error::bad_request(format!(
            "the item's id must be a string, got {}",
            json_type_name(other)
        ))),
        None => Err(Error::bad_request(
            "the item has no id; every item needs a string \"id\" property",
        )),
    }
}

pub fn validate_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::bad_request("the item's id is empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(Error::bad_request(format!(
            "the item's id is {} bytes; the limit is {MAX_ID_BYTES} bytes",
            id.len()
        )));
    }
    if id.contains(['/', '\\']) {
        return Err(Error::bad_request(format!(
            "the item's id {id:?} contains / or \\, which the service does not allow in ids"
        )));
    }
    Ok(())
}

/// Expiry second of an item written at `ts`, from its `ttl` and the container's default
/// (reference/cosmos.md §8.1). 0 = never.
pub fn expiry(container: &ContainerDef, doc: &Map<String, Value>, ts: i64) -> Result<u64> {
    let Some(default) = container.default_ttl else {
        return Ok(0); // TTL off: item ttl values are ignored.
    };
    let ttl = match doc.get("ttl") {
        None => default,
        Some(v) => match v.as_i64() {
            Some(n) if n == -1 || (1..=i32::MAX as i64).contains(&n) => n,
            _ => {
                return Err(Error::bad_request(format!(
                    "the item's ttl must be -1 (never expire) or a whole number of seconds from 1 \
                     to 2147483647, got {v}"
                )));
            }
        },
    };
    Ok(if ttl <= 0 {
        0
    } else {
        (ts + ttl).max(0) as u64
    })
}

/// Resource ids in the service's layout: database 4 bytes, container 4 more, document 8 more.
pub struct Rids {
    pub database: String,
    pub container: String,
    pub document: String,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(bytes)
        .replace('/', "-")
}

pub fn database_rid(db_rid: u32) -> String {
    b64(&db_rid.to_le_bytes())
}

pub fn rids(container: &ContainerDef, doc_number: u64) -> Rids {
    let db = container.db_rid.to_le_bytes();
    // Container rids have the high bit of their first byte set.
    let coll = (container.rid | 0x8000_0000).to_be_bytes();
    // The top nibble of the last byte is the resource type: 0 = document.
    let doc = (doc_number & 0x0FFF_FFFF_FFFF_FFFF).to_le_bytes();
    let mut all = Vec::with_capacity(16);
    all.extend_from_slice(&db);
    all.extend_from_slice(&coll);
    let container_rid = b64(&all);
    all.extend_from_slice(&doc);
    Rids {
        database: b64(&db),
        container: container_rid,
        document: b64(&all),
    }
}

/// An opaque etag that changes on every write (container change sequence + timestamp).
pub fn etag(seq: u64, ts: i64) -> String {
    format!(
        "\"{:08x}-{:04x}-0000-0000-{:08x}0000\"",
        seq as u32,
        (seq >> 32) as u16,
        ts as u32
    )
}

/// Replaces system properties with the store's values, appended after the user's properties
/// in the order the service writes them.
pub fn stamp_system_properties(
    doc: &mut Map<String, Value>,
    container: &ContainerDef,
    doc_number: u64,
    etag: &str,
    ts: i64,
) {
    for p in SYSTEM_PROPERTIES {
        // Absent on new items, present when a client writes back what it read; the
        // removal is O(n), so only pay it when needed.
        if doc.contains_key(p) {
            doc.shift_remove(p);
        }
    }
    let rids = rids(container, doc_number);
    doc.insert("_rid".into(), rids.document.clone().into());
    doc.insert(
        "_self".into(),
        format!(
            "dbs/{}/colls/{}/docs/{}/",
            rids.database, rids.container, rids.document
        )
        .into(),
    );
    doc.insert("_etag".into(), etag.into());
    doc.insert("_attachments".into(), "attachments/".into());
    doc.insert("_ts".into(), ts.into());
}

/// Reads `_etag` out of stored JSON without parsing the whole item: the store appends the
/// system properties last, so the last `"_etag":` key is ours (inside a string value the
/// quotes would be escaped).
pub fn stored_etag(json: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"_etag\":";
    let pos = json.windows(KEY.len()).rposition(|w| w == KEY)? + KEY.len();
    serde_json::Deserializer::from_slice(&json[pos..])
        .into_iter::<String>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_round_trip() {
        let h = ItemHeader {
            lsn: 7,
            range: 2,
            expires_at: 0,
            doc_number: 3,
        };
        let rec = encode_record(&h, br#"{"id":"a"}"#);
        let (h2, json) = decode_record(&rec).unwrap();
        assert_eq!(h, h2);
        assert_eq!(json, br#"{"id":"a"}"#);
        assert!(decode_record(&rec[..5]).is_err());
    }

    #[test]
    fn ids_follow_the_service() {
        let ok = json!({"id": "a"});
        assert_eq!(item_id(ok.as_object().unwrap()).unwrap(), "a");
        for bad in [
            json!({}),
            json!({"id": ""}),
            json!({"id": 5}),
            json!({"id": "a/b"}),
            json!({"id": "a\\b"}),
        ] {
            assert_eq!(
                item_id(bad.as_object().unwrap()).unwrap_err().status,
                400,
                "{bad}"
            );
        }
        let long = json!({"id": "x".repeat(1024)});
        assert_eq!(item_id(long.as_object().unwrap()).unwrap_err().status, 400);
    }

    #[test]
    fn body_errors() {
        assert_eq!(parse_body(b"{nope").unwrap_err().status, 400);
        assert_eq!(parse_body(b"[1]").unwrap_err().status, 400);
        let big = format!("{{\"id\":\"a\",\"x\":\"{}\"}}", "y".repeat(MAX_ITEM_BYTES));
        assert_eq!(parse_body(big.as_bytes()).unwrap_err().status, 413);
    }

    #[test]
    fn etags_differ_per_write_and_are_quoted() {
        let a = etag(1, 1_700_000_000);
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert_ne!(a, etag(2, 1_700_000_000));
    }

    #[test]
    fn stored_etag_is_found() {
        assert_eq!(
            stored_etag(br#"{"id":"a","_etag":"\"x\""}"#).as_deref(),
            Some("\"x\"")
        );
        // A user value that mentions the key cannot be mistaken for it.
        let doc = json!({"id": "a", "note": "\"_etag\":\"fake\"", "_etag": "\"real\""});
        let bytes = serde_json::to_vec(&doc).unwrap();
        assert_eq!(stored_etag(&bytes).as_deref(), Some("\"real\""));
    }
}
