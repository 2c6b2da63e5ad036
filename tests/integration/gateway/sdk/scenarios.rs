//! Each SDK's `main` scenario against the gateway (resources, point operations with their
//! errors, patch, batch, queries paged to the end, change feed, a wrong key), then what the
//! SDK reported checked against the CLI on the same store: its EPK of each key against
//! `cosmoscope epk`, its feed ranges against `cosmoscope partitions`, and the charge of each
//! point operation against the same operation replayed through the CLI on an equivalent
//! container.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::clients::{Sdk, run};
use super::server::Gateway;
use crate::support::cli::{ok, run as run_cli, run_stdin, stdout};

#[test]
fn python_sdk_scenario() {
    scenario(Sdk::Python);
}

#[test]
fn node_sdk_scenario() {
    scenario(Sdk::Node);
}

fn scenario(sdk: Sdk) {
    sdk.require();
    let mut gateway = Gateway::start();
    let db = sdk.name();
    let out = run(sdk, "main", &gateway, db, None);
    let dir = gateway.data_dir().to_path_buf();
    assert_eq!(out["sdk"], sdk.name());
    assert_eq!(out["wrongKeyStatus"], 401, "a wrong key: {out}");
    assert!(
        out["checks"].as_u64().unwrap_or(0) >= 50,
        "the scenario checked too little: {out}"
    );
    check_feed_ranges(&dir, db, &out["feedRanges"]);
    check_epks(&dir, db, &out["epk"]);
    check_charges(&dir, db, &out["operations"]);
    // Cross-partition queries really went through the SDK's pipeline: the containers have
    // several ranges (checked above) and the results came in several pages.
    let queries = out["queries"].as_array().expect("queries");
    let select_all = queries
        .iter()
        .find(|q| q["name"] == "select all")
        .expect("the select-all query");
    assert_eq!(select_all["count"], 60, "{select_all}");
    assert!(select_all["pages"].as_u64().unwrap() >= 9, "{select_all}");
    gateway.stop_cleanly();
}

/// The sorted `(min, max)` of the ranges `partitions DB/C` lists.
pub fn cli_ranges(dir: &Path, target: &str) -> Vec<(String, String)> {
    let report = ok(dir, &["partitions", target]);
    let mut ranges: Vec<(String, String)> = report["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("partitions {target}: {report}"))
        .iter()
        .map(|p| (str_of(&p["minInclusive"]), str_of(&p["maxExclusive"])))
        .collect();
    ranges.sort();
    ranges
}

/// The sorted `(min, max)` of feed ranges as the scenarios print them
/// (`{"min", "max", "isMinInclusive": true, "isMaxInclusive": false}`).
pub fn sdk_ranges(ranges: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = ranges
        .as_array()
        .unwrap_or_else(|| panic!("feed ranges: {ranges}"))
        .iter()
        .map(|r| {
            assert_eq!(
                (&r["isMinInclusive"], &r["isMaxInclusive"]),
                (&json!(true), &json!(false)),
                "a feed range is [min, max): {r}"
            );
            (str_of(&r["min"]), str_of(&r["max"]))
        })
        .collect();
    out.sort();
    out
}

fn check_feed_ranges(dir: &Path, db: &str, feed_ranges: &Value) {
    let by_container = feed_ranges.as_object().expect("feedRanges");
    assert!(by_container.len() >= 3, "{feed_ranges}");
    for (container, ranges) in by_container {
        let target = format!("{db}/{container}");
        let cli = cli_ranges(dir, &target);
        assert_eq!(
            sdk_ranges(ranges),
            cli,
            "the SDK's feed ranges of {target} against `cosmoscope partitions`"
        );
    }
    assert_eq!(cli_ranges(dir, &format!("{db}/orders")).len(), 4);
}

/// Each key's EPK as the SDK computed it against `cosmoscope epk DB/C KEY`: a full key is
/// the point range `[epk, epk]`, a hierarchical prefix the range `[epk, epk + "FF")`.
fn check_epks(dir: &Path, db: &str, epks: &Value) {
    let epks = epks.as_array().expect("epk");
    assert!(epks.len() >= 5, "{epks:?}");
    for e in epks {
        let target = format!("{db}/{}", str_of(&e["container"]));
        let key = serde_json::to_string(&e["key"]).unwrap();
        let cli = ok(dir, &["epk", &target, &key]);
        let (min, max) = (str_of(&e["min"]), str_of(&e["max"]));
        if e["isMaxInclusive"] == true {
            assert_eq!(min, max, "{e}");
            assert_eq!(min, str_of(&cli["epk"]), "EPK of {key} in {target}: {cli}");
        } else {
            let range = &cli["epkRange"];
            assert_eq!(
                (min.as_str(), max.as_str()),
                (
                    range[0].as_str().unwrap_or_default(),
                    range[1].as_str().unwrap_or_default()
                ),
                "EPK range of the prefix {key} in {target}: {cli}"
            );
        }
    }
}

/// An etag no item has, for the operations the SDK ran with a stale one.
const STALE_ETAG: &str = "\"00000000-0000-0000-0000-000000000000\"";

/// Replays the SDK's point operations, in order, through the CLI on a new container with
/// the same settings as the SDK's `ru` container, and compares status and charge of each.
fn check_charges(dir: &Path, db: &str, operations: &Value) {
    let ops = operations.as_array().expect("operations");
    assert!(ops.len() >= 15, "{ops:?}");
    let target = format!("{db}/ru-replay");
    ok(
        dir,
        &["container", "create", &target, "--partition-key", "/pk"],
    );
    let mut etags: HashMap<String, String> = HashMap::new();
    for op in ops {
        let kind = str_of(&op["op"]);
        let id = op["id"].as_str().unwrap_or_default().to_string();
        let pk = serde_json::to_string(&op["pk"]).unwrap();
        let body = serde_json::to_string(&op["body"]).unwrap();
        let if_match = match op["ifMatch"].as_str() {
            Some("current") => {
                let key = if id.is_empty() {
                    str_of(&op["body"]["id"])
                } else {
                    id.clone()
                };
                Some(
                    etags
                        .get(&key)
                        .cloned()
                        .expect("an etag from an earlier write"),
                )
            }
            Some(_) => Some(STALE_ETAG.to_string()),
            None => None,
        };
        let mut args: Vec<String> = Vec::new();
        let mut stdin: Option<String> = None;
        match kind.as_str() {
            "create" | "upsert" | "replace" => {
                args.extend(["item".to_string(), kind.clone(), target.clone()]);
                stdin = Some(body);
            }
            "read" | "delete" => args.extend(
                [
                    "item",
                    kind.as_str(),
                    target.as_str(),
                    id.as_str(),
                    "--pk",
                    pk.as_str(),
                ]
                .map(String::from),
            ),
            "patch" => {
                args.extend(
                    [
                        "item",
                        "patch",
                        target.as_str(),
                        id.as_str(),
                        "--pk",
                        pk.as_str(),
                    ]
                    .map(String::from),
                );
                let mut request = json!({"operations": op["operations"]});
                if let Some(c) = op["condition"].as_str() {
                    request["condition"] = c.into();
                }
                stdin = Some(request.to_string());
            }
            "batch" => {
                args.extend(["batch", target.as_str(), "--pk", pk.as_str()].map(String::from));
                stdin = Some(op["operations"].to_string());
            }
            "query" => {
                let sql = str_of(&op["query"]);
                args.extend(
                    ["query", target.as_str(), sql.as_str(), "--pk", pk.as_str()].map(String::from),
                );
                args.extend(["--max-items".to_string(), "100".to_string()]);
                for (name, value) in op["parameters"].as_object().expect("parameters") {
                    args.push("--param".into());
                    args.push(format!("{name}={value}"));
                }
            }
            other => panic!("unknown operation {other}: {op}"),
        }
        if let Some(e) = &if_match {
            args.extend(["--if-match".to_string(), e.clone()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = match &stdin {
            Some(s) => run_stdin(dir, &argv, s),
            None => run_cli(dir, &argv),
        };
        let printed: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{argv:?} printed no JSON ({e}): {}", stdout(&out)));
        let (status, charge) = if let Some(err) = printed.get("error") {
            // A failed batch prints its results with the error; its status is the failing
            // operation's.
            (err["status"].as_u64(), &printed["requestCharge"])
        } else {
            (
                printed["statusCode"].as_u64().or(Some(200)),
                &printed["requestCharge"],
            )
        };
        let charge = if charge.is_null() {
            printed["error"]["requestCharge"].as_f64()
        } else {
            charge.as_f64()
        };
        assert_eq!(
            status,
            op["status"].as_u64(),
            "status of {op} replayed as {argv:?}: {printed}"
        );
        let sdk_charge = op["charge"].as_f64().expect("charge");
        let cli_charge = charge.unwrap_or_else(|| panic!("no charge in {printed}"));
        assert!(
            (sdk_charge - cli_charge).abs() < 1e-6,
            "the gateway charged {sdk_charge} RU for {kind} ({op}); the CLI charges {cli_charge} \
             RU for the same operation ({argv:?}: {printed})"
        );
        if let Some(etag) = printed["etag"].as_str() {
            let key = if id.is_empty() {
                str_of(&op["body"]["id"])
            } else {
                id.clone()
            };
            etags.insert(key, etag.to_string());
        }
    }
}

pub fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("{v} is not a string"))
        .to_string()
}
