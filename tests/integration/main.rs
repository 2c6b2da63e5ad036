//! The integration tests, as one test binary: each area is a module, so the crate links
//! once instead of once per test file. Run one area with `cargo test --test integration
//! query::`, one file with `cargo test --test integration engine::feed::`.
//!
//! Tests that spawn the program use `env!("CARGO_BIN_EXE_cosmoscope")`; fixtures read from
//! `tests/data`. The gateway tests run the official SDKs (installed by `tests/sdk/setup`).

mod advisor;
mod architecture;
mod cli;
mod engine;
mod gateway;
mod query;
mod remote;
mod support;
mod tui;
