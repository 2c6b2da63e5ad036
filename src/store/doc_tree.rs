//! A document read in place: each object's members in their order, strings borrowed from
//! the text unless they hold an escape. An import prepares every document it writes
//! (stamps it, encodes it, computes its index entries) from its text; reading the text this
//! way takes about half of what building a `serde_json::Value` does (no map per object, no
//! copy of each string), which a profile of an import put at an eighth of its time.
//!
//! serde_json's own deserializer reads it and its own serializer writes it, so a document
//! reads and writes exactly as a `Value` would: the same numbers (whole numbers that parsed
//! as doubles are written as integers, as [`item::canonical_numbers`] does), the same
//! escapes, the same refusals. What a `Value` reads differently is not read here, and the
//! caller builds its `Value` instead: an object that names a member twice (a `Value` keeps
//! the last value, at the first one's place), and one whose first member is serde_json's
//! raw-value token.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Number, Value};

use super::index::{Indexed, Term};
use super::indexing::Tree;
use super::item;

/// One node of a document read in place.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// As parsed: a whole number read as a double stays one (the partition key and `ttl`
    /// are read from the document as given), and is written as an integer.
    Number(Number),
    Str(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Members<'a>),
}

/// An object's members, in their order.
pub type Members<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

/// The members of the JSON object `json`, read in place; `None` when it is not one or when
/// an object in it names a member twice. Either way building a `Value` says what it is.
pub fn parse_object(json: &[u8]) -> Option<Members<'_>> {
    match serde_json::from_slice::<Node>(json) {
        Ok(Node::Object(members)) => Some(members),
        _ => None,
    }
}

/// The members `keep` keeps, as a `Value` map: what `prepare::Target` reads of a document.
pub fn object_of(members: &Members, keep: impl Fn(&str) -> bool) -> Map<String, Value> {
    members
        .iter()
        .filter(|(name, _)| keep(name))
        .map(|(name, node)| (name.to_string(), node.to_value()))
        .collect()
}

/// Replaces the system properties of a document's members by `stamped`, after the user's
/// members, as [`item::stamp_system_properties`] does to a `Value`.
pub fn stamp(members: &mut Members, stamped: [(&'static str, Value); 5]) {
    members.retain(|(name, _)| !item::SYSTEM_PROPERTIES.contains(&name.as_ref()));
    members.extend(
        stamped
            .into_iter()
            .map(|(name, value)| (Cow::Borrowed(name), Node::from_value(value))),
    );
}

impl Node<'_> {
    /// The node as a `Value`, numbers as parsed.
    pub fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::Str(s) => Value::String(s.to_string()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members) => Value::Object(object_of(members, |_| true)),
        }
    }

    /// A `Value` as a node.
    pub fn from_value(value: Value) -> Node<'static> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => Node::Number(n),
            Value::String(s) => Node::Str(Cow::Owned(s)),
            Value::Array(items) => Node::Array(items.into_iter().map(Node::from_value).collect()),
            Value::Object(map) => Node::Object(
                map.into_iter()
                    .map(|(name, v)| (Cow::Owned(name), Node::from_value(v)))
                    .collect(),
            ),
        }
    }
}

/// Whether two members of `members` share a name. Most objects have a dozen members or
/// fewer: a name is compared with the earlier ones only when a 128-bit summary of the
/// earlier names says it may be among them. Past [`FEW_MEMBERS`] the summary fills up and
/// that would compare nearly every pair, so the names are sorted instead.
fn names_a_member_twice(members: &Members) -> bool {
    if members.len() > FEW_MEMBERS {
        let mut names: Vec<&str> = members.iter().map(|(name, _)| name.as_ref()).collect();
        names.sort_unstable();
        return names.windows(2).any(|pair| pair[0] == pair[1]);
    }
    let mut seen = 0u128;
    for (i, (name, _)) in members.iter().enumerate() {
        let bytes = name.as_bytes();
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        let mixed = (u64::from_le_bytes(word) ^ (bytes.len() as u64).rotate_left(56))
            .wrapping_add(u64::from(bytes.last().copied().unwrap_or(0)))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bit = 1u128 << (mixed >> 57);
        if seen & bit != 0 && members[..i].iter().any(|(earlier, _)| earlier == name) {
            return true;
        }
        seen |= bit;
    }
    false
}

/// Members up to which [`names_a_member_twice`] keeps a summary rather than sorting.
const FEW_MEMBERS: usize = 24;

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Node<'de>, E> {
        // As a `Value` reads it: JSON text has no infinities, so this is never null.
        Ok(Number::from_f64(f).map_or(Node::Null, Node::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members = Members::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(Name(name)) = map.next_key()? {
            if members.is_empty() && name == RAW_VALUE_TOKEN {
                // A `Value` reads such an object as the JSON text its one member holds.
                return Err(serde::de::Error::custom("serde_json's raw value token"));
            }
            members.push((name, map.next_value()?));
        }
        if names_a_member_twice(&members) {
            return Err(serde::de::Error::custom("an object names a member twice"));
        }
        Ok(Node::Object(members))
    }
}

/// The member name serde_json's `raw_value` feature (on in this crate) gives a meaning of
/// its own when it comes first in an object: a `Value` is then read from the text that
/// member's string holds.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A member name, borrowed from the text unless it holds an escape.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a member name")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Owned(s)))
    }
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => s.serialize_unit(),
            Node::Bool(b) => s.serialize_bool(*b),
            Node::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
                Some(f) => match item::whole_number(f) {
                    Some(whole) => s.serialize_i64(whole),
                    None => n.serialize(s),
                },
                None => n.serialize(s),
            },
            Node::Str(text) => s.serialize_str(text),
            Node::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (name, value) in members {
                    map.serialize_entry(name.as_ref(), value)?;
                }
                map.end()
            }
        }
    }
}

type NodeMembers<'b, 'a> = std::iter::Map<
    std::slice::Iter<'b, (Cow<'a, str>, Node<'a>)>,
    fn(&'b (Cow<'a, str>, Node<'a>)) -> (&'b str, &'b Node<'a>),
>;

impl<'a> Tree for Node<'a> {
    type Members<'b>
        = NodeMembers<'b, 'a>
    where
        Self: 'b;

    fn members(&self) -> Option<NodeMembers<'_, 'a>> {
        fn member<'b, 'a>((name, node): &'b (Cow<'a, str>, Node<'a>)) -> (&'b str, &'b Node<'a>) {
            (name.as_ref(), node)
        }
        match self {
            Node::Object(members) => Some(members.iter().map(member as fn(_) -> _)),
            _ => None,
        }
    }

    fn elements(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    fn is_container(&self) -> bool {
        matches!(self, Node::Array(_) | Node::Object(_))
    }
}

impl Indexed for Node<'_> {
    fn term(&self) -> Term<'_> {
        match self {
            Node::Null => Term::Null,
            Node::Bool(b) => Term::Bool(*b),
            Node::Number(n) => Term::Number(n.as_f64().unwrap_or(f64::NAN)),
            Node::Str(s) => Term::Str(s),
            Node::Array(_) => Term::Array,
            Node::Object(_) => Term::Object,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the `Value` path stores of `text`: parsed, whole doubles made integers, written.
    fn by_value(text: &str) -> (Value, Vec<u8>) {
        let doc = Value::Object(item::parse_body(text.as_bytes()).expect("an object"));
        let mut canonical = doc.clone();
        item::canonical_numbers(&mut canonical);
        (doc, serde_json::to_vec(&canonical).expect("written"))
    }

    #[test]
    fn a_document_reads_and_writes_as_a_value_does() {
        let texts = [
            r#"{"s":"caf\u00e9 \"q\" \\ \/ \n\t\u0001 日本","\u0061b":2,"o":{},"a":[],"d":{"x":[{"y":[null,true,false]}]}}"#,
            r#"{"n":[0,1.0,1e2,-0.0,2.5,-7,18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,0.1e-5,123456789012345678901234567890,1.7976931348623157e308]}"#,
            "{ \"a\" :\n[ 1 , { \"b\" : \"c\" } ] , \"e\" : { } }",
            "{}",
        ];
        for text in texts {
            let members = parse_object(text.as_bytes()).expect("read in place");
            let node = Node::Object(members);
            let (value, written) = by_value(text);
            assert_eq!(
                serde_json::to_vec(&node).expect("written"),
                written,
                "{text}"
            );
            assert_eq!(node.to_value(), value, "{text}: numbers as parsed");
            assert_eq!(Node::from_value(value.clone()).to_value(), value);
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let members = parse_object(br#"{"plain":"text","esc\u0061ped":"a\nb"}"#).expect("read");
        assert!(matches!(
            &members[0],
            (Cow::Borrowed("plain"), Node::Str(Cow::Borrowed("text")))
        ));
        assert!(
            matches!(&members[1], (Cow::Owned(name), Node::Str(Cow::Owned(s)))
            if name == "escaped" && s == "a\nb")
        );
    }

    /// `n` members named `m0`, `m1`, … as object text without its braces.
    fn few(n: usize) -> String {
        let members: Vec<String> = (0..n).map(|i| format!("\"m{i}\":{i}")).collect();
        members.join(",")
    }

    #[test]
    fn what_is_not_an_object_named_once_is_left_to_the_value_path() {
        let many: Vec<String> = (0..300).map(|i| format!("\"m{i}\":{i}")).collect();
        let many = many.join(",");
        for text in [
            "[1]".to_string(),
            "\"s\"".to_string(),
            "{\"a\":1} x".to_string(),
            "{\"a\":".to_string(),
            r#"{"a":1,"a":2}"#.to_string(),
            r#"{"ab":1,"a\u0062":2}"#.to_string(),
            r#"{"o":{"k":1,"k":[2]}}"#.to_string(),
            r#"{"l":[{"k":1},{"j":1,"k":2,"j":3}]}"#.to_string(),
            format!("{{{many},\"m299\":0}}"),
            format!("{{{},\"m0\":0}}", few(24)),
            format!("{{{},\"m3\":0}}", few(23)),
            r#"{"$serde_json::private::RawValue":"{\"a\":1}"}"#.to_string(),
            r#"{"o":{"$serde_json::private::RawValue":"[1]"}}"#.to_string(),
        ] {
            assert_eq!(parse_object(text.as_bytes()), None, "{text}");
        }
        for n in [300, 24, 25, 23] {
            let members = if n == 300 { many.clone() } else { few(n) };
            assert_eq!(
                parse_object(format!("{{{members}}}").as_bytes()).map(|m| m.len()),
                Some(n)
            );
        }
    }

    #[test]
    fn a_value_reads_the_raw_value_token_as_the_text_it_holds() {
        // Why such an object is left to the `Value` path: it is not read as it is written.
        let doc = item::parse_body(br#"{"$serde_json::private::RawValue":"{\"a\":1}"}"#);
        assert_eq!(
            Value::Object(doc.expect("an object")),
            serde_json::json!({"a": 1})
        );
    }

    #[test]
    fn stamping_replaces_system_properties_after_the_users_members() {
        let text = r#"{"_ts":1,"a":1,"_etag":"old","b":2}"#;
        let mut members = parse_object(text.as_bytes()).expect("read");
        let stamped = || {
            [
                ("_rid", Value::from("r")),
                ("_self", Value::from("s")),
                ("_etag", Value::from("e")),
                ("_attachments", Value::from("attachments/")),
                ("_ts", Value::from(9)),
            ]
        };
        stamp(&mut members, stamped());
        let mut doc = item::parse_body(text.as_bytes()).expect("an object");
        for p in item::SYSTEM_PROPERTIES {
            doc.shift_remove(p);
        }
        doc.extend(stamped().map(|(name, value)| (name.to_string(), value)));
        assert_eq!(Node::Object(members).to_value(), Value::Object(doc));
    }
}
