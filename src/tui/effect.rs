//! Work `update` asks for: every store call, subscription and terminal hand-over the UI
//! needs, as data. The runtime performs effects off the UI task; tests assert on them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::state::feed::{FeedModeChoice, FeedScope, StartChoice};
use super::state::tree::NodeKind;
use crate::engine::{ScriptKind, ScriptSpec, SprocRequest};

/// Long-running work the UI starts and can cancel.
#[derive(Debug, Clone, PartialEq)]
pub enum JobKind {
    LoadSample {
        name: String,
    },
    Export {
        db: String,
        c: String,
        path: String,
    },
    /// A new store's first launch: every bundled sample set at scale 1, the data directory
    /// marked once done (`samples::first_launch`).
    FirstLaunch {
        dir: std::path::PathBuf,
    },
    /// Write a query's result to a file (the loaded rows, or every page run again).
    ExportResult {
        source: crate::tui::export::Source,
        path: String,
        format: crate::tui::export::Format,
    },
    /// Run a bundled workbench suite (loading the designs' samples if missing).
    Workbench {
        suite: String,
    },
    /// Run the partition-key advisor on a container (`Msg::AdvisorProgress`, `Msg::Advice`).
    Advise {
        db: String,
        c: String,
        /// As `advise --workload` and `--candidates` take them; `None`: the defaults.
        workload: Option<String>,
        candidates: Option<String>,
    },
    /// Copy a container into a new one keyed by `candidate` (removed if it does not finish).
    Repartition {
        db: String,
        c: String,
        candidate: crate::advisor::Candidate,
        target: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The databases (tree roots).
    LoadDatabases {
        generation: u64,
    },
    /// The children of a tree node: a page of them, from `cursor` when appending.
    LoadChildren {
        generation: u64,
        key: String,
        node: NodeKind,
        cursor: Option<String>,
    },
    /// The databases and every container with its counts, and the script counts of the
    /// containers whose script groups the tree shows (`scripts`, as (database, container)),
    /// to see whether the tree is out of date (`Msg::TreeProbe`).
    ProbeTree {
        generation: u64,
        scripts: Vec<(String, String)>,
    },
    ReadItem {
        ticket: u64,
        db: String,
        c: String,
        id: String,
        pk: Value,
    },
    /// One page of a query.
    /// What the console's query would cost on a billed account: its plan and the
    /// container's statistics.
    EstimateQuery {
        ticket: u64,
        db: String,
        c: String,
        sql: String,
        params: BTreeMap<String, Value>,
    },
    RunQuery {
        ticket: u64,
        db: String,
        c: String,
        sql: String,
        params: BTreeMap<String, Value>,
        continuation: Option<String>,
    },
    /// The container's ranges (for the key-space strip) and partition key paths.
    LoadRanges {
        ticket: u64,
        db: String,
        c: String,
    },
    CancelQuery {
        ticket: u64,
    },
    /// Sample the container's documents for completion (`Msg::Schema`).
    LoadSchema {
        db: String,
        c: String,
    },
    LoadPartitions {
        ticket: u64,
        db: String,
        c: String,
    },
    Subscribe {
        ticket: u64,
        scope: FeedScope,
        mode: FeedModeChoice,
        start: StartChoice,
    },
    Unsubscribe {
        ticket: u64,
    },
    /// Fill the palette: databases, containers, ranges, then every item id.
    StreamPalette {
        ticket: u64,
    },
    StopPalette {
        ticket: u64,
    },
    /// Hand the terminal to `$EDITOR` with `text`; the answer comes back as `Msg::Edited`.
    Edit {
        db: String,
        c: String,
        text: String,
        /// What the edit is compared with when it is not `text`: the item as it was, when
        /// the editor reopens on a text that was not JSON.
        original: Option<String>,
        if_match: Option<String>,
        create: bool,
    },
    /// Hand the terminal to `$EDITOR` with the query text (`Msg::QueryEdited`).
    EditQuery {
        text: String,
    },
    SaveItem {
        ticket: u64,
        db: String,
        c: String,
        body: String,
        if_match: Option<String>,
        create: bool,
    },
    DeleteItem {
        ticket: u64,
        db: String,
        c: String,
        id: String,
        pk: Value,
        if_match: Option<String>,
    },
    Copy {
        text: String,
    },
    ApplyIndex {
        db: String,
        c: String,
        single: Option<String>,
        composite: Option<Vec<String>>,
    },
    StartJob {
        ticket: u64,
        job: JobKind,
    },
    /// Turns the backend's writes on or off for the session (`Msg::WritesSet`).
    SetWrites {
        on: bool,
    },
    CancelJob {
        ticket: u64,
    },
    SaveHistory {
        entries: Vec<super::state::history::HistoryEntry>,
    },
    /// Read a container's settings and statistics for its details pane (`Msg::Details`).
    LoadDetails {
        ticket: u64,
        db: String,
        c: String,
    },
    /// Read a stored procedure, trigger or UDF for the item view (`Msg::ScriptRead`).
    ReadScript {
        ticket: u64,
        db: String,
        c: String,
        kind: ScriptKind,
        id: String,
    },
    /// Hand the terminal to `$EDITOR` with `spec.body` (`Msg::ScriptEdited`).
    EditScript {
        db: String,
        c: String,
        spec: ScriptSpec,
        /// What the edit is compared with when it is not `spec.body`: the stored body,
        /// when the editor reopens on a text that did not compile.
        original: Option<String>,
        create: bool,
    },
    /// Create or replace a script (`Msg::ScriptSaved`).
    SaveScript {
        ticket: u64,
        db: String,
        c: String,
        spec: ScriptSpec,
        create: bool,
    },
    DeleteScript {
        db: String,
        c: String,
        kind: ScriptKind,
        id: String,
    },
    /// Execute a stored procedure in one logical partition (`Msg::Executed`).
    ExecuteProcedure {
        ticket: u64,
        db: String,
        c: String,
        id: String,
        request: SprocRequest,
    },
    /// Start the gateway on `addr` over the explorer's engine (`Msg::GatewayStarted`).
    StartGateway {
        ticket: u64,
        addr: std::net::SocketAddr,
    },
    /// Stop the gateway, letting requests under way finish (`Msg::GatewayStopped`).
    StopGateway {
        ticket: u64,
    },
}
