//! The resource tree: databases → containers → physical partitions → logical partitions →
//! items, as a flat list of visible nodes that grows as levels load.
//!
//! Every level below the databases loads lazily, a page at a time, so a container with a
//! million items costs one page of work when it is opened. Counts and sizes come from the
//! store's statistics.

use nucleo::Matcher;
use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use serde_json::Value;

use crate::engine::ScriptKind;

/// Rows loaded per request for the deep levels.
pub const PAGE: usize = 200;

/// What a node stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Database {
        db: String,
        containers: usize,
    },
    Container {
        db: String,
        c: String,
        pk_paths: Vec<String>,
        throughput: String,
        items: u64,
        bytes: u64,
    },
    Range {
        db: String,
        c: String,
        range: u32,
        min: String,
        max: String,
        items: u64,
        bytes: u64,
        ru_now: f64,
    },
    Logical {
        db: String,
        c: String,
        range: u32,
        pk: Value,
        items: u64,
        bytes: u64,
        /// RU it has consumed since it was created, as the store counts it.
        ru_total: f64,
        /// It consumed the most RU of its range since the level was last loaded (and
        /// some): measured by the tree itself, so an idle store marks nothing.
        hottest: bool,
    },
    Item {
        db: String,
        c: String,
        pk: Value,
        id: String,
    },
    /// A container's scripts of one kind (listed under its ranges), with their number.
    Scripts {
        db: String,
        c: String,
        kind: ScriptKind,
        count: usize,
    },
    /// One stored procedure, trigger or UDF; `detail` says when a trigger runs.
    Script {
        db: String,
        c: String,
        kind: ScriptKind,
        id: String,
        detail: String,
    },
    /// The rest of a paged level: selecting it loads the next page.
    More {
        parent: String,
        cursor: String,
    },
    /// A level being loaded or that failed to load.
    Note(String),
}

/// One row of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub key: String,
    pub kind: NodeKind,
    pub depth: u8,
    pub expanded: bool,
}

impl Node {
    pub fn new(parent: Option<&Node>, kind: NodeKind) -> Node {
        let depth = parent.map_or(0, |p| p.depth + 1);
        let own = match &kind {
            NodeKind::Database { db, .. } => db.clone(),
            NodeKind::Container { c, .. } => c.clone(),
            NodeKind::Range { range, .. } => format!("r{range}"),
            NodeKind::Logical { pk, .. } => pk.to_string(),
            NodeKind::Item { id, .. } => format!("i{id}"),
            NodeKind::Scripts { kind, .. } => format!("scripts:{}", kind.segment()),
            NodeKind::Script { id, .. } => format!("script:{id}"),
            NodeKind::More { cursor, .. } => format!("more:{cursor}"),
            NodeKind::Note(n) => format!("note:{n}"),
        };
        let key = match parent {
            Some(p) => format!("{}\u{1f}{own}", p.key),
            None => own,
        };
        Node {
            key,
            kind,
            depth,
            expanded: false,
        }
    }

    /// Whether the node has children to show.
    pub fn expandable(&self) -> bool {
        matches!(
            self.kind,
            NodeKind::Database { .. }
                | NodeKind::Container { .. }
                | NodeKind::Range { .. }
                | NodeKind::Logical { .. }
                | NodeKind::Scripts { .. }
        )
    }

    /// The container the node belongs to, if any.
    pub fn container(&self) -> Option<(&str, &str)> {
        match &self.kind {
            NodeKind::Container { db, c, .. }
            | NodeKind::Range { db, c, .. }
            | NodeKind::Logical { db, c, .. }
            | NodeKind::Item { db, c, .. }
            | NodeKind::Scripts { db, c, .. }
            | NodeKind::Script { db, c, .. } => Some((db, c)),
            _ => None,
        }
    }

    /// The text the tree filter matches against.
    pub fn label(&self) -> String {
        match &self.kind {
            NodeKind::Database { db, .. } => db.clone(),
            NodeKind::Container { c, .. } => c.clone(),
            NodeKind::Range { range, .. } => format!("range {range}"),
            NodeKind::Logical { pk, .. } => pk_label(pk),
            NodeKind::Item { id, .. } | NodeKind::Script { id, .. } => id.clone(),
            NodeKind::Scripts { kind, .. } => super::script::group_label(*kind).into(),
            NodeKind::More { .. } => "… more".into(),
            NodeKind::Note(n) => n.clone(),
        }
    }
}

/// A fuzzy matcher for the filter `text` (smart case): every word must match.
fn matcher_for(text: &str) -> impl FnMut(&str) -> bool {
    let mut matcher = Matcher::new(nucleo::Config::DEFAULT);
    let pattern = Pattern::parse(text, CaseMatching::Smart, Normalization::Smart);
    let empty = text.is_empty();
    move |label: &str| {
        let mut buf = Vec::new();
        empty
            || pattern
                .score(nucleo::Utf32Str::new(label, &mut buf), &mut matcher)
                .is_some()
    }
}

/// A partition key value as a person reads it: strings unquoted where that is unambiguous.
pub fn pk_label(pk: &Value) -> String {
    match pk {
        Value::Array(parts) if parts.len() == 1 => pk_label(&parts[0]),
        Value::Array(parts) => parts.iter().map(pk_label).collect::<Vec<_>>().join(" / "),
        Value::String(s) => s.clone(),
        Value::Object(o) if o.is_empty() => "(undefined)".into(),
        other => other.to_string(),
    }
}

/// The visible rows, the selection and an optional filter.
#[derive(Debug, Clone, Default)]
pub struct TreeState {
    pub nodes: Vec<Node>,
    pub selected: usize,
    pub offset: usize,
    /// The fuzzy filter being typed (`/`), and the rows it keeps.
    pub filter: Option<String>,
    pub visible: Vec<usize>,
    /// Bumped on refresh: loads for an older tree are dropped.
    pub generation: u64,
    /// A palette jump waiting for levels to load: the node keys' parts, root first.
    pub pending_jump: Option<Vec<String>>,
    /// Every database and container with its counts, as the last probe found them: what
    /// the filter searches beyond the expanded levels.
    pub catalog: Vec<NodeKind>,
    /// The RU total each logical partition had when its level last loaded, by node key:
    /// what the hot marks are measured against.
    pub ru_seen: std::collections::HashMap<String, f64>,
    /// When the store was last asked whether the tree is out of date (Unix second), and
    /// whether that answer is still coming.
    pub probed_at: i64,
    pub probing: bool,
    /// Ranges (by node key) whose listing, a billed query on a remote account, was priced
    /// and accepted: each asks once.
    pub priced: std::collections::HashSet<String>,
}

impl TreeState {
    pub fn selected_node(&self) -> Option<&Node> {
        self.row_index(self.selected)
            .and_then(|i| self.nodes.get(i))
    }

    /// Index into `nodes` of the `row`th visible row.
    pub fn row_index(&self, row: usize) -> Option<usize> {
        if self.filter.is_some() {
            self.visible.get(row).copied()
        } else {
            (row < self.nodes.len()).then_some(row)
        }
    }

    pub fn row_count(&self) -> usize {
        if self.filter.is_some() {
            self.visible.len()
        } else {
            self.nodes.len()
        }
    }

    pub fn find(&self, key: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.key == key)
    }

    /// The index just past the last descendant of node `i`.
    pub fn subtree_end(&self, i: usize) -> usize {
        let depth = self.nodes[i].depth;
        let mut j = i + 1;
        while j < self.nodes.len() && self.nodes[j].depth > depth {
            j += 1;
        }
        j
    }

    /// Replaces the children of node `key` (keeping the expanded state of children that
    /// are still there) and returns false if the node is gone.
    /// An empty `key` means the roots.
    pub fn set_children(&mut self, key: &str, kinds: Vec<NodeKind>, more: Option<String>) -> bool {
        let (start, end, parent) = if key.is_empty() {
            (0, self.nodes.len(), None)
        } else {
            let Some(i) = self.find(key) else {
                return false;
            };
            (i + 1, self.subtree_end(i), Some(self.nodes[i].clone()))
        };
        let old: Vec<Node> = self.nodes.drain(start..end).collect();
        let mut children: Vec<Node> = Vec::new();
        for kind in kinds {
            let node = Node::new(parent.as_ref(), kind);
            // Re-expanded children keep their loaded subtree.
            if let Some(pos) = old.iter().position(|o| o.key == node.key && o.expanded) {
                let depth = old[pos].depth;
                let mut sub = vec![Node {
                    kind: node.kind,
                    ..old[pos].clone()
                }];
                sub.extend(
                    old[pos + 1..]
                        .iter()
                        .take_while(|o| o.depth > depth)
                        .cloned(),
                );
                children.extend(sub);
            } else {
                children.push(node);
            }
        }
        if let Some(cursor) = more {
            children.push(Node::new(
                parent.as_ref(),
                NodeKind::More {
                    parent: key.to_string(),
                    cursor,
                },
            ));
        }
        if start > 0 {
            self.nodes[start - 1].expanded = true;
        }
        self.nodes.splice(start..start, children);
        let rows = self.row_count();
        self.selected = self.selected.min(rows.saturating_sub(1));
        true
    }

    /// Appends a further page under `key`, replacing its "more" row.
    pub fn append_children(&mut self, key: &str, kinds: Vec<NodeKind>, more: Option<String>) {
        let Some(i) = self.find(key) else {
            return;
        };
        let end = self.subtree_end(i);
        let parent = self.nodes[i].clone();
        // Drop the old "more" row (always the last direct child).
        let mut insert_at = end;
        if let Some(last) = (i + 1..end)
            .rev()
            .find(|&j| self.nodes[j].depth == parent.depth + 1)
            && matches!(self.nodes[last].kind, NodeKind::More { .. })
        {
            self.nodes.remove(last);
            insert_at = last;
        }
        let mut rows: Vec<Node> = kinds
            .into_iter()
            .map(|k| Node::new(Some(&parent), k))
            .collect();
        if let Some(cursor) = more {
            rows.push(Node::new(
                Some(&parent),
                NodeKind::More {
                    parent: key.to_string(),
                    cursor,
                },
            ));
        }
        self.nodes.splice(insert_at..insert_at, rows);
    }

    /// Collapses node `i`, removing its descendants.
    pub fn collapse(&mut self, i: usize) {
        let end = self.subtree_end(i);
        self.nodes.drain(i + 1..end);
        self.nodes[i].expanded = false;
    }

    /// The nearest ancestor of node `i`.
    pub fn parent_of(&self, i: usize) -> Option<usize> {
        let depth = self.nodes.get(i)?.depth;
        (0..i).rev().find(|&j| self.nodes[j].depth < depth)
    }

    /// Moves the selection to the node with `key` if it is visible.
    pub fn select_key(&mut self, key: &str) {
        if let Some(i) = self.find(key) {
            if self.filter.is_some() {
                if let Some(row) = self.visible.iter().position(|&v| v == i) {
                    self.selected = row;
                }
            } else {
                self.selected = i;
            }
        }
    }

    /// Re-applies the filter after it or the rows changed: the rows whose label matches it
    /// fuzzily stay, with their ancestors, so a match is shown where it lives.
    pub fn refilter(&mut self) {
        let Some(text) = self.filter.clone() else {
            return;
        };
        let labels: Vec<(usize, String)> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (i, n.label()))
            .collect();
        let mut matches = matcher_for(&text);
        let mut keep = vec![false; labels.len()];
        for (i, label) in &labels {
            if matches(label) {
                keep[*i] = true;
                let mut j = *i;
                while let Some(p) = self.parent_of(j) {
                    keep[p] = true;
                    j = p;
                }
            }
        }
        self.visible = (0..labels.len()).filter(|&i| keep[i]).collect();
        let rows = self.row_count();
        self.selected = self.selected.min(rows.saturating_sub(1));
    }

    /// Marks as hottest the logical partitions among `kinds` (a level just loaded under
    /// the node `parent`) that consumed the most RU since that level last loaded, if any
    /// consumed some; the first load of a level marks nothing, as nothing was measured.
    pub fn mark_hot(&mut self, parent: &str, kinds: &mut [NodeKind]) {
        let mut deltas = Vec::with_capacity(kinds.len());
        for k in kinds.iter() {
            let NodeKind::Logical { pk, ru_total, .. } = k else {
                deltas.push(0.0);
                continue;
            };
            let key = format!("{parent}\u{1f}{pk}");
            let before = self.ru_seen.insert(key, *ru_total).unwrap_or(*ru_total);
            deltas.push(ru_total - before);
        }
        let most = deltas.iter().copied().fold(0.0, f64::max);
        for (k, delta) in kinds.iter_mut().zip(deltas) {
            if let NodeKind::Logical { hottest, .. } = k {
                *hottest = most > 0.0 && delta == most;
            }
        }
    }

    /// The containers whose script groups the tree shows (expanded containers), as
    /// (database, container): the probe counts their scripts, and no other container's.
    pub fn script_containers(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for n in &self.nodes {
            if let NodeKind::Scripts { db, c, .. } = &n.kind
                && !out.iter().any(|(d, x)| d == db && x == c)
            {
                out.push((db.clone(), c.clone()));
            }
        }
        out
    }

    /// Whether `fresh` (every database and container with its counts, and the shown
    /// script groups with theirs) differs from what the tree shows: another database, or
    /// a shown database, container or script group whose counts changed or that is gone.
    pub fn is_stale(&self, fresh: &[NodeKind]) -> bool {
        let db_names = |kinds: &mut dyn Iterator<Item = &NodeKind>| -> Vec<String> {
            kinds
                .filter_map(|k| match k {
                    NodeKind::Database { db, .. } => Some(db.clone()),
                    _ => None,
                })
                .collect()
        };
        let shown = db_names(&mut self.nodes.iter().filter(|n| n.depth == 0).map(|n| &n.kind));
        if shown != db_names(&mut fresh.iter()) {
            return true;
        }
        self.nodes.iter().any(|n| match &n.kind {
            NodeKind::Database { .. } | NodeKind::Container { .. } | NodeKind::Scripts { .. } => {
                !fresh.contains(&n.kind)
            }
            _ => false,
        })
    }

    /// The databases not expanded in the tree that hold a container the filter matches.
    pub fn databases_to_reveal(&self) -> Vec<String> {
        let Some(text) = self.filter.as_deref().filter(|t| !t.trim().is_empty()) else {
            return Vec::new();
        };
        let mut matches = matcher_for(text);
        let mut out: Vec<String> = Vec::new();
        for kind in &self.catalog {
            if let NodeKind::Container { db, c, .. } = kind
                && matches(c)
                && !out.contains(db)
                && self.find(db).is_some_and(|i| !self.nodes[i].expanded)
            {
                out.push(db.clone());
            }
        }
        out
    }

    /// Moves the selection by `delta` rows, clamped.
    pub fn move_by(&mut self, delta: isize) {
        let n = self.row_count();
        if n == 0 {
            self.selected = 0;
            return;
        }
        let s = self.selected as isize + delta;
        self.selected = s.clamp(0, n as isize - 1) as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(name: &str) -> NodeKind {
        NodeKind::Database {
            db: name.into(),
            containers: 1,
        }
    }

    fn item(id: &str) -> NodeKind {
        NodeKind::Item {
            db: "d".into(),
            c: "c".into(),
            pk: Value::from("k"),
            id: id.into(),
        }
    }

    #[test]
    fn children_replace_and_pages_append() {
        let mut t = TreeState {
            nodes: vec![Node::new(None, db("a")), Node::new(None, db("b"))],
            ..Default::default()
        };
        assert!(t.set_children("a", vec![item("1"), item("2")], Some("c1".into())));
        assert_eq!(t.nodes.len(), 5);
        assert!(matches!(t.nodes[3].kind, NodeKind::More { .. }));
        t.append_children("a", vec![item("3")], None);
        let labels: Vec<String> = t.nodes.iter().map(Node::label).collect();
        assert_eq!(labels, ["a", "1", "2", "3", "b"]);
        t.collapse(0);
        assert_eq!(t.nodes.len(), 2);
        assert!(!t.set_children("zzz", vec![], None));
    }

    #[test]
    fn reloading_keeps_expanded_children() {
        let mut t = TreeState {
            nodes: vec![Node::new(None, db("a"))],
            ..Default::default()
        };
        t.set_children("a", vec![db("x"), db("y")], None);
        let x = t.nodes[1].key.clone();
        t.set_children(&x, vec![item("1")], None);
        assert_eq!(t.nodes.len(), 4);
        t.set_children("a", vec![db("x"), db("y"), db("z")], None);
        let labels: Vec<String> = t.nodes.iter().map(Node::label).collect();
        assert_eq!(labels, ["a", "x", "1", "y", "z"]);
    }

    #[test]
    fn pk_labels() {
        assert_eq!(pk_label(&serde_json::json!(["c-1"])), "c-1");
        assert_eq!(pk_label(&serde_json::json!(["t", 5])), "t / 5");
        assert_eq!(pk_label(&serde_json::json!([{}])), "(undefined)");
        assert_eq!(pk_label(&serde_json::json!([null])), "null");
    }
}
