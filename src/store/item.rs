//! Stored items: the record layout, system properties, and the service's item rules.
//!
//! A record is a 29-byte header (format version, LSN and range of the last write, expiry
//! second, document number), then in format 2 a directory of the JSON's top-level members,
//! then the item's JSON exactly as a read returns it, system properties included, so a point
//! read hands out stored bytes without re-serializing.
//!
//! The directory lets a query read `c.shipTo` without walking the members before it: per
//! member a one-byte tag of its name and the offset of its name in the JSON (u16; items over
//! 64 KB, and JSON that is not compact or has escaped names, are stored as format 1, without
//! a directory, and read by walking the text).

use std::marker::PhantomData;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::catalog::ContainerDef;
use super::codec::{Reader, Writer};
use super::json_text;
use crate::error::json_type_name;
use crate::error::{Error, Result};

/// The service's item size limit (UTF-8 length of the JSON).
pub const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;
/// The service's `id` length limit in bytes.
pub const MAX_ID_BYTES: usize = 1023;

/// Header and JSON.
const FORMAT_PLAIN: u8 = 1;
/// Header, member directory (u16 count, then per member its name's tag and u16 offset),
/// JSON.
const FORMAT_DIRECTORY: u8 = 2;
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
    let members = match json.len() <= usize::from(u16::MAX) {
        true => json_text::compact_members(json),
        false => None,
    };
    let directory_len = members.as_ref().map_or(0, |m| 2 + 3 * m.len());
    let mut w = Writer::with_capacity(HEADER_LEN + directory_len + json.len());
    w.u8(match members {
        Some(_) => FORMAT_DIRECTORY,
        None => FORMAT_PLAIN,
    })
    .u64(header.lsn)
    .u32(header.range)
    .u64(header.expires_at)
    .u64(header.doc_number);
    if let Some(members) = &members {
        // At most one member per 4 bytes of a JSON of at most u16::MAX bytes.
        w.u16(members.len() as u16);
        for (at, name) in members {
            w.u8(MemberDirectory::tag(name)).u16(*at as u16);
        }
    }
    let mut buf = w.into_inner();
    buf.extend_from_slice(json);
    buf
}

/// A stored record, split into its parts.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub header: ItemHeader,
    /// Present in format 2 records.
    pub members: Option<MemberDirectory<'a>>,
    pub json: &'a [u8],
    /// The whole record as stored (what [`Record::decode`] read).
    pub stored: &'a [u8],
}

impl<'a> Record<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<Record<'a>> {
        let corrupt = || Error::corrupt("item record in the store");
        let mut r = Reader::new(bytes);
        let format = r.u8().ok_or_else(corrupt)?;
        let header = ItemHeader {
            lsn: r.u64().ok_or_else(corrupt)?,
            range: r.u32().ok_or_else(corrupt)?,
            expires_at: r.u64().ok_or_else(corrupt)?,
            doc_number: r.u64().ok_or_else(corrupt)?,
        };
        let members = match format {
            FORMAT_PLAIN => None,
            FORMAT_DIRECTORY => {
                let n = usize::from(r.u16().ok_or_else(corrupt)?);
                let entries = r.take(3 * n).ok_or_else(corrupt)?;
                Some(entries)
            }
            _ => return Err(corrupt()),
        };
        let json = r.rest();
        Ok(Record {
            header,
            members: members.map(|entries| MemberDirectory { entries, json }),
            json,
            stored: bytes,
        })
    }
}

/// Splits a stored record into its header and JSON.
pub fn decode_record(bytes: &[u8]) -> Result<(ItemHeader, &[u8])> {
    let r = Record::decode(bytes)?;
    Ok((r.header, r.json))
}

/// The top-level members of a record's JSON, in document order: each one's name tag and the
/// offset of its name. Lookups never panic on a damaged directory; they miss.
#[derive(Debug, Clone, Copy)]
pub struct MemberDirectory<'a> {
    entries: &'a [u8],
    json: &'a [u8],
}

impl<'a> MemberDirectory<'a> {
    /// The one-byte tag of a member name (FNV-1a folded to a byte); part of the stored
    /// format.
    pub fn tag(name: &[u8]) -> u8 {
        let h = name.iter().fold(0x811C_9DC5u32, |h, &c| {
            (h ^ u32::from(c)).wrapping_mul(0x0100_0193)
        });
        (h ^ h >> 8 ^ h >> 16 ^ h >> 24) as u8
    }

    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }

    /// The tag of member `k` (`k < len()`).
    #[inline]
    pub fn tag_at(&self, k: usize) -> u8 {
        self.entries[3 * k]
    }

    fn offset(&self, k: usize) -> usize {
        usize::from(u16::from_le_bytes([
            self.entries[3 * k + 1],
            self.entries[3 * k + 2],
        ]))
    }

    /// The value text of member `k` (`k < len()`) if its name is `name`.
    pub fn value_if_named(&self, k: usize, name: &[u8]) -> Option<&'a [u8]> {
        let at = self.offset(k);
        let name_end = at + 1 + name.len();
        if self.json.get(at + 1..name_end)? != name || self.json.get(name_end)? != &b'"' {
            return None;
        }
        // Compact JSON: the value runs from after the colon to the comma before the next
        // member's name, or to the closing brace.
        let end = match k + 1 < self.len() {
            true => self.offset(k + 1).checked_sub(1)?,
            false => self.json.len().checked_sub(1)?,
        };
        self.json.get(name_end + 2..end).filter(|v| !v.is_empty())
    }

    /// Starts loading the text of the members tagged `tag` into the CPU's cache, without
    /// waiting for it or checking their names (a hint, with no effect on any result).
    #[inline]
    pub fn prefetch_tagged(&self, tag: u8) {
        for k in 0..self.len() {
            if self.tag_at(k) == tag
                && let Some(at) = self.json.get(self.offset(k))
            {
                prefetch(at);
            }
        }
    }

    /// The value text of the member `name`: `None` when there is none.
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        let tag = Self::tag(name);
        (0..self.len())
            .filter(|&k| self.tag_at(k) == tag)
            .find_map(|k| self.value_if_named(k, name))
    }
}

#[inline]
fn prefetch(at: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, and the address is that of a live byte anyway; SSE is
    // part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((at as *const u8).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// A member name, borrowed from the text unless it holds escapes.
#[derive(serde::Deserialize)]
struct Name<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

/// The members of the JSON object `json` that `keep` keeps, parsed; every other member is
/// skipped without being built, so a reader of a few paths of many items (an import
/// ordering a batch by key, the advisor's scan) pays a fraction of a whole parse. A
/// repeated name keeps its last value, as a whole parse does.
pub fn parse_members(
    json: &[u8],
    keep: impl Fn(&str) -> bool,
) -> serde_json::Result<Map<String, Value>> {
    use serde::de::Deserializer;
    serde_json::Deserializer::from_slice(json)
        .deserialize_map(Members::<_, serde::de::IgnoredAny>(keep, PhantomData))
}

/// A JSON object's members that `.0` keeps, built; each other member's value is read as a
/// `Skip` (not built either way).
struct Members<F, Skip>(F, PhantomData<Skip>);

impl<'de, F: Fn(&str) -> bool, Skip: serde::Deserialize<'de>> serde::de::Visitor<'de>
    for Members<F, Skip>
{
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(Name(name)) = map.next_key::<Name>()? {
            if (self.0)(&name) {
                out.insert(name.into_owned(), map.next_value::<Value>()?);
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(out)
    }
}

/// Checks that `body` is an item [`parse_body`] takes, and returns the members `keep`
/// keeps, parsed: every other value is read as a whole parse reads it (numbers in range,
/// strings valid UTF-8, nothing after the object) but not built. An import checks each
/// record this way before it writes any, at about a third of a whole parse's cost. A
/// refused body gets [`parse_body`]'s own error.
pub fn check_body(body: &[u8], keep: impl Fn(&str) -> bool) -> Result<Map<String, Value>> {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

    /// Any JSON value, read whole and dropped.
    struct Checked;

    impl<'de> Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Checked, D::Error> {
            d.deserialize_any(CheckedVisitor)
        }
    }

    struct CheckedVisitor;

    impl<'de> Visitor<'de> for CheckedVisitor {
        type Value = Checked;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_i64<E>(self, _: i64) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_u64<E>(self, _: u64) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_f64<E>(self, _: f64) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_str<E>(self, _: &str) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_unit<E>(self) -> std::result::Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Checked, A::Error> {
            while seq.next_element::<Checked>()?.is_some() {}
            Ok(Checked)
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Checked, A::Error> {
            while map.next_key::<Checked>()?.is_some() {
                map.next_value::<Checked>()?;
            }
            Ok(Checked)
        }
    }

    let checked = (|| {
        if body.len() > MAX_ITEM_BYTES {
            return None;
        }
        let mut de = serde_json::Deserializer::from_slice(body);
        let members = de
            .deserialize_map(Members::<_, Checked>(keep, PhantomData))
            .ok()?;
        de.end().ok()?;
        Some(members)
    })();
    match checked {
        Some(members) => Ok(members),
        // The whole parse says why (or, should it take what the check refused, the check's
        // refusal stands).
        None => Err(parse_body(body)
            .err()
            .unwrap_or_else(|| Error::bad_request("the item is not valid JSON"))),
    }
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

/// The database and container part of a resource id (8 bytes).
fn container_rid_bytes(container: &ContainerDef) -> Vec<u8> {
    let mut all = Vec::with_capacity(16);
    all.extend_from_slice(&container.db_rid.to_le_bytes());
    // Container rids have the high bit of their first byte set.
    all.extend_from_slice(&(container.rid | 0x8000_0000).to_be_bytes());
    all
}

/// The container's `_rid` alone (what continuation tokens are bound to).
pub fn container_rid(container: &ContainerDef) -> String {
    b64(&container_rid_bytes(container))
}

pub fn rids(container: &ContainerDef, doc_number: u64) -> Rids {
    let db = container.db_rid.to_le_bytes();
    // The top nibble of the last byte is the resource type: 0 = document.
    let doc = (doc_number & 0x0FFF_FFFF_FFFF_FFFF).to_le_bytes();
    let mut all = container_rid_bytes(container);
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

/// A double as the integer the service prints it as: a whole number an i64 holds exactly
/// (every whole double below 2^63 is one). `-0` stays a double, as an integer would lose its
/// sign.
pub fn whole_number(f: f64) -> Option<i64> {
    (f.fract() == 0.0
        && f.abs() < 9_223_372_036_854_775_808.0
        && !(f == 0.0 && f.is_sign_negative()))
    .then_some(f as i64)
}

/// Writes every whole number that parsed as a double (`690.00`, `1e2`) as an integer, the way
/// the service's query results print it (the docs show a stored `690.00` as `690`), so a
/// stored item reads the same through `SELECT *` as through any projection.
pub fn canonical_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_f64().filter(|_| n.is_f64()).and_then(whole_number) {
                *v = Value::from(i);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(canonical_numbers),
        Value::Object(o) => o.values_mut().for_each(canonical_numbers),
        _ => {}
    }
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
    for (name, value) in system_properties(container, doc_number, etag, ts) {
        doc.insert(name.into(), value);
    }
}

/// The system properties of item `doc_number` at `etag` and `ts`, named as
/// [`SYSTEM_PROPERTIES`] names them and in that order.
pub fn system_properties(
    container: &ContainerDef,
    doc_number: u64,
    etag: &str,
    ts: i64,
) -> [(&'static str, Value); 5] {
    let rids = rids(container, doc_number);
    let self_link = format!(
        "dbs/{}/colls/{}/docs/{}/",
        rids.database, rids.container, rids.document
    );
    [
        ("_rid", rids.document.into()),
        ("_self", self_link.into()),
        ("_etag", etag.into()),
        ("_attachments", "attachments/".into()),
        ("_ts", ts.into()),
    ]
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
    fn the_members_kept_are_the_ones_a_whole_parse_holds() {
        let wanted = ["id", "pk", "a b"];
        let keep = |name: &str| wanted.contains(&name);
        for json in [
            r#"{"id":"x","pk":"p","other":[1,{"pk":"no"}]}"#,
            r#"{"pk":{"deep":[1,2]},"id":"x"}"#,
            r#"{"id":"first","pk":1,"id":"last"}"#,
            r#"{"\u0069d":"escaped name","p\u006b":true}"#,
            r#"{ "id" : "spaced" , "a b" : null , "pk" : -1.5e3 }"#,
            r#"{"x":"\"id\":\"not a member\"","id":"y"}"#,
            r#"{}"#,
        ] {
            let mut whole: Map<String, Value> = serde_json::from_str(json).unwrap();
            whole.retain(|k, _| keep(k));
            assert_eq!(
                parse_members(json.as_bytes(), keep).ok(),
                Some(whole),
                "{json}"
            );
        }
        for not_an_object in [r#"[1]"#, r#""id""#, r#"{"id":"#, ""] {
            assert!(parse_members(not_an_object.as_bytes(), keep).is_err());
        }
    }

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
    fn the_member_directory_finds_each_top_level_value() {
        let h = ItemHeader {
            lsn: 1,
            range: 0,
            expires_at: 0,
            doc_number: 1,
        };
        let doc = json!({"id": "a", "n": 12, "o": {"x": [1, "},"]}, "s": "q\"", "e": {}, "": null,
                         "日本": [], "t": true});
        let json = serde_json::to_vec(&doc).unwrap();
        let rec = encode_record(&h, &json);
        let r = Record::decode(&rec).unwrap();
        assert_eq!((r.header, r.json), (h, &json[..]));
        let dir = r.members.expect("a compact item has a directory");
        assert_eq!(dir.len(), 8);
        for (name, value) in doc.as_object().unwrap() {
            let raw = dir.get(name.as_bytes()).expect(name);
            assert_eq!(
                serde_json::from_slice::<Value>(raw).unwrap(),
                *value,
                "{name}"
            );
        }
        assert_eq!(dir.get(b"missing"), None);
        assert_eq!(dir.get(b"i"), None);
        assert_eq!(dir.get(b"id\""), None);

        // Text the directory cannot describe is stored without one and reads the same.
        let big = serde_json::to_vec(&json!({"id": "b", "s": "x".repeat(70_000)})).unwrap();
        for plain in [&br#"{"id": "a"}"#[..], br#"{"a\u0041":1}"#, &big] {
            let rec = encode_record(&h, plain);
            let r = Record::decode(&rec).unwrap();
            assert!(r.members.is_none());
            assert_eq!(r.json, plain);
        }

        // A damaged record is an error or a miss, never a panic.
        for cut in 0..rec.len() {
            if let Ok(r) = Record::decode(&rec[..cut])
                && let Some(dir) = r.members
            {
                for name in ["id", "n", "o", "s", "e", "t"] {
                    let _ = dir.get(name.as_bytes());
                }
            }
        }
        let mut bad = rec.clone();
        bad[0] = 9;
        assert!(Record::decode(&bad).is_err());
        let mut bad = rec.clone();
        bad[HEADER_LEN + 3] = 0xFF;
        bad[HEADER_LEN + 4] = 0xFF;
        let dir = Record::decode(&bad).unwrap().members.unwrap();
        assert_eq!(dir.get(b"id"), None);
        assert!(dir.get(b"t").is_some());
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
    fn a_checked_body_is_refused_exactly_when_a_whole_parse_refuses_it() {
        let big = format!("{{\"id\":\"a\",\"x\":\"{}\"}}", "y".repeat(MAX_ITEM_BYTES));
        let mut bad_utf8 = br#"{"id": "a", "skipped": {"s": ""#.to_vec();
        bad_utf8.extend_from_slice(&[0xFF, 0xFE]);
        bad_utf8.extend_from_slice(br#""}}"#);
        let bodies: Vec<&[u8]> = vec![
            br#"{"id": "a", "n": [1, 2.5, -3e10, {"deep": [null, true, "s\u00e9"]}]}"#,
            br#"{"id": "a", "skipped": 1e400}"#,
            br#"{"id": "a", "skipped": [1, 2,]}"#,
            br#"{"id": "a"} trailing"#,
            br#"{"id": "a"}   "#,
            br#"{"id": "a", "skipped": "\q"}"#,
            b"[1]",
            b"{nope",
            b"",
            &bad_utf8,
            big.as_bytes(),
        ];
        for body in bodies {
            let whole = parse_body(body);
            let checked = check_body(body, |name| name == "id");
            match (&whole, &checked) {
                (Ok(doc), Ok(members)) => {
                    assert_eq!(members.get("id"), doc.get("id"));
                    assert_eq!(members.len(), 1, "only the kept member is built");
                }
                (Err(w), Err(c)) => assert_eq!((w.status, &w.message), (c.status, &c.message)),
                _ => panic!(
                    "{:?}: whole parse {:?}, check {:?}",
                    String::from_utf8_lossy(body),
                    whole.map(|_| ()),
                    checked.map(|_| ())
                ),
            }
        }
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
