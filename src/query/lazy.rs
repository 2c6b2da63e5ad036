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

/// Bit `k` set when byte `i + k` of `b` is `"` or `\`, over the 16 bytes from `i`
/// (`i + 16 <= b.len()`).
#[inline]
fn quotes16(b: &[u8], i: usize) -> u32 {
    let chunk: &[u8; 16] = b[i..i + 16].try_into().unwrap_or(&[0; 16]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: `chunk` is 16 readable bytes (an unaligned load); SSE2 is part of the
        // x86_64 baseline.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let s = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(q, s)) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        mask16(chunk, |c| c == b'"' || c == b'\\')
    }
}

/// Bit `k` set when byte `i + k` of `b` is a quote or a bracket (`[`/`]` become `{`/`}`
/// with the 0x20 bit set; no other byte outside a string does, and control characters never
/// appear unescaped), over the 16 bytes from `i` (`i + 16 <= b.len()`).
#[inline]
fn structure16(b: &[u8], i: usize) -> u32 {
    let chunk: &[u8; 16] = b[i..i + 16].try_into().unwrap_or(&[0; 16]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: as in `quotes16`.
        unsafe {
            let v = _mm_or_si128(_mm_loadu_si128(chunk.as_ptr().cast()), _mm_set1_epi8(0x20));
            let open = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'{' as i8));
            let close = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'}' as i8));
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(open, close), quote)) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        mask16(chunk, |c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn mask16(chunk: &[u8; 16], hit: impl Fn(u8) -> bool) -> u32 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |m, (k, c)| if hit(*c) { m | 1 << k } else { m })
}

/// Where the object or array starting at `i` ends: brackets counted outside strings,
/// sixteen bytes at a time.
fn container_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        let at = loop {
            if i + 16 <= b.len() {
                let m = structure16(b, i);
                if m != 0 {
                    break i + m.trailing_zeros() as usize;
                }
                i += 16;
            } else {
                let n = b
                    .get(i..)?
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

/// The first `"` or `\` at or after `i`, sixteen bytes at a time.
#[inline]
fn quote_or_backslash(b: &[u8], mut i: usize) -> Option<usize> {
    while i + 16 <= b.len() {
        let m = quotes16(b, i);
        if m != 0 {
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 16;
    }
    let n = b.get(i..)?.iter().position(|c| matches!(c, b'"' | b'\\'))?;
    Some(i + n)
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
