//! The gateway over HTTP: the protocol as a client on the wire sees it (signatures, limits,
//! headers, status codes), against a gateway started in the test process on a free
//! loopback port.

pub(crate) mod client;
mod protocol;
