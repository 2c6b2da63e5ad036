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
        Value::Object(o) => Value::Object(user_properties(o)),
        other => other.clone(),
    }
}

/// An object's properties but the system ones.
fn user_properties(o: &Map<String, Value>) -> Map<String, Value> {
    o.iter()
        .filter(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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
    let b = &user_properties(b);
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_partition_key_is_bare_for_one_path_and_an_array_for_several() {
        let doc = json!({"id": "1", "tenant": "t1", "user": {"id": "u9"}});
        assert_eq!(pk_of(&doc, &["/tenant".into()]), json!("t1"));
        assert_eq!(
            pk_of(
                &doc,
                &["/tenant".into(), "/user/id".into(), "/region".into()]
            ),
            json!(["t1", "u9", {}])
        );
    }

    #[test]
    fn a_diff_names_the_authors_changes_not_the_services() {
        let before = json!({"id": "1", "a": 1, "gone": true, "_etag": "x", "_ts": 1});
        let after = json!({"id": "1", "a": 2, "new": "n", "_etag": "y", "_ts": 2});
        assert_eq!(
            item_diff(&before, &after),
            vec!["~ a: 1 → 2", "- gone: true", "+ new: \"n\""]
        );
        assert_eq!(
            without_system(&after),
            json!({"id": "1", "a": 2, "new": "n"})
        );
    }
}
