//! The mouse as the keyboard: a click or a turn of the wheel becomes the focus it gives
//! and the actions a key would send (a click on a row is the moves that select it), so
//! mouse and keys go through the same `act`. Where things are comes from the layout the
//! last frame was drawn with (`ui::panes`, `ui::query::areas`).

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use crate::tui::action::Action;
use crate::tui::state::list::offset_showing;
use crate::tui::state::{App, Focus, View};
use crate::tui::ui;

/// Rows the wheel moves per notch.
const WHEEL_ROWS: usize = 3;

/// What a mouse event means: the pane it focuses and the actions to perform there.
#[derive(Debug, Default, PartialEq)]
pub struct Intent {
    pub focus: Option<Focus>,
    pub actions: Vec<Action>,
}

/// The intent of `m` on the screen last drawn; nothing while a popup is open or outside
/// the panes.
pub fn intent(app: &App, m: &MouseEvent) -> Intent {
    if !app.layers.is_empty() {
        return Intent::default();
    }
    let at = Position::new(m.column, m.row);
    let panes = ui::panes(app, app.screen);
    let (focus, list) = if panes.tree.contains(at) {
        (Focus::Tree, Some(tree_list(app, panes.tree)))
    } else if panes.view.contains(at) {
        match app.view {
            View::Query => {
                let [editor, results, _] = ui::query::areas(app, panes.view);
                if editor.contains(at) {
                    (Focus::Editor, None)
                } else if results.contains(at) {
                    (Focus::View, Some(results_list(app, results)))
                } else {
                    (Focus::View, None)
                }
            }
            View::Feed => (Focus::View, Some(ui::feed::list(app, panes.view).into())),
            View::Partitions => (
                Focus::View,
                ui::partitions::list(app, panes.view).map(ListOnScreen::from),
            ),
            View::Workbench => (
                Focus::View,
                ui::workbench::list(app, panes.view).map(ListOnScreen::from),
            ),
            View::Requests => (
                Focus::View,
                ui::requests::list(app, panes.view).map(ListOnScreen::from),
            ),
            View::Item | View::Advisor => (Focus::View, None),
        }
    } else {
        return Intent::default();
    };
    let actions = match m.kind {
        MouseEventKind::ScrollDown if focus != Focus::Editor => vec![Action::Down; WHEEL_ROWS],
        MouseEventKind::ScrollUp if focus != Focus::Editor => vec![Action::Up; WHEEL_ROWS],
        MouseEventKind::Down(MouseButton::Left) => {
            list.and_then(|l| l.moves_to(m.row)).unwrap_or_default()
        }
        _ => return Intent::default(),
    };
    Intent {
        focus: Some(focus),
        actions,
    }
}

/// A list on screen: its first row's screen line, which list row that shows, the rows it
/// has and the selected one.
struct ListOnScreen {
    top: u16,
    first: usize,
    height: usize,
    len: usize,
    selected: usize,
}

impl From<ui::ListArea> for ListOnScreen {
    fn from(l: ui::ListArea) -> ListOnScreen {
        ListOnScreen {
            top: l.rows.y,
            first: l.first,
            height: usize::from(l.rows.height),
            len: l.len,
            selected: l.selected,
        }
    }
}

impl ListOnScreen {
    /// The Up or Down moves that select the row at screen line `y`, if a row is there.
    fn moves_to(&self, y: u16) -> Option<Vec<Action>> {
        let line = usize::from(y.checked_sub(self.top)?);
        if line >= self.height {
            return None;
        }
        let row = self.first + line;
        if row >= self.len {
            return None;
        }
        Some(if row >= self.selected {
            vec![Action::Down; row - self.selected]
        } else {
            vec![Action::Up; self.selected - row]
        })
    }
}

/// The tree's rows inside its border.
fn tree_list(app: &App, area: Rect) -> ListOnScreen {
    let height = usize::from(area.height.saturating_sub(2));
    let t = &app.tree;
    ListOnScreen {
        top: area.y + 1,
        first: offset_showing(t.selected, t.offset, height),
        height,
        len: t.row_count(),
        selected: t.selected,
    }
}

/// The results' rows inside the border, under the table's header (JSON rows have none).
fn results_list(app: &App, area: Rect) -> ListOnScreen {
    let q = &app.query;
    let header = u16::from(q.mode == crate::tui::state::query::ResultsMode::Table);
    let height = usize::from(area.height.saturating_sub(2 + header));
    ListOnScreen {
        top: area.y + 1 + header,
        first: offset_showing(q.selected, q.offset, height),
        height,
        len: q.rows().len(),
        selected: q.selected,
    }
}
