//! The item view: a collapsible, coloured JSON tree with system properties set apart.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

use super::theme::THEME;
use super::{fmt_ru, is_focused, pane, selected_style};
use crate::tui::state::App;
use crate::tui::state::json_tree::{Row, RowValue, Step};
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
                .style(THEME.dim)
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
    let offset = if t.selected < t.offset {
        t.selected
    } else if t.selected >= t.offset + height {
        t.selected + 1 - height
    } else {
        t.offset
    };
    let lines: Vec<Line> = t
        .rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, r)| {
            let line = row_line(r);
            if i == t.selected {
                line.style(selected_style(focused))
            } else {
                line
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), body);
    if let Some(diff) = &item.diff {
        let mut lines = vec![Line::styled("last save changed:", THEME.dim)];
        lines.extend(diff.iter().map(|d| {
            let style = match d.chars().next() {
                Some('+') => THEME.added,
                Some('-') => THEME.removed,
                _ => THEME.number,
            };
            Line::styled(d.clone(), style)
        }));
        f.render_widget(Paragraph::new(lines), diff_area);
    }
    height
}

fn row_line(r: &Row) -> Line<'static> {
    let mut spans = vec![Span::raw("  ".repeat(r.depth as usize))];
    let key_style = if r.system { THEME.system } else { THEME.key };
    match &r.key {
        Some(Step::Key(k)) => {
            spans.push(Span::styled(format!("{k:?}"), key_style));
            spans.push(Span::styled(": ", THEME.punct));
        }
        Some(Step::Index(i)) => {
            spans.push(Span::styled(format!("[{i}] "), THEME.dim));
        }
        None => {}
    }
    match &r.value {
        RowValue::Open { array, len, folded } => {
            let (open, close) = if *array { ("[", "]") } else { ("{", "}") };
            if *folded {
                let what = if *array { "items" } else { "fields" };
                spans.push(Span::styled(format!("{open} … {close}"), THEME.punct));
                spans.push(Span::styled(format!("  {len} {what}"), THEME.dim));
            } else {
                spans.push(Span::styled(open.to_string(), THEME.punct));
            }
        }
        RowValue::Close { array } => {
            spans.push(Span::styled(
                if *array { "]" } else { "}" }.to_string(),
                THEME.punct,
            ));
        }
        RowValue::Scalar(v) => {
            let style = if r.system {
                THEME.system
            } else {
                match v {
                    Value::String(_) => THEME.string,
                    Value::Number(_) => THEME.number,
                    _ => THEME.literal,
                }
            };
            spans.push(Span::styled(v.to_string(), style));
        }
        RowValue::SystemHeader => {
            spans.push(Span::styled("── system properties ──", THEME.system));
        }
    }
    Line::from(spans)
}
