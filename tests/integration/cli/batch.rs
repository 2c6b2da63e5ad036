//! `batch` and `item patch` through the real binary on a temporary data directory: the JSON
//! they read and print, the failed-batch shape and exit statuses.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::cli::{json_of, run_stdin};

/// Runs a command and checks its exit status; returns its JSON output.
fn expect(dir: &Path, args: &[&str], stdin: &str, exit: i32) -> Value {
    let out = run_stdin(dir, args, stdin);
    assert_eq!(
        out.status.code(),
        Some(exit),
        "{args:?}: stdout {} stderr {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out)
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    let d = dir.path();
    expect(d, &["db", "create", "blog"], "", 0);
    expect(
        d,
        &[
            "container",
            "create",
            "blog/posts",
            "--partition-key",
            "/postId",
        ],
        "",
        0,
    );
    let post = json!({"id": "p1", "postId": "p1", "commentCount": 0}).to_string();
    expect(d, &["item", "create", "blog/posts"], &post, 0);
    dir
}

const BATCH: &[&str] = &["batch", "blog/posts", "--pk", "\"p1\""];
const PATCH: &[&str] = &["item", "patch", "blog/posts", "p1", "--pk", "\"p1\""];

#[test]
fn a_batch_prints_every_result() {
    let dir = setup();
    let ops = json!([
        {"operationType": "Create", "resourceBody": {"id": "c1", "postId": "p1", "text": "hi"}},
        {"operationType": "Patch", "id": "p1",
         "resourceBody": {"operations": [{"op": "incr", "path": "/commentCount", "value": 1}]}},
        {"operationType": "Read", "id": "p1"},
        {"operationType": "Delete", "id": "c1"}
    ]);
    let out = expect(dir.path(), BATCH, &ops.to_string(), 0);
    assert_eq!(out["statusCode"], 200);
    let results = out["results"].as_array().unwrap();
    let codes: Vec<_> = results.iter().map(|r| r["statusCode"].clone()).collect();
    assert_eq!(codes, [201, 200, 200, 204]);
    assert_eq!(results[2]["resourceBody"]["commentCount"], 1);
    assert_eq!(results[2]["eTag"], results[1]["eTag"]);
    assert!(results[3].get("resourceBody").is_none());
    let sum: f64 = results
        .iter()
        .map(|r| r["requestCharge"].as_f64().unwrap())
        .sum();
    assert!((out["requestCharge"].as_f64().unwrap() - sum).abs() < 1e-9);
    assert!(out.get("error").is_none());
    let read = expect(
        dir.path(),
        &["item", "read", "blog/posts", "p1", "--pk", "\"p1\""],
        "",
        0,
    );
    assert_eq!(read["resource"]["commentCount"], 1);
}

#[test]
fn a_failed_batch_prints_the_results_and_exits_1() {
    let dir = setup();
    let ops = json!([
        {"operationType": "Create", "resourceBody": {"id": "c1", "postId": "p1"}},
        {"operationType": "Create", "resourceBody": {"id": "p1", "postId": "p1"}},
        {"operationType": "Upsert", "resourceBody": {"id": "c2", "postId": "p1"}}
    ]);
    let out = expect(dir.path(), BATCH, &ops.to_string(), 1);
    assert_eq!(out["statusCode"], 409);
    let codes: Vec<_> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["statusCode"].clone())
        .collect();
    assert_eq!(codes, [424, 409, 424]);
    assert!(
        out["results"][1]["message"]
            .as_str()
            .unwrap()
            .contains("already exists")
    );
    assert_eq!(out["error"]["status"], 409);
    assert_eq!(out["error"]["code"], "Conflict");
    assert_eq!(out["error"]["operationIndex"], 1);
    let missing = run_stdin(
        dir.path(),
        &["item", "read", "blog/posts", "c1", "--pk", "\"p1\""],
        "",
    );
    assert_eq!(missing.status.code(), Some(1), "nothing was written");
}

#[test]
fn bad_batch_input_is_a_clear_error() {
    let dir = setup();
    let d = dir.path();
    let cases = [
        ("[{\"operationType\": ", "not valid JSON"),
        ("{\"operationType\": \"Read\"}", "JSON array"),
        (
            "[{\"operationType\": \"Read\", \"id\": \"p1\"}, {\"operationType\": \"Reed\"}]",
            "batch operation 1",
        ),
        ("[]", "no operations"),
    ];
    for (stdin, why) in cases {
        let out = expect(d, BATCH, stdin, 1);
        assert_eq!(out["error"]["status"], 400, "{stdin}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{stdin}: {message}");
    }
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"operationType": "Read", "id": format!("i{i}")}))
        .collect();
    let out = expect(d, BATCH, &Value::Array(many).to_string(), 1);
    assert_eq!(out["error"]["status"], 400);
    assert!(
        out["results"].is_null(),
        "a request that never ran has no results"
    );
    let out = expect(d, &["batch", "blog/posts"], "[]", 2);
    assert_eq!(
        out["error"]["status"], 400,
        "--pk is required: a usage error"
    );
    let out = expect(
        d,
        &["batch", "blog/nope", "--pk", "\"p1\""],
        "[{\"operationType\": \"Read\", \"id\": \"p1\"}]",
        1,
    );
    assert_eq!(out["error"]["status"], 404);
}

#[test]
fn item_patch_takes_both_body_shapes() {
    let dir = setup();
    let d = dir.path();
    let out = expect(
        d,
        PATCH,
        r#"[{"op": "set", "path": "/title", "value": "Hello"}]"#,
        0,
    );
    assert_eq!(out["statusCode"], 200);
    assert_eq!(out["resource"]["title"], "Hello");
    let etag = out["etag"].as_str().unwrap().to_string();

    let conditional = json!({
        "operations": [{"op": "incr", "path": "/commentCount", "value": 5}],
        "condition": "FROM c WHERE c.title = 'Hello'"
    });
    let out = expect(d, PATCH, &conditional.to_string(), 0);
    assert_eq!(out["resource"]["commentCount"], 5);

    let out = expect(d, PATCH, &json!({"operations": [{"op": "remove", "path": "/title"}], "condition": "FROM c WHERE c.title = 'Bye'"}).to_string(), 1);
    assert_eq!(out["error"]["status"], 412);

    let mut args = PATCH.to_vec();
    args.extend(["--if-match", &etag]);
    let out = expect(d, &args, r#"[{"op": "remove", "path": "/title"}]"#, 1);
    assert_eq!(out["error"]["status"], 412, "the etag is stale");

    let out = expect(
        d,
        PATCH,
        r#"[{"op": "set", "path": "/postId", "value": "p2"}]"#,
        1,
    );
    assert_eq!(out["error"]["status"], 400);
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("partition key")
    );
    let out = expect(d, PATCH, "nope", 1);
    assert_eq!(out["error"]["status"], 400);
}
