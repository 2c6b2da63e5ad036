//! The stats panel of the query console and of a query in the Requests view: what a query
//! cost and how it ran, one part a piece: the charge line, the routing and the access path,
//! the key-space strip, the logical partitions it touched, a row per physical partition,
//! the totals of its metrics, and the indexes it used or missed.

use std::collections::BTreeMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;

use super::theme::theme;
use super::{clip, fmt_bytes, fmt_ru, pane};
use crate::engine::{AccessView, IndexMetrics, PartitionResult, QueryMetrics, QueryResult};
use crate::tui::action::Action;
use crate::tui::keymap::Mode;
use crate::tui::state::App;
use crate::tui::state::query::{QueryRun, RangeSpan};
use crate::tui::state::tree::pk_label;

/// How many logical partitions the panel names before it counts the rest.
const NAMED_LOGICAL: usize = 8;

/// What the panel shows, read from the query console's run or from one query request the
/// gateway served.
pub struct Panel<'a> {
    request_charge: f64,
    documents: usize,
    pages: usize,
    elapsed_ms: f64,
    /// While the console's query runs: ranges finished and documents they read.
    running: Option<(usize, u64)>,
    /// The user cancelled it before its last page.
    cancelled: bool,
    routing: Option<(&'a str, &'a str)>,
    access: Option<&'a AccessView>,
    /// Every physical partition of the container, for the strip.
    ranges: &'a [RangeSpan],
    /// Ranges to light on the strip.
    touched: Vec<&'a str>,
    partitions: Vec<&'a PartitionResult>,
    /// The first logical partitions by name, and how many there are in all.
    logical: (Vec<&'a Value>, usize),
    metrics: &'a QueryMetrics,
    index_metrics: Option<&'a IndexMetrics>,
    /// The key that adds a missing index, where it works.
    add_index: Option<String>,
}

impl<'a> Panel<'a> {
    /// The query console's run so far.
    pub fn of_run(app: &'a App, run: &'a QueryRun) -> Panel<'a> {
        let q = &app.query;
        let running = q.running.is_some().then(|| {
            let read = run
                .progress
                .values()
                .map(|p| p.retrieved_document_count)
                .sum();
            (run.progress.len(), read)
        });
        let lps = run.logical_partitions();
        Panel {
            request_charge: run.request_charge,
            documents: run.received(),
            pages: run.pages,
            elapsed_ms: run.elapsed_ms,
            running,
            cancelled: run.cancelled,
            routing: run.routing.as_ref().map(|(k, r)| (k.as_str(), r.as_str())),
            access: run.access.as_ref(),
            ranges: &q.ranges,
            touched: run
                .partitions
                .keys()
                .chain(run.progress.keys())
                .map(String::as_str)
                .collect(),
            partitions: run.partitions.values().collect(),
            logical: (lps.iter().take(NAMED_LOGICAL).collect(), lps.len()),
            metrics: &run.metrics,
            index_metrics: run.index_metrics.as_ref(),
            add_index: app
                .keymap
                .key_for(Mode::Results, Action::ApplyIndex)
                .map(|k| k.to_string()),
        }
    }

    /// One page of a query as the gateway answered it: `documents` returned in
    /// `elapsed_ms`, on a container with `ranges`.
    pub fn of_page(
        page: &'a QueryResult,
        documents: usize,
        elapsed_ms: f64,
        ranges: &'a [RangeSpan],
    ) -> Panel<'a> {
        // Each logical partition lives in one physical partition: no duplicates across them.
        let total = page
            .partitions
            .iter()
            .map(|p| p.logical_partitions.len())
            .sum();
        let named = page
            .partitions
            .iter()
            .flat_map(|p| &p.logical_partitions)
            .take(NAMED_LOGICAL)
            .collect();
        let by_id: BTreeMap<&str, &PartitionResult> =
            page.partitions.iter().map(|p| (&*p.id, p)).collect();
        Panel {
            request_charge: page.request_charge,
            documents,
            pages: 1,
            elapsed_ms,
            running: None,
            cancelled: false,
            routing: Some((page.routing.kind, page.routing.reason.as_str())),
            access: Some(&page.access),
            ranges,
            touched: by_id.keys().copied().collect(),
            partitions: by_id.into_values().collect(),
            logical: (named, total),
            metrics: &page.metrics,
            index_metrics: page.index_metrics.as_ref(),
            add_index: None,
        }
    }
}

impl Panel<'_> {
    /// The rows the panel takes to show everything, borders included.
    pub fn height(&self) -> u16 {
        let index = self.index_metrics.map_or(0, |im| {
            let used =
                !im.utilized_single_indexes.is_empty() || !im.utilized_composite_indexes.is_empty();
            let missing = !im.potential_single_indexes.is_empty()
                || !im.potential_composite_indexes.is_empty();
            usize::from(used) + usize::from(missing)
        });
        let lines = 1 // charge
            + usize::from(self.routing.is_some())
            + usize::from(self.access.is_some())
            + 1 // strip
            + usize::from(self.logical.1 > 0)
            + 1 // range table header
            + self.partitions.len()
            + 2 // metrics
            + index;
        u16::try_from(lines + 2).unwrap_or(u16::MAX)
    }
}

/// The panel in `area`, or `empty` when there is nothing to show yet.
pub fn draw(f: &mut Frame, area: Rect, panel: Option<&Panel>, empty: &str) {
    let block = pane("Stats".into(), false);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(p) = panel else {
        f.render_widget(Paragraph::new(empty.to_string()).style(theme().dim), inner);
        return;
    };
    let width = inner.width as usize;
    let mut lines = vec![charge_line(p)];
    lines.extend(routing_line(p, width));
    lines.extend(access_line(p, width));
    lines.push(strip(p, width));
    lines.extend(logical_line(p, width));
    lines.extend(range_table(p));
    lines.extend(metrics_lines(p.metrics));
    lines.extend(index_lines(p, width));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The charge, documents, pages and time, and while it runs, how far it got.
fn charge_line(p: &Panel) -> Line<'static> {
    let running = match p.running {
        Some((done, retrieved)) => format!(
            " · running: {done}/{} read, {} read",
            super::plural(p.ranges.len() as u64, "range"),
            super::plural(retrieved, "doc")
        ),
        None if p.cancelled => " · cancelled".to_string(),
        None => String::new(),
    };
    Line::from(vec![
        Span::styled(format!("{} RU", fmt_ru(p.request_charge)), theme().charge),
        Span::styled(
            format!(
                " {} · {} · {:.1} ms{running}",
                super::plural(p.documents as u64, "doc"),
                super::plural(p.pages as u64, "page"),
                p.elapsed_ms
            ),
            theme().dim,
        ),
    ])
}

/// Single-partition, targeted or fan-out, and why.
fn routing_line(p: &Panel, width: usize) -> Option<Line<'static>> {
    let (kind, reason) = p.routing?;
    let style = match kind {
        "single-partition" => theme().info,
        "targeted" => theme().number,
        _ => theme().hot,
    };
    Some(Line::from(vec![
        Span::styled(kind.to_string(), style),
        Span::styled(
            format!(": {}", clip(reason, width.saturating_sub(kind.len() + 2))),
            theme().title,
        ),
    ]))
}

/// How the documents were found: a scan or the indexes it went through, and why.
fn access_line(p: &Panel, width: usize) -> Option<Line<'static>> {
    let a = p.access?;
    let style = if a.kind == "scan" {
        theme().hot
    } else {
        theme().info
    };
    let via = if a.indexes.is_empty() {
        String::new()
    } else {
        format!(" {}", a.indexes.join(" ∩ "))
    };
    let head = format!("{}{via}", a.kind);
    Some(Line::from(vec![
        Span::styled(head.clone(), style),
        Span::styled(
            format!(
                ": {}",
                clip(&a.reason, width.saturating_sub(head.len() + 2))
            ),
            theme().dim,
        ),
    ]))
}

/// The whole EPK space as a bar, every physical partition drawn to scale, the ones the
/// query touched lit. A touched range narrower than a cell or two still gets room (taken
/// from the widest ranges), so no range that did work is ever hidden.
fn strip(p: &Panel, width: usize) -> Line<'static> {
    let ranges = p.ranges;
    let width = width.max(10);
    if ranges.is_empty() {
        return Line::styled("key space: …", theme().dim);
    }
    let touched: Vec<bool> = ranges
        .iter()
        .map(|r| p.touched.contains(&r.id.as_str()))
        .collect();
    let cells = strip_cells(ranges, &touched, width);
    let mut spans = Vec::new();
    for ((r, &lit), &n) in ranges.iter().zip(&touched).zip(&cells) {
        if n == 0 {
            continue;
        }
        // A boundary mark, then the id centred in the range's share of the width.
        let text = if n >= 2 {
            let w = n - 1;
            format!("▏{:─^w$}", clip(&r.id, w))
        } else {
            "▏".to_string()
        };
        spans.push(Span::styled(
            text,
            if lit { theme().lit } else { theme().unlit },
        ));
    }
    Line::from(spans)
}

/// The cells each range gets on a strip `width` wide: its share of the key space, with
/// every touched range given at least [`TOUCHED_MIN`] cells (one when too many are
/// touched for that) from the ranges that have the most to spare.
fn strip_cells(ranges: &[RangeSpan], touched: &[bool], width: usize) -> Vec<usize> {
    let mut cells = Vec::with_capacity(ranges.len());
    let mut used = 0usize;
    for (n, r) in ranges.iter().enumerate() {
        let end = if n + 1 == ranges.len() {
            width
        } else {
            ((r.end * width as f64).round() as usize).clamp(used, width)
        };
        cells.push(end - used);
        used = end;
    }
    let lit = touched.iter().filter(|t| **t).count();
    let least = if lit * TOUCHED_MIN <= width {
        TOUCHED_MIN
    } else {
        1
    };
    let floor = |i: usize| if touched[i] { least } else { 0 };
    for i in 0..cells.len() {
        while touched[i] && cells[i] < least {
            // The range with the most cells above its own floor gives one.
            let donor = (0..cells.len())
                .filter(|&j| j != i && cells[j] > floor(j))
                .max_by_key(|&j| cells[j] - floor(j));
            let Some(j) = donor else { break };
            cells[j] -= 1;
            cells[i] += 1;
        }
    }
    cells
}

/// Cells a touched range gets at least on the strip: its boundary and its id's first
/// character.
const TOUCHED_MIN: usize = 2;

/// The logical partitions the query read, the first few by name.
fn logical_line(p: &Panel, width: usize) -> Option<Line<'static>> {
    let (named, total) = &p.logical;
    if *total == 0 {
        return None;
    }
    let names: Vec<String> = named.iter().map(|v| pk_label(v)).collect();
    let extra = total.saturating_sub(names.len());
    Some(Line::from(vec![
        Span::styled(format!("{total} logical: "), theme().dim),
        Span::styled(
            clip(
                &format!(
                    "{}{}",
                    names.join(", "),
                    if extra > 0 {
                        format!(" +{extra}")
                    } else {
                        String::new()
                    }
                ),
                width.saturating_sub(12),
            ),
            theme().string,
        ),
    ]))
}

/// A header and a row per physical partition the query ran on: charge, documents read
/// and returned, logical partitions.
fn range_table(panel: &Panel) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("range     RU  retr  out  lp", theme().header)];
    lines.extend(panel.partitions.iter().map(|p| {
        Line::raw(format!(
            "{:<5} {:>6} {:>5} {:>4} {:>3}",
            p.id,
            fmt_ru(p.request_charge),
            p.metrics.retrieved_document_count,
            p.metrics.output_document_count,
            p.logical_partitions.len()
        ))
    }));
    lines
}

/// The query's metrics summed over its pages: documents and bytes, index hits, times.
fn metrics_lines(m: &QueryMetrics) -> [Line<'static>; 2] {
    [
        Line::styled(
            format!(
                "retrieved {} ({}) · output {} ({})",
                m.retrieved_document_count,
                fmt_bytes(m.retrieved_document_size),
                m.output_document_count,
                fmt_bytes(m.output_document_size)
            ),
            theme().title,
        ),
        Line::styled(
            format!(
                "index hits {} · lookup {:.2} · load {:.2} · exec {:.2} ms",
                m.index_hit_document_count,
                m.index_lookup_time_in_ms,
                m.document_load_time_in_ms,
                m.query_engine_execution_time_in_ms
            ),
            theme().dim,
        ),
    ]
}

/// The indexes the query used, and those it lacked with the key that adds one.
fn index_lines(p: &Panel, width: usize) -> Vec<Line<'static>> {
    let Some(im) = p.index_metrics else {
        return Vec::new();
    };
    let used: Vec<String> = im
        .utilized_single_indexes
        .iter()
        .map(|i| i.index_spec.clone())
        .chain(
            im.utilized_composite_indexes
                .iter()
                .map(|i| format!("({})", i.index_specs.join(", "))),
        )
        .collect();
    let missing: Vec<String> = im
        .potential_single_indexes
        .iter()
        .map(|i| format!("{} [{}]", i.index_spec, i.index_impact_score))
        .chain(
            im.potential_composite_indexes
                .iter()
                .map(|i| format!("({}) [{}]", i.index_specs.join(", "), i.index_impact_score)),
        )
        .collect();
    let mut lines = Vec::new();
    if !used.is_empty() {
        lines.push(Line::styled(
            clip(&format!("indexes used: {}", used.join(", ")), width),
            theme().info,
        ));
    }
    if !missing.is_empty() {
        let key = p
            .add_index
            .as_ref()
            .map(|k| format!(" ({k} adds it)"))
            .unwrap_or_default();
        lines.push(Line::styled(
            clip(&format!("missing: {}{key}", missing.join(", ")), width),
            theme().hot,
        ));
    }
    lines
}
