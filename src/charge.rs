//! The request-unit (RU) model: every RU figure cosmoscope reports comes from here.
//!
//! Charges are pure, deterministic functions of counted work — bytes read and written,
//! indexed terms, documents loaded, partitions visited — never of wall-clock time, so the
//! same request on the same data always costs the same. The constants are calibrated to the
//! service's published figures (reference/cosmos.md §3.1):
//!
//! | operation                         | published            | this model                         |
//! |-----------------------------------|----------------------|------------------------------------|
//! | point read, 1 KB                  | 1 RU                 | 1 RU                               |
//! | point read, 100 KB                | 10 RU                | 10 RU (linear in between)          |
//! | insert, 1 KB, indexing off        | ≈5 RU                | 5 RU                               |
//! | insert, 100 KB, indexing off      | 50 RU                | 50 RU                              |
//! | insert with indexing              | more                 | + 0.12 RU per indexed term         |
//! | replace                           | 2 × insert           | 2 × insert of the new image        |
//! | unique key policy present         | "slightly higher"    | + 0.3 RU per unique key constraint |
//! | patch                             | ≈ replace (FAQ)      | replace of the patched image       |
//! | transactional batch               | —                    | sum of its operations' charges     |
//!
//! Formulas (KB = bytes / 1024):
//!
//! ```text
//! read(bytes)          = max(1, 1 + (KB − 1) × 9/99)
//! insert(bytes, terms) = max(5, 5 + (KB − 1) × 45/99) + 0.12 × terms + 0.3 × uniqueKeys
//! replace              = 2 × insert(new image)
//! delete               = insert(deleted image)
//! patch                = replace(patched image)
//! batch                = Σ operations
//! ```
//!
//! Failed requests are charged too, as the service does: a request rejected before it
//! touched data (bad input, missing resource) costs 1 RU; one that had to look the item up
//! first (409 conflict, 412 precondition) costs the read of that item. A throttled (429)
//! request costs nothing. Where the service's own formula is unpublished these are our
//! choices, marked **unconfirmed** in reference/cosmos.md §3.4.

/// Charges are reported with two decimals, like `x-ms-request-charge`.
pub fn round(ru: f64) -> f64 {
    (ru * 100.0).round() / 100.0
}

const KB: f64 = 1024.0;

/// Point read of an item of `bytes` (its stored JSON, system properties included).
///
/// ```
/// use cosmoscope::charge::point_read;
/// assert_eq!(point_read(1024), 1.0); // 1 KB: 1 RU
/// assert_eq!(point_read(100 * 1024), 10.0); // 100 KB: 10 RU
/// ```
pub fn point_read(bytes: usize) -> f64 {
    let kb = bytes as f64 / KB;
    round((1.0 + (kb - 1.0) * 9.0 / 99.0).max(1.0))
}

/// A point read that found nothing (404).
pub const NOT_FOUND_READ: f64 = 1.0;

/// A request rejected before it touched any data (400, 404 container, 413).
pub const REJECTED: f64 = 1.0;

/// RU per indexed term written (calibration: a 1 KB item with ~12 terms ≈ 6.4 RU).
pub const PER_INDEXED_TERM: f64 = 0.12;

/// Extra RU per unique key constraint checked on a write.
pub const PER_UNIQUE_KEY: f64 = 0.3;

/// Work counted for one item write.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WriteWork {
    /// Size of the item image written (or deleted).
    pub bytes: usize,
    /// Index terms the image produces under the container's indexing policy.
    pub indexed_terms: usize,
    /// Unique key constraints of the container.
    pub unique_keys: usize,
}

fn insert_base(work: WriteWork) -> f64 {
    let kb = work.bytes as f64 / KB;
    (5.0 + (kb - 1.0) * 45.0 / 99.0).max(5.0)
        + PER_INDEXED_TERM * work.indexed_terms as f64
        + PER_UNIQUE_KEY * work.unique_keys as f64
}

pub fn create(work: WriteWork) -> f64 {
    round(insert_base(work))
}

/// Replace: the service documents it as twice the insert of the same item.
///
/// ```
/// use cosmoscope::charge::{create, replace, WriteWork};
/// let work = WriteWork { bytes: 1024, indexed_terms: 12, unique_keys: 0 };
/// assert_eq!(replace(work), 2.0 * create(work));
/// ```
pub fn replace(work: WriteWork) -> f64 {
    round(2.0 * insert_base(work))
}

/// Delete: removes the image and its index terms, priced like inserting them.
pub fn delete(work: WriteWork) -> f64 {
    round(insert_base(work))
}

/// Patch: the service bills a partial update like the write it performs ("users shouldn't
/// expect a significant reduction in RU", partial-document-update-faq), so it costs a
/// replace of the patched image.
pub fn patch(work: WriteWork) -> f64 {
    replace(work)
}

/// A transactional batch costs the sum of its operations: the service publishes no batch
/// discount or surcharge, so none is invented. A failed batch is charged for the operations
/// it ran before the failing one plus that one (the work was done, then rolled back); the
/// operations it never reached cost nothing. (Unpublished: **unconfirmed**.)
pub fn batch(operation_charges: impl IntoIterator<Item = f64>) -> f64 {
    round(operation_charges.into_iter().sum())
}

/// Server-side scripts (stored procedures and triggers) cost what their operations cost plus
/// a CPU component: a base for starting the script and a charge per unit of JavaScript work,
/// counted deterministically as QuickJS's interrupt periods (its handler runs every ~10,000
/// branches and calls), so the same script on the same data always costs the same. The
/// service documents neither figure: both are **unconfirmed**, chosen so a trivial stored
/// procedure adds about 1 RU to its operations and a tight loop of a million iterations
/// about 10 RU.
pub const SCRIPT_BASE: f64 = 1.0;
pub const SCRIPT_PER_TICK: f64 = 0.1;

/// The charge of one script execution: its operations' charges and its CPU component.
pub fn script(operations: f64, ticks: u64) -> f64 {
    round(operations + SCRIPT_BASE + ticks as f64 * SCRIPT_PER_TICK)
}

/// RU a script's operations may consume in one execution before its operations stop being
/// accepted (`isAccepted` false), so a long job continues in the next execution. The
/// service bounds scripts by resources as well as time but publishes no figure: this one
/// is **unconfirmed**, about a thousand 1 KB creates.
pub const SCRIPT_RU_BUDGET: f64 = 5_000.0;

/// Base cost of a query on each physical partition it visits (the service: "2–3 RU extra
/// for every physical partition"; a one-document query measured 2.98–3.19 RU).
pub const QUERY_PER_RANGE: f64 = 2.3;
/// Cost per document the query engine loads, and per KB of them (fitted to the documented
/// scan: 60,951 documents / 400 MB loaded → 4,060 RU).
pub const QUERY_PER_LOADED_DOC: f64 = 0.02;
pub const QUERY_PER_LOADED_KB: f64 = 0.0073;
/// Cost per KB of results returned (a 10 KB single-document result: 3.19 RU in total).
pub const QUERY_PER_OUTPUT_KB: f64 = 0.09;

/// Work a query did on one physical partition.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryWork {
    /// Whether the range's base cost is due (once per query, on its first page there).
    pub visited: bool,
    /// Documents loaded as the service would under the indexing policy: only matches for an
    /// index-served filter, every document in scope for a scan.
    pub loaded_docs: u64,
    pub loaded_bytes: u64,
    pub output_bytes: u64,
}

/// A query's charge on one range. Deterministic, and additive: pages of one query sum to
/// the charge of running it unpaged.
pub fn query_range(w: QueryWork) -> f64 {
    let base = if w.visited { QUERY_PER_RANGE } else { 0.0 };
    base + QUERY_PER_LOADED_DOC * w.loaded_docs as f64
        + QUERY_PER_LOADED_KB * (w.loaded_bytes as f64 / KB)
        + QUERY_PER_OUTPUT_KB * (w.output_bytes as f64 / KB)
}

/// What a query reading `ranges` physical partitions and loading `docs` documents of
/// `bytes` in all would cost, before it runs: the estimate front ends show before a query
/// that fans out on a billed account. With the container's whole item count it is the
/// charge of a scan (an index-served filter loads less).
pub fn query_estimate(ranges: usize, docs: u64, bytes: u64) -> f64 {
    round(
        QUERY_PER_RANGE * ranges as f64
            + QUERY_PER_LOADED_DOC * docs as f64
            + QUERY_PER_LOADED_KB * (bytes as f64 / KB),
    )
}

/// A change feed page: each range visited costs at least one read (the service's 304 for an
/// empty range), and returned changes cost like point reads of their bytes.
pub fn feed_range_read(bytes_returned: usize) -> f64 {
    point_read(bytes_returned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(bytes: usize, terms: usize) -> WriteWork {
        WriteWork {
            bytes,
            indexed_terms: terms,
            unique_keys: 0,
        }
    }

    #[test]
    fn reads_match_published_figures() {
        assert_eq!(point_read(1024), 1.0);
        assert_eq!(point_read(100 * 1024), 10.0);
        assert_eq!(point_read(10), 1.0);
        assert!(point_read(50 * 1024) > 5.0 && point_read(50 * 1024) < 6.0);
    }

    #[test]
    fn writes_match_published_figures() {
        assert_eq!(create(w(1024, 0)), 5.0);
        assert_eq!(create(w(100 * 1024, 0)), 50.0);
        let indexed = create(w(1024, 12));
        assert!(indexed > 6.0 && indexed < 7.0, "{indexed}");
        assert_eq!(replace(w(1024, 0)), 10.0);
        assert_eq!(delete(w(1024, 0)), create(w(1024, 0)));
        assert_eq!(patch(w(1024, 12)), replace(w(1024, 12)));
    }

    #[test]
    fn a_batch_costs_the_sum_of_its_operations() {
        assert_eq!(batch([1.0, 6.44, 12.88]), 20.32);
        assert_eq!(batch([]), 0.0);
    }

    #[test]
    fn more_terms_and_unique_keys_cost_more() {
        assert!(create(w(1024, 30)) > create(w(1024, 10)));
        let with_unique = create(WriteWork {
            bytes: 1024,
            indexed_terms: 10,
            unique_keys: 2,
        });
        assert!(with_unique > create(w(1024, 10)));
    }

    #[test]
    fn charges_are_rounded_to_two_decimals() {
        let ru = create(w(3000, 7));
        assert_eq!(ru, round(ru));
    }

    #[test]
    fn a_fan_out_estimate_grows_with_ranges_and_what_it_loads() {
        assert_eq!(query_estimate(1, 0, 0), QUERY_PER_RANGE);
        assert!(query_estimate(4, 0, 0) > query_estimate(1, 0, 0));
        // The documented scan: 60,951 documents, 400 MB, about 4,060 RU.
        let scan = query_estimate(1, 60_951, 400 * 1024 * 1024);
        assert!((3_900.0..4_300.0).contains(&scan), "{scan}");
    }
}
