//! Every built-in function family through real queries on a store: names resolve case-
//! insensitively through the parser, arguments come from items and parameters, and results
//! come back as the documentation shows them.

use std::collections::HashMap;

use cosmoscope::engine::ContainerSettings;
use cosmoscope::engine::{Backend, Engine, QueryOptions};
use serde_json::{Value, json};

fn setup() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(dir.path()).unwrap();
    e.create_database("db").unwrap();
    e.create_container("db", "c", ContainerSettings::new(vec!["/id".into()]))
        .unwrap();
    let item = json!({
        "id": "p1",
        "name": "Road Bike",
        "tags": ["red", "carbon", "sale"],
        "price": 1234.5678,
        "qty": 7,
        "created": "2024-05-01T10:20:30.0000000Z",
        "loc": {"type": "Point", "coordinates": [-122.12, 47.66]}
    });
    e.upsert_item("db", "c", item.to_string().as_bytes(), None)
        .unwrap();
    (dir, e)
}

/// The single value `SELECT VALUE <expr> FROM c` returns.
fn value(e: &Engine, expr: &str) -> Value {
    value_with(e, expr, HashMap::new())
}

fn value_with(e: &Engine, expr: &str, params: HashMap<String, Value>) -> Value {
    let r = e
        .query(
            "db",
            "c",
            &format!("SELECT VALUE {expr} FROM c"),
            &QueryOptions {
                params,
                ..Default::default()
            },
        )
        .unwrap_or_else(|err| panic!("{expr}: {err}"));
    assert_eq!(r.documents.len(), 1, "{expr}: {:?}", r.documents);
    r.documents[0].value().clone()
}

#[test]
fn string_functions() {
    let (_d, e) = setup();
    assert_eq!(value(&e, "UPPER(c.name)"), json!("ROAD BIKE"));
    assert_eq!(value(&e, "lower(c.name)"), json!("road bike"));
    assert_eq!(
        value(&e, "CONCAT(c.id, '-', c.name)"),
        json!("p1-Road Bike")
    );
    assert_eq!(value(&e, "CONTAINS(c.name, 'bike', true)"), json!(true));
    assert_eq!(value(&e, "STARTSWITH(c.name, 'Road')"), json!(true));
    assert_eq!(value(&e, "SUBSTRING(c.name, 5, 4)"), json!("Bike"));
    assert_eq!(value(&e, "LENGTH(c.name)"), json!(9));
    assert_eq!(
        value(&e, "REPLACE(c.name, 'Road', 'Gravel')"),
        json!("Gravel Bike")
    );
    assert_eq!(
        value(&e, "STRINGJOIN(c.tags, '|')"),
        json!("red|carbon|sale")
    );
    assert_eq!(value(&e, "REGEXMATCH(c.name, '^road', 'i')"), json!(true));
    assert_eq!(value(&e, "TOSTRING(c.qty)"), json!("7"));
}

#[test]
fn type_checking_and_conversion_functions() {
    let (_d, e) = setup();
    assert_eq!(value(&e, "IS_STRING(c.name)"), json!(true));
    assert_eq!(value(&e, "IS_DEFINED(c.missing)"), json!(false));
    assert_eq!(value(&e, "IS_INTEGER(c.qty)"), json!(true));
    assert_eq!(value(&e, "IS_NUMBER(c.price)"), json!(true));
    assert_eq!(value(&e, "STRINGTONUMBER('42.5')"), json!(42.5));
    assert_eq!(value(&e, "STRINGTOARRAY('[1, \"a\"]')"), json!([1, "a"]));
    assert_eq!(value(&e, "IIF(c.qty > 5, 'many', 'few')"), json!("many"));
    let mut params = HashMap::new();
    params.insert("flag".into(), Value::from("true"));
    assert_eq!(
        value_with(&e, "STRINGTOBOOLEAN(@flag)", params),
        json!(true)
    );
}

#[test]
fn math_functions() {
    let (_d, e) = setup();
    assert_eq!(value(&e, "ROUND(c.price)"), json!(1235));
    assert_eq!(value(&e, "FLOOR(c.price)"), json!(1234));
    assert_eq!(value(&e, "ABS(-c.qty)"), json!(7));
    assert_eq!(value(&e, "POWER(2, 10)"), json!(1024));
    assert_eq!(value(&e, "NUMBERBIN(c.price, 100)"), json!(1200));
    assert_eq!(value(&e, "INTADD(c.qty, 3)"), json!(10));
    assert_eq!(value(&e, "INTDIV(c.qty, 2)"), json!(3));
    assert_eq!(value(&e, "IS_FINITE_NUMBER(SQRT(-1))"), json!(false));
}

#[test]
fn array_functions() {
    let (_d, e) = setup();
    assert_eq!(value(&e, "ARRAY_LENGTH(c.tags)"), json!(3));
    assert_eq!(value(&e, "ARRAY_CONTAINS(c.tags, 'sale')"), json!(true));
    assert_eq!(
        value(&e, "ARRAY_CONTAINS_ANY(c.tags, 'blue', 'red')"),
        json!(true)
    );
    assert_eq!(
        value(&e, "ARRAY_CONTAINS_ALL(c.tags, 'blue', 'red')"),
        json!(false)
    );
    assert_eq!(value(&e, "ARRAY_SLICE(c.tags, 1, 1)"), json!(["carbon"]));
    assert_eq!(
        value(&e, "SETINTERSECT(c.tags, ['sale', 'new'])"),
        json!(["sale"])
    );
    assert_eq!(value(&e, "CHOOSE(2, 'a', 'b', 'c')"), json!("b"));
    assert_eq!(
        value(&e, "ARRAY_CONCAT(c.tags, ['x'])"),
        json!(["red", "carbon", "sale", "x"])
    );
}

#[test]
fn date_time_functions() {
    let (_d, e) = setup();
    assert_eq!(
        value(&e, "DATETIMEADD('dd', 1, c.created)"),
        json!("2024-05-02T10:20:30.0000000Z")
    );
    assert_eq!(value(&e, "DATETIMEPART('hh', c.created)"), json!(10));
    assert_eq!(
        value(
            &e,
            "DATETIMEDIFF('dd', c.created, '2024-05-11T00:00:00.0000000Z')"
        ),
        json!(10)
    );
    assert_eq!(
        value(&e, "DATETIMETOTIMESTAMP(c.created)"),
        json!(1714558830000_i64)
    );
    assert_eq!(
        value(&e, "TIMESTAMPTODATETIME(1714558830000)"),
        json!("2024-05-01T10:20:30.0000000Z")
    );
    assert_eq!(value(&e, "IS_DATETIME(c.created)"), json!(true));
    // The static twins are bound once for every item; the plain functions read the clock
    // per item (getcurrentticksstatic.md), so never before the binding.
    let r = e
        .query(
            "db",
            "c",
            "SELECT VALUE GETCURRENTDATETIMESTATIC() = GETCURRENTDATETIMESTATIC() FROM c",
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(r.documents, vec![json!(true)]);
    let r = e
        .query(
            "db",
            "c",
            "SELECT GetCurrentTicks() AS t, GetCurrentTicksStatic() AS s, \
             GetCurrentDateTime() AS d, GetCurrentDateTimeStatic() AS ds FROM c",
            &QueryOptions::default(),
        )
        .unwrap();
    for row in &r.documents {
        assert!(row["t"].as_i64() >= row["s"].as_i64(), "{row}");
        assert!(row["d"].as_str() >= row["ds"].as_str(), "{row}");
    }
    // Ticks print as whole numbers, as the docs show them (datetimetoticks.md), and the
    // current time has the service's 100 ns resolution (getcurrentticks.md).
    let ticks = value(&e, "DATETIMETOTICKS('2015-05-19T12:00:00.0000000')");
    assert_eq!(ticks.to_string(), "14320368000000000");
    let now = value(&e, "GETCURRENTTICKS()");
    assert!(now.is_i64(), "{now}");
    let sub_ms: Vec<i64> = (0..5)
        .map(|_| value(&e, "GETCURRENTTICKS()").as_i64().unwrap_or(0) % 10_000)
        .collect();
    assert!(sub_ms.iter().any(|t| *t != 0), "{sub_ms:?}");
}

#[test]
fn spatial_functions() {
    let (_d, e) = setup();
    let d = value(
        &e,
        "ST_DISTANCE(c.loc, {'type': 'Point', 'coordinates': [-122.12, 47.67]})",
    );
    let meters = d.as_f64().unwrap();
    assert!((meters - 1112.0).abs() < 5.0, "{meters}");
    let poly = "{'type': 'Polygon', 'coordinates': [[[-123, 47], [-121, 47], [-121, 48], [-123, 48], [-123, 47]]]}";
    assert_eq!(value(&e, &format!("ST_WITHIN(c.loc, {poly})")), json!(true));
    assert_eq!(value(&e, "ST_ISVALID(c.loc)"), json!(true));
    assert_eq!(
        value(
            &e,
            "ST_ISVALIDDETAILED({'type': 'Point', 'coordinates': [0, 91]})"
        )["valid"],
        json!(false)
    );
}

#[test]
fn aggregates_through_queries() {
    let (_d, e) = setup();
    for (i, p) in [10.0, 20.0, 30.0].iter().enumerate() {
        let item = json!({"id": format!("x{i}"), "price": p});
        e.upsert_item("db", "c", item.to_string().as_bytes(), None)
            .unwrap();
    }
    let q = |sql: &str| {
        e.query("db", "c", sql, &QueryOptions::default())
            .unwrap()
            .documents
    };
    assert_eq!(q("SELECT VALUE COUNT(1) FROM c"), vec![json!(4)]);
    assert_eq!(
        q("SELECT VALUE SUM(c.price) FROM c WHERE STARTSWITH(c.id, 'x')"),
        vec![json!(60)]
    );
    assert_eq!(
        q("SELECT VALUE AVG(c.price) FROM c WHERE STARTSWITH(c.id, 'x')"),
        vec![json!(20)]
    );
    assert_eq!(q("SELECT VALUE MIN(c.price) FROM c"), vec![json!(10)]);
    assert_eq!(
        q("SELECT VALUE MAX(c.price) FROM c"),
        vec![json!(1234.5678)]
    );
    let err = e
        .query(
            "db",
            "c",
            "SELECT VALUE NOSUCH(c.price) FROM c",
            &QueryOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.status.as_u16(), 400);
}
