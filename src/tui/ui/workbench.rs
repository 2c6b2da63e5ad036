//! The workbench view: one row per access pattern, one column group per design (median
//! RU, requests, physical partitions touched, routing), and the selected row's requests.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::theme::theme;
use super::{ListArea, clip, fmt_ru, is_focused, mark_selected, pane};
use crate::tui::action::Action;
use crate::tui::keymap::Mode;
use crate::tui::state::list::offset_showing;
use crate::tui::state::{App, WorkbenchState};
use crate::workbench::{PatternReport, Report};

/// Width of one design's column group.
const GROUP: usize = 19;

/// The table of patterns and the selected pattern's detail, inside the border.
fn areas(w: &WorkbenchState, inner: Rect) -> [Rect; 2] {
    let detail_height = if w.detail {
        (inner.height / 2).clamp(4, 14)
    } else {
        0
    };
    Layout::vertical([Constraint::Min(4), Constraint::Length(detail_height)]).areas(inner)
}

/// The patterns' rows on a pane drawn in `area` (under the table's three header lines),
/// once a report is in.
pub fn list(app: &App, area: Rect) -> Option<ListArea> {
    let w = &app.workbench;
    let report = w.report.as_ref()?;
    let [table, _] = areas(w, pane(String::new(), false).inner(area));
    Some(ListArea::below(
        table,
        3,
        w.selected,
        w.offset,
        report.patterns.len(),
    ))
}

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let w = &app.workbench;
    let block = pane(format!("Workbench · {} suite", w.suite), focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(report) = &w.report else {
        draw_intro(f, app, inner);
        return inner.height as usize;
    };
    let [table, detail] = areas(w, inner);
    let height = draw_table(f, w, report, focused, table);
    if w.detail
        && let Some(p) = report.patterns.get(w.selected)
    {
        draw_detail(f, app, p, detail);
    }
    height
}

/// Before the first run: which keys run a suite and switch it.
fn draw_intro(f: &mut Frame, app: &App, area: Rect) {
    let key = |a| {
        app.keymap
            .key_for(Mode::Workbench, a)
            .map_or("?".to_string(), |k| k.to_string())
    };
    let text = vec![
        Line::raw(format!(
            "Press {} to run the {} suite: every access pattern, many times with \
             different parameters, on each design (missing designs are loaded first).",
            key(Action::Refresh),
            app.workbench.suite
        )),
        Line::raw(format!(
            "{} switches suite; Enter shows a pattern's requests and the partitions they touched.",
            key(Action::WorkbenchSuite)
        )),
    ];
    f.render_widget(
        Paragraph::new(text)
            .style(theme().dim)
            .wrap(Wrap { trim: true }),
        area,
    );
}

/// The run's summary, a column group per design, and a row per access pattern; returns
/// how many pattern rows fit.
fn draw_table(
    f: &mut Frame,
    w: &WorkbenchState,
    report: &Report,
    focused: bool,
    area: Rect,
) -> usize {
    let mut lines = vec![Line::styled(
        clip(
            &format!(
                "{} · {} iterations · {:.1} s · median RU, requests, pp physical partitions, r routing (F fan-out, T targeted, S single)",
                report.title, report.iterations, report.seconds
            ),
            area.width as usize,
        ),
        theme().dim,
    )];
    let mut header = format!("{:<4}", "");
    for d in &report.designs {
        header.push_str(&format!("│{:^GROUP$}", clip(&d.id, GROUP)));
    }
    lines.push(Line::styled(header, theme().header));
    // The columns' names under every design, so no figure is without its heading even
    // when the legend above is cut.
    let mut names = format!("{:<4}", "");
    for _ in &report.designs {
        names.push_str(&format!("│{:>8} {:>4} {:>3} {}", "RU", "req", "pp", "r"));
    }
    lines.push(Line::styled(names, theme().dim));
    let height = (area.height as usize).saturating_sub(3);
    let offset = offset_showing(w.selected, w.offset, height);
    for (i, p) in report.patterns.iter().enumerate().skip(offset).take(height) {
        lines.push(mark_selected(
            pattern_line(report, p),
            i == w.selected,
            focused,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
    height
}

/// One access pattern: per design its median RU, requests, partitions touched and routing.
fn pattern_line(report: &Report, p: &PatternReport) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("{:<4}", p.id), theme().key)];
    for d in &report.designs {
        match p.design(&d.id) {
            Some(r) => {
                let mark = match r.routing.as_str() {
                    "fan-out" => "F",
                    "targeted" => "T",
                    _ => "S",
                };
                let style = match mark {
                    "F" => theme().hot,
                    "T" => theme().number,
                    _ => theme().info,
                };
                spans.push(Span::raw(format!(
                    "│{:>8} {:>4} {:>3}",
                    fmt_ru(r.request_charge),
                    r.requests,
                    r.partitions_touched
                )));
                spans.push(Span::styled(format!("{mark:>2}"), style));
            }
            None => spans.push(Span::styled(format!("│{:^GROUP$}", "—"), theme().dim)),
        }
    }
    Line::from(spans)
}

/// The selected pattern's requests on each design, with the partitions they touched.
/// The selected pattern's figures per design, then the requests of the chosen design
/// (left and right choose it), from the scroll position on.
fn draw_detail(f: &mut Frame, app: &App, p: &PatternReport, area: Rect) {
    let w = &app.workbench;
    let key = |a| {
        app.keymap
            .key_for(crate::tui::keymap::Mode::Workbench, a)
            .map_or_else(String::new, |k| k.to_string())
    };
    let mut lines = vec![Line::styled(
        format!(
            "{} {} · {}/{} design · {}/{} requests",
            p.id,
            p.title,
            key(Action::Collapse),
            key(Action::Expand),
            key(Action::PageUp),
            key(Action::PageDown)
        ),
        theme().header,
    )];
    let chosen = w.design.min(p.designs.0.len().saturating_sub(1));
    for (i, d) in p.designs.0.iter().enumerate() {
        lines.push(Line::styled(
            format!(
                "{}{}: {} RU median ({}–{}), {:.1} ms, {}",
                if i == chosen { "▸ " } else { "  " },
                d.design,
                fmt_ru(d.request_charge),
                fmt_ru(d.request_charge_min),
                fmt_ru(d.request_charge_max),
                d.latency_ms,
                super::plural(d.requests as u64, "request")
            ),
            if i == chosen {
                theme().title
            } else {
                theme().dim
            },
        ));
    }
    if let Some(d) = p.designs.0.get(chosen) {
        let ops: Vec<_> = d.operations.iter().filter(|o| !o.setup).collect();
        let room = usize::from(area.height).saturating_sub(lines.len() + 1);
        let from = w.detail_scroll.min(ops.len().saturating_sub(1));
        let to = (from + room).min(ops.len());
        lines.push(Line::styled(
            format!(
                "{}: requests {}–{to} of {}",
                d.design,
                if ops.is_empty() { 0 } else { from + 1 },
                ops.len()
            ),
            theme().dim,
        ));
        for op in &ops[from..to] {
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(format!("{:<7}", op.kind), theme().key),
                Span::raw(format!(
                    "{:<12} {:<17} [{}] {:>7} RU  ",
                    clip(&op.container, 12),
                    op.routing,
                    op.partitions.join(","),
                    fmt_ru(op.request_charge)
                )),
                Span::styled(op.detail.clone(), theme().dim),
            ]));
        }
    }
    f.render_widget(Paragraph::new(lines), area);
}
