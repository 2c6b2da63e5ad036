//! The gateway over HTTP: the protocol as a client on the wire sees it (signatures, limits,
//! headers, status codes), against a gateway started in the test process on a free
//! loopback port; and (`sdk`) the official Python and Node SDKs as its clients, against
//! `cosmoscope serve` run as a process.

pub(crate) mod client;
mod durability;
mod protocol;
pub(crate) mod sdk;
mod statistics;
