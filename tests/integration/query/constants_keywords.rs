//! Constants, keywords and parameters (docs: nosql/query/constants.md, keywords.md,
//! parameterized-queries.md, working-with-json.md reserved words; the .NET SDK grammar
//! sql.g4 for which words are case-insensitive): literals of every type, numbers, strings
//! with every escape, keywords in any case, parameters of every JSON type.

use serde_json::{Value, json};

use crate::support::query_db::{Db, empty, normalize, value_of};

fn check(db: &Db, cases: &[(&str, Option<Value>)]) {
    for (expr, expected) in cases {
        let got = value_of(db, expr).map(|v| normalize(&v));
        let expected = expected.as_ref().map(normalize);
        assert_eq!(got, expected, "SELECT VALUE {expr}");
    }
}

#[test]
fn literal_constants() {
    // constants.md: undefined, null, false, true.
    let db = empty();
    check(
        &db,
        &[
            ("true", Some(json!(true))),
            ("false", Some(json!(false))),
            ("null", Some(json!(null))),
            ("undefined", None),
        ],
    );
    db.ordered(
        "SELECT true AS t, false AS f, null AS n, undefined AS u",
        json!([{"t": true, "f": false, "n": null}]),
    );
}

#[test]
fn literal_words_are_lower_case_only() {
    // sql.g4: K_TRUE : 'true'; K_FALSE : 'false'; K_NULL : 'null'; K_UNDEFINED : 'undefined'
    // — other spellings are identifiers, which nothing binds.
    let db = empty();
    for sql in [
        "SELECT VALUE TRUE",
        "SELECT VALUE False",
        "SELECT VALUE NULL",
        "SELECT VALUE Undefined",
    ] {
        db.bad_request(sql);
    }
}

#[test]
fn number_constants() {
    // constants.md: decimal and scientific notation, and hexadecimal with a 0x prefix.
    let db = empty();
    check(
        &db,
        &[
            ("0", Some(json!(0))),
            ("42", Some(json!(42))),
            ("-1.5", Some(json!(-1.5))),
            ("+7", Some(json!(7))),
            ("1.5e3", Some(json!(1500))),
            ("1E2", Some(json!(100))),
            ("1e-2", Some(json!(0.01))),
            ("-2.5E+1", Some(json!(-25))),
            (".5", Some(json!(0.5))),
            ("3.", Some(json!(3))),
            ("1.0", Some(json!(1))),
            ("123456789012", Some(json!(123456789012_i64))),
        ],
    );
}

#[test]
fn hexadecimal_number_constants() {
    // constants.md: "hexadecimal_literal: Numbers represented using prefix 0x followed by one
    // or more hexadecimal digits."
    check(
        &empty(),
        &[
            ("0x1F", Some(json!(31))),
            ("0xff", Some(json!(255))),
            ("0x0", Some(json!(0))),
            ("0x10 + 1", Some(json!(17))),
        ],
    );
}

#[test]
fn string_constants_and_escapes() {
    // constants.md: single or double quotes; the escape sequences \' \" \\ \/ \b \f \n \r \t
    // \uXXXX.
    let db = empty();
    check(
        &db,
        &[
            ("'single'", Some(json!("single"))),
            ("\"double\"", Some(json!("double"))),
            ("''", Some(json!(""))),
            ("'it\\'s'", Some(json!("it's"))),
            ("\"it's\"", Some(json!("it's"))),
            ("'say \"hi\"'", Some(json!("say \"hi\""))),
            ("\"say \\\"hi\\\"\"", Some(json!("say \"hi\""))),
            ("'back\\\\slash'", Some(json!("back\\slash"))),
            ("'a\\/b'", Some(json!("a/b"))),
            ("'\\b'", Some(json!("\u{8}"))),
            ("'\\f'", Some(json!("\u{c}"))),
            ("'line\\nbreak'", Some(json!("line\nbreak"))),
            ("'\\r'", Some(json!("\r"))),
            ("'tab\\there'", Some(json!("tab\there"))),
            ("'\\u00e9'", Some(json!("é"))),
            ("'\\u00E9t\\u00E9'", Some(json!("été"))),
            ("'\\ud83d\\ude00'", Some(json!("😀"))),
            ("'µg'", Some(json!("µg"))),
            ("LENGTH('\\u00e9\\n')", Some(json!(2))),
        ],
    );
}

#[test]
fn array_and_object_constants() {
    // constants.md: array and object constants; property names bare or quoted.
    let db = empty();
    check(
        &db,
        &[
            ("[]", Some(json!([]))),
            ("{}", Some(json!({}))),
            (
                "[1, 'a', [true], {\"k\": null}]",
                Some(json!([1, "a", [true], {"k": null}])),
            ),
            (
                "{a: 1, \"b c\": [2], 'd': {e: false}}",
                Some(json!({"a": 1, "b c": [2], "d": {"e": false}})),
            ),
            // "Each element can be a value of any scalar data type, except undefined."
            ("[1, undefined, 2]", Some(json!([1, 2]))),
            ("{a: undefined, b: 1}", Some(json!({"b": 1}))),
        ],
    );
}

#[test]
fn keywords_are_case_insensitive() {
    let db = Db::new(&[
        json!({"id": "1", "team": "a", "n": 1, "tags": ["x", "y"]}),
        json!({"id": "2", "team": "a", "n": 2, "tags": ["y"]}),
        json!({"id": "3", "team": "b", "n": 3, "tags": []}),
    ]);
    let pairs = [
        (
            "SELECT VALUE c.id FROM c WHERE (c.n BETWEEN 1 AND 2) AND NOT (c.team IN ('b')) OR c.id LIKE '3' ESCAPE '!' ORDER BY c.id DESC",
            "select value c.id from c where (c.n between 1 and 2) and not (c.team in ('b')) or c.id like '3' escape '!' order by c.id desc",
        ),
        (
            "SELECT DISTINCT TOP 5 VALUE t FROM c JOIN t IN c.tags ORDER BY c.id ASC",
            "SeLeCt DiStInCt ToP 5 vAlUe t FrOm c JoIn t In c.tags OrDeR bY c.id AsC",
        ),
        (
            "SELECT c.team, COUNT(1) AS n FROM c GROUP BY c.team",
            "select c.team, count(1) as n from c group by c.team",
        ),
        (
            "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 1",
            "select value c.id from c order by c.id offset 1 limit 1",
        ),
        (
            "SELECT EXISTS(SELECT VALUE t FROM t IN c.tags) AS e, ARRAY(SELECT VALUE t FROM t IN c.tags) AS a FROM ROOT c",
            "select exists(select value t from t in c.tags) as e, array(select value t from t in c.tags) as a from root c",
        ),
    ];
    for (upper, lower) in pairs {
        let expected = db.rows(upper);
        assert!(!expected.is_empty(), "{upper}");
        db.unordered(lower, Value::Array(expected));
    }
}

#[test]
fn function_names_are_case_insensitive() {
    check(
        &empty(),
        &[
            ("UPPER('a')", Some(json!("A"))),
            ("upper('a')", Some(json!("A"))),
            ("Upper('a')", Some(json!("A"))),
            ("is_defined(1)", Some(json!(true))),
            ("left('abc', 1)", Some(json!("a"))),
            ("RIGHT('abc', 1)", Some(json!("c"))),
        ],
    );
}

#[test]
fn reserved_words_need_the_quoted_property_operator() {
    // working-with-json.md: the quoted property operator `[]` escapes a property "that has the
    // same name as a SQL keyword or reserved word".
    let db = Db::new(&[json!({
        "id": "1",
        "value": 10,
        "select": "s",
        "order": [1],
        "first": "f",
        "last": "l",
        "my property": true
    })]);
    db.ordered(
        r#"SELECT c["value"] AS v, c["select"] AS s, c["order"] AS o, c["my property"] AS p FROM c"#,
        json!([{"v": 10, "s": "s", "o": [1], "p": true}]),
    );
    db.bad_request("SELECT VALUE c.value FROM c");
    db.bad_request("SELECT VALUE c.select FROM c");
    // sql.g4 lets ALL, FIRST and LAST double as identifiers.
    db.ordered(
        "SELECT c.first, c.last FROM c",
        json!([{"first": "f", "last": "l"}]),
    );
}

/// parameterized-queries.md
fn on_sale() -> Vec<Value> {
    vec![
        json!({"id": "1", "name": "Tent", "onSale": false, "price": 99.5}),
        json!({"id": "2", "name": "Stove", "onSale": true, "price": 40}),
        json!({"id": "3", "name": "Lamp", "onSale": false, "price": 150}),
        json!({"id": "4", "name": "Cup", "onSale": false, "price": 100}),
    ]
}

#[test]
fn parameterized_filter() {
    let db = Db::new(&on_sale());
    db.unordered_with(
        "SELECT * FROM p WHERE (NOT p.onSale) AND (p.price BETWEEN 0 AND @upperPriceLimit)",
        &[("@upperPriceLimit", json!(100))],
        json!([
            {"id": "1", "name": "Tent", "onSale": false, "price": 99.5},
            {"id": "4", "name": "Cup", "onSale": false, "price": 100}
        ]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE (NOT p.onSale) AND (p.price BETWEEN 0 AND @upperPriceLimit)",
        &[("@upperPriceLimit", json!(50))],
        json!([]),
    );
}

#[test]
fn parameters_of_every_json_type() {
    // parameterized-queries.md: "Parameter values can be any valid JSON: strings, numbers,
    // booleans, null, even arrays or nested JSON."
    let db = Db::new(&on_sale());
    let params = [
        ("@s", json!("Tent")),
        ("@n", json!(40)),
        ("@b", json!(true)),
        ("@z", json!(null)),
        ("@arr", json!(["Cup", "Lamp"])),
        (
            "@obj",
            json!({"limits": {"low": 50, "high": 120}, "names": ["Stove"]}),
        ),
    ];
    db.ordered_with(
        "SELECT @s AS s, @n AS n, @b AS b, @z AS z, @arr AS arr, @obj AS obj",
        &params,
        json!([{
            "s": "Tent",
            "n": 40,
            "b": true,
            "z": null,
            "arr": ["Cup", "Lamp"],
            "obj": {"limits": {"low": 50, "high": 120}, "names": ["Stove"]}
        }]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.name = @s OR p.price = @n",
        &params,
        json!(["Tent", "Stove"]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.onSale = @b",
        &params,
        json!(["Stove"]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE ARRAY_CONTAINS(@arr, p.name)",
        &params,
        json!(["Cup", "Lamp"]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.price BETWEEN @obj.limits.low AND @obj.limits[\"high\"]",
        &params,
        json!(["Tent", "Cup"]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.name IN (@arr[0], @obj.names[0])",
        &params,
        json!(["Cup", "Stove"]),
    );
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.name = @z",
        &params,
        json!([]),
    );
}

#[test]
fn a_parameter_is_a_value_not_text() {
    // Parameterized SQL "prevents accidental exposure of data through SQL injection".
    let db = Db::new(&on_sale());
    db.unordered_with(
        "SELECT VALUE p.name FROM p WHERE p.name = @name",
        &[("@name", json!("Tent' OR '1' = '1"))],
        json!([]),
    );
}
