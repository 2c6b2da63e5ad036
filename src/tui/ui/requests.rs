//! The Requests view: every request the gateway served, newest at the bottom, with the
//! columns that fit; the selected request's line, body or query text and headers, and for a
//! query the stats panel the query console shows; without a gateway, how to start one.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

use super::query_stats::{self, Panel};
use super::theme::theme;
use super::{ListArea, fit, fmt_ru, is_focused, mark_selected, pane, paused_note};
use crate::gateway::{EMULATOR_KEY, Exchange};
use crate::tui::action::Action;
use crate::tui::keymap::Mode;
use crate::tui::state::App;
use crate::tui::state::list::offset_showing;
use crate::tui::state::requests::{GatewayStatus, container_of, resource_label};

/// The stats panel's width beside the request, when the detail is wide enough for both.
const STATS_WIDTH: u16 = 42;

/// The summary line, the request list and the selected request's detail, inside the
/// border.
fn areas(app: &App, inner: Rect) -> [Rect; 3] {
    let r = &app.requests;
    let detail_height = match r.tail.selected_row() {
        None => 0,
        Some(_) if r.expanded => inner.height.saturating_sub(5),
        Some(_) => (inner.height / 2).clamp(6, 22),
    };
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(detail_height),
    ])
    .areas(inner)
}

/// The request list's rows on a pane drawn in `area`, if it lists any.
pub fn list(app: &App, area: Rect) -> Option<ListArea> {
    let t = &app.requests.tail;
    if t.rows.is_empty() {
        return None;
    }
    let [_, list, _] = areas(app, pane(String::new(), false).inner(area));
    Some(ListArea::below(
        list,
        1,
        t.selected,
        t.offset,
        t.visible().len(),
    ))
}

pub fn draw(f: &mut Frame, app: &App, area: Rect) -> usize {
    let focused = is_focused(app, true);
    let r = &app.requests;
    let gateway = match &app.gateway.status {
        GatewayStatus::Off => "gateway off".to_string(),
        GatewayStatus::Starting { .. } => format!("starting on {}…", app.gateway.addr),
        GatewayStatus::Serving { info } => format!(
            "⇄ {} · {} req/s",
            info.endpoint,
            super::fmt_rate(app.gateway.rate)
        ),
        GatewayStatus::Stopping { .. } => "stopping…".to_string(),
    };
    let paused = paused_note(r.tail.held_back());
    let block = pane(format!("Requests · {gateway}{paused}"), focused);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if r.tail.rows.is_empty() {
        f.render_widget(
            Paragraph::new(explain(app)).wrap(Wrap { trim: false }),
            inner,
        );
        return inner.height.saturating_sub(2) as usize;
    }
    let selected = r.tail.selected_row();
    let [top, list, detail] = areas(app, inner);
    let filter = if r.tail.filter.text.is_empty() {
        String::new()
    } else {
        format!(" · filter {}", r.tail.filter.text)
    };
    f.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "{} · {} dropped · {} RU{filter}",
                super::plural(r.tail.received, "request"),
                r.tail.dropped,
                fmt_ru(r.request_charge)
            ),
            theme().dim,
        )),
        top,
    );
    let rows = draw_list(f, app, focused, list);
    if let Some(e) = selected {
        draw_detail(f, app, e, detail);
    }
    rows
}

/// What the view says before the first request: how to start the gateway, or where to
/// point an application at it.
fn explain(app: &App) -> Vec<Line<'static>> {
    let key = |action| {
        app.keymap
            .key_for(Mode::Requests, action)
            .map_or_else(|| action.name(), |k| k.to_string())
    };
    match &app.gateway.status {
        GatewayStatus::Serving { info } => {
            let account_key = if info.custom_key {
                "<the key in $COSMOSCOPE_GATEWAY_KEY>".to_string()
            } else {
                EMULATOR_KEY.to_string()
            };
            let mut lines = vec![
                Line::styled(
                    format!("Waiting for requests on {}", info.endpoint),
                    theme().title,
                ),
                Line::raw(""),
                Line::styled("Point an application on the SDKs at it:", theme().dim),
                Line::styled(
                    format!(
                        "AccountEndpoint={};AccountKey={account_key};",
                        info.endpoint
                    ),
                    theme().string,
                ),
            ];
            if let Some(cert) = &info.certificate {
                lines.push(Line::styled(
                    format!(
                        "HTTPS with a self-signed certificate: have the client trust {}",
                        cert.display()
                    ),
                    theme().dim,
                ));
            }
            if !info.custom_key {
                lines.push(Line::styled(
                    "(the emulator's well-known key; with $COSMOSCOPE_GATEWAY_KEY set, clients sign with that instead)",
                    theme().dim,
                ));
            }
            lines
        }
        GatewayStatus::Starting { .. } => vec![Line::styled(
            format!("Starting the gateway on {}…", app.gateway.addr),
            theme().dim,
        )],
        GatewayStatus::Off | GatewayStatus::Stopping { .. } => {
            let mut lines = vec![Line::styled("The gateway is not running.", theme().title)];
            if let Some(why) = &app.gateway.failed {
                lines.push(Line::styled(
                    format!("It did not start: {why}"),
                    theme().error,
                ));
            }
            lines.extend([
            Line::styled(
                "It serves the Cosmos DB REST API on this store, so applications on the official SDKs run against it; their requests show here as they happen.",
                theme().dim,
            ),
            Line::raw(""),
            Line::from(vec![
                Span::styled(format!("{:<10}", key(Action::Gateway)), theme().hint_key),
                Span::raw(format!("start it on {}", app.gateway.addr)),
            ]),
            Line::from(vec![
                Span::styled(format!("{:<10}", key(Action::Palette)), theme().hint_key),
                Span::raw(format!("palette: gateway — {}", app.gateway.action_title())),
            ]),
            Line::from(vec![
                Span::styled("cosmoscope --serve [ADDR]", theme().hint_key),
                Span::raw(" opens the explorer with the gateway running"),
            ]),
            Line::from(vec![
                Span::styled("cosmoscope serve [--addr ADDR]", theme().hint_key),
                Span::raw(" runs it alone, without the explorer (its requests are not shown here)"),
            ]),
            ]);
            lines
        }
    }
}

/// The columns that fit, in the order time, client, operation, resource, status, RU,
/// ranges, items, latency: the resource gets the room left, and the optional ones come in
/// (latency, ranges, items, client) while it keeps at least [`Columns::MIN_RESOURCE`].
struct Columns {
    op: usize,
    resource: usize,
    latency: bool,
    ranges: bool,
    /// Room for the range ids (more on a wide screen, for a fan-out's list).
    ranges_w: usize,
    items: bool,
    client: bool,
}

impl Columns {
    const TIME: usize = 8;
    const STATUS: usize = 8;
    const RU: usize = 6;
    const LATENCY: usize = 7;
    const RANGES: usize = 7;
    const ITEMS: usize = 5;
    const CLIENT: usize = 15;
    const MIN_RESOURCE: usize = 16;
    const WIDE_RESOURCE: usize = 48;
    const RANGES_MORE: usize = 18;

    fn new(width: u16) -> Columns {
        let width = width as usize;
        let mut cols = Columns {
            op: 12,
            resource: 0,
            latency: false,
            ranges: false,
            ranges_w: Columns::RANGES,
            items: false,
            client: false,
        };
        let base = Columns::TIME + 1 + 1 + 1 + Columns::STATUS + 1 + Columns::RU;
        if width < base + cols.op + Columns::MIN_RESOURCE {
            cols.op = 10;
        }
        let mut left = width.saturating_sub(base + cols.op);
        for (on, w) in [
            (&mut cols.latency, Columns::LATENCY),
            (&mut cols.ranges, Columns::RANGES),
            (&mut cols.items, Columns::ITEMS),
            (&mut cols.client, Columns::CLIENT),
        ] {
            if left >= w + 1 + Columns::MIN_RESOURCE {
                *on = true;
                left -= w + 1;
            }
        }
        // A resource wider than paths get lends the ranges room for a dozen ids.
        if cols.ranges && left > Columns::WIDE_RESOURCE {
            let extra = (left - Columns::WIDE_RESOURCE).min(Columns::RANGES_MORE);
            cols.ranges_w += extra;
            left -= extra;
        }
        cols.resource = left;
        cols
    }

    fn header(&self) -> Line<'static> {
        let mut s = format!("{:<w$}", "time", w = Columns::TIME);
        if self.client {
            s.push_str(&format!(" {:<w$}", "client", w = Columns::CLIENT));
        }
        s.push_str(&format!(
            " {:<op$} {:<res$} {:>st$} {:>ru$}",
            "operation",
            "resource",
            "status",
            "RU",
            op = self.op,
            res = self.resource,
            st = Columns::STATUS,
            ru = Columns::RU
        ));
        if self.ranges {
            s.push_str(&format!(" {:>w$}", "ranges", w = self.ranges_w));
        }
        if self.items {
            s.push_str(&format!(" {:>w$}", "items", w = Columns::ITEMS));
        }
        if self.latency {
            s.push_str(&format!(" {:>w$}", "latency", w = Columns::LATENCY));
        }
        Line::styled(s, theme().header)
    }

    fn row(&self, e: &Exchange) -> Line<'static> {
        let mut spans = vec![Span::raw(format!(
            "{:<w$}",
            clock(e.at_ms),
            w = Columns::TIME
        ))];
        if self.client {
            spans.push(Span::styled(
                format!(" {}", fit(&e.client.to_string(), Columns::CLIENT)),
                theme().dim,
            ));
        }
        spans.push(Span::styled(
            format!(" {}", fit(e.operation, self.op)),
            theme().key,
        ));
        spans.push(Span::raw(format!(
            " {}",
            fit(&resource_label(&e.path), self.resource)
        )));
        spans.push(Span::styled(
            format!(" {:>w$}", status_text(e), w = Columns::STATUS),
            status_style(e),
        ));
        spans.push(Span::styled(
            format!(" {:>w$}", fmt_ru(e.request_charge), w = Columns::RU),
            theme().charge,
        ));
        if self.ranges {
            spans.push(Span::raw(format!(
                " {:>w$}",
                ranges_text(&e.ranges, self.ranges_w),
                w = self.ranges_w
            )));
        }
        if self.items {
            let items = e.item_count.map(|n| n.to_string()).unwrap_or_default();
            spans.push(Span::raw(format!(" {items:>w$}", w = Columns::ITEMS)));
        }
        if self.latency {
            spans.push(Span::styled(
                format!(" {:>w$}", fmt_latency(e.latency), w = Columns::LATENCY),
                theme().dim,
            ));
        }
        Line::from(spans)
    }
}

/// The requests that pass the filter, a row each under a header; returns how many rows
/// fit.
fn draw_list(f: &mut Frame, app: &App, focused: bool, area: Rect) -> usize {
    let r = &app.requests;
    let visible = r.tail.visible();
    let height = area.height.saturating_sub(1) as usize;
    let offset = offset_showing(r.tail.selected, r.tail.offset, height);
    let cols = Columns::new(area.width);
    let mut lines = vec![cols.header()];
    for (row, &i) in visible.iter().enumerate().skip(offset).take(height) {
        let line = cols.row(&r.tail.rows[i]);
        lines.push(mark_selected(line, row == r.tail.selected, focused));
    }
    if visible.is_empty() {
        lines.push(Line::styled(
            "no request passes the filter (/ changes it, esc in the prompt clears it)",
            theme().dim,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
    height
}

/// The selected request: its line, its query or body, its headers; beside or under it, a
/// query's stats panel.
fn draw_detail(f: &mut Frame, app: &App, e: &Exchange, area: Rect) {
    let Some(page) = &e.query else {
        draw_request(f, e, area);
        return;
    };
    let ranges = container_of(&e.path)
        .map(|(db, c)| app.requests.ranges_of(&db, &c))
        .unwrap_or_default();
    let documents = e.item_count.unwrap_or(page.documents.len());
    let elapsed_ms = e.latency.as_secs_f64() * 1000.0;
    let panel = Panel::of_page(page, documents, elapsed_ms, ranges);
    let (request, stats) = if area.width >= 30 + STATS_WIDTH * 2 {
        let [r, s] =
            Layout::horizontal([Constraint::Min(30), Constraint::Length(STATS_WIDTH)]).areas(area);
        (r, s)
    } else {
        let stats_height = panel.height().min(area.height.saturating_sub(3));
        let [r, s] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(stats_height)]).areas(area);
        (r, s)
    };
    draw_request(f, e, request);
    query_stats::draw(f, stats, Some(&panel), "");
}

fn draw_request(f: &mut Frame, e: &Exchange, area: Rect) {
    let mut lines = vec![summary(e)];
    lines.extend(body_lines(e));
    if !e.request_headers.is_empty() {
        lines.push(Line::styled("headers:", theme().dim));
        lines.extend(e.request_headers.iter().map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k}: "), theme().key),
                Span::raw(v.clone()),
            ])
        }));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// `POST shop/orders/docs · Query · 200 · 2.9 RU · 3 items · 1.2 ms · 127.0.0.1:5301 · ranges 0,1`
fn summary(e: &Exchange) -> Line<'static> {
    let mut rest = format!(" · {} · {} RU", e.operation, fmt_ru(e.request_charge));
    if let Some(n) = e.item_count {
        rest.push_str(&format!(" · {n} item{}", if n == 1 { "" } else { "s" }));
    }
    rest.push_str(&format!(" · {} · {}", fmt_latency(e.latency), e.client));
    if !e.ranges.is_empty() {
        rest.push_str(&format!(
            " · range{} {}",
            if e.ranges.len() == 1 { "" } else { "s" },
            e.ranges.join(",")
        ));
    }
    Line::from(vec![
        Span::styled(
            format!("{} {} ", e.method, resource_label(&e.path)),
            theme().header,
        ),
        Span::styled(status_text(e), status_style(e)),
        Span::styled(rest, theme().title),
    ])
}

/// A query's text and parameters, or the body as indented JSON (or as sent, if not JSON).
fn body_lines(e: &Exchange) -> Vec<Line<'static>> {
    if e.request_body.is_empty() {
        return Vec::new();
    }
    let json: Option<Value> = serde_json::from_str(&e.request_body).ok();
    let query_text = (e.query.is_some() || e.operation.starts_with("Query"))
        .then(|| json.as_ref().and_then(|v| v.get("query")?.as_str()))
        .flatten();
    if let Some(text) = query_text {
        let mut lines: Vec<Line> = text
            .lines()
            .map(|l| Line::styled(l.to_string(), theme().string))
            .collect();
        let params = json
            .as_ref()
            .and_then(|v| v.get("parameters")?.as_array().cloned())
            .unwrap_or_default();
        for p in params {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
            let value = p.get("value").map(Value::to_string).unwrap_or_default();
            lines.push(Line::from(vec![
                Span::styled(format!("  {name}"), theme().param),
                Span::raw(format!(" = {value}")),
            ]));
        }
        return lines;
    }
    let text = json
        .as_ref()
        .and_then(|v| serde_json::to_string_pretty(v).ok())
        .unwrap_or_else(|| e.request_body.clone());
    text.lines()
        .map(|l| Line::styled(l.to_string(), theme().string))
        .collect()
}

/// `200`, or `404/1003` with a substatus.
fn status_text(e: &Exchange) -> String {
    let code = e.status.as_u16();
    if e.substatus == 0 {
        code.to_string()
    } else {
        format!("{code}/{}", e.substatus)
    }
}

fn status_style(e: &Exchange) -> Style {
    match e.status.as_u16() {
        200..=299 => theme().added,
        300..=399 => theme().dim,
        429 => theme().hot,
        400..=499 => theme().number,
        _ => theme().error,
    }
}

/// The ranges a request touched, as ids when they fit in `width`, else as a count.
fn ranges_text(ranges: &[String], width: usize) -> String {
    let ids = ranges.join(",");
    if ids.chars().count() <= width {
        ids
    } else {
        format!("{} rngs", ranges.len())
    }
}

/// `0.4ms`, `12ms`, `1.2s`.
fn fmt_latency(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.1}s", ms / 1000.0)
    }
}

/// The time of day (UTC, as the change feed view shows it) of a Unix millisecond.
fn clock(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms)
        .map(|t| t.format("%H:%M:%S").to_string())
        .unwrap_or_default()
}
