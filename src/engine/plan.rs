//! The query plan in the engine's words: what an SDK asks for with
//! `x-ms-cosmos-is-query-plan-request: True` before it runs a cross-partition query range
//! by range. A [`QueryPlan`] renders itself as the service's `PartitionedQueryExecutionInfo`
//! JSON, says whether a gateway can serve the query in one pass or must answer 400 with
//! substatus 1004 and the plan, and which query features a client needs to run it.
//!
//! How SDKs get to the plan: Python (`_execution_context/execution_dispatcher.py`) runs the
//! query directly and, on `400` with substatus `1004` (`_is_partitioned_execution_info`),
//! asks the gateway for the plan; Node (`queryIterator.ts`) asks for the plan beside the
//! direct query and uses it when the direct query fails with 400 and an
//! `additionalErrorInfo` in the body (or a message with "Cross partition query only
//! supports"). The error body carries the plan as a JSON string:
//! `{"code": "BadRequest", "message": ..., "additionalErrorInfo": "<plan JSON>"}`.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result, StatusCode, substatus};
use crate::query::plan::PartitionedPlan;
pub use crate::query::plan::{
    AggregateKind, DistinctType, FORMATTABLE_ORDER_BY_FILTER, QueryInfo, QueryRange, SortOrder,
};

/// The version of the plan's JSON the SDKs read (`partitionedQueryExecutionInfoVersion`).
pub const PLAN_VERSION: u32 = 2;

/// A query's plan on one container.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryPlan {
    pub query_info: QueryInfo,
    /// The EPK ranges the query reads, from its partition key routing.
    pub query_ranges: Vec<QueryRange>,
    /// The live physical partitions (partition key range ids, as
    /// [`super::PartitionKeyRange::id`]) those ranges overlap, in EPK order.
    pub ranges: Vec<String>,
}

impl QueryPlan {
    pub(super) fn new(plan: PartitionedPlan) -> QueryPlan {
        QueryPlan {
            query_info: plan.info,
            query_ranges: plan.ranges,
            ranges: plan.physical.iter().map(ToString::to_string).collect(),
        }
    }

    /// The service's JSON: `{"partitionedQueryExecutionInfoVersion": 2, "queryInfo": {...},
    /// "queryRanges": [{"min", "max", "isMinInclusive", "isMaxInclusive"}]}`. Every
    /// `queryInfo` member is present (Node reads `groupByAliasToAggregateType`,
    /// `aggregates` and `groupByExpressions` without checking for them); counts that do not
    /// apply are `null`.
    pub fn to_json(&self) -> Value {
        let info = &self.query_info;
        let names = |v: &[SortOrder]| -> Vec<Value> { v.iter().map(|o| json!(o.name())).collect() };
        let alias_types: Map<String, Value> = info
            .group_by_alias_to_aggregate_type
            .iter()
            .map(|(alias, kind)| (alias.clone(), kind.map_or(Value::Null, |k| json!(k.name()))))
            .collect();
        json!({
            "partitionedQueryExecutionInfoVersion": PLAN_VERSION,
            "queryInfo": {
                "distinctType": info.distinct_type.name(),
                "top": info.top,
                "offset": info.offset,
                "limit": info.limit,
                "orderBy": names(&info.order_by),
                "orderByExpressions": info.order_by_expressions,
                "groupByExpressions": info.group_by_expressions,
                "groupByAliases": info.group_by_aliases,
                "aggregates": info.aggregates.iter().map(|a| a.name()).collect::<Vec<_>>(),
                "groupByAliasToAggregateType": alias_types,
                "rewrittenQuery": info.rewritten_query,
                "hasSelectValue": info.has_select_value,
                "dCountInfo": Value::Null,
                "hasNonStreamingOrderBy": info.has_non_streaming_order_by,
            },
            "queryRanges": self.query_ranges.iter().map(|r| json!({
                "min": r.min,
                "max": r.max,
                "isMinInclusive": r.is_min_inclusive,
                "isMaxInclusive": r.is_max_inclusive,
            })).collect::<Vec<_>>(),
        })
    }

    /// Whether a gateway must leave this query to the client: it reads more than one
    /// physical partition and its results need merging (ORDER BY, aggregates, DISTINCT,
    /// GROUP BY, TOP, OFFSET/LIMIT). Then the direct query is answered with
    /// [`QueryPlan::not_servable`] and the plan; otherwise the engine serves it in one pass.
    pub fn needs_client_pipeline(&self) -> bool {
        self.ranges.len() > 1 && self.query_info.needs_merge()
    }

    /// The 400 (substatus 1004, CrossPartitionQueryNotServable) a gateway answers a direct
    /// query with when [`QueryPlan::needs_client_pipeline`]; its body's
    /// `additionalErrorInfo` is `self.to_json()` as a string.
    pub fn not_servable(&self) -> Error {
        Error::new(
            StatusCode::BadRequest,
            "The provided cross partition query can not be directly served by the gateway: it \
             needs the client to merge the results of several partition key ranges. Clients \
             run it range by range with the query plan in additionalErrorInfo.",
        )
        .with_substatus(substatus::CROSS_PARTITION_QUERY_NOT_SERVABLE)
    }

    /// The text a client sends each range: the rewritten query with the ORDER BY filter
    /// placeholder made `true` (as both SDKs do on a first pass), or `sql` itself when the
    /// plan does not rewrite it.
    pub fn range_query(&self, sql: &str) -> String {
        match self.query_info.rewritten_query.as_str() {
            "" => sql.to_string(),
            rewritten => rewritten.replace(FORMATTABLE_ORDER_BY_FILTER, "true"),
        }
    }

    /// The query features this plan needs (see [`QueryInfo::required_features`]) that
    /// `supported`, an `x-ms-cosmos-supported-query-features` header value (names separated
    /// by commas), leaves out.
    pub fn unsupported_features(&self, supported: &str) -> Vec<&'static str> {
        let offered: Vec<&str> = supported.split(',').map(str::trim).collect();
        self.query_info
            .required_features()
            .into_iter()
            .filter(|f| !offered.iter().any(|o| o.eq_ignore_ascii_case(f)))
            .collect()
    }

    /// 400 when the client's `x-ms-cosmos-supported-query-features` leave out a feature the
    /// plan needs (the Python SDK, for one, offers neither GroupBy nor NonValueAggregate);
    /// the message is the one the .NET SDK's plan check gave.
    pub fn check_features(&self, supported: &str) -> Result<()> {
        let missing = self.unsupported_features(supported);
        if missing.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = missing
            .iter()
            .map(|f| format!("Query contained {f}, which the calling client does not support."))
            .collect();
        Err(Error::bad_request(format!(
            "Query contains 1 or more unsupported features. Upgrade your SDK to a version that \
             does support the requested features:\n{}",
            lines.join("\n")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(info: QueryInfo, ranges: &[&str]) -> QueryPlan {
        QueryPlan {
            query_info: info,
            query_ranges: vec![QueryRange {
                min: String::new(),
                max: "FF".into(),
                is_min_inclusive: true,
                is_max_inclusive: false,
            }],
            ranges: ranges.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn renders_every_member_of_the_service_json() {
        let p = plan(QueryInfo::default(), &["0"]);
        assert_eq!(
            p.to_json(),
            json!({
                "partitionedQueryExecutionInfoVersion": 2,
                "queryInfo": {
                    "distinctType": "None", "top": null, "offset": null, "limit": null,
                    "orderBy": [], "orderByExpressions": [], "groupByExpressions": [],
                    "groupByAliases": [], "aggregates": [], "groupByAliasToAggregateType": {},
                    "rewrittenQuery": "", "hasSelectValue": false, "dCountInfo": null,
                    "hasNonStreamingOrderBy": false
                },
                "queryRanges": [{"min": "", "max": "FF", "isMinInclusive": true,
                                 "isMaxInclusive": false}]
            })
        );
    }

    #[test]
    fn renders_grouped_aggregates_with_null_for_plain_members() {
        let info = QueryInfo {
            group_by_expressions: vec!["c.team".into()],
            group_by_aliases: vec!["team".into(), "n".into()],
            group_by_alias_to_aggregate_type: vec![
                ("team".into(), None),
                ("n".into(), Some(AggregateKind::Count)),
            ],
            ..QueryInfo::default()
        };
        let j = plan(info, &["0", "1"]).to_json();
        assert_eq!(
            j["queryInfo"]["groupByAliasToAggregateType"],
            json!({"team": null, "n": "Count"})
        );
    }

    #[test]
    fn a_gateway_serves_plain_or_single_range_queries_itself() {
        let top = QueryInfo {
            top: Some(5),
            ..QueryInfo::default()
        };
        assert!(!plan(QueryInfo::default(), &["0", "1"]).needs_client_pipeline());
        assert!(!plan(top.clone(), &["0"]).needs_client_pipeline());
        assert!(plan(top, &["0", "1"]).needs_client_pipeline());
        let e = plan(QueryInfo::default(), &["0"]).not_servable();
        assert_eq!(e.status, StatusCode::BadRequest);
        assert_eq!(e.substatus, substatus::CROSS_PARTITION_QUERY_NOT_SERVABLE);
    }

    #[test]
    fn refuses_features_the_client_does_not_offer() {
        let grouped = QueryInfo {
            group_by_expressions: vec!["c.a".into()],
            group_by_aliases: vec!["a".into()],
            group_by_alias_to_aggregate_type: vec![("a".into(), None)],
            ..QueryInfo::default()
        };
        let p = plan(grouped, &["0", "1"]);
        // The Python SDK's list (cosmos_client_connection._GetQueryPlanThroughGateway).
        let python =
            "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top";
        assert_eq!(p.unsupported_features(python), vec!["GroupBy"]);
        let e = p.check_features(python).unwrap_err();
        assert_eq!(e.status, StatusCode::BadRequest);
        assert!(
            e.message.contains("Query contained GroupBy"),
            "{}",
            e.message
        );
        assert!(p.check_features("GroupBy, OrderBy").is_ok());
    }

    #[test]
    fn a_range_gets_the_rewrite_with_the_placeholder_made_true() {
        let info = QueryInfo {
            rewritten_query: format!("SELECT c._rid FROM c WHERE ({FORMATTABLE_ORDER_BY_FILTER})"),
            ..QueryInfo::default()
        };
        assert_eq!(
            plan(info, &["0"]).range_query("SELECT * FROM c"),
            "SELECT c._rid FROM c WHERE (true)"
        );
        assert_eq!(
            plan(QueryInfo::default(), &["0"]).range_query("SELECT * FROM c"),
            "SELECT * FROM c"
        );
    }
}
