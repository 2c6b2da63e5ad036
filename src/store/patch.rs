//! Partial document update ("patch"): the service's operations on JSON-pointer paths,
//! applied to a parsed item. Pure JSON work: reading the item, conditions, etags and the
//! write itself belong to [`super::write::WriteBatch::patch`].
//!
//! Semantics follow partial-document-update.md (and RFC 6902 where it is silent):
//!
//! | op        | object member                        | array element (`/a/3`, `/a/-`)              |
//! |-----------|--------------------------------------|---------------------------------------------|
//! | `add`     | creates or replaces                  | inserts at an index ≤ length; `-` appends   |
//! | `set`     | creates or replaces                  | replaces the element at an index < length   |
//! | `replace` | replaces; 400 if missing             | replaces the element at an index < length   |
//! | `remove`  | removes; 400 if missing              | removes the element, later ones shift back  |
//! | `incr`    | adds to a number; creates if missing | adds to the number at an index < length     |
//! | `move`    | removes `from`, then adds at `path`  | (same; `path` may not lie inside `from`)    |
//!
//! Only the last segment of a path may be missing: the service "cannot create path
//! recursively", so every parent must exist (400 otherwise). `~1` and `~0` in a segment stand
//! for `/` and `~`. `id`, the system properties and the partition key paths cannot be
//! patched. Every error is a 400 naming the operation and the path.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use super::item::SYSTEM_PROPERTIES;
use crate::error::json_type_name;
use crate::error::{Error, Result};

/// Operations in one patch request. partial-document-update.md and its FAQ both say 10;
/// reference/cosmos.md §7.4 still marks the figure **unconfirmed**.
pub const MAX_PATCH_OPERATIONS: usize = 10;

/// One patch operation, in the service's JSON shape (`{"op": "set", "path": "/a", "value": 1}`).
/// Members an operation does not use are ignored, as RFC 6902 asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOperation {
    Add {
        path: String,
        value: Value,
    },
    Set {
        path: String,
        value: Value,
    },
    Replace {
        path: String,
        value: Value,
    },
    Remove {
        path: String,
    },
    /// Adds `value` (a number, possibly negative) to the number at `path`.
    Incr {
        path: String,
        value: Number,
    },
    Move {
        from: String,
        path: String,
    },
}

impl PatchOperation {
    pub fn name(&self) -> &'static str {
        match self {
            PatchOperation::Add { .. } => "add",
            PatchOperation::Set { .. } => "set",
            PatchOperation::Replace { .. } => "replace",
            PatchOperation::Remove { .. } => "remove",
            PatchOperation::Incr { .. } => "incr",
            PatchOperation::Move { .. } => "move",
        }
    }

    /// The target path.
    pub fn path(&self) -> &str {
        match self {
            PatchOperation::Add { path, .. }
            | PatchOperation::Set { path, .. }
            | PatchOperation::Replace { path, .. }
            | PatchOperation::Remove { path }
            | PatchOperation::Incr { path, .. }
            | PatchOperation::Move { path, .. } => path,
        }
    }

    /// Every path the operation touches: the target, and `from` for a move.
    fn paths(&self) -> impl Iterator<Item = &str> {
        let from = match self {
            PatchOperation::Move { from, .. } => Some(from.as_str()),
            _ => None,
        };
        from.into_iter().chain(std::iter::once(self.path()))
    }
}

impl fmt::Display for PatchOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchOperation::Move { from, path } => write!(f, "move {from} to {path}"),
            other => write!(f, "{} {}", other.name(), other.path()),
        }
    }
}

/// Checks a patch request before any item is read: 1 to [`MAX_PATCH_OPERATIONS`]
/// operations, well-formed paths, and none touching `id`, a system property or one of the
/// partition key paths (`/pk`, `/address/zip`; touching a parent of a key path counts too).
pub fn validate(ops: &[PatchOperation], key_paths: &[String]) -> Result<()> {
    if ops.is_empty() {
        return Err(Error::bad_request(
            "the patch has no operations; give 1 to 10, e.g. [{\"op\": \"set\", \"path\": \
             \"/status\", \"value\": \"done\"}]",
        ));
    }
    if ops.len() > MAX_PATCH_OPERATIONS {
        return Err(Error::bad_request(format!(
            "the patch has {} operations; the service allows at most {MAX_PATCH_OPERATIONS} per \
             request — split it into several patches, or into patch operations of one \
             transactional batch",
            ops.len()
        )));
    }
    let keys: Vec<Vec<String>> = key_paths.iter().map(|p| key_segments(p)).collect();
    for (i, op) in ops.iter().enumerate() {
        let fail =
            |message: String| Error::bad_request(format!("patch operation {i} ({op}): {message}"));
        for path in op.paths() {
            let segs = parse_pointer(path).map_err(fail)?;
            protected(&segs, &keys).map_err(fail)?;
        }
        if let PatchOperation::Move { from, path } = op {
            let (from_segs, path_segs) = (
                parse_pointer(from).map_err(fail)?,
                parse_pointer(path).map_err(fail)?,
            );
            if path_segs.len() > from_segs.len() && path_segs.starts_with(&from_segs) {
                return Err(fail(format!(
                    "path {path} lies inside {from}, so the value cannot move into itself"
                )));
            }
        }
    }
    Ok(())
}

/// Segments of a partition key path as the catalog stores it (`/a/"b"`).
fn key_segments(path: &str) -> Vec<String> {
    path.trim_start_matches('/')
        .split('/')
        .map(|s| {
            s.strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .unwrap_or(s)
                .to_string()
        })
        .collect()
}

fn protected(segs: &[String], keys: &[Vec<String>]) -> Result<(), String> {
    let first = segs[0].as_str();
    if segs.len() == 1 && first == "id" {
        return Err(
            "an item's id cannot be patched; create the item under the new id and \
                    delete the old one (in one transactional batch to keep it atomic)"
                .into(),
        );
    }
    if SYSTEM_PROPERTIES.contains(&first) {
        return Err(format!(
            "{first} is a system property the store maintains; it cannot be patched"
        ));
    }
    if let Some(key) = keys.iter().find(|k| k.starts_with(segs)) {
        return Err(format!(
            "the partition key path /{} cannot be patched; an item's partition key never \
             changes — create it anew in its new logical partition and delete the old one",
            key.join("/")
        ));
    }
    Ok(())
}

/// Splits a JSON pointer into its unescaped segments (`~1` → `/`, `~0` → `~`). The empty
/// pointer (the whole item) is not a valid patch path.
pub fn parse_pointer(path: &str) -> Result<Vec<String>, String> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(if path.is_empty() {
            "the path is empty; patch paths are JSON pointers such as /address/city".to_string()
        } else {
            format!("the path {path:?} must start with /, e.g. /{path}")
        });
    };
    rest.split('/').map(|seg| unescape(seg, path)).collect()
}

fn unescape(seg: &str, path: &str) -> Result<String, String> {
    if !seg.contains('~') {
        return Ok(seg.to_string());
    }
    let mut out = String::with_capacity(seg.len());
    let mut chars = seg.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => {
                return Err(format!(
                    "the path {path:?} has a ~ not followed by 0 or 1; write ~0 for ~ and ~1 \
                     for / inside a property name"
                ));
            }
        }
    }
    Ok(out)
}

/// Applies `ops` in order to `doc` (an item object). Call [`validate`] first. On error the
/// document may be partly patched: apply to a copy the caller drops on failure, as the
/// store does.
pub fn apply(doc: &mut Value, ops: &[PatchOperation]) -> Result<()> {
    for (i, op) in ops.iter().enumerate() {
        apply_one(doc, op)
            .map_err(|m| Error::bad_request(format!("patch operation {i} ({op}): {m}")))?;
    }
    Ok(())
}

fn apply_one(doc: &mut Value, op: &PatchOperation) -> Result<(), String> {
    let segs = parse_pointer(op.path())?;
    match op {
        PatchOperation::Add { value, .. } => add(doc, &segs, value.clone()),
        PatchOperation::Set { value, .. } => set(doc, &segs, value.clone(), false),
        PatchOperation::Replace { value, .. } => set(doc, &segs, value.clone(), true),
        PatchOperation::Remove { .. } => remove(doc, &segs).map(|_| ()),
        PatchOperation::Incr { value, .. } => incr(doc, &segs, value),
        PatchOperation::Move { from, .. } => {
            let from_segs = parse_pointer(from)?;
            if from_segs == segs {
                // RFC 6902: moving a value onto itself leaves the document as it was, but
                // the value must exist.
                return target(doc, &segs).map(|_| ());
            }
            let value = remove(doc, &from_segs)?;
            add(doc, &segs, value)
        }
    }
}

/// The container holding the last segment of `segs`, and that segment.
fn parent<'d, 's>(
    doc: &'d mut Value,
    segs: &'s [String],
) -> Result<(&'d mut Value, &'s str), String> {
    let (last, parents) = segs
        .split_last()
        .ok_or_else(|| "the path names no property".to_string())?;
    let mut cur = doc;
    for (depth, seg) in parents.iter().enumerate() {
        let next = match cur {
            Value::Object(m) => m.get_mut(seg),
            Value::Array(a) => array_index(seg).and_then(|i| a.get_mut(i)),
            _ => None,
        };
        cur = next.ok_or_else(|| {
            format!(
                "{} does not exist; a patch creates only the last segment of a path, never \
                 its parents — add /{} first",
                pointer(&segs[..=depth]),
                segs[..=depth].join("/")
            )
        })?;
    }
    Ok((cur, last))
}

/// The value at `segs`, which must exist.
fn target<'d>(doc: &'d mut Value, segs: &[String]) -> Result<&'d mut Value, String> {
    let (parent, last) = parent(doc, segs)?;
    let found = match parent {
        Value::Object(m) => m.get_mut(last),
        Value::Array(a) => {
            let len = a.len();
            let i = existing_index(last, len)?;
            a.get_mut(i)
        }
        other => return Err(not_a_container(segs, other)),
    };
    found.ok_or_else(|| format!("{} does not exist", pointer(segs)))
}

fn add(doc: &mut Value, segs: &[String], value: Value) -> Result<(), String> {
    let (parent, last) = parent(doc, segs)?;
    match parent {
        Value::Object(m) => {
            m.insert(last.to_string(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                array_index(last).ok_or_else(|| bad_index(last))?
            };
            if i > a.len() {
                return Err(format!(
                    "index {i} is past the end of the array (length {}); add at an index up to \
                     its length, or at /- to append",
                    a.len()
                ));
            }
            a.insert(i, value);
            Ok(())
        }
        other => Err(not_a_container(segs, other)),
    }
}

/// `set`, or `replace` when `strict`: replace requires the member to exist; neither appends
/// to an array.
fn set(doc: &mut Value, segs: &[String], value: Value, strict: bool) -> Result<(), String> {
    let (parent, last) = parent(doc, segs)?;
    match parent {
        Value::Object(m) => {
            if strict && !m.contains_key(last) {
                return Err(format!(
                    "{} does not exist; replace only changes existing properties (use set or \
                     add to create one)",
                    pointer(segs)
                ));
            }
            m.insert(last.to_string(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = existing_index(last, a.len())?;
            a[i] = value;
            Ok(())
        }
        other => Err(not_a_container(segs, other)),
    }
}

fn remove(doc: &mut Value, segs: &[String]) -> Result<Value, String> {
    let (parent, last) = parent(doc, segs)?;
    match parent {
        Value::Object(m) => m
            .shift_remove(last)
            .ok_or_else(|| format!("{} does not exist, so it cannot be removed", pointer(segs))),
        Value::Array(a) => {
            let i = existing_index(last, a.len())?;
            Ok(a.remove(i))
        }
        other => Err(not_a_container(segs, other)),
    }
}

fn incr(doc: &mut Value, segs: &[String], by: &Number) -> Result<(), String> {
    let (parent, last) = parent(doc, segs)?;
    let slot = match parent {
        Value::Object(m) => {
            if !m.contains_key(last) {
                // A missing field starts from the increment itself.
                m.insert(last.to_string(), Value::Number(by.clone()));
                return Ok(());
            }
            m.get_mut(last)
        }
        Value::Array(a) => {
            let i = existing_index(last, a.len())?;
            a.get_mut(i)
        }
        other => return Err(not_a_container(segs, other)),
    };
    let slot = slot.ok_or_else(|| format!("{} does not exist", pointer(segs)))?;
    let Value::Number(current) = slot else {
        return Err(format!(
            "{} holds {}, not a number, so it cannot be incremented",
            pointer(segs),
            json_type_name(slot)
        ));
    };
    *slot = Value::Number(add_numbers(current, by)?);
    Ok(())
}

/// Integer + integer stays an integer while it fits in 64 bits; anything else is a double.
fn add_numbers(a: &Number, b: &Number) -> Result<Number, String> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64())
        && let Some(sum) = x.checked_add(y)
    {
        return Ok(Number::from(sum));
    }
    let sum = a.as_f64().unwrap_or(f64::NAN) + b.as_f64().unwrap_or(f64::NAN);
    Number::from_f64(sum).ok_or_else(|| format!("{a} + {b} is out of the range of a JSON number"))
}

/// An array index segment: digits without a leading zero (RFC 6901).
fn array_index(seg: &str) -> Option<usize> {
    let digits = !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit());
    if !digits || (seg.len() > 1 && seg.starts_with('0')) {
        return None;
    }
    seg.parse().ok()
}

/// An index that must name an existing element.
fn existing_index(seg: &str, len: usize) -> Result<usize, String> {
    if seg == "-" {
        return Err("- (the end of the array) names no element; only add can append there".into());
    }
    let i = array_index(seg).ok_or_else(|| bad_index(seg))?;
    if i >= len {
        return Err(format!(
            "index {i} is out of range for an array of length {len}"
        ));
    }
    Ok(i)
}

fn bad_index(seg: &str) -> String {
    format!("{seg:?} is not an array index; use 0, 1, 2, ... or - to append")
}

fn not_a_container(segs: &[String], parent: &Value) -> String {
    format!(
        "{} is {}, which has no members; its parent must be an object or an array",
        pointer(&segs[..segs.len() - 1]),
        json_type_name(parent)
    )
}

/// Segments back to a JSON pointer, for messages.
fn pointer(segs: &[String]) -> String {
    let mut out = String::new();
    for s in segs {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOperation> {
        serde_json::from_value(v).expect("patch operations")
    }

    fn patched(doc: Value, v: Value) -> Result<Value> {
        let ops = ops(v);
        validate(&ops, &["/pk".to_string()])?;
        let mut doc = doc;
        apply(&mut doc, &ops)?;
        Ok(doc)
    }

    fn msg(r: Result<Value>) -> String {
        let e = r.expect_err("must fail");
        assert_eq!(e.status, 400, "{e}");
        e.message
    }

    #[test]
    fn the_documented_example() {
        let doc = json!({"id": "a", "price": 455.95, "inventory": {"quantity": 15},
                         "used": false, "tags": ["r-series"]});
        let out = patched(
            doc,
            json!([
                {"op": "add", "path": "/color", "value": "silver"},
                {"op": "remove", "path": "/used"},
                {"op": "set", "path": "/price", "value": 355.45},
                {"op": "incr", "path": "/inventory/quantity", "value": 10},
                {"op": "add", "path": "/tags/-", "value": "featured-bikes"},
                {"op": "move", "from": "/color", "path": "/inventory/color"}
            ]),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"id": "a", "price": 355.45, "inventory": {"quantity": 25, "color": "silver"},
                   "tags": ["r-series", "featured-bikes"]})
        );
    }

    #[test]
    fn add_inserts_into_arrays_and_set_overwrites() {
        let doc = json!({"a": [1, 2, 3]});
        let add = patched(
            doc.clone(),
            json!([{"op": "add", "path": "/a/1", "value": 9}]),
        )
        .unwrap();
        assert_eq!(add["a"], json!([1, 9, 2, 3]));
        let end = patched(
            doc.clone(),
            json!([{"op": "add", "path": "/a/3", "value": 9}]),
        )
        .unwrap();
        assert_eq!(end["a"], json!([1, 2, 3, 9]), "index == length appends");
        let set = patched(
            doc.clone(),
            json!([{"op": "set", "path": "/a/1", "value": 9}]),
        )
        .unwrap();
        assert_eq!(set["a"], json!([1, 9, 3]));
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "add", "path": "/a/4", "value": 0}])
            ))
            .contains("past the end")
        );
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "set", "path": "/a/3", "value": 0}])
            ))
            .contains("out of range")
        );
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "set", "path": "/a/-", "value": 0}])
            ))
            .contains("only add")
        );
        assert!(
            msg(patched(
                doc,
                json!([{"op": "add", "path": "/a/01", "value": 0}])
            ))
            .contains("not an array index")
        );
    }

    #[test]
    fn replace_and_remove_need_the_target() {
        let doc = json!({"a": 1, "arr": [1]});
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "replace", "path": "/b", "value": 1}])
            ))
            .contains("does not exist")
        );
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "remove", "path": "/b"}])
            ))
            .contains("does not exist")
        );
        assert!(
            msg(patched(
                doc.clone(),
                json!([{"op": "remove", "path": "/arr/1"}])
            ))
            .contains("out of range")
        );
        let out = patched(
            doc,
            json!([{"op": "replace", "path": "/a", "value": [2]},
                                      {"op": "remove", "path": "/arr/0"}]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": [2], "arr": []}));
    }

    #[test]
    fn parents_must_exist() {
        let m = msg(patched(
            json!({}),
            json!([{"op": "set", "path": "/a/b", "value": 1}]),
        ));
        assert!(m.contains("/a does not exist"), "{m}");
        let m = msg(patched(
            json!({"a": 5}),
            json!([{"op": "set", "path": "/a/b", "value": 1}]),
        ));
        assert!(m.contains("a number"), "{m}");
    }

    #[test]
    fn incr_creates_adds_and_rejects_non_numbers() {
        let out = patched(
            json!({"n": 1, "f": 1.5, "arr": [1]}),
            json!([
                {"op": "incr", "path": "/n", "value": 2},
                {"op": "incr", "path": "/f", "value": -0.5},
                {"op": "incr", "path": "/new", "value": 3},
                {"op": "incr", "path": "/arr/0", "value": 1}
            ]),
        )
        .unwrap();
        assert_eq!(out, json!({"n": 3, "f": 1.0, "arr": [2], "new": 3}));
        assert!(out["n"].is_i64(), "integers stay integers");
        let m = msg(patched(
            json!({"s": "x"}),
            json!([{"op": "incr", "path": "/s", "value": 1}]),
        ));
        assert!(m.contains("not a number"), "{m}");
        let bad: Result<Vec<PatchOperation>, _> =
            serde_json::from_value(json!([{"op": "incr", "path": "/n", "value": "1"}]));
        assert!(bad.is_err(), "the increment must be a number");
        let big = patched(
            json!({"n": i64::MAX}),
            json!([{"op": "incr", "path": "/n", "value": 1}]),
        )
        .unwrap();
        assert_eq!(
            big["n"].as_f64(),
            Some(i64::MAX as f64 + 1.0),
            "overflow turns into a double"
        );
    }

    #[test]
    fn move_semantics() {
        let out = patched(
            json!({"a": {"b": 1}, "arr": [1, 2]}),
            json!([
                {"op": "move", "from": "/a/b", "path": "/c"},
                {"op": "move", "from": "/arr/0", "path": "/arr/-"}
            ]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": {}, "arr": [2, 1], "c": 1}));
        assert!(
            msg(patched(
                json!({"a": 1}),
                json!([{"op": "move", "from": "/x", "path": "/y"}])
            ))
            .contains("does not exist")
        );
        assert!(
            msg(patched(
                json!({"a": {}}),
                json!([{"op": "move", "from": "/a", "path": "/a/b"}])
            ))
            .contains("inside")
        );
        let same = patched(
            json!({"a": 1}),
            json!([{"op": "move", "from": "/a", "path": "/a"}]),
        )
        .unwrap();
        assert_eq!(same, json!({"a": 1}));
    }

    #[test]
    fn pointer_escaping() {
        assert_eq!(
            parse_pointer("/a~1b/c~0d/~01").unwrap(),
            vec!["a/b", "c~d", "~1"]
        );
        assert_eq!(parse_pointer("/").unwrap(), vec![""]);
        assert!(parse_pointer("").is_err());
        assert!(parse_pointer("a").unwrap_err().contains("start with /"));
        assert!(parse_pointer("/a~2").unwrap_err().contains("~0"));
        let out = patched(
            json!({"a/b": {"c~d": 1}}),
            json!([{"op": "incr", "path": "/a~1b/c~0d", "value": 1}]),
        )
        .unwrap();
        assert_eq!(out, json!({"a/b": {"c~d": 2}}));
    }

    #[test]
    fn protected_paths_and_limits() {
        for path in ["/id", "/_ts", "/_etag", "/_rid/x", "/pk"] {
            let m = msg(patched(
                json!({}),
                json!([{"op": "set", "path": path, "value": 1}]),
            ));
            assert!(m.contains("cannot be patched"), "{path}: {m}");
        }
        let m = msg(patched(
            json!({}),
            json!([{"op": "move", "from": "/pk", "path": "/x"}]),
        ));
        assert!(m.contains("partition key"), "{m}");
        // A parent of a nested key path counts; a sibling does not.
        let ops = ops(json!([{"op": "set", "path": "/addr", "value": {}}]));
        assert!(validate(&ops, &["/addr/zip".to_string()]).is_err());
        let sibling = self::ops(json!([{"op": "set", "path": "/addr/city", "value": "x"}]));
        assert!(validate(&sibling, &["/addr/zip".to_string()]).is_ok());
        assert!(validate(&self::ops(json!([{"op": "remove", "path": "/idx"}])), &[]).is_ok());
        let eleven: Vec<Value> = (0..11)
            .map(|i| json!({"op": "set", "path": format!("/p{i}"), "value": i}))
            .collect();
        assert!(msg(patched(json!({}), Value::Array(eleven))).contains("at most 10"));
        assert!(msg(patched(json!({}), json!([]))).contains("no operations"));
    }

    #[test]
    fn operations_round_trip_through_json() {
        let v = json!([{"op": "move", "from": "/a", "path": "/b"}, {"op": "incr", "path": "/n", "value": 1}]);
        let parsed = ops(v.clone());
        assert_eq!(serde_json::to_value(&parsed).unwrap(), v);
        let missing: Result<Vec<PatchOperation>, _> =
            serde_json::from_value(json!([{"op": "set", "path": "/a"}]));
        assert!(missing.is_err(), "set needs a value");
        let unknown: Result<Vec<PatchOperation>, _> =
            serde_json::from_value(json!([{"op": "increment", "path": "/a", "value": 1}]));
        assert!(unknown.unwrap_err().to_string().contains("incr"));
    }
}
