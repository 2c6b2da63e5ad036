//! The client against `@vercel/cosmosdb-server` (npm, pinned in tests/sdk/node/package.json,
//! installed by `tests/sdk/setup`), a Cosmos-protocol server this project did not write,
//! started here on a loopback port. What it implements (reference/gateway.md §6): databases,
//! containers, one range (with a numeric id), items, queries; no auth check, every charge 1.
//! A missing install fails the test and says how to install it.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{Backend, ContainerSettings, QueryOptions, StatisticsSource};
use cosmoscope::error::StatusCode;
use cosmoscope::gateway::EMULATOR_KEY;
use serde_json::json;

/// The server process, killed when dropped.
struct Vercel {
    child: Child,
    base: String,
}

impl Drop for Vercel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Vercel {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sdk/node/node_modules/@vercel/cosmosdb-server/lib/cli.js");
    assert!(
        cli.exists(),
        "@vercel/cosmosdb-server is not installed ({} is missing): run `tests/sdk/setup` \
         (npm ci in tests/sdk/node), then run the tests again",
        cli.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("node")
        .arg(&cli)
        .args(["--host", "127.0.0.1", "-p", &port.to_string(), "--no-ssl"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("`node` runs (Node 20 or newer, installed by the system)");
    let server = Vercel {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    // Node takes a moment to listen; a server that never does fails the test.
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "cosmosdb-server did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn the_client_works_against_a_server_it_was_not_written_with() {
    let server = start();
    let mut config = RemoteConfig::new(&server.base, &Secret::new(EMULATOR_KEY)).unwrap();
    config.read_write = true;
    let r = RemoteBackend::connect(&config).unwrap();
    r.create_database("v").unwrap();
    r.create_container("v", "c", ContainerSettings::new(vec!["/pk".into()]))
        .unwrap();
    assert!(r.list_databases().unwrap().iter().any(|d| d.id == "v"));
    // Its one range has a numeric id: read as the string the service would send.
    let ranges = r.partition_key_ranges("v", "c").unwrap();
    assert_eq!(ranges.len(), 1);
    assert_eq!(
        (
            ranges[0].min_inclusive.as_str(),
            ranges[0].max_exclusive.as_str()
        ),
        ("", "FF")
    );
    for i in 0..5 {
        let body = json!({"id": format!("i{i}"), "pk": format!("p{}", i % 2), "n": i});
        let created = r
            .create_item("v", "c", body.to_string().as_bytes())
            .unwrap();
        assert_eq!(created.status, StatusCode::Created);
        assert!(created.request_charge > 0.0);
    }
    let read = r.read_item("v", "c", "i3", &json!("p1")).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&read.body.unwrap()).unwrap();
    assert_eq!(doc["n"], 3);
    // It answers a missing item with 500 (reference/gateway.md §6): passed on as it came.
    let e = r.read_item("v", "c", "nope", &json!("p1")).unwrap_err();
    assert!(
        matches!(
            e.status,
            StatusCode::NotFound | StatusCode::InternalServerError
        ),
        "{e}"
    );
    let page = r
        .query(
            "v",
            "c",
            "SELECT * FROM c WHERE c.n >= 1",
            &QueryOptions::default(),
        )
        .unwrap();
    assert_eq!(page.documents.len(), 4);
    assert_eq!(page.partitions.len(), 1);
    let deleted = r.delete_item("v", "c", "i0", &json!("p0"), None).unwrap();
    assert_eq!(deleted.status, StatusCode::NoContent);
    // It sends no partition statistics: the report says so rather than showing zeros as
    // the service's figures.
    let report = r.partitions("v", "c", 10, 0).unwrap();
    assert_eq!(report.statistics_source, StatisticsSource::Unreported);
    assert!(report.largest_logical_partitions.is_empty());
    let e = r
        .largest_logical_partitions("v", "c", "0", 0, 5)
        .unwrap_err();
    assert!(e.message.contains("sent no statistics"), "{e}");
}
