//! A split while SDK clients hold continuations: each SDK's `split` scenario writes items
//! to a two-range container and reads the first pages of queries and the change feed, then
//! pauses; the test raises the container's throughput through the CLI (another process on
//! the same store) so its ranges split under the running gateway; the scenario resumes the
//! same iterators, and afterwards a new client (`resume`) resumes the continuations saved
//! before the split. Every item must come exactly once, and the SDK's feed ranges must be
//! the CLI's partitions before and after.

use super::clients::{Scenario, Sdk, run};
use super::scenarios::{cli_ranges, sdk_ranges};
use super::server::Gateway;
use crate::support::cli::ok;

#[test]
fn python_sdk_across_a_split() {
    split(Sdk::Python);
}

#[test]
fn node_sdk_across_a_split() {
    split(Sdk::Node);
}

fn split(sdk: Sdk) {
    sdk.require();
    let mut gateway = Gateway::start();
    let db = sdk.name();
    let target = format!("{db}/split");
    let state = gateway.data_dir().join(format!("{db}-split-state.json"));
    let mut scenario = Scenario::start(sdk, "split", &gateway, db, Some(&state));
    let paused = scenario.wait_event("paused", &gateway);
    let dir = gateway.data_dir().to_path_buf();
    let before = cli_ranges(&dir, &target);
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(sdk_ranges(&paused["feedRanges"]), before);

    // 40,000 RU/s needs four ranges of at most 10,000: both ranges split.
    ok(
        &dir,
        &[
            "container",
            "set-throughput",
            &target,
            "--throughput",
            "40000",
        ],
    );
    let after = cli_ranges(&dir, &target);
    assert_eq!(after.len(), 4, "{after:?}");
    scenario.send("go");
    let out = scenario.finish(&gateway);
    assert_eq!(sdk_ranges(&out["rangesBefore"]), before);
    assert_eq!(sdk_ranges(&out["rangesAfter"]), after, "{out}");

    let resumed = run(sdk, "resume", &gateway, db, Some(&state));
    assert_eq!(sdk_ranges(&resumed["feedRanges"]), after, "{resumed}");
    assert!(resumed["checks"].as_u64().unwrap_or(0) >= 2, "{resumed}");
    gateway.stop_cleanly();
}
