//! `feed`: read the change feed as one page, every page, or a live NDJSON stream.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::args::{FeedArgs, FeedModeArg};
use super::stream::ArrayDocument;
use super::{CliResult, Failure, print_json, print_line, split_target};
use crate::engine::{Backend, FeedMode, FeedRequest, FeedStart, json_f64};

/// How often a follower checks the container's change sequence.
const POLL: Duration = Duration::from_millis(25);

pub fn feed(engine: &dyn Backend, args: FeedArgs) -> CliResult {
    let (db, c) = split_target(&args.target)?;
    let mode = match args.mode {
        FeedModeArg::Latest => FeedMode::LatestVersion,
        FeedModeArg::AllVersions => FeedMode::AllVersions,
    };
    let start = match &args.continuation {
        Some(token) => FeedStart::Continuation(token.clone()),
        None => parse_from(&args.from)?,
    };
    if args.max_items == 0 {
        return Err(Failure::Usage("--max-items must be at least 1".into()));
    }
    let req = FeedRequest {
        start,
        mode,
        range: args.range.map(|r| r.to_string()),
        max_items: args.max_items,
        ..FeedRequest::default()
    };
    if args.follow {
        return follow(engine, db, c, req);
    }
    if args.all {
        return drain(engine, db, c, req);
    }
    let page = engine.read_feed(db, c, &req)?;
    let changes: Vec<Value> = page
        .changes
        .iter()
        .map(|ch| ch.to_json(mode, &page.partition_key))
        .collect();
    print_json(&json!({
        "count": changes.len(),
        "changes": changes,
        "continuation": page.continuation,
        "requestCharge": json_f64(crate::charge::round(page.request_charge)),
    }));
    Ok(())
}

/// `--all`: every page to the end, written as it is read, so memory holds one page
/// whatever the feed's length. An error after the first page ends the document with an
/// `error` member, and the exit status says it failed.
fn drain(engine: &dyn Backend, db: &str, c: &str, mut req: FeedRequest) -> CliResult {
    let mut doc =
        ArrayDocument::begin(std::io::BufWriter::new(std::io::stdout().lock()), "changes");
    let mut charge = 0.0;
    let outcome = loop {
        let page = match engine.read_feed(db, c, &req) {
            Ok(page) => page,
            Err(e) => break Err(e),
        };
        charge += page.request_charge;
        for change in &page.changes {
            if !doc.push(&change.to_json(req.mode, &page.partition_key)) {
                return Ok(()); // the reader went away (`| head`)
            }
        }
        if page.changes.is_empty() {
            break Ok(page.continuation);
        }
        req.start = FeedStart::Continuation(page.continuation);
    };
    let mut rest = serde_json::Map::new();
    rest.insert("count".into(), doc.count().into());
    let failed = outcome.is_err();
    match outcome {
        Ok(token) => {
            rest.insert("continuation".into(), token.into());
            rest.insert(
                "requestCharge".into(),
                json_f64(crate::charge::round(charge)),
            );
        }
        Err(e) => {
            rest.insert("error".into(), e.to_json());
        }
    }
    doc.finish(rest);
    if failed {
        Err(Failure::Printed)
    } else {
        Ok(())
    }
}

fn parse_from(from: &str) -> CliResult<FeedStart> {
    match from {
        "beginning" => Ok(FeedStart::Beginning),
        "now" => Ok(FeedStart::Now),
        t => chrono::DateTime::parse_from_rfc3339(t).map(|d| FeedStart::Time(d.timestamp())).map_err(|e| {
            Failure::Usage(format!("--from must be beginning, now or an RFC 3339 time like 2026-11-21T10:00:00Z ({e})"))
        }),
    }
}

/// Streams changes until interrupted: polls the container's change sequence and reads
/// only when it moved, so a write in another process shows up within one poll.
fn follow(engine: &dyn Backend, db: &str, c: &str, mut req: FeedRequest) -> CliResult {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Without a handler, Ctrl-C still ends the process; with one, we exit cleanly.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Release));
    }
    let mut out = std::io::stdout().lock();
    let mut seen_head = None;
    while !stop.load(Ordering::Acquire) {
        let head = engine.feed_head(db, c)?;
        if seen_head == Some(head) {
            std::thread::sleep(POLL);
            continue;
        }
        loop {
            let page = engine.read_feed(db, c, &req)?;
            for change in &page.changes {
                let json = change.to_json(req.mode, &page.partition_key);
                let line = serde_json::to_vec(&json).unwrap_or_default();
                if !print_line(&mut out, &line) {
                    return Ok(()); // reader went away
                }
            }
            let _ = out.flush();
            let n = page.changes.len();
            req.start = FeedStart::Continuation(page.continuation);
            if n < req.max_items {
                break;
            }
        }
        seen_head = Some(head);
    }
    Ok(())
}
