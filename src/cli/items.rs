//! Commands on items: `item ...`, `import` and `export`.

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::args::{ItemCommand, TriggerFlags};
use super::{
    CliResult, Failure, parse_json_arg, print_json, print_line, progress_bar, split_target,
};
use crate::engine::{
    Backend, Engine, IMPORT_BATCH_BYTES, ImportSummary, ItemResponse, PatchRequest, TriggeredOp,
    TriggeredWrite, import,
    import_order::{ImportOrder, Placed},
};
use crate::error::{Error, StatusCode};

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

/// Checks every record of every file, placing each in item-key order as it goes, then
/// writes them in that order in batches ([`crate::engine::import_order`]), reading each
/// record back from its file (standard input is first kept in a temporary file in the data
/// directory). An import holds one chunk of records and the ordering's bounded buffer,
/// whatever the files' size.
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
    let sources = files
        .iter()
        .map(|file| ImportSource::open(file, engine.data_dir()))
        .collect::<CliResult<Vec<_>>>()?;
    // Records checked per chunk: enough to keep the check's own cost per record small.
    const CHECK_ITEMS: usize = 10_000;
    let mut order = engine.import_order(db, c)?;
    let mut per_file = vec![0u64; sources.len()];
    for (number, source) in sources.iter().enumerate() {
        let mut stream = source.stream()?;
        while let Some(chunk) = stream
            .next_chunk(CHECK_ITEMS, IMPORT_BATCH_BYTES)
            .map_err(|e| in_file(e, &source.name))?
        {
            order
                .add(number as u32, &chunk)
                .map_err(|e| in_file(e, &source.name))?;
            per_file[number] += chunk.len() as u64;
        }
    }
    let total = order.len();
    let bar = progress_bar(total);
    let mut summary = ImportSummary::default();
    let started = std::time::Instant::now();
    engine.bulk_load(db, c, (total as usize, batch_items), || {
        write_placed(&engine, (db, c), &sources, order, batch_items, &mut |s| {
            summary.add(s);
            bar.set_position(summary.items);
        })
    })?;
    // The import's time includes building the index at its end.
    summary.seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    summary.request_charge = crate::charge::round(summary.request_charge);
    let rate = if summary.seconds > 0.0 {
        (summary.items as f64 / summary.seconds).round()
    } else {
        0.0
    };
    let per_file: Vec<Value> = sources
        .iter()
        .zip(per_file)
        .map(|(source, items)| json!({ "file": source.name, "items": items }))
        .collect();
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

/// Writes the records of an import in the order `order` placed them
/// ([`Engine::import_placed`]), each read back from its file; `written` gets each batch's
/// summary.
fn write_placed(
    engine: &Engine,
    (db, c): (&str, &str),
    sources: &[ImportSource],
    order: ImportOrder,
    batch_items: usize,
    written: &mut dyn FnMut(&ImportSummary),
) -> CliResult {
    let files = sources
        .iter()
        .map(ImportSource::file)
        .collect::<CliResult<Vec<_>>>()?;
    let mut read = |record: &Placed, text: &mut Vec<u8>| -> CliResult {
        let source = record.source as usize;
        text.resize(record.origin.len as usize, 0);
        files[source]
            .read_exact_at(text, record.origin.offset)
            .map_err(|e| Failure::Usage(format!("cannot read {} again: {e}", sources[source].name)))
    };
    let locate = |source: u32, e: Error| located(e, &sources[source as usize].name);
    engine.import_placed((db, c), order, batch_items, &mut read, &locate, written)
}

/// An import error located in its input file; a fault of the store (5xx) is not the
/// file's, and keeps its own message.
/// One file named to `import`: a path, or standard input kept in a temporary file (removed
/// when the import ends) so that it can be read twice.
struct ImportSource {
    name: String,
    path: Option<PathBuf>,
    spooled: Option<std::fs::File>,
}

impl ImportSource {
    fn open(file: &std::path::Path, data_dir: &std::path::Path) -> CliResult<ImportSource> {
        let name = file.display().to_string();
        if file.as_os_str() != "-" {
            // Opened now, so a missing file is reported before anything is read.
            std::fs::File::open(file)
                .map_err(|e| Failure::Usage(format!("cannot read {name}: {e}")))?;
            return Ok(ImportSource {
                name,
                path: Some(file.to_path_buf()),
                spooled: None,
            });
        }
        let mut spooled = tempfile::tempfile_in(data_dir).map_err(|e| {
            Failure::Usage(format!(
                "cannot keep standard input in a temporary file in {}: {e}",
                data_dir.display()
            ))
        })?;
        std::io::copy(&mut std::io::stdin().lock(), &mut spooled)
            .map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
        Ok(ImportSource {
            name,
            path: None,
            spooled: Some(spooled),
        })
    }

    /// The file, to read from (records again where they were found: from any position).
    fn file(&self) -> CliResult<std::fs::File> {
        match (&self.path, &self.spooled) {
            (Some(path), _) => std::fs::File::open(path),
            (None, Some(spooled)) => spooled.try_clone(),
            (None, None) => Err(std::io::Error::other("no input")),
        }
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", self.name)))
    }

    /// The file's records from its beginning.
    fn stream(&self) -> CliResult<import::RecordStream<std::io::BufReader<std::fs::File>>> {
        let mut file = self.file()?;
        // A spooled standard input shares its position with the copies made before.
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", self.name)))?;
        // Large reads: the stream walks the buffer byte by byte, the disk does not.
        let reader = std::io::BufReader::with_capacity(1 << 20, file);
        Ok(import::RecordStream::new(reader))
    }
}

fn in_file(e: Error, file: &str) -> Failure {
    Failure::Request(located(e, file))
}

/// `e` prefixed with the file it is about, unless it is a fault of the store's.
fn located(e: Error, file: &str) -> Error {
    if e.status.is_server_error() {
        return e;
    }
    let message = format!("{file}: {}", e.message);
    Error { message, ..e }
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
