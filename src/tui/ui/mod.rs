//! Drawing: pure functions from the state to a frame. Nothing here changes state or
//! touches the store.

pub mod advisor;
mod details;
pub mod feed;
mod item;
mod overlays;
pub mod partitions;
pub mod query;
mod query_stats;
pub mod requests;
mod script;
mod status;
mod text;
pub mod theme;
mod tree;
pub mod workbench;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub use text::{clip, columns_before, escape, fit, width};

use super::keymap::Mode;
use super::state::{App, Focus, View};
use theme::theme;

pub use super::format::{fmt_bytes, fmt_count, fmt_rate, fmt_ru, plural};

/// Where the panes are on a screen of `area`: drawing lays them out with it, and a
/// click is placed with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Panes {
    /// The resource tree (empty when another pane is zoomed).
    pub tree: Rect,
    /// The view on the right (empty when the tree is zoomed).
    pub view: Rect,
    pub status: Rect,
    pub hints: Rect,
}

/// The panes of a screen of `area`. The tree takes a third of the width (so long names
/// and keys show on a wide screen), or, zoomed, the focused pane takes it all.
pub fn panes(app: &App, area: Rect) -> Panes {
    let [main, status, hints] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let tree_width = match (app.zoom, app.focus) {
        (true, Focus::Tree) => main.width,
        (true, _) => 0,
        (false, _) => (main.width / 3).max(24).min(main.width),
    };
    let [tree, view] =
        Layout::horizontal([Constraint::Length(tree_width), Constraint::Fill(1)]).areas(main);
    Panes {
        tree,
        view,
        status,
        hints,
    }
}

/// A list as drawn: the screen rows its entries take, the entry on the first of them, how
/// many entries it has and the selected one. The mouse places a click with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListArea {
    pub rows: Rect,
    pub first: usize,
    pub len: usize,
    pub selected: usize,
}

impl ListArea {
    /// The list whose entries start at row `top` of `area` (below its headers), scrolled
    /// as drawing scrolls it.
    pub fn below(area: Rect, headers: u16, selected: usize, offset: usize, len: usize) -> ListArea {
        let rows = Rect::new(
            area.x,
            area.y.saturating_add(headers),
            area.width,
            area.height.saturating_sub(headers),
        );
        ListArea {
            rows,
            first: crate::tui::state::list::offset_showing(
                selected,
                offset,
                usize::from(rows.height),
            ),
            len,
            selected,
        }
    }
}

/// Draws a frame and returns how many list rows the main view shows (for paging keys).
pub fn draw(f: &mut Frame, app: &App) -> usize {
    let area = f.area();
    let Panes {
        tree: left,
        view: right,
        status,
        hints,
    } = panes(app, area);
    if left.width > 0 {
        tree::draw(f, app, left);
    }
    if right.width == 0 {
        status::draw(f, app, status);
        draw_hints(f, app, hints);
        overlays::draw(f, app, area);
        return app.page_rows.max(1);
    }
    let rows = match app.view {
        View::Item => match (&app.script, &app.details) {
            (Some(s), _) => script::draw(f, app, s, right),
            (None, Some(d)) => details::draw(f, app, d, right),
            (None, None) => item::draw(f, app, right),
        },
        View::Query => query::draw(f, app, right),
        View::Feed => feed::draw(f, app, right),
        View::Partitions => partitions::draw(f, app, right),
        View::Workbench => workbench::draw(f, app, right),
        View::Requests => requests::draw(f, app, right),
        View::Advisor => advisor::draw(f, app, right),
    };
    status::draw(f, app, status);
    draw_hints(f, app, hints);
    overlays::draw(f, app, area);
    rows.max(1)
}

/// A bordered block whose border shows whether it has focus.
pub fn pane(title: String, focused: bool) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(if focused {
            theme().focus_border
        } else {
            theme().border
        })
        .title(Span::styled(
            // Titles name user resources (items, containers): escaped like the rest.
            format!(" {} ", escape(&title)),
            if focused {
                theme().title_focus
            } else {
                theme().title
            },
        ))
}

/// The hint bar: generated from the bindings live in the current mode.
fn draw_hints(f: &mut Frame, app: &App, area: Rect) {
    let mode = app.mode();
    let keymap = &app.keymap;
    let wanted: &[super::action::Action] = hint_actions(mode, app);
    let mut spans = Vec::new();
    for action in wanted {
        if let Some(key) = keymap.key_for(mode, *action) {
            spans.push(Span::styled(format!(" {key}"), theme().hint_key));
            spans.push(Span::styled(format!(" {} ", action.label()), theme().hint));
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(theme().hints), area);
}

fn hint_actions(mode: Mode, app: &App) -> &'static [super::action::Action] {
    use super::action::Action as A;
    match mode {
        Mode::Tree => &[
            A::Select,
            A::Help,
            A::Details,
            A::Filter,
            A::NewQuery,
            A::ShowFeed,
            A::Palette,
            A::Quit,
        ],
        Mode::Item if app.script.is_some() => &[
            A::ExecuteScript,
            A::Help,
            A::EditItem,
            A::NewItem,
            A::DeleteItem,
            A::CopyValue,
        ],
        Mode::Item => &[
            A::Select,
            A::Help,
            A::CopyValue,
            A::CopyPath,
            A::EditItem,
            A::DeleteItem,
            A::ToggleSystem,
        ],
        Mode::Editor if app.query.running.is_some() => &[A::CancelQuery, A::Help],
        Mode::Editor => &[
            A::RunQuery,
            A::Help,
            A::Complete,
            A::QueryParams,
            A::HistoryPrev,
            A::ToggleResults,
            A::FocusNext,
            A::Palette,
        ],
        Mode::Results => &[
            A::Select,
            A::Help,
            A::ShowValue,
            A::Filter,
            A::Sort,
            A::ExportResults,
            A::LoadMore,
            A::ToggleResults,
            A::FocusEditor,
            A::CopyValue,
        ],
        Mode::Feed => &[
            A::FeedPause,
            A::Help,
            A::Filter,
            A::FeedMode,
            A::FeedStart,
            A::FeedScope,
            A::FeedClear,
        ],
        Mode::Partitions => &[A::Refresh, A::Help, A::FocusNext, A::Palette],
        Mode::Workbench => &[
            A::Refresh,
            A::Help,
            A::Select,
            A::WorkbenchSuite,
            A::Palette,
        ],
        Mode::Requests => &[
            A::RequestsPause,
            A::Help,
            A::Filter,
            A::Select,
            A::Gateway,
            A::RequestsClear,
            A::CopyValue,
        ],
        Mode::Advisor => &[
            A::Refresh,
            A::Help,
            A::AdvisorWorkload,
            A::AdvisorCandidates,
            A::Right,
            A::AdvisorCopy,
            A::CancelQuery,
        ],
        Mode::Palette => &[A::Select, A::Back],
        Mode::Help => &[A::Down, A::Up, A::Back],
        Mode::Value => &[A::Down, A::Up, A::CopyValue, A::Back],
        Mode::Input => &[A::Back],
    }
}

/// ` · PAUSED (12 buffered)` in a live list's title while it is paused.
pub fn paused_note(held_back: Option<usize>) -> String {
    held_back.map_or_else(String::new, |n| format!(" · PAUSED ({n} buffered)"))
}

/// One line of an item diff (`item_diff`), coloured by what happened to the property.
pub fn diff_line(change: String) -> Line<'static> {
    let change = escape(&change).into_owned();
    let style = match change.chars().next() {
        Some('+') => theme().added,
        Some('-') => theme().removed,
        _ => theme().number,
    };
    Line::styled(change, style)
}

/// A list row, marked when it is the selected one (brighter while its list has focus).
/// The selection's style goes onto every span too: what the theme sets for it (a black
/// foreground) wins over the colours the row's parts have of their own.
pub fn mark_selected(line: Line<'_>, selected: bool, focused: bool) -> Line<'_> {
    if !selected {
        return line;
    }
    let style = if focused {
        theme().selected
    } else {
        theme().selected_unfocused
    };
    let mut line = line.style(style);
    for span in &mut line.spans {
        span.style = span.style.patch(style);
    }
    line
}

pub fn is_focused(app: &App, view: bool) -> bool {
    app.layers.is_empty()
        && if view {
            app.focus == Focus::View
        } else {
            app.focus == Focus::Tree
        }
}

#[cfg(test)]
mod tests {
    use super::plural;
    use super::theme::theme;
    use ratatui::text::{Line, Span};

    #[test]
    fn the_selection_style_wins_over_the_colours_of_a_rows_parts() {
        let line = Line::from(vec![
            Span::styled("name", theme().key),
            Span::styled(" 3 · 1 KB", theme().dim),
        ]);
        let marked = super::mark_selected(line, true, true);
        for span in &marked.spans {
            assert_eq!(span.style.fg, theme().selected.fg, "{span:?}");
            assert_eq!(span.style.bg, theme().selected.bg, "{span:?}");
        }
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(plural(1u64, "container"), "1 container");
        assert_eq!(plural(0u64, "container"), "0 containers");
        assert_eq!(plural(2u64, "request"), "2 requests");
    }
}
