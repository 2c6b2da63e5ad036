//! The plan of each query shape, against the service's own plans (the .NET SDK's
//! `QueryPlanBaselineTests.*.xml`, whose rewritten queries are quoted here where this
//! printer writes them the same way) and the members the SDKs read.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::*;
use crate::store::catalog::{ContainerDef, Throughput};
use crate::store::partition_key::PartitionKeyDefinition;
use crate::store::ranges::initial_layout;

const PH: &str = FORMATTABLE_ORDER_BY_FILTER;

fn container(paths: &[&str], ranges: usize) -> ContainerDef {
    ContainerDef {
        id: "c".into(),
        database: "db".into(),
        rid: 1,
        db_rid: 1,
        ts: 0,
        partition_key: PartitionKeyDefinition::new(paths.iter().map(|p| p.to_string()).collect())
            .expect("partition key"),
        throughput: Throughput::Manual(400),
        max_partition_bytes: 1 << 30,
        max_logical_partition_bytes: 1 << 30,
        default_ttl: None,
        unique_key_policy: Default::default(),
        indexing_policy: Default::default(),
        enforce_throughput: false,
        feed_previous_images: false,
        next_range_id: ranges as u32,
        ranges: initial_layout(ranges),
        retired_ranges: Vec::new(),
        index_generation: 0,
        index_string_bytes: crate::store::index::STRING_BYTES,
        index_build: None,
        retired_index_generations: Vec::new(),
        vector_embedding_policy: None,
        full_text_policy: None,
        range_name_cache: Default::default(),
    }
}

fn parsed(sql: &str) -> Query {
    let q = crate::query::syntax::parser::parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    crate::query::syntax::check::check(&q).unwrap_or_else(|e| panic!("{sql}: {e}"));
    q
}

fn params(list: &[(&str, Value)]) -> HashMap<String, Val> {
    list.iter()
        .map(|(k, v)| (k.to_string(), Val::from_json(v)))
        .collect()
}

/// The plan of `sql` on a `/key` container with four ranges.
fn plan_of(sql: &str) -> PartitionedPlan {
    plan_on(sql, &container(&["/key"], 4), &[])
}

fn plan_on(sql: &str, def: &ContainerDef, list: &[(&str, Value)]) -> PartitionedPlan {
    let p = plan(&parsed(sql), def, &params(list), None).unwrap_or_else(|e| panic!("{sql}: {e}"));
    runs(&p.info.rewritten_query);
    p
}

/// A rewritten query, its placeholder made `true` as the SDKs make it, is a query this
/// engine parses and accepts.
fn runs(rewritten: &str) {
    if rewritten.is_empty() {
        return;
    }
    parsed(&rewritten.replace(PH, "true"));
}

fn whole_space() -> Vec<QueryRange> {
    vec![QueryRange {
        min: String::new(),
        max: "FF".into(),
        is_min_inclusive: true,
        is_max_inclusive: false,
    }]
}

#[test]
fn order_by_selects_rid_order_by_items_and_the_item_as_payload() {
    // QueryPlanBaselineTests.OrderBy: "SELECT * ORDER BY Non Partition Key".
    let p = plan_of("SELECT * FROM Root r ORDER BY r.blah");
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT r._rid, [{{\"item\": r.blah}}] AS orderByItems, r AS payload\nFROM Root AS r\n\
             WHERE ({PH})\nORDER BY r.blah"
        )
    );
    assert_eq!(p.info.order_by, vec![SortOrder::Ascending]);
    assert_eq!(p.info.order_by_expressions, vec!["r.blah"]);
    assert_eq!(p.info.distinct_type, DistinctType::None);
    assert!(!p.info.has_select_value);
    assert_eq!(p.ranges, whole_space());
    assert_eq!(p.physical, vec![0, 1, 2, 3]);
}

#[test]
fn order_by_keeps_the_filter_beside_the_placeholder() {
    // "SELECT * ORDER BY With Filter", and its single point range.
    let p = plan_of("SELECT * FROM Root r WHERE r.key = 'key' ORDER BY r.key DESC");
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT r._rid, [{{\"item\": r.key}}] AS orderByItems, r AS payload\nFROM Root AS r\n\
             WHERE ((r.key = \"key\") AND ({PH}))\nORDER BY r.key DESC"
        )
    );
    assert_eq!(p.info.order_by, vec![SortOrder::Descending]);
    assert_eq!(p.ranges.len(), 1);
    assert!(p.ranges[0].is_min_inclusive && p.ranges[0].is_max_inclusive);
    assert_eq!(p.ranges[0].min, p.ranges[0].max);
    assert_eq!(p.physical.len(), 1);
}

#[test]
fn multi_order_by_with_projection_and_top() {
    // QueryPlanBaselineTests.MultiOrderBy: TOP stays in each range's query.
    let p = plan_of(
        "SELECT TOP 10 c.property1, c.property2 FROM c WHERE c.property4 = 'asdf' \
         ORDER BY c.orderByField1 ASC, c.orderByField2 DESC",
    );
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT TOP 10 c._rid, [{{\"item\": c.orderByField1}}, {{\"item\": c.orderByField2}}] \
             AS orderByItems, {{\"property1\": c.property1, \"property2\": c.property2}} AS payload\n\
             FROM c\nWHERE ((c.property4 = \"asdf\") AND ({PH}))\n\
             ORDER BY c.orderByField1 ASC, c.orderByField2 DESC"
        )
    );
    assert_eq!(
        p.info.order_by,
        vec![SortOrder::Ascending, SortOrder::Descending]
    );
    assert_eq!(p.info.top, Some(10));
    assert_eq!(p.info.required_features(), vec!["MultipleOrderBy", "Top"]);
}

#[test]
fn order_by_a_value_keeps_only_defined_values() {
    let p = plan_of("SELECT VALUE c.name FROM c ORDER BY c.age OFFSET 2 LIMIT 3");
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT c._rid, [{{\"item\": c.age}}] AS orderByItems, c.name AS payload\nFROM c\n\
             WHERE (({PH}) AND IS_DEFINED(c.name))\nORDER BY c.age\nOFFSET 0 LIMIT 5"
        )
    );
    assert!(p.info.has_select_value);
    assert_eq!((p.info.offset, p.info.limit), (Some(2), Some(3)));
}

#[test]
fn order_by_with_joins_keeps_them_in_each_range() {
    let p = plan_of("SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t > 1 ORDER BY c.n");
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT c._rid, [{{\"item\": c.n}}] AS orderByItems, {{\"id\": c.id, \"tag\": t}} AS \
             payload\nFROM c\nJOIN t IN c.tags\nWHERE ((t > 1) AND ({PH}))\nORDER BY c.n"
        )
    );
}

#[test]
fn value_aggregates_return_one_partial_per_range() {
    // QueryPlanBaselineTests.Aggregates.
    let cases = [
        (
            "SELECT VALUE COUNT(1) FROM c",
            "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM c",
            AggregateKind::Count,
        ),
        (
            "SELECT VALUE SUM(c.blah) FROM c",
            "SELECT VALUE [{\"item\": SUM(c.blah)}]\nFROM c",
            AggregateKind::Sum,
        ),
        (
            "SELECT VALUE AVG(c.blah) FROM c",
            "SELECT VALUE [{\"item\": {\"sum\": SUM(c.blah), \"count\": COUNT(c.blah)}}]\nFROM c",
            AggregateKind::Average,
        ),
        (
            "SELECT VALUE MIN(c.blah) FROM c WHERE c.key = 1",
            "SELECT VALUE [{\"item\": MIN(c.blah), \"item2\": {\"min\": MIN(c.blah), \"count\": \
             COUNT(c.blah)}}]\nFROM c\nWHERE (c.key = 1)",
            AggregateKind::Min,
        ),
        (
            "SELECT VALUE MAX(c.blah) FROM c",
            "SELECT VALUE [{\"item\": MAX(c.blah), \"item2\": {\"max\": MAX(c.blah), \"count\": \
             COUNT(c.blah)}}]\nFROM c",
            AggregateKind::Max,
        ),
    ];
    for (sql, rewritten, kind) in cases {
        let p = plan_of(sql);
        assert_eq!(p.info.rewritten_query, rewritten, "{sql}");
        assert_eq!(p.info.aggregates, vec![kind], "{sql}");
        assert!(p.info.has_select_value, "{sql}");
        assert!(p.info.group_by_aliases.is_empty(), "{sql}");
        assert_eq!(p.info.required_features(), vec!["Aggregate"], "{sql}");
    }
}

#[test]
fn aggregates_leave_top_and_offset_to_the_client() {
    // "TOP with Aggregate" and "OFFSET LIMIT and partition filter but aggregates".
    let p = plan_of("SELECT TOP 5 VALUE AVG(c.name) FROM c");
    assert_eq!(p.info.top, Some(5));
    assert_eq!(
        p.info.rewritten_query,
        "SELECT VALUE [{\"item\": {\"sum\": SUM(c.name), \"count\": COUNT(c.name)}}]\nFROM c"
    );
    let p = plan_of("SELECT VALUE COUNT(1) FROM c WHERE c.key = 5 OFFSET 1 LIMIT 2");
    assert_eq!((p.info.offset, p.info.limit), (Some(1), Some(2)));
    assert_eq!(
        p.info.rewritten_query,
        "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM c\nWHERE (c.key = 5)"
    );
}

#[test]
fn aggregates_without_value_are_a_payload_of_aliases() {
    // QueryPlanBaselineTests.NonValueAggregates: "Multiple Aggregates (SUM) mixed alias".
    let p = plan_of("SELECT SUM(c.blah) AS sum_blah, MIN(c.blah) FROM c");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT {\"sum_blah\": {\"item\": SUM(c.blah)}, \"$1\": {\"item\": MIN(c.blah), \
         \"item2\": {\"min\": MIN(c.blah), \"count\": COUNT(c.blah)}}} AS payload\nFROM c"
    );
    assert!(p.info.aggregates.is_empty());
    assert_eq!(p.info.group_by_aliases, vec!["sum_blah", "$1"]);
    assert_eq!(
        p.info.group_by_alias_to_aggregate_type,
        vec![
            ("sum_blah".to_string(), Some(AggregateKind::Sum)),
            ("$1".to_string(), Some(AggregateKind::Min)),
        ]
    );
    assert!(!p.info.has_select_value);
    assert_eq!(
        p.info.required_features(),
        vec!["NonValueAggregate", "MultipleAggregates"]
    );
}

#[test]
fn group_by_returns_group_items_and_a_payload() {
    // QueryPlanBaselineTests.GroupBy: "GROUP BY with aggregates".
    let p = plan_of(
        "SELECT c.team, c.name, COUNT(1) AS count, AVG(c.age) AS avg_age, MIN(c.age) AS min_age, \
         MAX(c.age) AS max_age FROM c GROUP BY c.team, c.name",
    );
    assert_eq!(
        p.info.rewritten_query,
        "SELECT [{\"item\": c.team}, {\"item\": c.name}] AS groupByItems, {\"team\": c.team, \
         \"name\": c.name, \"count\": {\"item\": COUNT(1)}, \"avg_age\": {\"item\": {\"sum\": \
         SUM(c.age), \"count\": COUNT(c.age)}}, \"min_age\": {\"item\": MIN(c.age), \"item2\": \
         {\"min\": MIN(c.age), \"count\": COUNT(c.age)}}, \"max_age\": {\"item\": MAX(c.age), \
         \"item2\": {\"max\": MAX(c.age), \"count\": COUNT(c.age)}}} AS payload\nFROM c\n\
         GROUP BY c.team, c.name"
    );
    assert_eq!(p.info.group_by_expressions, vec!["c.team", "c.name"]);
    assert_eq!(
        p.info.group_by_aliases,
        vec!["team", "name", "count", "avg_age", "min_age", "max_age"]
    );
    assert_eq!(
        p.info.group_by_alias_to_aggregate_type[..3],
        [
            ("team".to_string(), None),
            ("name".to_string(), None),
            ("count".to_string(), Some(AggregateKind::Count)),
        ]
    );
    assert!(p.info.aggregates.is_empty());
    assert!(
        p.info.required_features().contains(&"GroupBy"),
        "{:?}",
        p.info.required_features()
    );
}

#[test]
fn group_by_with_value() {
    // "SELECT VALUE", "SELECT VALUE aggregate average", "Non property reference without an
    // alias" and "TOP with GROUP BY".
    let p = plan_of("SELECT TOP 5 VALUE c.age FROM c GROUP BY c.age");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT [{\"item\": c.age}] AS groupByItems, c.age AS payload\nFROM c\nGROUP BY c.age"
    );
    assert!(p.info.has_select_value);
    assert_eq!(p.info.top, Some(5));
    let p = plan_of("SELECT VALUE AVG(c.age) FROM c GROUP BY c.age");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT [{\"item\": c.age}] AS groupByItems, [{\"item\": {\"sum\": SUM(c.age), \"count\": \
         COUNT(c.age)}}] AS payload\nFROM c\nGROUP BY c.age"
    );
    assert_eq!(p.info.aggregates, vec![AggregateKind::Average]);
    let p = plan_of("SELECT c.name, UPPER(c.name) FROM c GROUP BY c.name");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT [{\"item\": c.name}] AS groupByItems, {\"name\": c.name, \"$1\": UPPER(c.name)} \
         AS payload\nFROM c\nGROUP BY c.name"
    );
}

#[test]
fn distinct_is_ordered_only_when_the_order_is_the_value() {
    // QueryPlanBaselineTests.Distinct and DistinctQueryType.cs.
    let p = plan_of("SELECT DISTINCT c.blah FROM c");
    assert_eq!(p.info.distinct_type, DistinctType::Unordered);
    assert_eq!(p.info.rewritten_query, "");
    let p = plan_of("SELECT DISTINCT VALUE c.blah FROM c ORDER BY c.blah");
    assert_eq!(p.info.distinct_type, DistinctType::Ordered);
    assert_eq!(
        p.info.rewritten_query,
        format!(
            "SELECT c._rid, [{{\"item\": c.blah}}] AS orderByItems, c.blah AS payload\nFROM c\n\
             WHERE (({PH}) AND IS_DEFINED(c.blah))\nORDER BY c.blah"
        )
    );
    for sql in [
        "SELECT DISTINCT VALUE c.name FROM c ORDER BY c.age",
        "SELECT DISTINCT c.name FROM c ORDER BY c.name",
    ] {
        assert_eq!(
            plan_of(sql).info.distinct_type,
            DistinctType::Unordered,
            "{sql}"
        );
    }
    // "TOP with DISTINCT": each range returns all its distinct values.
    let p = plan_of("SELECT DISTINCT TOP 5 VALUE c.name FROM c");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT DISTINCT VALUE c.name\nFROM c"
    );
    assert_eq!(p.info.top, Some(5));
    // An ordered DISTINCT with TOP: the ranges give every row, the client stops.
    let p = plan_of("SELECT DISTINCT TOP 2 VALUE c.n FROM c ORDER BY c.n");
    assert!(p.info.rewritten_query.starts_with("SELECT c._rid"));
}

#[test]
fn offset_limit_becomes_a_limit_per_range() {
    // QueryPlanBaselineTests.OffsetLimit.
    let p = plan_of("SELECT * FROM c OFFSET 1 LIMIT 2");
    assert_eq!(p.info.rewritten_query, "SELECT *\nFROM c\nOFFSET 0 LIMIT 3");
    assert_eq!((p.info.offset, p.info.limit), (Some(1), Some(2)));
    assert_eq!(p.info.required_features(), vec!["OffsetAndLimit"]);
    let p = plan_on(
        "SELECT * FROM c OFFSET @OFFSETCOUNT LIMIT @LIMITCOUNT",
        &container(&["/key"], 4),
        &[("OFFSETCOUNT", json!(42)), ("LIMITCOUNT", json!(1337))],
    );
    assert_eq!(
        p.info.rewritten_query,
        "SELECT *\nFROM c\nOFFSET 0 LIMIT 1379"
    );
    assert_eq!((p.info.offset, p.info.limit), (Some(42), Some(1337)));
    let p = plan_of("SELECT * FROM c WHERE c.blah = 5 OFFSET 1 LIMIT 2");
    assert_eq!(
        p.info.rewritten_query,
        "SELECT *\nFROM c\nWHERE (c.blah = 5)\nOFFSET 0 LIMIT 3"
    );
    // "OFFSET LIMIT and partition filter": one logical partition runs it all.
    assert_eq!(
        plan_of("SELECT * FROM c WHERE c.key = 5 OFFSET 1 LIMIT 2").info,
        QueryInfo::default()
    );
    // "... but distinct": the client skips and takes after deduplicating.
    let p = plan_of("SELECT DISTINCT * FROM c WHERE c.key = 5 OFFSET 1 LIMIT 2");
    assert_eq!(p.info.distinct_type, DistinctType::Unordered);
    assert_eq!(
        p.info.rewritten_query,
        "SELECT DISTINCT *\nFROM c\nWHERE (c.key = 5)"
    );
}

#[test]
fn top_alone_sends_the_query_as_it_is() {
    // QueryPlanBaselineTests.Top.
    let p = plan_of("SELECT TOP 5 * FROM c");
    assert_eq!(p.info.top, Some(5));
    assert_eq!(p.info.rewritten_query, "");
    let p = plan_on(
        "SELECT TOP @TOPCOUNT * FROM c",
        &container(&["/key"], 4),
        &[("TOPCOUNT", json!(42))],
    );
    assert_eq!(p.info.top, Some(42));
    assert_eq!(p.info.required_features(), vec!["Top"]);
}

#[test]
fn plain_queries_need_nothing_of_the_client() {
    for sql in [
        "SELECT * FROM c",
        "SELECT c.a, c.b FROM c WHERE c.x > 1",
        "SELECT VALUE c.a FROM c JOIN t IN c.tags",
    ] {
        let p = plan_of(sql);
        assert_eq!(p.info.rewritten_query, "", "{sql}");
        assert!(!p.info.needs_merge(), "{sql}");
        assert!(p.info.required_features().is_empty(), "{sql}");
    }
}

#[test]
fn query_ranges_follow_the_partition_key_routing() {
    let def = container(&["/pk"], 4);
    // reference/gateway.md §6: the Python SDK gives "p1" this EPK on a /pk V2 container.
    let p = plan_on("SELECT * FROM c WHERE c.pk = 'p1'", &def, &[]);
    assert_eq!(
        p.ranges,
        vec![QueryRange {
            min: "062B23DEC15212F01B9A85F4E93A940C".into(),
            max: "062B23DEC15212F01B9A85F4E93A940C".into(),
            is_min_inclusive: true,
            is_max_inclusive: true,
        }]
    );
    assert_eq!(p.physical, vec![0]);
    // An IN list: one point each, in EPK order ("p1" before 42's 08E6...).
    let p = plan_on("SELECT * FROM c WHERE c.pk IN (42, 'p1')", &def, &[]);
    let mins: Vec<&str> = p.ranges.iter().map(|r| r.min.as_str()).collect();
    assert_eq!(
        mins,
        vec![
            "062B23DEC15212F01B9A85F4E93A940C",
            "08E6D561F6FD951DCC25E7E4EA2884B5"
        ]
    );
    // A parameter binds as a literal does.
    let p = plan_on(
        "SELECT * FROM c WHERE c.pk = @k",
        &def,
        &[("k", json!(true))],
    );
    assert_eq!(p.ranges[0].min, "0E711127C5B5A8E4726AC6DD306A3E59");
    // No key: the whole space, every range.
    let p = plan_on("SELECT * FROM c WHERE c.n = 1", &def, &[]);
    assert_eq!(p.ranges, whole_space());
    assert_eq!(p.physical.len(), 4);
    // Without FROM: the first range's empty point (the service's plan for `SELECT 5`).
    let p = plan_on("SELECT 5", &def, &[]);
    assert_eq!(p.ranges[0].min, "");
    assert_eq!(p.ranges[0].max, "");
    assert!(p.ranges[0].is_max_inclusive);
    assert_eq!(p.physical, vec![0]);
}

#[test]
fn a_hierarchical_prefix_gives_a_range() {
    let def = container(&["/tenant", "/user"], 4);
    let p = plan_on("SELECT * FROM c WHERE c.tenant = 'a'", &def, &[]);
    assert_eq!(p.ranges.len(), 1);
    let r = &p.ranges[0];
    assert!(r.is_min_inclusive && !r.is_max_inclusive);
    assert_eq!(r.max, format!("{}FF", r.min));
    let p = plan_on(
        "SELECT * FROM c WHERE c.tenant = 'a' AND c.user = 1",
        &def,
        &[],
    );
    assert!(p.ranges[0].is_max_inclusive);
    assert_eq!(p.ranges[0].min, p.ranges[0].max);
}

#[test]
fn a_request_partition_key_routes_like_a_filter() {
    let def = container(&["/pk"], 4);
    let q = parsed("SELECT * FROM c ORDER BY c.n");
    let p = plan(&q, &def, &HashMap::new(), Some(&json!("p1"))).expect("plan");
    assert_eq!(p.ranges[0].min, "062B23DEC15212F01B9A85F4E93A940C");
    assert_eq!(p.physical.len(), 1);
}

#[test]
fn compositions_of_aggregates_are_refused_across_ranges() {
    // QueryPlanBaselineTests.Negative: "Agggregates in Object / Array / System Function".
    for sql in [
        "SELECT VALUE {'sum': SUM(c.n)} FROM c",
        "SELECT VALUE [SUM(c.n)] FROM c",
        "SELECT VALUE FLOOR(AVG(c.n)) FROM c",
        "SELECT c.name, ABS(AVG(c.age)) AS a FROM c GROUP BY c.name",
    ] {
        let e = plan(
            &parsed(sql),
            &container(&["/key"], 4),
            &HashMap::new(),
            None,
        )
        .expect_err(sql);
        assert_eq!(e.status, crate::error::StatusCode::BadRequest, "{sql}");
        assert!(e.message.contains("Compositions"), "{sql}: {}", e.message);
        assert!(e.line.is_some() && e.column.is_some(), "{sql}");
        // On one range nothing is merged: the query goes as it is.
        let one = plan_on(sql, &container(&["/key"], 1), &[]);
        assert_eq!(one.info, QueryInfo::default(), "{sql}");
    }
}

#[test]
fn ranked_search_is_not_planned() {
    let e = plan(
        &parsed("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, ['swim'])"),
        &container(&["/key"], 4),
        &HashMap::new(),
        None,
    )
    .expect_err("ranked search");
    assert_eq!(e.status, crate::error::StatusCode::BadRequest);
    assert!(e.line.is_some());
}

#[test]
fn a_vector_distance_order_sorts_by_its_metric_on_the_client() {
    // QueryPlanBaselineTests.VectorSearch: cosine descends, euclidean ascends.
    let p = plan_of("SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1, 2])");
    assert_eq!(p.info.order_by, vec![SortOrder::Descending]);
    assert!(p.info.has_non_streaming_order_by);
    assert!(p.info.required_features().contains(&"NonStreamingOrderBy"));
    let p = plan_of(
        "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1, 2], false, \
         {'distanceFunction': 'euclidean'})",
    );
    assert_eq!(p.info.order_by, vec![SortOrder::Ascending]);
    assert!(
        p.info
            .rewritten_query
            .contains("ORDER BY VECTORDISTANCE(c.v, [1, 2]")
    );
}

#[test]
fn bad_counts_are_refused_with_their_position() {
    let e = plan(
        &parsed("SELECT TOP @n * FROM c"),
        &container(&["/key"], 4),
        &params(&[("n", json!(-1))]),
        None,
    )
    .expect_err("negative TOP");
    assert_eq!(e.status, crate::error::StatusCode::BadRequest);
    assert!(e.line.is_some());
}

#[test]
fn a_from_subquery_that_needs_every_range_is_refused_across_ranges() {
    for sql in [
        "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.n FROM c) d",
        "SELECT * FROM (SELECT TOP 5 * FROM c) t",
        "SELECT t.g FROM (SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g) t",
    ] {
        let e = plan(
            &parsed(sql),
            &container(&["/key"], 4),
            &HashMap::new(),
            None,
        )
        .expect_err(sql);
        assert_eq!(e.status, crate::error::StatusCode::BadRequest, "{sql}");
        assert!(e.line.is_some(), "{sql}");
        // On one range its result is the container's.
        plan_on(sql, &container(&["/key"], 1), &[]);
    }
    // A subquery that works item by item splits like the container.
    let p = plan_of("SELECT VALUE COUNT(1) FROM (SELECT c.n FROM c WHERE c.n > 1) t");
    assert_eq!(p.info.aggregates, vec![AggregateKind::Count]);
    assert_eq!(
        p.info.rewritten_query,
        "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM (SELECT c.n FROM c WHERE c.n > 1) AS t"
    );
}
