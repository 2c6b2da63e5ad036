//! GROUP BY (docs: nosql/query/group-by.md and its samples scripts/group-by,
//! group-by-aggregate, group-by-multiple): groups, aggregates per group, and the clause's
//! restrictions. Groups come back in no specified order.

use serde_json::{Value, json};

use crate::support::query_db::{self, Db};

/// scripts/group-by-aggregate/seed.json (the seed of all three examples)
fn engineers() -> Vec<Value> {
    vec![
        json!({"id": "3548979698", "name": "Jordan Mitchell", "capabilities": {"softwareDevelopment": "python", "mediaTrained": true}, "team": "Cloud software engineering"}),
        json!({"id": "4228924547", "name": "Mikaela Lee", "capabilities": {"softwareDevelopment": "javascript", "mediaTrained": false}, "team": "Cloud software engineering"}),
        json!({"id": "2941063066", "name": "Graham Barnes", "capabilities": {"softwareDevelopment": "c-sharp", "mediaTrained": true}, "team": "Cloud software engineering"}),
        json!({"id": "9318573296", "name": "Hayden Cook", "capabilities": {"softwareDevelopment": "javascript", "mediaTrained": true}, "team": "Cloud software engineering"}),
        json!({"id": "3601062997", "name": "Morgan Connors", "capabilities": {"mediaTrained": true}, "team": "Cloud software engineering"}),
        json!({"id": "7074932233", "name": "Devon Torres", "capabilities": {"softwareDevelopment": "python", "mediaTrained": false}, "team": "Cloud software engineering"}),
        json!({"id": "3798545532", "name": "Sam Centrell", "capabilities": {"softwareDevelopment": "javascript", "mediaTrained": true}, "team": "Cloud software engineering"}),
    ]
}

#[test]
fn groups_by_one_property() {
    // scripts/group-by: the item without the property forms a group of its own, shown as {}.
    // The groups of one property path come in the order of its values, undefined first, as
    // the page shows them.
    let db = Db::new(&engineers());
    db.ordered(
        r#"SELECT 
    e.capabilities.softwareDevelopment AS developmentLang
FROM
    employees e
WHERE
    e.team = "Cloud software engineering"
GROUP BY
    e.capabilities.softwareDevelopment"#,
        json!([
            {},
            {"developmentLang": "c-sharp"},
            {"developmentLang": "javascript"},
            {"developmentLang": "python"}
        ]),
    );
}

#[test]
fn counts_per_group() {
    // scripts/group-by-aggregate, in the page's order.
    let db = Db::new(&engineers());
    db.ordered(
        r#"SELECT 
    COUNT(1) AS trainedEmployees, 
    e.capabilities.softwareDevelopment AS developmentLang
FROM
    employees e
WHERE
    e.team = "Cloud software engineering"
GROUP BY
    e.capabilities.softwareDevelopment"#,
        json!([
            {"trainedEmployees": 1},
            {"trainedEmployees": 1, "developmentLang": "c-sharp"},
            {"trainedEmployees": 3, "developmentLang": "javascript"},
            {"trainedEmployees": 2, "developmentLang": "python"}
        ]),
    );
}

#[test]
fn groups_by_several_properties() {
    // scripts/group-by-multiple. Several keys keep first-seen order (the page's order on one
    // range; a fan-out meets the groups range by range).
    let db = Db::new(&engineers());
    db.unordered(
        r#"SELECT 
    COUNT(1) AS employeesWithThisTraining, 
    e.capabilities.softwareDevelopment AS developmentLang,
    e.capabilities.mediaTrained AS mediaReady
FROM
    employees e
WHERE
    e.team = "Cloud software engineering"
GROUP BY
    e.capabilities.softwareDevelopment,
    e.capabilities.mediaTrained"#,
        json!([
            {"employeesWithThisTraining": 1, "developmentLang": "python", "mediaReady": true},
            {"employeesWithThisTraining": 1, "developmentLang": "javascript", "mediaReady": false},
            {"employeesWithThisTraining": 1, "developmentLang": "c-sharp", "mediaReady": true},
            {"employeesWithThisTraining": 2, "developmentLang": "javascript", "mediaReady": true},
            {"employeesWithThisTraining": 1, "mediaReady": true},
            {"employeesWithThisTraining": 1, "developmentLang": "python", "mediaReady": false}
        ]),
    );
}

#[test]
fn select_value_of_the_group_key() {
    let db = Db::new(&engineers());
    // The undefined group's value is undefined, so it yields no result.
    db.unordered(
        "SELECT VALUE e.capabilities.softwareDevelopment FROM e GROUP BY e.capabilities.softwareDevelopment",
        json!(["c-sharp", "javascript", "python"]),
    );
    db.unordered(
        "SELECT VALUE COUNT(1) FROM e GROUP BY e.capabilities.mediaTrained",
        json!([5, 2]),
    );
}

#[test]
fn literals_functions_and_aggregates_in_the_projection() {
    // group-by.md remarks: SELECT may hold grouped properties and system functions, aggregates,
    // and literal values.
    let db = Db::new(&engineers());
    db.unordered(
        "SELECT 'lang' AS kind, UPPER(e.capabilities.softwareDevelopment) AS lang, COUNT(1) AS n
FROM e
GROUP BY UPPER(e.capabilities.softwareDevelopment)",
        json!([
            {"kind": "lang", "n": 1},
            {"kind": "lang", "lang": "C-SHARP", "n": 1},
            {"kind": "lang", "lang": "JAVASCRIPT", "n": 3},
            {"kind": "lang", "lang": "PYTHON", "n": 2}
        ]),
    );
    db.unordered(
        "SELECT e.capabilities.mediaTrained AS trained, MIN(e.name) AS first, MAX(e.name) AS last, COUNT(e.capabilities.softwareDevelopment) AS withLang
FROM e
GROUP BY e.capabilities.mediaTrained",
        json!([
            {"trained": true, "first": "Graham Barnes", "last": "Sam Centrell", "withLang": 4},
            {"trained": false, "first": "Devon Torres", "last": "Mikaela Lee", "withLang": 2}
        ]),
    );
}

#[test]
fn numeric_aggregates_per_group() {
    let db = Db::new(&[
        json!({"id": "1", "team": "a", "hours": 10}),
        json!({"id": "2", "team": "a", "hours": 20}),
        json!({"id": "3", "team": "a", "hours": 45}),
        json!({"id": "4", "team": "b", "hours": 7.5}),
        json!({"id": "5", "team": "b"}),
    ]);
    db.unordered(
        "SELECT c.team, SUM(c.hours) AS total, AVG(c.hours) AS mean, MIN(c.hours) AS least, MAX(c.hours) AS most, COUNT(1) AS n
FROM c GROUP BY c.team",
        json!([
            {"team": "a", "total": 75, "mean": 25, "least": 10, "most": 45, "n": 3},
            {"team": "b", "total": 7.5, "mean": 7.5, "least": 7.5, "most": 7.5, "n": 2}
        ]),
    );
}

#[test]
fn group_by_an_expression_over_several_properties() {
    let db = Db::new(&engineers());
    db.unordered(
        "SELECT COUNT(1) AS n FROM e GROUP BY e.capabilities.mediaTrained AND IS_DEFINED(e.capabilities.softwareDevelopment)",
        json!([{"n": 4}, {"n": 3}]),
    );
}

#[test]
fn offset_limit_follows_group_by() {
    // group-by.md: GROUP BY comes "before the OFFSET LIMIT clause".
    let db = Db::new(&engineers());
    for rows in db.each(
        "SELECT e.capabilities.softwareDevelopment AS lang FROM e GROUP BY e.capabilities.softwareDevelopment OFFSET 1 LIMIT 2",
        &[],
    ) {
        assert_eq!(rows.len(), 2, "{rows:?}");
    }
    for rows in db.each(
        "SELECT e.capabilities.softwareDevelopment AS lang FROM e GROUP BY e.capabilities.softwareDevelopment OFFSET 3 LIMIT 10",
        &[],
    ) {
        assert_eq!(rows.len(), 1, "{rows:?}");
    }
}

#[test]
fn projection_must_be_grouped_aggregated_or_literal() {
    // group-by.md remarks: the SELECT clause can only contain the subset of properties and
    // system functions included in GROUP BY, aggregates and literals.
    let db = Db::new(&engineers());
    db.bad_request("SELECT e.name FROM e GROUP BY e.team");
    db.bad_request("SELECT e.team, e.name FROM e GROUP BY e.team");
    db.bad_request("SELECT * FROM e GROUP BY e.team");
    db.bad_request("SELECT LOWER(e.name) AS n FROM e GROUP BY e.team");
}

#[test]
fn group_by_rejects_order_by() {
    // group-by.md remarks: "You can't use GROUP BY with an ORDER BY clause."
    let db = Db::new(&engineers());
    db.bad_request("SELECT e.team FROM e GROUP BY e.team ORDER BY e.team");
}

#[test]
fn group_by_rejects_aliases_subqueries_and_aggregates() {
    // group-by.md remarks: no aliases, subqueries or aggregate system functions in GROUP BY.
    let db = Db::new(&engineers());
    db.bad_request("SELECT e.team AS t FROM e GROUP BY t");
    db.bad_request("SELECT COUNT(1) AS n FROM e GROUP BY (SELECT VALUE e.team)");
    db.bad_request("SELECT COUNT(1) AS n FROM e GROUP BY COUNT(1)");
    db.bad_request("SELECT COUNT(1) AS n FROM e GROUP BY e.team AS t");
}

#[test]
fn group_by_needs_a_property_reference() {
    // group-by.md: "Each scalar expression must contain at least one property reference."
    let db = Db::new(&engineers());
    db.bad_request("SELECT COUNT(1) AS n FROM e GROUP BY 1");
    db.bad_request("SELECT COUNT(1) AS n FROM e GROUP BY 'x'");
}

#[test]
fn an_aggregate_over_a_grouped_subquery_is_not_supported() {
    // group-by.md remarks: "Queries with an aggregate system function and a subquery with
    // GROUP BY aren't supported."
    let db = Db::new(&engineers());
    db.bad_request("SELECT COUNT(1) AS n FROM (SELECT e.team FROM e GROUP BY e.team) g");
}

#[test]
fn at_most_21_aggregates_cross_partition() {
    // group-by.md remarks: "Cross-partition GROUP BY queries can have a maximum of 21
    // aggregate system functions."
    let db = Db::new(&engineers());
    let select = |n: usize| {
        (0..n)
            .map(|i| format!("COUNT(1) AS a{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ok = format!("SELECT {} FROM e GROUP BY e.team", select(21));
    for rows in db.each(&ok, &[]) {
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["a20"], json!(7));
    }
    let too_many = format!("SELECT {} FROM e GROUP BY e.team", select(22));
    let err = query_db::run(&db.engine, "many", &too_many, &[])
        .expect_err("22 aggregates in a cross-partition GROUP BY");
    assert_eq!(err.status.as_u16(), 400, "{}", err.message);
}

#[test]
fn null_and_undefined_are_different_groups() {
    let db = Db::new(&[
        json!({"id": "1", "k": null}),
        json!({"id": "2"}),
        json!({"id": "3", "k": null}),
        json!({"id": "4", "k": "a"}),
        json!({"id": "5"}),
        json!({"id": "6"}),
    ]);
    db.unordered(
        "SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k",
        json!([{"k": null, "n": 2}, {"n": 3}, {"k": "a", "n": 1}]),
    );
}

#[test]
fn groups_of_equal_numbers_and_of_structured_values() {
    let db = Db::new(&[
        json!({"id": "1", "k": 1}),
        json!({"id": "2", "k": 1.0}),
        json!({"id": "3", "k": [1, 2]}),
        json!({"id": "4", "k": [1, 2]}),
        json!({"id": "5", "k": {"a": 1}}),
        json!({"id": "6", "k": {"a": 1}}),
        json!({"id": "7", "k": "1"}),
    ]);
    db.unordered(
        "SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k",
        json!([
            {"k": 1, "n": 2},
            {"k": [1, 2], "n": 2},
            {"k": {"a": 1}, "n": 2},
            {"k": "1", "n": 1}
        ]),
    );
}

#[test]
fn aggregates_without_group_by_merge_across_partitions() {
    let docs: Vec<Value> = (1..=40)
        .map(|i| json!({"id": format!("k{i}"), "n": i}))
        .collect();
    let db = Db::new(&docs);
    db.ordered(
        "SELECT COUNT(1) AS count, SUM(c.n) AS sum, AVG(c.n) AS avg, MIN(c.n) AS min, MAX(c.n) AS max FROM c",
        json!([{"count": 40, "sum": 820, "avg": 20.5, "min": 1, "max": 40}]),
    );
    db.ordered("SELECT VALUE COUNT(1) FROM c WHERE c.n > 30", json!([10]));
    db.ordered("SELECT VALUE COUNT(1) FROM c WHERE c.n > 100", json!([0]));
    // A non-aggregated property next to an aggregate needs GROUP BY.
    db.bad_request("SELECT c.id, COUNT(1) AS n FROM c");
    // Aggregates belong to the SELECT clause only (group-by.md remarks).
    db.bad_request("SELECT VALUE c.id FROM c WHERE COUNT(1) > 1");
}
