//! What reaches `update`: keys, ticks, and the results of effects, each result tagged with
//! the ticket (or tree generation) it was asked with so stale ones can be dropped.

use crossterm::event::KeyEvent;

use super::state::feed::FeedRow;
use super::state::query::RangeSpan;
use super::state::requests::GatewayInfo;
use super::state::tree::NodeKind;
use crate::engine::{
    ItemResponse, PartitionsReport, QueryResult, ScriptInfo, ScriptKind, ScriptSpec, SprocResponse,
};
use crate::error::Error;

#[derive(Debug)]
pub enum Msg {
    Key(KeyEvent),
    /// A click or a turn of the wheel, at a cell of the screen last drawn.
    Mouse(crossterm::event::MouseEvent),
    Paste(String),
    /// A second (or more) passed; `now` is Unix seconds.
    Tick {
        now: i64,
    },
    Children {
        generation: u64,
        key: Option<String>,
        append: bool,
        result: Result<(Vec<NodeKind>, Option<String>), Error>,
    },
    /// The databases and containers, and the asked containers' script groups, as the store
    /// has them now (`Effect::ProbeTree`).
    TreeProbe {
        generation: u64,
        result: Result<Vec<NodeKind>, Error>,
    },
    Item {
        ticket: u64,
        result: Result<ItemResponse, Error>,
    },
    QueryPage {
        ticket: u64,
        result: Result<QueryResult, Error>,
        elapsed_ms: f64,
    },
    /// A query's cost estimate: `None` when it reads one range (it runs without asking),
    /// else the question to ask.
    QueryEstimate {
        sql: String,
        result: Result<Option<String>, Error>,
    },
    /// A range of a running query finished.
    QueryProgress {
        ticket: u64,
        progress: crate::engine::RangeProgress,
    },
    /// The container's ranges and partition key paths, fetched with a query.
    Ranges {
        ticket: u64,
        db: String,
        c: String,
        pk_paths: Vec<String>,
        ranges: Vec<RangeSpan>,
    },
    Partitions {
        ticket: u64,
        result: Result<PartitionsReport, Error>,
    },
    /// The property paths sampled from a container, and its UDFs' names.
    Schema {
        db: String,
        c: String,
        result: Result<crate::query::complete::Schema, Error>,
    },
    FeedBatch {
        ticket: u64,
        rows: Vec<FeedRow>,
        request_charge: f64,
    },
    FeedError {
        ticket: u64,
        error: Error,
    },
    PaletteDone {
        ticket: u64,
    },
    /// The text `$EDITOR` left (or why it could not run).
    Edited {
        db: String,
        c: String,
        original: String,
        result: Result<String, String>,
        if_match: Option<String>,
        create: bool,
    },
    /// The query text `$EDITOR` left (or why it could not run).
    QueryEdited(Result<String, String>),
    Saved {
        ticket: u64,
        result: Result<ItemResponse, Error>,
        db: String,
        c: String,
        /// The container's partition key paths, so the saved item's key can be named even
        /// when the tree never loaded the container.
        pk_paths: Vec<String>,
        /// The body as it was sent (shown beside the stored one after a 412).
        body: String,
    },
    Deleted {
        ticket: u64,
        result: Result<ItemResponse, Error>,
        id: String,
    },
    Copied(Result<&'static str, String>),
    /// A container's details, for its pane.
    Details {
        ticket: u64,
        db: String,
        c: String,
        result: Result<Box<super::state::details::Details>, Error>,
    },
    ScriptRead {
        ticket: u64,
        result: Result<ScriptInfo, Error>,
    },
    /// The script text `$EDITOR` left (or why it could not run); `spec.body` is what it
    /// is compared with.
    ScriptEdited {
        db: String,
        c: String,
        spec: ScriptSpec,
        create: bool,
        result: Result<String, String>,
    },
    /// A script created or replaced (`spec` as it was sent), or why not.
    ScriptSaved {
        ticket: u64,
        db: String,
        c: String,
        spec: ScriptSpec,
        create: bool,
        result: Result<ScriptInfo, Error>,
    },
    ScriptDeleted {
        db: String,
        c: String,
        kind: ScriptKind,
        id: String,
        result: Result<(), Error>,
    },
    /// A stored procedure's execution: its response, or the script's error.
    Executed {
        ticket: u64,
        result: Result<SprocResponse, Error>,
    },
    /// A policy change went through (what changed) or not.
    Applied(Result<String, Error>),
    /// The backend takes writes (`on`) or refuses them from now on, or could not switch.
    WritesSet {
        on: bool,
        result: Result<(), Error>,
    },
    /// A workbench run's report (its job ends right after).
    WorkbenchReport {
        ticket: u64,
        report: Box<crate::workbench::Report>,
    },
    JobProgress {
        ticket: u64,
        done: u64,
        total: u64,
    },
    /// Where a running advisor job is (its `JobProgress` carries the same count).
    AdvisorProgress {
        ticket: u64,
        progress: crate::advisor::Progress,
    },
    /// The advisor job's advice (its job ends right after).
    Advice {
        ticket: u64,
        advice: Box<crate::advisor::Advice>,
    },
    /// A job ended: what it did, or why not.
    JobDone {
        ticket: u64,
        result: Result<String, Error>,
    },
    History(Vec<super::state::history::HistoryEntry>),
    /// The gateway is serving, or why it could not start (a port in use).
    GatewayStarted {
        ticket: u64,
        result: Result<GatewayInfo, Error>,
    },
    GatewayStopped {
        ticket: u64,
    },
    /// What the gateway served since the last poll, and its request rate.
    Traffic {
        exchanges: Vec<std::sync::Arc<crate::gateway::Exchange>>,
        rate: f64,
    },
}
