//! Small gaps of the command-line contract (issue 29): negative numbers are values, query
//! parameters carry their `@` and must be bound, spatial index types are checked, and a
//! query's text can come from a file or stdin.

use std::path::Path;

use serde_json::json;

use crate::support::cli::{failed, ok, run, run_stdin, stdout};

fn setup(dir: &Path) {
    ok(dir, &["db", "create", "db"]);
    ok(
        dir,
        &["container", "create", "db/c", "--partition-key", "/pk"],
    );
    let out = run_stdin(
        dir,
        &["item", "create", "db/c"],
        r#"{"id": "neg", "pk": -5, "n": 1}"#,
    );
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn negative_numbers_are_values_not_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    // A key that is a negative number, written as shells write it.
    let read = ok(dir, &["item", "read", "db/c", "neg", "--pk", "-5"]);
    assert_eq!(read["resource"]["id"], "neg");
    let page = ok(
        dir,
        &["query", "db/c", "SELECT VALUE c.id FROM c", "--pk", "-5"],
    );
    assert_eq!(page["documents"], json!(["neg"]));
    // Where a value cannot be negative, the error says which value, not "unexpected
    // argument".
    let e = failed(
        dir,
        &[
            "container",
            "create",
            "db/d",
            "--partition-key",
            "/pk",
            "--throughput",
            "-1",
        ],
        2,
    );
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("'-1'") && message.contains("--throughput"),
        "{message}"
    );
    let e = failed(dir, &["feed", "db/c", "--max-items", "-5"], 2);
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("--max-items"), "{message}");
    assert!(!message.contains("unexpected argument"), "{message}");
}

#[test]
fn parameters_need_their_at_sign_and_a_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let sql = "SELECT VALUE c.id FROM c WHERE c.n = @a";
    let e = failed(dir, &["query", "db/c", sql, "--param", "a=1"], 2);
    assert!(e["message"].as_str().unwrap().contains("@name=JSON"), "{e}");
    // A parameter the query names that the request does not give: 400 at its place.
    let e = failed(dir, &["query", "db/c", sql], 1);
    assert_eq!(e["status"], 400);
    assert!(e["message"].as_str().unwrap().contains("@a"), "{e}");
    assert_eq!(
        (e["line"].clone(), e["column"].clone()),
        (json!(1), json!(38))
    );
    let e = failed(dir, &["query", "db/c", sql, "--param", "@b=1"], 1);
    assert!(e["message"].as_str().unwrap().contains("gives @b"), "{e}");
    let page = ok(dir, &["query", "db/c", sql, "--param", "@a=1"]);
    assert_eq!(page["documents"], json!(["neg"]));
}

#[test]
fn spatial_index_types_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["db", "create", "db"]);
    let file = dir.join("policy.json");
    let create = |name: &str, spatial: serde_json::Value| {
        let policy = json!({"indexingMode": "consistent", "spatialIndexes": spatial});
        std::fs::write(&file, policy.to_string()).unwrap();
        run(
            dir,
            &[
                "container",
                "create",
                name,
                "--partition-key",
                "/pk",
                "--indexing-policy",
                file.to_str().unwrap(),
            ],
        )
    };
    let out = create(
        "db/blob",
        json!([{"path": "/location/*", "types": ["Blob"]}]),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let e = &crate::support::cli::json_of(&out)["error"];
    assert_eq!(e["status"], 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("\"Blob\" is not a spatial type"),
        "{e}"
    );
    let out = create("db/nopath", json!([{"types": ["Point"]}]));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // Nothing was created by the refused policies; a good one is accepted.
    let list = ok(dir, &["container", "list", "db"]);
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list}");
    let out = create(
        "db/geo",
        json!([{"path": "/location/*", "types": ["Point", "Polygon", "MultiPolygon", "LineString"]}]),
    );
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn query_text_comes_from_a_file_or_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    // Longer than the 128 KB a command line takes: a filter of many IN values.
    let values: Vec<String> = (0..30_000).map(|i| i.to_string()).collect();
    let sql = format!(
        "SELECT VALUE c.id FROM c WHERE c.n IN ({})",
        values.join(", ")
    );
    assert!(sql.len() > 128 * 1024);
    let file = dir.join("query.sql");
    std::fs::write(&file, &sql).unwrap();
    let page = ok(dir, &["query", "db/c", "--file", file.to_str().unwrap()]);
    assert_eq!(page["documents"], json!(["neg"]));
    let out = run_stdin(dir, &["query", "db/c", "-"], &sql);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        crate::support::cli::json_of(&out)["documents"],
        json!(["neg"])
    );
    // Both, neither, or an empty text: usage errors.
    failed(
        dir,
        &[
            "query",
            "db/c",
            "SELECT 1",
            "--file",
            file.to_str().unwrap(),
        ],
        2,
    );
    failed(dir, &["query", "db/c"], 2);
    let out = run_stdin(dir, &["query", "db/c", "-"], "  \n");
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let e = failed(dir, &["query", "db/c", "--file", "/nonexistent/q.sql"], 2);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/q.sql"),
        "{e}"
    );
}
