//! The terminal UI: pure `update` tests, key-sequence flows and snapshots through the
//! headless harness, the gateway run from the explorer with signed requests over HTTP, the
//! keymap as help shows it, and a smoke test of the binary in tmux.

mod advisor;
mod details;
mod export;
mod finding;
mod flows;
mod gateway;
mod history;
mod keymap;
mod layout;
mod partition_picture;
mod results;
mod scripts;
mod selection;
mod smoke;
mod snapshots;
mod untrusted_text;
mod update;
mod workbench;
