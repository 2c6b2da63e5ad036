//! A live list that grows at the bottom, as `tail -f` does: a bounded buffer whose oldest
//! rows are dropped (and counted) when it is full, a view that can be paused while rows keep
//! arriving, and a selection that follows the newest row for as long as it is on the last
//! one. The change feed view and the Requests view are each one, with their own rows and
//! filter.

use std::collections::VecDeque;

use super::list::{move_selection, offset_showing};
use crate::tui::action::Action;

/// Rows a tail keeps; older ones are dropped and counted.
pub const BUFFER: usize = 10_000;

/// A list's `/` filter: parsed from what was typed, and asked about each row.
pub trait RowFilter<T>: Default {
    fn parse(text: &str) -> Self;
    fn matches(&self, row: &T) -> bool;
    /// The text it was parsed from.
    fn text(&self) -> &str;
}

#[derive(Debug, Clone)]
pub struct Tail<T, F> {
    /// Everything received and kept, oldest first.
    pub rows: VecDeque<T>,
    /// Which rows the view shows.
    pub filter: F,
    /// Rows dropped because the buffer was full.
    pub dropped: u64,
    pub received: u64,
    pub paused: bool,
    /// How many of `rows` the view shows: all of them, or while paused, those there were
    /// when it paused.
    pub shown: usize,
    /// The selection, as a position among the rows that pass the filter.
    pub selected: usize,
    pub offset: usize,
    /// The selection is on the newest row and moves with it as rows arrive.
    pub following: bool,
}

impl<T, F: Default> Default for Tail<T, F> {
    fn default() -> Tail<T, F> {
        Tail {
            rows: VecDeque::new(),
            filter: F::default(),
            dropped: 0,
            received: 0,
            paused: false,
            shown: 0,
            selected: 0,
            offset: 0,
            following: true,
        }
    }
}

impl<T, F: RowFilter<T>> Tail<T, F> {
    /// Adds rows at the bottom, dropping the oldest past [`BUFFER`].
    pub fn push(&mut self, rows: impl IntoIterator<Item = T>) {
        for r in rows {
            self.received += 1;
            if self.rows.len() == BUFFER {
                self.rows.pop_front();
                self.dropped += 1;
                self.shown = self.shown.saturating_sub(1);
                if !self.following {
                    // The selected row moved up one place (or left).
                    self.selected = self.selected.saturating_sub(1);
                }
            }
            self.rows.push_back(r);
        }
        if !self.paused {
            self.shown = self.rows.len();
            self.follow();
        }
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        if !paused {
            self.shown = self.rows.len();
            self.follow();
        }
    }

    /// Filters the view with `text`: a following selection goes to the newest row that
    /// passes, any other to the first.
    pub fn set_filter(&mut self, text: &str) {
        self.filter = F::parse(text);
        if self.following {
            self.follow();
        } else {
            self.selected = 0;
            self.offset = 0;
        }
    }

    fn follow(&mut self) {
        if self.following {
            self.selected = self.visible().len().saturating_sub(1);
        }
    }

    /// The rows the list shows (filtered, frozen while paused), as indices into `rows`.
    pub fn visible(&self) -> Vec<usize> {
        (0..self.shown.min(self.rows.len()))
            .filter(|&i| self.filter.matches(&self.rows[i]))
            .collect()
    }

    /// While paused, how many rows arrived that the view does not show yet.
    pub fn held_back(&self) -> Option<usize> {
        self.paused
            .then(|| self.rows.len().saturating_sub(self.shown))
    }

    pub fn selected_row(&self) -> Option<&T> {
        self.visible()
            .get(self.selected)
            .and_then(|&i| self.rows.get(i))
    }

    /// Moves the selection, a page being `page` rows; landing on the last row follows the
    /// newest again, leaving it stops following.
    pub fn navigate(&mut self, action: Action, page: usize) {
        let visible = self.visible().len();
        // Start from the window the list was drawn with (a following list scrolls as rows
        // arrive without `offset` being told).
        self.offset = offset_showing(self.selected, self.offset, page);
        move_selection(&mut self.selected, &mut self.offset, visible, page, action);
        self.following = self.selected + 1 >= visible;
    }

    /// Forgets every row (the filter and the pause stay).
    pub fn clear(&mut self) {
        let filter = std::mem::take(&mut self.filter);
        *self = Tail {
            filter,
            paused: self.paused,
            ..Tail::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `even` keeps even numbers; anything else keeps all.
    #[derive(Default)]
    struct Even(bool);

    impl RowFilter<u32> for Even {
        fn parse(text: &str) -> Even {
            Even(text == "even")
        }
        fn matches(&self, n: &u32) -> bool {
            !self.0 || n.is_multiple_of(2)
        }
        fn text(&self) -> &str {
            if self.0 { "even" } else { "" }
        }
    }

    fn tail() -> Tail<u32, Even> {
        Tail::default()
    }

    #[test]
    fn a_following_selection_stays_on_the_newest_row() {
        let mut t = tail();
        t.push([1, 2, 3]);
        assert_eq!(t.selected_row(), Some(&3));
        t.navigate(Action::Up, 10);
        assert!(!t.following);
        t.push([4]);
        assert_eq!(t.selected_row(), Some(&2), "a row chosen stays chosen");
        t.navigate(Action::Bottom, 10);
        t.push([5]);
        assert_eq!(t.selected_row(), Some(&5));
    }

    #[test]
    fn pause_keeps_receiving_and_resume_shows_everything() {
        let mut t = tail();
        t.push([1]);
        t.set_paused(true);
        t.push([2, 3]);
        assert_eq!(t.visible().len(), 1);
        assert_eq!(t.selected_row(), Some(&1));
        t.set_paused(false);
        assert_eq!(t.visible().len(), 3);
        assert_eq!(t.selected_row(), Some(&3));
        assert_eq!(t.received, 3);
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_and_counts() {
        let mut t = tail();
        t.push(0..BUFFER as u32 + 5);
        assert_eq!(t.rows.len(), BUFFER);
        assert_eq!(t.dropped, 5);
        assert_eq!(t.rows.front(), Some(&5));
        assert_eq!(t.selected_row(), Some(&(BUFFER as u32 + 4)));
    }

    #[test]
    fn the_filter_decides_which_row_is_the_newest() {
        let mut t = tail();
        t.set_filter("even");
        t.push([1, 2, 3, 4, 5]);
        assert_eq!(t.selected_row(), Some(&4));
        t.navigate(Action::Top, 10);
        t.set_filter("");
        assert_eq!(t.selected_row(), Some(&1));
        t.clear();
        assert!(t.rows.is_empty() && t.following);
    }
}
