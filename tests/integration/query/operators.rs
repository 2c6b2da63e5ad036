//! Operators (docs: nosql/query/scalar-expressions.md, equality-comparison-operators.md,
//! logical-operators.md, keywords.md BETWEEN/IN/LIKE, ternary-coalesce-operators.md,
//! bitwise-operators.md, where.md operator table): arithmetic, comparison with the
//! cross-type `undefined`, three-valued logic, IN, BETWEEN, LIKE, `?:`, `??`, `||`, bitwise
//! operators with JavaScript's 32-bit semantics, and precedence.

use cosmoscope::engine::Backend;
use serde_json::{Value, json};

use crate::support::query_db::{DB, Db, empty, normalize, value_of};

/// `SELECT VALUE <expr>` over the one item of `db`: `None` when undefined.
fn on_item(db: &Db, expr: &str) -> Option<Value> {
    let sql = format!("SELECT VALUE {expr} FROM c");
    let each = db.each(&sql, &[]);
    let first = each[0].clone();
    for other in &each[1..] {
        assert_eq!(other, &first, "{sql}: the containers disagree");
    }
    assert!(first.len() <= 1, "{sql}: {first:?}");
    first.into_iter().next()
}

/// Asserts each `(expression, expected)` of a FROM-less `SELECT VALUE`; `None` = undefined.
fn check(db: &Db, cases: &[(&str, Option<Value>)]) {
    for (expr, expected) in cases {
        let got = value_of(db, expr).map(|v| normalize(&v));
        let expected = expected.as_ref().map(normalize);
        assert_eq!(got, expected, "SELECT VALUE {expr}");
    }
}

fn t() -> Option<Value> {
    Some(json!(true))
}
fn f() -> Option<Value> {
    Some(json!(false))
}
fn n(x: f64) -> Option<Value> {
    Some(json!(x))
}
fn s(x: &str) -> Option<Value> {
    Some(json!(x))
}

#[test]
fn arithmetic() {
    let db = empty();
    // scalar-expressions.md: "The most common example of a scalar expression is a math equation."
    db.ordered("SELECT VALUE\n    ((2 + 11 % 7) - 2) / 2", json!([2]));
    check(
        &db,
        &[
            ("1 + 2", n(3.0)),
            ("10 - 4 - 3", n(3.0)),
            ("2 * 3.5", n(7.0)),
            ("7 / 2", n(3.5)),
            ("16 / 4 / 2", n(2.0)),
            ("5 % 3", n(2.0)),
            ("-5 % 3", n(-2.0)),
            ("5.5 % 2", n(1.5)),
            ("-(3)", n(-3.0)),
            ("+4", n(4.0)),
            ("- -4", n(4.0)),
            ("0.1 + 0.2", n(0.30000000000000004)),
        ],
    );
}

#[test]
fn arithmetic_on_non_numbers_is_undefined() {
    let db = empty();
    check(
        &db,
        &[
            ("'a' + 1", None),
            ("'a' + 'b'", None),
            ("null + 1", None),
            ("true + 1", None),
            ("[1] * 2", None),
            ("{a: 1} - 1", None),
            ("undefined + 1", None),
            ("-'a'", None),
        ],
    );
}

#[test]
fn equality_of_literals() {
    // scalar-expressions.md
    let db = empty();
    db.ordered(
        r#"SELECT
    ("Redmond" = "WA") AS isCitySameAsState,
    ("WA" = "WA") AS isStateSameAsState"#,
        json!([{"isCitySameAsState": false, "isStateSameAsState": true}]),
    );
    check(
        &db,
        &[
            ("1 = 1.0", t()),
            ("1 != 2", t()),
            ("0.1 + 0.2 = 0.3", f()),
            ("-0 = 0", t()),
            ("null = null", t()),
            ("null != null", f()),
            ("true = true", t()),
            ("true = false", f()),
            ("'a' = 'A'", f()),
            ("[1, 2] = [1, 2]", t()),
            ("[1, 2] = [2, 1]", f()),
            ("[[1], {a: [2]}] = [[1], {a: [2]}]", t()),
            ("{a: 1} = {a: 1}", t()),
            ("{a: 1} = {a: 2}", f()),
            ("{a: 1} = {a: 1, b: 2}", f()),
            ("[] = []", t()),
            ("{} = {}", t()),
        ],
    );
}

/// One value of every JSON type, by property name.
fn typed_item() -> Db {
    Db::new(&[json!({
        "id": "x",
        "nul": null,
        "boo": true,
        "num": 1,
        "str": "a",
        "obj": {"a": 1},
        "arr": [1]
    })])
}

const TYPED: [&str; 7] = ["und", "nul", "boo", "num", "str", "obj", "arr"];

#[test]
fn equality_table_across_types() {
    // equality-comparison-operators.md: equality is Ok only between two values of the same
    // JSON type; every other pair, and anything with undefined, is undefined.
    let db = typed_item();
    for (i, x) in TYPED.iter().enumerate() {
        for (j, y) in TYPED.iter().enumerate() {
            let expr = format!("c.{x} = c.{y}");
            let expected = if i == j && *x != "und" { t() } else { None };
            assert_eq!(on_item(&db, &expr), expected, "{expr}");
        }
    }
}

#[test]
fn relational_comparison_across_types_is_undefined() {
    // equality-comparison-operators.md: "For comparison operators such as >, >=, !=, <, and
    // <=, comparison across types ... produces undefined."
    let db = typed_item();
    for op in [">", ">=", "!=", "<", "<="] {
        for (i, x) in TYPED.iter().enumerate() {
            for (j, y) in TYPED.iter().enumerate() {
                if i == j {
                    continue;
                }
                let expr = format!("c.{x} {op} c.{y}");
                assert_eq!(on_item(&db, &expr), None, "{expr}");
            }
        }
    }
}

#[test]
fn relational_comparison_of_objects_and_arrays_is_undefined() {
    // equality-comparison-operators.md: "... or between two objects or arrays produces
    // undefined."
    let db = typed_item();
    for op in [">", ">=", "<", "<="] {
        for x in ["obj", "arr"] {
            let expr = format!("c.{x} {op} c.{x}");
            assert_eq!(on_item(&db, &expr), None, "{expr}");
        }
    }
    check(
        &empty(),
        &[
            ("[1] < [2]", None),
            ("[1] >= [1]", None),
            ("{a: 1} > {a: 0}", None),
            ("{a: 1} <= {a: 1}", None),
        ],
    );
}

#[test]
fn not_equal_of_objects_and_arrays_is_undefined() {
    // equality-comparison-operators.md: "For comparison operators such as >, >=, !=, <, and
    // <=, comparison ... between two objects or arrays produces undefined." (`=` is Ok.)
    let db = typed_item();
    for x in ["obj", "arr"] {
        let expr = format!("c.{x} != c.{x}");
        assert_eq!(on_item(&db, &expr), None, "{expr}");
    }
    check(
        &empty(),
        &[("[1] != [2]", None), ("{a: 1} != {a: 2}", None)],
    );
}

#[test]
fn an_object_built_with_an_undefined_member_does_not_have_it() {
    // scalar-expressions.md: "Any property that is assigned undefined value is skipped and
    // not included in the created object when creating an object." So the member takes no
    // part in equality, IN, ARRAY_CONTAINS or the set functions.
    check(
        &empty(),
        &[
            ("{a: undefined} = {}", t()),
            ("{a: undefined} = {a: undefined}", t()),
            ("{a: 1, b: undefined} = {a: 1}", t()),
            ("{a: 1} IN ({a: 1, b: undefined})", t()),
            ("ARRAY_CONTAINS([{a: 1}], {a: 1, b: undefined})", t()),
            (
                "SetUnion([{a: undefined}], [{}])",
                Some(serde_json::json!([{}])),
            ),
            ("(SELECT 1 AS n, undefined AS m) = {n: 1}", t()),
        ],
    );
    let db = Db::new(&[serde_json::json!({"id": "1", "pk": "p", "obj": {"a": 1, "b": 2}})]);
    db.ordered(
        "SELECT VALUE c.id FROM c WHERE c.obj = {a: 1, b: 2, c: c.nope}",
        serde_json::json!(["1"]),
    );
    // An unnamed item still takes its `$n` place when it is undefined.
    db.ordered(
        "SELECT c.nope + 1, 2, c.obj.a FROM c",
        serde_json::json!([{"$2": 2, "a": 1}]),
    );
}

#[test]
fn relational_comparison_within_a_type() {
    let db = empty();
    check(
        &db,
        &[
            ("1 < 2", t()),
            ("2 <= 2", t()),
            ("3 > 2.5", t()),
            ("-1 >= 0", f()),
            ("'a' < 'b'", t()),
            ("'a' < 'ab'", t()),
            // Ordinal order: upper case sorts before lower case, and é after z.
            ("'B' < 'a'", t()),
            ("'é' > 'z'", t()),
            ("false < true", t()),
            ("true <= true", t()),
            ("1 < '2'", None),
            ("'1' >= 1", None),
            ("null < 1", None),
            ("true > 0", None),
        ],
    );
}

#[test]
fn cross_type_filters_exclude_items() {
    // equality-comparison-operators.md: the filter `0 = "true"` includes nothing; NOT of an
    // undefined comparison is still undefined.
    let db = Db::new(&[json!({"id": "1", "v": 0}), json!({"id": "2", "v": "0"})]);
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v = 0", json!(["1"]));
    db.unordered("SELECT VALUE c.id FROM c WHERE NOT (c.v = 0)", json!([]));
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v != 0", json!([]));
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v != '0'", json!([]));
    db.unordered("SELECT VALUE c.id FROM c WHERE 0 = \"true\"", json!([]));
}

#[test]
fn logical_truth_tables() {
    // logical-operators.md: OR, AND and NOT over true, false and undefined.
    let db = empty();
    let v = |x: &str| match x {
        "true" => t(),
        "false" => f(),
        _ => None,
    };
    let or = [
        ("true", "true", "true"),
        ("true", "false", "true"),
        ("true", "undefined", "true"),
        ("false", "true", "true"),
        ("false", "false", "false"),
        ("false", "undefined", "undefined"),
        ("undefined", "true", "true"),
        ("undefined", "false", "undefined"),
        ("undefined", "undefined", "undefined"),
    ];
    let and = [
        ("true", "true", "true"),
        ("true", "false", "false"),
        ("true", "undefined", "undefined"),
        ("false", "true", "false"),
        ("false", "false", "false"),
        ("false", "undefined", "false"),
        ("undefined", "true", "undefined"),
        ("undefined", "false", "false"),
        ("undefined", "undefined", "undefined"),
    ];
    for (a, b, r) in or {
        check(&db, &[(&format!("{a} OR {b}"), v(r))]);
    }
    for (a, b, r) in and {
        check(&db, &[(&format!("{a} AND {b}"), v(r))]);
    }
    check(
        &db,
        &[
            ("NOT true", f()),
            ("NOT false", t()),
            ("NOT undefined", None),
        ],
    );
}

#[test]
fn logical_tables_over_item_properties() {
    // The same tables where undefined comes from a missing property.
    let db = Db::new(&[json!({"id": "x", "t": true, "f": false})]);
    let cases = [
        ("c.t OR c.missing", t()),
        ("c.missing OR c.t", t()),
        ("c.f OR c.missing", None),
        ("c.f AND c.missing", f()),
        ("c.missing AND c.f", f()),
        ("c.t AND c.missing", None),
        ("NOT c.missing", None),
        ("NOT c.f", t()),
    ];
    for (expr, expected) in cases {
        assert_eq!(on_item(&db, expr), expected, "{expr}");
    }
}

#[test]
fn logical_precedence() {
    // logical-operators.md: NOT (1) binds tighter than AND (2), which binds tighter than OR (3).
    let db = empty();
    check(
        &db,
        &[
            ("true OR false AND false", t()),
            ("(true OR false) AND false", f()),
            ("false AND false OR true", t()),
            ("NOT false AND false", f()),
            ("NOT (false AND false)", t()),
            ("NOT true OR true", t()),
            ("NOT NOT true", t()),
        ],
    );
}

#[test]
fn operator_precedence() {
    let db = empty();
    check(
        &db,
        &[
            ("2 + 3 * 4", n(14.0)),
            ("(2 + 3) * 4", n(20.0)),
            ("2 * 3 % 4", n(2.0)),
            ("10 - 2 * 3", n(4.0)),
            ("-2 * -3", n(6.0)),
            ("1 + 2 = 3", t()),
            ("1 + 2 > 2 AND 2 * 2 = 4", t()),
            ("1 < 2 AND 3 < 2 OR 2 = 2", t()),
            ("true ? 1 : 2 + 10", n(1.0)),
            ("false ? 1 : 2 + 10", n(12.0)),
            ("1 + 1 = 2 ? 'yes' : 'no'", s("yes")),
        ],
    );
}

/// keywords.md BETWEEN: prices 20.0 and 7.5.
fn priced() -> Vec<Value> {
    vec![
        json!({"id": "1", "price": 20.0}),
        json!({"id": "2", "price": 7.5}),
    ]
}

#[test]
fn between_is_inclusive() {
    let db = Db::new(&priced());
    db.unordered(
        "SELECT VALUE
    p.price
FROM
    products p
WHERE
    p.price BETWEEN 17.25 AND 25.50",
        json!([20]),
    );
    db.unordered(
        "SELECT 
    (p.price BETWEEN 0 AND 10) AS booleanLessThanTen,
    p.price
FROM
    products p",
        json!([
            {"booleanLessThanTen": false, "price": 20.0},
            {"booleanLessThanTen": true, "price": 7.5}
        ]),
    );
    check(
        &empty(),
        &[
            ("10 BETWEEN 10 AND 20", t()),
            ("20 BETWEEN 10 AND 20", t()),
            ("20.5 BETWEEN 10 AND 20", f()),
            ("15 NOT BETWEEN 10 AND 20", f()),
            ("25 NOT BETWEEN 10 AND 20", t()),
            ("'b' BETWEEN 'a' AND 'c'", t()),
            ("'d' BETWEEN 'a' AND 'c'", f()),
            ("5 BETWEEN 10 AND 1", f()),
        ],
    );
}

#[test]
fn between_across_types_skips_the_item() {
    // keywords.md note: "price might be a number like 5.0 in some items and a string like
    // fifteenDollars in others ... the comparison between the two different types results in
    // undefined, so the item is skipped."
    let db = Db::new(&[
        json!({"id": "1", "price": 5.0}),
        json!({"id": "2", "price": "fifteenDollars"}),
    ]);
    db.unordered(
        "SELECT VALUE p.id FROM p WHERE p.price BETWEEN 0 AND 10",
        json!(["1"]),
    );
    db.unordered(
        "SELECT VALUE p.id FROM p WHERE p.price NOT BETWEEN 0 AND 1",
        json!(["1"]),
    );
    check(
        &empty(),
        &[
            ("'a' BETWEEN 1 AND 2", None),
            ("1 BETWEEN 'a' AND 2", None),
            ("undefined BETWEEN 1 AND 2", None),
        ],
    );
}

#[test]
fn in_and_not_in() {
    // keywords.md IN
    let db = Db::new(&[
        json!({"id": "1", "category": "Accessories"}),
        json!({"id": "2", "category": "Clothing"}),
        json!({"id": "3", "category": "Tools"}),
        json!({"id": "4"}),
    ]);
    db.unordered(
        r#"SELECT
    *
FROM
    products p
WHERE
    p.category IN ("Accessories", "Clothing")"#,
        json!([
            {"id": "1", "category": "Accessories"},
            {"id": "2", "category": "Clothing"}
        ]),
    );
    db.unordered(
        r#"SELECT VALUE p.id FROM p WHERE p.category NOT IN ("Accessories", "Clothing")"#,
        json!(["3"]),
    );
    check(
        &empty(),
        &[
            ("1 IN (1, 2)", t()),
            ("3 IN (1, 2)", f()),
            ("3 NOT IN (1, 2)", t()),
            ("1 NOT IN (1, 2)", f()),
            ("'a' IN ('b', 'a')", t()),
            ("1 IN ('1', 1)", t()),
            ("[1] IN ([1], [2])", t()),
            ("{a: 1} IN ({a: 1})", t()),
            ("null IN (null)", t()),
        ],
    );
}

/// keywords.md LIKE (the names and descriptions are ours).
fn shop() -> Vec<Value> {
    vec![
        json!({"id": "1", "name": "winter glove", "description": "Warm. Save 20% today"}),
        json!({"id": "2", "name": "summer glove", "description": "20%"}),
        json!({"id": "3", "name": "Road bike", "description": "20 gears"}),
        json!({"id": "4", "name": "Road helmet", "description": "Now 20%off"}),
        json!({"id": "5", "name": "Flat screwdriver", "description": "Steel"}),
        json!({"id": "6", "name": "Screwdriver set"}),
    ]
}

#[test]
fn like_over_items() {
    let db = Db::new(&shop());
    db.unordered(
        r#"SELECT VALUE
    p.name
FROM
    products p
WHERE
    p.name LIKE "%driver%""#,
        json!(["Flat screwdriver", "Screwdriver set"]),
    );
    db.unordered(
        r#"SELECT VALUE
    p.name
FROM
    products p
WHERE
    p.name LIKE "%glove""#,
        json!(["winter glove", "summer glove"]),
    );
    db.unordered(
        r#"SELECT VALUE
    p.name
FROM
    products p
WHERE
    p.name LIKE "Road%""#,
        json!(["Road bike", "Road helmet"]),
    );
    db.unordered(
        r#"SELECT VALUE
    p.name
FROM
    products p
WHERE
    p.name NOT LIKE "%winter%""#,
        json!([
            "summer glove",
            "Road bike",
            "Road helmet",
            "Flat screwdriver",
            "Screwdriver set"
        ]),
    );
    db.unordered(
        r#"SELECT VALUE
    p.name
FROM
    products p
WHERE
    p.description LIKE "%20^%%" ESCAPE "^""#,
        json!(["winter glove", "summer glove", "Road helmet"]),
    );
}

#[test]
fn like_wildcards() {
    // keywords.md: %, _, [a-f] / [abcdef], [^a-f] / [^abcdef].
    check(
        &empty(),
        &[
            ("'xSOyPSz' LIKE '%SO%PS%'", t()),
            ("'SOPS' LIKE '%SO%PS%'", t()),
            ("'PSSO' LIKE '%SO%PS%'", f()),
            ("'aSOxPSb' LIKE '%SO_PS%'", t()),
            ("'SOxyPS' LIKE '%SO_PS%'", f()),
            ("'SOPS' LIKE '%SO_PS%'", f()),
            ("'SOuPS' LIKE '%SO[t-z]PS%'", t()),
            ("'SOaPS' LIKE '%SO[t-z]PS%'", f()),
            ("'SOdPS' LIKE '%SO[^abc]PS%'", t()),
            ("'SObPS' LIKE '%SO[^abc]PS%'", f()),
            ("'c' LIKE '[a-f]'", t()),
            ("'g' LIKE '[a-f]'", f()),
            ("'c' LIKE '[abcdef]'", t()),
            ("'g' LIKE '[^a-f]'", t()),
            ("'c' LIKE '[^a-f]'", f()),
            ("'c' LIKE '[^abcdef]'", f()),
            ("'ab' LIKE 'a_'", t()),
            ("'a' LIKE 'a_'", f()),
            ("'abc' LIKE 'a_'", f()),
            ("'é' LIKE '_'", t()),
            ("'' LIKE '%'", t()),
            ("'' LIKE '_'", f()),
            ("'abc' LIKE 'abc'", t()),
            ("'abc' LIKE 'ab'", f()),
            ("'abc' NOT LIKE 'a%'", f()),
        ],
    );
}

#[test]
fn like_escape_and_bracketed_literals() {
    // keywords.md: ESCAPE, and the table of wildcard characters in brackets.
    check(
        &empty(),
        &[
            ("'20%' LIKE '20^%' ESCAPE '^'", t()),
            ("'20x' LIKE '20^%' ESCAPE '^'", f()),
            ("'a_b' LIKE 'a!_b' ESCAPE '!'", t()),
            ("'axb' LIKE 'a!_b' ESCAPE '!'", f()),
            ("'20-30%' LIKE '20-30[%]'", t()),
            ("'20-30x' LIKE '20-30[%]'", f()),
            ("'_n' LIKE '[_]n'", t()),
            ("'an' LIKE '[_]n'", f()),
            ("'[' LIKE '[ [ ]'", t()),
            ("']' LIKE ']'", t()),
        ],
    );
}

#[test]
fn like_has_no_other_special_characters() {
    // Only %, _, [ ] are wildcards: regular-expression characters match themselves, and %
    // spans any character, line breaks included.
    check(
        &empty(),
        &[
            ("'a.c' LIKE 'a.c'", t()),
            ("'abc' LIKE 'a.c'", f()),
            ("'a+b' LIKE 'a+b'", t()),
            ("'aab' LIKE 'a+b'", f()),
            ("'(x)' LIKE '(x)'", t()),
            ("'a*' LIKE 'a*'", t()),
            ("'aaa' LIKE 'a*'", f()),
            ("'$^' LIKE '$^'", t()),
            ("'a|b' LIKE 'a|b'", t()),
            ("'a' LIKE 'a|b'", f()),
            ("'back\\\\slash' LIKE 'back\\\\s%'", t()),
            ("'back space' LIKE 'back\\\\s%'", f()),
            ("'line1\\nline2' LIKE 'line1%'", t()),
            ("'line1\\nline2' LIKE '%line2'", t()),
            ("'a\\nb' LIKE 'a_b'", t()),
        ],
    );
}

/// ternary-coalesce-operators.md (ids added).
fn poles() -> Vec<Value> {
    vec![
        json!({"id": "1", "name": "Stangincy trekking poles", "price": 24.50, "onCloseout": false, "onSale": true, "collapsible": true}),
        json!({"id": "2", "name": "Vimero hiking poles", "price": 24.50, "onCloseout": false, "onSale": false}),
        json!({"id": "3", "name": "Kramundsen trekking poles", "price": 24.50, "onCloseout": true, "onSale": true, "collapsible": false}),
    ]
}

#[test]
fn ternary() {
    let db = Db::new(&poles());
    db.unordered(
        "SELECT
    p.name,
    p.price AS subtotal,
    p.onSale ? (p.price * 0.85) : p.price AS total
FROM
    products p",
        json!([
            {"name": "Stangincy trekking poles", "subtotal": 24.5, "total": 20.825},
            {"name": "Vimero hiking poles", "subtotal": 24.5, "total": 24.5},
            {"name": "Kramundsen trekking poles", "subtotal": 24.5, "total": 20.825}
        ]),
    );
    db.unordered(
        "SELECT
    p.name,
    p.price AS subtotal,
    p.onCloseout ? (p.price * 0.55) : p.onSale ? (p.price * 0.85) : p.price AS total
FROM
    products p",
        json!([
            {"name": "Stangincy trekking poles", "subtotal": 24.5, "total": 20.825},
            {"name": "Vimero hiking poles", "subtotal": 24.5, "total": 24.5},
            {"name": "Kramundsen trekking poles", "subtotal": 24.5, "total": 13.475000000000001}
        ]),
    );
}

#[test]
fn ternary_on_a_missing_property_excludes_the_value() {
    // ternary-coalesce-operators.md: "the ? operator excludes items if the referenced
    // properties are missing or the types being compared are different."
    let db = Db::new(&poles());
    db.unordered(
        r#"SELECT p.name, (p.collapsible ? "folds" : "rigid") AS kind FROM products p"#,
        json!([
            {"name": "Stangincy trekking poles", "kind": "folds"},
            {"name": "Vimero hiking poles"},
            {"name": "Kramundsen trekking poles", "kind": "rigid"}
        ]),
    );
    db.unordered(
        "SELECT VALUE p.name FROM products p WHERE (p.collapsible ? true : true)",
        json!(["Stangincy trekking poles", "Kramundsen trekking poles"]),
    );
}

#[test]
fn coalesce() {
    let db = Db::new(&poles());
    db.unordered(
        "SELECT
    p.name,
    p.collapsible ?? false AS isCollapsible
FROM
    products p",
        json!([
            {"name": "Stangincy trekking poles", "isCollapsible": true},
            {"name": "Vimero hiking poles", "isCollapsible": false},
            {"name": "Kramundsen trekking poles", "isCollapsible": false}
        ]),
    );
    check(
        &empty(),
        &[
            ("undefined ?? 1", n(1.0)),
            ("null ?? 1", Some(json!(null))),
            ("false ?? 1", f()),
            ("0 ?? 1", n(0.0)),
            ("undefined ?? undefined ?? 'c'", s("c")),
            ("undefined ?? undefined", None),
        ],
    );
}

#[test]
fn string_concatenation() {
    check(
        &empty(),
        &[
            ("'a' || 'b'", s("ab")),
            ("'a' || 'b' || 'c'", s("abc")),
            ("'' || ''", s("")),
            ("('x' || 'y') = 'xy'", t()),
        ],
    );
}

#[test]
fn bitwise_operators() {
    // bitwise-operators.md
    let db = empty();
    db.ordered(
        "SELECT 
    (100 >> 2) AS rightShift,
    (100 << 2) AS leftShift,
    (100 >>> 0) AS zeroFillRightShift,
    (100 & 1000) AS logicalAnd,
    (100 | 1000) AS logicalOr,
    (100 ^ 1000) AS logicalExclusiveOr",
        json!([{
            "rightShift": 25,
            "leftShift": 400,
            "zeroFillRightShift": 100,
            "logicalAnd": 96,
            "logicalOr": 1004,
            "logicalExclusiveOr": 908
        }]),
    );
}

#[test]
fn bitwise_operators_work_on_32_bit_integers() {
    // bitwise-operators.md: "Before a bitwise operation is performed, JavaScript converts
    // numbers to 32 bits signed integers."
    check(
        &empty(),
        &[
            ("-1 >>> 0", n(4294967295.0)),
            ("-16 >> 2", n(-4.0)),
            ("-16 >>> 28", n(15.0)),
            ("1 << 31", n(-2147483648.0)),
            ("1 << 32", n(1.0)),
            ("1 << 33", n(2.0)),
            ("~5", n(-6.0)),
            ("~-1", n(0.0)),
            ("5.7 | 0", n(5.0)),
            ("-5.7 | 0", n(-5.0)),
            ("4294967296 | 0", n(0.0)),
            ("2147483648 | 0", n(-2147483648.0)),
            ("4294967295 & 255", n(255.0)),
            ("-1 ^ 0", n(-1.0)),
            ("6 & 3", n(2.0)),
            ("6 | 3", n(7.0)),
            ("6 ^ 3", n(5.0)),
        ],
    );
}

#[test]
fn bitwise_operators_on_non_numbers_are_undefined() {
    check(
        &empty(),
        &[
            ("'a' | 1", None),
            ("true & 1", None),
            ("null ^ 1", None),
            ("1 << 'a'", None),
            ("undefined >> 1", None),
            ("~'a'", None),
        ],
    );
}

#[test]
fn property_and_index_access_on_the_wrong_type_is_undefined() {
    // scalar-expressions.md: "If the property doesn't exist or property is referenced on a
    // value, which isn't an object, then the expression evaluates to undefined value"; the same
    // for an array index on a value that isn't an array.
    let db = Db::new(&[
        json!({"id": "1", "v": {"x": 1}, "tags": ["a", "b"]}),
        json!({"id": "2", "v": 5, "tags": "ab"}),
        json!({"id": "3", "v": [{"x": 2}], "tags": {"0": "z"}}),
        json!({"id": "4", "v": "text", "tags": null}),
    ]);
    db.unordered("SELECT VALUE c.v.x FROM c", json!([1]));
    db.unordered(
        "SELECT c.id, c.v.x AS x FROM c",
        json!([{"id": "1", "x": 1}, {"id": "2"}, {"id": "3"}, {"id": "4"}]),
    );
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v.x = 1", json!(["1"]));
    db.unordered("SELECT VALUE c.tags[0] FROM c", json!(["a"]));
    db.unordered("SELECT VALUE c.tags[\"0\"] FROM c", json!(["z"]));
    db.unordered("SELECT VALUE c.tags.length FROM c", json!([]));
    db.unordered("SELECT VALUE c.v[0].x FROM c", json!([2]));
    // The same paths in the other clauses.
    db.unordered("SELECT VALUE COUNT(1) FROM c GROUP BY c.v.x", json!([1, 3]));
    db.unordered("SELECT VALUE t FROM c JOIN t IN c.v.x", json!([]));
    for rows in db.each("SELECT VALUE c.id FROM c ORDER BY c.v.x DESC", &[]) {
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0], json!("1"));
    }
}

#[test]
fn array_indexes() {
    let db = Db::new(&[json!({"id": "1", "tags": ["a", "b", "c"]})]);
    let cases = [
        ("c.tags[0]", Some(json!("a"))),
        ("c.tags[2]", Some(json!("c"))),
        ("c.tags[3]", None),
        ("c.tags[-1]", None),
        ("c.tags[1 + 1]", Some(json!("c"))),
        ("c.tags[0.5]", None),
        ("['x', 'y'][1]", Some(json!("y"))),
        ("{k: 'v'}['k']", Some(json!("v"))),
        ("{k: 'v'}.k", Some(json!("v"))),
    ];
    for (expr, expected) in cases {
        assert_eq!(on_item(&db, expr), expected, "{expr}");
    }
}

#[test]
fn a_result_without_a_json_form_fails_the_query() {
    // Division by zero has no JSON value: the service fails the query rather than drop the
    // row (sqrt.md), on one range or many, and never pages on.
    let db = Db::new(&[json!({"id": "1", "n": 1}), json!({"id": "2", "n": 0})]);
    for c in ["one", "many"] {
        let opts = cosmoscope::engine::QueryOptions {
            max_items: Some(1),
            ..Default::default()
        };
        let e = db
            .engine
            .query(DB, c, "SELECT VALUE c.n / 0 FROM c", &opts)
            .unwrap_err();
        assert_eq!(e.status.as_u16(), 400, "{c}: {e:?}");
    }
}
