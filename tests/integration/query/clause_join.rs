//! JOIN (docs: nosql/query/join.md; subquery.md "Optimize self-join expressions", "Evaluate
//! once and reference many times", "Mimic join with external reference data";
//! working-with-json.md cross-join): self-joins within an item, several joins, joins with
//! subqueries.

use serde_json::{Value, json};

use crate::support::query_db::Db;

/// join.md "Self-join with a single item"
fn surfboard() -> Vec<Value> {
    vec![json!({
        "id": "aaaaaaaa-0000-1111-2222-bbbbbbbbbbbb",
        "categoryId": "bbbbbbbb-1111-2222-3333-cccccccccccc",
        "name": "Teapo Surfboard (6'10\") Grape",
        "sku": "teapo-surfboard-72109",
        "tags": [
            {"id": "cccccccc-2222-3333-4444-dddddddddddd", "slug": "tail-shape-swallow", "name": "Tail Shape: Swallow"},
            {"id": "dddddddd-3333-4444-5555-eeeeeeeeeeee", "slug": "length-inches-82", "name": "Length: 82 inches"},
            {"id": "eeeeeeee-4444-5555-6666-ffffffffffff", "slug": "color-group-purple", "name": "Color Group: Purple"}
        ]
    })]
}

/// join.md "Self-joining multiple items"
fn sleeping_bags() -> Vec<Value> {
    vec![
        json!({
            "id": "ffffffff-5555-6666-7777-aaaaaaaaaaaa",
            "categoryId": "cccccccc-8888-9999-0000-dddddddddddd",
            "categoryName": "Sleeping Bags",
            "name": "Maresse Sleeping Bag (6') Ming",
            "sku": "maresse-sleeping-bag-65503",
            "tags": [
                {"id": "b1b1b1b1-cccc-dddd-eeee-f2f2f2f2f2f2", "slug": "bag-shape-mummy", "name": "Bag Shape: Mummy"},
                {"id": "bbbbbbbb-7777-8888-9999-cccccccccccc", "slug": "bag-insulation-down-fill", "name": "Bag Insulation: Down Fill"}
            ]
        }),
        json!({
            "id": "c2c2c2c2-dddd-eeee-ffff-a3a3a3a3a3a3",
            "categoryId": "cccccccc-8888-9999-0000-dddddddddddd",
            "categoryName": "Sleeping Bags",
            "name": "Vareno Sleeping Bag (6') Turmeric",
            "sku": "vareno-sleeping-bag-65508",
            "tags": [
                {"id": "dddddddd-9999-0000-1111-eeeeeeeeeeee", "slug": "bag-insulation-synthetic-fill", "name": "Bag Insulation: Synthetic Fill"},
                {"id": "a0a0a0a0-bbbb-cccc-dddd-e1e1e1e1e1e1", "slug": "color-group-yellow", "name": "Color Group: Yellow"},
                {"id": "b1b1b1b1-cccc-dddd-eeee-f2f2f2f2f2f2", "slug": "bag-shape-mummy", "name": "Bag Shape: Mummy"}
            ]
        }),
    ]
}

#[test]
fn self_join_with_a_single_item() {
    let db = Db::new(&surfboard());
    // The query JOIN replaces: index every position by hand.
    db.ordered(
        r#"SELECT
  * 
FROM
  products p
WHERE
  STARTSWITH(p.tags[0].slug, "color-group-") OR
  STARTSWITH(p.tags[1].slug, "color-group-") OR
  STARTSWITH(p.tags[2].slug, "color-group-")"#,
        json!(surfboard()),
    );
    db.ordered(
        "SELECT
  p.id,
  p.sku,
  t.slug
FROM
  products p
JOIN
  t IN p.tags",
        json!([
            {"id": "aaaaaaaa-0000-1111-2222-bbbbbbbbbbbb", "sku": "teapo-surfboard-72109", "slug": "tail-shape-swallow"},
            {"id": "aaaaaaaa-0000-1111-2222-bbbbbbbbbbbb", "sku": "teapo-surfboard-72109", "slug": "length-inches-82"},
            {"id": "aaaaaaaa-0000-1111-2222-bbbbbbbbbbbb", "sku": "teapo-surfboard-72109", "slug": "color-group-purple"}
        ]),
    );
    db.ordered(
        "SELECT
  p.sku,
  t.name AS tag
FROM
  products p
JOIN
  t IN p.tags",
        json!([
            {"sku": "teapo-surfboard-72109", "tag": "Tail Shape: Swallow"},
            {"sku": "teapo-surfboard-72109", "tag": "Length: 82 inches"},
            {"sku": "teapo-surfboard-72109", "tag": "Color Group: Purple"}
        ]),
    );
    db.ordered(
        r#"SELECT
  p.sku,
  t.name AS tag
FROM
  products p
JOIN
  t IN p.tags
WHERE
  STARTSWITH(t.slug, "color-group-")"#,
        json!([{"sku": "teapo-surfboard-72109", "tag": "Color Group: Purple"}]),
    );
}

#[test]
fn star_is_invalid_with_two_input_sets() {
    // join.md: "The * keyword is only valid to project all fields if it can infer the input
    // set, but now there are two input sets (p and t)."
    let db = Db::new(&surfboard());
    db.bad_request("SELECT * FROM products p JOIN t IN p.tags");
}

#[test]
fn self_join_over_multiple_items() {
    let db = Db::new(&sleeping_bags());
    db.unordered(
        r#"SELECT
  p.sku,
  t.name AS tag
FROM
  products p
JOIN
  t IN p.tags
WHERE
  p.categoryName = "Sleeping Bags""#,
        json!([
            {"sku": "maresse-sleeping-bag-65503", "tag": "Bag Shape: Mummy"},
            {"sku": "maresse-sleeping-bag-65503", "tag": "Bag Insulation: Down Fill"},
            {"sku": "vareno-sleeping-bag-65508", "tag": "Bag Insulation: Synthetic Fill"},
            {"sku": "vareno-sleeping-bag-65508", "tag": "Color Group: Yellow"},
            {"sku": "vareno-sleeping-bag-65508", "tag": "Bag Shape: Mummy"}
        ]),
    );
    db.unordered(
        r#"SELECT
  p.sku,
  t.name AS tag
FROM
  products p
JOIN
  t IN p.tags
WHERE
  p.categoryName = "Sleeping Bags" AND
  t.slug = "bag-shape-mummy""#,
        json!([
            {"sku": "maresse-sleeping-bag-65503", "tag": "Bag Shape: Mummy"},
            {"sku": "vareno-sleeping-bag-65508", "tag": "Bag Shape: Mummy"}
        ]),
    );
    db.unordered(
        r#"SELECT
  p.sku,
  t.name AS tag
FROM
  products p
JOIN
  t IN p.tags
WHERE
  p.categoryName = "Sleeping Bags" AND
  t.slug = "bag-insulation-synthetic-fill""#,
        json!([{"sku": "vareno-sleeping-bag-65508", "tag": "Bag Insulation: Synthetic Fill"}]),
    );
}

#[test]
fn join_keeps_array_order_within_an_item_and_orders_across_items() {
    let db = Db::new(&sleeping_bags());
    db.ordered(
        "SELECT VALUE t.slug FROM p JOIN t IN p.tags ORDER BY p.sku DESC",
        json!([
            "bag-insulation-synthetic-fill",
            "color-group-yellow",
            "bag-shape-mummy",
            "bag-shape-mummy",
            "bag-insulation-down-fill"
        ]),
    );
    db.ordered("SELECT VALUE COUNT(1) FROM p JOIN t IN p.tags", json!([5]));
}

#[test]
fn cross_join_of_an_item_with_its_array() {
    // working-with-json.md: "a query that returns multiple permutations ... a cross-join"
    let db = Db::new(&[json!({
        "id": "teapo",
        "name": "Teapo rainbow surfboard",
        "metadata": {"colors": ["cruise", "picton-blue"]}
    })]);
    db.ordered(
        "SELECT
    p.name,
    c AS color
FROM
    products p
JOIN
    c IN p.metadata.colors",
        json!([
            {"name": "Teapo rainbow surfboard", "color": "cruise"},
            {"name": "Teapo rainbow surfboard", "color": "picton-blue"}
        ]),
    );
}

#[test]
fn a_missing_or_empty_array_drops_the_item() {
    // A JOIN is an inner join: an item with nothing to join contributes no row.
    let db = Db::new(&[
        json!({"id": "1", "tags": ["a", "b"]}),
        json!({"id": "2", "tags": []}),
        json!({"id": "3"}),
        json!({"id": "4", "tags": "a"}),
        json!({"id": "5", "tags": {"x": "a"}}),
    ]);
    db.unordered(
        "SELECT p.id, t FROM p JOIN t IN p.tags",
        json!([{"id": "1", "t": "a"}, {"id": "1", "t": "b"}]),
    );
}

/// Classic nested arrays: families, children, pets.
fn families() -> Vec<Value> {
    vec![
        json!({
            "id": "AndersenFamily",
            "children": [
                {"firstName": "Henriette Thaulow", "grade": 5, "pets": [{"givenName": "Fluffy"}]}
            ]
        }),
        json!({
            "id": "WakefieldFamily",
            "children": [
                {"givenName": "Jesse", "grade": 1, "pets": [{"givenName": "Goofy"}, {"givenName": "Shadow"}]},
                {"givenName": "Lisa", "grade": 8}
            ]
        }),
    ]
}

#[test]
fn a_join_can_iterate_an_earlier_joins_alias() {
    let db = Db::new(&families());
    db.unordered(
        "SELECT f.id AS familyName, c.givenName AS childGivenName, c.firstName AS childFirstName, p.givenName AS petName
FROM Families f
JOIN c IN f.children
JOIN p IN c.pets",
        json!([
            {"familyName": "AndersenFamily", "childFirstName": "Henriette Thaulow", "petName": "Fluffy"},
            {"familyName": "WakefieldFamily", "childGivenName": "Jesse", "petName": "Goofy"},
            {"familyName": "WakefieldFamily", "childGivenName": "Jesse", "petName": "Shadow"}
        ]),
    );
    db.unordered(
        "SELECT VALUE p.givenName FROM Families f JOIN c IN f.children JOIN p IN c.pets WHERE p.givenName = 'Shadow'",
        json!(["Shadow"]),
    );
    // Joining the same array twice is a cross product of its elements.
    db.unordered(
        "SELECT VALUE [a.grade, b.grade] FROM f JOIN a IN f.children JOIN b IN f.children WHERE f.id = 'WakefieldFamily'",
        json!([[1, 1], [1, 8], [8, 1], [8, 8]]),
    );
}

/// from.md's grammar: a JOIN source is `<container_expression> [[AS] input_alias]` as well as
/// `input_alias IN <container_expression>`. The former sql-query-join article showed the
/// difference on the families: `JOIN f.children` joins each item with its `children` value
/// once (the array is not iterated), and `JOIN f.NonExistent` leaves nothing, "because the
/// cross product of each item from source and an empty set is empty".
#[test]
fn a_join_on_a_path_joins_its_value_once() {
    let mut docs = families();
    docs.push(json!({"id": "NoChildren", "address": {"city": "Oslo", "zip": "0150"}}));
    docs[0]["address"] = json!({"city": "Seattle", "zip": "98101"});
    let db = Db::new(&docs);
    db.unordered("SELECT f.id FROM Families f JOIN f.NonExistent", json!([]));
    db.unordered(
        "SELECT f.id FROM Families f JOIN f.children",
        json!([{"id": "AndersenFamily"}, {"id": "WakefieldFamily"}]),
    );
    db.unordered(
        "SELECT f.id FROM Families f JOIN c IN f.children",
        json!([{"id": "AndersenFamily"}, {"id": "WakefieldFamily"}, {"id": "WakefieldFamily"}]),
    );
    // Unaliased, the last property names the value (as in `FROM Families.children`).
    db.unordered(
        "SELECT f.id, ARRAY_LENGTH(children) AS n FROM f JOIN f.children",
        json!([{"id": "AndersenFamily", "n": 1}, {"id": "WakefieldFamily", "n": 2}]),
    );
    // With an alias, by bracket and index, and as the array a later JOIN iterates.
    db.unordered(
        "SELECT f.id, a.city FROM f JOIN f['address'] AS a WHERE a.zip > '1000'",
        json!([{"id": "AndersenFamily", "city": "Seattle"}]),
    );
    db.unordered(
        "SELECT VALUE first.grade FROM f JOIN f.children[0] first",
        json!([5, 1]),
    );
    db.unordered(
        "SELECT VALUE p.givenName FROM f JOIN f.children kids JOIN c IN kids JOIN p IN c.pets",
        json!(["Fluffy", "Goofy", "Shadow"]),
    );
    // Only a path: anything else after JOIN still needs IN.
    let e = db.bad_request("SELECT f.id FROM f JOIN f.children[f.n] k");
    assert!(
        e.message.contains("a path such as c.address"),
        "{}",
        e.message
    );
}

/// subquery.md "Optimize self-join expressions" (the page gives the queries; these items are
/// ours): per item, the tuples (tag, quantity, stock) that pass the filter.
fn stock() -> Vec<Value> {
    vec![
        // 1 tag × 2 quantities × 2 stocks = 4
        json!({
            "id": "a",
            "tags": [{"name": "winter"}, {"name": "summer"}],
            "onHandQuantities": [{"quantity": 5}, {"quantity": 20}, {"quantity": 0}],
            "warehouseStock": [{"backstock": false}, {"backstock": true}, {"backstock": false}]
        }),
        // 2 × 1 × 1 = 2
        json!({
            "id": "b",
            "tags": [{"name": "fall"}, {"name": "winter"}],
            "onHandQuantities": [{"quantity": 10}],
            "warehouseStock": [{"backstock": false}]
        }),
        // no matching tag
        json!({
            "id": "c",
            "tags": [{"name": "spring"}],
            "onHandQuantities": [{"quantity": 1}],
            "warehouseStock": [{"backstock": false}]
        }),
        // no quantities at all
        json!({
            "id": "d",
            "tags": [{"name": "fall"}],
            "warehouseStock": [{"backstock": false}]
        }),
    ]
}

#[test]
fn multiple_joins_then_filter() {
    let db = Db::new(&stock());
    db.ordered(
        r#"SELECT VALUE
    COUNT(1)
FROM
    products p
JOIN 
    t in p.tags
JOIN 
    q in p.onHandQuantities
JOIN 
    s in p.warehouseStock
WHERE 
    t.name IN ("winter", "fall") AND
    (q.quantity BETWEEN 0 AND 10) AND
    NOT s.backstock"#,
        json!([6]),
    );
}

#[test]
fn joins_with_filtered_subqueries() {
    let db = Db::new(&stock());
    // The same count with the filters pushed into aliased subqueries.
    db.ordered(
        r#"SELECT VALUE COUNT(1)
FROM products p
JOIN (SELECT VALUE t FROM t IN p.tags WHERE t.name IN ("winter", "fall")) t
JOIN (SELECT VALUE q FROM q IN p.onHandQuantities WHERE q.quantity BETWEEN 0 AND 10) q
JOIN (SELECT VALUE s FROM s IN p.warehouseStock WHERE NOT s.backstock) s"#,
        json!([6]),
    );
    db.unordered(
        r#"SELECT p.id, q.quantity
FROM products p
JOIN (SELECT VALUE q FROM q IN p.onHandQuantities WHERE q.quantity BETWEEN 0 AND 10) q"#,
        json!([
            {"id": "a", "quantity": 5},
            {"id": "a", "quantity": 0},
            {"id": "b", "quantity": 10},
            {"id": "c", "quantity": 1}
        ]),
    );
}

#[test]
fn joins_with_unaliased_subqueries() {
    // subquery.md writes the subqueries without an alias.
    let db = Db::new(&stock());
    db.ordered(
        r#"SELECT VALUE
    COUNT(1)
FROM
    products p
JOIN 
    (SELECT VALUE t FROM t IN p.tags WHERE t.name IN ("winter", "fall"))
JOIN 
    (SELECT VALUE q FROM q IN p.onHandQuantities WHERE q.quantity BETWEEN 0 AND 10)
JOIN 
    (SELECT VALUE s FROM s IN p.warehouseStock WHERE NOT s.backstock)"#,
        json!([6]),
    );
}

#[test]
fn a_subquery_join_evaluates_an_expression_once() {
    // subquery.md "Evaluate once and reference many times" (the UDF replaced by its body,
    // `subTotal * 1.25`).
    let db = Db::new(&[
        json!({"id": "1", "price": 10}),
        json!({"id": "2", "price": 17.8}),
        json!({"id": "3", "price": 20}),
        json!({"id": "4"}),
    ]);
    let expected = json!([{"subtotal": 10, "total": 12.5}]);
    db.unordered(
        "SELECT VALUE {
    subtotal: p.price,
    total: p.price * 1.25
}
FROM
    products p
WHERE
    p.price * 1.25 < 22.25",
        expected.clone(),
    );
    db.unordered(
        "SELECT VALUE {
    subtotal: p.price,
    total: totalPrice
}
FROM
    products p
JOIN
    (SELECT VALUE p.price * 1.25) totalPrice
WHERE
    totalPrice < 22.25",
        expected,
    );
    // The tip: an undefined subquery value joins nothing; an object always joins one row.
    db.unordered(
        "SELECT VALUE p.id FROM p JOIN (SELECT VALUE p.price * 1.25) x",
        json!(["1", "2", "3"]),
    );
    db.unordered(
        "SELECT VALUE p.id FROM p JOIN (SELECT p.price * 1.25 AS v) x",
        json!(["1", "2", "3", "4"]),
    );
}

#[test]
fn join_with_reference_data_from_a_subquery() {
    // subquery.md "Mimic join with external reference data" (shipments are ours).
    let db = Db::new(&[
        json!({"id": "s1", "weight": {"quantity": 3, "units": "kg"}}),
        json!({"id": "s2", "weight": {"quantity": 250, "units": "mg"}}),
        json!({"id": "s3", "weight": {"quantity": 2, "units": "lb"}}),
    ]);
    db.unordered(
        "SELECT
    s.id,
    (s.weight.quantity * m.multiplier) AS calculatedWeight,
    m.unit AS unitOfWeight
FROM
    shipments s
JOIN m IN (
    SELECT VALUE [
        {unit: 'ng', name: 'nanogram', multiplier: 0.000000001, baseUnit: 'gram'},
        {unit: 'µg', name: 'microgram', multiplier: 0.000001, baseUnit: 'gram'},
        {unit: 'mg', name: 'milligram', multiplier: 0.001, baseUnit: 'gram'},
        {unit: 'g', name: 'gram', multiplier: 1, baseUnit: 'gram'},
        {unit: 'kg', name: 'kilogram', multiplier: 1000, baseUnit: 'gram'},
        {unit: 'Mg', name: 'megagram', multiplier: 1000000, baseUnit: 'gram'},
        {unit: 'Gg', name: 'gigagram', multiplier: 1000000000, baseUnit: 'gram'}
    ]
)
WHERE
    s.weight.units = m.unit",
        json!([
            {"id": "s1", "calculatedWeight": 3000, "unitOfWeight": "kg"},
            {"id": "s2", "calculatedWeight": 0.25, "unitOfWeight": "mg"}
        ]),
    );
}

#[test]
fn join_on_an_aggregate_subquery() {
    // subquery.md: "A more optimal way to write this query is to join on the subquery".
    let db = Db::new(&[
        json!({"id": "1", "name": "Snow coat", "inventory": [
            {"location": "Redmond, WA", "quantity": 50},
            {"location": "Seattle, WA", "quantity": 30},
            {"location": "Washington, DC", "quantity": 25}
        ]}),
        json!({"id": "2", "name": "Sun hat", "inventory": [{"location": "Redmond, WA", "quantity": 5}]}),
    ]);
    db.unordered(
        "SELECT
    p.name,
    inventoryData.inventoryAverage
FROM
    products p
JOIN
    (SELECT 
        COUNT(1) AS inventoryCount, 
        AVG(i.quantity) as inventoryAverage 
    FROM i IN p.inventory 
    WHERE i.quantity > 10) AS inventoryData
WHERE
    inventoryData.inventoryCount >= 1",
        json!([{"name": "Snow coat", "inventoryAverage": 35}]),
    );
}

#[test]
fn top_stops_a_cross_product_of_joins_early() {
    // One item whose three JOINs over a 1,000-element array make 10^9 rows: TOP takes the
    // first rows in JOIN order without expanding (or holding) the rest, which would not fit
    // in memory.
    let a: Vec<u32> = (0..1000).collect();
    let db = Db::new(&[json!({"id": "1", "a": a})]);
    db.ordered(
        "SELECT TOP 3 VALUE [x, y, z] FROM c JOIN x IN c.a JOIN y IN c.a JOIN z IN c.a",
        json!([[0, 0, 0], [0, 0, 1], [0, 0, 2]]),
    );
    db.ordered(
        "SELECT VALUE [x, y] FROM c JOIN x IN c.a JOIN y IN c.a WHERE x = 999 AND y > 997",
        json!([[999, 998], [999, 999]]),
    );
}

/// Orders whose `lines` are arrays of objects (with nested arrays, missing and odd-typed
/// members, non-object elements and non-array values), for [`joins_read_only_what_they_use`].
fn nested_orders() -> Vec<Value> {
    let mut docs = Vec::new();
    for i in 0..40u32 {
        let lines: Vec<Value> = (0..i % 5)
            .map(|k| match (i + k) % 7 {
                0 => json!(k),
                1 => json!({"sku": format!("s{k}"), "qty": k, "tags": ["a", k]}),
                2 => json!({"sku": null, "qty": "x", "tags": []}),
                3 => json!({"qty": i % 3, "parts": [{"n": k, "w": 1.5}, {"n": i}]}),
                4 => json!({"sku": format!("s{}", i % 4), "parts": "none", "tags": {"a": 1}}),
                5 => json!([{"qty": 9}]),
                _ => json!({"sku": "s1", "qty": k + i % 2, "tags": ["b"], "parts": []}),
            })
            .collect();
        let lines = match i % 11 {
            0 => json!({"sku": "not an array", "qty": 1}),
            1 => json!(null),
            _ => Value::Array(lines),
        };
        let mut doc = json!({"id": format!("o{i}"), "n": i, "lines": lines});
        if i % 13 == 0 {
            doc.as_object_mut().map(|o| o.remove("lines"));
        }
        docs.push(doc);
    }
    docs
}

/// A query reads only the element properties its JOIN and IN aliases use; the rest of each
/// array element is left out (`demand`). Whatever the query, the result must be what it is
/// when the whole item is read: each query is run with `{all}` as `true` and as a use of the
/// item (or of the iterated array) as a whole, which makes the engine read all of it.
#[test]
fn joins_read_only_what_they_use() {
    let db = Db::new(&nested_orders());
    let queries = [
        (
            "SELECT VALUE COUNT(1) FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT VALUE COUNT(1) FROM c JOIN l IN c.lines WHERE {all} AND l.qty > 0",
            "c",
        ),
        (
            "SELECT c.id, l.sku FROM c JOIN l IN c.lines WHERE {all} AND l.qty >= 1",
            "c",
        ),
        (
            "SELECT c.id, l.sku, l FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT VALUE l.sku FROM c JOIN l IN c.lines WHERE {all} AND IS_STRING(l.sku)",
            "c",
        ),
        (
            "SELECT c.id, p.n FROM c JOIN l IN c.lines JOIN p IN l.parts WHERE {all} AND p.n > 0",
            "c",
        ),
        (
            "SELECT VALUE {i: c.id, w: p.w} FROM c JOIN l IN c.lines JOIN p IN l.parts WHERE {all}",
            "c",
        ),
        (
            "SELECT c.id, t FROM c JOIN l IN c.lines JOIN t IN l.tags WHERE {all}",
            "c",
        ),
        (
            "SELECT VALUE l.qty FROM c JOIN l IN c.lines WHERE {all} AND ARRAY_LENGTH(c.lines) > 2",
            "c",
        ),
        (
            "SELECT VALUE l.qty FROM c JOIN l IN c.lines WHERE {all} AND c.lines[0].qty = 1",
            "c",
        ),
        (
            "SELECT VALUE l.qty FROM c JOIN l IN c.lines WHERE {all} OR c.lines.qty = 1",
            "c",
        ),
        (
            "SELECT VALUE l.sku FROM c JOIN l IN c.lines \
             WHERE {all} AND EXISTS(SELECT VALUE t FROM t IN l.tags WHERE t = 'a')",
            "c",
        ),
        (
            "SELECT c.id, ARRAY(SELECT VALUE p.n FROM p IN l.parts) AS ns \
             FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT l.sku, COUNT(1) AS n FROM c JOIN l IN c.lines WHERE {all} GROUP BY l.sku",
            "c",
        ),
        (
            "SELECT DISTINCT VALUE l.qty FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT TOP 7 c.id, l.qty FROM c JOIN l IN c.lines WHERE {all} ORDER BY c.n DESC",
            "c",
        ),
        (
            "SELECT VALUE l.sku FROM l IN c.lines WHERE {all} AND l.qty > 0",
            "l",
        ),
        ("SELECT VALUE p FROM p IN c.lines.parts WHERE {all}", "p"),
        (
            "SELECT VALUE l['sku'] FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT VALUE l[0] FROM c JOIN l IN c.lines WHERE {all}",
            "c",
        ),
        (
            "SELECT VALUE l.qty FROM c JOIN l IN c.lines JOIN l2 IN c.lines \
             WHERE {all} AND l.sku = l2.sku",
            "c",
        ),
        (
            "SELECT VALUE x.qty FROM c JOIN x IN (SELECT VALUE l FROM l IN c.lines) WHERE {all}",
            "c",
        ),
    ];
    for (template, whole) in queries {
        let projected = template.replace("{all}", "true");
        let read_whole = template.replace("{all}", &format!("IS_DEFINED({whole})"));
        assert_eq!(
            db.each(&projected, &[]),
            db.each(&read_whole, &[]),
            "{projected}\n  vs {read_whole}"
        );
    }
}
