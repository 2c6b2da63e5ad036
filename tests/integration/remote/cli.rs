//! The CLI binary on a remote account: `--endpoint` with the key from `$COSMOS_KEY`, the
//! same commands and JSON as on a data directory, writes refused without `--read-write`,
//! and the key in no output.

use std::process::{Command, Output};

use cosmoscope::gateway::EMULATOR_KEY;
use serde_json::Value;

use super::{C, DB, RANGES, server_with};
use crate::gateway::client::Server;

/// The binary against `server`'s endpoint, signing with `key` from the environment.
fn remote_cli(server: &Server, key: &str, args: &[&str]) -> Output {
    let empty = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_cosmoscope"))
        .arg("--data-dir")
        .arg(empty.path())
        .args(["--endpoint", &server.base])
        .args(args)
        .env_remove("COSMOS_CONNECTION_STRING")
        .env("COSMOS_KEY", key)
        .output()
        .expect("run cosmoscope")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn shows_no_key(out: &Output, key: &str) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(key), "the key leaked: {all}");
}

#[test]
fn lists_queries_and_reads_the_feed_of_an_account() {
    let server = server_with(20);
    let out = remote_cli(
        &server,
        EMULATOR_KEY,
        &["container", "show", &format!("{DB}/{C}")],
    );
    assert!(out.status.success(), "{out:?}");
    let info = json_of(&out);
    assert_eq!(info["partitionCount"], RANGES);
    assert_eq!(info["partitions"].as_array().unwrap().len(), RANGES);
    // Each range's count from the service's partition statistics.
    assert_eq!(info["statisticsSource"], "sampled");
    let counted: u64 = info["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["statistics"]["itemCount"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 20, "{info}");
    shows_no_key(&out, EMULATOR_KEY);
    let out = remote_cli(
        &server,
        EMULATOR_KEY,
        &[
            "query",
            &format!("{DB}/{C}"),
            "SELECT VALUE COUNT(1) FROM c",
        ],
    );
    let q = json_of(&out);
    assert_eq!(q["documents"][0], 20, "{q}");
    assert_eq!(q["partitions"].as_array().unwrap().len(), RANGES);
    assert!(q["requestCharge"].as_f64().unwrap() > 0.0);
    let out = remote_cli(
        &server,
        EMULATOR_KEY,
        &["feed", &format!("{DB}/{C}"), "--all"],
    );
    assert_eq!(json_of(&out)["count"], 20);
    let out = remote_cli(&server, EMULATOR_KEY, &["partitions", &format!("{DB}/{C}")]);
    let report = json_of(&out);
    assert_eq!(report["partitions"].as_array().unwrap().len(), RANGES);
    // The largest logical partitions the service's statistics name.
    let largest = report["largestLogicalPartitions"].as_array().unwrap();
    assert!(!largest.is_empty(), "{report}");
    assert!(largest[0]["statistics"]["sizeBytes"].as_u64().unwrap() > 0);
}

#[test]
fn writes_need_read_write_and_local_only_commands_say_so() {
    let server = server_with(0);
    let target = format!("{DB}/{C}");
    let out = remote_cli(&server, EMULATOR_KEY, &["db", "create", "other"]);
    assert_eq!(out.status.code(), Some(1));
    let e = json_of(&out);
    assert_eq!(e["error"]["status"], 403);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--read-write"),
        "{e}"
    );
    let out = remote_cli(
        &server,
        EMULATOR_KEY,
        &["--read-write", "db", "create", "other"],
    );
    assert!(out.status.success(), "{out:?}");
    let out = remote_cli(&server, EMULATOR_KEY, &["compact"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        json_of(&out)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("local data directory")
    );
    let out = remote_cli(&server, EMULATOR_KEY, &["import", &target, "x.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_bad_key_fails_with_401_and_is_never_printed() {
    let server = server_with(0);
    let key = "c2VjcmV0LWtleS10aGF0LWlzLWxvbmctZW5vdWdoLWZvci1obWFjLXNpZ25pbmc=";
    let out = remote_cli(&server, key, &["db", "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["error"]["status"], 401);
    shows_no_key(&out, key);
    // A key that is not a key: refused before anything is sent, still not echoed.
    let out = remote_cli(&server, "not-a-key-but-secret!", &["db", "list"]);
    assert_ne!(out.status.code(), Some(0));
    shows_no_key(&out, "not-a-key-but-secret!");
}

#[test]
fn help_shows_the_flags_but_never_the_keys_from_the_environment() {
    let key = "c2VjcmV0LWtleS10aGF0LWlzLWxvbmctZW5vdWdoLWZvci1obWFjLXNpZ25pbmc=";
    let out = Command::new(env!("CARGO_BIN_EXE_cosmoscope"))
        .arg("--help")
        .env("COSMOS_KEY", key)
        .env(
            "COSMOS_CONNECTION_STRING",
            format!("AccountEndpoint=http://x/;AccountKey={key};"),
        )
        .output()
        .expect("run cosmoscope");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--endpoint",
        "--key",
        "--connection-string",
        "--ca-cert",
        "--read-write",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help:\n{help}");
    }
    shows_no_key(&out, key);
}
