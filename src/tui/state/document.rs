//! What the views read from an item's JSON: its partition key value, its body without the
//! system properties, and what changed between two versions. Pure functions of documents,
//! shared by `update` (saving, opening a result) and drawing (the feed's diff).

use serde_json::{Map, Value};

use super::json_tree::SYSTEM_PROPERTIES;

/// A document's partition key value in request form: bare for one path, an array for
/// hierarchical keys, `{}` for a missing (undefined) component.
pub fn pk_of(doc: &Value, paths: &[String]) -> Value {
    let component = |path: &str| {
        path.split('/')
            .filter(|s| !s.is_empty())
            .try_fold(doc, |v, seg| v.get(seg))
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()))
    };
    match paths {
        [one] => component(one),
        many => Value::Array(many.iter().map(|p| component(p)).collect()),
    }
}

/// The document as its author wrote it: without the properties the service adds.
pub fn without_system(doc: &Value) -> Value {
    match doc {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What changed between two documents, one line per top-level property.
pub fn item_diff(before: &Value, after: &Value) -> Vec<String> {
    let empty = Map::new();
    let b = before.as_object().unwrap_or(&empty);
    let a = after.as_object().unwrap_or(&empty);
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 40 {
            format!("{}…", s.chars().take(39).collect::<String>())
        } else {
            s
        }
    };
    let mut out = Vec::new();
    // System properties change on every write; the change that matters is the user's.
    let b: Map<String, Value> = b
        .iter()
        .filter(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let b = &b;
    for (k, old) in b {
        match a.get(k.as_str()) {
            None => out.push(format!("- {k}: {}", short(old))),
            Some(new) if new != old => out.push(format!("~ {k}: {} → {}", short(old), short(new))),
            _ => {}
        }
    }
    for (k, new) in a {
        if !b.contains_key(k) && !SYSTEM_PROPERTIES.contains(&k.as_str()) {
            out.push(format!("+ {k}: {}", short(new)));
        }
    }
    out
}
