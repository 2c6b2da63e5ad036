//! A store on read-only media opens read-only: reads, queries, exports and `check` work,
//! writes get 403 saying why, and nothing in the directory changes. The read-only mount is
//! a bind mount in a mount namespace of the test's own (`unshare`, util-linux), so the test
//! needs neither root nor a spare file system.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::cli::{in_mount_namespace, ok};

/// Runs the binary with `args` on `dir`, where `dir` is mounted read-only.
fn on_read_only_mount(dir: &Path, args: &[&str]) -> Output {
    let dir = dir.to_str().expect("a UTF-8 path");
    let script =
        format!("mount --bind '{dir}' '{dir}' && mount -o remount,bind,ro '{dir}' && exec \"$@\"");
    let out = in_mount_namespace()
        .args(["sh", "-c", &script, "sh"])
        .arg(env!("CARGO_BIN_EXE_cosmoscope"))
        .args(["--data-dir", dir])
        .args(args)
        .output()
        .expect("unshare (util-linux) runs: the read-only mount needs it");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unshare:") && !stderr.contains("mount:"),
        "the read-only mount could not be made (unshare --map-root-user --mount): {stderr}"
    );
    out
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            let m = e.metadata().expect("metadata");
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.modified().expect("mtime"),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_store_on_read_only_media_reads_and_refuses_writes_saying_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    ok(dir.path(), &["db", "create", "d"]);
    ok(
        dir.path(),
        &["container", "create", "d/c", "--partition-key", "/pk"],
    );
    for i in 0..20 {
        let doc = format!(r#"{{"id":"{i}","pk":"k{}"}}"#, i % 3);
        let out = crate::support::cli::run_stdin(dir.path(), &["item", "create", "d/c"], &doc);
        assert!(out.status.success());
    }
    let before = snapshot(dir.path());

    let out = on_read_only_mount(dir.path(), &["db", "list"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)[0]["id"], "d");
    let out = on_read_only_mount(
        dir.path(),
        &[
            "query",
            "d/c",
            "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k1'",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)["documents"][0], 7);
    let out = on_read_only_mount(dir.path(), &["export", "d/c"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 20);
    let out = on_read_only_mount(dir.path(), &["check"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&out)["sound"], true);

    let out = on_read_only_mount(dir.path(), &["db", "create", "e"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let error = &json(&out)["error"];
    assert_eq!(error["status"], 403, "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("read-only file system") && message.contains("writes do not"),
        "{message}"
    );
    assert_eq!(
        snapshot(dir.path()),
        before,
        "nothing in the directory changed"
    );
}
