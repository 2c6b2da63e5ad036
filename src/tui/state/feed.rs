//! The change feed view's state: the events as a live [`Tail`], the subscription, filters
//! and the events-per-second history.
//!
//! Pausing freezes what is shown, not the subscription: events keep arriving into the
//! buffer, and when it is full the oldest are dropped and counted.

use std::collections::VecDeque;

use serde_json::Value;

pub use super::tail::BUFFER;
use super::tail::{RowFilter, Tail};

/// Seconds of the events-per-second sparkline.
pub const RATE_WINDOW: usize = 60;

/// One change as the view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedRow {
    pub container: String,
    pub crts: i64,
    pub op: String,
    /// The physical partition that logged the change.
    pub range: String,
    pub lsn: u64,
    pub pk: Value,
    pub id: String,
    pub size: usize,
    pub current: Option<Value>,
    pub previous: Option<Value>,
    pub ttl_expired: bool,
    /// What filter words search, lower-cased: made on first use (only a filter with
    /// words asks), then kept, as the view re-filters on every frame.
    pub search: std::cell::OnceCell<String>,
}

impl FeedRow {
    /// The id and the whole document (or, for a delete, the previous image), lower-cased.
    pub fn search_text(&self) -> &str {
        self.search.get_or_init(|| {
            let doc = self.current.as_ref().or(self.previous.as_ref());
            let json = doc.map(Value::to_string).unwrap_or_default();
            format!("{} {json}", self.id).to_lowercase()
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedModeChoice {
    #[default]
    Latest,
    AllVersions,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StartChoice {
    Beginning,
    #[default]
    Now,
    /// Unix seconds.
    Time(i64),
}

/// What the view follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedScope {
    Container { db: String, c: String },
    Database { db: String },
}

impl FeedScope {
    pub fn label(&self) -> String {
        match self {
            FeedScope::Container { db, c } => format!("{db}/{c}"),
            FeedScope::Database { db } => format!("{db} (all containers)"),
        }
    }
}

/// Parsed `/` filter: `op:delete range:3 key:c-42 c:posts` and free words found anywhere
/// in the event's id or document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedFilter {
    pub text: String,
    op: Option<String>,
    range: Option<String>,
    key: Option<String>,
    container: Option<String>,
    words: Vec<String>,
}

impl RowFilter<FeedRow> for FeedFilter {
    fn parse(text: &str) -> FeedFilter {
        let mut f = FeedFilter {
            text: text.to_string(),
            ..Default::default()
        };
        for word in text.split_whitespace() {
            match word.split_once(':') {
                Some(("op", v)) => f.op = Some(v.to_ascii_lowercase()),
                Some(("range", v)) => f.range = Some(v.to_string()),
                Some(("key", v)) => f.key = Some(v.to_string()),
                Some(("c", v)) | Some(("container", v)) => f.container = Some(v.to_string()),
                _ => f.words.push(word.to_lowercase()),
            }
        }
        f
    }

    fn matches(&self, row: &FeedRow) -> bool {
        self.op
            .as_ref()
            .is_none_or(|op| row.op.to_ascii_lowercase().starts_with(op.as_str()))
            && self.range.as_ref().is_none_or(|r| *r == row.range)
            && self
                .key
                .as_ref()
                .is_none_or(|k| super::tree::pk_label(&row.pk) == *k)
            && self.container.as_ref().is_none_or(|c| row.container == *c)
            && (self.words.is_empty()
                || self
                    .words
                    .iter()
                    .all(|w| row.search_text().contains(w.as_str())))
    }

    fn text(&self) -> &str {
        &self.text
    }
}

#[derive(Debug, Clone, Default)]
pub struct FeedState {
    pub scope: Option<FeedScope>,
    pub mode: FeedModeChoice,
    pub start: StartChoice,
    /// The events received, oldest first, with the view's filter, pause and selection.
    pub tail: Tail<FeedRow, FeedFilter>,
    /// Events per second, oldest first, one slot per second.
    pub rate: VecDeque<u64>,
    pub rate_second: i64,
    /// The ticket of the live subscription.
    pub subscription: Option<u64>,
    pub request_charge: f64,
    pub error: Option<String>,
}

impl FeedState {
    /// Adds a batch, dropping the oldest past [`BUFFER`]; `now` is the Unix second.
    pub fn push(&mut self, rows: Vec<FeedRow>, now: i64) {
        self.tick(now);
        if let Some(last) = self.rate.back_mut() {
            *last += rows.len() as u64;
        }
        self.tail.push(rows);
    }

    /// Advances the rate window to `now`.
    pub fn tick(&mut self, now: i64) {
        if self.rate.is_empty() {
            self.rate_second = now;
            self.rate.push_back(0);
        }
        while self.rate_second < now {
            self.rate_second += 1;
            self.rate.push_back(0);
            if self.rate.len() > RATE_WINDOW {
                self.rate.pop_front();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, op: &str, range: u32) -> FeedRow {
        FeedRow {
            container: "posts".into(),
            crts: 0,
            op: op.into(),
            range: range.to_string(),
            lsn: 1,
            pk: serde_json::json!(["k1"]),
            id: id.into(),
            size: 10,
            current: None,
            previous: None,
            ttl_expired: false,
            search: Default::default(),
        }
    }

    #[test]
    fn pause_keeps_receiving_and_resume_shows_everything() {
        let mut f = FeedState::default();
        f.push(vec![row("a", "create", 0)], 100);
        f.tail.set_paused(true);
        f.push(vec![row("b", "create", 0), row("c", "replace", 1)], 100);
        assert_eq!(f.tail.visible().len(), 1);
        f.tail.set_paused(false);
        assert_eq!(f.tail.visible().len(), 3);
        assert_eq!(f.rate.back(), Some(&3));
    }

    #[test]
    fn the_selection_follows_the_newest_event_that_passes_the_filter() {
        let mut f = FeedState::default();
        f.tail.set_filter("op:create");
        f.push(vec![row("a", "create", 0), row("b", "delete", 0)], 1);
        assert_eq!(f.tail.selected_row().map(|r| r.id.as_str()), Some("a"));
        f.tail.set_filter("");
        assert_eq!(f.tail.selected_row().map(|r| r.id.as_str()), Some("b"));
    }

    #[test]
    fn filters_combine() {
        let f = FeedFilter::parse("op:del range:2 key:k1 x");
        assert!(f.matches(&row("xy", "delete", 2)));
        assert!(!f.matches(&row("xy", "create", 2)));
        assert!(!f.matches(&row("xy", "delete", 1)));
        assert!(!f.matches(&row("ab", "delete", 2)));
        // Words are found in the document too.
        let mut r = row("o-1", "create", 0);
        r.current = Some(serde_json::json!({"id": "o-1", "status": "Shipped"}));
        assert!(FeedFilter::parse("shipped").matches(&r));
        assert!(!FeedFilter::parse("pending").matches(&r));
    }

    #[test]
    fn rate_window_slides() {
        let mut f = FeedState::default();
        f.push(vec![row("a", "create", 0)], 10);
        f.tick(10 + RATE_WINDOW as i64 + 5);
        assert_eq!(f.rate.len(), RATE_WINDOW);
        assert!(f.rate.iter().all(|&n| n == 0));
    }
}
