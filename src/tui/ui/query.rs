//! The query console: the editor with highlighting and the error marked and the completion
//! list under its cursor, the results as a table or JSON, and beside them the stats panel
//! (`query_stats`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::query_stats;
use super::theme::theme;
use super::{clip, columns_before, fit, mark_selected, pane, width};
use crate::query::complete::{Candidate, CandidateKind};
use crate::tui::state::list::offset_showing;
use crate::tui::state::query::{
    COMPLETION_ROWS, CompletionList, QueryRun, ResultsMode, cell, columns,
};
use crate::tui::state::{App, Focus};

const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "JOIN",
    "VALUE",
    "TOP",
    "DISTINCT",
    "ORDER",
    "BY",
    "GROUP",
    "ASC",
    "DESC",
    "OFFSET",
    "LIMIT",
    "AS",
    "EXISTS",
    "ARRAY",
    "UNDEFINED",
    "NULL",
    "TRUE",
    "FALSE",
    "IS",
    "NAN",
    "INFINITY",
];

/// The console's parts on `area`: the editor, the results and the stats panel (beside the
/// results when there is room, else under them, growing with the window).
pub fn areas(app: &App, area: Rect) -> [Rect; 3] {
    let editor_height = (app.query.editor.lines.len() as u16 + 2).clamp(5, 10);
    let [editor, rest] =
        Layout::vertical([Constraint::Length(editor_height), Constraint::Min(3)]).areas(area);
    if rest.width >= 90 {
        // Routing reasons and key values are long: the panel takes 45% of the width.
        let stats_width = (rest.width * 9 / 20).max(42);
        let [r, s] =
            Layout::horizontal([Constraint::Min(30), Constraint::Length(stats_width)]).areas(rest);
        [editor, r, s]
    } else {
        let stats_height = (rest.height / 2).clamp(8, 16);
        let [r, s] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(stats_height)]).areas(rest);
        [editor, r, s]
    }
}

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let [editor, results, stats] = areas(app, area);
    let cursor = draw_editor(f, app, editor);
    let rows = draw_results(f, app, results);
    let panel = app
        .query
        .run
        .as_ref()
        .map(|run| query_stats::Panel::of_run(app, run));
    query_stats::draw(
        f,
        stats,
        panel.as_ref(),
        "Charge, routing and partitions appear here.",
    );
    if let (Some(cursor), Some(list)) = (cursor, &app.query.completion) {
        draw_completion(f, list, cursor, area);
    }
    rows
}

/// The completion list under the cursor, its left edge under the word being completed;
/// inside `area`, moved left or above the cursor where it would not fit.
fn draw_completion(f: &mut Frame, list: &CompletionList, cursor: Position, area: Rect) {
    let candidates = &list.completion.candidates;
    let widest = |text: fn(&Candidate) -> &str, cap: usize| {
        candidates
            .iter()
            .map(|c| text(c).chars().count())
            .max()
            .unwrap_or(0)
            .min(cap)
    };
    let (label_width, detail_width) = (widest(|c| &c.label, 40), widest(|c| &c.detail, 24));
    // Borders, the kind tag ("alias"), and a space between the columns.
    let width = ((label_width + detail_width + 10) as u16).min(area.width);
    let rows = candidates.len().min(COMPLETION_ROWS);
    let height = (rows as u16 + 2).min(area.height);
    let typed = list.completion.typed.chars().count() as u16;
    let x = cursor
        .x
        .saturating_sub(typed + 1)
        .max(area.x)
        .min((area.x + area.width).saturating_sub(width));
    let below = cursor.y + 1;
    let y = if below + height <= area.y + area.height {
        below
    } else {
        cursor.y.saturating_sub(height).max(area.y)
    };
    let r = Rect::new(x, y, width, height);
    let first = offset_showing(list.selected, 0, rows);
    let lines: Vec<Line> = candidates
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, c)| {
            let kind = match c.kind {
                CandidateKind::Keyword => theme().keyword,
                CandidateKind::Function => theme().function,
                CandidateKind::Parameter => theme().param,
                CandidateKind::Property | CandidateKind::Alias => theme().key,
            };
            let line = Line::from(vec![
                Span::styled(format!("{:<5} ", c.kind.tag()), theme().dim),
                Span::styled(format!("{} ", fit(&c.label, label_width)), kind),
                Span::styled(clip(&c.detail, detail_width), theme().dim),
            ]);
            mark_selected(line, i == list.selected, true)
        })
        .collect();
    let position = format!(" {}/{} ", list.selected + 1, candidates.len());
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme().focus_border)
        .title_bottom(Line::from(position).right_aligned());
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// Draws the editor; returns the cursor's cell when the editor has focus.
fn draw_editor(f: &mut Frame, app: &App, area: Rect) -> Option<Position> {
    let focused = app.layers.is_empty() && app.focus == Focus::Editor;
    let target = app
        .query
        .target
        .as_ref()
        .map_or("no container".to_string(), |(d, c)| format!("{d}/{c}"));
    let state = if app.query.running.is_some() {
        " · running…"
    } else {
        ""
    };
    let block = pane(format!("Query · {target}{state}"), focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let ed = &app.query.editor;
    let height = inner.height as usize;
    let scroll = offset_showing(ed.row, ed.scroll, height);
    let error_at = app
        .query
        .error
        .as_ref()
        .and_then(|e| Some((e.line?.checked_sub(1)?, e.column?.checked_sub(1)?)));
    let lines: Vec<Line> = ed
        .lines
        .iter()
        .enumerate()
        .skip(scroll)
        .take(height)
        .map(|(i, l)| highlight(l, error_at.filter(|(line, _)| *line == i).map(|(_, c)| c)))
        .collect();
    // Long lines scroll sideways to keep the cursor in view.
    let col = ed
        .lines
        .get(ed.row)
        .map_or(0, |l| columns_before(l, ed.col)) as u16;
    let hscroll = (col + 1).saturating_sub(inner.width);
    f.render_widget(Paragraph::new(lines).scroll((0, hscroll)), inner);
    if !focused {
        return None;
    }
    let cursor = Position::new(inner.x + col - hscroll, inner.y + (ed.row - scroll) as u16);
    f.set_cursor_position(cursor);
    Some(cursor)
}

/// Colours one line of SQL; `error_col` marks the offending character.
pub fn highlight(line: &str, error_col: Option<usize>) -> Line<'static> {
    let chars: Vec<char> = line.chars().collect();
    let mut spans: Vec<Span> = Vec::new();
    let mut previous_word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let style: Style = if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            theme().string
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            i = chars.len();
            theme().dim
        } else if c == '@' {
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            theme().param
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            theme().number
        } else if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect::<String>().to_uppercase();
            let next = chars[i..].iter().find(|c| !c.is_whitespace());
            // `RANK` is a keyword only in `ORDER BY RANK <function>(...)`, as the parser reads
            // it; elsewhere it is a name (`c.rank`, `ORDER BY rank DESC`).
            let rank = word == "RANK" && previous_word == "BY" && {
                let rest: String = chars[i..].iter().collect();
                let rest = rest.trim_start();
                let name_end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                name_end > 0 && rest[name_end..].trim_start().starts_with('(')
            };
            previous_word = word.clone();
            if KEYWORDS.contains(&word.as_str()) || rank {
                theme().keyword
            } else if next == Some(&'(') {
                theme().function
            } else {
                Style::new()
            }
        } else {
            i += 1;
            theme().punct
        };
        let text: String = chars[start..i].iter().collect();
        match error_col {
            Some(e) if e >= start && e < i => {
                let (a, rest) = text.split_at(
                    text.char_indices()
                        .nth(e - start)
                        .map_or(text.len(), |(b, _)| b),
                );
                let mut rest = rest.chars();
                let bad: String = rest.next().map(String::from).unwrap_or_default();
                spans.push(Span::styled(a.to_string(), style));
                spans.push(Span::styled(bad, theme().error.reversed()));
                spans.push(Span::styled(rest.collect::<String>(), style));
            }
            _ => spans.push(Span::styled(text, style)),
        }
    }
    if let Some(e) = error_col
        && e >= chars.len()
    {
        spans.push(Span::styled(" ", theme().error.reversed()));
    }
    Line::from(spans)
}

fn draw_results(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = app.layers.is_empty() && app.focus == Focus::View;
    let q = &app.query;
    let count = q.run.as_ref().map_or(0, |r| r.documents.len());
    let more = q.run.as_ref().is_some_and(|r| r.continuation.is_some());
    let mode = match q.mode {
        ResultsMode::Table => "table",
        ResultsMode::Json => "json",
    };
    // Results of a run on another container than the console's say where they are from.
    let from = q
        .run
        .as_ref()
        .filter(|r| q.target.as_ref() != Some(&r.target))
        .map_or(String::new(), |r| {
            format!(" · from {}/{}", r.target.0, r.target.1)
        });
    let dropped = q.run.as_ref().map_or(0, |r| r.dropped);
    let shown = match &q.filter {
        Some(words) => format!("{} of {count} match /{words}", q.rows().len()),
        None if dropped > 0 => format!(
            "rows {}–{} (earlier ones let go; re-run for them)",
            dropped + 1,
            dropped + count
        ),
        None => count.to_string(),
    };
    let sorted = q.sort.as_ref().map_or(String::new(), |(c, descending)| {
        format!(
            " · sorted by {c} {} (loaded rows, not ORDER BY)",
            if *descending { "↓" } else { "↑" }
        )
    });
    let cancelled = if q.run.as_ref().is_some_and(|r| r.cancelled) {
        " · cancelled"
    } else {
        ""
    };
    let title = format!(
        "Results · {shown}{} · {mode}{sorted}{cancelled}{from}",
        if more { "+ (more on scroll)" } else { "" }
    );
    let block = pane(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(err) = &q.error {
        let pos = match (err.line, err.column) {
            (Some(l), Some(c)) => format!(" at line {l}, column {c}"),
            _ => String::new(),
        };
        let text = vec![
            Line::styled(format!("Error {}{pos}", err.status), theme().error),
            Line::raw(err.message.clone()),
        ];
        f.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), inner);
        return inner.height as usize;
    }
    let Some(run) = &q.run else {
        let key = app
            .keymap
            .key_for(
                crate::tui::keymap::Mode::Editor,
                crate::tui::action::Action::RunQuery,
            )
            .map_or("F5".to_string(), |k| k.to_string());
        f.render_widget(
            Paragraph::new(format!("Type a query above and press {key} to run it."))
                .style(theme().dim),
            inner,
        );
        return inner.height as usize;
    };
    if q.rows().is_empty() && q.running.is_none() {
        let text = if run.cancelled && run.documents.is_empty() {
            format!(
                "Cancelled: {} RU spent, no documents loaded.",
                super::fmt_ru(run.request_charge)
            )
        } else if run.documents.is_empty() {
            "No documents matched.".to_string()
        } else {
            format!(
                "None of the {} loaded results holds every word of /{} (esc clears the search).",
                run.documents.len(),
                q.filter.as_deref().unwrap_or_default()
            )
        };
        f.render_widget(Paragraph::new(text).style(theme().dim), inner);
        return inner.height as usize;
    }
    match q.mode {
        ResultsMode::Table => draw_table(f, app, run, inner, focused),
        ResultsMode::Json => draw_json(f, app, run, inner, focused),
    }
}

fn draw_table(f: &mut Frame, app: &App, run: &QueryRun, area: Rect, focused: bool) -> usize {
    let q = &app.query;
    let cols = columns(&run.documents);
    let cols: Vec<&String> = cols.iter().skip(q.hscroll).collect();
    let height = area.height.saturating_sub(1) as usize;
    let offset = offset_showing(q.selected, q.offset, height);
    // Column widths from what is visible, capped so several fit.
    let shown: Vec<(usize, &serde_json::Value)> = q
        .rows()
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .filter_map(|(row, &i)| run.documents.get(i).map(|d| (row, d)))
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            shown
                .iter()
                .map(|(_, d)| width(&cell(d, c)))
                .chain(std::iter::once(width(c)))
                .max()
                .unwrap_or(4)
                .clamp(3, 28)
        })
        .collect();
    let render = |values: Vec<String>| -> String {
        values
            .iter()
            .zip(&widths)
            .map(|(v, w)| fit(v, *w))
            .collect::<Vec<_>>()
            .join(" │ ")
    };
    let mut lines = vec![Line::styled(
        render(cols.iter().map(|c| c.to_string()).collect()),
        theme().header,
    )];
    for (row, d) in shown {
        let line = Line::raw(render(cols.iter().map(|c| cell(d, c)).collect()));
        lines.push(mark_selected(line, row == q.selected, focused));
    }
    f.render_widget(Paragraph::new(lines), area);
    height
}

fn draw_json(f: &mut Frame, app: &App, run: &QueryRun, area: Rect, focused: bool) -> usize {
    let q = &app.query;
    let height = area.height as usize;
    let offset = offset_showing(q.selected, q.offset, height);
    let mut lines = Vec::new();
    let docs = q.rows().iter().filter_map(|&i| run.documents.get(i));
    for (i, d) in docs.enumerate().skip(offset) {
        if lines.len() >= height {
            break;
        }
        let text = clip(&d.to_string(), area.width as usize);
        let line = Line::styled(text, theme().string);
        lines.push(mark_selected(line, i == q.selected, focused));
    }
    f.render_widget(Paragraph::new(lines), area);
    height
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The style of the span holding `word` in `line`.
    fn style_of(line: &str, word: &str) -> Style {
        highlight(line, None)
            .spans
            .iter()
            .find(|s| s.content == word)
            .unwrap_or_else(|| panic!("no span {word:?} in {line:?}"))
            .style
    }

    #[test]
    fn rank_is_a_keyword_only_before_its_scoring_function() {
        let ranked = "SELECT * FROM c ORDER BY RANK FullTextScore(c.t, ['a'])";
        assert_eq!(style_of(ranked, "RANK"), theme().keyword);
        assert_eq!(style_of(ranked, "FullTextScore"), theme().function);
        assert_eq!(style_of("SELECT c.rank FROM c", "rank"), Style::new());
        assert_eq!(
            style_of("SELECT * FROM c ORDER BY rank DESC", "rank"),
            Style::new()
        );
    }
}
