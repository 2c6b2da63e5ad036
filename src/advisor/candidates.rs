//! Candidate partition keys: how the user writes them, what a container with each would be
//! keyed by, and the key value each gives an item.
//!
//! `--candidates` is a comma-separated list of:
//!
//! | written                     | candidate                                                  |
//! |-----------------------------|------------------------------------------------------------|
//! | `/tenantId`                 | one path                                                   |
//! | `[/tenantId,/userId]`       | a hierarchical key of 2–3 levels                           |
//! | `/deviceId+/date`           | a synthetic key: the values concatenated with `-`          |
//! | `/date suffix 10 buckets`   | a synthetic key: the value and a suffix `.1` to `.10`      |
//!
//! Synthetic keys follow "Create a synthetic partition key" (learn.microsoft.com,
//! synthetic-partition-keys): the application writes them into a property of their own,
//! `partitionKey`, which the container is keyed by. Concatenation joins the values with `-`
//! (`"abc-123-2018"` in the article). The suffix is the article's *precalculated* suffix: a
//! number from 1 to N computed from a property the application knows when it reads, here
//! the item's `id` (its V2 hash, modulo N), so a point read can compute the key while
//! writes of one base value spread over N logical partitions. A path missing from an item
//! contributes empty text to a synthetic value (the article is silent; the key must still
//! be a string).

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::{self, ItemKey, PartitionKeyDefinition};
use crate::error::{Error, Result};

/// The property a synthetic key is written to (the article's name for it).
pub const SYNTHETIC_PROPERTY: &str = "partitionKey";

/// Largest bucket count of a suffix (the article's example uses 400).
const MAX_BUCKETS: u32 = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Candidate {
    /// One path.
    Path { path: String },
    /// 2–3 paths, each a level.
    Hierarchical { paths: Vec<String> },
    /// A synthetic key: the paths' values joined with `-`, then (when `buckets` is set) a
    /// suffix `.1` to `.N` from the item id's hash.
    Synthetic {
        paths: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        buckets: Option<u32>,
    },
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Candidate::Path { path } => f.write_str(path),
            Candidate::Hierarchical { paths } => write!(f, "[{}]", paths.join(",")),
            Candidate::Synthetic { paths, buckets } => {
                f.write_str(&paths.join("+"))?;
                match buckets {
                    Some(n) => write!(f, " suffix {n} buckets"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl Candidate {
    /// The paths a container with this key is created with.
    pub fn container_paths(&self) -> Vec<String> {
        match self {
            Candidate::Path { path } => vec![path.clone()],
            Candidate::Hierarchical { paths } => paths.clone(),
            Candidate::Synthetic { .. } => vec![format!("/{SYNTHETIC_PROPERTY}")],
        }
    }

    /// The item properties the key is made of, level by level.
    pub fn source_paths(&self) -> Vec<String> {
        match self {
            Candidate::Path { path } => vec![path.clone()],
            Candidate::Hierarchical { paths } | Candidate::Synthetic { paths, .. } => paths.clone(),
        }
    }

    pub fn is_synthetic(&self) -> bool {
        matches!(self, Candidate::Synthetic { .. })
    }

    /// The key definition a container with this key has.
    pub fn definition(&self) -> Result<PartitionKeyDefinition> {
        engine::layout::key_definition(self.container_paths())
            .map_err(|e| Error::bad_request(format!("candidate {self}: {}", e.message)))
    }

    /// `doc` as a container keyed by this candidate stores it: with the synthetic property
    /// written, for a synthetic key; unchanged otherwise.
    pub fn prepare(&self, doc: &mut Map<String, Value>) -> Result<()> {
        if let Candidate::Synthetic { paths, buckets } = self {
            let value = synthetic_value(paths, *buckets, doc)?;
            doc.insert(SYNTHETIC_PROPERTY.to_string(), Value::String(value));
        }
        Ok(())
    }

    /// The key of `doc` (as it is before [`Candidate::prepare`]) under this candidate.
    pub fn key_of(
        &self,
        def: &PartitionKeyDefinition,
        doc: &Map<String, Value>,
    ) -> Result<ItemKey> {
        match self {
            Candidate::Synthetic { paths, buckets } => {
                let value = synthetic_value(paths, *buckets, doc)?;
                let mut one = Map::new();
                one.insert(SYNTHETIC_PROPERTY.to_string(), Value::String(value));
                engine::item_key(def, &one)
            }
            _ => engine::item_key(def, doc),
        }
    }

    /// The synthetic key values a query must address when its filter binds the key's
    /// source paths to `bound` (one array of values per alternative, each value in path
    /// order); for a bucketed key whose `id` is not bound too, every bucket of each value.
    pub fn synthetic_keys(&self, bound: &[Value], id: Option<&str>) -> Vec<String> {
        let Candidate::Synthetic { buckets, .. } = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for values in bound {
            let parts: Vec<String> = match values {
                Value::Array(v) => v.iter().map(text_of).collect(),
                other => vec![text_of(other)],
            };
            let base = parts.join("-");
            match (buckets, id) {
                (None, _) => out.push(base),
                (Some(n), Some(id)) => out.push(format!("{base}.{}", bucket(id, *n))),
                (Some(n), None) => out.extend((1..=*n).map(|k| format!("{base}.{k}"))),
            }
        }
        out
    }
}

/// A key in wire form (an array) as a request names it: bare for one level.
pub fn request_form(wire: &Value) -> Value {
    match wire {
        Value::Array(a) if a.len() == 1 => a[0].clone(),
        other => other.clone(),
    }
}

/// The synthetic value of `doc`: the paths' values joined with `-`, and the bucket suffix.
fn synthetic_value(
    paths: &[String],
    buckets: Option<u32>,
    doc: &Map<String, Value>,
) -> Result<String> {
    let parts: Vec<String> = paths
        .iter()
        .map(|p| {
            engine::layout::value_at(doc, p)
                .map(text_of)
                .unwrap_or_default()
        })
        .collect();
    let base = parts.join("-");
    Ok(match buckets {
        None => base,
        Some(n) => {
            let id = doc.get("id").and_then(Value::as_str).ok_or_else(|| {
                Error::bad_request("a bucketed synthetic key needs every item to have a string id")
            })?;
            format!("{base}.{}", bucket(id, n))
        }
    })
}

/// The bucket (1..=n) of an item id: its V2 hash modulo n, so every client computes it.
pub fn bucket(id: &str, n: u32) -> u32 {
    let h = engine::layout::id_hash(id);
    (h % u64::from(n.max(1))) as u32 + 1
}

/// A value as text in a synthetic key: strings bare, anything else as its JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses a `--candidates` list (see the module comment); 400 naming the bad entry.
pub fn parse_list(text: &str) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    for entry in split_top_level(text)? {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let c = parse_one(entry)?;
        c.definition()?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        return Err(Error::bad_request(
            "--candidates names no key; write e.g. /tenantId,[/tenantId,/userId],/a+/b",
        ));
    }
    Ok(out)
}

/// Splits at commas outside brackets.
fn split_top_level(text: &str) -> Result<Vec<&str>> {
    let (mut depth, mut start, mut out) = (0i32, 0usize, Vec::new());
    for (i, ch) in text.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(syntax(
                text,
                "brackets do not nest: a hierarchical key is [/a,/b]",
            ));
        }
    }
    if depth != 0 {
        return Err(syntax(text, "a [ is not closed"));
    }
    out.push(&text[start..]);
    Ok(out)
}

fn parse_one(entry: &str) -> Result<Candidate> {
    if let Some(inner) = entry.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| syntax(entry, "a hierarchical key ends with ]"))?;
        let paths: Vec<String> = inner
            .split(',')
            .map(|p| path(entry, p))
            .collect::<Result<_>>()?;
        if !(2..=3).contains(&paths.len()) {
            return Err(syntax(entry, "a hierarchical key has 2 or 3 levels"));
        }
        return Ok(Candidate::Hierarchical { paths });
    }
    let words: Vec<&str> = entry.split_whitespace().collect();
    let (base, buckets) = match words.as_slice() {
        [base] => (*base, None),
        [base, "suffix", n, "buckets" | "bucket"] => {
            let n: u32 = n
                .parse()
                .ok()
                .filter(|n| (2..=MAX_BUCKETS).contains(n))
                .ok_or_else(|| {
                    syntax(
                        entry,
                        &format!("the bucket count is a number from 2 to {MAX_BUCKETS}"),
                    )
                })?;
            (*base, Some(n))
        }
        _ => {
            return Err(syntax(
                entry,
                "write a path (/a), a hierarchical key ([/a,/b]), a concatenation (/a+/b) or \
                 a suffix (/a suffix 10 buckets)",
            ));
        }
    };
    let paths: Vec<String> = base
        .split('+')
        .map(|p| path(entry, p))
        .collect::<Result<_>>()?;
    Ok(match (paths.as_slice(), buckets) {
        ([one], None) => Candidate::Path { path: one.clone() },
        _ => Candidate::Synthetic { paths, buckets },
    })
}

fn path(entry: &str, p: &str) -> Result<String> {
    let p = p.trim();
    if !p.starts_with('/') || p.len() < 2 {
        return Err(syntax(
            entry,
            &format!("{p:?} is not a path; paths start with / (/tenantId)"),
        ));
    }
    engine::layout::key_definition(vec![p.to_string()]).map_err(|e| syntax(entry, &e.message))?;
    Ok(p.to_string())
}

fn syntax(entry: &str, why: &str) -> Error {
    Error::bad_request(format!("invalid candidate key {entry:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_form() {
        let list = parse_list("/a, [/a,/b], /a+/b, /date suffix 10 buckets, /a").unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list[0], Candidate::Path { path: "/a".into() });
        assert_eq!(list[1].to_string(), "[/a,/b]");
        assert_eq!(list[2].container_paths(), vec!["/partitionKey".to_string()]);
        assert_eq!(list[3].to_string(), "/date suffix 10 buckets");
    }

    #[test]
    fn bad_syntax_says_why() {
        for bad in [
            "a",
            "[/a",
            "[/a]",
            "/a suffix x buckets",
            "/a suffix 1 buckets",
            "/a b",
            "[/a,[/b]]",
            "/a/*",
        ] {
            let e = parse_list(bad).unwrap_err();
            assert_eq!(e.status, 400, "{bad}");
            assert!(
                e.message.contains("invalid candidate key"),
                "{bad}: {}",
                e.message
            );
        }
        assert!(parse_list(" , ").is_err());
    }

    #[test]
    fn synthetic_values_follow_the_article() {
        let c = parse_list("/deviceId+/date").unwrap().remove(0);
        let mut doc = json!({"id": "x", "deviceId": "abc-123", "date": 2018})
            .as_object()
            .unwrap()
            .clone();
        c.prepare(&mut doc).unwrap();
        assert_eq!(doc["partitionKey"], json!("abc-123-2018"));
        let b = parse_list("/date suffix 4 buckets").unwrap().remove(0);
        let mut doc = json!({"id": "x", "date": "2018-08-09"})
            .as_object()
            .unwrap()
            .clone();
        b.prepare(&mut doc).unwrap();
        let v = doc["partitionKey"].as_str().unwrap().to_string();
        assert_eq!(v, format!("2018-08-09.{}", bucket("x", 4)));
        assert_eq!(
            b.synthetic_keys(&[json!(["2018-08-09"])], Some("x")),
            vec![v]
        );
        assert_eq!(b.synthetic_keys(&[json!(["d"])], None).len(), 4);
    }
}
