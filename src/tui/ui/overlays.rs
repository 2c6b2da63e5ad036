//! Layers drawn over the panes: help (generated from the keymap), the palette, prompts,
//! the parameters form and confirmations.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::theme::theme;
use super::{clip, columns_before, fit, mark_selected, pane, width};
use crate::tui::keymap::Mode;
use crate::tui::state::document::without_system;
use crate::tui::state::editor::TextBuffer;
use crate::tui::state::list::offset_showing;
use crate::tui::state::script::{ExecuteField, ExecuteForm};
use crate::tui::state::{App, Choice, Conflict, Layer};

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    for (i, layer) in app.layers.iter().enumerate() {
        let top = i + 1 == app.layers.len();
        match layer {
            Layer::Help { scroll } => help(f, app, area, *scroll),
            Layer::Messages { scroll } => messages(f, app, area, *scroll),
            Layer::Palette => palette(f, app, area, top),
            Layer::History { input, selected } => history(f, app, area, input, *selected, top),
            Layer::Confirm { text, .. } => confirm(f, area, text),
            Layer::Choose { text, choices } => choose(f, area, text, choices),
            Layer::Conflict(c) => conflict(f, area, c),
            Layer::Value {
                title,
                text,
                scroll,
            } => value(f, app, area, title, text, *scroll),
            Layer::Prompt { title, input, .. } => prompt(f, area, title, input, top),
            Layer::Params { fields, selected } => params(f, area, fields, *selected, top),
            Layer::Execute(form) => execute_form(f, area, form, top),
        }
    }
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The session's messages, whole (wrapped), each with its time; errors in their colour.
fn messages(f: &mut Frame, app: &App, area: Rect, scroll: usize) {
    let r = centered(
        area,
        area.width.saturating_sub(4).clamp(40, 120),
        area.height.saturating_sub(2),
    );
    f.render_widget(Clear, r);
    let block = pane(
        format!("Messages · {} this session (esc closes)", app.log.len()),
        true,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    if app.log.is_empty() {
        f.render_widget(Paragraph::new("No messages yet.").style(theme().dim), inner);
        return;
    }
    let lines: Vec<Line> = app
        .log
        .iter()
        .map(|m| {
            let style = match m.level {
                crate::tui::state::Level::Info => theme().info,
                crate::tui::state::Level::Error => theme().error,
            };
            Line::from(vec![
                Span::styled(format!("{} ", clock(m.at)), theme().dim),
                Span::styled(m.text.clone(), style),
            ])
        })
        .collect();
    // The scroll names the message at the bottom; above it, as many earlier ones as
    // fit, each wrapped onto the rows it needs.
    let last = scroll.min(lines.len() - 1);
    let width = usize::from(inner.width.max(1));
    let mut rows = 0;
    let mut from = last + 1;
    while from > 0 {
        let need = lines[from - 1].width().div_ceil(width).max(1);
        if rows + need > usize::from(inner.height) && from <= last {
            break;
        }
        rows += need;
        from -= 1;
    }
    f.render_widget(
        Paragraph::new(lines[from..=last].to_vec()).wrap(Wrap { trim: false }),
        inner,
    );
}

/// `14:03:27` in the local time zone.
fn clock(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%H:%M:%S")
                .to_string()
        })
        .unwrap_or_default()
}

/// Every binding live in the mode under the help layer, from the keymap itself.
fn help(f: &mut Frame, app: &App, area: Rect, scroll: usize) {
    let mode = {
        // The mode of what is below the help layer.
        let below = app.layers.len().saturating_sub(1);
        match app.layers.get(below.wrapping_sub(1)) {
            Some(Layer::Palette) => Mode::Palette,
            _ => app.base_mode(),
        }
    };
    let r = centered(
        area,
        area.width.saturating_sub(4).clamp(40, 110),
        area.height.saturating_sub(2),
    );
    f.render_widget(Clear, r);
    let block = pane(format!("Help · {}", mode.title()), true);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let mut lines = Vec::new();
    for (action, keys) in app.keymap.bindings(mode) {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        lines.push(Line::from(vec![
            Span::styled(fit(&keys.join(" "), 22), theme().hint_key),
            Span::styled(format!("{:<16}", action.name()), theme().key),
            Span::raw(action.description()),
        ]));
    }
    lines.push(Line::raw(""));
    let config = crate::tui::platform::config_dir()
        .map(|d| d.join("keymap.toml").display().to_string())
        .unwrap_or_else(|| "(no config directory)".into());
    lines.push(Line::styled(
        format!("Rebind keys in {config} (same tables as the built-in assets/keymap.toml)."),
        theme().dim,
    ));
    let scroll = scroll.min(lines.len().saturating_sub(1));
    f.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), inner);
}

fn palette(f: &mut Frame, app: &App, area: Rect, top: bool) {
    let r = centered(area, 80, area.height.saturating_sub(4).max(6));
    f.render_widget(Clear, r);
    let p = &app.palette;
    let status = if p.running || p.streaming.is_some() {
        " · matching…"
    } else {
        ""
    };
    let block = pane(format!("Palette · {}/{}{status}", p.matched, p.total), top);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let [input, list] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    draw_input(f, input, "> ", &p.input, top);
    let height = list.height as usize;
    let offset = offset_showing(p.selected, 0, height);
    let lines: Vec<Line> = p
        .matches
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, e)| {
            let line = Line::from(vec![
                Span::styled(format!("{:<10}", e.kind), theme().dim),
                Span::raw(clip(&e.text, list.width.saturating_sub(10) as usize)),
            ]);
            mark_selected(line, i == p.selected, true)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), list);
}

/// The search over the console's container's history: newest first, each query on one
/// line with the parameter values it ran with.
fn history(f: &mut Frame, app: &App, area: Rect, input: &TextBuffer, selected: usize, top: bool) {
    let key = app.query.target_key().unwrap_or_default();
    let found = app.query.history.search(&key, &input.text());
    let total = app.query.history.of(&key).len();
    let r = centered(
        area,
        area.width.saturating_sub(4).clamp(40, 110),
        area.height.saturating_sub(4).max(6),
    );
    f.render_widget(Clear, r);
    let block = pane(
        format!("History · {key} · {}/{total} · Enter takes it", found.len()),
        top,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    let [field, list] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    draw_input(f, field, "> ", input, top);
    let height = list.height as usize;
    let offset = offset_showing(selected, 0, height);
    let width = usize::from(list.width);
    let lines: Vec<Line> = found
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .filter_map(|(row, &i)| {
            let e = app.query.history.entries.get(i)?;
            let sql = e.sql.split_whitespace().collect::<Vec<_>>().join(" ");
            let params: Vec<String> = e.params.iter().map(|(k, v)| format!("@{k}={v}")).collect();
            let params = if params.is_empty() {
                String::new()
            } else {
                format!("  {}", params.join(" "))
            };
            let room = width.saturating_sub(params.chars().count());
            let line = Line::from(vec![
                Span::raw(clip(&sql, room)),
                Span::styled(params, theme().param),
            ]);
            Some(mark_selected(line, row == selected, true))
        })
        .collect();
    f.render_widget(Paragraph::new(lines), list);
}

fn draw_input(f: &mut Frame, area: Rect, label: &str, buf: &TextBuffer, cursor: bool) {
    let text = buf.text();
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(label.to_string(), theme().hint_key),
            Span::raw(text),
        ])),
        area,
    );
    if cursor {
        let typed = buf
            .lines
            .get(buf.row)
            .map_or(0, |l| columns_before(l, buf.col));
        let x = area.x + width(label) as u16 + typed as u16;
        f.set_cursor_position(Position::new(x.min(area.right().saturating_sub(1)), area.y));
    }
}

fn confirm(f: &mut Frame, area: Rect, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    // Long lines wrap: the box is as tall as the wrapped text, so the question and its
    // keys at the end are never cut off.
    let inner_width = usize::from(70u16.min(area.width).saturating_sub(2).max(1));
    let rows: usize = lines
        .iter()
        .map(|l| {
            l.chars()
                .count()
                .div_ceil(inner_width.saturating_sub(8).max(1))
                .max(1)
        })
        .sum();
    let r = centered(area, 70, u16::try_from(rows + 4).unwrap_or(u16::MAX));
    f.render_widget(Clear, r);
    let block = pane("Confirm".into(), true);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let mut out: Vec<Line> = lines
        .iter()
        .map(|l| {
            let style = match l.chars().next() {
                Some('+') => theme().added,
                Some('-') => theme().removed,
                Some('~') => theme().number,
                _ => theme().title,
            };
            Line::styled(l.to_string(), style)
        })
        .collect();
    out.push(Line::styled(
        "y / Enter: yes    n / Esc: no",
        theme().hint_key,
    ));
    f.render_widget(Paragraph::new(out).wrap(Wrap { trim: false }), inner);
}

/// After a 412: the user's edit and the item as stored now, side by side, the lines one
/// has and the other lacks marked.
fn conflict(f: &mut Frame, area: Rect, c: &Conflict) {
    // The status line stays in sight: it says why the save failed.
    let r = centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(4),
    );
    f.render_widget(Clear, r);
    let block = pane(
        format!(
            "Not saved (412): {}/{} changed since you read it",
            c.db, c.c
        ),
        true,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    let [cols, keys] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    let [left, right] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(cols);
    let mine: Vec<String> = match serde_json::from_str::<serde_json::Value>(&c.mine) {
        Ok(v) => serde_json::to_string_pretty(&without_system(&v)).unwrap_or_default(),
        Err(_) => c.mine.clone(),
    }
    .lines()
    .map(str::to_string)
    .collect();
    let theirs: Vec<String> = serde_json::to_string_pretty(&without_system(&c.theirs))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let side = |title: &str, lines: &[String], other: &[String], style: ratatui::style::Style| {
        let mut out = vec![Line::styled(title.to_string(), theme().header)];
        out.extend(lines.iter().map(|l| {
            if other.contains(l) {
                Line::raw(l.clone())
            } else {
                Line::styled(l.clone(), style)
            }
        }));
        out
    };
    f.render_widget(
        Paragraph::new(side("your edit", &mine, &theirs, theme().added)),
        left,
    );
    let etag = c.etag.as_deref().unwrap_or("");
    f.render_widget(
        Paragraph::new(side(
            &format!("stored now (etag {etag})"),
            &theirs,
            &mine,
            theme().removed,
        )),
        right,
    );
    f.render_widget(
        Paragraph::new(
            "e / Enter: edit yours again and save it over theirs · t: take theirs · esc: drop your edit",
        )
        .style(theme().hint_key),
        keys,
    );
}

/// A question with its answers, each behind its key.
fn choose(f: &mut Frame, area: Rect, text: &str, choices: &[Choice]) {
    let width = 76u16.min(area.width);
    let inner_width = usize::from(width.saturating_sub(2).max(1));
    let mut lines = vec![Line::styled(text.to_string(), theme().title)];
    for c in choices {
        lines.push(Line::from(vec![
            Span::styled(format!(" {}  ", c.key), theme().hint_key),
            Span::raw(c.label.clone()),
        ]));
    }
    lines.push(Line::styled("Esc: none of these", theme().dim));
    let rows: usize = lines
        .iter()
        .map(|l| {
            l.width()
                .div_ceil(inner_width.saturating_sub(8).max(1))
                .max(1)
        })
        .sum();
    let r = centered(area, width, u16::try_from(rows + 2).unwrap_or(u16::MAX));
    f.render_widget(Clear, r);
    let block = pane("Choose".into(), true);
    let inner = block.inner(r);
    f.render_widget(block, r);
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// A value shown whole, wrapped, from line `scroll`; `y` copies it.
fn value(f: &mut Frame, app: &App, area: Rect, title: &str, text: &str, scroll: usize) {
    let r = centered(
        area,
        area.width.saturating_sub(4).clamp(30, 120),
        area.height.saturating_sub(2),
    );
    f.render_widget(Clear, r);
    let copy = app
        .keymap
        .key_for(Mode::Value, crate::tui::action::Action::CopyValue)
        .map_or_else(String::new, |k| format!(" · {k} copies"));
    let lines = text.lines().count().max(1);
    let block = pane(
        format!(
            "{title} · line {} of {lines}{copy} · esc closes",
            scroll + 1
        ),
        true,
    );
    let inner = block.inner(r);
    f.render_widget(block, r);
    let shown: Vec<Line> = text
        .lines()
        .skip(scroll)
        .map(|l| Line::raw(l.to_string()))
        .collect();
    f.render_widget(Paragraph::new(shown).wrap(Wrap { trim: false }), inner);
}

fn prompt(f: &mut Frame, area: Rect, title: &str, input: &TextBuffer, top: bool) {
    let r = Rect::new(area.x, area.bottom().saturating_sub(5), area.width, 3);
    f.render_widget(Clear, r);
    let block = pane(title.to_string(), top);
    let inner = block.inner(r);
    f.render_widget(block, r);
    draw_input(f, inner, "", input, top);
}

fn params(f: &mut Frame, area: Rect, fields: &[(String, TextBuffer)], selected: usize, top: bool) {
    let r = centered(area, 60, fields.len() as u16 + 4);
    f.render_widget(Clear, r);
    let block = pane("Parameters (JSON values)".into(), top);
    let inner = block.inner(r);
    f.render_widget(block, r);
    for (i, (name, buf)) in fields.iter().enumerate() {
        let row = Rect::new(inner.x, inner.y + i as u16, inner.width, 1);
        if row.y >= inner.bottom() {
            break;
        }
        draw_input(f, row, &format!("@{name} = "), buf, top && i == selected);
    }
    let help = Rect::new(inner.x, inner.bottom().saturating_sub(1), inner.width, 1);
    f.render_widget(
        Paragraph::new("↑↓ field · Enter runs · strings need quotes: \"abc\"").style(theme().dim),
        help,
    );
}

/// The execute form: the partition key, the parameters and the script log switch.
fn execute_form(f: &mut Frame, area: Rect, form: &ExecuteForm, top: bool) {
    let r = centered(area, 72, 7);
    f.render_widget(Clear, r);
    let block = pane(format!("Execute {} · {}/{}", form.id, form.db, form.c), top);
    let inner = block.inner(r);
    f.render_widget(block, r);
    let row = |i: u16| Rect::new(inner.x, inner.y + i, inner.width, 1);
    let focus = |field: ExecuteField| top && form.field == field;
    draw_input(
        f,
        row(0),
        "partition key (JSON) ",
        &form.partition_key,
        focus(ExecuteField::PartitionKey),
    );
    draw_input(
        f,
        row(1),
        "parameters (array)   ",
        &form.params,
        focus(ExecuteField::Params),
    );
    let check = if form.log { "[x]" } else { "[ ]" };
    let log = Line::from(vec![
        Span::styled("script log           ", theme().hint_key),
        Span::raw(format!("{check} return console.log output")),
    ]);
    let log = if focus(ExecuteField::Log) {
        log.style(theme().selected)
    } else {
        log
    };
    f.render_widget(Paragraph::new(log), row(2));
    f.render_widget(
        Paragraph::new("↑↓ field · space switches the log · Enter executes · Esc closes")
            .style(theme().dim),
        row(inner.height.saturating_sub(1)),
    );
}
