//! Everything the screen shows, in one value that `update` changes and drawing reads.

pub mod advisor;
pub mod details;
pub mod document;
pub mod editor;
pub mod feed;
pub mod history;
pub mod json_tree;
pub mod list;
pub mod palette;
pub mod query;
pub mod requests;
pub mod script;
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
    /// The partition-key advisor on a container.
    Advisor,
}

impl View {
    pub const ALL: [View; 7] = [
        View::Item,
        View::Query,
        View::Feed,
        View::Partitions,
        View::Workbench,
        View::Requests,
        View::Advisor,
    ];

    pub fn title(self) -> &'static str {
        match self {
            View::Item => "Item",
            View::Query => "Query",
            View::Feed => "Change feed",
            View::Partitions => "Partitions",
            View::Workbench => "Workbench",
            View::Requests => "Requests",
            View::Advisor => "Advisor",
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
            View::Advisor => "Advise",
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
    /// A question with a few answers, each picked by its key (Esc picks none).
    Choose {
        text: String,
        choices: Vec<Choice>,
    },
    /// A value shown whole (a result's cell or document), scrollable and copyable.
    Value {
        title: String,
        text: String,
        scroll: usize,
    },
    /// A one-line prompt; `purpose` says what the answer is for.
    Prompt {
        title: String,
        input: TextBuffer,
        purpose: PromptFor,
    },
    /// The console's history, searched as you type; Enter takes the selected query.
    History {
        input: TextBuffer,
        selected: usize,
    },
    /// After a 412: the user's edit beside the item as it is stored now.
    Conflict(Conflict),
    /// The query's parameter values, one field per `@name`.
    Params {
        fields: Vec<(String, TextBuffer)>,
        selected: usize,
    },
    /// The form that executes a stored procedure.
    Execute(script::ExecuteForm),
}

/// One answer of a [`Layer::Choose`]: its key, what it says, and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub key: char,
    pub label: String,
    pub then: Confirmed,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// Turn the backend's writes on or off for the session.
    SetWrites { on: bool },
    /// Start long work (an export).
    Job {
        title: String,
        job: crate::tui::effect::JobKind,
    },
    /// Run the console's query, whose cost estimate was shown.
    RunQuery,
    /// List a range's logical partitions (a billed query), whose cost was shown.
    ListRange { key: String },
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
    /// Delete a stored procedure, trigger or UDF.
    DeleteScript {
        db: String,
        c: String,
        kind: crate::engine::ScriptKind,
        id: String,
    },
    /// Open the editor again on a script that did not compile (`spec.body` as typed),
    /// compared with the stored `original`.
    ReeditScript {
        db: String,
        c: String,
        spec: crate::engine::ScriptSpec,
        original: String,
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
    /// The advisor view's workload, candidates or copy name.
    Advisor(advisor::AdvisorField),
    ExportPath {
        db: String,
        c: String,
    },
    /// The file the query's result is exported to.
    ResultsExport,
    /// The name (and, for a trigger, type and operation) of a new script.
    NewScript {
        db: String,
        c: String,
        kind: crate::engine::ScriptKind,
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

/// An edit refused with 412: the text the user saved and the item as stored now, with
/// the etag a second save must match.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub db: String,
    pub c: String,
    pub mine: String,
    pub theirs: Value,
    pub etag: Option<String>,
}

/// The stored version being read after a 412, with the refused edit.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictRequest {
    pub ticket: u64,
    pub db: String,
    pub c: String,
    pub mine: String,
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
    /// The design whose requests the detail lists (an index into the report's designs),
    /// and the first of them shown.
    pub design: usize,
    pub detail_scroll: usize,
}

impl Default for WorkbenchState {
    fn default() -> WorkbenchState {
        WorkbenchState {
            suite: "blog".into(),
            report: None,
            selected: 0,
            offset: 0,
            detail: true,
            design: 0,
            detail_scroll: 0,
        }
    }
}

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    pub data_dir: String,
    /// The store takes no writes (read-only media, no permission, a remote account until
    /// the user allows them): the status line says so.
    pub read_only: bool,
    /// Writes can be turned on and off for the session (a remote account): the status line
    /// shows read-only or read-write, and a refused write says how to allow writes.
    pub write_switch: bool,
    /// The remote account the session is on (its endpoint, never its key).
    pub account: Option<String>,
    /// The backend meters every client's RU per range (the store); a remote account's
    /// partitions view shows only this session's own.
    pub metering: bool,
    /// A new store's data directory: the session starts by loading the bundled samples.
    pub first_launch: Option<std::path::PathBuf>,
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
    /// The stored version being read after a 412.
    pub conflict_loading: Option<ConflictRequest>,
    /// The stored procedure, trigger or UDF the item view shows instead of an item.
    pub script: Option<script::ScriptView>,
    pub script_loading: Option<script::ScriptRequest>,
    pub executing: Option<script::PendingExecution>,
    /// A container's details pane, shown in the item view, and the ticket of its read.
    pub details: Option<details::DetailsView>,
    pub details_loading: Option<u64>,
    /// Partition key paths of the containers seen so far, by (database, container).
    pub pk_paths: std::collections::HashMap<(String, String), Vec<String>>,
    pub query: QueryState,
    pub feed: FeedState,
    pub partitions: PartitionsState,
    pub workbench: WorkbenchState,
    /// The gateway run in this process, and the requests it served.
    pub gateway: GatewayState,
    pub requests: RequestsState,
    pub advisor: advisor::AdvisorState,
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
            write_switch: false,
            account: None,
            metering: true,
            first_launch: None,
            ask_before_fan_out: false,
            estimated: Default::default(),
            keymap,
            view: View::default(),
            focus: Focus::default(),
            layers: Vec::new(),
            tree: TreeState::default(),
            item: None,
            item_loading: None,
            conflict_loading: None,
            script: None,
            script_loading: None,
            executing: None,
            details: None,
            details_loading: None,
            pk_paths: Default::default(),
            query: QueryState::default(),
            feed: FeedState::default(),
            partitions: PartitionsState::default(),
            workbench: WorkbenchState::default(),
            gateway: GatewayState::default(),
            requests: RequestsState::default(),
            advisor: Default::default(),
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

    /// Takes in what the backend the session runs on offers: whether it takes writes (and
    /// can be switched), whether its requests are billed, and the account it reaches.
    pub fn adopt(&mut self, engine: &dyn crate::engine::Backend) {
        let caps = engine.capabilities();
        self.read_only = !caps.writes;
        self.write_switch = caps.write_switch;
        self.metering = caps.metering;
        self.ask_before_fan_out = caps.billed;
        self.account = engine.account();
    }

    pub fn ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// Empties the item view (an item, a script or a container's details), before it
    /// shows something else.
    pub fn clear_item_view(&mut self) {
        self.item = None;
        self.script = None;
        self.details = None;
    }

    /// The keymap mode keys are read in now.
    pub fn mode(&self) -> Mode {
        match self.layers.last() {
            Some(Layer::Help { .. } | Layer::Messages { .. }) => Mode::Help,
            Some(Layer::Palette | Layer::History { .. }) => Mode::Palette,
            Some(
                Layer::Prompt { .. }
                | Layer::Params { .. }
                | Layer::Confirm { .. }
                | Layer::Choose { .. }
                | Layer::Conflict(_)
                | Layer::Execute(_),
            ) => Mode::Input,
            Some(Layer::Value { .. }) => Mode::Value,
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
            (Focus::View, View::Advisor) => Mode::Advisor,
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
