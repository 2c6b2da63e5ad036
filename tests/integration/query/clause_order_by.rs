//! ORDER BY (docs: nosql/query/order-by.md and its samples scripts/order-by, order-by-desc,
//! order-by-multiple; index-policy.md composite indexes): single and multiple sort keys,
//! null and undefined sort values, the index requirements.

use cosmoscope::engine::ContainerSettings;
use serde_json::{Value, json};

use crate::support::query_db::Db;

/// scripts/order-by-desc/seed.json (also the seed of scripts/order-by)
fn human_resources() -> Vec<Value> {
    vec![
        json!({"id": "7600090320", "name": {"first": "Casey", "last": "Jensen"}, "team": "Human resources"}),
        json!({"id": "8263106050", "name": {"first": "Amari", "last": "Rivera"}, "team": "Human resources"}),
        json!({"id": "8699698812", "name": {"first": "Kayla", "last": "Lewis"}, "team": "Human resources"}),
    ]
}

/// A composite index on (`/name/last` descending, `/name/first` ascending).
fn composite(s: &mut ContainerSettings) {
    s.indexing_policy = Some(
        serde_json::from_value(json!({
            "indexingMode": "consistent",
            "automatic": true,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/\"_etag\"/?"}],
            "compositeIndexes": [[
                {"path": "/name/last", "order": "descending"},
                {"path": "/name/first", "order": "ascending"}
            ]]
        }))
        .unwrap(),
    );
}

#[test]
fn ascending_by_default() {
    // scripts/order-by
    let db = Db::new(&human_resources());
    db.ordered(
        r#"SELECT VALUE {
    firstName: e.name.first,
    lastName: e.name.last
}
FROM
    employees e
WHERE
    e.team = "Human resources"
ORDER BY
    e.name.last"#,
        json!([
            {"firstName": "Casey", "lastName": "Jensen"},
            {"firstName": "Kayla", "lastName": "Lewis"},
            {"firstName": "Amari", "lastName": "Rivera"}
        ]),
    );
    db.ordered(
        "SELECT VALUE e.name.last FROM e ORDER BY e.name.last ASC",
        json!(["Jensen", "Lewis", "Rivera"]),
    );
}

#[test]
fn descending() {
    // scripts/order-by-desc
    let db = Db::new(&human_resources());
    db.ordered(
        r#"SELECT VALUE {
    firstName: e.name.first,
    lastName: e.name.last
}
FROM
    employees e
WHERE
    e.team = "Human resources"
ORDER BY
    e.name.last DESC"#,
        json!([
            {"firstName": "Amari", "lastName": "Rivera"},
            {"firstName": "Kayla", "lastName": "Lewis"},
            {"firstName": "Casey", "lastName": "Jensen"}
        ]),
    );
}

const MULTIPLE: &str = r#"SELECT VALUE {
    firstName: e.name.first,
    lastName: e.name.last
}
FROM
    employees e
WHERE
    e.team = "Human resources"
ORDER BY
    e.name.last DESC,
    e.name.first ASC"#;

#[test]
fn several_keys_need_a_composite_index() {
    // scripts/order-by-multiple: "A query that sorts using two or more fields requires a
    // composite index."
    let db = Db::new(&human_resources());
    let err = db.bad_request(MULTIPLE);
    assert!(err.message.contains("composite index"), "{}", err.message);
}

#[test]
fn several_keys_with_a_composite_index() {
    let mut docs = human_resources();
    docs.push(
        json!({"id": "1", "name": {"first": "Zoe", "last": "Lewis"}, "team": "Human resources"}),
    );
    docs.push(
        json!({"id": "2", "name": {"first": "Abe", "last": "Lewis"}, "team": "Human resources"}),
    );
    let db = Db::with(&docs, composite);
    db.ordered(
        MULTIPLE,
        json!([
            {"firstName": "Amari", "lastName": "Rivera"},
            {"firstName": "Abe", "lastName": "Lewis"},
            {"firstName": "Kayla", "lastName": "Lewis"},
            {"firstName": "Zoe", "lastName": "Lewis"},
            {"firstName": "Casey", "lastName": "Jensen"}
        ]),
    );
    // index-policy.md: a composite index also serves the query with every direction reversed.
    db.ordered(
        "SELECT VALUE e.name.first FROM e ORDER BY e.name.last ASC, e.name.first DESC",
        json!(["Casey", "Zoe", "Kayla", "Abe", "Amari"]),
    );
    // ... but not other direction mixes, nor the keys in another order.
    db.bad_request("SELECT VALUE e.name.first FROM e ORDER BY e.name.last DESC, e.name.first DESC");
    db.bad_request("SELECT VALUE e.name.first FROM e ORDER BY e.name.first ASC, e.name.last DESC");
}

#[test]
fn null_sorts_lowest() {
    // order-by.md: "null values are treated as the lowest possible values."
    let db = Db::new(&[
        json!({"id": "1", "v": 3}),
        json!({"id": "2", "v": null}),
        json!({"id": "3", "v": -10}),
        json!({"id": "4", "v": 0.5}),
    ]);
    db.ordered(
        "SELECT VALUE c.id FROM c ORDER BY c.v",
        json!(["2", "3", "4", "1"]),
    );
    db.ordered(
        "SELECT VALUE c.id FROM c ORDER BY c.v DESC",
        json!(["1", "4", "3", "2"]),
    );
}

#[test]
fn mixed_types_sort_by_type_then_value() {
    // null < booleans < numbers < strings (the service's type order).
    let db = Db::new(&[
        json!({"id": "s-b", "v": "b"}),
        json!({"id": "n-2", "v": 2}),
        json!({"id": "null", "v": null}),
        json!({"id": "true", "v": true}),
        json!({"id": "false", "v": false}),
        json!({"id": "s-a", "v": "a"}),
        json!({"id": "n--1", "v": -1}),
    ]);
    db.ordered(
        "SELECT VALUE c.id FROM c ORDER BY c.v",
        json!(["null", "false", "true", "n--1", "n-2", "s-a", "s-b"]),
    );
    db.ordered(
        "SELECT VALUE c.id FROM c ORDER BY c.v DESC",
        json!(["s-b", "s-a", "n-2", "n--1", "true", "false", "null"]),
    );
}

#[test]
fn undefined_sort_values_are_returned_first_ascending() {
    // order-by.md remarks: "Queries with ORDER BY return all items, including items where the
    // property in the ORDER BY clause isn't defined. Typically, you can't control the order
    // that different undefined types appear in the results." They sort below null.
    let db = Db::new(&[
        json!({"id": "a", "v": 2}),
        json!({"id": "b"}),
        json!({"id": "c", "v": null}),
        json!({"id": "d", "v": 1}),
        json!({"id": "e"}),
    ]);
    for rows in db.each("SELECT VALUE c.id FROM c ORDER BY c.v", &[]) {
        assert_eq!(rows.len(), 5, "{rows:?}");
        let mut undefined = rows[..2].to_vec();
        undefined.sort_by_key(|v| v.to_string());
        assert_eq!(undefined, vec![json!("b"), json!("e")], "{rows:?}");
        assert_eq!(rows[2..], [json!("c"), json!("d"), json!("a")], "{rows:?}");
    }
    for rows in db.each("SELECT VALUE c.id FROM c ORDER BY c.v DESC", &[]) {
        assert_eq!(rows.len(), 5, "{rows:?}");
        assert_eq!(rows[..3], [json!("a"), json!("d"), json!("c")], "{rows:?}");
        let mut undefined = rows[3..].to_vec();
        undefined.sort_by_key(|v| v.to_string());
        assert_eq!(undefined, vec![json!("b"), json!("e")], "{rows:?}");
    }
}

#[test]
fn order_by_needs_an_index_on_the_path() {
    // order-by.md remarks: "The ORDER BY clause requires that the indexing policy includes an
    // index for the fields being sorted."
    let db = Db::with(&human_resources(), |s| {
        s.indexing_policy = Some(
            serde_json::from_value(json!({
                "indexingMode": "consistent",
                "includedPaths": [{"path": "/*"}],
                "excludedPaths": [{"path": "/name/*"}]
            }))
            .unwrap(),
        );
    });
    db.bad_request("SELECT VALUE e.id FROM e ORDER BY e.name.last");
    // Other paths still sort.
    db.ordered(
        "SELECT VALUE e.id FROM e ORDER BY e.id",
        json!(["7600090320", "8263106050", "8699698812"]),
    );
}

#[test]
fn order_by_sorts_on_a_property_path() {
    // order-by.md remarks: "The query runtime supports sorting against a property name or
    // computed properties" — not an arbitrary expression.
    let db = Db::new(&human_resources());
    db.bad_request("SELECT VALUE e.id FROM e ORDER BY LOWER(e.name.last)");
    db.bad_request("SELECT VALUE e.id FROM e ORDER BY e.name.last || 'x'");
}

#[test]
fn order_by_with_bracket_paths_and_keyword_case() {
    let db = Db::new(&human_resources());
    db.ordered(
        r#"select value e.name["first"] from e order by e["name"].first desc"#,
        json!(["Kayla", "Casey", "Amari"]),
    );
}

#[test]
fn order_by_numbers_across_partitions() {
    let docs: Vec<Value> = (0..40)
        .map(|i| json!({"id": format!("k{i}"), "n": (i * 17) % 40}))
        .collect();
    let db = Db::new(&docs);
    let asc: Vec<Value> = (0..40).map(|i| json!(i)).collect();
    db.ordered(
        "SELECT VALUE c.n FROM c ORDER BY c.n",
        Value::Array(asc.clone()),
    );
    let desc: Vec<Value> = asc.into_iter().rev().collect();
    db.ordered(
        "SELECT VALUE c.n FROM c ORDER BY c.n DESC",
        Value::Array(desc),
    );
    db.ordered(
        "SELECT TOP 3 VALUE c.n FROM c ORDER BY c.n DESC",
        json!([39, 38, 37]),
    );
    db.ordered(
        "SELECT VALUE c.n FROM c WHERE c.n >= 35 ORDER BY c.n",
        json!([35, 36, 37, 38, 39]),
    );
}

/// Six items of two teams, created in the order of `n`, with ids (and so partition keys and
/// storage keys) in the opposite order.
fn two_teams() -> Vec<Value> {
    (0..6)
        .map(|n| {
            let team = if n % 2 == 0 { "a" } else { "b" };
            json!({"id": format!("{}", 9 - n), "team": team, "g": 1, "n": n})
        })
        .collect()
}

#[test]
fn ties_come_in_creation_order_in_the_index_scans_direction() {
    // Within a physical partition the service returns equal sort values in `_rid` (creation)
    // order, in the direction it scans the index (the .NET SDK's ORDER BY continuation:
    // "the documents should be in _rid order in the same direction as the index"): a range
    // index is ascending, so DESC reverses them. The index walk and a sort after a filter the
    // index cannot answer agree.
    let db = Db::single(&two_teams());
    for filter in ["", "WHERE LOWER(c.id) != '#' "] {
        db.ordered(
            &format!("SELECT VALUE c.n FROM c {filter}ORDER BY c.team"),
            json!([0, 2, 4, 1, 3, 5]),
        );
        db.ordered(
            &format!("SELECT VALUE c.n FROM c {filter}ORDER BY c.team DESC"),
            json!([5, 3, 1, 4, 2, 0]),
        );
        db.ordered(
            &format!("SELECT TOP 2 VALUE c.n FROM c {filter}ORDER BY c.team DESC"),
            json!([5, 3]),
        );
    }
}

#[test]
fn ties_under_a_composite_index_follow_its_scan_direction() {
    // With (team DESC, g ASC), `team DESC, g ASC` scans the composite forwards (ties in
    // creation order) and `team ASC, g DESC` backwards (latest first), whatever the first
    // key's own direction.
    let db = Db::single_with(&two_teams(), |s| {
        s.indexing_policy = Some(
            serde_json::from_value(json!({
                "compositeIndexes": [[
                    {"path": "/team", "order": "descending"},
                    {"path": "/g", "order": "ascending"}
                ]]
            }))
            .unwrap(),
        );
    });
    for filter in ["", "WHERE LOWER(c.id) != '#' "] {
        db.ordered(
            &format!("SELECT VALUE c.n FROM c {filter}ORDER BY c.team DESC, c.g ASC"),
            json!([1, 3, 5, 0, 2, 4]),
        );
        db.ordered(
            &format!("SELECT VALUE c.n FROM c {filter}ORDER BY c.team ASC, c.g DESC"),
            json!([4, 2, 0, 5, 3, 1]),
        );
    }
}
