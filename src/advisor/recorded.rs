//! `advise --workload recorded`: the requests the gateway recorded on the container
//! (`recorded_requests`) as a workload. One pattern per query text, weighted by how often it
//! was sent and replayed with the parameter values it was sent with; reads, creates and
//! replaces weighted by their counts and replayed on the items they addressed (found by id
//! and today's key), so each candidate sees them land where the real items fall. A create
//! is replayed as a create of the item it made with a new id; deletes are counted but not
//! replayed (the replay would have to put the item back to keep the copy whole).

use std::path::Path;

use super::items::Items;
use super::workload::{FileOp, Source, WorkPattern, Workload, scale_weights};
use crate::engine::PartitionKeyDefinition;
use crate::error::{Error, Result};
use crate::recorded_requests::{KeyLog, RecordedQuery, Recording, Recordings};

/// The `--workload` that names them.
pub const RECORDED: &str = "recorded";

/// The workload `--workload recorded` names: the requests recorded on `db`/`c` in data
/// directory `dir`.
pub fn workload(
    dir: &Path,
    db: &str,
    c: &str,
    items: &Items,
    key: &PartitionKeyDefinition,
    rate: f64,
) -> Result<Workload> {
    let all = Recordings::load(dir)?;
    let Some(r) = all.of(db, c) else {
        return Err(Error::bad_request(format!(
            "the gateway recorded no request to {db}/{c}: serve the store (cosmoscope serve, or \
             the explorer's gateway) and send some first"
        )));
    };
    workload_of(r, items, key, rate)
}

/// The workload the requests recorded in `rec` make on the container's `items` (today's
/// key `key`), its rates scaled to `rate` requests per second.
fn workload_of(
    rec: &Recording,
    items: &Items,
    key: &PartitionKeyDefinition,
    rate: f64,
) -> Result<Workload> {
    let mut queries: Vec<&RecordedQuery> = rec.queries.iter().collect();
    queries.sort_by(|a, b| b.count.total_cmp(&a.count));
    let mut patterns: Vec<WorkPattern> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| WorkPattern {
            id: format!("q{}", i + 1),
            title: q.text.clone(),
            rate: q.count,
            op: Some(FileOp::Recorded {
                sql: q.text.clone(),
                samples: q
                    .parameters
                    .iter()
                    .map(|set| set.iter().map(|(n, v)| (n.clone(), v.clone())).collect())
                    .collect(),
            }),
        })
        .collect();
    let found = |log: &KeyLog| -> Vec<usize> {
        log.keys
            .iter()
            .filter_map(|(id, pk)| items.find(key, id, pk))
            .collect()
    };
    let points = [
        ("read", "point reads", &rec.reads, FileOp::Read),
        ("create", "creates", &rec.creates, FileOp::Create),
        ("replace", "replaces", &rec.replaces, FileOp::Replace),
    ];
    for (id, what, log, random) in points {
        if log.count == 0 {
            continue;
        }
        let on = found(log);
        let (title, op) = if on.is_empty() {
            // The items addressed are gone: random items stand in, and the title says so.
            (
                format!("{what} (of random items: the recorded ones are gone)"),
                random,
            )
        } else {
            (
                format!("{what} of the recorded items"),
                FileOp::On {
                    kind: Box::new(random),
                    items: on,
                },
            )
        };
        patterns.push(WorkPattern {
            id: id.to_string(),
            title,
            rate: log.count as f64,
            op: Some(op),
        });
    }
    if patterns.is_empty() {
        return Err(Error::bad_request(format!(
            "the gateway recorded no query, read, create or replace on {}/{}: serve the \
                 store (cosmoscope serve, or the explorer's gateway) and send some first",
            rec.database, rec.container
        )));
    }
    scale_weights(&mut patterns, rate);
    Ok(Workload {
        name: "recorded".into(),
        patterns,
        source: Source::File,
    })
}
