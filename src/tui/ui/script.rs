//! A script in the item view (its body with line numbers and light JavaScript colouring,
//! then the last execution's report) and the form that executes a stored procedure.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::theme;
use super::{escape, is_focused, pane};
use crate::engine::ScriptKind;
use crate::tui::state::App;
use crate::tui::state::script::{ReportLine, ScriptView, trigger_label};

/// Draws the script; returns the rows of its body area (for paging keys).
pub fn draw(f: &mut Frame, app: &App, s: &ScriptView, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let trigger = trigger_label(s.info.trigger_type, s.info.trigger_operation);
    let title = format!(
        "{} {} · {}/{}{}",
        s.info.kind.noun(),
        s.info.id,
        s.db,
        s.c,
        if trigger.is_empty() {
            String::new()
        } else {
            format!(" · {trigger}")
        }
    );
    let block = pane(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let body: Vec<&str> = s.info.body.lines().collect();
    let number_width = body.len().to_string().len();
    let mut lines: Vec<Line> = body
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut spans = vec![Span::styled(
                format!("{:>number_width$} │ ", i + 1),
                theme().dim,
            )];
            // Tabs indent (the terminal would drop them); other controls show escaped.
            spans.extend(javascript(&escape(&text.replace('\t', "    "))));
            Line::from(spans)
        })
        .collect();
    if let Some(e) = &s.execution {
        // The report wraps (a script's error is long); the code does not, so its line
        // numbers stay in their column.
        lines.extend(report_lines(e.report(), inner.width));
    } else if s.info.kind == ScriptKind::StoredProcedure {
        let key = app
            .keymap
            .key_for(
                crate::tui::keymap::Mode::Item,
                crate::tui::action::Action::ExecuteScript,
            )
            .map_or_else(|| "the palette".to_string(), |k| k.to_string());
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("{key} executes it: partition key, parameters, script log."),
            theme().dim,
        ));
    }
    let height = usize::from(inner.height);
    let scroll = s.scroll.min(lines.len().saturating_sub(1));
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(height).collect();
    f.render_widget(Paragraph::new(shown), inner);
    height
}

/// Report lines styled by their kind, wrapped into rows of `width` characters (at a space
/// where one is near the end of the row).
pub(super) fn report_lines(report: Vec<(ReportLine, String)>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut lines = Vec::new();
    for (kind, text) in report {
        let style = match kind {
            ReportLine::Heading => theme().header,
            ReportLine::Plain => Style::default(),
            ReportLine::Error => theme().error,
        };
        // A script's log and error are its own text: escaped like all user data.
        let mut rest: Vec<char> = escape(&text).chars().collect();
        if rest.is_empty() {
            lines.push(Line::raw(""));
        }
        while !rest.is_empty() {
            // Break at the last space that fits, unless that leaves most of the row empty.
            let cut = if rest.len() <= width {
                rest.len()
            } else {
                match rest[..=width].iter().rposition(|c| *c == ' ') {
                    Some(space) if space > width / 2 => space,
                    _ => width,
                }
            };
            let row: String = rest[..cut].iter().collect();
            lines.push(Line::styled(row, style));
            let skip = usize::from(rest.get(cut) == Some(&' '));
            rest.drain(..(cut + skip).min(rest.len()));
        }
    }
    lines
}

/// JavaScript's keywords, the words coloured as such.
const KEYWORDS: &[&str] = &[
    "function",
    "var",
    "let",
    "const",
    "return",
    "if",
    "else",
    "for",
    "while",
    "do",
    "throw",
    "new",
    "try",
    "catch",
    "finally",
    "true",
    "false",
    "null",
    "undefined",
    "typeof",
    "break",
    "continue",
    "switch",
    "case",
    "default",
    "this",
    "in",
    "of",
];

/// A line of JavaScript as spans: keywords, strings and `//` comments coloured, the rest
/// plain. A light touch (no parser): enough to read a script at a glance.
fn javascript(text: &str) -> Vec<Span<'static>> {
    let chars: Vec<char> = text.chars().collect();
    let mut spans = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    let flush = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            spans.push(Span::raw(std::mem::take(plain)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            flush(&mut plain, &mut spans);
            spans.push(Span::styled(
                chars[i..].iter().collect::<String>(),
                theme().dim,
            ));
            return spans;
        }
        if matches!(c, '"' | '\'' | '`') {
            flush(&mut plain, &mut spans);
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            spans.push(Span::styled(
                chars[i..end].iter().collect::<String>(),
                theme().string,
            ));
            i = end;
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || chars[j] == '_' || chars[j] == '$')
            {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            if KEYWORDS.contains(&word.as_str()) {
                flush(&mut plain, &mut spans);
                spans.push(Span::styled(word, theme().keyword));
            } else {
                plain.push_str(&word);
            }
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    flush(&mut plain, &mut spans);
    spans
}
