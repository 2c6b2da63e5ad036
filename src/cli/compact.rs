//! `compact`, and the compaction that ends a large `import` ([`Engine::close_and_compact`]).

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
