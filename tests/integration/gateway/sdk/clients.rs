//! The SDK scenarios as processes: the Python SDK's in `tests/sdk/python/.venv`, the Node
//! SDK's with the machine's `node` and `tests/sdk/node/node_modules`, both installed by
//! `tests/sdk/setup`. A missing install fails the test (it never skips) and says so.
//!
//! A scenario prints one JSON document as its last stdout line and exits 0, or exits 1 with
//! its reason on stderr; either way a run is bounded by [`SCENARIO_TIMEOUT`].

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::server::{EMULATOR_KEY, Gateway};

/// Far above a scenario's few seconds, so only a hang reaches it.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    Python,
    Node,
}

fn sdk_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk")
}

fn python() -> PathBuf {
    sdk_dir().join("python/.venv/bin/python")
}

const SETUP: &str = "run `tests/sdk/setup` (it installs the SDKs: pip into \
                     tests/sdk/python/.venv, npm ci in tests/sdk/node), then run the tests again";

impl Sdk {
    /// Fails the test, saying how to install it, unless this SDK and its runtime are there.
    pub fn require(self) {
        match self {
            Sdk::Python => {
                let python = python();
                let runs = Command::new(&python)
                    .args(["-c", "import azure.cosmos"])
                    .output()
                    .is_ok_and(|o| o.status.success());
                assert!(
                    runs,
                    "the Python SDK is not installed ({} cannot import azure.cosmos): {SETUP}",
                    python.display()
                );
            }
            Sdk::Node => {
                let node_ok = Command::new("node")
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success());
                assert!(node_ok, "`node` (Node 20 or newer) is not on PATH: {SETUP}");
                let package = sdk_dir().join("node/node_modules/@azure/cosmos/package.json");
                assert!(
                    package.exists(),
                    "the Node SDK is not installed ({} is missing): {SETUP}",
                    package.display()
                );
            }
        }
    }

    /// The command that runs this SDK's scenario script.
    fn command(self) -> Command {
        self.require();
        let (mut cmd, script) = match self {
            Sdk::Python => (Command::new(python()), "python/scenario.py"),
            Sdk::Node => (Command::new("node"), "node/scenario.js"),
        };
        cmd.arg(sdk_dir().join(script));
        cmd
    }

    pub fn name(self) -> &'static str {
        match self {
            Sdk::Python => "python",
            Sdk::Node => "node",
        }
    }
}

/// A scenario process with its stdout arriving line by line.
pub struct Scenario {
    sdk: Sdk,
    phase: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stdout: Vec<String>,
    stderr: thread::JoinHandle<String>,
    started: Instant,
}

impl Scenario {
    /// Starts `PHASE ENDPOINT KEY DATABASE [STATE_FILE]` of `sdk`'s scenario.
    pub fn start(
        sdk: Sdk,
        phase: &str,
        gateway: &Gateway,
        database: &str,
        state: Option<&Path>,
    ) -> Scenario {
        let mut cmd = sdk.command();
        cmd.args([phase, &gateway.endpoint, EMULATOR_KEY, database]);
        if let Some(state) = state {
            cmd.arg(state);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start the {} scenario: {e}", sdk.name()));
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Scenario {
            sdk,
            phase: phase.to_string(),
            stdin: child.stdin.take(),
            child,
            lines,
            stdout: Vec::new(),
            stderr,
            started: Instant::now(),
        }
    }

    fn remaining(&self) -> Duration {
        SCENARIO_TIMEOUT.saturating_sub(self.started.elapsed())
    }

    /// Waits for the next stdout line that is a JSON object with `"event": event`.
    pub fn wait_event(&mut self, event: &str, gateway: &Gateway) -> Value {
        loop {
            match self.lines.recv_timeout(self.remaining()) {
                Ok(line) => {
                    self.stdout.push(line.clone());
                    if let Ok(v) = serde_json::from_str::<Value>(&line)
                        && v["event"] == event
                    {
                        return v;
                    }
                }
                Err(_) => self.fail(
                    &format!("ended or hung before its `{event}` event"),
                    gateway,
                ),
            }
        }
    }

    /// Writes one line to the scenario's stdin.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to the scenario's stdin");
        stdin.flush().expect("flush the scenario's stdin");
    }

    /// Waits for the scenario to end, requires exit status 0, and returns the JSON document
    /// of its last stdout line.
    pub fn finish(mut self, gateway: &Gateway) -> Value {
        self.stdin.take();
        loop {
            match self.lines.recv_timeout(self.remaining()) {
                Ok(line) => self.stdout.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => self.fail("hung", gateway),
            }
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the scenario") {
                break status;
            }
            if self.remaining().is_zero() {
                self.fail("did not exit", gateway);
            }
            thread::sleep(Duration::from_millis(10));
        };
        if !status.success() {
            self.fail(&format!("exited with {status}"), gateway);
        }
        let last = self.stdout.last().cloned().unwrap_or_default();
        serde_json::from_str(&last)
            .unwrap_or_else(|e| self.fail(&format!("printed no JSON result last ({e})"), gateway))
    }

    /// Kills the scenario and panics with everything it and the server printed.
    fn fail(&mut self, what: &str, gateway: &Gateway) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = std::mem::replace(&mut self.stderr, thread::spawn(String::new))
            .join()
            .unwrap_or_default();
        panic!(
            "the {} SDK's `{}` scenario {what} (after {:.1?}).\n--- its stderr ---\n{stderr}\n\
             --- its stdout ---\n{}\n--- the gateway's output ---\n{}",
            self.sdk.name(),
            self.phase,
            self.started.elapsed(),
            self.stdout.join("\n"),
            gateway.output()
        );
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs one phase to the end and returns its JSON result.
pub fn run(
    sdk: Sdk,
    phase: &str,
    gateway: &Gateway,
    database: &str,
    state: Option<&Path>,
) -> Value {
    Scenario::start(sdk, phase, gateway, database, state).finish(gateway)
}
