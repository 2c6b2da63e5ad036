//! The query console's state: the editor, parameters, history, the pages received so far
//! and everything the stats panel shows about them.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use super::editor::TextBuffer;
use super::history::History;
use crate::engine::PartitionResult;
use crate::engine::QueryMetrics;
use crate::engine::QueryResult;
use crate::query::complete::{Candidate, Completion, Schema};

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
    /// The container it runs on (the console may have moved on since).
    pub target: (String, String),
    pub sql: String,
    pub params: BTreeMap<String, Value>,
    /// The rows held: the result from row `dropped` on (see [`HELD_BYTES`]).
    pub documents: Vec<Value>,
    /// Rows let go from the front as later pages came.
    pub dropped: usize,
    /// JSON bytes of each held row, and their sum.
    sizes: VecDeque<usize>,
    held_bytes: usize,
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
    /// Cancelled by the user before its last page came.
    pub cancelled: bool,
    /// Ranges finished while the current page runs (cleared when it arrives).
    pub progress: BTreeMap<String, crate::engine::RangeProgress>,
    /// Every logical partition that produced results, in the order first seen, and their
    /// JSON texts: an aggregate over a large container can name a hundred thousand, and
    /// the stats panel reads them every frame.
    logical: Vec<Value>,
    logical_seen: HashSet<String>,
}

impl QueryRun {
    /// A run of `sql` with `params` on `target`, before its first page.
    pub fn new(target: (String, String), sql: String, params: BTreeMap<String, Value>) -> QueryRun {
        QueryRun {
            target,
            sql,
            params,
            ..Default::default()
        }
    }

    /// Adds a page, accumulating charge and per-range metrics as the service's SDKs do
    /// when a caller drains a query. Returns how many of the oldest rows it let go to stay
    /// within [`HELD_BYTES`] and [`HELD_ROWS`].
    pub fn add_page(&mut self, page: QueryResult, elapsed_ms: f64) -> usize {
        self.progress.clear();
        let newest = page.documents.len();
        for d in page.documents {
            self.sizes.push_back(d.json_len());
            self.held_bytes += d.json_len();
            self.documents.push(Value::from(d));
        }
        let let_go = self.let_go_oldest(newest);
        self.continuation = page.continuation;
        self.request_charge = crate::charge::round(self.request_charge + page.request_charge);
        self.routing = Some((page.routing.kind.to_string(), page.routing.reason));
        self.access = Some(page.access);
        self.index_metrics = page.index_metrics;
        for p in page.partitions {
            for lp in &p.logical_partitions {
                if self.logical_seen.insert(lp.to_string()) {
                    self.logical.push(lp.clone());
                }
            }
            match self.partitions.get_mut(&*p.id) {
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
                    self.partitions.insert(p.id.to_string(), p);
                }
            }
        }
        self.metrics.add(&page.metrics);
        self.pages += 1;
        self.elapsed_ms += elapsed_ms;
        let_go
    }

    /// Drops the oldest rows while more than the bounds are held, never the `newest` ones
    /// (the page just received is shown whatever its size).
    fn let_go_oldest(&mut self, newest: usize) -> usize {
        let mut n = 0;
        while self.documents.len() - n > newest
            && (self.held_bytes > HELD_BYTES || self.documents.len() - n > HELD_ROWS)
        {
            self.held_bytes -= self.sizes.pop_front().unwrap_or(0);
            n += 1;
        }
        self.documents.drain(..n);
        self.dropped += n;
        n
    }

    /// Documents received over every page, those let go included.
    pub fn received(&self) -> usize {
        self.dropped + self.documents.len()
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

/// The result view streams (issue 29): scrolling on through a large result fetches page
/// after page, and it holds at most this many JSON bytes of rows (or [`HELD_ROWS`] rows),
/// letting the oldest go as pages arrive, so its memory does not grow with the result.
/// Searching, sorting and exporting the loaded rows see the held ones; re-running the
/// query (or exporting every page) reaches the rest.
pub const HELD_BYTES: usize = 32 << 20;

/// At most this many rows are held (see [`HELD_BYTES`]).
pub const HELD_ROWS: usize = 20_000;

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
    /// Every query run, by container, with its parameters.
    pub history: History,
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
    /// Words the loaded results are searched for (`/`): only rows holding all of them show.
    pub filter: Option<String>,
    /// The column the loaded results are sorted by, descending or not (client-side).
    pub sort: Option<(String, bool)>,
    /// The documents shown, as indices into the run's documents, in the order shown.
    rows: Vec<usize>,
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

    /// The console's container as the history names it (`db/c`).
    pub fn target_key(&self) -> Option<String> {
        self.target.as_ref().map(|(db, c)| format!("{db}/{c}"))
    }

    /// The values typed for the `@parameters` `sql` uses, to keep with it in the history.
    pub fn params_of(&self, sql: &str) -> BTreeMap<String, String> {
        crate::query::complete::parameter_names(sql)
            .into_iter()
            .filter_map(|n| self.params.get(&n).map(|v| (n, v.clone())))
            .collect()
    }

    /// The documents shown, as indices into the run's documents, in the order shown.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// The document on the selected row.
    pub fn selected_document(&self) -> Option<&Value> {
        let i = *self.rows.get(self.selected)?;
        self.run.as_ref()?.documents.get(i)
    }

    /// Follows the selection after `let_go` of the oldest held rows were dropped: the same
    /// document stays selected, or the first row when it was among those dropped.
    pub fn after_let_go(&mut self, selected_doc: Option<usize>, let_go: usize) {
        if let_go == 0 {
            return;
        }
        let target = selected_doc.and_then(|i| i.checked_sub(let_go));
        self.selected = target
            .and_then(|t| self.rows.iter().position(|&r| r == t))
            .unwrap_or(0);
        self.offset = self.offset.saturating_sub(let_go).min(self.selected);
    }

    /// Recomputes the rows shown after the documents, the search or the sort changed.
    pub fn refresh_rows(&mut self) {
        let Some(run) = &self.run else {
            self.rows.clear();
            return;
        };
        let words: Vec<String> = self
            .filter
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.rows = (0..run.documents.len())
            .filter(|&i| words.is_empty() || holds_all(&run.documents[i], &words))
            .collect();
        if let Some((column, descending)) = &self.sort {
            let docs = &run.documents;
            // A stable sort: equal values keep the order the pages came in.
            self.rows.sort_by(|&a, &b| {
                let order = compare(field(&docs[a], column), field(&docs[b], column));
                if *descending { order.reverse() } else { order }
            });
        }
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }
}

/// Whether the document's JSON text holds every word (lower-cased).
fn holds_all(doc: &Value, words: &[String]) -> bool {
    let text = doc.to_string().to_lowercase();
    words.iter().all(|w| text.contains(w.as_str()))
}

/// A column's value in a document (the document itself for the `value` column of scalars).
fn field<'a>(doc: &'a Value, column: &str) -> Option<&'a Value> {
    match doc {
        Value::Object(o) => o.get(column),
        other if column == "value" => Some(other),
        _ => None,
    }
}

/// Orders values as the query language's ORDER BY does across types: undefined, null,
/// booleans, numbers, strings, then arrays and objects (by their text).
fn compare(a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
    fn rank(v: Option<&Value>) -> u8 {
        match v {
            None => 0,
            Some(Value::Null) => 1,
            Some(Value::Bool(_)) => 2,
            Some(Value::Number(_)) => 3,
            Some(Value::String(_)) => 4,
            Some(Value::Array(_)) => 5,
            Some(Value::Object(_)) => 6,
        }
    }
    match (a, b) {
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x.cmp(y),
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.total_cmp(&y)
        }
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (Some(x), Some(y)) if rank(a) == rank(b) => x.to_string().cmp(&y.to_string()),
        _ => rank(a).cmp(&rank(b)),
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
    fn search_and_sort_pick_and_order_the_rows() {
        let mut q = QueryState::default();
        let run = QueryRun {
            documents: vec![
                json!({"id": "a", "n": 2, "city": "Oslo"}),
                json!({"id": "b", "n": 10}),
                json!({"id": "c", "n": "x", "city": "Lyon"}),
                json!({"id": "d"}),
            ],
            ..Default::default()
        };
        q.run = Some(run);
        q.refresh_rows();
        assert_eq!(q.rows(), [0, 1, 2, 3]);
        q.sort = Some(("n".into(), false));
        q.refresh_rows();
        assert_eq!(q.rows(), [3, 0, 1, 2]);
        q.sort = Some(("n".into(), true));
        q.filter = Some("CITY".into());
        q.refresh_rows();
        assert_eq!(q.rows(), [2, 0]);
        q.selected = 1;
        assert_eq!(
            q.selected_document(),
            Some(&json!({"id": "a", "n": 2, "city": "Oslo"}))
        );
    }
}
