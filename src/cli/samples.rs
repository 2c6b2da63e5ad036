//! `sample list`, `sample load`, and the sample loading of first launch.

use std::io::Write;

use indicatif::ProgressBar;

use super::{CliResult, print_json, print_line, progress_bar};
use crate::engine::Engine;
use crate::samples::{self, LoadOptions, LoadReport, Progress};

/// One JSON line per bundled set.
pub fn list() -> CliResult {
    let mut out = std::io::stdout().lock();
    for info in samples::list()? {
        let line = serde_json::to_vec(&info).map_err(|e| {
            crate::error::Error::internal(format!("serializing a sample description: {e}"))
        })?;
        if !print_line(&mut out, &line) {
            break;
        }
    }
    let _ = out.flush();
    Ok(())
}

/// Loads a sample set; a large one is followed by compaction, as an import is.
pub fn load(engine: Engine, name: &str, scale: f64, seed: u64) -> CliResult {
    let bar = progress_bar(0);
    let report = samples::load(&engine, name, &LoadOptions { scale, seed }, &mut |p| {
        show(&bar, p)
    });
    bar.finish_and_clear();
    let mut out = serde_json::to_value(report?).unwrap_or_default();
    super::compact::after_bulk_load(engine, &mut out);
    print_json(&out);
    Ok(())
}

/// On a store that has never had databases, loads every set at scale 1 and returns what
/// it loaded; otherwise does nothing. Never asks anything, so it also runs unattended.
pub fn first_launch(engine: &Engine) -> CliResult<Option<Vec<LoadReport>>> {
    let bar = progress_bar(0);
    let loaded = samples::first_launch(engine, engine.data_dir(), &mut |p| show(&bar, p));
    bar.finish_and_clear();
    Ok(loaded?)
}

/// What a first launch loaded, for the status a script reads.
pub fn summary_json(reports: &[LoadReport]) -> serde_json::Value {
    let (items, seconds, names) = totals(reports);
    serde_json::json!({
        "loaded": names,
        "items": items,
        "seconds": (seconds * 10.0).round() / 10.0,
    })
}

fn totals(reports: &[LoadReport]) -> (u64, f64, Vec<&str>) {
    let items = reports.iter().map(|r| r.items).sum();
    let seconds = reports.iter().map(|r| r.seconds).sum();
    (
        items,
        seconds,
        reports.iter().map(|r| r.name.as_str()).collect(),
    )
}

fn show(bar: &ProgressBar, p: &Progress) -> bool {
    bar.set_length(p.total);
    bar.set_position(p.done);
    bar.set_message(format!("{} → {}/{}", p.set, p.database, p.container));
    true
}
