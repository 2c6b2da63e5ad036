//! What the account's answers say, read into the engine's types: a query plan's
//! `queryInfo` and `queryRanges`, the `x-ms-documentdb-query-metrics` header and the
//! `x-ms-cosmos-index-utilization` header, and ids (strings on the service, numbers on some
//! other servers). Members the service leaves out take their defaults; nothing here fails
//! on an unexpected shape (a view with less in it is better than no view).

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::Value;

use crate::engine::plan::{AggregateKind, DistinctType, QueryInfo, QueryRange, SortOrder};
use crate::engine::query::{IndexMetrics, QueryMetrics};
use crate::query::run::result::{CompositeIndexMetric, SingleIndexMetric};

/// A JSON string's text, or a number's.
pub(super) fn scalar_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// A string member, or `default`.
fn text(v: &Value, name: &str, default: &str) -> String {
    v.get(name)
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_string()
}

/// A boolean member, or `default`.
fn flag(v: &Value, name: &str, default: bool) -> bool {
    v.get(name).and_then(Value::as_bool).unwrap_or(default)
}

/// The strings of an array member.
fn strings(v: &Value, name: &str) -> Vec<String> {
    v.get(name)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn query_ranges(doc: &Value) -> Vec<QueryRange> {
    doc.get("queryRanges")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|r| QueryRange {
                    min: text(r, "min", ""),
                    max: text(r, "max", "FF"),
                    is_min_inclusive: flag(r, "isMinInclusive", true),
                    is_max_inclusive: flag(r, "isMaxInclusive", false),
                })
                .collect()
        })
        .unwrap_or_else(|| {
            vec![QueryRange {
                min: String::new(),
                max: "FF".into(),
                is_min_inclusive: true,
                is_max_inclusive: false,
            }]
        })
}

/// The plan's `queryInfo` (members the service leaves out are their defaults).
pub(super) fn query_info(v: &Value) -> QueryInfo {
    let strings = |name: &str| strings(v, name);
    let aggregate = |s: &str| match s {
        "Count" => Some(AggregateKind::Count),
        "Sum" => Some(AggregateKind::Sum),
        "Average" => Some(AggregateKind::Average),
        "Min" => Some(AggregateKind::Min),
        "Max" => Some(AggregateKind::Max),
        _ => None,
    };
    let mut alias_types: Vec<(String, Option<AggregateKind>)> = Vec::new();
    if let Some(Value::Object(m)) = v.get("groupByAliasToAggregateType") {
        // The service's map has no order; the aliases list gives it.
        let aliases = strings("groupByAliases");
        let mut names: Vec<&String> = m.keys().collect();
        names.sort_by_key(|n| aliases.iter().position(|a| a == *n).unwrap_or(usize::MAX));
        for n in names {
            alias_types.push((n.clone(), m[n].as_str().and_then(aggregate)));
        }
    }
    QueryInfo {
        distinct_type: match v.get("distinctType").and_then(Value::as_str) {
            Some("Ordered") => DistinctType::Ordered,
            Some("Unordered") => DistinctType::Unordered,
            _ => DistinctType::None,
        },
        top: v.get("top").and_then(Value::as_u64),
        offset: v.get("offset").and_then(Value::as_u64),
        limit: v.get("limit").and_then(Value::as_u64),
        order_by: strings("orderBy")
            .iter()
            .map(|o| {
                if o == "Descending" {
                    SortOrder::Descending
                } else {
                    SortOrder::Ascending
                }
            })
            .collect(),
        order_by_expressions: strings("orderByExpressions"),
        group_by_expressions: strings("groupByExpressions"),
        group_by_aliases: strings("groupByAliases"),
        aggregates: strings("aggregates")
            .iter()
            .filter_map(|a| aggregate(a))
            .collect(),
        group_by_alias_to_aggregate_type: alias_types,
        rewritten_query: text(v, "rewrittenQuery", ""),
        has_select_value: flag(v, "hasSelectValue", false),
        has_non_streaming_order_by: flag(v, "hasNonStreamingOrderBy", false),
    }
}

/// `x-ms-documentdb-query-metrics`: `name=value` pairs separated by `;`.
pub(super) fn query_metrics(header: &str) -> QueryMetrics {
    let pairs: HashMap<&str, f64> = header
        .split(';')
        .filter_map(|p| p.split_once('='))
        .filter_map(|(k, v)| Some((k.trim(), v.trim().parse().ok()?)))
        .collect();
    let get = |k: &str| pairs.get(k).copied().unwrap_or(0.0);
    let retrieved = get("retrievedDocumentCount");
    QueryMetrics {
        retrieved_document_count: retrieved as u64,
        retrieved_document_size: get("retrievedDocumentSize") as u64,
        output_document_count: get("outputDocumentCount") as u64,
        output_document_size: get("outputDocumentSize") as u64,
        // The service reports the hit ratio, not the count.
        index_hit_document_count: (get("indexUtilizationRatio") * retrieved).round() as u64,
        index_lookup_time_in_ms: get("indexLookupTimeInMs"),
        document_load_time_in_ms: get("documentLoadTimeInMs"),
        query_engine_execution_time_in_ms: get("VMExecutionTimeInMs"),
    }
}

/// `x-ms-cosmos-index-utilization`: base64 of the index metrics' JSON.
pub(super) fn index_metrics(header: &str) -> Option<IndexMetrics> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(header.trim())
        .ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    let impact = |m: &Value| -> &'static str {
        match m.get("IndexImpactScore").and_then(Value::as_str) {
            Some("High") => "High",
            _ => "Low",
        }
    };
    let single = |name: &str| -> Vec<SingleIndexMetric> {
        v.get(name)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| SingleIndexMetric {
                filter_expression: text(m, "FilterExpression", ""),
                index_spec: text(m, "IndexSpec", ""),
                filter_precise_set: flag(m, "FilterPreciseSet", false),
                index_precise_set: flag(m, "IndexPreciseSet", false),
                index_impact_score: impact(m),
            })
            .collect()
    };
    let composite = |name: &str| -> Vec<CompositeIndexMetric> {
        v.get(name)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| CompositeIndexMetric {
                index_specs: m
                    .get("IndexSpecs")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
                index_precise_set: flag(m, "IndexPreciseSet", false),
                index_impact_score: impact(m),
            })
            .collect()
    };
    Some(IndexMetrics {
        utilized_single_indexes: single("UtilizedSingleIndexes"),
        potential_single_indexes: single("PotentialSingleIndexes"),
        utilized_composite_indexes: composite("UtilizedCompositeIndexes"),
        potential_composite_indexes: composite("PotentialCompositeIndexes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::QueryPlan;

    #[test]
    fn metrics_header_reads_the_service_names() {
        let m = query_metrics(
            "totalExecutionTimeInMs=1.00;retrievedDocumentCount=10;retrievedDocumentSize=2048;\
             outputDocumentCount=4;outputDocumentSize=512;indexUtilizationRatio=0.40;\
             indexLookupTimeInMs=0.20;documentLoadTimeInMs=0.30;VMExecutionTimeInMs=0.50",
        );
        assert_eq!(m.retrieved_document_count, 10);
        assert_eq!(m.index_hit_document_count, 4);
        assert_eq!(m.output_document_size, 512);
        assert_eq!(m.query_engine_execution_time_in_ms, 0.5);
    }

    #[test]
    fn plan_json_round_trips_through_the_engines_rendering() {
        let info = QueryInfo {
            order_by: vec![SortOrder::Descending],
            order_by_expressions: vec!["c.n".into()],
            top: Some(3),
            group_by_aliases: vec!["a".into(), "n".into()],
            group_by_alias_to_aggregate_type: vec![
                ("a".into(), None),
                ("n".into(), Some(AggregateKind::Sum)),
            ],
            rewritten_query: "SELECT 1".into(),
            ..QueryInfo::default()
        };
        let plan = QueryPlan {
            query_info: info.clone(),
            query_ranges: query_ranges(&Value::Null),
            ranges: vec!["0".into()],
        };
        let json = plan.to_json();
        assert_eq!(query_info(&json["queryInfo"]), info);
        assert_eq!(query_ranges(&json), plan.query_ranges);
    }
}
