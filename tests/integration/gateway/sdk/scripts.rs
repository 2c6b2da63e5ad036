//! Stored procedures, triggers and UDFs through the Python SDK (`scripts` phase of
//! `tests/sdk/python/scenario.py`), then the store they left checked through the CLI.

use super::clients::{Sdk, run};
use super::server::Gateway;
use crate::support::cli::ok;

#[test]
fn python_sdk_runs_server_side_scripts() {
    let sdk = Sdk::Python;
    sdk.require();
    let mut gateway = Gateway::start();
    let out = run(sdk, "scripts", &gateway, "scripts", None);
    assert!(out["checks"].as_u64().unwrap_or(0) >= 30, "{out}");
    assert!(out["bulkExecutions"].as_u64().unwrap_or(0) > 1, "{out}");
    let dir = gateway.data_dir().to_path_buf();
    gateway.stop_cleanly();
    // What the SDK created is there for the CLI after the server stopped.
    let sprocs = ok(&dir, &["sproc", "list", "scripts/scripts"]);
    let names: Vec<&str> = sprocs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bulkImport", "elsewhere", "failAfterWrite"]);
    let udfs = ok(&dir, &["udf", "list", "scripts/scripts"]);
    assert_eq!(udfs[0]["id"], "tax");
}
