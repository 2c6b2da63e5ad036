//! A JSON document as a collapsible tree: the rows to draw, each with its path, so a value
//! or its path can be copied and containers folded.
//!
//! System properties (`_rid`, `_self`, `_etag`, `_attachments`, `_ts`) are listed after the
//! user's properties, set apart, and can be hidden.

use std::collections::HashSet;

use serde_json::Value;

/// The properties the service adds to every item.
pub const SYSTEM_PROPERTIES: &[&str] = &["_rid", "_self", "_etag", "_attachments", "_ts"];

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// What a row shows.
#[derive(Debug, Clone, PartialEq)]
pub enum RowValue {
    /// `{` or `[` of a container, with its size, folded or not.
    Open {
        array: bool,
        len: usize,
        folded: bool,
    },
    /// The closing bracket of an unfolded container.
    Close {
        array: bool,
    },
    Scalar(Value),
    /// The line between user and system properties.
    SystemHeader,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub path: Vec<Step>,
    pub depth: u16,
    pub key: Option<Step>,
    pub value: RowValue,
    pub system: bool,
}

/// The document, its folded paths and the selection.
#[derive(Debug, Clone, Default)]
pub struct JsonTree {
    pub doc: Value,
    pub folded: HashSet<Vec<Step>>,
    pub hide_system: bool,
    pub rows: Vec<Row>,
    pub selected: usize,
    pub offset: usize,
}

impl JsonTree {
    pub fn new(doc: Value) -> JsonTree {
        let mut t = JsonTree {
            doc,
            ..Default::default()
        };
        t.rebuild();
        t
    }

    /// Recomputes the rows after the document, the folds or the system toggle changed.
    pub fn rebuild(&mut self) {
        let mut rows = Vec::new();
        let mut path = Vec::new();
        match &self.doc {
            Value::Object(map) => {
                rows.push(Row {
                    path: Vec::new(),
                    depth: 0,
                    key: None,
                    value: RowValue::Open {
                        array: false,
                        len: map.len(),
                        folded: false,
                    },
                    system: false,
                });
                let (user, system): (Vec<_>, Vec<_>) = map
                    .iter()
                    .partition(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()));
                for (k, v) in user {
                    self.push(&mut rows, &mut path, Step::Key(k.clone()), v, 1, false);
                }
                // Hidden system properties leave no heading over nothing.
                if !system.is_empty() && !self.hide_system {
                    rows.push(Row {
                        path: Vec::new(),
                        depth: 1,
                        key: None,
                        value: RowValue::SystemHeader,
                        system: true,
                    });
                    for (k, v) in system {
                        self.push(&mut rows, &mut path, Step::Key(k.clone()), v, 1, true);
                    }
                }
                rows.push(Row {
                    path: Vec::new(),
                    depth: 0,
                    key: None,
                    value: RowValue::Close { array: false },
                    system: false,
                });
            }
            other => rows.push(Row {
                path: Vec::new(),
                depth: 0,
                key: None,
                value: RowValue::Scalar(other.clone()),
                system: false,
            }),
        }
        self.rows = rows;
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn push(
        &self,
        rows: &mut Vec<Row>,
        path: &mut Vec<Step>,
        key: Step,
        v: &Value,
        depth: u16,
        system: bool,
    ) {
        path.push(key.clone());
        let (array, len) = match v {
            Value::Array(a) => (true, a.len()),
            Value::Object(o) => (false, o.len()),
            _ => {
                rows.push(Row {
                    path: path.clone(),
                    depth,
                    key: Some(key),
                    value: RowValue::Scalar(v.clone()),
                    system,
                });
                path.pop();
                return;
            }
        };
        let folded = self.folded.contains(path.as_slice());
        rows.push(Row {
            path: path.clone(),
            depth,
            key: Some(key),
            value: RowValue::Open { array, len, folded },
            system,
        });
        if !folded {
            match v {
                Value::Array(a) => {
                    for (i, x) in a.iter().enumerate() {
                        self.push(rows, path, Step::Index(i), x, depth + 1, system);
                    }
                }
                Value::Object(o) => {
                    for (k, x) in o {
                        self.push(rows, path, Step::Key(k.clone()), x, depth + 1, system);
                    }
                }
                _ => {}
            }
            rows.push(Row {
                path: path.clone(),
                depth,
                key: None,
                value: RowValue::Close { array },
                system,
            });
        }
        path.pop();
    }

    pub fn selected_row(&self) -> Option<&Row> {
        self.rows.get(self.selected)
    }

    /// Folds or unfolds the container on the selected row (or the one it closes).
    pub fn toggle(&mut self) {
        let Some(row) = self.selected_row() else {
            return;
        };
        if row.path.is_empty() {
            return; // the document itself stays open
        }
        let path = row.path.clone();
        if matches!(row.value, RowValue::Open { .. } | RowValue::Close { .. }) {
            if !self.folded.remove(&path) {
                self.folded.insert(path.clone());
            }
            self.rebuild();
            if let Some(i) = self
                .rows
                .iter()
                .position(|r| r.path == path && matches!(r.value, RowValue::Open { .. }))
            {
                self.selected = i;
            }
        }
    }

    pub fn set_fold(&mut self, fold: bool) {
        let Some(row) = self.selected_row() else {
            return;
        };
        let open = matches!(row.value, RowValue::Open { folded, .. } if folded != fold);
        if open {
            self.toggle();
        } else if fold && !row.path.is_empty() {
            // Folding from inside a container goes to its parent.
            let parent = row.path[..row.path.len() - 1].to_vec();
            if let Some(i) = self.rows.iter().position(|r| {
                r.path == parent && matches!(r.value, RowValue::Open { .. }) && !parent.is_empty()
            }) {
                self.selected = i;
            }
        }
    }

    /// The selected value as JSON text.
    pub fn selected_value(&self) -> Option<String> {
        let row = self.selected_row()?;
        if matches!(row.value, RowValue::SystemHeader) {
            return None;
        }
        let v = lookup(&self.doc, &row.path)?;
        match v {
            Value::String(s) => Some(s.clone()),
            other => serde_json::to_string_pretty(other).ok(),
        }
    }

    /// The selected value's path as a query expression (`c.addresses[0].city`).
    pub fn selected_path(&self) -> Option<String> {
        let row = self.selected_row()?;
        if matches!(row.value, RowValue::SystemHeader) {
            return None;
        }
        Some(query_path(&row.path))
    }
}

/// The value at `path`.
pub fn lookup<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, step| match step {
        Step::Key(k) => v.get(k),
        Step::Index(i) => v.get(i),
    })
}

/// `c.a.b[0]["odd key"]`, the way a query names the value.
pub fn query_path(path: &[Step]) -> String {
    let mut out = String::from("c");
    for step in path {
        match step {
            Step::Key(k) if is_identifier(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Key(k) => {
                out.push('[');
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(']');
            }
            Step::Index(i) => {
                out.push_str(&format!("[{i}]"));
            }
        }
    }
    out
}

fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"id": "1", "a": {"b": [1, {"c": true}]}, "odd key": 2, "_rid": "x", "_ts": 5})
    }

    #[test]
    fn rows_put_system_properties_last() {
        let t = JsonTree::new(doc());
        let keys: Vec<String> = t
            .rows
            .iter()
            .filter_map(|r| match (&r.key, &r.value) {
                (Some(Step::Key(k)), _) => Some(k.clone()),
                (_, RowValue::SystemHeader) => Some("--".into()),
                _ => None,
            })
            .collect();
        assert_eq!(keys, ["id", "a", "b", "c", "odd key", "--", "_rid", "_ts"]);
    }

    #[test]
    fn folding_hides_children_and_paths_read_like_queries() {
        let mut t = JsonTree::new(doc());
        let n = t.rows.len();
        t.selected = 2; // "a": {
        t.toggle();
        assert!(t.rows.len() < n);
        assert_eq!(t.selected_path().as_deref(), Some("c.a"));
        t.toggle();
        assert_eq!(t.rows.len(), n);
        let i = t
            .rows
            .iter()
            .position(|r| r.key == Some(Step::Key("c".into())))
            .unwrap();
        t.selected = i;
        assert_eq!(t.selected_path().as_deref(), Some("c.a.b[1].c"));
        assert_eq!(t.selected_value().as_deref(), Some("true"));
        assert_eq!(query_path(&[Step::Key("odd key".into())]), "c[\"odd key\"]");
    }

    #[test]
    fn hiding_system_properties() {
        let mut t = JsonTree::new(doc());
        t.hide_system = true;
        t.rebuild();
        assert!(
            t.rows.iter().all(|r| !r.system),
            "no system rows, no heading"
        );
    }
}
