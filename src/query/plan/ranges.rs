//! The plan's `queryRanges`: the EPK ranges a query's partition key routing implies, in
//! the form SDKs intersect with the container's `pkranges` to pick the ranges to query.
//!
//! One whole key is a point range `[epk, epk]` (both ends inclusive); an IN list or an OR
//! of equalities gives one point range per key; a hierarchical key's prefix gives the range
//! `[epk(prefix), epk(prefix) FF)`; no binding gives the whole space `["", "FF")`. Ranges come
//! in EPK order. EPKs are upper-case hex, as `pkranges` spells `minInclusive` and
//! `maxExclusive`.

use crate::query::run::routing::{Routing, Targets};
use crate::store::epk::Epk;
use crate::store::partition_key::PartitionKeyDefinition;

/// One EPK range of the plan: `{min, max, isMinInclusive, isMaxInclusive}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryRange {
    pub min: String,
    pub max: String,
    pub is_min_inclusive: bool,
    pub is_max_inclusive: bool,
}

impl QueryRange {
    /// `[epk, epk]`: one logical partition.
    fn point(epk: &Epk) -> QueryRange {
        QueryRange {
            min: epk.to_hex(),
            max: epk.to_hex(),
            is_min_inclusive: true,
            is_max_inclusive: true,
        }
    }

    /// `[min, max)`.
    fn span(min: &Epk, max: &Epk) -> QueryRange {
        QueryRange {
            min: min.to_hex(),
            max: max.to_hex(),
            is_min_inclusive: true,
            is_max_inclusive: false,
        }
    }

    /// `["", ""]`: the empty key's point, which only the first range holds. The service's
    /// plan for a query without FROM (`SELECT 5`) is this range: it runs once, on one
    /// range.
    pub(super) fn first_point() -> QueryRange {
        QueryRange::point(&Epk::min())
    }
}

/// The query ranges `routing` reads.
pub(super) fn of(routing: &Routing, pkdef: &PartitionKeyDefinition) -> Vec<QueryRange> {
    match &routing.targets {
        Targets::Keys(keys) => {
            let mut epks: Vec<Epk> = keys.iter().map(|k| k.epk(pkdef)).collect();
            epks.sort();
            epks.dedup();
            epks.iter().map(QueryRange::point).collect()
        }
        Targets::Ranges(spans) => {
            let mut spans = spans.clone();
            spans.sort();
            spans
                .iter()
                .map(|(min, max)| QueryRange::span(min, max))
                .collect()
        }
        Targets::All => vec![QueryRange::span(&Epk::min(), &Epk::max())],
    }
}
