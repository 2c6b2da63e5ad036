//! `sample list`, `sample load` and first launch, through the real binary on a temporary
//! data directory with stdin, stdout and stderr not terminals.

use serde_json::Value;

use crate::support::cli::{failed, json_of, ok, run, stdout};

#[test]
fn sample_list_prints_one_line_per_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["sample", "list"]);
    assert!(out.status.success());
    let sets: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let names: Vec<&str> = sets.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "modeling",
            "webstore-relational",
            "webstore",
            "blog-v1",
            "blog-v2",
            "blog-v3"
        ]
    );
    for set in &sets {
        assert!(set["description"].as_str().is_some_and(|d| d.len() > 40));
        let containers = set["databases"][0]["containers"]
            .as_array()
            .expect("containers");
        let total: u64 = containers.iter().filter_map(|c| c["items"].as_u64()).sum();
        assert_eq!(set["defaultItemCount"], total);
        assert!(containers.iter().all(|c| c["partitionKey"][0].is_string()));
    }
    assert_eq!(sets[0]["generated"], false);
    assert_eq!(sets[5]["generated"], true);
    assert!(out.stderr.is_empty(), "no progress without a terminal");
}

#[test]
fn sample_load_creates_and_fills_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run(
        d,
        &["sample", "load", "blog-v3", "--scale", "0.2", "--seed", "9"],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(out.stderr.is_empty(), "no progress bar without a terminal");
    let report = json_of(&out);
    assert_eq!(report["name"], "blog-v3");
    assert_eq!(report["seed"], 9);
    let containers = report["containers"].as_array().expect("containers");
    let sum: u64 = containers.iter().filter_map(|c| c["items"].as_u64()).sum();
    assert!(sum > 1000);
    assert_eq!(report["items"], sum);

    let feed = ok(d, &["container", "show", "blog-v3/feed"]);
    assert_eq!(feed["partitionKey"]["paths"][0], "/type");
    assert_eq!(feed["statistics"]["itemCount"], 100);
    let q = ok(
        d,
        &[
            "query",
            "blog-v3/feed",
            "SELECT VALUE COUNT(1) FROM f WHERE f.type = 'post'",
        ],
    );
    assert_eq!(q["documents"][0], 100);
    assert_eq!(q["routing"]["kind"], "single-partition");

    let e = failed(d, &["sample", "load", "blog-v3"], 1);
    assert_eq!(e["status"], 409);
    let e = failed(d, &["sample", "load", "no-such-set"], 1);
    assert_eq!(e["status"], 404);
    let e = failed(d, &["sample", "load", "blog-v1", "--scale", "0"], 1);
    assert_eq!(e["status"], 400);
    let e = failed(d, &["sample", "load", "blog-v1", "--scale", "lots"], 2);
    assert_eq!(e["status"], 400);
    let dbs = ok(d, &["db", "list"]);
    assert_eq!(
        dbs.as_array().map(Vec::len),
        Some(1),
        "failed loads created nothing"
    );
}

#[test]
fn first_launch_loads_every_sample_once_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Piped, the launch prints the store's status as one JSON document, and what the
    // first launch loaded.
    let out = run(d, &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    let status = json_of(&out);
    let loaded = status["firstLaunch"]["loaded"].as_array().map(Vec::len);
    assert_eq!(
        loaded,
        Some(cosmoscope::samples::registry::SETS.len()),
        "{status}"
    );
    assert!(
        status["firstLaunch"]["items"].as_u64() > Some(0),
        "{status}"
    );
    assert_eq!(status["dataDirectory"], d.display().to_string());
    let v3 = status["databases"]
        .as_array()
        .and_then(|dbs| dbs.iter().find(|db| db["id"] == "blog-v3"))
        .unwrap_or_else(|| panic!("no blog-v3: {status}"));
    assert_eq!(v3["containers"].as_array().map(Vec::len), Some(3), "{v3}");
    let containers = v3["containers"].as_array().cloned().unwrap_or_default();
    assert!(
        containers.iter().all(|c| c["partitionKey"].is_array()),
        "{v3}"
    );
    assert!(
        containers.iter().any(|c| c["items"].as_u64() > Some(0)),
        "{v3}"
    );
    assert!(
        !stdout(&out).contains("Usage"),
        "no help text in the status"
    );
    let dbs = ok(d, &["db", "list"]);
    assert_eq!(dbs.as_array().map(Vec::len), Some(6));

    // Later launches, even after the user deleted everything, leave the store alone.
    let again = run(d, &[]);
    assert!(again.status.success());
    assert_eq!(json_of(&again).get("firstLaunch"), None);
    for db in cosmoscope::samples::registry::SETS {
        ok(d, &["db", "delete", db]);
    }
    let empty = run(d, &[]);
    assert!(empty.status.success());
    let status = json_of(&empty);
    assert_eq!(status["databases"], serde_json::json!([]));
    assert!(
        status["hint"]
            .as_str()
            .is_some_and(|h| h.contains("The store is empty"))
    );
    assert_eq!(ok(d, &["db", "list"]).as_array().map(Vec::len), Some(0));
}
