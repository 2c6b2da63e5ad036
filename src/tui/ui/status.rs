//! The status line: the data directory, `read-only` when the store takes no writes (and
//! `read-write` on a remote account whose writes the user allowed), the
//! container, the view tabs, the gateway with
//! its request rate, a running job, the last charge and the message. The tabs shorten
//! (full titles, short ones, then numbers with only the current view named) so that the
//! container, the gateway and the job fit with room for the message (up to a point), and
//! the data directory takes only the room left.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme::theme;
use super::{clip, escape, fmt_count, fmt_rate, fmt_ru};
use crate::tui::state::requests::GatewayStatus;
use crate::tui::state::{App, Level, View};

/// Room kept for the charge and the message: what they need, within these bounds.
const MESSAGE_ROOM: (usize, usize) = (16, 64);

#[derive(Clone, Copy)]
enum Tabs {
    Full,
    Short,
    Numbers,
}

pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let width = area.width as usize;
    // In the console, the container its queries run on.
    let container = match app.view {
        View::Query => app.query.target.as_ref().or(app.container.as_ref()),
        _ => app.container.as_ref(),
    }
    .map(|(db, c)| {
        Span::styled(
            format!(" {} ", escape(&format!("{db}/{c}"))),
            theme().status_container,
        )
    });
    let gateway = gateway(app).map(|g| Span::styled(format!(" {g} "), theme().info));
    // A remote account says which way it is at all times: writes there change real data.
    let read_only = if app.read_only {
        Some(Span::styled(" read-only ", theme().error))
    } else {
        app.write_switch
            .then(|| Span::styled(" read-write ", theme().hot))
    };
    let job = app.job.as_ref().map(|job| {
        let pct = if job.total > 0 {
            format!(" {}%", job.done * 100 / job.total.max(1))
        } else {
            String::new()
        };
        Span::styled(
            format!(
                " {} {}/{}{pct} (ctrl-x cancels) ",
                job.title,
                fmt_count(job.done),
                fmt_count(job.total)
            ),
            theme().charge,
        )
    });
    let message = app.message.as_ref().map(|(level, text)| {
        let style = match level {
            Level::Info => theme().info,
            Level::Error => theme().error,
        };
        Span::styled(format!(" {}", escape(text)), style)
    });
    let charge = app
        .last_charge
        .map(|ru| Span::styled(format!(" {} RU ", fmt_ru(ru)), theme().charge));
    let wanted = [&charge, &message]
        .iter()
        .filter_map(|s| s.as_ref().map(Span::width))
        .sum::<usize>()
        .clamp(MESSAGE_ROOM.0, MESSAGE_ROOM.1);
    let fixed: usize = [&read_only, &container, &gateway, &job]
        .iter()
        .filter_map(|s| s.as_ref().map(Span::width))
        .sum();
    let fits = |tabs: &[Span]| fixed + width_of(tabs) + wanted <= width;
    let tabs = [Tabs::Full, Tabs::Short]
        .into_iter()
        .map(|t| tabs(app, t))
        .find(|t| fits(t))
        .unwrap_or_else(|| tabs(app, Tabs::Numbers));
    let mut spans = Vec::new();
    let dir_room = width.saturating_sub(fixed + width_of(&tabs) + wanted);
    if dir_room >= 8 {
        spans.push(Span::styled(
            format!(" {} ", clip(&app.data_dir, dir_room - 2)),
            theme().status_dir,
        ));
    }
    spans.extend(read_only);
    spans.extend(container);
    spans.extend(tabs);
    spans.extend(gateway);
    spans.extend(job);
    spans.extend(charge);
    spans.extend(message);
    f.render_widget(
        Paragraph::new(Line::from(spans)).style(theme().status),
        area,
    );
}

fn width_of(spans: &[Span]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// A tab per view, numbered as its key. The advisor's appears once it is opened: six tabs
/// fit an 80-column status line beside a container's name, seven do not.
fn tabs(app: &App, tabs: Tabs) -> Vec<Span<'static>> {
    View::ALL
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != View::Advisor || app.advisor.target.is_some())
        .map(|(i, v)| {
            let current = *v == app.view;
            let style = if current {
                theme().tab_active
            } else {
                theme().tab
            };
            let text = match tabs {
                Tabs::Full => format!(" {}:{} ", i + 1, v.title()),
                Tabs::Short => format!(" {}:{} ", i + 1, v.short()),
                Tabs::Numbers if current => format!(" {}:{} ", i + 1, v.short()),
                Tabs::Numbers => format!(" {} ", i + 1),
            };
            Span::styled(text, style)
        })
        .collect()
}

/// `⇄ 127.0.0.1:8081 12 req/s` while the gateway serves.
fn gateway(app: &App) -> Option<String> {
    match &app.gateway.status {
        GatewayStatus::Off => None,
        GatewayStatus::Starting { .. } => Some("⇄ starting…".into()),
        GatewayStatus::Serving { info } => Some(format!(
            "⇄ {} {} req/s",
            info.addr,
            fmt_rate(app.gateway.rate)
        )),
        GatewayStatus::Stopping { .. } => Some("⇄ stopping…".into()),
    }
}
