//! From a sample to the whole container: a query replayed on a sampled copy loads fewer
//! documents than it would on a copy of every item, so the replay rescales each query
//! page's loads to the full data before the workbench's executor sees it; the RU model
//! prices the difference (`charge::query_range`, the same counted work the projection
//! recomputes). Everything that does not depend on the data's size is the sample's own:
//! point operations and writes (their charge is a function of the item), routing, and the
//! ranges a query visits.
//!
//! How each page's documents loaded scale:
//!
//! - a **scan** loads every document in scope: for a query routed to one logical
//!   partition, its items in the full placement against the sample's; otherwise, per
//!   range, the items the full placement has within the range's EPK bounds against the
//!   sample's. Both counts are exact, so the loads are the full data's;
//! - an **index-served** query loads the documents its filter matches. When the sample
//!   holds every item with the value a parameter binds (a group fetched for the draw,
//!   [`super::sample`]), the loads are already the full data's. Otherwise they scale by how
//!   many items hold the parameter's value in the container (counted by the scan) against
//!   the sample; a query without drawn parameters scales by the container's items against
//!   the sample's. Those two are estimates, and the advice says so in its notes.
//!
//! Output bytes are kept as measured (an aggregate returns as much from any data size).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use serde_json::Value;

use super::candidates::Candidate;
use super::placement::Placement;
use crate::charge::{self, QueryWork};
use crate::engine::{QueryOptions, QueryResult};
use crate::workbench::exec::SINGLE;

/// How an index-served query's loads scale, per query text and parameter values.
#[derive(Debug, Default)]
pub struct Loads {
    /// (query text, its parameters in canonical form) → factor (1: the sample holds every
    /// match).
    pub by_query: HashMap<(String, String), f64>,
    /// Container items against sample items: the factor for any other query.
    pub uniform: f64,
}

/// A query's parameters in one canonical text (names without `@`, sorted).
pub fn canonical(params: &HashMap<String, Value>) -> String {
    let sorted: std::collections::BTreeMap<&str, &Value> = params
        .iter()
        .map(|(k, v)| (k.trim_start_matches('@'), v))
        .collect();
    serde_json::to_string(&sorted).unwrap_or_default()
}

/// Rescales one candidate's query pages from its sampled copy to the full data.
pub struct Scaler<'a> {
    pub candidate: &'a Candidate,
    /// The container's items placed under the candidate, and the sample's.
    pub full: &'a Placement,
    pub sampled: Placement,
    pub loads: &'a Loads,
    /// The estimates used, for the advice's notes.
    notes: Mutex<BTreeSet<String>>,
}

impl<'a> Scaler<'a> {
    pub fn new(
        candidate: &'a Candidate,
        full: &'a Placement,
        sampled: Placement,
        loads: &'a Loads,
    ) -> Scaler<'a> {
        Scaler {
            candidate,
            full,
            sampled,
            loads,
            notes: Mutex::default(),
        }
    }

    /// The estimates this scaler made.
    pub fn notes(&self) -> Vec<String> {
        lock(&self.notes).iter().cloned().collect()
    }

    /// Rescales `page` (a page of `sql` sent with `opts` to the candidate's sampled copy)
    /// to what it would load on a copy of every item.
    pub fn scale(&self, page: &mut QueryResult, sql: &str, opts: &QueryOptions) {
        let scan = page.access.kind == "scan";
        let partition = match scan && page.routing.kind == SINGLE {
            true => self.partition_of(sql, opts),
            false => None,
        };
        let mut delta = 0.0;
        for p in page.partitions.iter_mut() {
            let m = &mut p.metrics;
            if m.retrieved_document_count == 0 {
                continue;
            }
            let (docs, bytes) = match (scan, &partition) {
                (true, Some(epk)) => {
                    let full = self.full.logical_at(epk).map(|l| (l.items, l.bytes));
                    let sampled = self.sampled.logical_at(epk).map(|l| (l.items, l.bytes));
                    ratio(full, sampled)
                }
                (true, None) => {
                    let (min, max) = (hex(&p.min_inclusive), hex(&p.max_exclusive));
                    let max = if &*p.max_exclusive == "FF" {
                        Vec::new()
                    } else {
                        max
                    };
                    ratio(
                        Some(self.full.within(&min, &max)),
                        Some(self.sampled.within(&min, &max)),
                    )
                }
                (false, _) => {
                    let f = self.index_factor(sql, opts);
                    (f, f)
                }
            };
            let before = charge::query_range(QueryWork {
                visited: false,
                loaded_docs: m.retrieved_document_count,
                loaded_bytes: m.retrieved_document_size,
                output_bytes: 0,
            });
            m.retrieved_document_count = (m.retrieved_document_count as f64 * docs).round() as u64;
            m.retrieved_document_size = (m.retrieved_document_size as f64 * bytes).round() as u64;
            let after = charge::query_range(QueryWork {
                visited: false,
                loaded_docs: m.retrieved_document_count,
                loaded_bytes: m.retrieved_document_size,
                output_bytes: 0,
            });
            p.request_charge = charge::round(p.request_charge + after - before);
            delta += after - before;
        }
        if delta != 0.0 {
            page.request_charge = charge::round(page.request_charge + delta);
            page.metrics.retrieved_document_count = page
                .partitions
                .iter()
                .map(|p| p.metrics.retrieved_document_count)
                .sum();
            page.metrics.retrieved_document_size = page
                .partitions
                .iter()
                .map(|p| p.metrics.retrieved_document_size)
                .sum();
        }
    }

    /// The EPK of the one logical partition a single-partition query reads: the key its
    /// options name, or the one its filter binds under the candidate.
    fn partition_of(&self, sql: &str, opts: &QueryOptions) -> Option<Vec<u8>> {
        let def = &self.full.definition;
        let key = match &opts.partition_key {
            Some(k) => k.clone(),
            None => {
                let paths = self.candidate.container_paths();
                let bound = crate::engine::bound_keys(sql, &opts.params, &paths).ok()??;
                super::candidates::request_form(bound.first()?)
            }
        };
        crate::engine::value_epk(def, &key).ok()
    }

    /// The factor an index-served query's loads scale by (see the module comment).
    fn index_factor(&self, sql: &str, opts: &QueryOptions) -> f64 {
        let key = (sql.to_string(), canonical(&opts.params));
        match self.loads.by_query.get(&key) {
            Some(f) => {
                if *f != 1.0 {
                    self.note(format!(
                        "{sql}: a value its parameters bind is held by too many items to copy \
                         them all, so the documents its index lookup loads were scaled by the \
                         items holding that value in the container against the sample"
                    ));
                }
                *f
            }
            None => {
                self.note(format!(
                    "{sql}: the documents its index lookup loads were scaled by the container's \
                     items against the sample's ({:.1}×), as if its matches were spread evenly",
                    self.loads.uniform
                ));
                self.loads.uniform
            }
        }
    }

    fn note(&self, text: String) {
        lock(&self.notes).insert(text);
    }
}

/// Full over sampled (items, bytes), each 1 when either side is unknown or empty.
fn ratio(full: Option<(u64, u64)>, sampled: Option<(u64, u64)>) -> (f64, f64) {
    match (full, sampled) {
        (Some((fi, fb)), Some((si, sb))) if si > 0 && sb > 0 => {
            (fi as f64 / si as f64, fb as f64 / sb as f64)
        }
        _ => (1.0, 1.0),
    }
}

/// An EPK bound's bytes from its hex text (the service's form; "" is the start).
pub fn hex(text: &str) -> Vec<u8> {
    text.as_bytes()
        .chunks(2)
        .filter_map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
        })
        .collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_have_one_canonical_text() {
        let a = HashMap::from([("@b".to_string(), json!(1)), ("a".to_string(), json!("x"))]);
        let b = HashMap::from([("a".to_string(), json!("x")), ("b".to_string(), json!(1))]);
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":"x","b":1}"#);
    }

    #[test]
    fn bounds_and_ratios() {
        assert_eq!(hex(""), Vec::<u8>::new());
        assert_eq!(hex("0A3F"), vec![0x0a, 0x3f]);
        assert_eq!(ratio(Some((100, 1000)), Some((10, 200))), (10.0, 5.0));
        // Nothing sampled there: kept as measured.
        assert_eq!(ratio(Some((100, 1000)), Some((0, 0))), (1.0, 1.0));
        assert_eq!(ratio(None, Some((3, 30))), (1.0, 1.0));
    }
}
