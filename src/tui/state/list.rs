//! A list seen through a window of rows: moving its selection with the navigation actions,
//! and where the window starts so the selection stays on screen. Drawing and `update` both
//! use [`offset_showing`], so a list scrolls the same way whichever of them moved it.

use crate::tui::action::Action;

/// The first row of a window of `height` rows that shows row `selected`: `offset` when it
/// already does, else scrolled just far enough (a window of no rows counts as one).
pub fn offset_showing(selected: usize, offset: usize, height: usize) -> usize {
    let height = height.max(1);
    if selected < offset {
        selected
    } else if selected >= offset + height {
        selected + 1 - height
    } else {
        offset
    }
}

/// Moves a selection in a list of `len` rows by one navigation action (a page is `page`
/// rows) and keeps it inside the window that starts at `offset`.
pub fn move_selection(
    selected: &mut usize,
    offset: &mut usize,
    len: usize,
    page: usize,
    action: Action,
) {
    let page = page.max(1);
    let last = len.saturating_sub(1);
    *selected = match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (*selected + 1).min(last),
        Action::PageUp => selected.saturating_sub(page),
        Action::PageDown => (*selected + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => *selected,
    };
    *offset = offset_showing(*selected, *offset, page);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_moves_only_as_far_as_the_selection_needs() {
        // Inside the window: it stays.
        assert_eq!(offset_showing(5, 3, 4), 3);
        // Above it: the selection becomes the first row.
        assert_eq!(offset_showing(1, 3, 4), 1);
        // Below it: the selection becomes the last row.
        assert_eq!(offset_showing(9, 3, 4), 6);
        // No rows to show: as if one.
        assert_eq!(offset_showing(9, 3, 0), 9);
    }

    #[test]
    fn paging_past_the_end_stops_at_the_last_row_and_scrolls_to_it() {
        let (mut selected, mut offset) = (0, 0);
        move_selection(&mut selected, &mut offset, 25, 10, Action::PageDown);
        assert_eq!((selected, offset), (10, 1));
        move_selection(&mut selected, &mut offset, 25, 10, Action::Bottom);
        assert_eq!((selected, offset), (24, 15));
        move_selection(&mut selected, &mut offset, 25, 10, Action::PageUp);
        assert_eq!((selected, offset), (14, 14));
        move_selection(&mut selected, &mut offset, 25, 10, Action::Top);
        assert_eq!((selected, offset), (0, 0));
    }
}
