//! A [`Val`] written as JSON text directly: the bytes `serde_json` writes for
//! [`Val::to_json`]'s value, without building that value first (a projection's results are
//! small objects, and building each one's `serde_json::Value` cost more than writing it).
//!
//! What `to_json` drops, this leaves out: undefined members and elements, and numbers JSON
//! can't hold (the query fails on those before a result is written: [`Val::has_non_finite`]).
//! Whole numbers print as integers ([`number_json`]). An object that names a member twice
//! goes through `to_json`, whose map keeps the first place and the last value.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::value::{Members, Val, number_json};

impl Serialize for Val {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Val::Undefined => s.serialize_unit(),
            Val::Null => s.serialize_unit(),
            Val::Bool(b) => s.serialize_bool(*b),
            Val::Num(n) => match number_json(*n) {
                Some(number) => number.serialize(s),
                None => s.serialize_unit(),
            },
            Val::Str(text) => s.serialize_str(text),
            Val::Arr(items) => {
                let mut seq = s.serialize_seq(None)?;
                for item in items.iter().filter(|v| written(v)) {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Val::Obj(members) if names_twice(members) => self.to_json().serialize(s),
            Val::Obj(members) => {
                let mut map = s.serialize_map(None)?;
                for (name, value) in members.iter().filter(|(_, v)| written(v)) {
                    map.serialize_entry(&**name, value)?;
                }
                map.end()
            }
        }
    }
}

/// Whether `to_json` keeps the value as a member or element.
fn written(v: &Val) -> bool {
    match v {
        Val::Undefined => false,
        Val::Num(n) => n.is_finite(),
        _ => true,
    }
}

/// Whether two members that are written share a name.
fn names_twice(members: &Members) -> bool {
    let names = members.iter().filter(|(_, v)| written(v)).map(|(n, _)| n);
    if members.len() <= 16 {
        let names: Vec<&std::sync::Arc<str>> = names.collect();
        return names
            .iter()
            .enumerate()
            .any(|(i, a)| names[i + 1..].contains(a));
    }
    let mut names: Vec<&str> = names.map(|n| &**n).collect();
    names.sort_unstable();
    names.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn obj(members: Vec<(&str, Val)>) -> Val {
        Val::obj(
            members
                .into_iter()
                .map(|(k, v)| (Arc::from(k), v))
                .collect(),
        )
    }

    /// The bytes written directly, against those of `to_json`'s value.
    fn same(v: &Val) {
        let direct = serde_json::to_vec(v).unwrap();
        let through = serde_json::to_vec(&v.to_json().unwrap()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&direct),
            String::from_utf8_lossy(&through)
        );
    }

    #[test]
    fn values_are_written_as_to_json_builds_them() {
        let many: Vec<(String, Val)> = (0..40)
            .map(|i| (format!("m{}", i % 37), Val::Num(f64::from(i))))
            .collect();
        let cases = [
            Val::Null,
            Val::Bool(true),
            Val::Num(5.0),
            Val::Num(-0.0),
            Val::Num(1.5e300),
            Val::Num(0.1),
            Val::Num(-12.0),
            Val::Num(9.3e18),
            Val::str("a \"quoted\"\n\u{202e} ü 😀"),
            Val::arr(vec![
                Val::Undefined,
                Val::Num(1.0),
                Val::Num(f64::NAN),
                Val::Null,
            ]),
            obj(vec![
                ("a", Val::Num(1.0)),
                ("gone", Val::Undefined),
                ("inf", Val::Num(f64::INFINITY)),
                ("o", obj(vec![("x", Val::arr(vec![]))])),
                ("e", obj(vec![])),
            ]),
            // Named twice: the first place, the last value.
            obj(vec![
                ("a", Val::Num(1.0)),
                ("b", Val::Null),
                ("a", Val::Num(2.0)),
            ]),
            // Named twice, once undefined: only the written one counts.
            obj(vec![
                ("a", Val::Undefined),
                ("b", Val::Null),
                ("a", Val::Num(2.0)),
            ]),
            Val::obj(
                many.iter()
                    .map(|(k, v)| (Arc::from(k.as_str()), v.clone()))
                    .collect(),
            ),
            Val::obj(
                many.iter()
                    .take(36)
                    .map(|(k, v)| (Arc::from(k.as_str()), v.clone()))
                    .collect(),
            ),
        ];
        for v in &cases {
            same(v);
        }
    }

    #[test]
    fn stored_documents_are_written_as_to_json_builds_them() {
        let docs = [
            r#"{"id":"o1","n":[1,2.5,-3,1e2,{"k":null}],"s":"x\u0001y","t":true,"o":{"a":{"b":[[]]}}}"#,
            r#"{"big":18446744073709551615,"small":-9223372036854775808,"f":3.141592653589793}"#,
        ];
        for doc in docs {
            let value: serde_json::Value = serde_json::from_str(doc).unwrap();
            same(&Val::from_json(&value));
        }
    }
}
