//! Smoke test of the real binary in a real terminal: tmux gives it a pseudo-terminal, the
//! test reads the screen with `capture-pane`, presses `q`, and checks that the program
//! exited 0 and gave the terminal back (main screen, cooked mode).
//!
//! CI installs tmux (`.ci/run`); elsewhere the test is skipped, with a note, if tmux is
//! missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::tui_store;

/// A tmux server of our own, on a private socket, killed when dropped.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "smoke"]).stdout)
            .into_owned()
    }

    fn display(&self, format: &str) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["display-message", "-p", "-t", "smoke", format])
                .stdout,
        )
        .trim()
        .to_string()
    }

    /// Waits until the screen satisfies `done`, for at most 20 seconds.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "smoke"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A plain shell in a 100×30 terminal of a tmux server of our own, with `home` as its home
/// and config directory, and no user config in the way.
fn shell_in_tmux(home: &Path) -> Tmux {
    let tmux = Tmux {
        socket: home.join("tmux.sock"),
    };
    let started = Command::new("tmux")
        .arg("-S")
        .arg(&tmux.socket)
        .args([
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "smoke",
            "-x",
            "100",
            "-y",
            "30",
        ])
        .arg("sh")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("TMUX")
        .status()
        .expect("start tmux");
    assert!(started.success());
    tmux.wait_for("the shell prompt", |s| !s.trim().is_empty());
    tmux
}

/// Whether tmux can run the binary; on CI it must.
fn have_tmux() -> bool {
    if tmux_available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing on CI: .ci/run installs it"
    );
    eprintln!("skipped: tmux is not installed");
    false
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn the_binary_draws_a_frame_and_quits_cleanly_in_a_terminal() {
    if !have_tmux() {
        return;
    }
    // A small store, written and closed before the binary opens it.
    let (engine, data) = tui_store::engine();
    drop(engine);
    let home = tempfile::tempdir().expect("temporary directory");
    let tmux = shell_in_tmux(home.path());
    let command = format!(
        "{} --data-dir {}; echo \"exit status $?\"",
        shell_quote(Path::new(env!("CARGO_BIN_EXE_cosmoscope"))),
        shell_quote(data.path())
    );
    tmux.send(&["-l", &command]);
    tmux.send(&["Enter"]);

    let frame = tmux.wait_for("the first frame", |s| {
        s.contains("Resources") && s.contains("? help") && s.contains("shop")
    });
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "1",
        "the UI uses the alternate screen"
    );
    let lines: Vec<&str> = frame.lines().collect();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("┌ Resources")),
        "{frame}"
    );
    assert!(frame.contains("▸ shop 2 containers"), "{frame}");
    assert!(frame.contains("1:Item  2:Query  3:"), "{frame}");
    assert!(
        frame.contains("enter open") && frame.contains("ctrl-c quit"),
        "the hint bar:\n{frame}"
    );

    // A key reaches it: expand the database.
    tmux.send(&["Enter"]);
    tmux.wait_for("the containers", |s| s.contains("orders /pk · 12"));

    tmux.send(&["q"]);
    // The typed command holds the words too: wait for the line the echo prints.
    let after = tmux.wait_for("the exit status", |s| {
        s.lines()
            .any(|l| l.trim_start().starts_with("exit status "))
    });
    assert!(after.contains("exit status 0"), "{after}");
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "0",
        "back on the main screen"
    );
    assert!(
        !after.contains("Resources"),
        "the UI is gone from the screen:\n{after}"
    );

    // The shell's terminal is in cooked mode again: it echoes and reads whole lines.
    tmux.send(&["-l", "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '; echo end-of-modes"]);
    tmux.send(&["Enter"]);
    let modes = tmux.wait_for("stty", |s| {
        s.lines()
            .any(|l| l.trim_end().ends_with("end-of-modes") && !l.contains("stty"))
    });
    let line = modes
        .lines()
        .find(|l| l.trim_end().ends_with("end-of-modes") && !l.contains("stty"))
        .unwrap_or_default();
    assert!(
        line.contains("icanon") && !line.contains("-icanon"),
        "{line}"
    );
    assert!(line.contains("echo") && !line.contains("-echo"), "{line}");
}

/// A theme file's colours reach what they name: a selection drawn black on yellow draws
/// the selected row's name black on yellow, not in the tree's own colours (issue 23).
#[test]
fn a_theme_file_colours_the_selection_whole() {
    if !have_tmux() {
        return;
    }
    let (engine, data) = tui_store::engine();
    drop(engine);
    let home = tempfile::tempdir().expect("temporary directory");
    let config = home.path().join("config").join("cosmoscope");
    std::fs::create_dir_all(&config).expect("config directory");
    std::fs::write(
        config.join("theme.toml"),
        "selected = { fg = \"black\", bg = \"yellow\" }\n",
    )
    .expect("theme file");
    let tmux = shell_in_tmux(home.path());
    let command = format!(
        "{} --data-dir {}",
        shell_quote(Path::new(env!("CARGO_BIN_EXE_cosmoscope"))),
        shell_quote(data.path())
    );
    tmux.send(&["-l", &command]);
    tmux.send(&["Enter"]);
    tmux.wait_for("the first frame", |s| s.contains("▸ shop 2 containers"));
    // The screen with its colours: the selected row, `shop`, in SGR black on yellow.
    let coloured = String::from_utf8_lossy(
        &tmux
            .run(&["capture-pane", "-e", "-p", "-t", "smoke"])
            .stdout,
    )
    .into_owned();
    let row = coloured
        .lines()
        .find(|l| l.contains("shop"))
        .unwrap_or_else(|| panic!("no row for shop:\n{coloured}"));
    // The attributes in force at the name: every SGR since the last reset before it
    // (tmux writes colours in 256-colour form: 38;5;0 black, 48;5;3 yellow).
    let before_name = &row[..row.find("shop").unwrap_or(0)];
    let in_force = before_name.rsplit("\u{1b}[0m").next().unwrap_or_default();
    let black = in_force.contains("[38;5;0m") || in_force.contains("[30m");
    let yellow = in_force.contains("[48;5;3m") || in_force.contains("[43m");
    assert!(black && yellow, "the name is not black on yellow: {row:?}");
    tmux.send(&["q"]);
}
