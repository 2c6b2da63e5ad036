//! A damaged data file, as a disk fault or a careless copy leaves one: truncated anywhere,
//! or with a page overwritten, every command ends with an error (exit status 3 for damage it
//! recognises, 1 for a refused request), never with a signal, and an export never exits 0
//! with fewer items than the container holds.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Output;

use crate::support::cli::{failed, ok, run, stdout};

const ITEMS: usize = 1_500;
const PAGE: u64 = 4096;

/// A store with one container of `ITEMS` items, a few of them large enough to need
/// overflow pages.
fn damaged_store_template() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    ok(dir.path(), &["db", "create", "d"]);
    ok(
        dir.path(),
        &["container", "create", "d/c", "--partition-key", "/pk"],
    );
    let lines: Vec<String> = (0..ITEMS)
        .map(|i| {
            let pad = if i % 100 == 0 { 9_000 } else { 300 };
            serde_json::json!({"id": i.to_string(), "pk": format!("k{}", i % 40), "v": "x".repeat(pad)})
                .to_string()
        })
        .collect();
    let input = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(input.path(), lines.join("\n")).expect("write items");
    let path = input.path().to_string_lossy().into_owned();
    ok(dir.path(), &["import", "d/c", &path]);
    dir
}

fn copy_of(template: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(template).expect("read template") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
    }
    dir
}

/// Every command's outcome on a damaged store: it exited (no signal), and when it failed
/// its stdout ends with the CLI's JSON error. An export that succeeds printed every item.
fn assert_contained(dir: &Path, what: &str) {
    let commands: [&[&str]; 5] = [
        &["db", "list"],
        &["export", "d/c"],
        &["query", "d/c", "SELECT VALUE COUNT(1) FROM c"],
        &[
            "query",
            "d/c",
            "SELECT c.id FROM c WHERE c.pk = 'k7'",
            "--all",
        ],
        &["feed", "d/c", "--all"],
    ];
    for args in commands {
        let out: Output = run(dir, args);
        let code = out.status.code();
        assert!(
            code.is_some(),
            "{what}: {args:?} ended with a signal: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        if code != Some(0) {
            assert!(
                matches!(code, Some(1 | 3)),
                "{what}: {args:?} exited {code:?}: {text}"
            );
            assert!(
                text.contains("\"error\""),
                "{what}: {args:?} failed without an error: {text}"
            );
        } else if args[0] == "export" {
            assert_eq!(
                text.lines().count(),
                ITEMS,
                "{what}: an export that exits 0 prints every item"
            );
        }
    }
}

#[test]
fn a_truncated_data_file_is_reported_as_damage_before_it_is_read() {
    let template = damaged_store_template();
    let size = std::fs::metadata(template.path().join("data.mdb"))
        .expect("data file")
        .len();
    // Cuts through pages the trees reach. The file's very last pages may be free ones (a
    // later transaction copied what they held elsewhere), and a cut through free pages
    // only loses nothing, which the check rightly does not call damage.
    let mut offsets = vec![8192, 12_288, 16_385];
    offsets.extend((1..8).map(|k| size * k / 8));
    for offset in offsets {
        let dir = copy_of(template.path());
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("data.mdb"))
            .expect("open");
        file.set_len(offset).expect("truncate");
        let error = failed(dir.path(), &["db", "list"], 3);
        assert_eq!(error["substatus"], 9001, "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("damaged") && message.contains("truncated"),
            "at {offset}: {message}"
        );
        assert_contained(dir.path(), &format!("truncated at {offset}"));
    }
}

#[test]
fn an_overwritten_page_ends_every_command_with_an_error_not_a_signal() {
    let template = damaged_store_template();
    let pages = std::fs::metadata(template.path().join("data.mdb"))
        .expect("data file")
        .len()
        / PAGE;
    // Pages across the file (the meta pages 0 and 1 excepted: LMDB falls back to the
    // other), each overwritten with zeros and with noise.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for n in 0..12u64 {
        let page = 2 + (pages - 3) * n / 11;
        for noise in [false, true] {
            let dir = copy_of(template.path());
            let mut bytes = vec![0u8; PAGE as usize];
            if noise {
                for b in bytes.iter_mut() {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    *b = seed as u8;
                }
            }
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.path().join("data.mdb"))
                .expect("open");
            file.write_all_at(&bytes, page * PAGE).expect("overwrite");
            let what = format!(
                "page {page} overwritten with {}",
                if noise { "noise" } else { "zeros" }
            );
            assert_contained(dir.path(), &what);
        }
    }
}

#[test]
fn check_passes_a_sound_store_and_names_the_damage_in_a_broken_one() {
    let template = damaged_store_template();
    let report = ok(template.path(), &["check"]);
    assert_eq!(report["sound"], true, "{report}");
    let c = &report["containers"][0];
    assert_eq!(c["items"], ITEMS, "{report}");
    assert_eq!(c["indexCompared"], true);
    assert!(c["indexEntries"].as_u64().unwrap_or(0) > ITEMS as u64);
    assert_eq!(c["problems"], serde_json::json!([]));

    // Every page of the items overwritten in turn: the walk finds each one.
    let pages = std::fs::metadata(template.path().join("data.mdb"))
        .expect("data file")
        .len()
        / PAGE;
    let mut found = 0;
    for page in [2, pages / 3, pages / 2, pages - 2] {
        let dir = copy_of(template.path());
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("data.mdb"))
            .expect("open");
        file.write_all_at(&[0xA5; PAGE as usize], page * PAGE)
            .expect("overwrite");
        let out = run(dir.path(), &["check"]);
        let text = stdout(&out);
        // A page no tree reaches any more (freed) harms nothing; any other is damage.
        if out.status.code() == Some(0) {
            assert!(text.contains("\"sound\": true"), "{text}");
            continue;
        }
        assert_eq!(out.status.code(), Some(3), "page {page}: {text}");
        assert!(
            text.contains(&format!("page {page}")) && text.contains("overwritten"),
            "page {page}: {text}"
        );
        found += 1;
    }
    assert!(found >= 2, "most of those pages hold the items");
}
