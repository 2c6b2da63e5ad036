//! The store as one page of a query reads it: one read transaction on one container, at
//! one second (for the items' expiry).

use crate::store::catalog::ContainerDef;
use crate::store::{RoTxn, Store};

#[derive(Clone, Copy)]
pub(super) struct Snapshot<'t> {
    pub(super) store: &'t Store,
    pub(super) txn: &'t RoTxn<'t>,
    pub(super) def: &'t ContainerDef,
    /// The second items are read at: those expired by then are not seen.
    pub(super) now: i64,
}
