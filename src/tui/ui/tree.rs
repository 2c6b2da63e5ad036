//! The resource tree pane.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::theme;
use super::{clip, fmt_bytes, fmt_count, fmt_ru, is_focused, mark_selected, pane};
use crate::tui::state::App;
use crate::tui::state::list::offset_showing;
use crate::tui::state::tree::{Node, NodeKind, pk_label};

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let focused = is_focused(app, false);
    let title = match &app.tree.filter {
        Some(q) => format!("Resources /{q}"),
        None => "Resources".to_string(),
    };
    let block = pane(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let height = inner.height as usize;
    let t = &app.tree;
    // Keep the selection on screen without mutating state: derive the window here.
    let offset = offset_showing(t.selected, t.offset, height);
    let width = inner.width as usize;
    let lines: Vec<Line> = (offset..t.row_count().min(offset + height))
        .filter_map(|row| t.row_index(row).map(|i| (row, &t.nodes[i])))
        .map(|(row, node)| {
            let line = node_line(node, width);
            mark_selected(line, row == t.selected, focused)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

fn node_line(node: &Node, width: usize) -> Line<'static> {
    let indent = "  ".repeat(node.depth as usize);
    let marker = if node.expandable() {
        if node.expanded { "▾ " } else { "▸ " }
    } else {
        "  "
    };
    let (name, detail, name_style) = match &node.kind {
        NodeKind::Database { db, containers } => (
            db.clone(),
            super::plural(*containers as u64, "container"),
            theme().header,
        ),
        NodeKind::Container {
            c,
            pk_paths,
            items,
            bytes,
            ..
        } => (
            c.clone(),
            format!(
                "{} · {} · {}",
                pk_paths.join(","),
                fmt_count(*items),
                fmt_bytes(*bytes)
            ),
            theme().key,
        ),
        NodeKind::Range {
            range,
            items,
            bytes,
            ru_now,
            ..
        } => (
            format!("range {range}"),
            format!(
                "{} · {} · {} RU/s",
                fmt_count(*items),
                fmt_bytes(*bytes),
                fmt_ru(*ru_now)
            ),
            theme().number,
        ),
        NodeKind::Logical {
            pk,
            items,
            bytes,
            hottest,
            ..
        } => (
            pk_label(pk),
            format!("{} · {}", fmt_count(*items), fmt_bytes(*bytes)),
            if *hottest {
                theme().hot
            } else {
                theme().string
            },
        ),
        NodeKind::Item { id, .. } => (id.clone(), String::new(), theme().title),
        NodeKind::Scripts { kind, count, .. } => (
            crate::tui::state::script::group_label(*kind).to_string(),
            count.to_string(),
            theme().header,
        ),
        NodeKind::Script { id, detail, .. } => (id.clone(), detail.clone(), theme().literal),
        NodeKind::More { .. } => ("… more".into(), String::new(), theme().dim),
        NodeKind::Note(n) => (n.clone(), String::new(), theme().dim),
    };
    let hot = matches!(node.kind, NodeKind::Logical { hottest: true, .. });
    let head = format!("{indent}{marker}{}", if hot { "🔥" } else { "" });
    let head_width = Span::raw(head.as_str()).width();
    let room = width.saturating_sub(head_width);
    // A key value's counts keep their room: a long key (a GUID) is cut first, down to a
    // few characters, and only then the counts. Other names (containers, ranges) come
    // first, as they say which row this is.
    let detail_width = if detail.is_empty() {
        0
    } else {
        super::width(&detail) + 1
    };
    let name_room = if matches!(node.kind, NodeKind::Logical { .. }) {
        room.saturating_sub(detail_width).max(room.min(KEY_MIN))
    } else {
        room
    };
    let name = clip(&name, name_room);
    let room = room.saturating_sub(super::width(&name) + 1);
    let mut spans = vec![Span::raw(head), Span::styled(name, name_style)];
    if !detail.is_empty() && room > 3 {
        spans.push(Span::styled(
            format!(" {}", clip(&detail, room)),
            theme().dim,
        ));
    }
    Line::from(spans)
}

/// The fewest characters of a key value a row shows before it cuts the counts beside it.
const KEY_MIN: usize = 5;
