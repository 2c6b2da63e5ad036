//! `advise --workload recorded`: requests sent through a gateway started in the test process
//! are recorded in the data directory, and the advisor replays them as the workload:
//! queries weighted by how often they were sent (an SDK's per-range requests of one query
//! counting as one), point reads and creates by the items they addressed.

use cosmoscope::recorded_requests::{FILE, Recordings};
use serde_json::{Value, json};

use crate::gateway::client::Server;
use crate::support::cli::ok;

const DOCS: &str = "/dbs/shop/colls/orders/docs";
const BY_CUSTOMER: &str = "SELECT * FROM c WHERE c.customer = @c";
const BY_STATUS: &str = "SELECT c.id FROM c WHERE c.status = @s";

fn query_body(text: &str, name: &str, value: &str) -> String {
    json!({"query": text, "parameters": [{"name": name, "value": value}]}).to_string()
}

/// Sends the traffic: 60 creates, 20 cross-partition queries by customer, one query by
/// status sent range by range 4 times (as an SDK fans out), 10 point reads and a read of an
/// item that does not exist (not recorded: it failed).
fn send_traffic(s: &Server) {
    for i in 0..60 {
        let pk = format!(r#"["o{i}"]"#);
        let body = json!({"id": format!("o{i}"), "pk": format!("o{i}"),
            "customer": format!("c{}", i % 12), "status": format!("s{}", i % 3)});
        let r = s.send(
            "POST",
            DOCS,
            &[("x-ms-documentdb-partitionkey", &pk)],
            &body.to_string(),
        );
        assert_eq!(r.status, 201, "{r:?}");
    }
    let query = [
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-isquery", "True"),
        ("x-ms-documentdb-query-enablecrosspartition", "True"),
    ];
    for k in 0..20 {
        let body = query_body(BY_CUSTOMER, "@c", &format!("c{}", k % 12));
        let r = s.send("POST", DOCS, &query, &body);
        assert_eq!(r.status, 200, "{r:?}");
    }
    let ranges = cosmoscope::engine::Backend::partition_key_ranges(&*s.engine, "shop", "orders")
        .expect("ranges");
    assert_eq!(ranges.len(), 2);
    for k in 0..4 {
        let body = query_body(BY_STATUS, "@s", &format!("s{}", k % 3));
        for r in &ranges {
            let mut headers = query.to_vec();
            headers.push(("x-ms-documentdb-partitionkeyrangeid", &r.id));
            let resp = s.send("POST", DOCS, &headers, &body);
            assert_eq!(resp.status, 200, "{resp:?}");
        }
    }
    for k in 0..10 {
        let pk = format!(r#"["o{k}"]"#);
        let r = s.send(
            "GET",
            &format!("{DOCS}/o{k}"),
            &[("x-ms-documentdb-partitionkey", &pk)],
            "",
        );
        assert_eq!(r.status, 200, "{r:?}");
    }
    let r = s.send(
        "GET",
        &format!("{DOCS}/nope"),
        &[("x-ms-documentdb-partitionkey", r#"["nope"]"#)],
        "",
    );
    assert_eq!(r.status, 404);
}

#[test]
fn advise_replays_the_requests_the_gateway_recorded() {
    let mut s = Server::start();
    s.container("shop", "orders", 12_000);
    send_traffic(&s);
    let gateway = s.gateway.take().expect("the gateway runs");
    s.runtime.block_on(gateway.stop());
    let dir = s.engine.data_dir().to_path_buf();
    assert!(dir.join(FILE).exists());
    let recorded = Recordings::load(&dir).expect("the recordings read back");
    let orders = recorded.of("shop", "orders").expect("orders recorded");
    assert_eq!(orders.creates.count, 60);
    assert_eq!(orders.reads.count, 10);

    let advice = ok(
        &dir,
        &[
            "advise",
            "shop/orders",
            "--workload",
            "recorded",
            "--candidates",
            "/customer",
            "--iterations",
            "4",
            "--json",
        ],
    );
    assert_eq!(advice["workload"], "recorded");
    let candidate = |key: &str| -> &Value {
        advice["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .find(|a| a["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {advice}"))
    };
    let patterns = |key: &str| -> Vec<(String, String, f64, String)> {
        candidate(key)["figures"]["patterns"]
            .as_array()
            .expect("patterns")
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap_or_default().to_string(),
                    p["title"].as_str().unwrap_or_default().to_string(),
                    p["rate"].as_f64().unwrap_or_default(),
                    p["routing"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    // 20 + 4 queries (the per-range requests of one counting once), 10 reads, 60 creates:
    // scaled to the default 100 requests per second (the JSON rounds to 2 decimals).
    let total = 94.0;
    let today = patterns("/pk");
    let ids: Vec<&str> = today.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(ids, ["q1", "q2", "read", "create"]);
    let rates: Vec<f64> = today.iter().map(|p| p.2).collect();
    for (got, sent) in rates.iter().zip([20.0, 4.0, 10.0, 60.0]) {
        assert!(
            (got - sent * 100.0 / total).abs() < 0.006,
            "{rates:?}: {sent}"
        );
    }
    assert_eq!(today[0].1, BY_CUSTOMER);
    assert_eq!(today[1].1, BY_STATUS);
    // The recorded query by customer fans out under today's key and stays in one
    // partition under /customer, which its parameter binds.
    assert_eq!(today[0].3, "fan-out");
    assert_eq!(patterns("/customer")[0].3, "single-partition");
    assert_eq!(advice["candidates"][0]["key"], "/customer");
}
