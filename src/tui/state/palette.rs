//! The fuzzy palette: actions, databases, containers, partitions and item ids in one list,
//! matched by nucleo on its own threads while ids stream in from the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nucleo::pattern::{CaseMatching, Normalization};
use nucleo::{Config, Injector, Nucleo};
use serde_json::Value;

use super::editor::TextBuffer;
use crate::tui::action::Action;

/// Where choosing an entry goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Action(Action),
    Database(String),
    Container {
        db: String,
        c: String,
    },
    Range {
        db: String,
        c: String,
        range: u32,
    },
    /// A logical partition (a partition key value) in its range.
    Logical {
        db: String,
        c: String,
        range: u32,
        pk: Value,
    },
    Item {
        db: String,
        c: String,
        pk: Value,
        id: String,
    },
    /// A stored procedure, trigger or UDF.
    Script {
        db: String,
        c: String,
        kind: crate::engine::ScriptKind,
        id: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub text: String,
    pub kind: &'static str,
    pub target: Target,
}

impl Entry {
    pub fn push_into(self, injector: &Injector<Entry>) {
        injector.push(self, |e, cols| cols[0] = e.text.as_str().into());
    }
}

/// Rows the palette draws at most.
pub const SHOWN: u32 = 200;

pub struct PaletteState {
    pub input: TextBuffer,
    matcher: Nucleo<Entry>,
    pub selected: usize,
    /// Set by nucleo when new results are ready; the runtime redraws on it.
    pub dirty: Arc<AtomicBool>,
    /// Ticket of the id stream feeding the palette, while it runs.
    pub streaming: Option<u64>,
    /// The current matches (text, kind, target), refreshed by [`PaletteState::tick`].
    pub matches: Vec<Entry>,
    pub matched: u32,
    pub total: u32,
    pub running: bool,
}

impl std::fmt::Debug for PaletteState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaletteState")
            .field("input", &self.input.text())
            .field("matched", &self.matched)
            .field("total", &self.total)
            .finish()
    }
}

impl PaletteState {
    pub fn new() -> PaletteState {
        let dirty = Arc::new(AtomicBool::new(true));
        let notify = {
            let dirty = dirty.clone();
            Arc::new(move || dirty.store(true, Ordering::Release))
        };
        // Two matcher threads: the machine may have few cores and the UI needs one.
        let matcher = Nucleo::new(Config::DEFAULT, notify, Some(2), 1);
        PaletteState {
            input: TextBuffer::new("", false),
            matcher,
            selected: 0,
            dirty,
            streaming: None,
            matches: Vec::new(),
            matched: 0,
            total: 0,
            running: false,
        }
    }

    pub fn injector(&self) -> Injector<Entry> {
        self.matcher.injector()
    }

    /// Forgets every entry (a new palette session).
    pub fn restart(&mut self) {
        self.matcher.restart(true);
        self.input = TextBuffer::new("", false);
        self.selected = 0;
        self.matches.clear();
        self.streaming = None;
    }

    /// Re-reads the pattern after the input changed.
    pub fn pattern_changed(&mut self, appended: bool) {
        let text = self.input.text();
        self.matcher.pattern.reparse(
            0,
            &text,
            CaseMatching::Smart,
            Normalization::Smart,
            appended,
        );
        self.selected = 0;
        // The matcher only looks at a new pattern when ticked: ask for a tick.
        self.dirty.store(true, Ordering::Release);
    }

    /// Lets the matcher work for up to `ms` and refreshes the visible matches.
    pub fn tick(&mut self, ms: u64) {
        let status = self.matcher.tick(ms);
        self.running = status.running || self.matcher.active_injectors() > 0;
        let snap = self.matcher.snapshot();
        self.matched = snap.matched_item_count();
        self.total = snap.item_count();
        let n = self.matched.min(SHOWN);
        self.matches = snap.matched_items(0..n).map(|i| i.data.clone()).collect();
        self.selected = self.selected.min(self.matches.len().saturating_sub(1));
    }

    pub fn selected_entry(&self) -> Option<&Entry> {
        self.matches.get(self.selected)
    }
}

impl Default for PaletteState {
    fn default() -> PaletteState {
        PaletteState::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_stream_in_and_filter() {
        let mut p = PaletteState::new();
        let inj = p.injector();
        for name in ["orders", "customers", "posts"] {
            Entry {
                text: format!("container shop/{name}"),
                kind: "container",
                target: Target::Database("shop".into()),
            }
            .push_into(&inj);
        }
        drop(inj);
        p.input.insert_str("cust");
        p.pattern_changed(true);
        for _ in 0..200 {
            p.tick(10);
            if !p.running {
                break;
            }
        }
        assert_eq!(p.total, 3);
        assert_eq!(p.matches.len(), 1);
        assert_eq!(p.matches[0].text, "container shop/customers");
    }
}
