//! Asking for text over any view: opening a prompt or the parameters form, the text field
//! of the top layer, and the live reactions to typing in it (the tree and feed filters
//! apply as you type). This sits below the views: any of them may ask for text, and
//! nothing here calls a view; what the answer leads to is `layers`' (via the router).

use crate::tui::state::editor::TextBuffer;
use crate::tui::state::{App, Layer, PromptFor};

/// Opens a one-line prompt for `purpose`, filled with what it edits now.
pub fn open_prompt(app: &mut App, title: &str, purpose: PromptFor) {
    let initial = match &purpose {
        PromptFor::TreeFilter => app.tree.filter.clone().unwrap_or_default(),
        PromptFor::FeedFilter => app.feed.tail.filter.text.clone(),
        PromptFor::ResultsFilter => app.query.filter.clone().unwrap_or_default(),
        PromptFor::RequestsFilter => app.requests.tail.filter.text.clone(),
        PromptFor::FeedStartTime | PromptFor::SampleName | PromptFor::NewScript { .. } => {
            String::new()
        }
        PromptFor::ExportPath { db, c } => format!("{db}-{c}.ndjson"),
        PromptFor::Advisor(field) => app.advisor.field_text(field),
        PromptFor::ResultsExport => app
            .query
            .run
            .as_ref()
            .map(|r| format!("{}-result.json", r.target.1))
            .unwrap_or_default(),
    };
    app.layers.push(Layer::Prompt {
        title: title.to_string(),
        input: TextBuffer::new(&initial, false),
        purpose,
    });
    after_text_edit(app, false);
}

/// Opens the form for the query's `@parameters`, filled with their last values.
pub fn open_params(app: &mut App) {
    let names = app.query.param_names();
    if names.is_empty() {
        app.info("the query has no @parameters");
        return;
    }
    let fields = names
        .into_iter()
        .map(|n| {
            let value = app.query.params.get(&n).cloned().unwrap_or_default();
            (n, TextBuffer::new(&value, false))
        })
        .collect();
    app.layers.push(Layer::Params {
        fields,
        selected: 0,
    });
}

/// The text field of the top layer, if it has one.
pub fn text_field(app: &mut App) -> Option<&mut TextBuffer> {
    match app.layers.last_mut()? {
        Layer::Palette => Some(&mut app.palette.input),
        Layer::Prompt { input, .. } => Some(input),
        Layer::Params { fields, selected } => fields.get_mut(*selected).map(|(_, b)| b),
        Layer::Execute(form) => form.text_field(),
        Layer::History { input, .. } => Some(input),
        _ => None,
    }
}

/// Live reactions to typing: the tree, feed and requests filters apply as you type.
pub fn after_text_edit(app: &mut App, appended: bool) {
    match app.layers.last() {
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::TreeFilter,
            ..
        }) => {
            app.tree.filter = Some(input.text());
            app.tree.refilter();
        }
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::FeedFilter,
            ..
        }) => {
            let text = input.text();
            app.feed.tail.set_filter(&text);
        }
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::RequestsFilter,
            ..
        }) => {
            let text = input.text();
            app.requests.tail.set_filter(&text);
        }
        Some(Layer::Prompt {
            input,
            purpose: PromptFor::ResultsFilter,
            ..
        }) => {
            let text = input.text();
            app.query.filter = (!text.trim().is_empty()).then_some(text);
            app.query.refresh_rows();
        }
        Some(Layer::Palette) => app.palette.pattern_changed(appended),
        _ => {}
    }
}
