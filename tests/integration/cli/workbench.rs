//! `workbench` and `simulate` through the real binary on a temporary data directory, with
//! stdin, stdout and stderr not terminals.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::support::cli::{cosmoscope, failed, ok, run, stdout};

#[test]
fn workbench_json_reports_every_pattern_and_design() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let report = ok(
        d,
        &[
            "workbench",
            "blog",
            "--json",
            "--scale",
            "0.25",
            "--iterations",
            "2",
        ],
    );
    assert_eq!(report["suite"], "blog");
    assert_eq!(report["iterations"], 2);
    let patterns = report["patterns"].as_array().unwrap();
    assert_eq!(patterns.len(), 15);
    for p in patterns {
        // The script rows run on the designs that denormalize (the feed trigger: v3).
        let designs: &[&str] = match p["id"].as_str().unwrap_or_default() {
            "C2s" => &["v3"],
            id if id.ends_with('s') => &["v2", "v3"],
            _ => &["v1", "v2", "v3"],
        };
        assert_eq!(
            p["designs"].as_object().map(|d| d.len()),
            Some(designs.len())
        );
        for design in designs {
            let r = &p["designs"][design];
            assert!(
                r["requestCharge"].as_f64().unwrap() > 0.0,
                "{} {design}",
                p["id"]
            );
            assert!(r["latencyMs"].is_number());
            assert!(r["requests"].as_u64().unwrap() >= 1);
            assert!(r["partitionsTouched"].as_u64().unwrap() >= 1);
            assert!(r["operations"].as_array().is_some_and(|o| !o.is_empty()));
        }
    }
    let q6 = patterns.iter().find(|p| p["id"] == "Q6").unwrap();
    assert_eq!(q6["designs"]["v3"]["routing"], "single-partition");
    assert_eq!(q6["designs"]["v1"]["routing"], "fan-out");

    // The designs it loaded are ordinary databases now, with the processors' leases.
    let listed = ok(d, &["container", "list", "blog-v3"]);
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(names.contains(&"leases"), "{names:?}");

    // One pattern only, as a table.
    let out = run(
        d,
        &["workbench", "blog", "--pattern", "Q2", "--iterations", "1"],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    let table = stdout(&out);
    assert!(table.contains("Q2 Retrieve a post"), "{table}");
    assert!(!table.contains("Q6 "), "{table}");
    assert!(out.stderr.is_empty(), "no progress without a terminal");
}

#[test]
fn workbench_errors_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e = failed(d, &["workbench", "no-such-suite"], 1);
    assert_eq!(e["status"], 400);
    assert!(e["message"].as_str().unwrap().contains("bundled suite"));

    let file = d.join("broken.toml");
    std::fs::write(
        &file,
        "name = \"x\"\ntitle = \"y\"\n[[designs]]\nid = \"a\"\n",
    )
    .unwrap();
    let e = failed(d, &["workbench", file.to_str().unwrap()], 1);
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("invalid workbench suite"), "{m}");

    let e = failed(d, &["workbench", "blog", "--iterations", "0"], 1);
    assert_eq!(e["status"], 400);
    let e = failed(d, &["workbench", "blog", "--iterations", "x"], 2);
    assert_eq!(e["status"], 400);
}

/// Reads a child's stdout lines on a thread, so a test can wait for them with a timeout.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn simulate_runs_for_its_duration_and_a_follower_sees_it_live() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["sample", "load", "blog-v3", "--scale", "0.25"]);

    // Another process follows the posts container's change feed from now.
    let mut follower = cosmoscope(d)
        .args(["feed", "blog-v3/posts", "--from", "now", "--follow"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the follower");
    let seen = lines(&mut follower);

    let report = ok(
        d,
        &[
            "simulate",
            "blog-v3",
            "--duration",
            "1",
            "--rate",
            "200",
            "--hot-key",
            "0.5",
        ],
    );
    assert_eq!(report["stopped"], "duration");
    assert!(report["operations"].as_u64().unwrap() > 0);
    assert!(report["requestCharge"].as_f64().unwrap() > 0.0);
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["hotKey"]["param"], "postId");
    assert!(report["patterns"]["Q6"]["count"].as_u64().unwrap() > 0);

    // The follower printed the simulator's writes as they happened.
    let first = seen.recv_timeout(Duration::from_secs(20));
    let _ = follower.kill();
    let _ = follower.wait();
    let first: Value = serde_json::from_str(&first.expect("the follower saw a change")).unwrap();
    assert!(first["postId"].is_string(), "{first}");

    // Its processors released their leases on the way out.
    let leases = run(d, &["export", "blog-v3/leases"]);
    let leases: Vec<Value> = stdout(&leases)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!leases.is_empty());
    assert!(leases.iter().all(|l| l["Owner"].is_null()));
}

#[test]
fn simulate_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e = failed(d, &["simulate", "modeling", "--duration", "1"], 1);
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("blog-v3"));
    let e = failed(d, &["simulate", "blog-v3", "--hot-key", "1.5"], 2);
    assert!(e["message"].as_str().unwrap().contains("--hot-key"));
    let e = failed(d, &["simulate", "blog-v3", "--duration", "0"], 2);
    assert!(e["message"].as_str().unwrap().contains("--duration"));
    // Nothing was loaded by the rejected runs.
    assert_eq!(ok(d, &["db", "list"]), Value::Array(vec![]));
}
