//! The partitions view: storage and RU heat per physical partition, throttling, and the
//! largest and hottest logical partitions. Figures that are not the store's own (a remote
//! account's sampled statistics) say whose they are.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::theme;
use super::{ListArea, clip, fit, fmt_bytes, fmt_count, fmt_ru, is_focused, mark_selected, pane};
use crate::engine::{
    LogicalPartitionView, PartitionsReport, RangeInfo, RangeLoad, StatisticsSource,
};
use crate::tui::state::tree::pk_label;
use crate::tui::state::{App, PartitionsState};

/// A bar of `width` cells filled to `fraction`.
pub fn bar(fraction: f64, width: usize) -> String {
    let f = fraction.clamp(0.0, 1.0);
    let full = (f * width as f64).round() as usize;
    format!(
        "{}{}",
        "█".repeat(full),
        "░".repeat(width - full.min(width))
    )
}

/// The table of physical partitions (a header, a row each, the totals) and the logical
/// partitions under it, inside the border.
fn areas(report: &PartitionsReport, inner: Rect) -> [Rect; 2] {
    let n = u16::try_from(report.partitions.len()).unwrap_or(u16::MAX);
    Layout::vertical([Constraint::Length(n.saturating_add(3)), Constraint::Min(3)]).areas(inner)
}

/// The physical partitions' rows on a pane drawn in `area`, once the report is in.
pub fn list(app: &App, area: Rect) -> Option<ListArea> {
    let p = &app.partitions;
    let report = p.report.as_ref()?;
    let [ranges, _] = areas(report, pane(String::new(), false).inner(area));
    let n = report.partitions.len();
    let rows = Rect {
        height: ranges.height.min(u16::try_from(n).unwrap_or(u16::MAX) + 1),
        ..ranges
    };
    Some(ListArea::below(rows, 1, p.selected, 0, n))
}

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let p = &app.partitions;
    let title = match &p.target {
        Some((d, c)) => format!("Partitions · {d}/{c}"),
        None => "Partitions".into(),
    };
    let block = pane(title, focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(report) = &p.report else {
        f.render_widget(
            Paragraph::new(if p.target.is_some() {
                "loading…"
            } else {
                "select a container in the tree, then press 4"
            })
            .style(theme().dim),
            inner,
        );
        return inner.height as usize;
    };
    let [ranges, lps] = areas(report, inner);
    draw_ranges(f, p, report, focused, app.metering, ranges);
    draw_logical(f, report, lps);
    inner.height as usize
}

/// The columns of the physical partitions table for a pane `width` cells wide. Narrow
/// panes drop the storage share and the peak before the heat bar shrinks away.
struct Columns {
    wide: bool,
    bar_w: usize,
}

impl Columns {
    fn new(width: u16) -> Columns {
        let wide = width >= 72;
        let fixed = if wide { 60 } else { 45 };
        Columns {
            wide,
            bar_w: (width as usize).saturating_sub(fixed).clamp(4, 30),
        }
    }

    /// The columns before the heat bar.
    fn head(&self, id: &str, items: &str, size: &str, share: &str) -> String {
        if self.wide {
            format!("{id:<5} {items:>7} {size:>9} {share:>6} ")
        } else {
            format!("{id:<5} {items:>6} {size:>8} ")
        }
    }

    /// The columns after the heat bar, before the 429 count.
    fn tail(&self, now: &str, peak: &str) -> String {
        if self.wide {
            format!(" {now:>8} {peak:>8} ")
        } else {
            format!(" {now:>8} ")
        }
    }
}

/// A row per physical partition (the selected one marked), then the split just seen or a
/// summary.
/// `metering`: the load is every client's (the store's meter); otherwise only this
/// session's own requests, which the footer says.
fn draw_ranges(
    f: &mut Frame,
    p: &PartitionsState,
    report: &PartitionsReport,
    focused: bool,
    metering: bool,
    area: Rect,
) {
    let cols = Columns::new(area.width);
    let mut lines = vec![Line::styled(
        format!(
            "{}{:<bw$}{}{:>5}",
            cols.head("range", "items", "size", "store%"),
            clip("RU/s heat vs budget", cols.bar_w),
            cols.tail("RU/s", "peak"),
            "429s",
            bw = cols.bar_w
        ),
        theme().header,
    )];
    for (i, r) in report.partitions.iter().enumerate() {
        let load = report.load.iter().find(|l| l.id == r.id);
        lines.push(mark_selected(
            range_line(&cols, r, load),
            i == p.selected,
            focused,
        ));
    }
    lines.push(Line::styled(
        p.split_seen.clone().unwrap_or_else(|| {
            format!(
                "{} physical partitions · window {} s · {}",
                report.partitions.len(),
                report.window_seconds,
                if metering {
                    "refreshed every second"
                } else {
                    "RU/s and 429s of this session only"
                }
            )
        }),
        if p.split_seen.is_some() {
            theme().hot
        } else {
            theme().dim
        },
    ));
    // On the line the layout leaves free under the table.
    let source = report.statistics_source.label();
    if !source.is_empty() {
        lines.push(Line::styled(
            format!("items and sizes: {source}"),
            theme().dim,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// One physical partition: its storage, its RU heat against its budget, 429s.
fn range_line(cols: &Columns, r: &RangeInfo, load: Option<&RangeLoad>) -> Line<'static> {
    let (now, peak, budget, throttled) = load.map_or((0.0, 0.0, 1.0, 0), |l| {
        (
            l.ru_last_second,
            l.ru_peak,
            l.budget_per_second,
            l.throttled,
        )
    });
    let heat = if budget > 0.0 { now / budget } else { 0.0 };
    let heat_style = if heat >= 0.9 {
        theme().hot
    } else if heat >= 0.5 {
        theme().number
    } else {
        theme().info
    };
    Line::from(vec![
        Span::raw(cols.head(
            &r.id,
            &fmt_count(r.statistics.item_count),
            &fmt_bytes(r.statistics.size_bytes),
            &format!("{:.1}%", r.storage_fraction * 100.0),
        )),
        Span::styled(bar(heat, cols.bar_w), heat_style),
        Span::raw(cols.tail(&fmt_ru(now), &fmt_ru(peak))),
        Span::styled(
            format!("{throttled:>5}"),
            if throttled > 0 {
                theme().hot
            } else {
                theme().dim
            },
        ),
    ])
}

/// The largest and the hottest logical partitions, side by side.
fn draw_logical(f: &mut Frame, report: &PartitionsReport, area: Rect) {
    let [largest, hottest] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    // Each list gets half the pane: the key takes what the value and range leave.
    let key_w = (largest.width as usize).saturating_sub(16).clamp(6, 24);
    // Only the store keeps RU per logical partition; the service samples sizes only.
    let (largest_title, largest_note, hottest_note) = match report.statistics_source {
        StatisticsSource::Exact => ("largest logical partitions", None, None),
        StatisticsSource::Sampled => (
            "largest logical partitions, sampled",
            None,
            Some("the service reports no RU per key"),
        ),
        StatisticsSource::Unreported => (
            "largest logical partitions",
            Some("not reported by the server"),
            Some("the service reports no RU per key"),
        ),
    };
    f.render_widget(
        logical_list(
            largest_title,
            largest_note,
            &report.largest_logical_partitions,
            false,
            key_w,
        ),
        largest,
    );
    f.render_widget(
        logical_list(
            "hottest logical partitions",
            hottest_note,
            &report.hottest_logical_partitions,
            true,
            key_w,
        ),
        hottest,
    );
}

/// A titled list of logical partitions with their size, or their RU when `by_ru`; `note`
/// says why the list is empty where the backend cannot fill it.
fn logical_list(
    title: &str,
    note: Option<&str>,
    items: &[LogicalPartitionView],
    by_ru: bool,
    key_w: usize,
) -> Paragraph<'static> {
    let mut lines = vec![Line::styled(clip(title, key_w + 14), theme().header)];
    if let Some(note) = note.filter(|_| items.is_empty()) {
        lines.push(Line::styled(clip(note, key_w + 14), theme().dim));
    }
    for l in items {
        let value = if by_ru {
            format!("{} RU", fmt_ru(l.statistics.request_charge_total))
        } else {
            fmt_bytes(l.statistics.size_bytes)
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} ", fit(&pk_label(&l.partition_key), key_w)),
                theme().string,
            ),
            Span::raw(format!("{value:>10} r{}", l.range)),
        ]));
    }
    Paragraph::new(lines)
}
