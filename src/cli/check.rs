//! `cosmoscope check`: the whole store verified, its report printed as JSON. The file's
//! structure is read first without mapping it, so a damaged file cannot fault the check;
//! only a sound structure lets the containers be read and compared. Exit status 0 when the
//! store is sound, 3 (the status of damage) when anything is wrong.

use std::path::Path;

use super::{CliResult, Failure, print_json};
use crate::engine::Engine;
use crate::error::Error;

pub fn check(dir: &Path) -> CliResult {
    let mut report = Engine::check_file(dir)?;
    if report.damage.is_none() && report.data_file.exists() {
        let engine = Engine::open_without_background(dir)?;
        engine.check_containers(&mut report)?;
    }
    print_json(&report.to_json());
    if report.is_sound() {
        return Ok(());
    }
    let broken = report
        .containers
        .iter()
        .filter(|c| !c.problems.is_empty())
        .map(|c| format!("{}/{}", c.database, c.container))
        .collect::<Vec<_>>();
    let what = match &report.damage {
        Some(d) => format!("the data file's structure is damaged: {d}"),
        None => format!("problems in {}", broken.join(", ")),
    };
    Err(Failure::Request(Error::damaged(format!(
        "{} failed its check ({what}); the report above says what was found",
        dir.display()
    ))))
}
