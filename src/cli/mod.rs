//! The headless command line: JSON in, JSON out, for scripts, tests and benchmarks.
//!
//! Output contract (DESIGN.md §8): one JSON document (or NDJSON for streams) on stdout;
//! errors are `{"error": {"status", "substatus", "code", "message", ...}}` on stdout with exit
//! status 1 for a request error and 2 for a usage error. Progress goes to stderr, only when
//! stderr is a terminal.

pub mod args;
mod batch;
mod compact;
mod feed;
mod items;
mod query;
mod resources;
mod samples;
mod scripts;
mod serve;
mod workbench;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::Value;

use crate::engine::Engine;
use crate::error::Error;
use args::{Cli, Command, SampleCommand};

/// Why a command failed: a request the store refused, a command line it cannot run, or a
/// request whose failure the command already printed in its own output (a failed batch).
pub enum Failure {
    Request(Error),
    Usage(String),
    Printed,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Request(e)
    }
}

pub type CliResult<T = ()> = Result<T, Failure>;

/// Parses the command line, runs it and returns the process exit status.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // Humans get clap's rendering on stderr, scripts the JSON on stdout.
            let _ = e.print();
            let message = e.kind().as_str().map_or_else(
                || e.to_string(),
                |k| format!("{k}: {}", first_line(&e.to_string())),
            );
            return fail(Failure::Usage(message));
        }
    };
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail(f),
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string()
}

fn fail(f: Failure) -> ExitCode {
    let (err, code) = match f {
        Failure::Request(e) => (e, 1),
        Failure::Usage(message) => (Error::bad_request(message), 2),
        Failure::Printed => return ExitCode::from(1),
    };
    print_json(&serde_json::json!({ "error": err.to_json() }));
    ExitCode::from(code)
}

fn execute(cli: Cli) -> CliResult {
    // Listing the bundled sets needs no store.
    if let Some(Command::Sample(SampleCommand::List)) = cli.command {
        return samples::list();
    }
    if cli.serve.is_some() && cli.command.is_some() {
        return Err(Failure::Usage(
            "--serve opens the explorer with the gateway; `cosmoscope serve` runs the gateway alone"
                .into(),
        ));
    }
    let dir = cli
        .data_dir
        .clone()
        .unwrap_or_else(Engine::default_data_dir);
    let engine = Engine::open(&dir)?;
    match cli.command {
        None => launch(engine, &dir, cli.serve),
        Some(Command::Sample(SampleCommand::List)) => samples::list(),
        Some(Command::Sample(SampleCommand::Load { name, scale, seed })) => {
            samples::load(engine, &name, scale, seed)
        }
        Some(Command::Db(cmd)) => resources::db(&engine, cmd),
        Some(Command::Container(cmd)) => resources::container(&engine, cmd),
        Some(Command::Partitions {
            target,
            top,
            window,
            range,
            limit,
            after,
        }) => match range {
            Some(range) => {
                resources::logical_partitions(&engine, &target, range, after.as_deref(), limit)
            }
            None => resources::partitions(&engine, &target, top, window),
        },
        Some(Command::Workbench(args)) => workbench::workbench(&engine, args),
        Some(Command::Simulate(args)) => workbench::simulate(&engine, args),
        Some(Command::Epk { target, value }) => resources::epk(&engine, &target, &value),
        Some(Command::Compact) => compact::compact(engine),
        Some(Command::Serve(args)) => serve::serve(engine, &dir, args),
        Some(Command::Item(cmd)) => items::item(&engine, cmd),
        Some(Command::Sproc(cmd)) => scripts::sproc(&engine, cmd),
        Some(Command::Trigger(cmd)) => scripts::trigger(&engine, cmd),
        Some(Command::Udf(cmd)) => scripts::udf(&engine, cmd),
        Some(Command::Batch { target, pk }) => batch::batch(&engine, &target, &pk),
        Some(Command::Import {
            target,
            files,
            batch_items,
            no_compact,
        }) => items::import(engine, &target, &files, batch_items as usize, !no_compact),
        Some(Command::Export { target, pk }) => items::export(&engine, &target, pk.as_deref()),
        Some(Command::Feed(args)) => feed::feed(&engine, args),
        Some(Command::Query {
            target,
            sql,
            params,
            pk,
            max_items,
            continuation,
            all,
        }) => query::query(
            &engine,
            &target,
            &sql,
            &params,
            pk.as_deref(),
            max_items,
            continuation,
            all,
        ),
    }
}

/// No subcommand: the terminal UI on a terminal, the store's status otherwise (so a
/// script or a pipe gets JSON, never a screen takeover). `serve` runs the gateway in the
/// explorer's process, its clients signing with `$COSMOSCOPE_GATEWAY_KEY` (as
/// `cosmoscope serve --key` reads it) or the emulator's key.
fn launch(engine: Engine, dir: &std::path::Path, serve: Option<std::net::SocketAddr>) -> CliResult {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if serve.is_some() && !terminal {
        return Err(Failure::Usage(
            "--serve opens the explorer, which needs a terminal; `cosmoscope serve` runs the gateway alone"
                .into(),
        ));
    }
    // A new store gets the bundled samples first, so there is something to explore.
    samples::first_launch(&engine)?;
    if !terminal {
        return resources::status(&engine);
    }
    let gateway = crate::tui::GatewayOptions {
        serve,
        key: std::env::var("COSMOSCOPE_GATEWAY_KEY")
            .ok()
            .filter(|k| !k.is_empty()),
    };
    crate::tui::run(engine, dir, gateway)
        .map_err(|e| Failure::Request(Error::internal(format!("terminal: {e}"))))
}

/// Splits `DATABASE/CONTAINER`.
pub(crate) fn split_target(target: &str) -> CliResult<(&str, &str)> {
    match target.split_once('/') {
        Some((db, c)) if !db.is_empty() && !c.is_empty() && !c.contains('/') => Ok((db, c)),
        _ => Err(Failure::Usage(format!(
            "expected DATABASE/CONTAINER, got {target:?}"
        ))),
    }
}

/// Parses a `--pk` (or other) JSON argument.
pub(crate) fn parse_json_arg(flag: &str, text: &str) -> CliResult<Value> {
    serde_json::from_str(text).map_err(|e| {
        Failure::Usage(format!(
            "{flag} must be JSON ({e}); quote strings for the shell, e.g. {flag} '\"{text}\"'"
        ))
    })
}

pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

/// One NDJSON line; returns false when stdout is closed.
pub(crate) fn print_line(out: &mut impl Write, bytes: &[u8]) -> bool {
    out.write_all(bytes)
        .and_then(|_| out.write_all(b"\n"))
        .is_ok()
}

/// A progress bar of `total` items on stderr, or a hidden one when stderr is not a terminal.
pub(crate) fn progress_bar(total: u64) -> ProgressBar {
    if !stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} items  {per_sec}  eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// A spinner on stderr for work of unknown length (hidden when stderr is not a terminal).
pub(crate) fn spinner(message: &'static str) -> ProgressBar {
    if !stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner().with_message(message);
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

pub(crate) fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}
