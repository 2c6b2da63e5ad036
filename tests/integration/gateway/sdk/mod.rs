//! The gateway (`cosmoscope serve`) with the official SDKs as its clients: the Python SDK
//! (`azure-cosmos`) and the Node SDK (`@azure/cosmos`) run the scenarios in `tests/sdk/`
//! against a server started on a free loopback port over a temporary data directory, and
//! what they report (EPKs, feed ranges, charges) is checked against the CLI on the same
//! store. The SDKs are installed by `tests/sdk/setup`; without them these tests fail.

mod clients;
mod scenarios;
mod scripts;
pub(crate) mod server;
mod split;
