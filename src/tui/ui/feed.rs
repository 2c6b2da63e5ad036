//! The change feed view: the live list, the selected event with its previous image and a
//! diff, and the events-per-second sparkline.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

use super::theme::theme;
use super::{
    ListArea, diff_line, escape, fit, fmt_bytes, fmt_ru, is_focused, mark_selected, pane,
    paused_note,
};
use crate::tui::state::App;
use crate::tui::state::document::item_diff;
use crate::tui::state::feed::{FeedModeChoice, FeedRow, FeedScope, FeedState};
use crate::tui::state::list::offset_showing;
use crate::tui::state::tree::pk_label;

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let feed = &app.feed;
    let scope = feed
        .scope
        .as_ref()
        .map_or("nothing followed".to_string(), |s| s.label());
    let mode = match feed.mode {
        FeedModeChoice::Latest => "latest version",
        FeedModeChoice::AllVersions => "all versions",
    };
    let state = paused_note(feed.tail.held_back());
    let block = pane(format!("Change feed · {scope} · {mode}{state}"), focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [top, list, detail] = areas(inner);
    draw_rate(f, app, top);
    let height = draw_list(f, feed, focused, list);
    draw_detail(f, app, detail);
    height
}

/// The rate line, the event list and the detail of the selected event, inside the border.
fn areas(inner: Rect) -> [Rect; 3] {
    let detail_height = (inner.height / 3).clamp(4, 14);
    Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length(detail_height),
    ])
    .areas(inner)
}

/// The event list's rows on a pane drawn in `area` (below its header row).
pub fn list(app: &App, area: Rect) -> ListArea {
    let [_, list, _] = areas(pane(String::new(), false).inner(area));
    let t = &app.feed.tail;
    ListArea::below(list, 1, t.selected, t.offset, t.visible().len())
}

/// The columns of the event list that fit: the container only when a whole database is
/// followed, the id gets the room left, and lsn and size go first when the pane is narrow.
struct Columns {
    container_w: usize,
    wide: bool,
    key_w: usize,
    id_w: usize,
}

impl Columns {
    fn new(width: u16, scope: Option<&FeedScope>) -> Columns {
        let container_w = if matches!(scope, Some(FeedScope::Database { .. })) {
            11
        } else {
            0
        };
        let mut id_w = (width as usize).saturating_sub(9 + 10 + container_w + 4 + 8 + 15 + 8);
        let wide = id_w >= 8;
        let key_w = if wide { 14 } else { 10 };
        if !wide {
            id_w = (width as usize).saturating_sub(9 + 10 + container_w + 4 + key_w + 1);
        }
        Columns {
            container_w,
            wide,
            key_w,
            id_w,
        }
    }

    /// The columns after the time and the operation.
    fn row(
        &self,
        container: &str,
        rng: &str,
        lsn: &str,
        key: &str,
        id: &str,
        size: &str,
    ) -> String {
        let (key_w, id_w) = (self.key_w, self.id_w);
        let mut s = String::new();
        if self.container_w > 0 {
            s.push_str(&format!("{} ", fit(container, 10)));
        }
        s.push_str(&format!("{rng:>3} "));
        if self.wide {
            s.push_str(&format!("{lsn:>7} "));
        }
        s.push_str(&format!("{} {}", fit(key, key_w), fit(id, id_w)));
        if self.wide {
            s.push_str(&format!(" {size:>7}"));
        }
        s
    }
}

/// The events that pass the filter, a row each under a header, or why there are none;
/// returns how many event rows fit.
fn draw_list(f: &mut Frame, feed: &FeedState, focused: bool, area: Rect) -> usize {
    let visible = feed.tail.visible();
    let height = area.height.saturating_sub(1) as usize;
    let offset = offset_showing(feed.tail.selected, feed.tail.offset, height);
    let cols = Columns::new(area.width, feed.scope.as_ref());
    let mut lines = vec![Line::styled(
        format!(
            "{:<8} {:<9} {}",
            "time",
            "op",
            cols.row("container", "rng", "lsn", "key", "id", "size")
        ),
        theme().header,
    )];
    for (row, &i) in visible.iter().enumerate().skip(offset).take(height) {
        let line = event_line(&cols, &feed.tail.rows[i]);
        lines.push(mark_selected(line, row == feed.tail.selected, focused));
    }
    let shown = feed.tail.shown.min(feed.tail.rows.len());
    if visible.is_empty() && shown > 0 {
        // Events came, the filter hides them all: say so, and how to see them.
        lines.push(Line::styled(
            format!(
                "the filter /{} hides all {} (/ then esc clears it)",
                feed.tail.filter.text,
                super::plural(shown as u64, "event")
            ),
            theme().dim,
        ));
    } else if visible.is_empty() {
        lines.push(Line::styled(
            if feed.subscription.is_some() {
                "waiting for changes… (writes from any process show up here)"
            } else if let Some(e) = &feed.error {
                e.as_str()
            } else {
                "select a container and press 3 to follow its feed"
            },
            theme().dim,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
    height
}

/// One change: when, what operation (coloured), where, and the item.
fn event_line(cols: &Columns, e: &FeedRow) -> Line<'static> {
    let time = chrono::DateTime::from_timestamp(e.crts, 0)
        .map(|t| t.format("%H:%M:%S").to_string())
        .unwrap_or_default();
    let op_style = match e.op.as_str() {
        "create" => theme().added,
        "delete" => theme().removed,
        _ => theme().number,
    };
    Line::from(vec![
        Span::raw(format!("{time:<8} ")),
        Span::styled(format!("{} ", fit(&e.op, 9)), op_style),
        Span::raw(cols.row(
            &e.container,
            &e.range,
            &e.lsn.to_string(),
            &pk_label(&e.pk),
            &e.id,
            &fmt_bytes(e.size as u64),
        )),
    ])
}

fn draw_rate(f: &mut Frame, app: &App, area: Rect) {
    let feed = &app.feed;
    let [text, spark] =
        Layout::horizontal([Constraint::Length(44), Constraint::Min(4)]).areas(area);
    let now = feed.rate.iter().rev().nth(1).copied().unwrap_or(0);
    let filter = if feed.tail.filter.text.is_empty() {
        String::new()
    } else {
        format!(" · filter {}", feed.tail.filter.text)
    };
    f.render_widget(
        Paragraph::new(vec![
            Line::styled(
                format!(
                    "{now} ev/s · {} received · {} dropped",
                    feed.tail.received, feed.tail.dropped
                ),
                theme().title,
            ),
            Line::styled(
                format!("{} RU read{filter}", fmt_ru(feed.request_charge)),
                theme().dim,
            ),
        ]),
        text,
    );
    let data: Vec<u64> = feed.rate.iter().copied().collect();
    f.render_widget(Sparkline::default().data(&data).style(theme().info), spark);
}

fn draw_detail(f: &mut Frame, app: &App, area: Rect) {
    let Some(e) = app.feed.tail.selected_row() else {
        return;
    };
    let mut lines = vec![Line::styled(
        format!(
            "{} {} · range {} · lsn {}{}",
            e.op,
            escape(&e.id),
            e.range,
            e.lsn,
            if e.ttl_expired {
                " · expired by TTL"
            } else {
                ""
            }
        ),
        theme().header,
    )];
    match (&e.previous, &e.current) {
        (Some(prev), Some(cur)) => {
            lines.push(Line::styled(
                "changes from the previous image:",
                theme().dim,
            ));
            lines.extend(item_diff(prev, cur).into_iter().map(diff_line));
        }
        (Some(prev), None) => {
            lines.push(Line::styled("previous image:", theme().dim));
            lines.push(Line::styled(
                escape(&prev.to_string()).into_owned(),
                theme().removed,
            ));
        }
        (None, Some(cur)) => lines.extend(
            serde_json::to_string_pretty(cur)
                .unwrap_or_default()
                .lines()
                .map(|l| Line::styled(escape(l).into_owned(), theme().string)),
        ),
        (None, None) => lines.push(Line::styled(
            "no image (deletes carry one only with previous images kept)",
            theme().dim,
        )),
    }
    f.render_widget(Paragraph::new(lines), area);
}
