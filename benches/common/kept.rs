//! Data sets a bench generates once and keeps between runs on the same machine: ten million
//! items take many minutes to generate and tens of GB of disk, so a large run reuses what
//! an earlier complete run left.
//!
//! A kept data set lives in `target/bench-data/<name>-<items>` (or the directory an
//! environment variable names) with a marker file holding its generator's version; a
//! directory without the marker, or with another version's, is emptied and generated again.
//! Smoke runs use a temporary directory. Documents are generated item by item from their
//! number ([`Rng::for_item`]), so a loader can make any of them again instead of holding
//! them all.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cosmoscope::engine::Engine;
use cosmoscope::engine::import::{Chunk, Origin};

use super::thousands;

/// The marker of a complete data set.
const MARKER: &str = "bench-data.complete";
/// Records per chunk placed, and per import transaction.
const CHUNK: usize = 10_000;
const BATCH: usize = 50_000;

/// A bench's data directory (see the module comment).
pub struct Kept {
    pub dir: PathBuf,
    version: String,
    _temp: Option<tempfile::TempDir>,
}

impl Kept {
    /// The data set `name` of `items` items made by generator `version`: kept in
    /// `$var` or `target/bench-data/<name>-<items>`, or in a temporary directory when `smoke`.
    pub fn open(name: &str, items: usize, smoke: bool, var: &str, version: &str) -> Kept {
        let (dir, temp) = if smoke {
            let temp = tempfile::tempdir().expect("temp dir");
            (temp.path().to_path_buf(), Some(temp))
        } else if let Some(dir) = std::env::var_os(var) {
            (PathBuf::from(dir), None)
        } else {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/bench-data")
                .join(format!("{name}-{items}"));
            (dir, None)
        };
        std::fs::create_dir_all(&dir).expect("create the bench data directory");
        Kept {
            dir,
            version: version.to_string(),
            _temp: temp,
        }
    }

    /// Whether a complete run of this version left its data here. If not, whatever is
    /// here is removed, ready for generating.
    pub fn reuse_or_clear(&self) -> bool {
        let marker = std::fs::read_to_string(self.dir.join(MARKER)).unwrap_or_default();
        if marker == self.version {
            eprintln!("reusing the data in {}", self.dir.display());
            return true;
        }
        for entry in std::fs::read_dir(&self.dir).expect("read the bench data directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path).expect("clear the bench data directory");
            } else {
                std::fs::remove_file(&path).expect("clear the bench data directory");
            }
        }
        eprintln!(
            "generating the data into {} (once; later runs reuse it)",
            self.dir.display()
        );
        false
    }

    /// Records that the data here is complete.
    pub fn mark_complete(&self) {
        std::fs::write(self.dir.join(MARKER), &self.version).expect("mark the data complete");
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Imports documents `0..n`, document `i` written into its buffer by `doc(i, buf)`, into
/// `db/container` as `cosmoscope import` does: each placed in item-key order across the
/// whole import, then written in that order, numbered by `i`, the index of a new container
/// built once at the end. Each document is generated twice (placed, then written), so the
/// loader holds a chunk of them, not all. Returns the time taken.
pub fn import_generated(
    engine: &Engine,
    (db, container): (&str, &str),
    n: usize,
    doc: &(dyn Fn(usize, &mut Vec<u8>) + Sync),
) -> Duration {
    let started = Instant::now();
    let mut order = engine.import_order(db, container).expect("import order");
    let mut text = Vec::new();
    for start in (0..n).step_by(CHUNK) {
        let mut chunk = Chunk::default();
        for i in start..(start + CHUNK).min(n) {
            text.clear();
            doc(i, &mut text);
            // The origin is the document's number: the writer makes it again from that.
            let origin = Origin {
                offset: i as u64,
                len: 0,
            };
            chunk.push(i + 1, &text, origin);
        }
        order.add(0, &chunk).expect("place documents");
    }
    let mut written = 0u64;
    let mut read = |placed: &cosmoscope::engine::import_order::Placed, text: &mut Vec<u8>| {
        doc(placed.origin.offset as usize, text);
        Ok::<(), cosmoscope::Error>(())
    };
    engine
        .bulk_load(db, container, (n, BATCH), || {
            engine.import_placed(
                (db, container),
                order,
                BATCH,
                &mut read,
                &|_, e| e,
                &mut |s| {
                    let before = written / 1_000_000;
                    written += s.items;
                    if written / 1_000_000 > before {
                        eprintln!(
                            "  {:>7.1} s  {} items into {container}",
                            started.elapsed().as_secs_f64(),
                            thousands(written as f64)
                        );
                    }
                },
            )
        })
        .expect("import");
    started.elapsed()
}
