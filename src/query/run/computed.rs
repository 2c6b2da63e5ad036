//! A query's complete result as the first page computes it (or a window of it read back
//! from disk), and the key it is valid for: what the result cache ([`super::cache`]) and
//! its copies on disk ([`super::spill`]) hold.

use crate::query::read::document::Document;
use crate::query::run::result::{AccessView, RangePart};
use crate::store::keys::{ContainerRid, RangeId};

/// What a result is valid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    pub container: ContainerRid,
    /// Hash of the query text and its parameters.
    pub query: u64,
    /// The container's change sequence (moves on every write).
    pub version: u64,
    pub index_generation: u32,
    pub ranges: Vec<RangeId>,
}

/// A query's complete result (or a window of it read back from a [`Spill`]) and what each
/// physical partition contributed to it.
#[derive(Debug)]
pub struct Computed {
    /// The results from number `first` on (all of them unless this is a window).
    pub results: Vec<Document>,
    pub ranges: Vec<RangePart>,
    pub access: AccessView,
    /// JSON bytes of `results` (what the cache budget counts).
    pub(super) bytes: usize,
    /// The number of the first of `results` in the whole result.
    pub first: usize,
    /// How many results the whole result has.
    pub total: usize,
}

impl Computed {
    pub fn new(results: Vec<Document>, ranges: Vec<RangePart>, access: AccessView) -> Computed {
        let total = results.len();
        Computed::window(results, (0, total), ranges, access)
    }

    /// Results `first..` of a result of `total`.
    pub fn window(
        results: Vec<Document>,
        (first, total): (usize, usize),
        ranges: Vec<RangePart>,
        access: AccessView,
    ) -> Computed {
        let bytes = results.iter().map(Document::json_len).sum();
        Computed {
            results,
            ranges,
            access,
            bytes,
            first,
            total,
        }
    }

    /// Whether this holds the whole result (not a window of it).
    pub fn is_whole(&self) -> bool {
        self.first == 0 && self.results.len() == self.total
    }
}

#[cfg(test)]
impl Computed {
    /// A result of `n` documents `{"i": 0}`, `{"i": 1}`, ... found by a scan.
    pub(super) fn numbered(n: usize) -> Computed {
        let results = (0..n)
            .map(|i| Document::from_value(serde_json::json!({ "i": i })))
            .collect();
        let access = AccessView {
            kind: "scan",
            indexes: Vec::new(),
            reason: String::new(),
        };
        Computed::new(results, Vec::new(), access)
    }
}
