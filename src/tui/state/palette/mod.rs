//! The fuzzy palette: actions, databases, containers, partitions and item ids in one list,
//! matched on background threads ([`matcher`]) while ids stream in from the store.

pub mod matcher;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

pub use self::matcher::Injector;
use self::matcher::Matcher;

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
    pub fn push_into(self, injector: &mut Injector<Entry>) {
        injector.push(self);
    }
}

impl AsRef<str> for Entry {
    /// What the pattern is matched against.
    fn as_ref(&self) -> &str {
        &self.text
    }
}

/// Rows the palette draws at most.
pub const SHOWN: u32 = 200;

pub struct PaletteState {
    pub input: TextBuffer,
    matcher: Matcher<Entry>,
    pub selected: usize,
    /// Set by the matcher when new results are ready; the runtime redraws on it.
    pub dirty: Arc<AtomicBool>,
    /// Ticket of the id stream feeding the palette, while it runs.
    pub streaming: Option<u64>,
    /// The best matches found so far (text, kind, target), refreshed by
    /// [`PaletteState::tick`]; while `running` they are a partial result.
    pub matches: Vec<Entry>,
    /// Matches found so far, of `total` entries, `searched` of which have been looked at.
    pub matched: u32,
    pub total: u32,
    pub searched: u32,
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
        let matcher = Matcher::new(SHOWN as usize, notify);
        PaletteState {
            input: TextBuffer::new("", false),
            matcher,
            selected: 0,
            dirty,
            streaming: None,
            matches: Vec::new(),
            matched: 0,
            total: 0,
            searched: 0,
            running: false,
        }
    }

    pub fn injector(&self) -> Injector<Entry> {
        self.matcher.injector()
    }

    /// Forgets every entry (a new palette session).
    pub fn restart(&mut self) {
        self.matcher.restart();
        self.input = TextBuffer::new("", false);
        self.selected = 0;
        self.matches.clear();
        self.streaming = None;
    }

    /// Matches the new input from now on (matching starts at once, on the matcher's
    /// threads); `appended` says the old input is a prefix of it.
    pub fn pattern_changed(&mut self, appended: bool) {
        self.matcher.set_pattern(&self.input.text(), appended);
        // The old pattern's matches are not this one's: the list fills again as the new
        // pattern's first chunks are matched.
        self.matches.clear();
        self.matched = 0;
        self.searched = 0;
        self.selected = 0;
        self.running = true;
        self.dirty.store(true, Ordering::Release);
    }

    /// Waits up to `ms` for new results while matching goes on, and refreshes the
    /// visible matches with the best found so far.
    pub fn tick(&mut self, ms: u64) {
        let view = self.matcher.tick(ms);
        self.running = view.running;
        self.matched = view.matched;
        self.total = view.total;
        self.searched = view.searched;
        if let Some(matches) = view.matches {
            self.matches = matches;
        }
        self.selected = self.selected.min(self.matches.len().saturating_sub(1));
    }

    /// Lets the matcher start at most `chunks` more chunks of entries (`None`: no limit),
    /// to look at the palette part way through matching.
    #[cfg(any(test, feature = "test-harness"))]
    pub fn pace(&self, chunks: Option<usize>) {
        self.matcher.pace(chunks);
    }

    /// Matching waits for `PaletteState::pace` to allow more.
    pub fn held(&self) -> bool {
        self.matcher.held()
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
        let mut inj = p.injector();
        for name in ["orders", "customers", "posts"] {
            Entry {
                text: format!("container shop/{name}"),
                kind: "container",
                target: Target::Database("shop".into()),
            }
            .push_into(&mut inj);
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
