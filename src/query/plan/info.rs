//! The query plan's `queryInfo`: what the client must do with the per-range results of the
//! rewritten query (merge by ORDER BY, combine aggregates and groups, deduplicate, skip and
//! take), in the service's terms, and the query features that asks of the client.
//!
//! Field by field this is the service's `QueryInfo` (azure-cosmos-dotnet-v3
//! `Query/Core/QueryPlan/QueryInfo.cs`), which the Python SDK reads through
//! `_execution_context/query_execution_info.py` and the Node SDK through
//! `queryExecutionContext/pipelinedQueryExecutionContext.ts`.

/// `distinctType`: how the client deduplicates. `Ordered` only when the ORDER BY makes
/// equal results adjacent (`SELECT DISTINCT VALUE c.a ... ORDER BY c.a`), so comparing with
/// the last result is enough; otherwise `Unordered`, a hash set of every result
/// (`DistinctQueryType.cs` gives exactly these examples).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DistinctType {
    #[default]
    None,
    Ordered,
    Unordered,
}

impl DistinctType {
    pub fn name(self) -> &'static str {
        match self {
            DistinctType::None => "None",
            DistinctType::Ordered => "Ordered",
            DistinctType::Unordered => "Unordered",
        }
    }
}

/// One ORDER BY item's direction, as `orderBy` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortOrder {
    Ascending,
    Descending,
}

impl SortOrder {
    pub fn name(self) -> &'static str {
        match self {
            SortOrder::Ascending => "Ascending",
            SortOrder::Descending => "Descending",
        }
    }
}

/// An aggregate the client combines, by the name `aggregates` and
/// `groupByAliasToAggregateType` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateKind {
    Count,
    Sum,
    Average,
    Min,
    Max,
}

impl AggregateKind {
    /// The kind of the built-in aggregate `name` (upper case, as the parser keeps names).
    pub fn of_function(name: &str) -> Option<AggregateKind> {
        Some(match name {
            "COUNT" => AggregateKind::Count,
            "SUM" => AggregateKind::Sum,
            "AVG" => AggregateKind::Average,
            "MIN" => AggregateKind::Min,
            "MAX" => AggregateKind::Max,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            AggregateKind::Count => "Count",
            AggregateKind::Sum => "Sum",
            AggregateKind::Average => "Average",
            AggregateKind::Min => "Min",
            AggregateKind::Max => "Max",
        }
    }
}

/// The plan's `queryInfo`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryInfo {
    pub distinct_type: DistinctType,
    pub top: Option<u64>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub order_by: Vec<SortOrder>,
    /// The ORDER BY expressions as query text.
    pub order_by_expressions: Vec<String>,
    /// The GROUP BY expressions as query text.
    pub group_by_expressions: Vec<String>,
    /// The names of the SELECT list's members, in order, for GROUP BY and for aggregates
    /// without VALUE (`$1`, `$2`, ... where the query names none).
    pub group_by_aliases: Vec<String>,
    /// The aggregates of a `SELECT VALUE <aggregate>` (empty otherwise).
    pub aggregates: Vec<AggregateKind>,
    /// Each alias of `group_by_aliases` with the aggregate it holds, if any.
    pub group_by_alias_to_aggregate_type: Vec<(String, Option<AggregateKind>)>,
    /// What the client sends each range, with the ORDER BY filter placeholder
    /// `{documentdb-formattableorderbyquery-filter}` in its WHERE clause where it orders;
    /// empty when the query itself is sent.
    pub rewritten_query: String,
    pub has_select_value: bool,
    /// ORDER BY a vector distance: the client sorts every range's results (no range streams
    /// them in a comparable order).
    pub has_non_streaming_order_by: bool,
}

impl QueryInfo {
    /// Whether the client has work to do with the ranges' results beyond concatenating them.
    pub fn needs_merge(&self) -> bool {
        self.distinct_type != DistinctType::None
            || self.top.is_some()
            || self.offset.is_some()
            || self.limit.is_some()
            || !self.order_by.is_empty()
            || !self.aggregates.is_empty()
            || !self.group_by_expressions.is_empty()
            || self.has_grouped_aggregates()
            || self.has_non_streaming_order_by
    }

    /// Aggregates of a SELECT list without VALUE (with or without GROUP BY).
    fn has_grouped_aggregates(&self) -> bool {
        self.group_by_alias_to_aggregate_type
            .iter()
            .any(|(_, a)| a.is_some())
    }

    /// The query features (the names of `x-ms-cosmos-supported-query-features`) a client
    /// needs to run this plan, as the .NET SDK's `QueryPlanSupportChecker` derived them
    /// before the service took the check over: one aggregate is `Aggregate` with VALUE and
    /// `NonValueAggregate` without; several are `NonValueAggregate` and
    /// `MultipleAggregates`; one ORDER BY item is `OrderBy`, more `MultipleOrderBy`; then
    /// `Distinct`, `GroupBy`, `OffsetAndLimit`, `Top`, and `NonStreamingOrderBy` for a
    /// vector-distance ORDER BY.
    pub fn required_features(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let grouped = self
            .group_by_alias_to_aggregate_type
            .iter()
            .filter(|(_, a)| a.is_some())
            .count();
        if !self.aggregates.is_empty() || grouped > 0 {
            if self.aggregates.len() == 1 || grouped == 1 {
                out.push(if self.has_select_value {
                    "Aggregate"
                } else {
                    "NonValueAggregate"
                });
            } else {
                out.extend(["NonValueAggregate", "MultipleAggregates"]);
            }
        }
        if self.distinct_type != DistinctType::None {
            out.push("Distinct");
        }
        if !self.group_by_expressions.is_empty() {
            out.push("GroupBy");
        }
        if self.offset.is_some() || self.limit.is_some() {
            out.push("OffsetAndLimit");
        }
        match self.order_by.len() {
            0 => {}
            1 => out.push("OrderBy"),
            _ => out.push("MultipleOrderBy"),
        }
        if self.top.is_some() {
            out.push("Top");
        }
        if self.has_non_streaming_order_by {
            out.push("NonStreamingOrderBy");
        }
        out
    }
}
