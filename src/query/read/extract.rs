//! Parsing JSON text into a query value in one serde pass, keeping only what a
//! [`Demand`] names and skipping the rest without allocating.

use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::query::eval::value::{Members, Val};
use crate::query::read::demand::Demand;

/// Deserializes JSON into a [`Val`], keeping only what `demand` asks for.
pub fn extract(json: &[u8], demand: &Demand) -> Result<Val, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let v = Seed(demand).deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

struct Seed<'d>(&'d Demand);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_any(ValVisitor(self.0))
    }
}

struct ValVisitor<'d>(&'d Demand);

impl<'de> Visitor<'de> for ValVisitor<'_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Val, E> {
        Ok(Val::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Val, E> {
        Ok(Val::Num(n as f64))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Val, E> {
        Ok(Val::Num(n as f64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Val, E> {
        Ok(Val::Num(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Val, E> {
        Ok(Val::Str(Arc::from(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        // What is demanded below an array is demanded of each element.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(v) = seq.next_element_seed(Seed(self.0))? {
            items.push(v);
        }
        Ok(Val::arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let mut members: Members = Vec::new();
        match self.0 {
            Demand::All => {
                while let Some(k) = map.next_key::<KeyStr>()? {
                    let v = map.next_value_seed(Seed(&Demand::All))?;
                    members.push((k.0, v));
                }
            }
            Demand::Some(children) => {
                // Keys are compared borrowed; only kept members allocate.
                while let Some(k) = map.next_key::<KeyRef<'de>>()? {
                    match children.get(k.as_str()) {
                        Some(child) => {
                            let v = map.next_value_seed(Seed(child))?;
                            members.push((Arc::from(k.as_str()), v));
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
            }
        }
        Ok(Val::obj(members))
    }
}

/// An object key: borrowed from the input when it has no escapes.
enum KeyRef<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl KeyRef<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyRef::Borrowed(s) => s,
            KeyRef::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for KeyRef<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyRef<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyRef<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<KeyRef<'de>, E> {
                Ok(KeyRef::Borrowed(s))
            }
            fn visit_str<E>(self, s: &str) -> Result<KeyRef<'de>, E> {
                Ok(KeyRef::Owned(s.to_string()))
            }
        }
        d.deserialize_str(V)
    }
}

/// An object key of a member kept whole.
struct KeyStr(Arc<str>);

impl<'de> Deserialize<'de> for KeyStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyStr, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E>(self, s: &str) -> Result<KeyStr, E> {
                Ok(KeyStr(Arc::from(s)))
            }
        }
        d.deserialize_str(V)
    }
}
