//! SELECT (docs: nosql/query/select.md, working-with-json.md, object-array.md, keywords.md
//! DISTINCT and TOP, logical-operators.md `*`, parameterized-queries.md): the documentation's
//! sample items and expected results through `Engine::query`.

use serde_json::{Value, json};

use crate::support::query_db::{Db, empty};

/// scripts/select-fields/seed.json
fn employees() -> Vec<Value> {
    vec![
        json!({"id": "3834754693", "team": "Field sales", "identity": {"name": "Parker McLean"}, "contact": ["206-555-0147"]}),
        json!({"id": "6099791965", "team": "Field sales", "identity": {"name": "Beibit Shayakhmet"}, "contact": ["206-555-0178"]}),
    ]
}

/// working-with-json.md (an `id` added: the store requires one).
fn surfboard() -> Vec<Value> {
    vec![json!({
        "id": "teapo",
        "name": "Teapo rainbow surfboard",
        "manufacturer": {"name": "AdventureWorks"},
        "releaseDate": null,
        "metadata": {
            "sku": "72109",
            "colors": ["cruise", "picton-blue"],
            "sizes": {
                "small": {"inches": 76, "feet": 6.33333},
                "large": {"inches": 92, "feet": 7.66667}
            }
        }
    })]
}

/// object-array.md
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

/// keywords.md DISTINCT: categories repeat, and one item has none.
fn categorized() -> Vec<Value> {
    vec![
        json!({"id": "1", "name": "Hex wrench", "category": "Tools", "price": 5}),
        json!({"id": "2", "name": "Bike bell", "category": "Accessories", "price": 12}),
        json!({"id": "3", "name": "Saddle bag", "category": "Accessories", "price": 30}),
        json!({"id": "4", "name": "Tire lever", "category": "Tools", "price": 3}),
        json!({"id": "5", "name": "Gift card", "price": 50}),
    ]
}

#[test]
fn unnamed_values_get_sequential_names() {
    let db = empty();
    // scripts/select
    db.ordered(
        r#"SELECT "Adventure", "Works""#,
        json!([{"$1": "Adventure", "$2": "Works"}]),
    );
    // scripts/select-json
    db.ordered(
        r#"SELECT {
    department: "Sales",
    team: "Field sales"
}"#,
        json!([{"$1": {"department": "Sales", "team": "Field sales"}}]),
    );
}

#[test]
fn value_returns_the_bare_value() {
    let db = empty();
    // scripts/select-value-json
    db.ordered(
        r#"SELECT VALUE {
    department: "Sales",
    team: "Field sales"
}"#,
        json!([{"department": "Sales", "team": "Field sales"}]),
    );
    // scripts/select-value
    db.ordered(r#"SELECT VALUE "Sales""#, json!(["Sales"]));
}

#[test]
fn value_object_projection_over_items() {
    // scripts/select-fields
    let db = Db::new(&employees());
    db.unordered(
        r#"SELECT VALUE {
    name: e.identity.name,
    team: e.team,
    phone: e.contact[0]
}
FROM
    employees e
WHERE
    e.team = "Field sales""#,
        json!([
            {"name": "Parker McLean", "team": "Field sales", "phone": "206-555-0147"},
            {"name": "Beibit Shayakhmet", "team": "Field sales", "phone": "206-555-0178"}
        ]),
    );
}

#[test]
fn star_is_the_identity_projection() {
    let db = Db::new(&employees());
    db.unordered("SELECT * FROM employees e", json!(employees()));
    // `SELECT * FROM ... AS a` is `SELECT VALUE a FROM ... AS a` (select.md remarks).
    db.unordered("SELECT VALUE e FROM employees AS e", json!(employees()));
}

#[test]
fn a_property_list_is_sugar_for_value_object() {
    // select.md remarks: `SELECT <e1> AS p1, <e2> AS p2` = `SELECT VALUE {p1: <e1>, p2: <e2>}`
    let db = Db::new(&employees());
    let expected = json!([
        {"who": "Parker McLean", "phone": "206-555-0147"},
        {"who": "Beibit Shayakhmet", "phone": "206-555-0178"}
    ]);
    db.unordered(
        "SELECT e.identity.name AS who, e.contact[0] AS phone FROM employees e",
        expected.clone(),
    );
    db.unordered(
        "SELECT VALUE {who: e.identity.name, phone: e.contact[0]} FROM employees e",
        expected,
    );
}

#[test]
fn star_must_stand_alone_with_one_source() {
    let db = Db::new(&employees());
    // logical-operators.md: `SELECT VALUE *` and `SELECT *, p.id` are not valid.
    db.bad_request("SELECT VALUE * FROM products p");
    db.bad_request("SELECT *, p.id FROM products p");
    db.bad_request("SELECT p.id, * FROM products p");
}

#[test]
fn star_needs_a_from_clause() {
    // select.md remarks: `SELECT *` is only valid if a FROM clause is specified.
    empty().bad_request("SELECT *");
}

#[test]
fn nested_property_names_are_the_last_step() {
    // working-with-json.md "Nested properties"
    let db = Db::new(&surfboard());
    db.ordered(
        "SELECT
    p.manufacturer.name,
    p.metadata.sku,
    p.metadata.sizes.small.inches AS size
FROM
    products p",
        json!([{"name": "AdventureWorks", "sku": "72109", "size": 76}]),
    );
}

#[test]
fn array_elements_and_filters_on_them() {
    // working-with-json.md "Work with arrays"
    let db = Db::new(&surfboard());
    db.ordered(
        r#"SELECT
    p.name,
    p.metadata.colors
FROM
    products p
WHERE
    p.metadata.colors[0] NOT LIKE "%orange%""#,
        json!([{"name": "Teapo rainbow surfboard", "colors": ["cruise", "picton-blue"]}]),
    );
}

#[test]
fn null_and_undefined_are_different() {
    // working-with-json.md "Difference between null and undefined"
    let db = Db::new(&surfboard());
    db.ordered(
        "SELECT
    IS_NULL(p.releaseDate) AS isReleaseDateNull,
    IS_DEFINED(p.releaseDate) AS isReleaseDateDefined,
    IS_NULL(p.retirementDate) AS isRetirementDateNull,
    IS_DEFINED(p.retirementDate) AS isRetirementDateDefined
FROM
    products p",
        json!([{
            "isReleaseDateNull": true,
            "isReleaseDateDefined": true,
            "isRetirementDateNull": false,
            "isRetirementDateDefined": false
        }]),
    );
}

#[test]
fn quoted_property_references() {
    // working-with-json.md "Reserved keywords and special characters in JSON"
    let db = Db::new(&surfboard());
    db.ordered(
        r#"SELECT
    p.manufacturer.name AS dotNotationReference,
    p["manufacturer"]["name"] AS bracketReference,
    p.manufacturer["name"] AS mixedReference
FROM
    products p"#,
        json!([{
            "dotNotationReference": "AdventureWorks",
            "bracketReference": "AdventureWorks",
            "mixedReference": "AdventureWorks"
        }]),
    );
}

#[test]
fn json_expressions_in_the_projection() {
    // working-with-json.md "JSON expressions"
    let db = Db::new(&surfboard());
    let object = r#"{
    "productName": p.name,
    "largeSizeInFeet": p.metadata.sizes.large.feet
}"#;
    let inner = json!({"productName": "Teapo rainbow surfboard", "largeSizeInFeet": 7.66667});
    db.ordered(
        &format!("SELECT {object}\nFROM\n    products p"),
        json!([{"$1": inner}]),
    );
    db.ordered(
        &format!("SELECT {object} AS product\nFROM\n    products p"),
        json!([{"product": inner}]),
    );
    db.ordered(
        &format!("SELECT VALUE {object}\nFROM\n    products p"),
        json!([inner]),
    );
}

#[test]
fn aliases() {
    // working-with-json.md "Alias values"
    let db = Db::new(&surfboard());
    db.ordered(
        "SELECT
    p.name,
    p.metadata.sku AS modelNumber
FROM
    products p",
        json!([{"name": "Teapo rainbow surfboard", "modelNumber": "72109"}]),
    );
    // "The AS keyword used for aliasing is optional".
    db.ordered(
        "SELECT p.name, p.metadata.sku modelNumber FROM products p",
        json!([{"name": "Teapo rainbow surfboard", "modelNumber": "72109"}]),
    );
    // Names an alias cannot spell go through an object constructor.
    db.ordered(
        r#"SELECT VALUE {
    "Product's name | ": p.name,
    "Model number => ": p.metadata.sku
}
FROM
    products p"#,
        json!([{"Product's name | ": "Teapo rainbow surfboard", "Model number => ": "72109"}]),
    );
}

#[test]
fn generated_names_count_only_unnamed_items() {
    let db = Db::new(&surfboard());
    db.ordered(
        "SELECT p.name, 1, p.metadata.sku, 'x' || 'y' FROM products p",
        json!([{"name": "Teapo rainbow surfboard", "$1": 1, "sku": "72109", "$2": "xy"}]),
    );
    // An undefined item is left out, its generated name still taken.
    db.ordered(
        "SELECT p.missing, p.name, 1 + p.missing, 2 FROM products p",
        json!([{"name": "Teapo rainbow surfboard", "$2": 2}]),
    );
}

#[test]
fn array_constructor_and_array_expression() {
    // object-array.md "Arrays"
    let db = Db::new(&fins());
    db.ordered(
        "SELECT
  [p.priceInUSD, p.priceInCAD] AS priceData
FROM products p",
        json!([{"priceData": [132.35, 174.5]}]),
    );
    db.ordered(
        "SELECT
    p.id,
    ARRAY (SELECT DISTINCT VALUE c.name FROM c IN p.categories) AS categoryNames
FROM
    products p",
        json!([{"id": "a0151c77-ffc3-4fa6-a495-7b53d936faa6", "categoryNames": ["swim", "gear"]}]),
    );
}

#[test]
fn constructors_skip_undefined() {
    // scalar-expressions.md remarks: undefined members and elements are skipped, and the next
    // element takes the free index.
    let db = Db::new(&fins());
    db.ordered(
        "SELECT VALUE {a: p.missing, b: p.metadata.sku, c: [p.missing, p.priceInUSD, p.none, 1]} FROM p",
        json!([{"b": "73310", "c": [132.35, 1]}]),
    );
    db.ordered(
        "SELECT VALUE [p.missing, p.priceInUSD][0] FROM p",
        json!([132.35]),
    );
    // An object whose every member is undefined is still an (empty) object.
    db.ordered("SELECT VALUE {a: p.missing} FROM p", json!([{}]));
    db.ordered("SELECT p.missing FROM p", json!([{}]));
}

#[test]
fn distinct_value_and_distinct_object() {
    // keywords.md DISTINCT, in the page's order: one property path's distinct values come
    // in the order of the values, undefined first.
    let db = Db::new(&categorized());
    db.ordered(
        "SELECT DISTINCT VALUE
    p.category
FROM
    products p",
        json!(["Accessories", "Tools"]),
    );
    db.ordered(
        "SELECT DISTINCT
    p.category
FROM
    products p",
        json!([{}, {"category": "Accessories"}, {"category": "Tools"}]),
    );
}

#[test]
fn distinct_compares_whole_values() {
    let db = Db::new(&categorized());
    db.unordered(
        "SELECT DISTINCT p.category, p.price > 10 AS pricey FROM p",
        json!([
            {"category": "Tools", "pricey": false},
            {"category": "Accessories", "pricey": true},
            {"pricey": true}
        ]),
    );
    // DISTINCT with ORDER BY (pagination.md).
    db.ordered(
        "SELECT DISTINCT VALUE p.category FROM p ORDER BY p.category",
        json!(["Accessories", "Tools"]),
    );
    db.ordered(
        "SELECT DISTINCT VALUE p.category FROM p ORDER BY p.category DESC",
        json!(["Tools", "Accessories"]),
    );
    // -0 = 0 (equality-comparison-operators.md compares numbers by value): one value.
    let zeros = Db::new(&[json!({"id": "a", "n": 0}), json!({"id": "b", "n": -0.0})]);
    for rows in zeros.each("SELECT DISTINCT VALUE p.n FROM p", &[]) {
        assert_eq!(rows.len(), 1, "{rows:?}");
    }
    zeros.unordered("SELECT VALUE COUNT(1) FROM p GROUP BY p.n", json!([2]));
}

#[test]
fn top_with_order_by() {
    // keywords.md TOP
    let db = Db::new(&categorized());
    let ascending = [
        "Tire lever",
        "Hex wrench",
        "Bike bell",
        "Saddle bag",
        "Gift card",
    ];
    let rows = db.each(
        "SELECT TOP 10
    *
FROM
    products p
ORDER BY
    p.price ASC",
        &[],
    );
    for r in rows {
        let names: Vec<&str> = r.iter().map(|d| d["name"].as_str().unwrap()).collect();
        assert_eq!(names, ascending);
    }
    db.ordered(
        "SELECT TOP 2 VALUE p.name FROM products p ORDER BY p.price ASC",
        json!(["Tire lever", "Hex wrench"]),
    );
    db.ordered(
        "SELECT TOP 0 VALUE p.name FROM products p ORDER BY p.price ASC",
        json!([]),
    );
}

#[test]
fn top_and_offset_count_only_results() {
    // An item whose `SELECT VALUE` is undefined makes no result, so it takes none of the
    // places TOP and OFFSET/LIMIT count (the .NET SDK's reference interpreter drops it right
    // after projecting, before DISTINCT and TOP).
    let db = Db::new(&[
        json!({"id": "1", "n": 1}),
        json!({"id": "2", "n": 2, "s": "a"}),
        json!({"id": "3", "n": 3}),
        json!({"id": "4", "n": 4, "s": "b"}),
        json!({"id": "5", "n": 5, "s": "c"}),
    ]);
    db.ordered(
        "SELECT TOP 2 VALUE c.s FROM c ORDER BY c.n",
        json!(["a", "b"]),
    );
    db.ordered(
        "SELECT TOP 2 VALUE c.s FROM c ORDER BY c.n DESC",
        json!(["c", "b"]),
    );
    db.ordered(
        "SELECT VALUE c.s FROM c ORDER BY c.n OFFSET 1 LIMIT 5",
        json!(["b", "c"]),
    );
    for rows in db.each("SELECT TOP 2 VALUE c.s FROM c", &[]) {
        assert_eq!(rows.len(), 2, "{rows:?}");
    }
    db.unordered("SELECT TOP 5 VALUE c.s FROM c", json!(["a", "b", "c"]));
}

#[test]
fn top_without_order_by_takes_n() {
    let db = Db::new(&categorized());
    for rows in db.each("SELECT TOP 3 * FROM products", &[]) {
        assert_eq!(rows.len(), 3);
    }
}

#[test]
fn top_takes_a_parameter() {
    // parameterized-queries.md: "SELECT TOP @pageSize * FROM products"
    let db = Db::new(&categorized());
    for rows in db.each(
        "SELECT TOP @pageSize * FROM products",
        &[("@pageSize", json!(10))],
    ) {
        assert_eq!(rows.len(), 5);
    }
    for rows in db.each(
        "SELECT TOP @pageSize * FROM products",
        &[("@pageSize", json!(2))],
    ) {
        assert_eq!(rows.len(), 2);
    }
    db.ordered_with(
        "SELECT TOP @n VALUE p.price FROM p ORDER BY p.price DESC",
        &[("@n", json!(3))],
        json!([50, 30, 12]),
    );
}

#[test]
fn top_needs_a_non_negative_integer() {
    let db = Db::new(&categorized());
    db.bad_request("SELECT TOP -1 * FROM p");
    db.bad_request("SELECT TOP 1.5 * FROM p");
    db.bad_request("SELECT TOP 'a' * FROM p");
}

#[test]
fn keywords_and_select_case_insensitively() {
    let db = Db::new(&employees());
    db.unordered(
        "select value e.identity.name from employees e where e.team = 'Field sales'",
        json!(["Parker McLean", "Beibit Shayakhmet"]),
    );
    db.unordered(
        "SeLeCt DiStInCt VaLuE e.team FrOm employees e",
        json!(["Field sales"]),
    );
}

#[test]
fn a_top_parameter_must_be_a_non_negative_integer() {
    // keywords.md: TOP takes "a constant value ... or a variable value using parameterized
    // queries"; a parameter is held to what the literal form must be.
    let db = Db::new(&categorized());
    for value in [json!(2.5), json!(-1), json!("2"), json!(null)] {
        db.bad_request_with("SELECT TOP @n * FROM p", &[("@n", value)]);
    }
}
