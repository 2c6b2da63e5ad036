//! `cosmoscope serve` as the tests run it: the real binary on a temporary data directory,
//! bound to a free loopback port (`--addr 127.0.0.1:0`), its endpoint read from the first
//! line it prints, and stopped with SIGINT (then waited for) when dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The well-known emulator key, which `serve` uses without `--key`.
pub const EMULATOR_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// How long the server may take to print its endpoint, and to stop after SIGINT.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A running gateway. `child` is declared before `dir` so the process is stopped before
/// its data directory is removed.
pub struct Gateway {
    child: Option<Child>,
    pub endpoint: String,
    /// Everything the server printed (stdout after the endpoint line, and stderr), shown
    /// when a test fails.
    output: Arc<Mutex<String>>,
    pub dir: TempDir,
}

impl Gateway {
    /// Starts `cosmoscope serve --addr 127.0.0.1:0` on a fresh data directory and waits for
    /// its `endpoint: http://127.0.0.1:PORT/` line.
    pub fn start() -> Gateway {
        Self::start_with(&[])
    }

    /// [`Gateway::start`] with more `serve` options.
    pub fn start_with(options: &[&str]) -> Gateway {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosmoscope"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(options)
            .env_remove("COSMOSCOPE_DATA_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cosmoscope serve");
        let output = Arc::new(Mutex::new(String::new()));
        // The server must never block on a full pipe: both streams are drained for its
        // whole life, the first stdout line handed over for the endpoint.
        let (first_tx, first_rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        let out = output.clone();
        thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
            let _ = first_tx.send(first);
            for line in lines.map_while(Result::ok) {
                push(&out, &line);
            }
        });
        let stderr = child.stderr.take().expect("stderr");
        let err = output.clone();
        thread::spawn(move || {
            let mut text = String::new();
            let mut reader = BufReader::new(stderr);
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                if let Some(i) = text.rfind('\n') {
                    push(&err, &text[..i]);
                    text.drain(..=i);
                }
            }
            if !text.is_empty() {
                push(&err, &text);
            }
        });
        let mut gateway = Gateway {
            child: Some(child),
            endpoint: String::new(),
            output,
            dir,
        };
        let first = first_rx.recv_timeout(START_TIMEOUT).unwrap_or_else(|_| {
            panic!(
                "cosmoscope serve printed no endpoint within {START_TIMEOUT:?}; its output:\n{}",
                gateway.output()
            )
        });
        let endpoint = first
            .strip_prefix("endpoint: ")
            .filter(|e| e.starts_with("http://127.0.0.1:") && e.ends_with('/'))
            .unwrap_or_else(|| {
                panic!(
                    "the first line of cosmoscope serve is not `endpoint: http://127.0.0.1:PORT/`: \
                     {first:?}; the rest of its output:\n{}",
                    gateway.output()
                )
            });
        gateway.endpoint = endpoint.to_string();
        gateway
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// What the server printed besides its endpoint line.
    pub fn output(&self) -> String {
        self.output.lock().map(|o| o.clone()).unwrap_or_default()
    }

    /// Stops the server with SIGINT and returns its exit status (`None` if it had to be
    /// killed after [`STOP_TIMEOUT`]).
    pub fn stop(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        // SAFETY: kill(2) on the pid of a child this process spawned and has not reaped.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// Kills the server outright (SIGKILL: no chance to flush or close anything), as a crash
    /// would, and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server and checks it exited 0 on SIGINT, as `serve` promises.
    pub fn stop_cleanly(&mut self) {
        let status = self.stop();
        assert!(
            status.is_some_and(|s| s.success()),
            "cosmoscope serve did not exit 0 on SIGINT within {STOP_TIMEOUT:?} ({status:?}); its output:\n{}",
            self.output()
        );
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop();
    }
}

fn push(out: &Mutex<String>, line: &str) {
    if let Ok(mut o) = out.lock() {
        o.push_str(line);
        o.push('\n');
    }
}
