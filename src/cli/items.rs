//! Commands on items: `item ...`, `import` and `export`.

use crate::error::StatusCode;
use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::json;

use super::args::{ItemCommand, TriggerFlags};
use super::{
    CliResult, Failure, parse_json_arg, print_json, print_line, progress_bar, split_target,
};
use crate::engine::{
    Backend, Engine, ImportSummary, ItemResponse, PatchRequest, TriggeredOp, TriggeredWrite, import,
};

pub(crate) fn read_stdin() -> CliResult<Vec<u8>> {
    let mut body = Vec::new();
    std::io::stdin()
        .read_to_end(&mut body)
        .map_err(|e| Failure::Usage(format!("cannot read the request from stdin: {e}")))?;
    Ok(body)
}

/// A request body read from stdin as JSON; malformed JSON is the request's fault (400).
pub(crate) fn parse_stdin_json(body: &[u8]) -> CliResult<serde_json::Value> {
    serde_json::from_slice(body).map_err(|e| {
        Failure::Request(crate::error::Error::bad_request(format!(
            "the request on stdin is not valid JSON: {e}"
        )))
    })
}

/// A write naming triggers goes through [`Backend::write_item_with_triggers`]; `None` when
/// it names none.
#[allow(clippy::type_complexity)]
fn triggered(
    flags: TriggerFlags,
    if_match: Option<String>,
) -> Option<impl FnOnce(TriggeredOp, &dyn Backend, &str, &str) -> crate::Result<ItemResponse>> {
    if flags.pre_trigger.is_none() && flags.post_trigger.is_none() {
        return None;
    }
    Some(move |op, engine: &dyn Backend, db: &str, c: &str| {
        engine.write_item_with_triggers(
            db,
            c,
            &TriggeredWrite {
                op,
                if_match,
                pre_trigger: flags.pre_trigger,
                post_trigger: flags.post_trigger,
            },
        )
    })
}

pub fn item(engine: &dyn Backend, cmd: ItemCommand) -> CliResult {
    let response = match cmd {
        ItemCommand::Create { target, triggers } => {
            let (db, c) = split_target(&target)?;
            let body = read_stdin()?;
            match triggered(triggers, None) {
                Some(write) => write(TriggeredOp::Create(body), engine, db, c)?,
                None => engine.create_item(db, c, &body)?,
            }
        }
        ItemCommand::Upsert {
            target,
            if_match,
            triggers,
        } => {
            let (db, c) = split_target(&target)?;
            let body = read_stdin()?;
            match triggered(triggers, if_match.clone()) {
                Some(write) => write(TriggeredOp::Upsert(body), engine, db, c)?,
                None => engine.upsert_item(db, c, &body, if_match.as_deref())?,
            }
        }
        ItemCommand::Replace {
            target,
            if_match,
            triggers,
        } => {
            let (db, c) = split_target(&target)?;
            let body = read_stdin()?;
            match triggered(triggers, if_match.clone()) {
                Some(write) => write(TriggeredOp::Replace(body), engine, db, c)?,
                None => engine.replace_item(db, c, &body, if_match.as_deref())?,
            }
        }
        ItemCommand::Read { target, id, pk } => {
            let (db, c) = split_target(&target)?;
            engine.read_item(db, c, &id, &parse_json_arg("--pk", &pk)?)?
        }
        ItemCommand::Patch {
            target,
            id,
            pk,
            if_match,
        } => {
            let (db, c) = split_target(&target)?;
            let request = PatchRequest::from_json(parse_stdin_json(&read_stdin()?)?)?;
            engine.patch_item(
                db,
                c,
                &id,
                &parse_json_arg("--pk", &pk)?,
                &request,
                if_match.as_deref(),
            )?
        }
        ItemCommand::Delete {
            target,
            id,
            pk,
            if_match,
            triggers,
        } => {
            let (db, c) = split_target(&target)?;
            let partition_key = parse_json_arg("--pk", &pk)?;
            match triggered(triggers, if_match.clone()) {
                Some(write) => write(TriggeredOp::Delete { id, partition_key }, engine, db, c)?,
                None => engine.delete_item(db, c, &id, &partition_key, if_match.as_deref())?,
            }
        }
    };
    print_json(&response.to_json());
    Ok(())
}

/// Reads every file, checks every record of every file, then writes them in batches.
///
/// Afterwards, unless `compact` is false, the store is compacted if the import left much of
/// the file free and no other process has it open ([`Engine::close_and_compact`]).
pub fn import(
    engine: Engine,
    target: &str,
    files: &[PathBuf],
    batch_items: usize,
    compact: bool,
) -> CliResult {
    let (db, c) = split_target(target)?;
    let mut contents = Vec::with_capacity(files.len());
    for file in files {
        let bytes = if file.as_os_str() == "-" {
            read_stdin()?
        } else {
            std::fs::read(file)
                .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", file.display())))?
        };
        contents.push(bytes);
    }
    let mut parsed = Vec::with_capacity(files.len());
    for (file, bytes) in files.iter().zip(&contents) {
        let name = file.display().to_string();
        let records = import::records(bytes).map_err(|e| in_file(e, &name))?;
        engine
            .validate_records(db, c, &records)
            .map_err(|e| in_file(e, &name))?;
        parsed.push((name, records));
    }
    let total: u64 = parsed.iter().map(|(_, r)| r.len() as u64).sum();
    let bar = progress_bar(total);
    let mut summary = ImportSummary::default();
    let mut per_file = Vec::new();
    for (name, records) in &parsed {
        let base = summary.items;
        let s = engine
            .import_records_in_batches(db, c, records, batch_items, &mut |n| {
                bar.set_position(base + n)
            })
            .map_err(|e| in_file(e, name))?;
        per_file.push(json!({ "file": name, "items": s.items }));
        summary.items += s.items;
        summary.created += s.created;
        summary.replaced += s.replaced;
        summary.bytes += s.bytes;
        summary.request_charge += s.request_charge;
        summary.batches += s.batches;
        summary.throttled += s.throttled;
        summary.seconds += s.seconds;
    }
    bar.finish_and_clear();
    summary.request_charge = crate::charge::round(summary.request_charge);
    let rate = if summary.seconds > 0.0 {
        (summary.items as f64 / summary.seconds).round()
    } else {
        0.0
    };
    let mut out = serde_json::to_value(&summary).unwrap_or_default();
    if let Some(obj) = out.as_object_mut() {
        obj.insert("itemsPerSecond".into(), rate.into());
        obj.insert("files".into(), per_file.into());
    }
    if compact {
        super::compact::after_bulk_load(engine, &mut out);
    }
    print_json(&out);
    Ok(())
}

/// An import error located in its input file; a fault of the store (5xx) is not the
/// file's, and keeps its own message.
fn in_file(e: crate::error::Error, file: &str) -> Failure {
    if e.status.is_server_error() {
        return Failure::Request(e);
    }
    let message = format!("{file}: {}", e.message);
    Failure::Request(crate::error::Error { message, ..e })
}

pub fn export(engine: &dyn Backend, target: &str, pk: Option<&str>) -> CliResult {
    let (db, c) = split_target(target)?;
    let pk = pk.map(|p| parse_json_arg("--pk", p)).transpose()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = engine.export(db, c, pk.as_ref(), &mut |json| {
        if print_line(&mut out, json) {
            Ok(())
        } else {
            Err(crate::error::Error::cancelled(STDOUT_CLOSED))
        }
    });
    let _ = out.flush();
    match result {
        // The reader went away (`| head`): stop quietly.
        Err(e) if e.is(StatusCode::Cancelled) && e.message == STDOUT_CLOSED => Ok(()),
        other => other.map(|_| ()).map_err(Failure::from),
    }
}

/// The cancellation that marks "the consumer stopped reading"; never printed.
const STDOUT_CLOSED: &str = "stdout closed";
