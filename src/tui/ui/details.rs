//! A container's details pane in the item view: its settings and statistics, scrolled.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

use super::script::report_lines;
use super::{is_focused, pane};
use crate::tui::state::App;
use crate::tui::state::details::DetailsView;

/// Draws the pane; returns its rows (for paging keys).
pub fn draw(f: &mut Frame, app: &App, d: &DetailsView, area: Rect) -> usize {
    let block = pane(
        format!("Container {}/{} · details", d.db, d.c),
        is_focused(app, true),
    );
    let inner = block.inner(area);
    f.render_widget(block, area);
    let lines = report_lines(d.details.lines(), inner.width);
    let height = usize::from(inner.height);
    let scroll = d.scroll.min(lines.len().saturating_sub(1));
    f.render_widget(
        Paragraph::new(
            lines
                .into_iter()
                .skip(scroll)
                .take(height)
                .collect::<Vec<_>>(),
        ),
        inner,
    );
    height
}
