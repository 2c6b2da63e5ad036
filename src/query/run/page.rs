//! Cutting a page out of a result: the service's 4 MB response limit and the page length
//! it allows.

use crate::query::read::document::Document;

/// The service's response size limit: a page ends before the result that would take its
/// documents past 4 MB, and continues on the next (concepts-limits.md: "Maximum response size
/// (for example, paginated query) | 4 MB"). A page has at least one result, whatever its size.
pub const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// How many of `results` (the rest of a result, in order) the next page holds: at most
/// `max_items`, and no more than fit in [`MAX_PAGE_BYTES`], but always one.
pub fn page_length(results: &[Document], max_items: usize) -> usize {
    let mut bytes = 0;
    let fitting = results
        .iter()
        .take(max_items)
        .take_while(|d| {
            bytes += d.json_len();
            bytes <= MAX_PAGE_BYTES
        })
        .count();
    fitting.max(results.len().min(1))
}

