//! The command line, through the real binary on a temporary data directory: the JSON output
//! and error contract, imports, the change feed across processes, and crash safety.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli::{cosmoscope, json_of, ok, run, run_stdin, stdout};

/// Runs a command that must fail with `exit` and returns the error object.
fn err(out: Output, exit: i32) -> Value {
    assert_eq!(out.status.code(), Some(exit), "stdout: {}", stdout(&out));
    json_of(&out)["error"].clone()
}

fn setup(dir: &Path) {
    ok(dir, &["db", "create", "shop"]);
    ok(
        dir,
        &[
            "container",
            "create",
            "shop/orders",
            "--partition-key",
            "/customerId",
            "--throughput",
            "12000",
        ],
    );
}

#[test]
fn item_round_trip_and_error_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);

    let created = run_stdin(
        dir,
        &["item", "create", "shop/orders"],
        r#"{"id":"o1","customerId":"c-1","total":5}"#,
    );
    assert!(created.status.success());
    let created = json_of(&created);
    assert_eq!(created["statusCode"], 201);
    assert!(created["requestCharge"].as_f64().unwrap() >= 5.0);
    let etag = created["etag"].as_str().unwrap().to_string();
    for p in ["_rid", "_self", "_etag", "_attachments", "_ts"] {
        assert!(created["resource"].get(p).is_some(), "missing {p}");
    }

    let read = ok(
        dir,
        &["item", "read", "shop/orders", "o1", "--pk", r#""c-1""#],
    );
    assert_eq!(read["resource"]["total"], 5);
    assert_eq!(read["requestCharge"], 1.0);

    // 409: same id and key.
    let e = err(
        run_stdin(
            dir,
            &["item", "create", "shop/orders"],
            r#"{"id":"o1","customerId":"c-1"}"#,
        ),
        1,
    );
    assert_eq!(
        (e["status"].as_u64(), e["code"].as_str()),
        (Some(409), Some("Conflict"))
    );
    assert!(e["requestCharge"].as_f64().unwrap() > 0.0);
    // The same id under another key is another item.
    assert!(
        run_stdin(
            dir,
            &["item", "create", "shop/orders"],
            r#"{"id":"o1","customerId":"c-2"}"#
        )
        .status
        .success()
    );

    // 412: stale etag; success with the current one.
    let e = err(
        run_stdin(
            dir,
            &["item", "replace", "shop/orders", "--if-match", "\"stale\""],
            r#"{"id":"o1","customerId":"c-1","total":6}"#,
        ),
        1,
    );
    assert_eq!(e["status"], 412);
    let replaced = run_stdin(
        dir,
        &["item", "replace", "shop/orders", "--if-match", &etag],
        r#"{"id":"o1","customerId":"c-1","total":6}"#,
    );
    assert!(replaced.status.success());
    assert_eq!(json_of(&replaced)["statusCode"], 200);

    // 404s.
    assert_eq!(
        err(
            run(
                dir,
                &["item", "read", "shop/orders", "nope", "--pk", r#""c-1""#]
            ),
            1
        )["status"],
        404
    );
    assert_eq!(
        err(
            run(
                dir,
                &["item", "read", "shop/missing", "o1", "--pk", r#""c-1""#]
            ),
            1
        )["status"],
        404
    );
    assert_eq!(
        err(run(dir, &["container", "show", "nodb/x"]), 1)["status"],
        404
    );

    // 400s and 413.
    assert_eq!(
        err(
            run_stdin(dir, &["item", "create", "shop/orders"], "{not json"),
            1
        )["status"],
        400
    );
    assert_eq!(
        err(
            run_stdin(
                dir,
                &["item", "create", "shop/orders"],
                r#"{"id":"a/b","customerId":"c"}"#
            ),
            1
        )["status"],
        400
    );
    assert_eq!(
        err(
            run_stdin(
                dir,
                &["item", "create", "shop/orders"],
                r#"{"id":"x","customerId":{"a":1}}"#
            ),
            1
        )["status"],
        400
    );
    let big = format!(
        r#"{{"id":"big","customerId":"c","pad":"{}"}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    assert_eq!(
        err(run_stdin(dir, &["item", "create", "shop/orders"], &big), 1)["status"],
        413
    );

    // Usage errors exit 2, still with a JSON error on stdout.
    let e = err(
        run(dir, &["item", "read", "shop/orders", "o1", "--pk", "c-1"]),
        2,
    );
    assert!(e["message"].as_str().unwrap().contains("--pk must be JSON"));
    // A missing --pk names itself and says what to pass.
    let e = err(run(dir, &["item", "read", "shop/orders", "o1"]), 2);
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("--pk <JSON>"), "{message}");
    assert!(
        message.contains("the partition key value as JSON"),
        "{message}"
    );
    assert_eq!(
        err(run(dir, &["item", "read", "noslash", "o1", "--pk", "1"]), 2)["status"],
        400
    );
    assert_eq!(
        err(run(dir, &["container", "frobnicate"]), 2)["status"],
        400
    );

    // Delete, then it is gone.
    let deleted = ok(
        dir,
        &["item", "delete", "shop/orders", "o1", "--pk", r#""c-1""#],
    );
    assert_eq!(deleted["statusCode"], 204);
    assert_eq!(
        err(
            run(
                dir,
                &["item", "read", "shop/orders", "o1", "--pk", r#""c-1""#]
            ),
            1
        )["status"],
        404
    );
}

#[test]
fn container_show_lists_settings_and_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["db", "create", "app"]);
    let c = ok(
        dir,
        &[
            "container",
            "create",
            "app/users",
            "--partition-key",
            "/tenant,/userId",
            "--autoscale",
            "40000",
            "--default-ttl",
            "-1",
            "--unique-key",
            "/email",
            "--max-partition-bytes",
            "1000000",
            "--enforce-throughput",
        ],
    );
    assert_eq!(c["partitionKey"]["kind"], "MultiHash");
    assert_eq!(c["throughput"]["autoscaleMax"], 40000);
    assert_eq!(c["defaultTtl"], -1);
    assert_eq!(c["uniqueKeyPolicy"]["uniqueKeys"][0]["paths"][0], "/email");
    assert_eq!(c["maxPartitionBytes"], 1_000_000);
    let parts = c["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 4);
    assert_eq!(parts[0]["minInclusive"], "");
    assert_eq!(parts[3]["maxExclusive"], "FF");
    let list = ok(dir, &["container", "list", "app"]);
    assert_eq!(list.as_array().unwrap().len(), 1);

    let epk = ok(dir, &["epk", "app/users", r#"["t1"]"#]);
    assert!(epk["epkRange"].is_array(), "a prefix spans a range: {epk}");
    let full = ok(dir, &["epk", "app/users", r#"["t1","u1"]"#]);
    assert_eq!(full["epk"].as_str().unwrap().len(), 64);

    // Raising throughput splits partitions.
    let more = ok(
        dir,
        &[
            "container",
            "set-throughput",
            "app/users",
            "--autoscale",
            "60000",
        ],
    );
    assert_eq!(more["partitions"].as_array().unwrap().len(), 6);
    assert_eq!(more["throughput"]["enforced"], true);
    // Enforcement can be switched on its own, keeping the throughput.
    let off = ok(
        dir,
        &[
            "container",
            "set-throughput",
            "app/users",
            "--enforce-throughput",
            "false",
        ],
    );
    assert_eq!(off["throughput"]["enforced"], false);
    assert_eq!(off["throughput"]["autoscaleMax"], 60000);
    assert_eq!(
        err(run(dir, &["container", "set-throughput", "app/users"]), 2)["status"],
        400
    );
    ok(dir, &["container", "delete", "app/users"]);
    assert_eq!(
        err(run(dir, &["container", "show", "app/users"]), 1)["status"],
        404
    );
}

#[test]
fn container_create_takes_vector_and_full_text_policies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["db", "create", "search"]);
    let vector = dir.join("vector.json");
    // The bare policy object.
    std::fs::write(
        &vector,
        json!({"vectorEmbeddings": [
            {"path": "/embedding", "dataType": "float32", "dimensions": 256, "distanceFunction": "cosine"}
        ]})
        .to_string(),
    )
    .unwrap();
    let text = dir.join("text.json");
    // Wrapped under its container-definition key.
    std::fs::write(
        &text,
        json!({"fullTextPolicy": {
            "defaultLanguage": "en-US",
            "fullTextPaths": [{"path": "/body", "language": "en-US"}]
        }})
        .to_string(),
    )
    .unwrap();
    let indexing = dir.join("indexing.json");
    std::fs::write(
        &indexing,
        json!({
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/embedding/*"}],
            "vectorIndexes": [{"path": "/embedding", "type": "flat"}],
            "fullTextIndexes": [{"path": "/body"}]
        })
        .to_string(),
    )
    .unwrap();
    let args = |c: &'static str| {
        vec![
            "container".to_string(),
            "create".to_string(),
            c.to_string(),
            "--partition-key".to_string(),
            "/pk".to_string(),
            "--vector-policy".to_string(),
            vector.display().to_string(),
            "--full-text-policy".to_string(),
            text.display().to_string(),
            "--indexing-policy".to_string(),
            indexing.display().to_string(),
        ]
    };
    let created_args = args("search/docs");
    let created = ok(
        dir,
        &created_args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(
        created["vectorEmbeddingPolicy"],
        json!({"vectorEmbeddings": [
            {"path": "/embedding", "dataType": "float32", "dimensions": 256, "distanceFunction": "cosine"}
        ]})
    );
    let shown = ok(dir, &["container", "show", "search/docs"]);
    assert_eq!(
        shown["vectorEmbeddingPolicy"],
        created["vectorEmbeddingPolicy"]
    );
    assert_eq!(
        shown["fullTextPolicy"],
        json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/body", "language": "en-US"}]})
    );
    assert_eq!(
        shown["indexingPolicy"]["vectorIndexes"],
        json!([{"path": "/embedding", "type": "flat"}])
    );
    assert_eq!(
        shown["indexingPolicy"]["fullTextIndexes"],
        json!([{"path": "/body"}])
    );
    let plain = ok(
        dir,
        &[
            "container",
            "create",
            "search/plain",
            "--partition-key",
            "/pk",
        ],
    );
    assert!(plain.get("vectorEmbeddingPolicy").is_none(), "{plain}");
    assert!(plain.get("fullTextPolicy").is_none(), "{plain}");

    // set-indexing: a vector index on a path the vector policy does not declare.
    let other = dir.join("other.json");
    std::fs::write(
        &other,
        json!({"vectorIndexes": [
            {"path": "/embedding", "type": "flat"}, {"path": "/other", "type": "flat"}
        ]})
        .to_string(),
    )
    .unwrap();
    let e = err(
        run(
            dir,
            &[
                "container",
                "set-indexing",
                "search/docs",
                other.to_str().unwrap(),
            ],
        ),
        1,
    );
    assert_eq!(e["status"], 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("'/other' is not in the container's vector embedding policy"),
        "{e}"
    );
}

#[test]
fn a_bad_policy_file_is_a_400_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(dir, &["db", "create", "search"]);
    let file = dir.join("policy.json");
    let create = |flag: &str| {
        run(
            dir,
            &[
                "container",
                "create",
                "search/docs",
                "--partition-key",
                "/pk",
                flag,
                file.to_str().unwrap(),
            ],
        )
    };
    for (flag, policy, says) in [
        (
            "--vector-policy",
            json!({"vectorEmbeddings": [{"path": "/v", "dataType": "float64", "dimensions": 3}]}),
            "The vector data type 'float64' is invalid",
        ),
        (
            "--vector-policy",
            json!({"vectorEmbeddings": [{"path": "/v/*", "dimensions": 3}]}),
            "the vector path '/v/*' could not be accepted",
        ),
        (
            "--vector-policy",
            json!({"vectorEmbeddings": [{"path": "/v", "dimensions": 5000}]}),
            "has 5000 dimensions",
        ),
        (
            "--full-text-policy",
            json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/t", "language": "xx-YY"}]}),
            "the language 'xx-YY' is not supported",
        ),
        (
            "--full-text-policy",
            json!({"fullTextPaths": [{"path": "/tags/[]", "language": "en-US"}]}),
            "array steps",
        ),
    ] {
        std::fs::write(&file, policy.to_string()).unwrap();
        let e = err(create(flag), 1);
        assert_eq!(e["status"], 400, "{e}");
        assert!(e["message"].as_str().unwrap().contains(says), "{says}: {e}");
    }
    std::fs::write(&file, "{not json").unwrap();
    let e = err(create("--vector-policy"), 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("invalid vector embedding policy in"),
        "{e}"
    );
    // An unreadable file is a usage error.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(err(create("--full-text-policy"), 2)["status"], 400);
    assert_eq!(
        err(run(dir, &["container", "show", "search/docs"]), 1)["status"],
        404
    );
}

fn ndjson(n: usize, pad: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&json!({"id": format!("o{i}"), "customerId": format!("c-{}", i % 37), "n": i, "pad": "x".repeat(pad)}).to_string());
        s.push('\n');
    }
    s
}

#[test]
fn a_bad_import_file_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let good = tmp.path().join("good.ndjson");
    std::fs::write(&good, ndjson(50, 10)).unwrap();
    let mut bad = ndjson(3000, 10);
    bad.push_str("{\"id\": \"broken\", \n");
    bad.push_str(&ndjson(10, 10));
    let bad_file = tmp.path().join("bad.ndjson");
    std::fs::write(&bad_file, &bad).unwrap();

    // A broken line anywhere, even after the first batch, means nothing is written.
    let e = err(
        run(
            dir,
            &[
                "import",
                "shop/orders",
                good.to_str().unwrap(),
                bad_file.to_str().unwrap(),
            ],
        ),
        1,
    );
    assert_eq!(e["line"], 3001, "{e}");
    assert!(e["message"].as_str().unwrap().contains("bad.ndjson"));
    let shown = ok(dir, &["container", "show", "shop/orders"]);
    assert_eq!(shown["statistics"]["itemCount"], 0);

    // An item without the id fails validation with its line too.
    let noid = tmp.path().join("noid.json");
    std::fs::write(
        &noid,
        "[\n{\"id\":\"a\",\"customerId\":\"c\"},\n{\"customerId\":\"c\"}\n]",
    )
    .unwrap();
    let e = err(
        run(dir, &["import", "shop/orders", noid.to_str().unwrap()]),
        1,
    );
    assert_eq!(e["line"], 3);
    assert_eq!(
        ok(dir, &["container", "show", "shop/orders"])["statistics"]["itemCount"],
        0
    );

    let summary = ok(dir, &["import", "shop/orders", good.to_str().unwrap()]);
    assert_eq!(summary["items"], 50);
    // A small import leaves too little free to be worth compacting.
    assert!(summary.get("compacted").is_none(), "{summary}");
    let exported = run(dir, &["export", "shop/orders"]);
    assert_eq!(
        String::from_utf8_lossy(&exported.stdout).lines().count(),
        50
    );
    let one = run(dir, &["export", "shop/orders", "--pk", r#""c-3""#]);
    let lines: Vec<Value> = String::from_utf8_lossy(&one.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty() && lines.iter().all(|d| d["customerId"] == "c-3"));
}

/// The document number in an item's `_rid` (its last eight bytes, little-endian, less the
/// resource type in the top nibble).
fn doc_number(item: &Value) -> u64 {
    use base64::Engine as _;
    let rid = item["_rid"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(rid)
        .unwrap();
    u64::from_le_bytes(bytes[8..16].try_into().unwrap()) & 0x0FFF_FFFF_FFFF_FFFF
}

/// An import writes its records in item-key order across all its files and batches, yet
/// numbers each item by the place of its first record in the input (the numbers are set
/// aside, so a write after the import takes the next), and an item's last record wins,
/// whichever file and batch it is in. A record its write refuses is named by file and line.
#[test]
fn an_import_numbers_items_by_their_place_in_the_input_and_the_last_version_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let doc = |i: usize, v: String| json!({"id": format!("o{i}"), "customerId": format!("c-{}", i % 7), "v": v});
    let first: Vec<String> = (0..30)
        .map(|i| doc(i, format!("a{i}")).to_string())
        .collect();
    let second: Vec<String> = (20..40)
        .map(|i| doc(i, format!("b{i}")).to_string())
        .collect();
    let a = tmp.path().join("a.ndjson");
    std::fs::write(&a, first.join("\n")).unwrap();
    let b = tmp.path().join("b.json");
    std::fs::write(&b, format!("\u{feff}[\n  {}\n]\n", second.join(" ,\n  "))).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    let summary = ok(dir, &["import", "shop/orders", a, b, "--batch-items", "7"]);
    assert_eq!(
        (&summary["items"], &summary["created"], &summary["batches"]),
        (&json!(50), &json!(40), &json!(8)),
        "{summary}"
    );
    assert_eq!(
        summary["files"],
        json!([{"file": a, "items": 30}, {"file": b, "items": 20}])
    );
    for i in 0..40 {
        let pk = format!("\"c-{}\"", i % 7);
        let item = ok(
            dir,
            &["item", "read", "shop/orders", &format!("o{i}"), "--pk", &pk],
        );
        let item = &item["resource"];
        let (version, place) = if i < 20 {
            (format!("a{i}"), i)
        } else if i < 30 {
            (format!("b{i}"), i)
        } else {
            (format!("b{i}"), 30 + (i - 20))
        };
        assert_eq!(item["v"], version.as_str(), "o{i}");
        assert_eq!(doc_number(item), place as u64 + 1, "o{i}");
    }
    let created = json_of(&run_stdin(
        dir,
        &["item", "create", "shop/orders"],
        r#"{"id":"next","customerId":"c-1"}"#,
    ));
    assert_eq!(doc_number(&created["resource"]), 51, "{created}");

    // A record the check passes but its write refuses (a document over 2 MB) names its file
    // and line, and the import stops there.
    let big = tmp.path().join("big.ndjson");
    let huge = json!({"id": "huge", "customerId": "c-1", "pad": "x".repeat(2 << 20)});
    std::fs::write(&big, format!("{}\n{}\n", doc(100, "z".into()), huge)).unwrap();
    let e = err(
        run(dir, &["import", "shop/orders", a, big.to_str().unwrap()]),
        1,
    );
    assert_eq!(e["line"], 2, "{e}");
    assert!(e["message"].as_str().unwrap().contains("big.ndjson"), "{e}");
}

#[test]
fn an_import_streams_its_files_and_stdin_a_chunk_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let mut before: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    before.sort();
    // A JSON array on stdin, read in chunks of 700 items; its last element is broken, so
    // nothing is written, and the error names the element's line.
    let items: Vec<String> = (0..5_000)
        .map(|i| {
            json!({"id": format!("o{i}"), "customerId": format!("c-{}", i % 37), "text": "],[\"{"})
                .to_string()
        })
        .collect();
    let array = format!("[\n{}\n]\n", items.join(",\n"));
    let broken = format!("[\n{},\n{{\"id\": }}\n]\n", items.join(",\n"));
    let args = ["import", "shop/orders", "-", "--batch-items", "700"];
    let e = err(run_stdin(dir, &args, &broken), 1);
    assert_eq!(e["line"], 5_002, "{e}");
    assert_eq!(
        ok(dir, &["container", "show", "shop/orders"])["statistics"]["itemCount"],
        0
    );
    let out = run_stdin(dir, &args, &array);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json_of(&out);
    assert_eq!(summary["items"], 5_000, "{summary}");
    assert_eq!(summary["batches"], 8, "{summary}");
    assert_eq!(
        ok(dir, &["container", "show", "shop/orders"])["statistics"]["itemCount"],
        5_000
    );
    let item = ok(
        dir,
        &["item", "read", "shop/orders", "o4999", "--pk", r#""c-4""#],
    );
    assert_eq!(item["resource"]["text"], "],[\"{");
    // Standard input was kept in a temporary file that is gone now.
    let mut after: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    after.sort();
    assert_eq!(before, after);
}

#[test]
fn stats_tells_what_each_part_of_the_data_file_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("orders.ndjson");
    std::fs::write(&file, ndjson(2_000, 200)).unwrap();
    ok(dir, &["import", "shop/orders", file.to_str().unwrap()]);
    let stats = ok(dir, &["stats"]);
    let part = |name: &str| {
        stats["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no part {name}: {stats}"))
            .clone()
    };
    assert_eq!(part("items")["entries"], 2_000);
    assert_eq!(part("feed")["entries"], 2_000);
    // Every item has its id, customerId, n and pad indexed (and more paths besides).
    assert!(
        part("index")["entries"].as_u64().unwrap() >= 8_000,
        "{stats}"
    );
    assert!(!part("index")["holds"].as_str().unwrap().is_empty());
    // The parts, the free pages and the two meta pages make up the file.
    let page = stats["pageSize"].as_u64().unwrap();
    let parts: u64 = stats["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["bytes"].as_u64().unwrap())
        .sum();
    let file_bytes = stats["fileBytes"].as_u64().unwrap();
    let free = stats["freeBytes"].as_u64().unwrap();
    // The unnamed database (the parts' names) takes a page or so besides.
    assert!(parts + free + 2 * page <= file_bytes, "{stats}");
    assert!(
        file_bytes - (parts + free + 2 * page) <= 2 * page,
        "{stats}"
    );
    let items_json = stats["itemsJsonBytes"].as_u64().unwrap();
    assert!(items_json > 2_000 * 200, "{stats}");
    assert!(stats["fileToItemsJson"].as_f64().unwrap() > 1.0, "{stats}");
}

#[test]
fn a_follower_in_another_process_sees_new_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let mut follower = cosmoscope(dir)
        .args([
            "feed",
            "shop/orders",
            "--from",
            "now",
            "--follow",
            "--mode",
            "all-versions",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = follower.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The follower starts from "now": give it a moment to take its position.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        run_stdin(
            dir,
            &["item", "upsert", "shop/orders"],
            r#"{"id":"live","customerId":"c-9"}"#
        )
        .status
        .success()
    );
    assert!(
        run(
            dir,
            &["item", "delete", "shop/orders", "live", "--pk", r#""c-9""#]
        )
        .status
        .success()
    );
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < 2 && Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
            seen.push(serde_json::from_str::<Value>(&line).unwrap());
        }
    }
    let _ = follower.kill();
    let _ = follower.wait();
    assert_eq!(seen.len(), 2, "follower saw {seen:?}");
    assert_eq!(seen[0]["metadata"]["operationType"], "create");
    assert_eq!(seen[0]["current"]["id"], "live");
    assert_eq!(seen[1]["metadata"]["operationType"], "delete");
    assert_eq!(seen[1]["metadata"]["partitionKey"]["customerId"], "c-9");
}

#[test]
fn feed_pages_resume_with_their_continuation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("items.ndjson");
    std::fs::write(&file, ndjson(25, 5)).unwrap();
    ok(dir, &["import", "shop/orders", file.to_str().unwrap()]);
    let mut token: Option<String> = None;
    let mut ids = Vec::new();
    loop {
        let mut args = vec!["feed", "shop/orders", "--max-items", "7"];
        if let Some(t) = &token {
            args.push("--continuation");
            args.push(t);
        }
        let page = ok(dir, &args);
        let changes = page["changes"].as_array().unwrap();
        if changes.is_empty() {
            break;
        }
        assert!(changes.len() <= 7);
        ids.extend(
            changes
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string()),
        );
        token = Some(page["continuation"].as_str().unwrap().to_string());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 25);
    let all = ok(dir, &["feed", "shop/orders", "--all", "--max-items", "4"]);
    assert_eq!(all["count"], 25);
}

/// A `kill -9` in the middle of an import leaves whole batches and consistent statistics.
#[test]
fn an_import_killed_midway_leaves_a_consistent_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("many.ndjson");
    // Several batches' worth, so the kill lands between commits.
    let batch = 10_000;
    let total = 40_000;
    std::fs::write(&file, ndjson(total, 600)).unwrap();
    let mut importer = cosmoscope(dir)
        .args(["import", "shop/orders", file.to_str().unwrap()])
        .args(["--batch-items", &batch.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let shown = ok(dir, &["container", "show", "shop/orders"]);
        if shown["statistics"]["itemCount"].as_u64().unwrap() > 0 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    importer.kill().unwrap(); // SIGKILL
    let _ = importer.wait();

    let shown = ok(dir, &["container", "show", "shop/orders"]);
    let count = shown["statistics"]["itemCount"].as_u64().unwrap();
    eprintln!("killed after {count} of {total} items");
    assert!(count > 0, "no batch was committed before the kill");
    // Batches are atomic: only whole batches (or the whole file) are present.
    assert!(
        count.is_multiple_of(batch) || count == total as u64,
        "partial batch: {count}"
    );
    let exported = run(dir, &["export", "shop/orders"]);
    let lines = String::from_utf8_lossy(&exported.stdout).lines().count() as u64;
    assert_eq!(lines, count, "statistics disagree with a recount");
    let bytes: u64 = String::from_utf8_lossy(&exported.stdout)
        .lines()
        .map(|l| l.len() as u64)
        .sum();
    assert_eq!(shown["statistics"]["sizeBytes"].as_u64().unwrap(), bytes);
    let ranges: u64 = shown["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["statistics"]["itemCount"].as_u64().unwrap())
        .sum();
    assert_eq!(ranges, count);
    // The store still takes writes, and the feed is complete.
    let resumed = ok(
        dir,
        &[
            "import",
            "shop/orders",
            file.to_str().unwrap(),
            "--no-compact",
        ],
    );
    assert_eq!(resumed["items"], total);
    let shown = ok(dir, &["container", "show", "shop/orders"]);
    assert_eq!(shown["statistics"]["itemCount"], total);
    // The killed import left its index to build; the one that resumed built it.
    assert_eq!(shown["indexTransformationProgress"], 100);
    assert_index_exact(dir, total as u64);
    let feed = ok(
        dir,
        &["feed", "shop/orders", "--all", "--max-items", "1000"],
    );
    assert_eq!(feed["count"], total);
}

/// `check` finds the container's index equal to the entries of its items, and a query the
/// index serves counts what a scan of the file would.
fn assert_index_exact(dir: &Path, items: u64) {
    let check = ok(dir, &["check"]);
    assert_eq!(check["sound"], true, "{check}");
    let c = &check["containers"][0];
    assert_eq!(
        (c["items"].as_u64(), c["indexCompared"].as_bool()),
        (Some(items), Some(true)),
        "{c}"
    );
    let under = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE COUNT(1) FROM c WHERE c.n < 1000",
        ],
    );
    assert_eq!(
        under["documents"][0].as_u64(),
        Some(items.min(1000)),
        "{under}"
    );
}

/// An import into an empty container that takes several transactions builds the index once
/// at its end, sorted; the container's index is then exactly the one item-by-item writes
/// make, and queries are served from it.
#[test]
fn a_large_import_builds_the_index_once_at_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("many.ndjson");
    std::fs::write(&file, ndjson(3_000, 40)).unwrap();
    let summary = ok(
        dir,
        &[
            "import",
            "shop/orders",
            file.to_str().unwrap(),
            "--batch-items",
            "400",
            "--no-compact",
        ],
    );
    assert_eq!(
        (summary["items"].as_u64(), summary["batches"].as_u64()),
        (Some(3_000), Some(8))
    );
    let shown = ok(dir, &["container", "show", "shop/orders"]);
    assert_eq!(shown["indexTransformationProgress"], 100);
    assert_eq!(shown["indexedStringBytes"], 256);
    assert_index_exact(dir, 3_000);
    // Another import into the now non-empty container maintains the index as it writes.
    let more = tmp.path().join("more.ndjson");
    let text: String = (3_000..3_500)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": format!("o{i}"), "customerId": "c-1", "n": i - 3_000})
            )
        })
        .collect();
    std::fs::write(&more, text).unwrap();
    ok(
        dir,
        &[
            "import",
            "shop/orders",
            more.to_str().unwrap(),
            "--batch-items",
            "100",
        ],
    );
    let check = ok(dir, &["check"]);
    assert_eq!(
        (
            check["sound"].as_bool(),
            check["containers"][0]["items"].as_u64()
        ),
        (Some(true), Some(3_500))
    );
    let under = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE COUNT(1) FROM c WHERE c.n < 1000",
        ],
    );
    assert_eq!(under["documents"][0].as_u64(), Some(1_500));
}

#[test]
fn a_corrupt_data_directory_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let e = err(run(&file, &["db", "list"]), 1);
    assert!(e["message"].as_str().unwrap().contains("is a file"), "{e}");
    let dir = tmp.path().join("store");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("data.mdb"), vec![0x42u8; 64 * 1024]).unwrap();
    let e = err(run(&dir, &["db", "list"]), 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("not a cosmoscope store or is corrupt"),
        "{e}"
    );
}

#[test]
fn logical_partitions_of_a_range_page_through_its_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("items.ndjson");
    std::fs::write(&file, ndjson(370, 5)).unwrap(); // 37 distinct keys, 10 items each
    ok(dir, &["import", "shop/orders", file.to_str().unwrap()]);
    let shown = ok(dir, &["container", "show", "shop/orders"]);
    let mut keys = Vec::new();
    let mut items = 0;
    for p in shown["partitions"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let mut after: Option<String> = None;
        loop {
            let mut args = vec!["partitions", "shop/orders", "--range", id, "--limit", "5"];
            if let Some(a) = &after {
                args.extend(["--after", a.as_str()]);
            }
            let page = ok(dir, &args);
            for lp in page["logicalPartitions"].as_array().unwrap() {
                assert_eq!(lp["range"], id);
                keys.push(lp["partitionKey"].as_str().unwrap().to_string());
                items += lp["statistics"]["itemCount"].as_u64().unwrap();
            }
            match page["next"].as_str() {
                Some(n) => after = Some(n.to_string()),
                None => break,
            }
        }
    }
    keys.sort();
    let before = keys.len();
    keys.dedup();
    assert_eq!((before, keys.len()), (37, 37));
    assert_eq!(items, 370);
    assert_eq!(
        err(run(dir, &["partitions", "shop/orders", "--range", "99"]), 1)["status"],
        404
    );
}

#[test]
fn query_prints_the_documented_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("items.ndjson");
    std::fs::write(&file, ndjson(74, 5)).unwrap(); // 37 keys, 2 items each
    ok(dir, &["import", "shop/orders", file.to_str().unwrap()]);
    let r = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT c.id FROM c WHERE c.customerId = @k",
            "--param",
            r#"@k="c-3""#,
        ],
    );
    for field in [
        "documents",
        "continuation",
        "requestCharge",
        "routing",
        "partitions",
        "metrics",
    ] {
        assert!(r.get(field).is_some(), "missing {field}: {r}");
    }
    assert_eq!(r["documents"].as_array().unwrap().len(), 2);
    assert_eq!(r["routing"]["kind"], "single-partition");
    let p = &r["partitions"][0];
    for field in [
        "id",
        "minInclusive",
        "maxExclusive",
        "logicalPartitions",
        "requestCharge",
        "metrics",
    ] {
        assert!(p.get(field).is_some(), "partition lacks {field}: {p}");
    }
    assert_eq!(p["logicalPartitions"], json!(["c-3"]));
    assert!(p["metrics"]["retrievedDocumentCount"].as_u64().is_some());
    // Paging through the CLI.
    let page = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE c.id FROM c",
            "--max-items",
            "10",
        ],
    );
    assert_eq!(page["documents"].as_array().unwrap().len(), 10);
    assert!(page["continuation"].is_string());
    let all = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE c.id FROM c",
            "--max-items",
            "10",
            "--all",
        ],
    );
    assert_eq!(all["documents"].as_array().unwrap().len(), 74);
    assert!(all["continuation"].is_null());
    // MaxItemCount = -1 (pagination.md): no item limit, one page of everything under 4 MB.
    let unlimited = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE c.id FROM c",
            "--max-items",
            "-1",
        ],
    );
    assert_eq!(unlimited["documents"], all["documents"]);
    assert!(unlimited["continuation"].is_null());
    for bad in ["0", "-2"] {
        let e = err(
            run(
                dir,
                &[
                    "query",
                    "shop/orders",
                    "SELECT * FROM c",
                    "--max-items",
                    bad,
                ],
            ),
            2,
        );
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("or -1 for no item limit"),
            "{e}"
        );
    }
    // Errors carry the position and exit 1.
    let e = err(
        run(
            dir,
            &[
                "query",
                "shop/orders",
                "SELECT c.id\nFROM c\nWHERE c.id = = 1",
            ],
        ),
        1,
    );
    assert_eq!(
        (e["status"].as_u64(), e["line"].as_u64()),
        (Some(400), Some(3))
    );
    assert!(e["column"].as_u64().is_some());
}

#[test]
fn compact_rewrites_the_file_unless_another_process_has_it_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    setup(dir);
    let file = tmp.path().join("items.ndjson");
    std::fs::write(&file, ndjson(2000, 300)).unwrap();
    // Small transactions leave free pages behind.
    ok(
        dir,
        &[
            "import",
            "shop/orders",
            file.to_str().unwrap(),
            "--batch-items",
            "50",
        ],
    );
    let done = ok(dir, &["compact"]);
    let (before, after) = (
        done["fileBytesBefore"].as_u64().unwrap(),
        done["fileBytesAfter"].as_u64().unwrap(),
    );
    assert!(after < before, "{done}");
    let shown = ok(dir, &["container", "show", "shop/orders"]);
    assert_eq!(shown["statistics"]["itemCount"], 2000);
    let q = ok(
        dir,
        &[
            "query",
            "shop/orders",
            "SELECT VALUE COUNT(1) FROM c WHERE c.n >= 1000",
        ],
    );
    assert_eq!(q["documents"], json!([1000]));

    // A follower in another process holds the store open: compaction stands aside.
    let mut follower = cosmoscope(dir)
        .args(["feed", "shop/orders", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kept open: a follower whose reader goes away stops (and lets go of the store).
    let mut changes = BufReader::new(follower.stdout.take().unwrap());
    let mut first = String::new();
    changes.read_line(&mut first).unwrap();
    assert!(first.contains("\"id\""), "{first}");
    let e = err(run(dir, &["compact"]), 2);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("open in another process"),
        "{e}"
    );
    follower.kill().unwrap();
    follower.wait().unwrap();
    drop(changes);
}
