//! Reading documents: which parts of an item a query needs, extracting just those from the
//! stored JSON text, reading ahead of a scan, and results kept as JSON text.

pub mod demand;
pub mod document;
pub mod extract;
pub mod extractor;
pub mod lazy;
pub mod prefetch;
