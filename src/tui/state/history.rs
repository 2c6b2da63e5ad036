//! The query history: every query run, with the container it ran on and its parameter
//! values, kept in the data directory (`query-history.json`) across sessions. Walking it
//! (ctrl-↑/↓) and searching it stay within the console's container; entries from the
//! file's older form, plain query texts, belong to no container and show everywhere.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How many queries the history keeps (all containers together).
pub const HISTORY_LIMIT: usize = 1000;

/// One query as it was run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// `db/container`, or none for an entry of the older file form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    pub sql: String,
    /// The parameter values as typed (JSON text), by name without `@`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

/// The history file's forms: this one, and the older list of query texts.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Entries(Vec<HistoryEntry>),
    Texts(Vec<String>),
}

/// Reads the history file's text in either form.
pub fn parse(bytes: &[u8]) -> Vec<HistoryEntry> {
    match serde_json::from_slice(bytes) {
        Ok(Stored::Entries(e)) => e,
        Ok(Stored::Texts(t)) => t
            .into_iter()
            .map(|sql| HistoryEntry {
                container: None,
                sql,
                params: BTreeMap::new(),
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The history and where the console stands in it.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Oldest first.
    pub entries: Vec<HistoryEntry>,
    /// While walking: the position among the container's entries (None: editing).
    pub pos: Option<usize>,
    /// The text being edited when walking began, given back past the newest entry.
    pub draft: Option<String>,
}

impl History {
    /// The indices of the entries that belong to `container` (and those of no container),
    /// oldest first.
    pub fn of(&self, container: &str) -> Vec<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.container.as_deref().is_none_or(|c| c == container))
            .map(|(i, _)| i)
            .collect()
    }

    /// Adds a query run on `container` (most recent last; the same text on the same
    /// container moves to the end with its new parameter values).
    pub fn remember(&mut self, container: &str, sql: &str, params: &BTreeMap<String, String>) {
        let sql = sql.trim();
        if sql.is_empty() {
            return;
        }
        self.entries
            .retain(|e| !(e.sql == sql && e.container.as_deref().is_none_or(|c| c == container)));
        self.entries.push(HistoryEntry {
            container: Some(container.to_string()),
            sql: sql.to_string(),
            params: params.clone(),
        });
        if self.entries.len() > HISTORY_LIMIT {
            let extra = self.entries.len() - HISTORY_LIMIT;
            self.entries.drain(..extra);
        }
        self.pos = None;
    }

    /// One step back (or forward) through `container`'s entries from `current`, the text
    /// in the editor: the entry to show, or the draft (as an entry with no parameters) when
    /// walking forward past the newest; `None` when there is nowhere to go.
    pub fn step(&mut self, container: &str, back: bool, current: &str) -> Option<HistoryEntry> {
        let mine = self.of(container);
        let last = mine.len().checked_sub(1)?;
        let pos = match (self.pos, back) {
            (None, true) => {
                self.draft = Some(current.to_string());
                Some(last)
            }
            (None, false) => return None,
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false) if p < last => Some(p + 1),
            (Some(_), false) => None,
        };
        self.pos = pos;
        Some(match pos {
            Some(p) => self.entries[mine[p.min(last)]].clone(),
            None => HistoryEntry {
                container: None,
                sql: self.draft.take().unwrap_or_default(),
                params: BTreeMap::new(),
            },
        })
    }

    /// The container's entries holding every word of `text` (case-insensitive), newest
    /// first.
    pub fn search(&self, container: &str, text: &str) -> Vec<usize> {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        let mut found: Vec<usize> = self
            .of(container)
            .into_iter()
            .filter(|&i| {
                let e = &self.entries[i];
                let hay = format!(
                    "{} {}",
                    e.sql.to_lowercase(),
                    e.params
                        .iter()
                        .map(|(k, v)| format!("@{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                        .to_lowercase()
                );
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect();
        found.reverse();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_params() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    #[test]
    fn walking_stays_within_the_container_and_gives_back_the_draft() {
        let mut h = History::default();
        h.remember("d/a", "A1", &no_params());
        h.remember("d/b", "B1", &no_params());
        h.remember("d/a", "A2", &no_params());
        assert_eq!(
            h.step("d/a", true, "draft").map(|e| e.sql),
            Some("A2".into())
        );
        assert_eq!(h.step("d/a", true, "x").map(|e| e.sql), Some("A1".into()));
        assert_eq!(h.step("d/a", true, "x").map(|e| e.sql), Some("A1".into()));
        assert_eq!(h.step("d/a", false, "x").map(|e| e.sql), Some("A2".into()));
        assert_eq!(
            h.step("d/a", false, "x").map(|e| e.sql),
            Some("draft".into())
        );
        assert_eq!(h.step("d/a", false, "x"), None);
        assert_eq!(h.step("d/c", true, "x"), None);
    }

    #[test]
    fn the_older_file_form_loads_as_entries_of_no_container() {
        let old = parse(br#"["SELECT 1", "SELECT 2"]"#);
        assert_eq!(old.len(), 2);
        assert_eq!(old[0].container, None);
        let mut h = History {
            entries: old,
            ..Default::default()
        };
        let mut params = BTreeMap::new();
        params.insert("pk".to_string(), "\"c-1\"".to_string());
        h.remember("d/a", "SELECT * FROM c WHERE c.pk = @pk", &params);
        let text = serde_json::to_vec(&h.entries).unwrap();
        assert_eq!(parse(&text), h.entries);
        assert_eq!(h.search("d/a", "@PK=\"c-1"), [2]);
        assert_eq!(h.search("d/zzz", "select"), [1, 0]);
        assert!(parse(b"not json").is_empty());
    }
}
