//! Index lookups for a filter: the item keys the index-served conjuncts select, intersected,
//! and the access path the planner reports for them.

use super::result::AccessView;
use crate::error::Result;
use crate::query::run::access::Probe;
use crate::store::index::{IndexReader, ItemKey};

/// An item the index selected.
pub(super) struct Candidate<'t> {
    pub(super) key: ItemKey,
    /// The stored record, when the walk already read it (to skip expired items).
    pub(super) record: Option<&'t [u8]>,
}

/// What the index selected for a filter's probes.
pub(super) struct Selection {
    /// Item keys in key order; `None` (a scan) when no probe is selective enough.
    pub(super) keys: Option<Vec<ItemKey>>,
    pub(super) access: AccessView,
    /// The keys are exactly the items every probe is true for: each probe was looked up
    /// (none selected too many) and each selects exactly ([`Probe::exact`]).
    pub(super) exact: bool,
}

/// Item keys the probes select, in key order: the intersection of every probe whose
/// lookups stay under `limit` candidates. `None` (a scan) when no probe is that selective.
pub(super) fn index_candidates(
    reader: &IndexReader,
    probes: &[&Probe],
    spans: &[(Vec<u8>, Vec<u8>)],
    limit: usize,
) -> Result<Selection> {
    let mut result: Option<Vec<ItemKey>> = None;
    let mut used = Vec::new();
    let mut skipped = Vec::new();
    for probe in probes {
        let mut keys = Vec::new();
        let mut complete = true;
        for lookup in &probe.lookups {
            if !reader.lookup(lookup.path, &lookup.lo, &lookup.hi, spans, limit, &mut keys)? {
                complete = false;
                break;
            }
        }
        let specs = probe.paths.iter().map(|p| p.spec.clone());
        if !complete {
            skipped.extend(specs);
            continue;
        }
        used.extend(specs);
        keys.sort_unstable();
        keys.dedup();
        result = Some(match result {
            None => keys,
            Some(prev) => intersect(prev, &keys),
        });
    }
    used.dedup();
    let exact = result.is_some() && skipped.is_empty() && probes.iter().all(|p| p.exact);
    let view = match &result {
        Some(_) => AccessView {
            kind: "index-lookup",
            reason: if skipped.is_empty() {
                format!("the index answers {} filter conjunct(s)", used.len())
            } else {
                format!(
                    "the index answers the selective conjunct(s); {} would select more than {limit} documents",
                    skipped.join(", ")
                )
            },
            indexes: used,
        },
        None => AccessView {
            kind: "scan",
            indexes: Vec::new(),
            reason: format!(
                "the indexed conjuncts ({}) select more than {limit} documents: a scan reads less",
                skipped.join(", ")
            ),
        },
    };
    Ok(Selection {
        keys: result,
        access: view,
        exact,
    })
}

/// Keys in both sorted lists.
fn intersect(a: Vec<ItemKey>, b: &[ItemKey]) -> Vec<ItemKey> {
    let mut j = 0;
    a.into_iter()
        .filter(|k| {
            while j < b.len() && b[j] < *k {
                j += 1;
            }
            j < b.len() && b[j] == *k
        })
        .collect()
}
