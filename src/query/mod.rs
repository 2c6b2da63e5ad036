//! The NoSQL query dialect: its syntax, evaluation, reading documents, search and running
//! queries against the store.
//!
//! - `syntax`: text to a checked tree — lexer, parser, the tree ([`ast`]), the semantic
//!   checks, printing, completion
//! - `eval`: values, the environment of an execution, the expression evaluator and the
//!   built-in [`functions`]
//! - `read`: which parts of an item a query reads, and reading just those from stored JSON
//! - `search`: full-text analysis and BM25, ordering by scores
//! - `run`: routing, index access paths, the row pipeline, the three phases of a page
//!   (prepare, compute, page), the result cache and continuations
//! - `plan`: the query plan SDKs ask for to run a cross-partition query range by range —
//!   the EPK ranges it reads, the rewritten query each range runs and how the client merges
//!   the ranges' results
//!
//! The folders are the crate's own (the engine facade above runs queries through
//! `run::run`). Outside the crate the query engine is the names below: parsing and checking
//! a query, its tree, the function registry, completion, and the limits pages keep.

pub(crate) mod eval;
pub(crate) mod plan;
pub(crate) mod read;
pub(crate) mod run;
pub(crate) mod search;
pub(crate) mod syntax;

pub use eval::functions;
pub use eval::value::Val;
pub use run::{DOCUMENT_ORDER_MAX_ITEMS, MAX_PAGE_BYTES};
pub use syntax::check::check;
pub use syntax::parser::parse;
pub use syntax::{ast, complete};
