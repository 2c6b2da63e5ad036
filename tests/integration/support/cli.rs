//! The program as the command-line tests run it: the real binary
//! (`CARGO_BIN_EXE_cosmoscope`) on a given data directory, with `COSMOSCOPE_DATA_DIR`
//! (and the remote account variables) removed so the environment's own never leaks in, and its JSON output read back.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary on data directory `dir`, ready for arguments.
pub fn cosmoscope(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmoscope"));
    cmd.arg("--data-dir")
        .arg(dir)
        .env_remove("COSMOSCOPE_DATA_DIR")
        // A remote account in the environment would take the place of the directory.
        .env_remove("COSMOS_ENDPOINT")
        .env_remove("COSMOS_KEY")
        .env_remove("COSMOS_CONNECTION_STRING");
    cmd
}

/// Runs `args` to completion with stdin closed.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    cosmoscope(dir).args(args).output().expect("run cosmoscope")
}

/// Runs `args` to completion with `stdin` as its input.
pub fn run_stdin(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = cosmoscope(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cosmoscope");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard output as JSON.
pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(out)))
}

/// Runs a command that must succeed and returns its JSON.
pub fn ok(dir: &Path, args: &[&str]) -> Value {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?} failed: {}", stdout(&out));
    json_of(&out)
}

/// The error object of a command that must fail with exit status `code`.
pub fn failed(dir: &Path, args: &[&str], code: i32) -> Value {
    let out = run(dir, args);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stdout(&out));
    json_of(&out)["error"].clone()
}

/// `unshare` into a mount namespace of the test's own (util-linux), ready for the command
/// to run there: root needs no user namespace (which some kernels refuse); anyone else maps
/// to root in one of their own.
pub fn in_mount_namespace() -> Command {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = Command::new("unshare");
    if !root {
        cmd.arg("--map-root-user");
    }
    cmd.arg("--mount").env_remove("COSMOSCOPE_DATA_DIR");
    cmd
}
