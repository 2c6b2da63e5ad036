//! The item view: a collapsible, coloured JSON tree with system properties set apart.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

use super::theme::theme;
use super::{diff_line, escape, fmt_ru, is_focused, mark_selected, pane};
use crate::tui::state::App;
use crate::tui::state::json_tree::{Row, RowValue, Step};
use crate::tui::state::list::offset_showing;
use crate::tui::state::tree::pk_label;

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let Some(item) = &app.item else {
        let block = pane("Item".into(), focused);
        let text = if app.item_loading.is_some() {
            "loading…"
        } else {
            "Select an item in the tree (Enter) or a query result to see it here."
        };
        f.render_widget(
            Paragraph::new(text)
                .style(theme().dim)
                .wrap(Wrap { trim: true })
                .block(block),
            area,
        );
        return area.height.saturating_sub(2) as usize;
    };
    let title = format!(
        "{} · {}/{} · pk {}{}",
        item.id,
        item.db,
        item.c,
        pk_label(&item.pk),
        if item.range.is_empty() {
            String::new()
        } else {
            format!(
                " · range {} · {} RU",
                item.range,
                fmt_ru(item.request_charge)
            )
        }
    );
    let block = pane(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let diff_height = item
        .diff
        .as_ref()
        .map_or(0, |d| (d.len() as u16 + 1).min(6));
    let [body, diff_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(diff_height)]).areas(inner);
    let height = body.height as usize;
    let t = &item.tree;
    let offset = offset_showing(t.selected, t.offset, height);
    let lines: Vec<Line> = t
        .rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, r)| {
            let line = row_line(r);
            mark_selected(line, i == t.selected, focused)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), body);
    if let Some(diff) = &item.diff {
        let mut lines = vec![Line::styled("last save changed:", theme().dim)];
        lines.extend(diff.iter().cloned().map(diff_line));
        f.render_widget(Paragraph::new(lines), diff_area);
    }
    height
}

fn row_line(r: &Row) -> Line<'static> {
    let mut spans = vec![Span::raw("  ".repeat(r.depth as usize))];
    let key_style = if r.system {
        theme().system
    } else {
        theme().key
    };
    match &r.key {
        Some(Step::Key(k)) => {
            spans.push(Span::styled(
                escape(&Value::String(k.clone()).to_string()).into_owned(),
                key_style,
            ));
            spans.push(Span::styled(": ", theme().punct));
        }
        Some(Step::Index(i)) => {
            spans.push(Span::styled(format!("[{i}] "), theme().dim));
        }
        None => {}
    }
    match &r.value {
        RowValue::Open { array, len, folded } => {
            let (open, close) = if *array { ("[", "]") } else { ("{", "}") };
            if *folded {
                let what = if *array { "items" } else { "fields" };
                spans.push(Span::styled(format!("{open} … {close}"), theme().punct));
                spans.push(Span::styled(format!("  {len} {what}"), theme().dim));
            } else {
                spans.push(Span::styled(open.to_string(), theme().punct));
            }
        }
        RowValue::Close { array } => {
            spans.push(Span::styled(
                if *array { "]" } else { "}" }.to_string(),
                theme().punct,
            ));
        }
        RowValue::Scalar(v) => {
            let style = if r.system {
                theme().system
            } else {
                match v {
                    Value::String(_) => theme().string,
                    Value::Number(_) => theme().number,
                    _ => theme().literal,
                }
            };
            spans.push(Span::styled(escape(&v.to_string()).into_owned(), style));
        }
        RowValue::SystemHeader => {
            spans.push(Span::styled("── system properties ──", theme().system));
        }
    }
    Line::from(spans)
}
