//! The advisor view: before a run, what it will advise with and the keys; while it runs,
//! each candidate's stage; after, the candidates side by side (one column each, best first,
//! as many as fit around the selected one) and, for the selected candidate, its verdict and
//! a bar per physical partition for storage and for RU/s against the partition's budget.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::partitions::bar;
use super::theme::theme;
use super::{clip, fit, fmt_bytes, fmt_count, fmt_rate, fmt_ru, is_focused, pane, plural};
use crate::advisor::{Advice, Assessment};
use crate::tui::action::Action;
use crate::tui::keymap::Mode;
use crate::tui::state::App;
use crate::tui::state::advisor::AdvisorState;

/// Width of the row labels, and of one candidate's column.
const LABEL: usize = 13;
const COLUMN: usize = 17;

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let a = &app.advisor;
    let target = a
        .target
        .as_ref()
        .map_or("no container".to_string(), |(db, c)| format!("{db}/{c}"));
    let block = pane(format!("Advisor · {target}"), is_focused(app, true));
    let inner = block.inner(area);
    f.render_widget(block, area);
    match &a.advice {
        Some(advice) if !a.advising(app.job.as_ref()) => draw_advice(f, a, advice, inner),
        _ => draw_setup(f, app, inner),
    }
}

/// The key bound to `action` in the view, for the texts that name keys.
fn key(app: &App, action: Action) -> String {
    app.keymap
        .key_for(Mode::Advisor, action)
        .map_or("?".to_string(), |k| k.to_string())
}

/// Before a run (or while one runs): the choices, the keys, each candidate's stage.
fn draw_setup(f: &mut Frame, app: &App, area: Rect) -> usize {
    let a = &app.advisor;
    let dim = theme().dim;
    let mut lines = vec![
        Line::from(vec![
            Span::styled("workload    ", dim),
            Span::raw(a.workload_label()),
        ]),
        Line::from(vec![
            Span::styled("candidates  ", dim),
            Span::raw(if a.candidates.is_empty() {
                "proposed from the items and the workload".to_string()
            } else {
                a.candidates.clone()
            }),
        ]),
        Line::raw(""),
    ];
    if a.advising(app.job.as_ref()) {
        lines.push(Line::styled(
            format!(
                "Advising ({} cancels; the copies it made are removed):",
                key(app, Action::CancelQuery)
            ),
            theme().header,
        ));
        if let Some((done, total)) = a.reading {
            lines.push(Line::raw(format!(
                "  read {} of {} items",
                fmt_count(done),
                fmt_count(total)
            )));
        }
        let last = a.stages.len().saturating_sub(1);
        for (i, s) in a.stages.iter().enumerate() {
            let (mark, what) = if i < last {
                ("✓", "measured".to_string())
            } else {
                (
                    "▸",
                    format!("{} {}/{}", s.doing, fmt_count(s.done), fmt_count(s.total)),
                )
            };
            lines.push(Line::raw(format!("  {mark} {}  {what}", s.candidate)));
        }
    } else {
        lines.push(Line::raw(format!(
            "{} runs the advisor: each candidate key is copied into a real container and the \
             workload replayed on it. {} chooses the workload, {} the candidates; {} cancels a run.",
            key(app, Action::Refresh),
            key(app, Action::AdvisorWorkload),
            key(app, Action::AdvisorCandidates),
            key(app, Action::CancelQuery),
        )));
    }
    if let Some(e) = &a.error {
        lines.push(Line::raw(""));
        lines.push(Line::styled(e.clone(), theme().error));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
    area.height as usize
}

/// The comparison and the selected candidate's partitions.
fn draw_advice(f: &mut Frame, a: &AdvisorState, advice: &Advice, area: Rect) -> usize {
    let Some(chosen) = advice.candidates.get(a.selected) else {
        return area.height as usize;
    };
    let ranges = chosen.figures.ranges.len() as u16;
    let detail = (ranges + 3).min(area.height / 2).max(4);
    let [head, table, below] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(4),
        Constraint::Length(detail),
    ])
    .areas(area);
    let mut line = format!(
        "{} items · {} · {} RU/s · workload {}",
        fmt_count(advice.items),
        fmt_bytes(advice.bytes),
        advice.throughput,
        advice.workload.as_deref().unwrap_or("none"),
    );
    if !a.copied.is_empty() {
        line.push_str(&format!(" · copied to {}", a.copied.join(", ")));
    }
    f.render_widget(
        Paragraph::new(Line::styled(clip(&line, head.width as usize), theme().dim)),
        head,
    );
    draw_table(f, a, advice, table);
    draw_detail(f, a, chosen, below);
    table.height as usize
}

/// One row of the comparison: a label and a cell per candidate.
struct Row {
    label: String,
    cells: Vec<String>,
    header: bool,
}

/// Every row of the comparison, the same numbers `advise --json` gives.
fn rows(advice: &Advice) -> Vec<Row> {
    let c = &advice.candidates;
    let row = |label: &str, cell: &dyn Fn(&Assessment) -> String| Row {
        label: label.to_string(),
        cells: c.iter().map(cell).collect(),
        header: false,
    };
    let mut out = vec![
        row("rank", &|a| {
            let word = a.verdict.split(':').next().unwrap_or_default();
            let today = if a.current { " (now)" } else { "" };
            format!("{} {word}{today}", a.rank)
        }),
        row("cardinality", &|a| {
            a.figures
                .cardinality
                .iter()
                .map(|l| fmt_count(l.distinct))
                .collect::<Vec<_>>()
                .join(" / ")
        }),
        row("largest LP", &|a| {
            a.figures
                .largest_logical_partition
                .as_ref()
                .map_or("-".into(), |l| plural(l.items, "item"))
        }),
        row("  size", &|a| {
            a.figures
                .largest_logical_partition
                .as_ref()
                .map_or("-".into(), |l| fmt_bytes(l.bytes))
        }),
        row("  of limit", &|a| {
            a.figures
                .largest_logical_partition
                .as_ref()
                .map_or("-".into(), |l| share(l.share_of_limit))
        }),
        row("partitions", &|a| a.figures.physical_partitions.to_string()),
        // Every candidate's ranges side by side, one block each: storage against its
        // largest range, RU/s against the range's budget (full past it).
        row("  storage", &|a| {
            let most = a
                .figures
                .ranges
                .iter()
                .map(|r| r.data.bytes)
                .max()
                .unwrap_or(0);
            blocks(
                a.figures
                    .ranges
                    .iter()
                    .map(|r| r.data.bytes as f64 / most.max(1) as f64),
            )
        }),
        row("  RU/budget", &|a| {
            blocks(a.figures.ranges.iter().map(|r| {
                if r.budget > 0.0 {
                    r.ru_per_second / r.budget
                } else {
                    0.0
                }
            }))
        }),
        row("storage skew", &|a| {
            format!("{:.2}×", a.figures.storage_skew)
        }),
        row("write skew", &|a| format!("{:.2}×", a.figures.write_skew)),
        row("hot key wr.", &|a| share(a.figures.hottest_key_write_share)),
        row("RU/s", &|a| short_ru(a.figures.ru_per_second)),
        row("fan-out req.", &|a| share(a.figures.fan_out_share)),
        row("hottest", &|a| {
            a.figures.hottest_range.as_ref().map_or("-".into(), |h| {
                format!(
                    "r{} {}/{}",
                    h.id,
                    short_ru(h.ru_per_second),
                    short_ru(h.budget)
                )
            })
        }),
        row("  made by", &|a| {
            a.figures
                .hottest_range
                .as_ref()
                .and_then(|h| h.pattern.clone())
                .unwrap_or_else(|| "-".into())
        }),
    ];
    let patterns = c
        .first()
        .map(|a| a.figures.patterns.clone())
        .unwrap_or_default();
    if !patterns.is_empty() {
        out.push(Row {
            label: "per pattern".into(),
            cells: c.iter().map(|_| "route·ranges·RU".to_string()).collect(),
            header: true,
        });
    }
    for p in patterns {
        out.push(Row {
            label: format!("{} {}/s", p.id, fmt_rate(p.rate)),
            cells: c
                .iter()
                .map(|a| {
                    a.figures.patterns.iter().find(|q| q.id == p.id).map_or(
                        "-".into(),
                        |q| match &q.error {
                            Some(_) => "cannot run".into(),
                            None => format!(
                                "{} {} {}",
                                routing(&q.routing),
                                q.ranges_touched,
                                short_ru(q.request_charge)
                            ),
                        },
                    )
                })
                .collect(),
            header: false,
        });
    }
    out
}

/// One block per value in 0..=1, its height the value (`▁` for a little, `█` for all).
fn blocks(values: impl Iterator<Item = f64>) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    values
        .map(|v| {
            let at = (v.clamp(0.0, 1.0) * (LEVELS.len() - 1) as f64).round() as usize;
            LEVELS[at]
        })
        .collect()
}

/// How many rows the comparison has (scrolling stops at the last).
pub fn row_count(advice: &Advice) -> usize {
    rows(advice).len()
}

/// A share as a percentage: `12.5%`, `0.01%`.
fn share(x: f64) -> String {
    let pct = x * 100.0;
    if pct != 0.0 && pct < 0.1 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// RU in a cell's room: whole above 100, one decimal above 10 (the JSON has them all).
fn short_ru(ru: f64) -> String {
    if ru >= 100.0 {
        format!("{ru:.0}")
    } else if ru >= 10.0 {
        format!("{ru:.1}")
    } else {
        fmt_ru(ru)
    }
}

/// The routing in a cell's room.
fn routing(r: &str) -> &str {
    match r {
        "single-partition" => "single",
        other => other,
    }
}

/// The candidates that fit in `width`, around the selected one.
fn visible(selected: usize, count: usize, width: usize) -> std::ops::Range<usize> {
    let fit = (width.saturating_sub(LABEL) / COLUMN).max(1).min(count);
    let first = selected.saturating_sub(fit - 1).min(count - fit);
    first..first + fit
}

fn draw_table(f: &mut Frame, a: &AdvisorState, advice: &Advice, area: Rect) {
    let all = rows(advice);
    let count = advice.candidates.len();
    if count == 0 {
        return;
    }
    let shown = visible(a.selected, count, area.width as usize);
    // When some candidates are off screen, the corner says which are shown.
    let corner = if shown.len() < count {
        format!("{}–{} of {}", shown.start + 1, shown.end, count)
    } else {
        "key".to_string()
    };
    let mut lines = vec![Line::from(
        std::iter::once(Span::styled(fit(&corner, LABEL), theme().header))
            .chain(shown.clone().map(|i| {
                let style = if i == a.selected {
                    theme().selected
                } else {
                    theme().header
                };
                Span::styled(fit(&advice.candidates[i].key, COLUMN - 1) + " ", style)
            }))
            .collect::<Vec<_>>(),
    )];
    let mut body = (area.height as usize).saturating_sub(1);
    let scroll = a.scroll.min(all.len().saturating_sub(body));
    // Rows below the pane: the last line says how many, and how to reach them.
    let below = all.len().saturating_sub(scroll + body);
    if below > 0 {
        body = body.saturating_sub(1);
    }
    for r in all.iter().skip(scroll).take(body) {
        let label_style = if r.header {
            theme().header
        } else {
            theme().dim
        };
        let mut spans = vec![Span::styled(fit(&r.label, LABEL), label_style)];
        for i in shown.clone() {
            let cell = r.cells.get(i).map_or("", String::as_str);
            let style = if r.header {
                theme().dim
            } else if i == a.selected {
                theme().key
            } else {
                ratatui::style::Style::default()
            };
            spans.push(Span::styled(fit(cell, COLUMN - 1) + " ", style));
        }
        lines.push(Line::from(spans));
    }
    let below = all.len().saturating_sub(scroll + body);
    if below > 0 {
        lines.push(Line::styled(
            format!("↓ {} (j/k scroll)", plural(below as u64, "more row")),
            theme().dim,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// The selected candidate's verdict and a bar per physical partition: its share of the
/// largest partition's storage, and its RU/s against its budget.
fn draw_detail(f: &mut Frame, a: &AdvisorState, chosen: &Assessment, area: Rect) {
    let width = area.width as usize;
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{} ", chosen.key), theme().key),
        Span::raw(chosen.verdict.clone()),
    ])];
    let max_bytes = chosen
        .figures
        .ranges
        .iter()
        .map(|r| r.data.bytes)
        .max()
        .unwrap_or(0)
        .max(1);
    // range id, storage bar and size, RU bar and RU/s against the budget.
    let fixed = 6 + 1 + 9 + 2 + 1 + 12;
    let bar_w = (width.saturating_sub(fixed) / 2).clamp(3, 30);
    lines.push(Line::styled(
        format!(
            "{}{}  {}",
            fit("range", 6),
            fit("storage", bar_w + 10),
            "RU/s of budget"
        ),
        theme().header,
    ));
    for r in &chosen.figures.ranges {
        let heat = if r.budget > 0.0 {
            r.ru_per_second / r.budget
        } else {
            0.0
        };
        let heat_style = if heat > 1.0 {
            theme().error
        } else {
            theme().lit
        };
        lines.push(Line::from(vec![
            Span::raw(fit(&r.data.id, 6)),
            Span::styled(
                bar(r.data.bytes as f64 / max_bytes as f64, bar_w),
                theme().number,
            ),
            Span::raw(format!(" {:>9}  ", fmt_bytes(r.data.bytes))),
            Span::styled(bar(heat, bar_w), heat_style),
            Span::raw(format!(
                " {}/{}",
                short_ru(r.ru_per_second),
                short_ru(r.budget)
            )),
        ]));
    }
    if let Some(e) = &a.error {
        lines.push(Line::styled(e.clone(), theme().error));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}
