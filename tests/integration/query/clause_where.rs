//! WHERE (docs: nosql/query/where.md and its samples scripts/where, where-scalar,
//! where-field; equality-comparison-operators.md): only `true` keeps an item.

use cosmoscope::engine::Backend;
use serde_json::{Value, json};

use crate::support::query_db::Db;

/// scripts/where/seed.json
fn hospitality() -> Vec<Value> {
    vec![
        json!({"id": "9088760876", "name": "Jordan Mitchell", "team": "Hospitality"}),
        json!({"id": "4482760136", "name": "Ashley Schroeder", "team": "Hospitality"}),
        json!({"id": "7911848835", "name": "Tomas Richardson", "team": "Hospitality"}),
    ]
}

/// scripts/where-scalar/seed.json
fn engineers() -> Vec<Value> {
    vec![
        json!({"id": "3739792186", "name": "Ana Bowman", "vacationDays": 10, "team": "Software engineering"}),
        json!({"id": "2956300999", "name": "Madison Butler", "vacationDays": 7, "team": "Software engineering"}),
        json!({"id": "7669068854", "name": "Casey Jensen", "vacationDays": 6, "team": "Software engineering"}),
    ]
}

/// scripts/where-field/seed.json
fn facilities() -> Vec<Value> {
    vec![
        json!({"id": "7955766483", "name": "Riley Ramirez", "partTime": true, "team": "Facilities"}),
        json!({"id": "9540450934", "name": "Cora Thomas", "partTime": false, "team": "Facilities"}),
        json!({"id": "3089581802", "name": "Caleb Foster", "partTime": true, "team": "Facilities"}),
    ]
}

#[test]
fn simple_equality() {
    // scripts/where
    let db = Db::new(&hospitality());
    db.unordered(
        r#"SELECT VALUE {
    employeeName: e.name,
    currentTeam: e.team
}
FROM
    employees e
WHERE
    e.team = "Hospitality""#,
        json!([
            {"employeeName": "Jordan Mitchell", "currentTeam": "Hospitality"},
            {"employeeName": "Ashley Schroeder", "currentTeam": "Hospitality"},
            {"employeeName": "Tomas Richardson", "currentTeam": "Hospitality"}
        ]),
    );
    db.unordered(
        r#"SELECT VALUE e.name FROM employees e WHERE e.team = "Housekeeping""#,
        json!([]),
    );
}

#[test]
fn scalar_expression_filter() {
    // scripts/where-scalar
    let db = Db::new(&engineers());
    db.unordered(
        r#"SELECT VALUE {
    employeeName: e.name,
    vacationDaysRemaining: e.vacationDays
}
FROM
    employees e
WHERE
    e.vacationDays >= 7
    AND e.team = "Software engineering""#,
        json!([
            {"employeeName": "Ana Bowman", "vacationDaysRemaining": 10},
            {"employeeName": "Madison Butler", "vacationDaysRemaining": 7}
        ]),
    );
}

#[test]
fn a_boolean_property_is_a_filter() {
    // scripts/where-field
    let db = Db::new(&facilities());
    db.unordered(
        r#"SELECT VALUE {
    employeeName: e.name,
    isPartTime: e.partTime
}
FROM
    employees e
WHERE
    e.partTime
    AND e.team = "Facilities""#,
        json!([
            {"employeeName": "Riley Ramirez", "isPartTime": true},
            {"employeeName": "Caleb Foster", "isPartTime": true}
        ]),
    );
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE NOT e.partTime",
        json!(["Cora Thomas"]),
    );
}

#[test]
fn only_true_satisfies_the_condition() {
    // where.md remarks: "Only the boolean value true satisfies the condition, any other value:
    // undefined, null, false, a number scalar, an array, or an object doesn't".
    let db = Db::new(&[
        json!({"id": "t", "v": true}),
        json!({"id": "f", "v": false}),
        json!({"id": "n", "v": null}),
        json!({"id": "1", "v": 1}),
        json!({"id": "0", "v": 0}),
        json!({"id": "s", "v": "true"}),
        json!({"id": "a", "v": [true]}),
        json!({"id": "o", "v": {"v": true}}),
        json!({"id": "u"}),
    ]);
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v", json!(["t"]));
    db.unordered("SELECT VALUE c.id FROM c WHERE c.v = true", json!(["t"]));
    for lit in [
        "1",
        "'true'",
        "null",
        "undefined",
        "[true]",
        "{a: true}",
        "false",
    ] {
        db.unordered(&format!("SELECT VALUE c.id FROM c WHERE {lit}"), json!([]));
    }
    db.unordered(
        "SELECT VALUE c.id FROM c WHERE true",
        json!(["t", "f", "n", "1", "0", "s", "a", "o", "u"]),
    );
}

#[test]
fn cross_type_comparison_excludes_the_item() {
    // equality-comparison-operators.md: `WHERE 0 = "true"` includes nothing.
    let db = Db::new(&engineers());
    db.unordered(
        r#"SELECT
    *
FROM
    products p
WHERE 
    0 = "true""#,
        json!([]),
    );
    // keywords.md BETWEEN note: mixed types compare to undefined, so the item is skipped.
    let db = Db::new(&[
        json!({"id": "1", "price": 5.0}),
        json!({"id": "2", "price": "fifteenDollars"}),
        json!({"id": "3", "price": 15}),
    ]);
    db.unordered(
        "SELECT VALUE p.id FROM p WHERE p.price > 1",
        json!(["1", "3"]),
    );
    db.unordered(
        "SELECT VALUE p.id FROM p WHERE NOT (p.price > 1)",
        json!([]),
    );
    db.unordered("SELECT VALUE p.id FROM p WHERE p.price > 'a'", json!(["2"]));
}

#[test]
fn every_binary_operator_family_filters() {
    // where.md remarks: arithmetic, bitwise, logical, comparison and string operators.
    let db = Db::new(&engineers());
    let cases = [
        ("e.vacationDays + 1 = 8", json!(["Madison Butler"])),
        ("e.vacationDays - 6 = 0", json!(["Casey Jensen"])),
        ("e.vacationDays * 2 = 20", json!(["Ana Bowman"])),
        ("e.vacationDays / 2 = 3.5", json!(["Madison Butler"])),
        (
            "e.vacationDays % 2 = 0",
            json!(["Ana Bowman", "Casey Jensen"]),
        ),
        (
            "(e.vacationDays | 1) = 7",
            json!(["Madison Butler", "Casey Jensen"]),
        ),
        (
            "(e.vacationDays & 2) = 2",
            json!(["Ana Bowman", "Madison Butler", "Casey Jensen"]),
        ),
        ("(e.vacationDays ^ 3) = 5", json!(["Casey Jensen"])),
        ("(e.vacationDays << 1) = 14", json!(["Madison Butler"])),
        ("(e.vacationDays >> 1) = 5", json!(["Ana Bowman"])),
        (
            "(e.vacationDays >>> 1) = 3",
            json!(["Madison Butler", "Casey Jensen"]),
        ),
        (
            "e.vacationDays > 6 AND e.vacationDays < 10",
            json!(["Madison Butler"]),
        ),
        (
            "e.vacationDays = 6 OR e.vacationDays = 10",
            json!(["Ana Bowman", "Casey Jensen"]),
        ),
        ("NOT (e.vacationDays >= 7)", json!(["Casey Jensen"])),
        ("e.vacationDays != 7", json!(["Ana Bowman", "Casey Jensen"])),
        (
            "e.vacationDays <= 7",
            json!(["Madison Butler", "Casey Jensen"]),
        ),
        ("e.name || '!' = 'Ana Bowman!'", json!(["Ana Bowman"])),
    ];
    for (filter, expected) in cases {
        db.unordered(
            &format!("SELECT VALUE e.name FROM e WHERE {filter}"),
            expected,
        );
    }
}

#[test]
fn not_equal_also_spells_angle_brackets() {
    // where.md lists `<>` among the comparison operators.
    let db = Db::new(&engineers());
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.vacationDays <> 7",
        json!(["Ana Bowman", "Casey Jensen"]),
    );
}

#[test]
fn functions_and_keywords_in_filters() {
    let db = Db::new(&engineers());
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE STARTSWITH(e.name, 'Ma') OR ENDSWITH(e.name, 'sen')",
        json!(["Madison Butler", "Casey Jensen"]),
    );
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.vacationDays IN (6, 10)",
        json!(["Ana Bowman", "Casey Jensen"]),
    );
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.vacationDays BETWEEN 7 AND 10",
        json!(["Ana Bowman", "Madison Butler"]),
    );
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.name LIKE '%Butler'",
        json!(["Madison Butler"]),
    );
}

#[test]
fn the_partition_key_in_the_filter_routes_the_query() {
    // where.md remarks: an equality filter on the partition key targets the relevant
    // partitions only; the result is the same.
    let db = Db::new(&engineers());
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.id = '2956300999'",
        json!(["Madison Butler"]),
    );
    db.unordered(
        "SELECT VALUE e.name FROM e WHERE e.id IN ('2956300999', '7669068854') AND e.vacationDays > 6",
        json!(["Madison Butler"]),
    );
    for c in ["one", "many"] {
        let r = db
            .engine
            .query(
                "db",
                c,
                "SELECT * FROM e WHERE e.id = '3739792186'",
                &Default::default(),
            )
            .unwrap();
        assert_eq!(r.routing.kind, "single-partition");
        assert_eq!(r.documents.len(), 1);
    }
}
