//! Helpers shared by the test modules: the program run as a command, engines on temporary
//! data directories, the query tests' sample store and the UI tests' store.

pub mod cli;
pub mod fixture;
pub mod query_db;
pub mod tui_store;
