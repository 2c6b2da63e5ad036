//! `serve --sync periodic`: writes are answered before they are flushed to disk, yet a
//! crash of the server process (SIGKILL: no flush, no close) loses none that were answered,
//! since the kernel holds what was written. Only an OS crash or a power loss can lose them.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use cosmoscope::gateway::EMULATOR_KEY;
use serde_json::Value;

use super::sdk::server::Gateway;

/// The CLI binary: on the server's endpoint (`remote`), or on its data directory.
fn cli(gateway: &Gateway, remote: bool, args: &[&str], stdin: &str) -> Output {
    let empty = tempfile::tempdir().expect("temporary directory");
    let mut command = Command::new(env!("CARGO_BIN_EXE_cosmoscope"));
    if remote {
        command
            .arg("--data-dir")
            .arg(empty.path())
            .args(["--endpoint", &gateway.endpoint, "--read-write"])
            .env("COSMOS_KEY", EMULATOR_KEY);
    } else {
        command.arg("--data-dir").arg(gateway.data_dir());
    }
    let mut child = command
        .args(args)
        .env_remove("COSMOS_CONNECTION_STRING")
        .env_remove("COSMOSCOPE_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cosmoscope");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait for cosmoscope");
    assert!(
        out.status.success(),
        "cosmoscope {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_periodic_server_killed_outright_loses_no_answered_write() {
    let mut gateway = Gateway::start_with(&["--sync", "periodic"]);
    cli(&gateway, true, &["db", "create", "shop"], "");
    cli(
        &gateway,
        true,
        &[
            "container",
            "create",
            "shop/carts",
            "--partition-key",
            "/pk",
        ],
        "",
    );
    for i in 0..12 {
        let item = format!(r#"{{"id": "cart-{i}", "pk": "user-{}", "n": {i}}}"#, i % 4);
        cli(&gateway, true, &["item", "upsert", "shop/carts"], &item);
    }
    cli(
        &gateway,
        true,
        &["item", "upsert", "shop/carts"],
        r#"{"id": "cart-0", "pk": "user-0", "n": 100}"#,
    );
    assert!(
        gateway
            .output()
            .contains("writes: flushed to disk every 100 ms"),
        "serve does not say its writes are flushed periodically: {}",
        gateway.output()
    );
    gateway.kill();

    let out = cli(
        &gateway,
        false,
        &[
            "query",
            "shop/carts",
            "SELECT VALUE SUM(c.n) FROM c",
            "--all",
        ],
        "",
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // 1 + 2 + ... + 11, with cart-0 replaced by 100.
    assert_eq!(result["documents"], serde_json::json!([166]), "{result}");
    let out = cli(&gateway, false, &["check"], "");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["sound"], true, "{report}");
}
