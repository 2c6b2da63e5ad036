//! A lazy reader of stored items' JSON text: finds the demanded members by scanning the
//! text and skips everything else without building or validating it.
//!
//! Stored items are objects written by `serde_json` (valid UTF-8, no duplicate member
//! names), so a member found once is found for good and the scan stops as soon as every
//! demanded member is found. Anything this reader does not expect (an escaped member name,
//! malformed text) makes it give up with `None`; callers then take the general path.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::demand::{Demand, extract};
use super::value::{Members, Val};

/// A partial demand prepared for scanning: the demanded members with their names shared by
/// every partial object built, and for each what of its value is demanded.
#[derive(Debug)]
pub struct Plan {
    members: Vec<(Arc<str>, Option<Plan>)>,
}

impl Plan {
    /// `children`: the demanded members (see [`Demand::Some`]).
    pub fn new(children: &BTreeMap<String, Demand>) -> Plan {
        Plan {
            members: children
                .iter()
                .map(|(name, d)| {
                    let child = match d {
                        Demand::All => None,
                        Demand::Some(grand) => Some(Plan::new(grand)),
                    };
                    (Arc::from(name.as_str()), child)
                })
                .collect(),
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
        if let Some((name, child)) = plan
            .members
            .iter()
            .find(|(name, _)| name.len() == key.len() && name.as_bytes() == key)
        {
            let raw = &b[at..end];
            let v = match child {
                Some(grand) if raw[0] == b'{' => object(raw, grand)?,
                // A path through a non-object keeps the value whole, as the serde walk
                // does.
                _ => value(raw)?,
            };
            members.push((name.clone(), v));
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

/// Past any whitespace at `i` (stored items have none; other JSON may).
#[inline]
fn ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// A member name (without escapes) at `i` (its opening quote), and where its value
/// starts.
#[inline]
fn key(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if *b.get(i)? != b'"' {
        return None;
    }
    let end = quote_or_backslash(b, i + 1)?;
    if b[end] != b'"' {
        return None;
    }
    let colon = ws(b, end + 1);
    if *b.get(colon)? != b':' {
        return None;
    }
    Some((&b[i + 1..end], ws(b, colon + 1)))
}

/// Where the value starting at `i` ends.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => Some(closing_quote(b, i + 1)? + 1),
        b'{' | b'[' => container_end(b, i),
        _ => {
            let mut j = i;
            while let Some(c) = b.get(j) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Flags (in the high bit of each byte) the zero bytes of `v`; the lowest flag is the first
/// zero byte (flags above it may be spurious).
#[inline]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Where the object or array starting at `i` ends: brackets counted outside strings, eight
/// bytes at a time.
fn container_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        // The next quote or bracket: `[`/`]` become `{`/`}` with the 0x20 bit set (no other
        // byte outside a string does, and control characters never appear unescaped).
        let at = loop {
            if i + 8 <= b.len() {
                let v = word(b, i) | (LO * 0x20);
                let found = zero_bytes(v ^ (LO * u64::from(b'{')))
                    | zero_bytes(v ^ (LO * u64::from(b'}')))
                    | zero_bytes(v ^ (LO * u64::from(b'"')));
                if found != 0 {
                    break i + found.trailing_zeros() as usize / 8;
                }
                i += 8;
            } else {
                let rest = b.get(i..)?;
                let n = rest
                    .iter()
                    .position(|c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))?;
                break i + n;
            }
        };
        match b[at] {
            b'"' => i = closing_quote(b, at + 1)? + 1,
            b'{' | b'[' => {
                depth += 1;
                i = at + 1;
            }
            _ => {
                depth = depth.checked_sub(1)?;
                i = at + 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
}

/// The index of the quote that closes the string whose text starts at `i`.
fn closing_quote(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let at = quote_or_backslash(b, i)?;
        if b[at] == b'"' {
            return Some(at);
        }
        i = at + 2;
    }
}

/// The first `"` or `\` at or after `i`. Most strings are short: eight bytes at a time in a
/// word for the first few words, then memchr's vector search.
#[inline]
fn quote_or_backslash(b: &[u8], mut i: usize) -> Option<usize> {
    let stop = (i + 64).min(b.len());
    while i + 8 <= stop {
        let v = word(b, i);
        let found =
            zero_bytes(v ^ (LO * u64::from(b'"'))) | zero_bytes(v ^ (LO * u64::from(b'\\')));
        if found != 0 {
            return Some(i + found.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    Some(i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?)
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
                   "tail": "x"}),
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
}
