//! A full disk is an error that says so, never a signal, and the store is whole and usable
//! once space is freed. The disk is a small tmpfs mounted in a mount namespace of the
//! test's own (`unshare`, util-linux), so the test needs neither root nor a spare disk.

use crate::support::cli::in_mount_namespace;
use std::path::Path;

/// Runs `script` (bash) with `$MNT` a fresh 8 MB tmpfs and `$C` the binary; returns stdout.
fn on_small_disk(mnt: &Path, script: &str) -> String {
    let mnt = mnt.to_str().expect("a UTF-8 path");
    let out = in_mount_namespace()
        .args([
            "bash",
            "-c",
            &format!("mount -t tmpfs -o size=8m tmpfs '{mnt}' || exit 97\n{script}"),
        ])
        .env("MNT", mnt)
        .env("C", env!("CARGO_BIN_EXE_cosmoscope"))
        .output()
        .expect("unshare (util-linux) runs: the small disk needs it");
    assert_ne!(
        out.status.code(),
        Some(97),
        "the tmpfs could not be mounted: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_full_disk_is_an_error_naming_it_and_the_store_works_again_once_space_is_freed() {
    let mnt = tempfile::tempdir().expect("temp dir");
    let items = tempfile::NamedTempFile::new().expect("temp file");
    let lines: Vec<String> = (0..12_000)
        .map(|i| {
            format!(
                r#"{{"id":"{i}","pk":"k{}","v":"{}"}}"#,
                i % 30,
                "x".repeat(400)
            )
        })
        .collect();
    std::fs::write(items.path(), lines.join("\n")).expect("write items");
    let script = format!(
        r#"
step() {{ echo "== $1 rc=$2"; }}
$C --data-dir $MNT/s db create d >/dev/null; step create $?
$C --data-dir $MNT/s container create d/c --partition-key /pk >/dev/null; step container $?
$C --data-dir $MNT/s import d/c '{items}'; step import $?
# Whatever room the import left, take it, so a new store finds none.
head -c 16M /dev/zero > $MNT/filler 2>/dev/null; step fill 0
$C --data-dir $MNT/new db list; step new $?
$C --data-dir $MNT/s db list >/dev/null; step list $?
$C --data-dir $MNT/s compact; step compact $?
ls $MNT/s; step ls 0
rm $MNT/filler
echo '{{"id":"after","pk":"k1"}}' | $C --data-dir $MNT/s item create d/c >/dev/null; step write $?
$C --data-dir $MNT/s check; step check $?
"#,
        items = items.path().display()
    );
    let out = on_small_disk(mnt.path(), &script);
    let rc = |step: &str| -> i32 {
        let marker = format!("== {step} rc=");
        let line = out
            .lines()
            .find(|l| l.starts_with(&marker))
            .unwrap_or_else(|| panic!("no step {step}: {out}"));
        line[marker.len()..].trim().parse().expect("a status")
    };
    for step in ["import", "new", "list", "compact", "write", "check"] {
        assert!(rc(step) < 128, "{step} ended with a signal: {out}");
    }
    assert_eq!(rc("import"), 1, "{out}");
    assert!(out.contains("probably full"), "{out}");
    assert!(!out.contains(".ndjson: storage error"), "{out}");
    assert_eq!(rc("new"), 1, "{out}");
    assert!(out.contains("/new is full"), "{out}");
    assert!(
        !out.contains("compacting-lock"),
        "a failed compaction leaves nothing behind: {out}"
    );
    assert_eq!(rc("write"), 0, "{out}");
    assert_eq!(rc("check"), 0, "{out}");
    assert!(out.contains("\"sound\": true"), "{out}");
}
