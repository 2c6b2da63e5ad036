//! `compact`, the compaction that ends a large `import` ([`Engine::close_and_compact`]), and
//! `stats`: what the data file holds.

use serde_json::json;

use super::{CliResult, Failure, print_json};
use crate::engine::{CompactOutcome as Outcome, CompactWhen as When, Engine};

/// `compact`: compacts whatever the free space, prints what was done; fails when another
/// process has the store open.
pub fn compact(engine: Engine) -> CliResult {
    let dir = engine.data_dir().display().to_string();
    match close_and_compact(engine, When::Always)? {
        Outcome::InUse { .. } => Err(Failure::Usage(format!(
            "the store in {dir} is open in another process; close it there and compact again"
        ))),
        outcome => {
            print_json(&outcome_json(&outcome));
            Ok(())
        }
    }
}

/// `stats`: the data file's parts and free pages, and beside them the items' own JSON bytes
/// (what every container's statistics count), so the file's overhead reads at a glance.
pub fn stats(engine: &Engine) -> CliResult {
    use crate::engine::Backend;
    let footprint = engine.footprint()?;
    let items_json: u64 = engine
        .list_containers(None)?
        .iter()
        .map(|c| c.statistics.size_bytes)
        .sum();
    let mut out = serde_json::to_value(&footprint).unwrap_or_default();
    out["itemsJsonBytes"] = json!(items_json);
    if items_json > 0 {
        let ratio = footprint.file_bytes as f64 / items_json as f64;
        out["fileToItemsJson"] = json!((ratio * 100.0).round() / 100.0);
    }
    print_json(&out);
    Ok(())
}

/// After a bulk load: closes the engine and compacts the store if worthwhile, noting it in
/// the load's summary `out`. The load has succeeded whatever happens here, so a failure is
/// a warning on stderr.
pub(crate) fn after_bulk_load(engine: Engine, out: &mut serde_json::Value) {
    match close_and_compact(engine, When::Worthwhile) {
        Ok(outcome @ Outcome::Compacted { .. }) => {
            if let Some(obj) = out.as_object_mut() {
                obj.insert("compacted".into(), outcome_json(&outcome));
            }
        }
        Ok(Outcome::InUse { worthwhile: true }) => eprintln!(
            "cosmoscope: the load left much of the data file free, which slows later writes, \
             but another process has the store open: run `cosmoscope compact` once it is closed"
        ),
        Ok(_) => {}
        Err(e) => eprintln!(
            "cosmoscope: the data is loaded; compacting the store failed: {}",
            e.message
        ),
    }
}

/// Closes the engine (the data file can only be replaced while nobody has it open) and
/// compacts its store.
pub(crate) fn close_and_compact(engine: Engine, when: When) -> crate::error::Result<Outcome> {
    let spinner = super::spinner("compacting the store");
    let outcome = engine.close_and_compact(when);
    spinner.finish_and_clear();
    outcome
}

fn outcome_json(outcome: &Outcome) -> serde_json::Value {
    match outcome {
        Outcome::Compacted {
            before,
            after,
            seconds,
        } => json!({
            "fileBytesBefore": before,
            "fileBytesAfter": after,
            "seconds": crate::charge::round(*seconds),
        }),
        Outcome::NotWorthwhile { file, free } => json!({"fileBytes": file, "freeBytes": free}),
        Outcome::InUse { .. } => json!({"inUse": true}),
    }
}
