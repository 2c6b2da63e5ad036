//! The headless command line: JSON in, JSON out, for scripts, tests and benchmarks.
//!
//! Output contract (DESIGN.md §8): one JSON document (or NDJSON for streams) on stdout;
//! errors are `{"error": {"status", "substatus", "code", "message", ...}}` on stdout with exit
//! status 1 for a request error and 2 for a usage error. Progress goes to stderr, only when
//! stderr is a terminal.

mod advise;
pub mod args;
mod batch;
mod check;
mod compact;
mod feed;
mod items;
mod query;
mod resources;
mod samples;
mod scripts;
mod serve;
mod stream;
mod workbench;

use std::io::Write;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use serde::Serialize;
use serde_json::Value;

use crate::engine::remote::RemoteConfig;
use crate::engine::{Backend, Engine};
use crate::error::{Error, substatus};
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
    let cli = match Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // Humans get clap's rendering on stderr, scripts the JSON on stdout.
            let _ = e.print();
            let message = summary_of(&e.to_string());
            return fail(Failure::Usage(message));
        }
    };
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail(f),
    }
}

/// clap's message without its usage block: the first line and the lines under it (the
/// arguments that are missing), with what to pass for a missing `--pk`.
fn summary_of(s: &str) -> String {
    let mut lines = s.lines();
    let first = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string();
    let details: Vec<&str> = lines
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let mut out = if details.is_empty() {
        first
    } else {
        format!("{first} {}", details.join(", "))
    };
    if details.iter().any(|d| d.starts_with("--pk")) {
        out.push_str(
            " (the partition key value as JSON: --pk '\"c-42\"', or --pk '[\"a\",\"b\"]' for a hierarchical key)",
        );
    }
    out
}

fn fail(f: Failure) -> ExitCode {
    let (err, code) = match f {
        // Damage is its own status, so a script can tell it from a refused request.
        Failure::Request(e) if e.substatus == substatus::STORE_DAMAGED => (e, 3),
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
    if (cli.serve.is_some()
        || cli.serve_tls
        || cli.serve_enforce_throughput
        || cli.serve_sync.is_some())
        && cli.command.is_some()
    {
        return Err(Failure::Usage(
            "--serve opens the explorer with the gateway; `cosmoscope serve` runs the gateway alone"
                .into(),
        ));
    }
    if let Some(config) = remote_config(&cli.remote)? {
        let label = config.label().to_string();
        let backend = crate::engine::remote::RemoteBackend::connect(&config)?;
        return match cli.command {
            None => {
                let dir = cli
                    .data_dir
                    .clone()
                    .unwrap_or_else(Engine::default_data_dir);
                launch_remote(backend, &label, &dir, cli.no_mouse)
            }
            Some(cmd) => common(&backend, None, cmd),
        };
    }
    if cli.remote.ca_cert.is_some() || cli.remote.read_write {
        return Err(Failure::Usage(
            "--ca-cert and --read-write apply to a remote account: give --endpoint URL with \
             --key (or $COSMOS_ENDPOINT and $COSMOS_KEY), or --connection-string"
                .into(),
        ));
    }
    let dir = cli
        .data_dir
        .clone()
        .unwrap_or_else(Engine::default_data_dir);
    // A damaged store must be checked without being opened.
    if let Some(Command::Check) = cli.command {
        return check::check(&dir);
    }
    let engine = Engine::open(&dir)?;
    if let Some(sync) = cli.serve_sync {
        engine.set_durability(sync.durability())?;
    }
    match cli.command {
        None => launch(
            engine,
            &dir,
            crate::tui::Options {
                serve: cli.serve,
                // From the environment only: a key on the command line would be kept in the
                // shell's history.
                key: std::env::var("COSMOSCOPE_GATEWAY_KEY")
                    .ok()
                    .filter(|k| !k.is_empty()),
                tls: cli.serve_tls,
                enforce_throughput: cli.serve_enforce_throughput,
                mouse: !cli.no_mouse,
                // Decided in `launch`, which knows whether a terminal is there.
                first_launch: false,
            },
        ),
        Some(Command::Sample(SampleCommand::Load { name, scale, seed })) => {
            samples::load(engine, &name, scale, seed)
        }
        Some(Command::Compact) => compact::compact(engine),
        Some(Command::Stats) => compact::stats(&engine),
        Some(Command::Check) => check::check(&dir),
        Some(Command::Serve(args)) => serve::serve(engine, &dir, args),
        Some(Command::Import {
            target,
            files,
            batch_items,
            no_compact,
        }) => items::import(engine, &target, &files, batch_items as usize, !no_compact),
        Some(cmd) => common(&engine, Some(&engine), cmd),
    }
}

/// The remote account the flags or the environment name, if any.
fn remote_config(args: &args::RemoteArgs) -> CliResult<Option<RemoteConfig>> {
    let config = match (&args.connection_string, &args.endpoint, &args.account_key) {
        (Some(text), _, _) => RemoteConfig::from_connection_string(text)?,
        (None, Some(endpoint), Some(key)) => RemoteConfig::new(endpoint, key)?,
        (None, Some(_), None) => {
            return Err(Failure::Usage(
                "--endpoint needs the account key: --key KEY or $COSMOS_KEY".into(),
            ));
        }
        (None, None, _) => return Ok(None),
    };
    Ok(Some(RemoteConfig {
        ca_cert: args.ca_cert.clone(),
        read_write: args.read_write,
        ..config
    }))
}

/// The subcommands every backend runs; `local` is the embedded store when that is what
/// runs them. Commands that need a data directory fail with a usage error naming why.
fn common(engine: &dyn Backend, local: Option<&Engine>, cmd: Command) -> CliResult {
    match cmd {
        Command::Db(cmd) => resources::db(engine, cmd),
        Command::Container(cmd) => resources::container(engine, local, cmd),
        Command::Partitions {
            target,
            top,
            window,
            range,
            limit,
            after,
        } => match range {
            Some(range) => {
                resources::logical_partitions(engine, &target, range, after.as_deref(), limit)
            }
            None => resources::partitions(engine, &target, top, window),
        },
        Command::Workbench(args) => workbench::workbench(engine, args),
        Command::Simulate(args) => workbench::simulate(engine, args),
        // On an account the copies it makes per candidate key would be real, billed
        // containers: advise on a local copy of the data instead.
        Command::Advise(args) => match local {
            Some(local) => advise::advise(engine, local.data_dir(), args),
            None => Err(local_only(
                "advise",
                "it copies the container into a temporary container per candidate key; export                  the items and import them into a local store to advise on them",
            )),
        },
        Command::Epk { target, value } => resources::epk(engine, &target, &value),
        Command::Item(cmd) => items::item(engine, cmd),
        Command::Sproc(cmd) => scripts::sproc(engine, cmd),
        Command::Trigger(cmd) => scripts::trigger(engine, cmd),
        Command::Udf(cmd) => scripts::udf(engine, cmd),
        Command::Batch { target, pk } => batch::batch(engine, &target, &pk),
        Command::Export { target, pk } => items::export(engine, &target, pk.as_deref()),
        Command::Feed(args) => feed::feed(engine, args),
        Command::Query {
            target,
            sql,
            file,
            params,
            pk,
            max_items,
            continuation,
            all,
        } => query::query(
            engine,
            &target,
            &query::text(sql.as_deref(), file.as_deref())?,
            &params,
            pk.as_deref(),
            max_items,
            continuation,
            all,
        ),
        Command::Sample(SampleCommand::List) => samples::list(),
        Command::Sample(SampleCommand::Load { .. }) => Err(local_only(
            "sample load",
            "it writes a bundled set through the store's bulk path",
        )),
        Command::Import { .. } => Err(local_only(
            "import",
            "it writes in store transactions and compacts the file; on an account, pipe NDJSON \
             lines to `item upsert` or use the service's bulk tools",
        )),
        Command::Compact => Err(local_only("compact", "it rewrites the store's data file")),
        Command::Stats => Err(local_only("stats", "it reads the store's data file")),
        Command::Check => Err(local_only("check", "it reads the store's data file")),
        Command::Serve(_) => Err(local_only(
            "serve",
            "the gateway serves a data directory's store",
        )),
    }
}

fn local_only(command: &str, why: &str) -> Failure {
    Failure::Usage(format!(
        "`{command}` works on a local data directory only ({why}); drop --endpoint, \
         --connection-string and $COSMOS_ENDPOINT / $COSMOS_CONNECTION_STRING to run it"
    ))
}

/// No subcommand on a remote account: the explorer on a terminal (keeping its query history
/// in the data directory `dir`), the account's status otherwise.
fn launch_remote(
    backend: crate::engine::remote::RemoteBackend,
    label: &str,
    dir: &std::path::Path,
    no_mouse: bool,
) -> CliResult {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if !terminal {
        return resources::status(&backend, json_location("endpoint", label), None);
    }
    // The history file's directory may not exist yet: a remote session opens no store there.
    let _ = std::fs::create_dir_all(dir);
    crate::tui::run(
        std::sync::Arc::new(backend),
        label,
        dir,
        crate::tui::Options {
            serve: None,
            key: None,
            tls: false,
            enforce_throughput: false,
            mouse: !no_mouse,
            first_launch: false,
        },
    )
    .map_err(|e| Failure::Request(Error::internal(format!("terminal: {e}"))))
}

fn json_location(name: &str, value: &str) -> (String, Value) {
    (name.to_string(), Value::String(value.to_string()))
}

/// No subcommand: the terminal UI on a terminal, the store's status otherwise (so a
/// script or a pipe gets JSON, never a screen takeover). `serve` runs the gateway in the
/// explorer's process, its clients signing with `$COSMOSCOPE_GATEWAY_KEY` (as
/// `cosmoscope serve --key` reads it) or the emulator's key.
fn launch(engine: Engine, dir: &std::path::Path, gateway: crate::tui::Options) -> CliResult {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if gateway.serve.is_some() && !terminal {
        return Err(Failure::Usage(
            "--serve opens the explorer, which needs a terminal; `cosmoscope serve` runs the gateway alone"
                .into(),
        ));
    }
    // A new store gets the bundled samples, so there is something to explore: before the
    // status a script reads, or behind the explorer's first frame (as a job with progress).
    if !terminal {
        let loaded = samples::first_launch(&engine)?;
        let location = json_location("dataDirectory", &dir.display().to_string());
        return resources::status(&engine, location, loaded.as_deref());
    }
    let fresh = crate::engine::Backend::list_databases(&engine)
        .map_err(Failure::Request)?
        .is_empty()
        && !dir.join(crate::samples::FIRST_LAUNCH_MARKER).exists();
    let gateway = crate::tui::Options {
        first_launch: fresh,
        ..gateway
    };
    let label = dir.display().to_string();
    crate::tui::run(std::sync::Arc::new(engine), &label, dir, gateway)
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
/// Its rate is the average since the start in whole items per second, and its ETA follows
/// from that rate once a second has passed (indicatif's own `per_sec` prints four decimals
/// and its ETA swings with the first, slowest, batches).
pub(crate) fn progress_bar(total: u64) -> ProgressBar {
    if !stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} items  {rate}{left}")
    {
        let style = style
            .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&rate_text(s.pos(), s.elapsed()));
            })
            .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&eta_text(s.pos(), s.len(), s.elapsed()));
            });
        bar.set_style(style);
    }
    bar
}

/// `2790 items/s`: the average since the start.
fn rate_text(done: u64, elapsed: std::time::Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    if seconds < 0.5 || done == 0 {
        return "…".into();
    }
    format!("{:.0} items/s", done as f64 / seconds)
}

/// `  eta 18s`, `  eta 2m 05s`: what is left at the average rate, once it means something.
fn eta_text(done: u64, total: Option<u64>, elapsed: std::time::Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    let Some(total) = total.filter(|t| *t > done) else {
        return String::new();
    };
    if seconds < 1.0 || done == 0 {
        return String::new();
    }
    let left = ((total - done) as f64 * seconds / done as f64).round() as u64;
    if left >= 60 {
        format!("  eta {}m {:02}s", left / 60, left % 60)
    } else {
        format!("  eta {left}s")
    }
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{eta_text, rate_text};

    #[test]
    fn progress_says_a_whole_rate_and_an_eta_from_it() {
        assert_eq!(rate_text(0, Duration::from_secs(3)), "…");
        assert_eq!(
            rate_text(34_314, Duration::from_secs_f64(12.3)),
            "2790 items/s"
        );
        assert_eq!(eta_text(100, Some(1_000), Duration::from_millis(200)), "");
        assert_eq!(
            eta_text(34_314, Some(85_306), Duration::from_secs(12)),
            "  eta 18s"
        );
        assert_eq!(
            eta_text(1_000, Some(20_000), Duration::from_secs(10)),
            "  eta 3m 10s"
        );
        assert_eq!(eta_text(5, Some(5), Duration::from_secs(10)), "");
    }
}
