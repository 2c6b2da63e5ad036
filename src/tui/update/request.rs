//! What a view's reaction asks of another view, as data. Views never call each other: a
//! view whose reaction reaches past its own part of the state (Enter on an item in the tree
//! shows it in the item view, a finished job reloads the tree) returns a [`Reaction`] that
//! names the [`Request`], and the router in `update/mod.rs` carries it out, as helix's
//! compositor does with the callbacks its components return.

use serde_json::Value;

use crate::tui::action::Action;
use crate::tui::effect::{Effect, JobKind};

/// Something for another view (or the router) to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Perform an action as if its key had been pressed (chosen in the palette, or the
    /// parameters form's Enter running the query).
    Act(Action),
    /// Reload the resource tree: databases or items came or went.
    ReloadTree,
    /// Open the databases whose containers match the tree filter, so that it finds what
    /// is not expanded yet.
    RevealTreeMatches,
    /// Select the tree node at this path (database, container, range), loading the levels
    /// that lead to it.
    JumpTo(Vec<String>),
    /// Show an item in the item view.
    ReadItem {
        db: String,
        c: String,
        id: String,
        pk: Value,
    },
    /// Show a stored procedure, trigger or UDF in the item view.
    ShowScript {
        db: String,
        c: String,
        kind: crate::engine::ScriptKind,
        id: String,
    },
    /// Start a new script named by the prompt's `answer` (`$EDITOR` opens on it).
    NewScript {
        db: String,
        c: String,
        kind: crate::engine::ScriptKind,
        answer: String,
    },
    /// Put history entry `.0` (an index into the history) into the query editor.
    UseHistory(usize),
    /// Export the query's result to the file the prompt named.
    ExportResult { path: String },
    /// Enter in the execute form: run the stored procedure if the form is complete.
    ExecuteForm,
    /// Start long work, unless some is running.
    StartJob { title: String, job: JobKind },
    /// Follow the change feed again from the time typed in the start prompt.
    RestartFeed { from: String },
    /// The answer to one of the advisor view's prompts.
    AdvisorAnswer {
        field: crate::tui::state::advisor::AdvisorField,
        text: String,
    },
}

/// A view's answer when it may reach past its own state: the effects it asks of the
/// runtime, then at most one request for another view. The router performs the request
/// after the view returns, so its effects follow the view's own.
#[derive(Debug, Default)]
pub struct Reaction {
    pub effects: Vec<Effect>,
    pub then: Option<Request>,
}

impl Reaction {
    /// The view's own effects, then `request`.
    pub fn then(effects: Vec<Effect>, request: Request) -> Reaction {
        Reaction {
            effects,
            then: Some(request),
        }
    }
}

impl From<Vec<Effect>> for Reaction {
    fn from(effects: Vec<Effect>) -> Reaction {
        Reaction {
            effects,
            then: None,
        }
    }
}

impl From<Request> for Reaction {
    fn from(request: Request) -> Reaction {
        Reaction::then(Vec::new(), request)
    }
}
