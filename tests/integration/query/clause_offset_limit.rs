//! OFFSET LIMIT (docs: nosql/query/offset-limit.md and its samples scripts/offset-limit-none,
//! offset-limit-partial, offset-limit; pagination.md): skip and take, with and without
//! ORDER BY, parameters, and pages of results.

use cosmoscope::engine::{Backend, QueryOptions};
use serde_json::{Value, json};

use crate::support::query_db::{self, DB, Db};

/// scripts/offset-limit/seed.json ("In the original JSON data, the items are not sorted.")
fn leadership() -> Vec<Value> {
    vec![
        json!({"id": "5929071063", "name": "Sawyer Miller", "team": "Leadership team"}),
        json!({"id": "1599541170", "name": "Jennifer Wilkins", "team": "Leadership team"}),
        json!({"id": "9461206378", "name": "Hannah Haynes", "team": "Leadership team"}),
        json!({"id": "3261752803", "name": "Isaac Talbot", "team": "Leadership team"}),
        json!({"id": "5011271389", "name": "Riley Johnson", "team": "Leadership team"}),
    ]
}

const BASE: &str = r#"SELECT VALUE {
    name: e.name
}
FROM
    employees e
WHERE
    e.team = "Leadership team"
ORDER BY
    e.name"#;

#[test]
fn sorted_without_offset() {
    // scripts/offset-limit-none
    let db = Db::new(&leadership());
    db.ordered(
        BASE,
        json!([
            {"name": "Hannah Haynes"},
            {"name": "Isaac Talbot"},
            {"name": "Jennifer Wilkins"},
            {"name": "Riley Johnson"},
            {"name": "Sawyer Miller"}
        ]),
    );
}

#[test]
fn skip_one_take_the_rest() {
    // scripts/offset-limit-partial: skips one item and returns the remaining four (out of a
    // limit of five).
    let db = Db::new(&leadership());
    db.ordered(
        &format!("{BASE}\nOFFSET 1 LIMIT 5"),
        json!([
            {"name": "Isaac Talbot"},
            {"name": "Jennifer Wilkins"},
            {"name": "Riley Johnson"},
            {"name": "Sawyer Miller"}
        ]),
    );
}

#[test]
fn skip_and_take_a_subset() {
    // scripts/offset-limit
    let db = Db::new(&leadership());
    db.ordered(
        &format!("{BASE}\nOFFSET 2 LIMIT 2"),
        json!([{"name": "Jennifer Wilkins"}, {"name": "Riley Johnson"}]),
    );
    // offset-limit.md text: "skipping one item and taking the next three".
    db.ordered(
        &format!("{BASE}\nOFFSET 1 LIMIT 3"),
        json!([{"name": "Isaac Talbot"}, {"name": "Jennifer Wilkins"}, {"name": "Riley Johnson"}]),
    );
}

#[test]
fn edges() {
    let db = Db::new(&leadership());
    let names = |sql: &str| format!("SELECT VALUE e.name FROM e ORDER BY e.name {sql}");
    db.ordered(&names("OFFSET 0 LIMIT 0"), json!([]));
    db.ordered(&names("OFFSET 5 LIMIT 10"), json!([]));
    db.ordered(&names("OFFSET 100 LIMIT 1"), json!([]));
    db.ordered(&names("OFFSET 4 LIMIT 1"), json!(["Sawyer Miller"]));
    db.ordered(&names("OFFSET 0 LIMIT 1"), json!(["Hannah Haynes"]));
    db.ordered(
        "SELECT VALUE e.name FROM e ORDER BY e.name DESC OFFSET 1 LIMIT 2",
        json!(["Riley Johnson", "Jennifer Wilkins"]),
    );
}

#[test]
fn both_counts_are_required() {
    // offset-limit.md: "Both the OFFSET count and the LIMIT count are required".
    let db = Db::new(&leadership());
    db.bad_request("SELECT VALUE e.name FROM e ORDER BY e.name OFFSET 1");
    db.bad_request("SELECT VALUE e.name FROM e ORDER BY e.name LIMIT 1");
    db.bad_request("SELECT VALUE e.name FROM e ORDER BY e.name LIMIT 1 OFFSET 1");
}

#[test]
fn counts_are_non_negative_integers() {
    // offset-limit.md: "the integer number of items".
    let db = Db::new(&leadership());
    db.bad_request("SELECT VALUE e.name FROM e OFFSET -1 LIMIT 1");
    db.bad_request("SELECT VALUE e.name FROM e OFFSET 1 LIMIT -1");
    db.bad_request("SELECT VALUE e.name FROM e OFFSET 1.5 LIMIT 1");
    db.bad_request("SELECT VALUE e.name FROM e OFFSET 'a' LIMIT 1");
}

#[test]
fn counts_can_be_parameters() {
    let db = Db::new(&leadership());
    db.ordered_with(
        "SELECT VALUE e.name FROM e ORDER BY e.name OFFSET @skip LIMIT @take",
        &[("@skip", json!(1)), ("@take", json!(2))],
        json!(["Isaac Talbot", "Jennifer Wilkins"]),
    );
}

#[test]
fn without_order_by_the_order_is_fixed() {
    // offset-limit.md: "If no ORDER BY clause is used, it results in a deterministic order of
    // values": windows of one query are consistent and together cover every result.
    let db = Db::new(&leadership());
    for c in ["one", "many"] {
        let run = |sql: &str| query_db::run(&db.engine, c, sql, &[]).unwrap();
        let all = run("SELECT VALUE e.name FROM e OFFSET 0 LIMIT 5");
        assert_eq!(all.len(), 5);
        assert_eq!(all, run("SELECT VALUE e.name FROM e OFFSET 0 LIMIT 5"));
        let mut pieces = run("SELECT VALUE e.name FROM e OFFSET 0 LIMIT 2");
        pieces.extend(run("SELECT VALUE e.name FROM e OFFSET 2 LIMIT 2"));
        pieces.extend(run("SELECT VALUE e.name FROM e OFFSET 4 LIMIT 2"));
        assert_eq!(pieces, all);
    }
}

#[test]
fn offset_limit_in_a_subquery() {
    let db = Db::new(&[json!({"id": "1", "tags": ["a", "b", "c", "d"]})]);
    db.ordered(
        "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags OFFSET 1 LIMIT 2) FROM c",
        json!([["b", "c"]]),
    );
}

/// Every page of `sql` at `page` results per page.
fn pages(db: &Db, container: &str, sql: &str, page: usize) -> Vec<Vec<Value>> {
    let mut opts = QueryOptions {
        max_items: Some(page),
        ..Default::default()
    };
    let mut out = Vec::new();
    loop {
        let r = db.engine.query(DB, container, sql, &opts).unwrap();
        assert!(r.documents.len() <= page);
        out.push(r.documents.into_iter().map(Value::from).collect());
        match r.continuation {
            Some(t) => opts.continuation = Some(t),
            None => return out,
        }
    }
}

#[test]
fn pages_of_an_ordered_query() {
    // pagination.md: "The number of items returned per query execution are less than or equal
    // to MaxItemCount"; continuing with the token returns the rest.
    let db = Db::new(&leadership());
    for c in ["one", "many"] {
        let got: Vec<Value> = pages(&db, c, "SELECT VALUE e.name FROM e ORDER BY e.name", 2)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(
            got,
            vec![
                json!("Hannah Haynes"),
                json!("Isaac Talbot"),
                json!("Jennifer Wilkins"),
                json!("Riley Johnson"),
                json!("Sawyer Miller")
            ]
        );
        let got: Vec<Value> = pages(
            &db,
            c,
            "SELECT VALUE e.name FROM e ORDER BY e.name OFFSET 1 LIMIT 3",
            2,
        )
        .into_iter()
        .flatten()
        .collect();
        assert_eq!(
            got,
            vec![
                json!("Isaac Talbot"),
                json!("Jennifer Wilkins"),
                json!("Riley Johnson")
            ]
        );
    }
}

#[test]
fn pages_of_distinct_with_order_by() {
    // pagination.md: a DISTINCT query can use continuation tokens with ORDER BY.
    let mut docs = leadership();
    docs.push(json!({"id": "dup1", "name": "Isaac Talbot"}));
    docs.push(json!({"id": "dup2", "name": "Hannah Haynes"}));
    let db = Db::new(&docs);
    for c in ["one", "many"] {
        let got: Vec<Value> = pages(
            &db,
            c,
            "SELECT DISTINCT VALUE\n    e.name\nFROM\n    employees e\nORDER BY\n    e.name",
            2,
        )
        .into_iter()
        .flatten()
        .collect();
        assert_eq!(
            got,
            vec![
                json!("Hannah Haynes"),
                json!("Isaac Talbot"),
                json!("Jennifer Wilkins"),
                json!("Riley Johnson"),
                json!("Sawyer Miller")
            ]
        );
    }
}

#[test]
fn parameter_counts_must_be_non_negative_integers() {
    // The literal forms are rejected (counts_are_non_negative_integers); parameters are held to
    // the same rule.
    let db = Db::new(&leadership());
    let sql = "SELECT VALUE e.name FROM e ORDER BY e.name OFFSET @skip LIMIT @take";
    for (skip, take) in [
        (json!(-1), json!(2)),
        (json!(1.5), json!(2)),
        (json!("1"), json!(2)),
        (json!(1), json!(-2)),
        (json!(1), json!("2")),
    ] {
        db.bad_request_with(sql, &[("@skip", skip), ("@take", take)]);
    }
}
