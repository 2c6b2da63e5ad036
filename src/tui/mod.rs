//! The terminal UI: a resource tree, the item view, the query console, the live change
//! feed, partitions, the workbench, the gateway's requests, the palette and help.
//!
//! The shape follows reference/tui.md B8: keys are resolved by the [`keymap`] into
//! [`action::Action`]s; [`update::update`] changes the [`state::App`] and returns
//! [`effect::Effect`]s; the [`runtime`] performs effects on blocking threads through the
//! engine facade and feeds their results back as [`msg::Msg`]s tagged with a ticket, so
//! stale results are dropped; [`ui`] draws from the state alone. The gateway can run in
//! the same process, on the same runtime and engine ([`serving`]), so the Requests view
//! shows an application's requests as they happen.

pub mod action;
mod advisor_jobs;
pub mod effect;
pub mod export;
pub mod format;
#[cfg(feature = "test-harness")]
pub mod harness;
pub mod keymap;
pub mod msg;
pub mod platform;
pub mod runtime;
pub mod serving;
pub mod state;
pub mod terminal;
pub mod ui;
pub mod update;
pub mod worker;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use keymap::Keymap;
use state::App;

/// How the explorer runs: the gateway it may run in its process, and the mouse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Start it with the session, on this address (`--serve [ADDR]`); without it the
    /// palette's action starts it on 127.0.0.1:8081.
    pub serve: Option<SocketAddr>,
    /// The key its clients sign with (`None`: the emulator's public key). Never shown.
    pub key: Option<String>,
    /// Serve HTTPS with the data directory's self-signed certificate (`--serve-tls`).
    pub tls: bool,
    /// Containers it creates enforce their throughput with 429s
    /// (`--serve-enforce-throughput`).
    pub enforce_throughput: bool,
    /// Clicks and the wheel go to the explorer (`--no-mouse` leaves them to the terminal).
    pub mouse: bool,
    /// The store is new: the bundled samples load as a background job while the explorer
    /// is already drawn (their databases appear as they load).
    pub first_launch: bool,
}

/// Every problem of the keymap and theme files goes into the message log; the status line
/// says how many there are and where to read them. Reported, not fatal: the defaults stand
/// in for whatever was wrong.
pub fn report_problems(app: &mut App, problems: &[String]) {
    for p in problems {
        app.error(format!("{p} (default used)"));
    }
    if problems.len() > 1 {
        let key = app
            .keymap
            .key_for(keymap::Mode::Tree, action::Action::Messages)
            .map_or_else(|| "the palette's messages".to_string(), |k| k.to_string());
        app.error(format!(
            "{}: the keymap and theme files have problems (defaults used); {key} lists them all",
            ui::plural(problems.len() as u64, "problem")
        ));
    }
}

/// Runs the explorer on `engine` (the embedded store or a remote account) until the user
/// quits; `location` is what the title shows (the data directory or the endpoint),
/// `state_dir` where the explorer keeps its own files (query history, the gateway's
/// certificate): the data directory, also for a remote session.
pub fn run(
    engine: Arc<dyn crate::engine::Backend>,
    location: &str,
    state_dir: &std::path::Path,
    gateway: Options,
) -> io::Result<()> {
    let config = platform::config_dir();
    let keymap_file = config.as_ref().map(|d| d.join("keymap.toml"));
    let (keymap, keymap_problems) = Keymap::load(keymap_file.as_deref());
    let theme_file = config.as_ref().map(|d| d.join("theme.toml"));
    let (theme, theme_problems) = ui::theme::Theme::load(theme_file.as_deref());
    ui::theme::install(theme);
    let mut app = App::new(location.to_string(), Arc::new(keymap));
    app.adopt(engine.as_ref());
    if let Some(addr) = gateway.serve {
        app.gateway.addr = addr;
        app.gateway.at_launch = true;
    }
    if gateway.first_launch {
        app.first_launch = Some(state_dir.to_path_buf());
    }
    let problems: Vec<String> = keymap_problems
        .into_iter()
        .map(|p| p.0)
        .chain(theme_problems)
        .collect();
    report_problems(&mut app, &problems);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    terminal::install_panic_hook();
    let _guard = terminal::Guard::new(gateway.mouse)?;
    let mut term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    term.clear()?;
    let dir = state_dir.to_path_buf();
    let result = rt.block_on(runtime::run(&mut term, app, engine, dir, gateway));
    // Blocking jobs (a feed subscription) notice their stop flags within one poll.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}
