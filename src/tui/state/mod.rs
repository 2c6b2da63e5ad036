//! Everything the screen shows, in one value that `update` changes and drawing reads.

pub mod document;
pub mod editor;
pub mod feed;
pub mod json_tree;
pub mod list;
pub mod palette;
pub mod query;
pub mod requests;
pub mod tail;
pub mod tree;

use std::sync::Arc;

use serde_json::Value;

use super::keymap::{Keymap, Mode};
use crate::engine::PartitionsReport;
use editor::TextBuffer;
use feed::FeedState;
use json_tree::JsonTree;
use palette::PaletteState;
use query::QueryState;
use requests::{GatewayState, RequestsState};
use tree::TreeState;

/// The view on the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    Item,
    Query,
    Feed,
    Partitions,
    Workbench,
    /// The gateway's requests, live.
    Requests,
}

impl View {
    pub const ALL: [View; 6] = [
        View::Item,
        View::Query,
        View::Feed,
        View::Partitions,
        View::Workbench,
        View::Requests,
    ];

    pub fn title(self) -> &'static str {
        match self {
            View::Item => "Item",
            View::Query => "Query",
            View::Feed => "Change feed",
            View::Partitions => "Partitions",
            View::Workbench => "Workbench",
            View::Requests => "Requests",
        }
    }

    /// The tab label when the status line is short of room.
    pub fn short(self) -> &'static str {
        match self {
            View::Item => "Item",
            View::Query => "Query",
            View::Feed => "Feed",
            View::Partitions => "Parts",
            View::Workbench => "Bench",
            View::Requests => "Reqs",
        }
    }
}

/// Which pane keys go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Tree,
    /// The view; for the query console, its results.
    View,
    /// The query editor.
    Editor,
}

/// Popups and overlays, drawn and fed keys top first.
#[derive(Debug)]
pub enum Layer {
    Help {
        scroll: usize,
    },
    /// The session's messages, newest last.
    Messages {
        scroll: usize,
    },
    Palette,
    /// A question with a yes/no answer and what to do on yes.
    Confirm {
        text: String,
        on_yes: Confirmed,
    },
    /// A one-line prompt; `purpose` says what the answer is for.
    Prompt {
        title: String,
        input: TextBuffer,
        purpose: PromptFor,
    },
    /// The query's parameter values, one field per `@name`.
    Params {
        fields: Vec<(String, TextBuffer)>,
        selected: usize,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// Run the console's query, whose cost estimate was shown.
    RunQuery,
    DeleteItem {
        db: String,
        c: String,
        id: String,
        pk: Value,
        etag: Option<String>,
    },
    /// Add an index to a container's policy (one included path or one composite index).
    ApplyIndex {
        db: String,
        c: String,
        single: Option<String>,
        composite: Option<Vec<String>>,
    },
    /// Open the editor again on an edit that was not JSON, compared with the original.
    Reedit {
        db: String,
        c: String,
        text: String,
        original: String,
        if_match: Option<String>,
        create: bool,
    },
    /// Save an edited or new item (the body as typed) after showing the change.
    SaveItem {
        db: String,
        c: String,
        body: String,
        if_match: Option<String>,
        create: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptFor {
    TreeFilter,
    FeedFilter,
    /// Search within the loaded query results.
    ResultsFilter,
    FeedStartTime,
    RequestsFilter,
    SampleName,
    ExportPath {
        db: String,
        c: String,
    },
}

/// Long work running in the background, with its progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub ticket: u64,
    pub title: String,
    pub done: u64,
    pub total: u64,
}

/// The item shown in the item view, with where it came from.
#[derive(Debug, Clone)]
pub struct ItemView {
    pub db: String,
    pub c: String,
    pub id: String,
    pub pk: Value,
    pub etag: Option<String>,
    pub tree: JsonTree,
    pub request_charge: f64,
    pub range: String,
    /// A short description of the last change to it (shown after a save).
    pub diff: Option<Vec<String>>,
}

/// The item being read for the item view.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRequest {
    pub ticket: u64,
    pub db: String,
    pub c: String,
    pub id: String,
    pub pk: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// How many messages the session's log keeps.
pub const LOG_LIMIT: usize = 500;

/// A message as the log keeps it: when (Unix second), how grave, and its whole text.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub at: i64,
    pub level: Level,
    pub text: String,
}

/// The partitions view: the report and its refresh ticket.
#[derive(Debug, Clone, Default)]
pub struct PartitionsState {
    pub target: Option<(String, String)>,
    pub report: Option<PartitionsReport>,
    pub selected: usize,
    pub loading: Option<u64>,
    /// Range ids seen on the previous refresh, to point out splits as they happen.
    pub previous_ranges: Vec<String>,
    pub split_seen: Option<String>,
}

/// The workbench view: the suite to run and its last report.
#[derive(Debug, Clone)]
pub struct WorkbenchState {
    pub suite: String,
    pub report: Option<crate::workbench::Report>,
    pub selected: usize,
    pub offset: usize,
    /// Whether the selected row's operations are shown.
    pub detail: bool,
}

impl Default for WorkbenchState {
    fn default() -> WorkbenchState {
        WorkbenchState {
            suite: "blog".into(),
            report: None,
            selected: 0,
            offset: 0,
            detail: true,
        }
    }
}

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    pub data_dir: String,
    /// The store takes no writes (read-only media, no permission): the status line says so.
    pub read_only: bool,
    /// The backend bills its requests (a remote account): a query is estimated, and one
    /// that fans out asks before it runs.
    pub ask_before_fan_out: bool,
    /// Query texts estimated (and, for a fan-out, confirmed) already: each asks once.
    pub estimated: std::collections::HashSet<String>,
    pub keymap: Arc<Keymap>,
    pub view: View,
    pub focus: Focus,
    pub layers: Vec<Layer>,
    pub tree: TreeState,
    pub item: Option<ItemView>,
    pub item_loading: Option<ItemRequest>,
    /// Partition key paths of the containers seen so far, by (database, container).
    pub pk_paths: std::collections::HashMap<(String, String), Vec<String>>,
    pub query: QueryState,
    pub feed: FeedState,
    pub partitions: PartitionsState,
    pub workbench: WorkbenchState,
    /// The gateway run in this process, and the requests it served.
    pub gateway: GatewayState,
    pub requests: RequestsState,
    pub palette: PaletteState,
    /// The container the last selection belongs to.
    pub container: Option<(String, String)>,
    pub last_charge: Option<f64>,
    pub job: Option<Job>,
    pub message: Option<(Level, String)>,
    /// Every message of the session, oldest first (the status line shows the last, cut
    /// to fit; the log shows them whole).
    pub log: std::collections::VecDeque<LogEntry>,
    /// The focused pane has the whole screen.
    pub zoom: bool,
    /// Unix second of the last tick (drives the feed rate and partitions refresh).
    pub now: i64,
    /// Tickets for background work: every result carries the ticket it was asked with,
    /// and results whose ticket is no longer awaited are dropped.
    pub next_ticket: u64,
    pub quit: bool,
    /// Rows of the main list area at the last draw (for paging keys).
    pub page_rows: usize,
    /// The screen at the last draw: where a click lands is worked out against it.
    pub screen: ratatui::layout::Rect,
}

impl App {
    pub fn new(data_dir: String, keymap: Arc<Keymap>) -> App {
        App {
            data_dir,
            read_only: false,
            ask_before_fan_out: false,
            estimated: Default::default(),
            keymap,
            view: View::default(),
            focus: Focus::default(),
            layers: Vec::new(),
            tree: TreeState::default(),
            item: None,
            item_loading: None,
            pk_paths: Default::default(),
            query: QueryState::default(),
            feed: FeedState::default(),
            partitions: PartitionsState::default(),
            workbench: WorkbenchState::default(),
            gateway: GatewayState::default(),
            requests: RequestsState::default(),
            palette: PaletteState::new(),
            container: None,
            last_charge: None,
            job: None,
            message: None,
            log: Default::default(),
            zoom: false,
            now: 0,
            next_ticket: 1,
            quit: false,
            page_rows: 20,
            screen: ratatui::layout::Rect::default(),
        }
    }

    pub fn ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// The keymap mode keys are read in now.
    pub fn mode(&self) -> Mode {
        match self.layers.last() {
            Some(Layer::Help { .. } | Layer::Messages { .. }) => Mode::Help,
            Some(Layer::Palette) => Mode::Palette,
            Some(Layer::Prompt { .. } | Layer::Params { .. } | Layer::Confirm { .. }) => {
                Mode::Input
            }
            None => self.base_mode(),
        }
    }

    /// The mode of the panes, ignoring layers.
    pub fn base_mode(&self) -> Mode {
        match (self.focus, self.view) {
            (Focus::Tree, _) => Mode::Tree,
            (Focus::Editor, _) => Mode::Editor,
            (Focus::View, View::Item) => Mode::Item,
            (Focus::View, View::Query) => Mode::Results,
            (Focus::View, View::Feed) => Mode::Feed,
            (Focus::View, View::Partitions) => Mode::Partitions,
            (Focus::View, View::Workbench) => Mode::Workbench,
            (Focus::View, View::Requests) => Mode::Requests,
        }
    }

    /// The partition key paths of a container, as last seen in the tree or a query.
    pub fn partition_key_paths(&self, db: &str, c: &str) -> Vec<String> {
        self.pk_paths
            .get(&(db.to_string(), c.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.say(Level::Info, text.into());
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.say(Level::Error, text.into());
    }

    /// Shows a message on the status line and keeps it in the log.
    fn say(&mut self, level: Level, text: String) {
        self.log.push_back(LogEntry {
            at: self.now,
            level,
            text: text.clone(),
        });
        if self.log.len() > LOG_LIMIT {
            self.log.pop_front();
        }
        self.message = Some((level, text));
    }
}
