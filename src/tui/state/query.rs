//! The query console's state: the editor, parameters, history, the pages received so far
//! and everything the stats panel shows about them.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::editor::TextBuffer;
use crate::engine::PartitionResult;
use crate::engine::QueryMetrics;
use crate::engine::QueryResult;
use crate::query::complete::{Candidate, Completion, Schema};

/// How many queries the history keeps.
pub const HISTORY_LIMIT: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultsMode {
    #[default]
    Table,
    Json,
}

/// A physical partition of the container, for the key-space strip.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSpan {
    pub id: String,
    /// Start and end as fractions of the EPK space.
    pub start: f64,
    pub end: f64,
}

/// The query being run or last run.
#[derive(Debug, Clone, Default)]
pub struct QueryRun {
    pub sql: String,
    pub params: BTreeMap<String, Value>,
    pub documents: Vec<Value>,
    pub continuation: Option<String>,
    pub request_charge: f64,
    pub routing: Option<(String, String)>,
    /// Per range id, merged over the pages received.
    pub partitions: BTreeMap<String, PartitionResult>,
    pub metrics: QueryMetrics,
    pub pages: usize,
    pub elapsed_ms: f64,
    /// How the last page found its documents, and the indexes it used or missed.
    pub access: Option<crate::engine::AccessView>,
    pub index_metrics: Option<crate::engine::IndexMetrics>,
    /// Ranges finished while the current page runs (cleared when it arrives).
    pub progress: BTreeMap<String, crate::engine::RangeProgress>,
    /// Every logical partition that produced results, in the order first seen, and their
    /// JSON texts: an aggregate over a large container can name a hundred thousand, and
    /// the stats panel reads them every frame.
    logical: Vec<Value>,
    logical_seen: HashSet<String>,
}

impl QueryRun {
    /// A run of `sql` with `params`, before its first page.
    pub fn new(sql: String, params: BTreeMap<String, Value>) -> QueryRun {
        QueryRun {
            sql,
            params,
            ..Default::default()
        }
    }

    /// Adds a page, accumulating charge and per-range metrics as the service's SDKs do
    /// when a caller drains a query.
    pub fn add_page(&mut self, page: QueryResult, elapsed_ms: f64) {
        self.progress.clear();
        self.documents
            .extend(page.documents.into_iter().map(Value::from));
        self.continuation = page.continuation;
        self.request_charge = crate::charge::round(self.request_charge + page.request_charge);
        self.routing = Some((page.routing.kind.to_string(), page.routing.reason));
        self.access = Some(page.access);
        self.index_metrics = Some(page.index_metrics);
        for p in page.partitions {
            for lp in &p.logical_partitions {
                if self.logical_seen.insert(lp.to_string()) {
                    self.logical.push(lp.clone());
                }
            }
            match self.partitions.get_mut(&p.id) {
                Some(have) => {
                    have.request_charge =
                        crate::charge::round(have.request_charge + p.request_charge);
                    have.metrics.add(&p.metrics);
                    let mut seen: HashSet<String> = have
                        .logical_partitions
                        .iter()
                        .map(Value::to_string)
                        .collect();
                    for lp in p.logical_partitions {
                        if seen.insert(lp.to_string()) {
                            have.logical_partitions.push(lp);
                        }
                    }
                }
                None => {
                    self.partitions.insert(p.id.clone(), p);
                }
            }
        }
        self.metrics.add(&page.metrics);
        self.pages += 1;
        self.elapsed_ms += elapsed_ms;
    }

    /// Every logical partition that produced results, in the order first seen (pages in
    /// order, each page's ranges in key order).
    pub fn logical_partitions(&self) -> &[Value] {
        &self.logical
    }
}

/// An error to show, with its position in the editor.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryError {
    pub status: crate::error::StatusCode,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// Rows the completion list shows at once.
pub const COMPLETION_ROWS: usize = 8;

/// The completion list open under the editor's cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionList {
    pub completion: Completion,
    pub selected: usize,
}

impl CompletionList {
    pub fn selected(&self) -> Option<&Candidate> {
        self.completion.candidates.get(self.selected)
    }
}

/// Property paths sampled from a container, for completion.
#[derive(Debug, Clone)]
pub struct TargetSchema {
    pub target: (String, String),
    pub schema: Arc<Schema>,
}

#[derive(Debug, Clone, Default)]
pub struct QueryState {
    pub editor: TextBuffer,
    /// The container the console queries.
    pub target: Option<(String, String)>,
    /// Parameter values as typed (JSON text), by name without `@`.
    pub params: BTreeMap<String, String>,
    pub history: Vec<String>,
    /// Position while browsing history (None: editing a new query).
    pub history_pos: Option<usize>,
    pub run: Option<QueryRun>,
    pub ranges: Vec<RangeSpan>,
    pub error: Option<QueryError>,
    /// The ticket of the page being fetched, if one is.
    pub running: Option<u64>,
    pub mode: ResultsMode,
    pub selected: usize,
    pub offset: usize,
    pub hscroll: usize,
    pub completion: Option<CompletionList>,
    /// The sampled schema of the container last asked for (it may be another one's while a
    /// new sample loads).
    pub schema: Option<TargetSchema>,
    /// The container whose sample is being read.
    pub schema_loading: Option<(String, String)>,
}

impl QueryState {
    /// The `@names` the query text uses, in order of first appearance.
    pub fn param_names(&self) -> Vec<String> {
        crate::query::complete::parameter_names(&self.editor.text())
    }

    /// Adds a query to the history (most recent last, no adjacent duplicates).
    pub fn remember(&mut self, sql: &str) {
        let sql = sql.trim();
        if sql.is_empty() {
            return;
        }
        self.history.retain(|h| h != sql);
        self.history.push(sql.to_string());
        if self.history.len() > HISTORY_LIMIT {
            let extra = self.history.len() - HISTORY_LIMIT;
            self.history.drain(..extra);
        }
        self.history_pos = None;
    }

    pub fn history_step(&mut self, back: bool) {
        if self.history.is_empty() {
            return;
        }
        let last = self.history.len() - 1;
        let pos = match (self.history_pos, back) {
            (None, true) => Some(last),
            (None, false) => None,
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false) if p < last => Some(p + 1),
            (Some(_), false) => None,
        };
        self.history_pos = pos;
        let text = pos.map_or("", |p| self.history[p].as_str()).to_string();
        self.editor.set_text(&text);
    }
}

/// The columns of a results table: the top-level properties of the documents in order of
/// first appearance (system properties last), or a single `value` column for scalars.
pub fn columns(docs: &[Value]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    let mut system: Vec<String> = Vec::new();
    let mut scalar = false;
    for d in docs.iter().take(500) {
        match d {
            Value::Object(o) => {
                for k in o.keys() {
                    let list = if k.starts_with('_') {
                        &mut system
                    } else {
                        &mut cols
                    };
                    if !list.contains(k) {
                        list.push(k.clone());
                    }
                }
            }
            _ => scalar = true,
        }
    }
    if scalar {
        cols.insert(0, "value".into());
    }
    cols.extend(system);
    cols
}

/// A cell's text: strings bare, everything else as compact JSON.
pub fn cell(doc: &Value, column: &str) -> String {
    let v = match doc {
        Value::Object(o) => o.get(column),
        other if column == "value" => Some(other),
        _ => None,
    };
    match v {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_in_first_seen_order_with_system_last() {
        let docs = vec![
            json!({"id": 1, "_ts": 2, "name": "x"}),
            json!({"id": 2, "extra": true}),
        ];
        assert_eq!(columns(&docs), ["id", "name", "extra", "_ts"]);
        assert_eq!(columns(&[json!(1), json!({"a": 1})]), ["value", "a"]);
        assert_eq!(cell(&json!({"a": "s"}), "a"), "s");
        assert_eq!(cell(&json!({"a": [1]}), "a"), "[1]");
        assert_eq!(cell(&json!(5), "value"), "5");
    }

    #[test]
    fn history_browsing() {
        let mut q = QueryState::default();
        q.remember("a");
        q.remember("b");
        q.remember("a");
        assert_eq!(q.history, ["b", "a"]);
        q.history_step(true);
        assert_eq!(q.editor.text(), "a");
        q.history_step(true);
        assert_eq!(q.editor.text(), "b");
        q.history_step(false);
        q.history_step(false);
        assert_eq!(q.editor.text(), "");
    }
}
