//! The files of `sample-data/`, embedded in the binary so a new store is explorable with no
//! network and no files beside the executable.
//!
//! Paths are relative to `sample-data/`. Each set lives in a folder named like the set with
//! a `manifest.json`; `vocab/` holds the vocabularies the generators draw from.

use crate::error::{Error, Result};

/// One embedded file.
pub struct EmbeddedFile {
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        &[$(EmbeddedFile {
            path: $path,
            text: include_str!(concat!("../../sample-data/", $path)),
        }),*]
    };
}

/// Every bundled file.
pub const FILES: &[EmbeddedFile] = embed![
    "modeling/manifest.json",
    "modeling/people.json",
    "modeling/posts.json",
    "modeling/portfolios.json",
    "modeling/stocks.json",
    "modeling/publishers.json",
    "modeling/books.json",
    "modeling/authors.json",
    "modeling/book-reviews.json",
    "webstore-relational/manifest.json",
    "webstore/manifest.json",
    "blog-v1/manifest.json",
    "blog-v2/manifest.json",
    "blog-v3/manifest.json",
    "vocab/words.txt",
    "vocab/people.json",
    "vocab/catalog.json",
    "scripts/createComment.js",
    "scripts/createLike.js",
    "scripts/updateUsernames.js",
    "scripts/truncateFeed.js",
    "scripts/createSalesOrder.js",
];

/// The sets in the order `sample list` shows and first launch loads them.
pub const SETS: &[&str] = &[
    "modeling",
    "webstore-relational",
    "webstore",
    "blog-v1",
    "blog-v2",
    "blog-v3",
];

/// An embedded file by its path under `sample-data/`.
pub fn file(path: &str) -> Option<&'static str> {
    FILES.iter().find(|f| f.path == path).map(|f| f.text)
}

/// The manifest text of a set.
pub fn manifest_text(set: &str) -> Option<&'static str> {
    SETS.contains(&set)
        .then(|| file(&format!("{set}/manifest.json")))
        .flatten()
}

/// An embedded file that must be there (a missing one is a fault of the build: 500).
pub fn require(path: &str) -> Result<&'static str> {
    file(path).ok_or_else(|| Error::internal(format!("sample file {path} is not bundled")))
}

/// An embedded JSON file, parsed.
pub fn json<T: serde::de::DeserializeOwned>(path: &str) -> Result<T> {
    serde_json::from_str(require(path)?)
        .map_err(|e| Error::internal(format!("bundled sample file {path} is invalid: {e}")))
}
