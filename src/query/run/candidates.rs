//! Index lookups for a filter: the item keys the index-served conjuncts select, intersected,
//! and the access path the planner reports for them.

use std::cell::Cell;
use std::ops::Range;

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

/// Finds the candidates in key spans that come in key order, each search going on from where
/// the one before ended. A scan's spans rise range by range, so a fan-out's one or two
/// candidates per range are found with a comparison or two instead of two binary searches
/// over all of them (whose keys lie in separate allocations: in the fan-out's profile those
/// searches were a tenth of its samples).
#[derive(Default)]
pub(super) struct SpanCursor {
    from: Cell<usize>,
}

impl SpanCursor {
    /// The positions of the candidates (in key order) with keys in `[start, end)`. A span
    /// that starts before the last one ended is searched for from the front, as a first
    /// span is.
    pub(super) fn between(&self, c: &[Candidate], start: &[u8], end: &[u8]) -> Range<usize> {
        let from = self.from.get().min(c.len());
        let from = match from.checked_sub(1).map(|last| c[last].key.as_slice()) {
            Some(last) if last >= start => 0,
            _ => from,
        };
        let lo = from + count_below(&c[from..], start);
        let hi = lo + count_below(&c[lo..], end);
        self.from.set(hi);
        lo..hi
    }
}

/// How many of `c`'s leading keys are below `bound`: probing 1, 2, 4, … keys ahead, then a
/// binary search between the last two probes, so a bound near the front costs a comparison
/// or two and one far off no more than twice a binary search.
fn count_below(c: &[Candidate], bound: &[u8]) -> usize {
    let below = |k: &Candidate| k.key.as_slice() < bound;
    let (mut lo, mut step) = (0, 1);
    let hi = loop {
        let probe = lo + step - 1;
        match c.get(probe) {
            Some(k) if below(k) => {
                lo = probe + 1;
                step *= 2;
            }
            Some(_) => break probe,
            None => break c.len(),
        }
    };
    lo + c[lo..hi].partition_point(below)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(keys: &[u8]) -> Vec<Candidate<'static>> {
        keys.iter()
            .map(|&k| Candidate {
                key: vec![k],
                record: None,
            })
            .collect()
    }

    fn expected(c: &[Candidate], start: u8, end: u8) -> Range<usize> {
        let lo = c.partition_point(|k| k.key.as_slice() < [start].as_slice());
        let hi = c.partition_point(|k| k.key.as_slice() < [end].as_slice());
        lo..hi.max(lo)
    }

    #[test]
    fn span_cursor_finds_what_binary_searches_find() {
        let c = candidates(&[2, 3, 5, 8, 8, 9, 13, 21, 34, 40, 41, 42, 55, 89]);
        // Rising spans as a scan gives them, then spans that go back, empty ones and ones
        // past every key: each answer matches two binary searches over all the keys.
        let spans: &[(u8, u8)] = &[
            (0, 1),
            (1, 4),
            (4, 8),
            (8, 9),
            (9, 10),
            (10, 40),
            (40, 41),
            (41, 90),
            (90, 100),
            (3, 9),
            (0, 255),
            (50, 50),
            (21, 22),
            (7, 6),
            (89, 90),
        ];
        let cursor = SpanCursor::default();
        for &(start, end) in spans {
            assert_eq!(
                cursor.between(&c, &[start], &[end]),
                expected(&c, start, end),
                "span [{start}, {end})"
            );
        }
        assert_eq!(SpanCursor::default().between(&[], &[0], &[9]), 0..0);
    }

    #[test]
    fn count_below_counts_at_every_position() {
        let c = candidates(&[
            1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33,
        ]);
        for bound in 0..40u8 {
            let want = c.partition_point(|k| k.key.as_slice() < [bound].as_slice());
            assert_eq!(count_below(&c, &[bound]), want, "bound {bound}");
        }
    }
}
