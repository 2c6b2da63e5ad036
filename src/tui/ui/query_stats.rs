//! The query console's stats panel: what the last query cost and how it ran, one part a
//! piece: the charge line, the routing and the access path, the key-space strip, the
//! logical partitions it touched, a row per physical partition, the totals of its
//! metrics, and the indexes it used or missed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::theme;
use super::{clip, fmt_bytes, fmt_ru, pane};
use crate::tui::action::Action;
use crate::tui::keymap::Mode;
use crate::tui::state::App;
use crate::tui::state::query::{QueryRun, QueryState, RangeSpan};
use crate::tui::state::tree::pk_label;

/// How many logical partitions the panel names before it counts the rest.
const NAMED_LOGICAL: usize = 8;

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let block = pane("Stats".into(), false);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let q = &app.query;
    let Some(run) = &q.run else {
        f.render_widget(
            Paragraph::new("Charge, routing and partitions appear here.").style(theme().dim),
            inner,
        );
        return;
    };
    let width = inner.width as usize;
    let mut lines = vec![charge_line(q, run)];
    lines.extend(routing_line(run, width));
    lines.extend(access_line(run, width));
    lines.push(strip(&q.ranges, run, width));
    lines.extend(logical_line(run, width));
    lines.extend(range_table(run));
    lines.extend(metrics_lines(run));
    lines.extend(index_lines(app, run, width));
    f.render_widget(Paragraph::new(lines), inner);
}

/// The charge, documents, pages and time, and while it runs, how far it got.
fn charge_line(q: &QueryState, run: &QueryRun) -> Line<'static> {
    let running = if q.running.is_some() {
        let done = run.progress.len();
        let retrieved: u64 = run
            .progress
            .values()
            .map(|p| p.retrieved_document_count)
            .sum();
        format!(
            " · running: {done}/{} ranges, {retrieved} docs read",
            q.ranges.len()
        )
    } else {
        String::new()
    };
    Line::from(vec![
        Span::styled(format!("{} RU", fmt_ru(run.request_charge)), theme().charge),
        Span::styled(
            format!(
                " {} docs · {} page{} · {:.1} ms{running}",
                run.documents.len(),
                run.pages,
                if run.pages == 1 { "" } else { "s" },
                run.elapsed_ms
            ),
            theme().dim,
        ),
    ])
}

/// Single-partition, targeted or fan-out, and why.
fn routing_line(run: &QueryRun, width: usize) -> Option<Line<'static>> {
    let (kind, reason) = run.routing.as_ref()?;
    let style = match kind.as_str() {
        "single-partition" => theme().info,
        "targeted" => theme().number,
        _ => theme().hot,
    };
    Some(Line::from(vec![
        Span::styled(kind.clone(), style),
        Span::styled(
            format!(": {}", clip(reason, width.saturating_sub(kind.len() + 2))),
            theme().title,
        ),
    ]))
}

/// How the documents were found: a scan or the indexes it went through, and why.
fn access_line(run: &QueryRun, width: usize) -> Option<Line<'static>> {
    let a = run.access.as_ref()?;
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
/// query touched lit.
fn strip(ranges: &[RangeSpan], run: &QueryRun, width: usize) -> Line<'static> {
    let width = width.max(10);
    if ranges.is_empty() {
        return Line::styled("key space: …", theme().dim);
    }
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (n, r) in ranges.iter().enumerate() {
        let end = if n + 1 == ranges.len() {
            width
        } else {
            ((r.end * width as f64).round() as usize).clamp(used, width)
        };
        let cells = end - used;
        if cells == 0 {
            continue;
        }
        let touched = run.partitions.contains_key(&r.id) || run.progress.contains_key(&r.id);
        // A boundary mark, then the id centred in the range's share of the width.
        let text = if cells >= 2 {
            let w = cells - 1;
            format!("▏{:─^w$}", clip(&r.id, w))
        } else {
            "▏".to_string()
        };
        spans.push(Span::styled(
            text,
            if touched { theme().lit } else { theme().unlit },
        ));
        used = end;
    }
    Line::from(spans)
}

/// The logical partitions the query read, the first few by name.
fn logical_line(run: &QueryRun, width: usize) -> Option<Line<'static>> {
    let lps = run.logical_partitions();
    if lps.is_empty() {
        return None;
    }
    let names: Vec<String> = lps.iter().take(NAMED_LOGICAL).map(pk_label).collect();
    let extra = lps.len().saturating_sub(NAMED_LOGICAL);
    Some(Line::from(vec![
        Span::styled(format!("{} logical: ", lps.len()), theme().dim),
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
fn range_table(run: &QueryRun) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("range     RU  retr  out  lp", theme().header)];
    lines.extend(run.partitions.values().map(|p| {
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
fn metrics_lines(run: &QueryRun) -> [Line<'static>; 2] {
    let m = &run.metrics;
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
fn index_lines(app: &App, run: &QueryRun, width: usize) -> Vec<Line<'static>> {
    let Some(im) = &run.index_metrics else {
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
        let key = app
            .keymap
            .key_for(Mode::Results, Action::ApplyIndex)
            .map(|k| format!(" ({k} adds it)"))
            .unwrap_or_default();
        lines.push(Line::styled(
            clip(&format!("missing: {}{key}", missing.join(", ")), width),
            theme().hot,
        ));
    }
    lines
}
