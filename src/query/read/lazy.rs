//! A lazy reader of stored items' JSON text: finds the demanded members by scanning the
//! text and skips everything else without building or validating it.
//!
//! Stored items are objects written by `serde_json` (valid UTF-8, no duplicate member
//! names), so a member found once is found for good and the scan stops as soon as every
//! demanded member is found. Records that carry a member directory
//! ([`MemberDirectory`]) are read through it: the demanded top-level members are found by
//! their tags without walking the members before them. Anything this reader does not expect
//! (an escaped member name, malformed text) makes it give up with `None`; callers then take
//! the general path.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::query::eval::value::{Members, Val};
use crate::query::read::demand::Demand;
use crate::query::read::extract::extract;
use crate::store::item::MemberDirectory;
use crate::store::json_text::{key, value_end, ws};

/// A partial demand prepared for scanning: the demanded members with their names shared by
/// every partial object built, and for each what of its value is demanded.
#[derive(Debug)]
pub struct Plan {
    members: Vec<PlanMember>,
}

#[derive(Debug)]
struct PlanMember {
    name: Arc<str>,
    /// [`MemberDirectory::tag`] of the name.
    tag: u8,
    /// What of the member's value is demanded: `None` for all of it.
    child: Option<Plan>,
}

impl Plan {
    /// `children`: the demanded members (see [`Demand::Some`]).
    pub fn new(children: &BTreeMap<String, Demand>) -> Plan {
        Plan {
            members: children
                .iter()
                .map(|(name, d)| PlanMember {
                    name: Arc::from(name.as_str()),
                    tag: MemberDirectory::tag(name.as_bytes()),
                    child: match d {
                        Demand::All => None,
                        Demand::Some(grand) => Some(Plan::new(grand)),
                    },
                })
                .collect(),
        }
    }
}

/// The demanded member `m` from its raw value text.
fn demanded(m: &PlanMember, raw: &[u8]) -> Option<Val> {
    match &m.child {
        Some(grand) => part(raw, grand),
        None => value(raw),
    }
}

/// What `plan` demands of a raw value: an object's demanded members, each element of an
/// array read the same way, and any other value whole, as the serde walk does.
fn part(raw: &[u8], plan: &Plan) -> Option<Val> {
    match raw.first()? {
        b'{' => object(raw, plan),
        b'[' => array(raw, plan),
        _ => value(raw),
    }
}

/// The elements of the array `raw`, each as [`part`] reads it.
fn array(raw: &[u8], plan: &Plan) -> Option<Val> {
    let b = raw;
    let mut items = Vec::new();
    let mut i = ws(b, 1);
    if *b.get(i)? == b']' {
        return Some(Val::arr(items));
    }
    loop {
        let end = value_end(b, i)?;
        items.push(part(&b[i..end], plan)?);
        i = ws(b, end);
        match *b.get(i)? {
            b',' => i = ws(b, i + 1),
            b']' => return Some(Val::arr(items)),
            _ => return None,
        }
    }
}

/// The members of the object `json` that `plan` demands, in document order.
pub fn object(json: &[u8], plan: &Plan) -> Option<Val> {
    let b = json;
    let mut members: Members = Vec::with_capacity(plan.members.len());
    let mut left = plan.members.len();
    let mut i = ws(b, 0);
    if *b.get(i)? != b'{' {
        return None;
    }
    i = ws(b, i + 1);
    if left == 0 || *b.get(i)? == b'}' {
        return Some(Val::obj(members));
    }
    loop {
        let (key, at) = key(b, i)?;
        let end = value_end(b, at)?;
        if let Some(m) = plan
            .members
            .iter()
            .find(|m| m.name.len() == key.len() && m.name.as_bytes() == key)
        {
            members.push((m.name.clone(), demanded(m, &b[at..end])?));
            left -= 1;
            if left == 0 {
                return Some(Val::obj(members));
            }
        }
        i = ws(b, end);
        match *b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some(Val::obj(members)),
            _ => return None,
        }
    }
}

/// [`object`] of a stored item's JSON, through its member directory when it has one.
pub fn stored_object(json: &[u8], directory: Option<&MemberDirectory>, plan: &Plan) -> Option<Val> {
    let Some(dir) = directory else {
        return object(json, plan);
    };
    let mut members: Members = Vec::with_capacity(plan.members.len());
    let mut left = plan.members.len();
    for k in 0..dir.len() {
        if left == 0 {
            break;
        }
        let tag = dir.tag_at(k);
        for m in plan.members.iter().filter(|m| m.tag == tag) {
            if let Some(raw) = dir.value_if_named(k, m.name.as_bytes()) {
                members.push((m.name.clone(), demanded(m, raw)?));
                left -= 1;
                break;
            }
        }
    }
    Some(Val::obj(members))
}

/// Starts loading the demanded top-level members of a stored item into the CPU's cache (see
/// [`super::prefetch`]).
pub fn prefetch(directory: &MemberDirectory, plan: &Plan) {
    for m in &plan.members {
        directory.prefetch_tagged(m.tag);
    }
}

/// [`member`] of a stored item's JSON, through its member directory when it has one.
pub fn stored_member<'a>(
    json: &'a [u8],
    directory: Option<&MemberDirectory<'a>>,
    name: &str,
) -> Option<Option<&'a [u8]>> {
    match directory {
        Some(dir) => Some(dir.get(name.as_bytes())),
        None => member(json, name),
    }
}

/// The raw text of the top-level member `name` of the object `json`: `Some(None)` when the
/// object has no such member.
pub fn member<'a>(json: &'a [u8], name: &str) -> Option<Option<&'a [u8]>> {
    let b = json;
    let mut i = ws(b, 0);
    if *b.get(i)? != b'{' {
        return None;
    }
    i = ws(b, i + 1);
    if *b.get(i)? == b'}' {
        return Some(None);
    }
    loop {
        let (key, at) = key(b, i)?;
        let end = value_end(b, at)?;
        if key == name.as_bytes() {
            return Some(Some(&b[at..end]));
        }
        i = ws(b, end);
        match *b.get(i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Some(None),
            _ => return None,
        }
    }
}

/// The string a raw JSON value holds, when it is a string without escapes.
pub fn plain_str(raw: &[u8]) -> Option<&str> {
    let inner = raw.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if memchr::memchr(b'\\', inner).is_some() {
        return None;
    }
    std::str::from_utf8(inner).ok()
}

/// A whole value from its raw text.
fn value(raw: &[u8]) -> Option<Val> {
    Some(match raw.first()? {
        b'"' => match plain_str(raw) {
            Some(s) => Val::Str(Arc::from(s)),
            None => extract(raw, &Demand::All).ok()?,
        },
        b't' if raw == b"true" => Val::Bool(true),
        b'f' if raw == b"false" => Val::Bool(false),
        b'n' if raw == b"null" => Val::Null,
        // Small non-negative integers are exact as doubles; the rest converts as everywhere
        // else (through serde_json).
        b'0'..=b'9' if raw.len() <= 15 && raw.iter().all(u8::is_ascii_digit) => {
            Val::Num(raw.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64)
        }
        _ => extract(raw, &Demand::All).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn demand(paths: &[&[&str]]) -> BTreeMap<String, Demand> {
        let owned: Vec<Vec<String>> = paths
            .iter()
            .map(|p| p.iter().map(|s| s.to_string()).collect())
            .collect();
        match Demand::Some(BTreeMap::new()).with_paths(owned.iter().map(Vec::as_slice)) {
            Demand::Some(c) => c,
            Demand::All => unreachable!(),
        }
    }

    #[test]
    fn finds_what_the_serde_walk_finds() {
        let docs = [
            json!({"id": "a", "n": 12, "f": -1.5, "big": 123456789012345678u64, "neg": -3,
                   "s": "q\"uo\\te\u{e9}", "t": true, "nil": null,
                   "nested": {"x": [1, {"y": "}]"}], "city": "Oslo"}, "arr": [[], {}],
                   "elems": [{"k": 1, "j": 2}, 3, [{"k": [4]}], {"deep": [{"z": 5, "w": 6}]}, {}],
                   "tail": "x"}),
            json!({"elems": [], "id": "e"}),
            json!({"elems": {"k": "an object", "deep": {"z": [1, {"z": 2}]}}}),
            json!({"nested": "not an object", "id": 1e300}),
            json!({}),
        ];
        let paths: &[&[&str]] = &[
            &["id"],
            &["n"],
            &["f"],
            &["big"],
            &["neg"],
            &["s"],
            &["t"],
            &["nil"],
            &["nested", "city"],
            &["nested", "x"],
            &["arr"],
            &["elems", "k"],
            &["elems", "deep", "z"],
            &["tail"],
            &["missing"],
        ];
        for doc in &docs {
            let bytes = serde_json::to_vec(doc).unwrap();
            let pretty = serde_json::to_vec_pretty(doc).unwrap();
            for n in 1..=paths.len() {
                let d = demand(&paths[..n]);
                let expected = extract(&bytes, &Demand::Some(d.clone())).unwrap();
                for text in [&bytes, &pretty] {
                    let got = object(text, &Plan::new(&d)).expect("lazy read");
                    assert_eq!(got.to_json(), expected.to_json(), "{doc} {n}");
                }
            }
            for name in ["id", "nested", "tail", "missing"] {
                let found = member(&bytes, name).expect("member");
                assert_eq!(
                    found.map(|raw| serde_json::from_slice::<serde_json::Value>(raw).unwrap()),
                    doc.get(name).cloned(),
                    "{name}"
                );
            }
        }
        assert_eq!(plain_str(b"\"Oslo\""), Some("Oslo"));
        assert_eq!(plain_str(b"\"a\\nb\""), None);
        assert!(object(b"{\"a\\u0041\": 1}", &Plan::new(&demand(&[&["aA"]]))).is_none());
        assert!(object(b"{\"a\": ", &Plan::new(&demand(&[&["a"]]))).is_none());
        // Long strings with escapes near and far from their start are skipped whole.
        let long = format!("{}\\\"{}\\\\", "a".repeat(30), "b".repeat(40));
        let text = format!("{{\"s\":\"x\\\"y\",\"t\":\"{long}\",\"u\":1}}");
        let got = object(text.as_bytes(), &Plan::new(&demand(&[&["u"]]))).expect("read");
        assert_eq!(got.get("u"), Val::Num(1.0));
    }

    #[test]
    fn malformed_objects_are_none() {
        let plan = Plan::new(&demand(&[&["b"]]));
        for doc in [
            &b"{\"a\":[1]],\"b\":2}"[..],
            b"{\"a\":{\"x\":\"]\"},\"b\"",
            b"{\"a\":[\"\\\"],\"b\":2}",
            b"{\"a\":[\"x\\",
            b"{\"a\":{\"b\":\"}",
        ] {
            assert!(
                object(doc, &plan).is_none(),
                "{}",
                String::from_utf8_lossy(doc)
            );
            assert!(
                member(doc, "b").is_none(),
                "{}",
                String::from_utf8_lossy(doc)
            );
        }
    }
}
