//! What a user can ask for: every intent the keymap, the palette and the help screen name.
//!
//! Actions are data. The keymap maps keys to them per mode, the palette lists them by title,
//! and `update` is the only place that gives them meaning.

use serde::{Deserialize, Serialize};

/// One user intent. The kebab-case name is what the keymap file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Quit,
    Help,
    Palette,
    /// Closes the top layer, or steps back (clears a filter, leaves the editor).
    Back,
    FocusNext,
    FocusPrev,
    ShowItem,
    ShowQuery,
    ShowFeed,
    ShowPartitions,
    ShowWorkbench,
    ShowRequests,
    /// Gives the focused pane the whole screen, or shares it again.
    Zoom,
    /// Opens the log of every message of the session.
    Messages,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    /// Opens the selection: expands a tree node, shows an item, opens a feed event.
    Select,
    Expand,
    Collapse,
    Refresh,
    Filter,
    /// Sorts the loaded results by a column, client-side.
    Sort,
    RunQuery,
    CancelQuery,
    QueryParams,
    NewQuery,
    HistoryPrev,
    /// Searches the console's container's query history.
    SearchHistory,
    /// Edits the query text in `$EDITOR`.
    EditQuery,
    /// Completes the word at the editor's cursor: properties, aliases, keywords, functions.
    Complete,
    HistoryNext,
    ToggleResults,
    FocusEditor,
    LoadMore,
    /// Writes the query's result to a file: JSON, NDJSON or CSV.
    ExportResults,
    /// Shows the selected result's cell (or document) whole.
    ShowValue,
    CopyValue,
    CopyPath,
    EditItem,
    NewItem,
    DeleteItem,
    /// Opens the execute form of the selected stored procedure.
    ExecuteScript,
    /// Shows the selected container's settings and statistics.
    Details,
    ToggleSystem,
    FeedPause,
    FeedMode,
    FeedStart,
    FeedClear,
    FeedScope,
    LoadSample,
    Export,
    ApplyIndex,
    WorkbenchSuite,
    /// Starts the gateway in this process, or stops it.
    Gateway,
    RequestsPause,
    RequestsClear,
    /// On a remote account: allows writes for this session (after a confirmation naming the
    /// account), or makes it read-only again.
    ToggleWrites,
    /// Opens the partition-key advisor on the selected container.
    ShowAdvisor,
    AdvisorWorkload,
    AdvisorCandidates,
    /// Creates a copy of the container keyed by the selected candidate.
    AdvisorCopy,
}

impl Action {
    /// Every action, in the order help and the palette list them.
    pub const ALL: &'static [Action] = &[
        Action::Quit,
        Action::Help,
        Action::Palette,
        Action::Back,
        Action::FocusNext,
        Action::FocusPrev,
        Action::ShowItem,
        Action::ShowQuery,
        Action::ShowFeed,
        Action::ShowPartitions,
        Action::ShowWorkbench,
        Action::ShowRequests,
        Action::Zoom,
        Action::Messages,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::Left,
        Action::Right,
        Action::Select,
        Action::Expand,
        Action::Collapse,
        Action::Refresh,
        Action::Filter,
        Action::Sort,
        Action::RunQuery,
        Action::CancelQuery,
        Action::QueryParams,
        Action::NewQuery,
        Action::HistoryPrev,
        Action::SearchHistory,
        Action::EditQuery,
        Action::Complete,
        Action::HistoryNext,
        Action::ToggleResults,
        Action::FocusEditor,
        Action::LoadMore,
        Action::ExportResults,
        Action::ShowValue,
        Action::CopyValue,
        Action::CopyPath,
        Action::EditItem,
        Action::NewItem,
        Action::DeleteItem,
        Action::ExecuteScript,
        Action::Details,
        Action::ToggleSystem,
        Action::FeedPause,
        Action::FeedMode,
        Action::FeedStart,
        Action::FeedClear,
        Action::FeedScope,
        Action::LoadSample,
        Action::Export,
        Action::ApplyIndex,
        Action::WorkbenchSuite,
        Action::Gateway,
        Action::RequestsPause,
        Action::RequestsClear,
        Action::ToggleWrites,
        Action::ShowAdvisor,
        Action::AdvisorWorkload,
        Action::AdvisorCandidates,
        Action::AdvisorCopy,
    ];

    /// The short label the hint bar shows.
    pub fn label(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Palette => "palette",
            Action::Back => "back",
            Action::FocusNext => "focus",
            Action::FocusPrev => "focus back",
            Action::ShowItem => "item",
            Action::ShowQuery => "query",
            Action::ShowFeed => "feed",
            Action::ShowPartitions => "partitions",
            Action::ShowWorkbench => "workbench",
            Action::ShowRequests => "requests",
            Action::Zoom => "zoom",
            Action::Messages => "messages",
            Action::Up => "up",
            Action::Down => "down",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Left => "left",
            Action::Right => "right",
            Action::Select => "open",
            Action::Expand => "expand",
            Action::Collapse => "collapse",
            Action::Refresh => "refresh",
            Action::Filter => "filter",
            Action::Sort => "sort",
            Action::RunQuery => "run",
            Action::CancelQuery => "cancel",
            Action::QueryParams => "params",
            Action::NewQuery => "new query",
            Action::HistoryPrev => "history back",
            Action::SearchHistory => "search history",
            Action::EditQuery => "$EDITOR",
            Action::Complete => "complete",
            Action::HistoryNext => "history fwd",
            Action::ToggleResults => "table/json",
            Action::FocusEditor => "editor",
            Action::LoadMore => "more",
            Action::ExportResults => "export",
            Action::ShowValue => "value",
            Action::CopyValue => "copy value",
            Action::CopyPath => "copy path",
            Action::EditItem => "edit",
            Action::NewItem => "new item",
            Action::DeleteItem => "delete",
            Action::ExecuteScript => "execute",
            Action::Details => "details",
            Action::ToggleSystem => "system props",
            Action::FeedPause => "pause",
            Action::FeedMode => "mode",
            Action::FeedStart => "start from",
            Action::FeedClear => "clear",
            Action::FeedScope => "scope",
            Action::LoadSample => "load sample",
            Action::Export => "export",
            Action::ApplyIndex => "add index",
            Action::WorkbenchSuite => "suite",
            Action::Gateway => "gateway",
            Action::RequestsPause => "pause",
            Action::RequestsClear => "clear",
            Action::ToggleWrites => "writes on/off",
            Action::ShowAdvisor => "advisor",
            Action::AdvisorWorkload => "workload",
            Action::AdvisorCandidates => "candidates",
            Action::AdvisorCopy => "copy as",
        }
    }

    /// What the action does, for help and the palette.
    pub fn description(self) -> &'static str {
        match self {
            Action::Quit => "Quit cosmoscope",
            Action::Help => "Show every key binding of the current view",
            Action::Palette => "Open the palette: actions, containers, partitions, items",
            Action::Back => "Close the popup, clear the filter or step back",
            Action::FocusNext => "Move focus to the next pane",
            Action::FocusPrev => "Move focus to the previous pane",
            Action::ShowItem => "Show the item view",
            Action::ShowQuery => "Show the query console",
            Action::ShowFeed => "Show the live change feed",
            Action::ShowPartitions => "Show the partitions of the selected container",
            Action::ShowWorkbench => "Show the access-pattern workbench (r runs the suite)",
            Action::ShowRequests => "Show the requests the gateway serves, live",
            Action::Zoom => "Give the focused pane the whole screen, or share it again",
            Action::Messages => "Show every message of the session, whole, with its time",
            Action::Up => "Move the selection up",
            Action::Down => "Move the selection down",
            Action::PageUp => "Move up one page",
            Action::PageDown => "Move down one page",
            Action::Top => "Go to the first row",
            Action::Bottom => "Go to the last row",
            Action::Left => "Scroll left",
            Action::Right => "Scroll right",
            Action::Select => "Open the selection",
            Action::Expand => "Expand the selected node",
            Action::Collapse => "Collapse the selected node (or go to its parent)",
            Action::Refresh => "Reload the current view from the store",
            Action::Filter => {
                "Filter the current list; in query results, search the loaded results"
            }
            Action::Sort => {
                "Sort the loaded results by the first column shown (ascending, descending, off); client-side, not an ORDER BY"
            }
            Action::RunQuery => "Run the query in the editor",
            Action::CancelQuery => "Cancel the running query, or else the running job",
            Action::QueryParams => "Edit the values of the query's @parameters",
            Action::NewQuery => "Start a new query on the selected container",
            Action::HistoryPrev => "Previous query from history",
            Action::SearchHistory => {
                "Search the queries run on this container (with their parameters), newest first"
            }
            Action::EditQuery => "Edit the query text in $EDITOR (a .sql file)",
            Action::Complete => {
                "Complete at the cursor: properties seen in the container, aliases, @parameters, keywords, functions"
            }
            Action::HistoryNext => "Next query from history",
            Action::ToggleResults => "Show results as a table or as JSON",
            Action::FocusEditor => "Move focus to the query editor",
            Action::LoadMore => "Load the next page",
            Action::ExportResults => {
                "Export the query's result to a file (.json, .ndjson or .csv): the loaded rows, or every page"
            }
            Action::ShowValue => {
                "Show the selected cell whole (the document in JSON view), to scroll and copy"
            }
            Action::CopyValue => "Copy the selected value to the clipboard",
            Action::CopyPath => "Copy the selected value's path to the clipboard",
            Action::EditItem => "Edit the item (saved with If-Match) or the script in $EDITOR",
            Action::NewItem => {
                "Create an item in the selected container, or a script in the selected group, in $EDITOR"
            }
            Action::DeleteItem => "Delete the selected item or script (asks first)",
            Action::Details => {
                "Show the selected container's details: key, throughput and per-partition budget, indexing, TTL, unique keys, statistics, partitions"
            }
            Action::ExecuteScript => {
                "Execute the selected stored procedure: partition key, parameters, script log"
            }
            Action::ToggleSystem => "Show or hide system properties (_rid, _etag, ...)",
            Action::FeedPause => "Pause or resume the feed view (events keep buffering)",
            Action::FeedMode => "Switch between latest-version and all-versions mode",
            Action::FeedStart => "Restart the feed from the beginning, now, or a time",
            Action::FeedClear => "Clear the feed view",
            Action::FeedScope => "Follow the selected container or its whole database",
            Action::LoadSample => "Load a bundled sample data set (with progress; cancellable)",
            Action::Export => "Export the selected container to an NDJSON file",
            Action::WorkbenchSuite => "Switch the workbench between the bundled suites",
            Action::Gateway => {
                "Start the gateway (the Cosmos DB REST API, for applications on the SDKs) in this process, or stop it"
            }
            Action::RequestsPause => "Pause or resume the requests view (requests keep buffering)",
            Action::RequestsClear => "Clear the requests view",
            Action::ShowAdvisor => {
                "Open the partition-key advisor on the selected container (r runs it, ctrl-x cancels)"
            }
            Action::AdvisorWorkload => {
                "Choose the advisor's workload: a bundled suite, a workload or suite file, or empty for the container's suite"
            }
            Action::AdvisorCandidates => {
                "Choose the advisor's candidate keys as on the command line (/a,[/a,/b],/a+/b,/a suffix N buckets), or empty to propose them"
            }
            Action::AdvisorCopy => {
                "Create a copy of the container keyed by the selected candidate (bulk copy; cancelled copies are removed)"
            }
            Action::ApplyIndex => {
                "Add the index the last query was missing to the container's policy (asks first)"
            }
            Action::ToggleWrites => {
                "On a remote account: allow writes for this session only (asks first, naming the account), or make it read-only again"
            }
        }
    }

    /// The keymap name (`run-query`).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}
