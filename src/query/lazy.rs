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

/// The members of the object `json` that `children` demands, in document order.
pub fn object(json: &[u8], children: &BTreeMap<String, Demand>) -> Option<Val> {
    let mut r = Reader { b: json, i: 0 };
    let mut members: Members = Vec::with_capacity(children.len());
    let mut left = children.len();
    r.expect(b'{')?;
    if left == 0 {
        return Some(Val::obj(members));
    }
    r.ws();
    if r.peek()? == b'}' {
        return Some(Val::obj(members));
    }
    loop {
        let key = r.key()?;
        match children.iter().find(|(name, _)| name.as_bytes() == key) {
            Some((name, child)) => {
                let raw = r.value()?;
                let v = match child {
                    Demand::Some(grand) if raw.first() == Some(&b'{') => object(raw, grand)?,
                    // A path through a non-object keeps the value whole, as the serde walk
                    // does.
                    _ => value(raw)?,
                };
                members.push((Arc::from(name.as_str()), v));
                left -= 1;
                if left == 0 {
                    return Some(Val::obj(members));
                }
            }
            None => r.skip()?,
        }
        if !r.next_member()? {
            return Some(Val::obj(members));
        }
    }
}

/// The raw text of the top-level member `name` of the object `json`: `Some(None)` when the
/// object has no such member.
pub fn member<'a>(json: &'a [u8], name: &str) -> Option<Option<&'a [u8]>> {
    let mut r = Reader { b: json, i: 0 };
    r.expect(b'{')?;
    r.ws();
    if r.peek()? == b'}' {
        return Some(None);
    }
    loop {
        let key = r.key()?;
        if key == name.as_bytes() {
            return Some(Some(r.value()?));
        }
        r.skip()?;
        if !r.next_member()? {
            return Some(None);
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

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// After an opening quote: moves past the closing one.
    fn string(&mut self) -> Option<()> {
        loop {
            let at = self.i + memchr::memchr2(b'"', b'\\', self.b.get(self.i..)?)?;
            if self.b[at] == b'"' {
                self.i = at + 1;
                return Some(());
            }
            self.i = at + 2;
        }
    }

    /// A member name (without escapes) and its colon.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.i;
        let end = start + memchr::memchr2(b'"', b'\\', self.b.get(start..)?)?;
        if self.b[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        self.expect(b':')?;
        Some(&self.b[start..end])
    }

    /// The raw text of the value that starts here.
    fn value(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        self.skip()?;
        Some(&self.b[start..self.i])
    }

    /// Moves past one value.
    fn skip(&mut self) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => {
                self.i += 1;
                self.string()
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.i += 1;
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                let start = self.i;
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
        }
    }

    /// After a member: whether another follows (`,`) or the object ends (`}`).
    fn next_member(&mut self) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            b'}' => Some(false),
            _ => None,
        }
    }
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
                    let got = object(text, &d).expect("lazy read");
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
        assert!(object(b"{\"a\\u0041\": 1}", &demand(&[&["aA"]])).is_none());
        assert!(object(b"{\"a\": ", &demand(&[&["a"]])).is_none());
    }
}
