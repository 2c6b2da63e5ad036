//! cosmoscope: an explorer for partitioned JSON document data on an embedded store that
//! behaves like Azure Cosmos DB for NoSQL.
//!
//! Layers, each depending only on the ones before it:
//!
//! - [`store`]: the LMDB store — catalog, partitioning, items, change feed, statistics, metering
//! - [`charge`]: the RU model, pure functions of counted work
//! - [`scripts`]: server-side JavaScript (stored procedures, triggers, UDFs), run by the
//!   engine inside a store write transaction
//! - [`engine`]: the facade every front end uses
//! - [`processor`]: change feed processors (leases, checkpoints, splits) over the engine
//! - [`recorded_requests`]: the queries and point operations the gateway served, kept per
//!   container in the data directory for the advisor
//! - [`samples`]: bundled data sets and their generators, loaded through the engine
//! - [`workbench`]: access-pattern suites run against data models, compared pattern by pattern
//! - [`advisor`]: the partition-key advisor: candidate keys placed, replayed and ranked
//! - [`simulate`]: live mixed workloads against a design, with its change feed processors
//! - [`gateway`]: the Cosmos DB REST API over the engine, for applications on the official SDKs
//! - [`cli`]: the headless subcommands
//! - [`tui`]: the terminal UI

pub mod advisor;
pub mod charge;
pub mod cli;
pub mod engine;
pub mod error;
pub(crate) mod fault;
pub mod gateway;
pub mod processor;
pub mod query;
pub mod recorded_requests;
pub mod samples;
pub mod scripts;
pub mod simulate;
pub mod store;
pub mod tui;
pub mod workbench;

pub use error::{Error, Result};
