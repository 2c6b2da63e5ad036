//! FROM (docs: nosql/query/from.md, object-array.md "Iteration", subquery.md FROM-less
//! examples): aliases, ROOT, `x IN c.arr`, a property path as the source, no FROM at all.

use serde_json::{Value, json};

use crate::support::query_db::{Db, empty};

/// scripts/from/seed.json
fn tech_support() -> Vec<Value> {
    vec![
        json!({"id": "3719350841", "name": "Tijana Stanković", "workLocation": {"office": "Redmond, WA"}, "team": "Tech support"}),
        json!({"id": "6072808750", "name": "Jean Nadeau", "workLocation": {"type": "Remote"}, "team": "Tech support"}),
    ]
}

/// scripts/from-field/seed.json
fn retail_support() -> Vec<Value> {
    vec![
        json!({"id": "6339549442", "name": "Cris Barros", "employment": {"hireDateTime": "2023-01-01T06:30:00.000Z", "weeklyHours": 40, "team": "Retail support"}}),
        json!({"id": "5859346714", "name": "Eduarda Dias", "employment": {"hireDateTime": "2023-01-01T09:30:00.000Z", "team": "Retail support"}}),
        json!({"id": "4968499169", "name": "Darweshi Mhina", "employment": {"hireDateTime": "2023-01-01T15:30:00.000Z", "weeklyHours": 32, "team": "Retail support"}}),
    ]
}

/// object-array.md (an `id` added: the store requires one).
fn fins() -> Vec<Value> {
    vec![json!({
        "id": "a0151c77-ffc3-4fa6-a495-7b53d936faa6",
        "name": "Sondon Fins",
        "categories": [{"name": "swim"}, {"name": "gear"}],
        "metadata": {"sku": "73310", "manufacturer": "AdventureWorks"},
        "priceInUSD": 132.35,
        "priceInCAD": 174.50
    })]
}

#[test]
fn the_container_is_aliased() {
    // scripts/from
    let db = Db::new(&tech_support());
    db.unordered(
        r#"SELECT VALUE {
    name: e.name,
    location: e.workLocation
}
FROM
    employees e
WHERE
    e.team = "Tech support""#,
        json!([
            {"name": "Tijana Stanković", "location": {"office": "Redmond, WA"}},
            {"name": "Jean Nadeau", "location": {"type": "Remote"}}
        ]),
    );
    // from.md: `FROM products AS p` and `FROM products p` are the same.
    for sql in [
        "SELECT p.id FROM products AS p",
        "SELECT p.id FROM products p",
    ] {
        db.unordered(sql, json!([{"id": "3719350841"}, {"id": "6072808750"}]));
    }
}

#[test]
fn any_container_name_enumerates_the_container() {
    // from.md: "SELECT * FROM products enumerates over an entire container regardless of the name"
    let db = Db::new(&tech_support());
    for sql in [
        "SELECT * FROM products",
        "SELECT * FROM employees",
        "SELECT * FROM c",
        "SELECT * FROM ROOT",
        "SELECT * FROM root",
    ] {
        db.unordered(sql, json!(tech_support()));
    }
    // Unaliased, the container name itself is the alias.
    db.unordered(
        "SELECT products.id FROM products",
        json!([{"id": "3719350841"}, {"id": "6072808750"}]),
    );
    db.unordered(
        "SELECT VALUE r.name FROM ROOT r",
        json!(["Tijana Stanković", "Jean Nadeau"]),
    );
    db.unordered(
        "SELECT VALUE root.name FROM root",
        json!(["Tijana Stanković", "Jean Nadeau"]),
    );
}

#[test]
fn an_aliased_source_loses_its_name() {
    let db = Db::new(&tech_support());
    // from.md: "SELECT products.id FROM products p is syntactically invalid"
    db.bad_request("SELECT products.id FROM products p");
    // from.md: "SELECT id FROM products p is syntactically invalid" (unqualified property)
    db.bad_request("SELECT id FROM products p");
}

#[test]
fn aliases_must_be_unique() {
    // from.md remarks: "All aliases provided or inferred in the <from_source>(s) must be unique."
    let db = Db::new(&fins());
    db.bad_request("SELECT VALUE 1 FROM p JOIN p IN p.categories");
    db.bad_request("SELECT VALUE 1 FROM p JOIN c IN p.categories JOIN c IN p.categories");
}

#[test]
fn a_subtree_can_be_the_source() {
    // scripts/from-field
    let db = Db::new(&retail_support());
    db.unordered(
        r#"SELECT 
    *
FROM
    employees.employment e
WHERE
    e.team = "Retail support""#,
        json!([
            {"hireDateTime": "2023-01-01T06:30:00.000Z", "weeklyHours": 40, "team": "Retail support"},
            {"hireDateTime": "2023-01-01T09:30:00.000Z", "team": "Retail support"},
            {"hireDateTime": "2023-01-01T15:30:00.000Z", "weeklyHours": 32, "team": "Retail support"}
        ]),
    );
    // `c.name` and `c["name"]` are the same container expression.
    db.unordered(
        r#"SELECT VALUE e.weeklyHours FROM employees["employment"] e"#,
        json!([40, 32]),
    );
}

#[test]
fn a_subtree_source_without_alias_is_named_after_its_last_property() {
    // from.md: "If the expression is <container_expression>, then property_name is used as an
    // alias."
    let db = Db::new(&retail_support());
    db.unordered(
        "SELECT VALUE employment.weeklyHours FROM employees.employment",
        json!([40, 32]),
    );
}

#[test]
fn missing_subtrees_are_skipped() {
    // from.md: "If a container expression accesses properties or array elements and that value
    // doesn't exist, that value is ignored and not processed further."
    let db = Db::new(&[
        json!({"id": "1", "a": {"b": {"v": 1}}, "arr": [{"v": 10}, {"v": 11}]}),
        json!({"id": "2", "a": {"c": 2}, "arr": []}),
        json!({"id": "3", "a": 5}),
        json!({"id": "4"}),
    ]);
    db.unordered("SELECT * FROM c.a.b x", json!([{"v": 1}]));
    db.unordered(
        "SELECT VALUE x FROM c.a x",
        json!([{"b": {"v": 1}}, {"c": 2}, 5]),
    );
    db.unordered("SELECT * FROM c.arr[1] x", json!([{"v": 11}]));
    db.unordered("SELECT VALUE x.v FROM c.arr[0] x", json!([10]));
}

#[test]
fn a_path_source_yields_the_value_whole() {
    // Without IN, an array-valued source is one value per item, not its elements.
    let db = Db::new(&[
        json!({"id": "1", "tags": ["a", "b"]}),
        json!({"id": "2", "tags": ["c"]}),
    ]);
    db.unordered("SELECT VALUE t FROM c.tags t", json!([["a", "b"], ["c"]]));
    db.unordered("SELECT * FROM c.tags t", json!([["a", "b"], ["c"]]));
    db.unordered("SELECT VALUE t[0] FROM c.tags t", json!(["a", "c"]));
}

#[test]
fn in_iterates_arrays() {
    // object-array.md "Iteration"
    let db = Db::new(&fins());
    db.ordered(
        "SELECT
    *
FROM 
  products IN products.categories",
        json!([{"name": "swim"}, {"name": "gear"}]),
    );
    db.ordered(
        r#"SELECT VALUE
    p.name
FROM
    p IN p.categories
WHERE
    p.name LIKE "ge%""#,
        json!(["gear"]),
    );
    db.ordered(
        "SELECT VALUE
    COUNT(1)
FROM
    p IN p.categories",
        json!([2]),
    );
}

#[test]
fn in_ignores_values_that_are_not_arrays() {
    // from.md: "Any value returned by underlying container expression that isn't an array is
    // ignored."
    let db = Db::new(&[
        json!({"id": "1", "tags": ["a", "b"]}),
        json!({"id": "2", "tags": "a"}),
        json!({"id": "3", "tags": {"0": "a"}}),
        json!({"id": "4", "tags": null}),
        json!({"id": "5"}),
        json!({"id": "6", "tags": []}),
        json!({"id": "7", "tags": ["c"]}),
    ]);
    db.unordered("SELECT VALUE t FROM t IN c.tags", json!(["a", "b", "c"]));
    db.unordered("SELECT * FROM t IN c.tags", json!(["a", "b", "c"]));
}

#[test]
fn in_over_a_nested_path_and_elements() {
    let db = Db::new(&[json!({
        "id": "1",
        "grid": [[1, 2], [3]],
        "o": {"list": [{"k": "x"}, {"k": "y"}]}
    })]);
    db.ordered("SELECT VALUE r FROM r IN c.grid", json!([[1, 2], [3]]));
    db.ordered("SELECT VALUE n FROM n IN c.grid[0]", json!([1, 2]));
    db.ordered("SELECT VALUE e.k FROM e IN c.o.list", json!(["x", "y"]));
    db.ordered(
        r#"SELECT VALUE e.k FROM e IN c["o"]["list"]"#,
        json!(["x", "y"]),
    );
}

#[test]
fn no_from_clause() {
    let db = empty();
    // subquery.md
    db.ordered("SELECT\n    1 AS a,\n    2 AS b", json!([{"a": 1, "b": 2}]));
    db.ordered("SELECT VALUE 1", json!([1]));
    // A FROM-less query may still filter its one row (subquery.md uses `SELECT p.name WHERE …`).
    db.ordered("SELECT VALUE 1 WHERE true", json!([1]));
    db.ordered("SELECT VALUE 1 WHERE false", json!([]));
    // from.md: FROM is needed as soon as the source is projected.
    db.bad_request("SELECT c.id");
}

#[test]
fn a_from_less_query_does_not_read_the_container() {
    let db = Db::new(&tech_support());
    db.ordered("SELECT VALUE 'once'", json!(["once"]));
    db.ordered("SELECT COUNT(1) AS n", json!([{"n": 1}]));
}
