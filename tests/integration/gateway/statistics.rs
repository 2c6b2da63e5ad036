//! A container read's partition statistics and quota headers, as the service answers them
//! when asked (`x-ms-documentdb-populatepartitionstatistics`,
//! `x-ms-documentdb-populatequotainfo`), checked against the embedded engine's own
//! statistics of the same container.

use cosmoscope::engine::Backend;
use serde_json::{Value, json};

use super::client::Server;

const STATS: (&str, &str) = ("x-ms-documentdb-populatepartitionstatistics", "True");
const QUOTA: (&str, &str) = ("x-ms-documentdb-populatequotainfo", "true");

/// Two ranges (12,000 RU/s) and keys of unequal size: `k0` holds the most items.
fn server() -> Server {
    let s = Server::start();
    s.container("d", "c", 12_000);
    for i in 0..60usize {
        let pk = format!("k{}", (i * i) % 7 % 5);
        let doc = json!({"id": format!("i{i}"), "pk": pk, "pad": "x".repeat(300)});
        s.engine
            .upsert_item("d", "c", doc.to_string().as_bytes(), None)
            .unwrap();
    }
    s
}

#[test]
fn a_container_read_reports_each_ranges_statistics_as_the_engine_keeps_them() {
    let s = server();
    let r = s.send("GET", "/dbs/d/colls/c", &[STATS], "");
    assert_eq!(r.status, 200, "{r:?}");
    let body = r.json();
    let stats = body["statistics"].as_array().expect("a statistics array");
    let info = s.engine.container("d", "c").unwrap();
    let ranges = info.partitions.unwrap();
    assert_eq!(stats.len(), 2);
    assert_eq!(stats.len(), ranges.len());
    let mut total = 0;
    for (got, want) in stats.iter().zip(&ranges) {
        assert_eq!(got["id"], json!(want.id), "a range id is a string");
        assert_eq!(got["documentCount"], json!(want.statistics.item_count));
        assert_eq!(
            got["sizeInKB"],
            json!(want.statistics.size_bytes.div_ceil(1024))
        );
        total += got["documentCount"].as_u64().unwrap();
        // The largest logical partitions of the range, largest first, in the wire's
        // array form, as the engine ranks them.
        let largest = s
            .engine
            .largest_logical_partitions("d", "c", &want.id, 0, 3)
            .unwrap();
        let keys: Vec<Value> = largest
            .logical_partitions
            .iter()
            .map(|l| {
                json!({
                    "partitionKey": [l.partition_key],
                    "sizeInKB": l.statistics.size_bytes.div_ceil(1024)
                })
            })
            .collect();
        assert!(!keys.is_empty(), "every range holds some keys here");
        assert_eq!(got["partitionKeys"], json!(keys));
    }
    assert_eq!(total, 60);
    // Without the header the body is the plain container.
    let r = s.send("GET", "/dbs/d/colls/c", &[], "");
    assert!(r.json().get("statistics").is_none(), "{r:?}");
}

#[test]
fn usage_and_quota_headers_come_when_asked_for() {
    let s = server();
    let r = s.send("GET", "/dbs/d/colls/c", &[], "");
    assert_eq!(r.header("x-ms-resource-usage"), None);
    assert_eq!(r.header("x-ms-resource-quota"), None);
    let r = s.send("GET", "/dbs/d/colls/c", &[QUOTA], "");
    let stats = s.engine.container("d", "c").unwrap().statistics;
    let usage = r.header("x-ms-resource-usage").expect("usage");
    assert!(
        usage.contains(&format!("documentsCount={};", stats.item_count)),
        "{usage}"
    );
    assert!(
        usage.contains(&format!(
            "documentsSize={};",
            stats.size_bytes.div_ceil(1024)
        )),
        "{usage}"
    );
    assert!(
        r.header("x-ms-resource-quota")
            .expect("quota")
            .contains("documentsCount=-1"),
    );
}
