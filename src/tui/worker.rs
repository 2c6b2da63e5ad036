//! Effects performed against the engine. Every function here blocks (LMDB is synchronous)
//! and runs on a blocking thread, never on the UI task; results go back as messages.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::effect::Effect;
use super::msg::Msg;
use super::state::feed::{FeedModeChoice, FeedRow, FeedScope, StartChoice};
use super::state::history::HistoryEntry;
use super::state::palette::{Entry, Injector, Target};
use super::state::query::RangeSpan;
use super::state::script::{KINDS, trigger_label};
use super::state::tree::{NodeKind, PAGE};
use crate::engine::Progress;
use crate::engine::{
    Backend, Document, FeedMode, FeedRequest, FeedStart, QueryOptions, ScriptKind,
};
use crate::error::{Result, StatusCode};
use crate::query::complete::Schema;

/// How many documents completion samples from a container (about a millisecond to read
/// and a few to parse).
pub const SCHEMA_SAMPLE: usize = 500;

/// How often a feed subscription checks for new changes.
pub const FEED_POLL: Duration = Duration::from_millis(50);

/// The roots of the tree.
pub fn databases(engine: &dyn Backend) -> Result<(Vec<NodeKind>, Option<String>)> {
    let dbs = engine.list_databases()?;
    Ok((
        dbs.into_iter()
            .map(|d| NodeKind::Database {
                db: d.id,
                containers: d.container_count,
            })
            .collect(),
        None,
    ))
}

/// Every database and container with its counts (what the tree's upper levels show), then
/// the script groups of the `scripts` containers with theirs.
pub fn probe_tree(engine: &dyn Backend, scripts: &[(String, String)]) -> Result<Vec<NodeKind>> {
    let (dbs, _) = databases(engine)?;
    let mut out = Vec::new();
    for db in dbs {
        if let NodeKind::Database { db: name, .. } = &db {
            let containers = container_nodes(engine, name)?;
            out.push(db);
            out.extend(containers);
        }
    }
    // Only the script groups on screen: three listings per expanded container, not per
    // container of the account.
    for (db, c) in scripts {
        match script_groups(engine, db, c) {
            Ok(groups) => out.extend(groups),
            // Gone since: the container listing above already tells.
            Err(e) if e.is(StatusCode::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// One page of a node's children and the cursor of the next page.
pub fn children(
    engine: &dyn Backend,
    node: &NodeKind,
    cursor: Option<&str>,
) -> Result<(Vec<NodeKind>, Option<String>)> {
    match node {
        NodeKind::Database { db, .. } => Ok((container_nodes(engine, db)?, None)),
        NodeKind::Container { db, c, .. } => {
            let mut nodes = range_nodes(engine, db, c)?;
            nodes.extend(script_groups(engine, db, c)?);
            Ok((nodes, None))
        }
        NodeKind::Scripts { db, c, kind, .. } => Ok((script_nodes(engine, db, c, *kind)?, None)),
        NodeKind::Range { db, c, range, .. } => logical_nodes(engine, db, c, *range, cursor),
        NodeKind::Logical { db, c, pk, .. } => item_nodes(engine, db, c, pk, cursor),
        _ => Ok((Vec::new(), None)),
    }
}

/// A database's containers.
fn container_nodes(engine: &dyn Backend, db: &str) -> Result<Vec<NodeKind>> {
    let cs = engine.list_containers(Some(db))?;
    Ok(cs
        .into_iter()
        .map(|c| NodeKind::Container {
            db: db.to_string(),
            throughput: throughput_label(&c.throughput),
            pk_paths: c.partition_key.paths.clone(),
            items: c.statistics.item_count,
            bytes: c.statistics.size_bytes,
            c: c.id,
        })
        .collect())
}

/// A container's physical partitions, each with the RU it used in the last second.
fn range_nodes(engine: &dyn Backend, db: &str, c: &str) -> Result<Vec<NodeKind>> {
    let report = engine.partitions(db, c, 0, 2)?;
    Ok(report
        .partitions
        .iter()
        .map(|r| {
            let ru_now = report
                .load
                .iter()
                .find(|l| l.id == r.id)
                .map_or(0.0, |l| l.ru_last_second);
            NodeKind::Range {
                db: db.to_string(),
                c: c.to_string(),
                range: r.id.parse().unwrap_or_default(),
                min: r.min_inclusive.clone(),
                max: r.max_exclusive.clone(),
                items: r.statistics.item_count,
                bytes: r.statistics.size_bytes,
                ru_now,
            }
        })
        .collect())
}

/// The container's script groups (stored procedures, triggers, UDFs) with their counts,
/// listed even when empty: a group is where a new script of its kind is created.
fn script_groups(engine: &dyn Backend, db: &str, c: &str) -> Result<Vec<NodeKind>> {
    KINDS
        .iter()
        .map(|&kind| {
            Ok(NodeKind::Scripts {
                db: db.to_string(),
                c: c.to_string(),
                kind,
                count: engine.list_scripts(db, c, kind)?.len(),
            })
        })
        .collect()
}

/// A container's scripts of one kind, by id.
fn script_nodes(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    kind: ScriptKind,
) -> Result<Vec<NodeKind>> {
    Ok(engine
        .list_scripts(db, c, kind)?
        .into_iter()
        .map(|s| NodeKind::Script {
            db: db.to_string(),
            c: c.to_string(),
            kind,
            detail: trigger_label(s.trigger_type, s.trigger_operation),
            id: s.id,
        })
        .collect())
}

/// A page of a range's logical partitions, largest first, with the RU each has consumed
/// (the tree marks the hottest by what changed since it last looked).
fn logical_nodes(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    range: u32,
    cursor: Option<&str>,
) -> Result<(Vec<NodeKind>, Option<String>)> {
    if !engine.capabilities().partition_statistics {
        return logical_nodes_by_query(engine, db, c, range, cursor);
    }
    let skip = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
    let page = engine.largest_logical_partitions(db, c, &range.to_string(), skip, PAGE)?;
    let kinds = page
        .logical_partitions
        .into_iter()
        .map(|l| NodeKind::Logical {
            db: db.to_string(),
            c: c.to_string(),
            range,
            ru_total: l.statistics.request_charge_total,
            hottest: false,
            items: l.statistics.item_count,
            bytes: l.statistics.size_bytes,
            pk: l.partition_key,
        })
        .collect();
    Ok((kinds, page.next))
}

/// A range's logical partitions from a backend without statistics for them (a remote
/// account): a GROUP BY query on the key paths scoped to the range, paged by its
/// continuation, each with its item count; run only when a person expands the range.
fn logical_nodes_by_query(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    range: u32,
    cursor: Option<&str>,
) -> Result<(Vec<NodeKind>, Option<String>)> {
    let paths = engine.container_key(db, c)?.partition_key.paths;
    let exprs: Vec<String> = paths
        .iter()
        .map(|p| {
            let steps: String = p
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| format!("[{}]", Value::String(s.to_string())))
                .collect();
            format!("c{steps}")
        })
        .collect();
    let select: Vec<String> = exprs
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{e} AS k{i}"))
        .collect();
    let sql = format!(
        "SELECT {}, COUNT(1) AS n FROM c GROUP BY {}",
        select.join(", "),
        exprs.join(", ")
    );
    let opts = QueryOptions {
        range: Some(range.to_string()),
        max_items: Some(PAGE),
        continuation: cursor.map(str::to_string),
        ..Default::default()
    };
    let r = engine.query(db, c, &sql, &opts)?;
    let mut kinds: Vec<(u64, NodeKind)> = r
        .documents
        .iter()
        .map(|row| {
            // An undefined key level is `{}`, as the wire writes it.
            let levels: Vec<Value> = (0..paths.len())
                .map(|i| {
                    row.value()
                        .get(format!("k{i}"))
                        .cloned()
                        .unwrap_or(Value::Object(Default::default()))
                })
                .collect();
            let pk = match levels.as_slice() {
                [one] => one.clone(),
                _ => Value::Array(levels),
            };
            let items = row.value().get("n").and_then(Value::as_u64).unwrap_or(0);
            let node = NodeKind::Logical {
                db: db.to_string(),
                c: c.to_string(),
                range,
                ru_total: 0.0,
                hottest: false,
                items,
                bytes: 0,
                pk,
            };
            (items, node)
        })
        .collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.0));
    Ok((kinds.into_iter().map(|(_, k)| k).collect(), r.continuation))
}

/// A page of the ids in a logical partition. What Data Explorer does: a single-partition
/// query for the ids, paged.
fn item_nodes(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    pk: &Value,
    cursor: Option<&str>,
) -> Result<(Vec<NodeKind>, Option<String>)> {
    let opts = QueryOptions {
        partition_key: Some(pk.clone()),
        max_items: Some(PAGE),
        continuation: cursor.map(str::to_string),
        ..Default::default()
    };
    let r = engine.query(db, c, "SELECT VALUE c.id FROM c", &opts)?;
    let kinds = r
        .documents
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .map(|id| NodeKind::Item {
            db: db.to_string(),
            c: c.to_string(),
            pk: pk.clone(),
            id,
        })
        .collect();
    Ok((kinds, r.continuation))
}

fn throughput_label(t: &crate::engine::ThroughputView) -> String {
    match (t.manual, t.autoscale_max) {
        (Some(ru), _) => format!("{ru} RU/s"),
        (None, Some(max)) => format!("autoscale {max} RU/s"),
        _ => "shared".into(),
    }
}

/// The container's ranges as fractions of the EPK space, for the strip.
pub fn ranges(engine: &dyn Backend, db: &str, c: &str) -> Vec<RangeSpan> {
    let Ok(report) = engine.partitions(db, c, 0, 0) else {
        return Vec::new();
    };
    report
        .partitions
        .iter()
        .map(|r| RangeSpan {
            id: r.id.clone(),
            start: epk_fraction(&r.min_inclusive, 0.0),
            end: epk_fraction(&r.max_exclusive, 1.0),
        })
        .collect()
}

/// Where a hex EPK bound lies in the key space, from its first bytes ("" is the start,
/// "FF" the end). V2 hashes clear the top two bits, so hashed keys fill `00…` to `3F…`.
pub fn epk_fraction(hex: &str, empty: f64) -> f64 {
    if hex.is_empty() {
        return empty;
    }
    if hex.eq_ignore_ascii_case("FF") {
        return 1.0;
    }
    let digits: String = hex.chars().take(12).collect();
    let padded = format!("{digits:0<12}");
    u64::from_str_radix(&padded, 16).map_or(empty, |v| (v as f64 / (1u64 << 46) as f64).min(1.0))
}

/// A live subscription: polled by its thread (or by tests) for new changes.
pub struct FeedFollower {
    ticket: u64,
    scope: FeedScope,
    mode: FeedMode,
    start: FeedStart,
    /// Per container: its request and the change sequence last read.
    followed: Vec<(String, String, FeedRequest, Option<u64>)>,
    last_listing: Option<Instant>,
}

impl FeedFollower {
    pub fn new(
        ticket: u64,
        scope: FeedScope,
        mode: FeedModeChoice,
        start: &StartChoice,
    ) -> FeedFollower {
        FeedFollower {
            ticket,
            scope,
            mode: match mode {
                FeedModeChoice::Latest => FeedMode::LatestVersion,
                FeedModeChoice::AllVersions => FeedMode::AllVersions,
            },
            start: match start {
                StartChoice::Beginning => FeedStart::Beginning,
                StartChoice::Now => FeedStart::Now,
                StartChoice::Time(t) => FeedStart::Time(*t),
            },
            followed: Vec::new(),
            last_listing: None,
        }
    }

    /// Reads what is new; the flag says the subscription ended (the message says why).
    pub fn poll(&mut self, engine: &dyn Backend) -> (Option<Msg>, bool) {
        let ticket = self.ticket;
        // A database scope picks up containers created while it runs.
        if self
            .last_listing
            .is_none_or(|t| t.elapsed() > Duration::from_secs(2))
        {
            self.last_listing = Some(Instant::now());
            let names = match &self.scope {
                FeedScope::Container { db, c } => vec![(db.clone(), c.clone())],
                FeedScope::Database { db } => match engine.list_containers(Some(db)) {
                    Ok(cs) => cs.into_iter().map(|c| (db.clone(), c.id)).collect(),
                    Err(error) => return (Some(Msg::FeedError { ticket, error }), true),
                },
            };
            for (db, c) in names {
                if !self.followed.iter().any(|f| f.0 == db && f.1 == c) {
                    let req = FeedRequest {
                        start: self.start.clone(),
                        mode: self.mode,
                        range: None,
                        max_items: 500,
                        ..FeedRequest::default()
                    };
                    self.followed.push((db, c, req, None));
                }
            }
        }
        let mut rows = Vec::new();
        let mut charge = 0.0;
        let database = matches!(self.scope, FeedScope::Database { .. });
        for (db, c, req, seen) in &mut self.followed {
            match read_new(engine, db, c, req, seen) {
                Ok((r, ch)) => {
                    rows.extend(r);
                    charge += ch;
                }
                // A container deleted while its database is followed: forget it.
                Err(e) if database && e.status == StatusCode::NotFound => *seen = Some(u64::MAX),
                Err(error) => return (Some(Msg::FeedError { ticket, error }), true),
            }
        }
        self.followed.retain(|f| f.3 != Some(u64::MAX));
        if rows.is_empty() {
            return (None, false);
        }
        rows.sort_by_key(|r| r.crts);
        let batch = Msg::FeedBatch {
            ticket,
            rows,
            request_charge: charge,
        };
        (Some(batch), false)
    }

    /// Polls until `stop`, sending batches.
    pub fn run(mut self, engine: &dyn Backend, stop: &AtomicBool, send: &dyn Fn(Msg)) {
        while !stop.load(Ordering::Acquire) {
            let (msg, ended) = self.poll(engine);
            if let Some(m) = msg {
                send(m);
            }
            if ended {
                return;
            }
            std::thread::sleep(FEED_POLL);
        }
    }
}

/// Reads everything new in one container, if its change sequence moved.
fn read_new(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    req: &mut FeedRequest,
    seen: &mut Option<u64>,
) -> Result<(Vec<FeedRow>, f64)> {
    let head = engine.feed_head(db, c)?;
    if *seen == Some(head) {
        return Ok((Vec::new(), 0.0));
    }
    let mut rows = Vec::new();
    let mut charge = 0.0;
    loop {
        let page = engine.read_feed(db, c, req)?;
        charge += page.request_charge;
        let n = page.changes.len();
        for ch in page.changes {
            rows.push(FeedRow {
                pk: ch.partition_key(),
                container: c.to_string(),
                crts: ch.timestamp,
                op: ch.operation.name().to_string(),
                size: ch.size(),
                range: ch.range,
                lsn: ch.lsn,
                id: ch.id,
                current: ch.current.map(Document::into_value),
                previous: ch.previous.map(Document::into_value),
                ttl_expired: ch.ttl_expired,
                search: Default::default(),
            });
        }
        req.start = FeedStart::Continuation(page.continuation);
        if n < req.max_items {
            break;
        }
    }
    *seen = Some(head);
    Ok((rows, charge))
}

/// Fills the palette: databases, containers and ranges first, then every partition key
/// value, then every item id.
pub fn stream_palette(engine: &dyn Backend, injector: &mut Injector<Entry>, stop: &AtomicBool) {
    let Ok(dbs) = engine.list_databases() else {
        return;
    };
    let mut containers = Vec::new();
    for d in &dbs {
        Entry {
            text: format!("{} · database", d.id),
            kind: "database",
            target: Target::Database(d.id.clone()),
        }
        .push_into(injector);
        for c in engine.list_containers(Some(&d.id)).unwrap_or_default() {
            Entry {
                // The name first: typing it ranks the container above its items.
                text: format!("{} · container {}/{}", c.id, d.id, c.id),
                kind: "container",
                target: Target::Container {
                    db: d.id.clone(),
                    c: c.id.clone(),
                },
            }
            .push_into(injector);
            push_scripts(engine, injector, &d.id, &c.id);
            containers.push((d.id.clone(), c.id));
        }
    }
    // What is pushed shows once flushed: the first names before any key or id.
    injector.flush();
    let mut ranges = Vec::new();
    for (db, c) in &containers {
        if let Ok(report) = engine.partitions(db, c, 0, 0) {
            for r in report.partitions {
                Entry {
                    text: format!("range {db}/{c} #{}", r.id),
                    kind: "range",
                    target: Target::Range {
                        db: db.clone(),
                        c: c.clone(),
                        range: r.id.parse().unwrap_or_default(),
                    },
                }
                .push_into(injector);
                ranges.push((db, c, r.id));
            }
        }
    }
    injector.flush();
    for (db, c, range) in ranges {
        if !stream_logical_partitions(engine, injector, stop, db, c, &range) {
            return;
        }
    }
    for (db, c) in &containers {
        let mut after: Option<Vec<u8>> = None;
        loop {
            if stop.load(Ordering::Acquire) {
                return;
            }
            let Ok((keys, next)) = engine.item_keys(db, c, after.as_deref(), 20_000) else {
                break;
            };
            for (pk, id) in keys {
                Entry {
                    text: format!("{id} · {db}/{c}"),
                    kind: "item",
                    target: Target::Item {
                        db: db.clone(),
                        c: c.clone(),
                        pk,
                        id,
                    },
                }
                .push_into(injector);
            }
            injector.flush();
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
    }
}

/// Adds a container's stored procedures, triggers and UDFs to the palette (none when the
/// backend lists no scripts).
fn push_scripts(engine: &dyn Backend, injector: &mut Injector<Entry>, db: &str, c: &str) {
    for kind in KINDS {
        for s in engine.list_scripts(db, c, kind).unwrap_or_default() {
            Entry {
                text: format!("{} · {} in {db}/{c}", s.id, kind.noun()),
                kind: "script",
                target: Target::Script {
                    db: db.to_string(),
                    c: c.to_string(),
                    kind,
                    id: s.id,
                },
            }
            .push_into(injector);
        }
    }
}

/// Adds a range's partition key values to the palette; false when told to stop.
fn stream_logical_partitions(
    engine: &dyn Backend,
    injector: &mut Injector<Entry>,
    stop: &AtomicBool,
    db: &str,
    c: &str,
    range: &str,
) -> bool {
    let mut after: Option<String> = None;
    loop {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        let Ok(page) = engine.logical_partitions(db, c, range, after.as_deref(), 5_000) else {
            return true;
        };
        for l in page.logical_partitions {
            Entry {
                text: format!(
                    "{} · key in {db}/{c} #{range}",
                    super::state::tree::pk_label(&l.partition_key)
                ),
                kind: "key",
                target: Target::Logical {
                    db: db.to_string(),
                    c: c.to_string(),
                    range: range.parse().unwrap_or_default(),
                    pk: l.partition_key,
                },
            }
            .push_into(injector);
        }
        injector.flush();
        match page.next {
            Some(n) => after = Some(n),
            None => return true,
        }
    }
}

/// Saves or creates an item from the edited text.
pub fn save_item(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    body: &str,
    if_match: Option<&str>,
    create: bool,
) -> Result<crate::engine::ItemResponse> {
    if create {
        engine.create_item(db, c, body.as_bytes())
    } else {
        // Replace keeps the id: a changed id is reported as 404, not silently duplicated.
        engine.replace_item(db, c, body.as_bytes(), if_match)
    }
}

/// The query history file.
pub fn history_path(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("query-history.json")
}

/// The history the data directory keeps (either of its file forms; none if unreadable).
pub fn load_history(data_dir: &std::path::Path) -> Vec<HistoryEntry> {
    std::fs::read(history_path(data_dir))
        .map(|b| super::state::history::parse(&b))
        .unwrap_or_default()
}

pub fn save_history(data_dir: &std::path::Path, entries: &[HistoryEntry]) -> std::io::Result<()> {
    let path = history_path(data_dir);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(entries).unwrap_or_default())?;
    std::fs::rename(tmp, path)
}

/// Performs a one-shot effect and returns the messages it produces. Effects that need the
/// runtime (subscriptions, the palette stream, the terminal, the clipboard, the gateway) are not
/// handled here and produce nothing.
///
/// One piece on purpose: it is the table from effect to engine call to message, an arm
/// per effect with no phases between them; the arms with logic of their own call out
/// (`children`, `load_ranges`, `query_page`, `save_item`, `apply_index`), and what remains
/// is the destructuring rustfmt spreads over many lines.
pub fn perform(
    engine: &dyn Backend,
    data_dir: &std::path::Path,
    effect: Effect,
    cancel: &AtomicBool,
    progress: Option<Progress>,
) -> Vec<Msg> {
    match effect {
        Effect::LoadDatabases { generation } => vec![Msg::Children {
            generation,
            key: None,
            append: false,
            result: databases(engine),
        }],
        Effect::LoadChildren {
            generation,
            key,
            node,
            cursor,
        } => vec![Msg::Children {
            generation,
            append: cursor.is_some(),
            result: children(engine, &node, cursor.as_deref()),
            key: Some(key),
        }],
        Effect::ProbeTree {
            generation,
            scripts,
        } => vec![Msg::TreeProbe {
            generation,
            result: probe_tree(engine, &scripts),
        }],
        Effect::ReadItem {
            ticket,
            db,
            c,
            id,
            pk,
        } => vec![Msg::Item {
            ticket,
            result: engine.read_item(&db, &c, &id, &pk),
        }],
        Effect::LoadRanges { ticket, db, c } => vec![load_ranges(engine, ticket, db, c)],
        Effect::EstimateQuery {
            ticket: _,
            db,
            c,
            sql,
            params,
        } => vec![Msg::QueryEstimate {
            result: estimate(engine, &db, &c, &sql, params),
            sql,
        }],
        Effect::LoadSchema { db, c } => vec![Msg::Schema {
            result: schema(engine, &db, &c),
            db,
            c,
        }],
        Effect::LoadDetails { ticket, db, c } => vec![Msg::Details {
            ticket,
            result: details(engine, &db, &c).map(Box::new),
            db,
            c,
        }],
        Effect::ReadScript {
            ticket,
            db,
            c,
            kind,
            id,
        } => vec![Msg::ScriptRead {
            ticket,
            result: engine.read_script(&db, &c, kind, &id),
        }],
        Effect::SaveScript {
            ticket,
            db,
            c,
            spec,
            create,
        } => {
            let result = if create {
                engine.create_script(&db, &c, &spec)
            } else {
                engine.replace_script(&db, &c, &spec)
            };
            vec![Msg::ScriptSaved {
                ticket,
                db,
                c,
                spec,
                create,
                result,
            }]
        }
        Effect::DeleteScript { db, c, kind, id } => vec![Msg::ScriptDeleted {
            result: engine.delete_script(&db, &c, kind, &id),
            db,
            c,
            kind,
            id,
        }],
        Effect::ExecuteProcedure {
            ticket,
            db,
            c,
            id,
            request,
        } => vec![Msg::Executed {
            ticket,
            result: engine.execute_stored_procedure(&db, &c, &id, &request),
        }],
        Effect::RunQuery {
            ticket,
            db,
            c,
            sql,
            params,
            continuation,
        } => {
            let opts = QueryOptions {
                continuation,
                progress,
                params: params.into_iter().collect(),
                // The stats panel shows them, and offers to add an index they name.
                index_metrics: true,
                ..Default::default()
            };
            vec![query_page(engine, ticket, &db, &c, &sql, &opts, cancel)]
        }
        Effect::LoadPartitions { ticket, db, c } => vec![Msg::Partitions {
            ticket,
            result: engine.partitions(&db, &c, 10, 120),
        }],
        Effect::SaveItem {
            ticket,
            db,
            c,
            body,
            if_match,
            create,
        } => vec![Msg::Saved {
            ticket,
            result: save_item(engine, &db, &c, &body, if_match.as_deref(), create),
            pk_paths: engine
                .container_key(&db, &c)
                .map(|k| k.partition_key.paths)
                .unwrap_or_default(),
            db,
            c,
            body,
        }],
        Effect::DeleteItem {
            ticket,
            db,
            c,
            id,
            pk,
            if_match,
        } => vec![Msg::Deleted {
            ticket,
            result: engine.delete_item(&db, &c, &id, &pk, if_match.as_deref()),
            id,
        }],
        Effect::ApplyIndex {
            db,
            c,
            single,
            composite,
        } => vec![Msg::Applied(apply_index(
            engine,
            &db,
            &c,
            single.as_deref(),
            composite.as_deref(),
        ))],
        Effect::SetWrites { on } => vec![Msg::WritesSet {
            on,
            result: engine.set_writes(on),
        }],
        Effect::SaveHistory { entries } => {
            // Losing history is not worth interrupting anyone for.
            let _ = save_history(data_dir, &entries);
            Vec::new()
        }
        Effect::CancelQuery { .. }
        | Effect::Subscribe { .. }
        | Effect::Unsubscribe { .. }
        | Effect::StreamPalette { .. }
        | Effect::StopPalette { .. }
        | Effect::Edit { .. }
        | Effect::EditQuery { .. }
        | Effect::EditScript { .. }
        | Effect::Copy { .. }
        | Effect::StartJob { .. }
        | Effect::CancelJob { .. }
        | Effect::StartGateway { .. }
        | Effect::StopGateway { .. } => Vec::new(),
    }
}

/// A container's settings and statistics for its pane, with its scripts counted and, for
/// a bundled sample's container, the note on its design.
fn details(engine: &dyn Backend, db: &str, c: &str) -> Result<super::state::details::Details> {
    let info = engine.container(db, c)?;
    let count = |kind| engine.list_scripts(db, c, kind).map_or(0, |l| l.len());
    let note = crate::samples::list().ok().and_then(|sets| {
        sets.into_iter()
            .flat_map(|s| s.databases)
            .filter(|d| d.id == db)
            .flat_map(|d| d.containers)
            .find(|x| x.id == c)
            .and_then(|x| x.note)
    });
    Ok(super::state::details::Details {
        info,
        note,
        scripts: KINDS.map(count),
    })
}

/// A sample of the container's documents for completion, with its UDFs' names (a backend
/// without scripts completes without them).
fn schema(engine: &dyn Backend, db: &str, c: &str) -> Result<Schema> {
    let docs = engine.sample_documents(db, c, SCHEMA_SAMPLE)?;
    let udfs = engine
        .list_scripts(db, c, ScriptKind::UserDefinedFunction)
        .map(|list| list.into_iter().map(|s| s.id).collect())
        .unwrap_or_default();
    Ok(Schema::from_documents(docs.iter().map(Vec::as_slice)).with_udfs(udfs))
}

/// The container's ranges for the strip, and its partition key paths.
/// The question to ask before `sql` runs, when its plan reads more than one range: how
/// many, and what scanning their share of the container's items would cost
/// ([`crate::charge::query_estimate`]); `None` for a query on one range.
fn estimate(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    sql: &str,
    params: std::collections::BTreeMap<String, Value>,
) -> Result<Option<String>> {
    let opts = QueryOptions {
        params: params.into_iter().collect(),
        ..Default::default()
    };
    let plan = engine.query_plan(db, c, sql, &opts)?;
    if plan.ranges.len() <= 1 {
        return Ok(None);
    }
    let info = engine.container(db, c)?;
    let (items, bytes) = match info.partitions.as_deref() {
        // The ranges the plan reads, as the store or the service counts them.
        Some(parts) if info.statistics_source != crate::engine::StatisticsSource::Unreported => {
            parts
                .iter()
                .filter(|p| plan.ranges.contains(&p.id))
                .fold((0, 0), |(i, b), p| {
                    (i + p.statistics.item_count, b + p.statistics.size_bytes)
                })
        }
        // No per-range figures: the ranges' share of the container's.
        _ => {
            let share = plan.ranges.len() as f64 / info.partition_count.max(1) as f64;
            (
                (info.statistics.item_count as f64 * share).round() as u64,
                (info.statistics.size_bytes as f64 * share).round() as u64,
            )
        }
    };
    let ru = crate::charge::query_estimate(plan.ranges.len(), items, bytes);
    Ok(Some(format!(
        "This query reads {} of {}'s {} physical partitions. Scanning them ({items} items) \
         would cost about {} RU; an index-served filter costs less. Run it? (y/n)",
        plan.ranges.len(),
        c,
        info.partition_count,
        crate::tui::ui::fmt_ru(ru)
    )))
}

fn load_ranges(engine: &dyn Backend, ticket: u64, db: String, c: String) -> Msg {
    let pk_paths = engine
        .container(&db, &c)
        .map(|i| i.partition_key.paths)
        .unwrap_or_default();
    Msg::Ranges {
        ticket,
        ranges: ranges(engine, &db, &c),
        db,
        c,
        pk_paths,
    }
}

/// One page of a query, timed.
fn query_page(
    engine: &dyn Backend,
    ticket: u64,
    db: &str,
    c: &str,
    sql: &str,
    opts: &QueryOptions,
    cancel: &AtomicBool,
) -> Msg {
    let start = Instant::now();
    let mut result = engine.query_cancellable(db, c, sql, opts, cancel);
    // A page that returned while its result was still being computed holds nothing to
    // show: ask again, as the SDKs do, until results come (or the person cancels).
    let mut opts = opts.clone();
    while let Ok(page) = &result
        && page.still_computing()
        && let Some(next) = page.continuation.clone()
    {
        opts.continuation = Some(next);
        result = engine.query_cancellable(db, c, sql, &opts, cancel);
    }
    let elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    Msg::QueryPage {
        ticket,
        result,
        elapsed_ms,
    }
}

/// Adds one included path or one composite index (`/a ASC` specs) to a container's
/// policy, through the policy's own parser so the service's validation applies.
pub fn apply_index(
    engine: &dyn Backend,
    db: &str,
    c: &str,
    single: Option<&str>,
    composite: Option<&[String]>,
) -> Result<String> {
    let info = engine.container(db, c)?;
    let mut policy = serde_json::to_value(&info.indexing_policy)
        .map_err(|e| crate::error::Error::internal(format!("policy: {e}")))?;
    let what = if let Some(specs) = composite {
        let paths: Vec<Value> = specs
            .iter()
            .map(|s| {
                let (path, order) = s.rsplit_once(' ').unwrap_or((s, "ASC"));
                let order = if order.eq_ignore_ascii_case("DESC") {
                    "descending"
                } else {
                    "ascending"
                };
                serde_json::json!({"path": path, "order": order})
            })
            .collect();
        push_array(&mut policy, "compositeIndexes", Value::Array(paths));
        format!("composite index ({})", specs.join(", "))
    } else if let Some(path) = single {
        push_array(
            &mut policy,
            "includedPaths",
            serde_json::json!({ "path": path }),
        );
        format!("included path {path}")
    } else {
        return Ok("nothing to add".into());
    };
    let policy = serde_json::from_value(policy)
        .map_err(|e| crate::error::Error::bad_request(format!("the new policy is invalid: {e}")))?;
    engine.set_indexing_policy(db, c, policy)?;
    Ok(format!(
        "added the {what} to {db}/{c}; the index builds in the background"
    ))
}

fn push_array(policy: &mut Value, key: &str, item: Value) {
    if let Some(obj) = policy.as_object_mut() {
        match obj.get_mut(key) {
            Some(Value::Array(a)) => a.push(item),
            _ => {
                obj.insert(key.to_string(), Value::Array(vec![item]));
            }
        }
    }
}

/// Runs a job to its end, reporting progress; `stop` cancels it (499) between batches.
/// `data_dir` is where the explorer keeps its files (the gateway's recorded requests).
pub fn run_job(
    engine: &dyn Backend,
    data_dir: &std::path::Path,
    ticket: u64,
    job: &crate::tui::effect::JobKind,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Msg {
    use crate::tui::effect::JobKind;
    // A sample load's progress goes to the status line; `stop` ends it between batches.
    let mut progress = |p: &crate::samples::Progress| {
        send(Msg::JobProgress {
            ticket,
            done: p.done,
            total: p.total,
        });
        !stop.load(Ordering::Acquire)
    };
    let result = match job {
        JobKind::LoadSample { name } => crate::samples::load(
            engine,
            name,
            &crate::samples::LoadOptions::default(),
            &mut progress,
        )
        .map(|r| format!("loaded {name}: {}", crate::tui::ui::plural(r.items, "item"))),
        JobKind::Export { db, c, path } => export(engine, ticket, db, c, path, stop, send),
        JobKind::Workbench { suite } => run_workbench(engine, ticket, suite, stop, send),
        JobKind::FirstLaunch { dir } => crate::samples::first_launch(engine, dir, &mut progress)
            .map(|loaded| {
                let reports = loaded.unwrap_or_default();
                let items: u64 = reports.iter().map(|r| r.items).sum();
                format!(
                    "first launch: loaded the bundled sample sets ({})",
                    crate::tui::ui::plural(items, "item")
                )
            }),
        JobKind::ExportResult {
            source,
            path,
            format,
        } => export_result(engine, ticket, source, path, *format, stop, send),
        JobKind::Advise { .. } | JobKind::Repartition { .. } => {
            super::advisor_jobs::run(engine, data_dir, ticket, job, stop, send)
        }
    };
    Msg::JobDone { ticket, result }
}

/// Writes a query's result to a file, with the rows written as progress.
fn export_result(
    engine: &dyn Backend,
    ticket: u64,
    source: &super::export::Source,
    path: &str,
    format: super::export::Format,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Result<String> {
    use super::export::Source;
    let total = match source {
        Source::Loaded(rows) => rows.len() as u64,
        Source::Query { .. } => 0,
    };
    let mut progress = |done| {
        send(Msg::JobProgress {
            ticket,
            done,
            total,
        })
    };
    let w = super::export::export(engine, source, path, format, stop, &mut progress)?;
    let rerun = match source {
        Source::Loaded(_) => String::new(),
        Source::Query { .. } => format!(
            " (the query run again for every page: {} RU)",
            crate::tui::ui::fmt_ru(w.request_charge)
        ),
    };
    Ok(format!(
        "exported {} as {} to {}{rerun}",
        crate::tui::ui::plural(w.rows, "row"),
        format.name(),
        w.path.display()
    ))
}

fn run_workbench(
    engine: &dyn Backend,
    ticket: u64,
    suite: &str,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Result<String> {
    use crate::workbench::RunProgress;
    let suite = crate::workbench::Suite::builtin(suite)?;
    let mut progress = |p: &RunProgress| {
        if let RunProgress::Loading { done, total, .. } | RunProgress::Running { done, total, .. } =
            p
        {
            send(Msg::JobProgress {
                ticket,
                done: *done,
                total: *total,
            });
        }
        !stop.load(Ordering::Acquire)
    };
    let report = crate::workbench::run(
        engine,
        &suite,
        &crate::workbench::RunOptions::default(),
        &mut progress,
    )?;
    let summary = format!(
        "workbench {}: {} patterns × {} designs in {:.1} s",
        report.suite,
        report.patterns.len(),
        report.designs.len(),
        report.seconds
    );
    send(Msg::WorkbenchReport {
        ticket,
        report: Box::new(report),
    });
    Ok(summary)
}

fn export(
    engine: &dyn Backend,
    ticket: u64,
    db: &str,
    c: &str,
    path: &str,
    stop: &AtomicBool,
    send: &dyn Fn(Msg),
) -> Result<String> {
    use std::io::Write;
    let total = engine.container(db, c)?.statistics.item_count;
    let file = std::fs::File::create(path)
        .map_err(|e| crate::error::Error::bad_request(format!("cannot create {path:?}: {e}")))?;
    let mut out = std::io::BufWriter::new(file);
    let mut done = 0u64;
    let io = |e: std::io::Error| crate::error::Error::internal(format!("writing {path:?}: {e}"));
    let n = engine.export(db, c, None, &mut |line| {
        if stop.load(Ordering::Acquire) {
            return Err(crate::error::Error::cancelled("export cancelled"));
        }
        out.write_all(line)
            .and_then(|_| out.write_all(b"\n"))
            .map_err(io)?;
        done += 1;
        if done.is_multiple_of(5_000) {
            send(Msg::JobProgress {
                ticket,
                done,
                total,
            });
        }
        Ok(())
    })?;
    out.flush().map_err(io)?;
    Ok(format!(
        "exported {} of {db}/{c} to {path}",
        crate::tui::ui::plural(n, "item")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epk_fractions() {
        assert_eq!(epk_fraction("", 0.0), 0.0);
        assert_eq!(epk_fraction("FF", 1.0), 1.0);
        assert!((epk_fraction("20", 0.0) - 0.5).abs() < 1e-9);
        assert!((epk_fraction("10000000000000000000000000000000", 0.0) - 0.25).abs() < 1e-9);
    }
}
