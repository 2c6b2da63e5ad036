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

#[derive(Debug, Clone)]
pub struct Tail<T> {
    /// Everything received and kept, oldest first.
    pub rows: VecDeque<T>,
    /// Rows dropped because the buffer was full.
    pub dropped: u64,
    pub received: u64,
    pub paused: bool,
    /// How many of `rows` the view shows: all of them, or while paused, those there were
    /// when it paused.
    pub shown: usize,
    /// The selection, as a position among the rows that pass the view's filter.
    pub selected: usize,
    pub offset: usize,
    /// The selection is on the newest row and moves with it as rows arrive.
    pub following: bool,
}

impl<T> Default for Tail<T> {
    fn default() -> Tail<T> {
        Tail {
            rows: VecDeque::new(),
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

impl<T> Tail<T> {
    /// Adds rows at the bottom, dropping the oldest past [`BUFFER`]; `keep` is the view's
    /// filter, which says where the newest visible row is for a following selection.
    pub fn push(&mut self, rows: impl IntoIterator<Item = T>, keep: impl Fn(&T) -> bool) {
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
            self.follow(keep);
        }
    }

    pub fn set_paused(&mut self, paused: bool, keep: impl Fn(&T) -> bool) {
        self.paused = paused;
        if !paused {
            self.shown = self.rows.len();
            self.follow(keep);
        }
    }

    /// After the filter changed: a following selection goes to the newest visible row,
    /// any other to the first.
    pub fn refiltered(&mut self, keep: impl Fn(&T) -> bool) {
        if self.following {
            self.follow(keep);
        } else {
            self.selected = 0;
            self.offset = 0;
        }
    }

    fn follow(&mut self, keep: impl Fn(&T) -> bool) {
        if self.following {
            self.selected = self.visible(keep).len().saturating_sub(1);
        }
    }

    /// The rows the list shows (filtered, frozen while paused), as indices into `rows`.
    pub fn visible(&self, keep: impl Fn(&T) -> bool) -> Vec<usize> {
        (0..self.shown.min(self.rows.len()))
            .filter(|&i| keep(&self.rows[i]))
            .collect()
    }

    /// The selected row among those that pass `keep`.
    pub fn selected_row(&self, keep: impl Fn(&T) -> bool) -> Option<&T> {
        self.visible(keep)
            .get(self.selected)
            .and_then(|&i| self.rows.get(i))
    }

    /// Moves the selection among `visible` rows, a page being `page` rows; landing on the
    /// last row follows the newest again, leaving it stops following.
    pub fn navigate(&mut self, visible: usize, page: usize, action: Action) {
        // Start from the window the list was drawn with (a following list scrolls as rows
        // arrive without `offset` being told).
        self.offset = offset_showing(self.selected, self.offset, page);
        move_selection(&mut self.selected, &mut self.offset, visible, page, action);
        self.following = self.selected + 1 >= visible;
    }

    pub fn clear(&mut self) {
        *self = Tail {
            paused: self.paused,
            ..Tail::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &u32) -> bool {
        true
    }

    #[test]
    fn a_following_selection_stays_on_the_newest_row() {
        let mut t = Tail::default();
        t.push([1, 2, 3], all);
        assert_eq!(t.selected_row(all), Some(&3));
        t.navigate(3, 10, Action::Up);
        assert!(!t.following);
        t.push([4], all);
        assert_eq!(t.selected_row(all), Some(&2), "a row chosen stays chosen");
        t.navigate(4, 10, Action::Bottom);
        t.push([5], all);
        assert_eq!(t.selected_row(all), Some(&5));
    }

    #[test]
    fn pause_keeps_receiving_and_resume_shows_everything() {
        let mut t = Tail::default();
        t.push([1], all);
        t.set_paused(true, all);
        t.push([2, 3], all);
        assert_eq!(t.visible(all).len(), 1);
        assert_eq!(t.selected_row(all), Some(&1));
        t.set_paused(false, all);
        assert_eq!(t.visible(all).len(), 3);
        assert_eq!(t.selected_row(all), Some(&3));
        assert_eq!(t.received, 3);
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_and_counts() {
        let mut t = Tail::default();
        t.push(0..BUFFER as u32 + 5, all);
        assert_eq!(t.rows.len(), BUFFER);
        assert_eq!(t.dropped, 5);
        assert_eq!(t.rows.front(), Some(&5));
        assert_eq!(t.selected_row(all), Some(&(BUFFER as u32 + 4)));
    }

    #[test]
    fn the_filter_decides_which_row_is_the_newest() {
        let even = |n: &u32| n.is_multiple_of(2);
        let mut t = Tail::default();
        t.push([1, 2, 3, 4, 5], even);
        assert_eq!(t.selected_row(even), Some(&4));
        t.navigate(2, 10, Action::Top);
        t.refiltered(all);
        assert_eq!(t.selected_row(all), Some(&1));
    }
}
