//! The partition-key advisor and the projection on a real temporary store: candidates
//! ranked on data with known skew, placements compared with real containers keyed by the
//! candidates, the projection of the workbench at N = 1 and the split rules at scale, and
//! the command's errors.

mod errors;
mod placement;
mod projection;
mod ranking;
mod recorded;
mod sampled;

use cosmoscope::engine::{Backend, ContainerSettings, Throughput, import::Record};
use serde_json::{Value, json};

use crate::support::fixture::{DB, Fixture};

/// `n` items with known skew: `userId` has 200 even values; `tenant` is "big" for half the
/// items and one of 400 others for the rest; `kind` has 3 values; `id` is unique.
pub fn skewed_items(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let tenant = if i % 2 == 0 {
                "big".to_string()
            } else {
                format!("t{}", (i / 2) % 400)
            };
            let kind = ["a", "b", "c"][i % 3];
            json!({
                "id": format!("item-{i}"),
                "userId": format!("u{}", (i * 7) % 200),
                "tenant": tenant,
                "kind": kind,
                "n": i,
                "note": "x".repeat(40 + i % 60),
            })
        })
        .collect()
}

/// Creates container `name` in [`DB`] keyed by `paths` and imports `items` in one batch.
pub fn container_with(
    f: &Fixture,
    name: &str,
    paths: &[&str],
    throughput: Throughput,
    max_partition_bytes: Option<u64>,
    items: &[Value],
) {
    let mut settings = ContainerSettings::new(paths.iter().map(|p| p.to_string()).collect());
    settings.throughput = throughput;
    settings.max_partition_bytes = max_partition_bytes;
    f.container(name, settings);
    import(f, name, items);
}

/// Imports `items` into `name` (one transaction for up to 50,000 items).
pub fn import(f: &Fixture, name: &str, items: &[Value]) {
    let bodies: Vec<Vec<u8>> = items
        .iter()
        .map(|v| serde_json::to_vec(v).unwrap())
        .collect();
    let records: Vec<Record> = bodies
        .iter()
        .enumerate()
        .map(|(i, json)| Record { line: i + 1, json })
        .collect();
    f.engine
        .import_records(DB, name, &records, &mut |_| {})
        .unwrap_or_else(|e| panic!("import into {name}: {e}"));
}
