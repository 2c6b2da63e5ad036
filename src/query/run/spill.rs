//! Complete results of queries that cannot stream, kept on disk in the data directory, so
//! that a later page — in this process or another one (`cosmoscope query --continuation`
//! in a new process, a second explorer) — reads its own window of the result instead of
//! computing the whole result again.
//!
//! The service resumes such queries from per-range state its continuation carries; here
//! the first page computes the whole result (see [`super::cache`]), and this keeps it for
//! the pages after it. A file is named by the result's [`CacheKey`], which carries the
//! container's change sequence, so a write, a split or an index rebuild makes later pages
//! find no file and compute afresh, exactly as the in-memory cache does. It is a cache: a
//! file that cannot be written or read (read-only media, a full disk, a damaged file) only
//! means the page computes the result itself.
//!
//! One file per result, written to a temporary name and renamed, so a reader sees it whole:
//! `n` (u64 LE), the length of the metadata (u64 LE), the metadata (JSON: each range's part
//! and the access path), `n + 1` offsets (u64 LE) into the documents, then the documents'
//! JSON texts back to back.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::computed::{CacheKey, Computed};
use super::result::{AccessView, MAX_PAGE_BYTES, QueryMetrics, RangeLabel, RangePart};
use crate::query::read::document::Document;

/// Results larger than this stay unspilled (their later pages compute them again).
const MAX_FILE_BYTES: u64 = 1 << 30;
/// Files kept at once: the newest ones (a query's pages come soon after each other).
const KEEP_FILES: usize = 16;
/// Bytes of files kept at once (the newest files that fit).
const KEEP_BYTES: u64 = 2 << 30;
/// The extension of a spilled result.
const EXT: &str = "result";

/// What a spilled result says besides its documents.
#[derive(Serialize, Deserialize)]
struct Meta {
    ranges: Vec<Part>,
    access: (String, Vec<String>, String),
}

/// A [`RangePart`] as stored.
#[derive(Serialize, Deserialize)]
struct Part {
    range: RangeLabel,
    metrics: QueryMetrics,
    logical: Vec<Value>,
    visited_before: bool,
}

/// The directory spilled results go to.
#[derive(Debug, Clone)]
pub struct Spill {
    dir: PathBuf,
}

impl Spill {
    pub fn new(dir: PathBuf) -> Spill {
        Spill { dir }
    }

    fn path(&self, key: &CacheKey) -> PathBuf {
        let text = format!(
            "{}:{}:{}:{}:{:?}",
            key.container, key.query, key.version, key.index_generation, key.ranges
        );
        let (a, b) = crate::store::murmur3::hash128(text.as_bytes(), 0);
        self.dir.join(format!("{a:016x}{b:016x}.{EXT}"))
    }

    /// Keeps `computed` (a whole result) for `key`; a failure leaves nothing behind.
    pub fn put(&self, key: &CacheKey, computed: &Computed) {
        let path = self.path(key);
        if path.exists() {
            return;
        }
        let bytes: u64 = computed.results.iter().map(|d| d.json_len() as u64).sum();
        if bytes > MAX_FILE_BYTES {
            return;
        }
        let tmp = path.with_extension(format!("{EXT}.{}", std::process::id()));
        if self.write(&tmp, computed).is_ok() && std::fs::rename(&tmp, &path).is_ok() {
            self.evict();
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    fn write(&self, tmp: &PathBuf, computed: &Computed) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let meta = Meta {
            ranges: computed
                .ranges
                .iter()
                .map(|p| Part {
                    range: p.range.clone(),
                    metrics: p.metrics.clone(),
                    logical: p.logical.clone(),
                    visited_before: p.visited_before,
                })
                .collect(),
            access: (
                computed.access.kind.to_string(),
                computed.access.indexes.clone(),
                computed.access.reason.clone(),
            ),
        };
        let meta = serde_json::to_vec(&meta)?;
        let mut out = std::io::BufWriter::new(File::create(tmp)?);
        out.write_all(&(computed.results.len() as u64).to_le_bytes())?;
        out.write_all(&(meta.len() as u64).to_le_bytes())?;
        out.write_all(&meta)?;
        let mut at = 0u64;
        out.write_all(&at.to_le_bytes())?;
        for d in &computed.results {
            at += d.json_len() as u64;
            out.write_all(&at.to_le_bytes())?;
        }
        for d in &computed.results {
            out.write_all(d.json_bytes())?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_data()
    }

    /// Keeps the newest results: at most [`KEEP_FILES`] of them and [`KEEP_BYTES`].
    fn evict(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == EXT))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        let mut kept = 0u64;
        for (i, (_, len, path)) in files.into_iter().enumerate() {
            kept += len;
            if i >= KEEP_FILES || kept > KEEP_BYTES {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// The window of the result kept for `key` that a page starting at result `skip` of
    /// at most `max_items` results needs (at most [`MAX_PAGE_BYTES`] of documents, and at
    /// least one), or `None` when no such result is kept.
    pub fn window(&self, key: &CacheKey, (skip, max_items): (usize, usize)) -> Option<Computed> {
        let mut file = File::open(self.path(key)).ok()?;
        let mut word = [0u8; 8];
        let mut read_u64 = |file: &mut File| -> Option<u64> {
            file.read_exact(&mut word).ok()?;
            Some(u64::from_le_bytes(word))
        };
        let total = usize::try_from(read_u64(&mut file)?).ok()?;
        let meta_len = usize::try_from(read_u64(&mut file)?).ok()?;
        let mut meta = vec![0u8; meta_len];
        file.read_exact(&mut meta).ok()?;
        let meta: Meta = serde_json::from_slice(&meta).ok()?;
        let offsets_at = 16 + meta_len as u64;
        let docs_at = offsets_at + 8 * (total as u64 + 1);
        let first = skip.min(total);
        let last = first.saturating_add(max_items).min(total);
        // The offsets of results first..=last.
        file.seek(SeekFrom::Start(offsets_at + 8 * first as u64))
            .ok()?;
        let mut offsets = Vec::with_capacity(last - first + 1);
        for _ in first..=last {
            offsets.push(read_u64(&mut file)?);
        }
        // As many as fit in a page's bytes, at least one.
        let start = offsets[0];
        let fitting = offsets[1..]
            .iter()
            .take_while(|end| **end - start <= MAX_PAGE_BYTES as u64)
            .count()
            .max((last > first) as usize);
        let end = offsets[fitting];
        file.seek(SeekFrom::Start(docs_at + start)).ok()?;
        let mut bytes = vec![0u8; usize::try_from(end - start).ok()?];
        file.read_exact(&mut bytes).ok()?;
        let results = offsets[..=fitting]
            .windows(2)
            .map(|w| {
                let (a, b) = ((w[0] - start) as usize, (w[1] - start) as usize);
                Document::from_stored(Arc::from(bytes.get(a..b).unwrap_or_default()))
            })
            .collect();
        let (kind, indexes, reason) = meta.access;
        let ranges = meta
            .ranges
            .into_iter()
            .map(|p| RangePart {
                range: p.range,
                metrics: p.metrics,
                logical: p.logical,
                visited_before: p.visited_before,
            })
            .collect();
        let access = AccessView {
            kind: access_kind(&kind),
            indexes,
            reason,
        };
        Some(Computed::window(results, (first, total), ranges, access))
    }
}

/// The access kind a spilled result names, as the static text the view holds.
fn access_kind(kind: &str) -> &'static str {
    [
        "index-lookup",
        "index-order",
        "scan",
        "statistics",
        "vector-index",
    ]
    .into_iter()
    .find(|k| *k == kind)
    .unwrap_or("scan")
}
