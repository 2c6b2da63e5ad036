//! The remote backend against `cosmoscope serve` started in this process on a loopback
//! port (the gateway tests' server), over a container with several physical partitions:
//! the same operations answered by the embedded engine directly and by the REST client,
//! compared; and the CLI binary pointed at the server with `--endpoint`.

mod backend;
mod cli;
mod explorer;
mod faults;
mod tls;
mod vercel;

use std::sync::Arc;

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{Backend, ContainerSettings, Engine, Throughput};
use cosmoscope::gateway::EMULATOR_KEY;
use serde_json::json;

use crate::gateway::client::Server;

pub const DB: &str = "shop";
pub const C: &str = "orders";
/// 18,000 RU/s: three physical partitions.
pub const RANGES: usize = 3;

/// A server with `shop/orders` (key `/pk`, three ranges) holding `items` items over 12
/// logical partitions.
pub fn server_with(items: usize) -> Server {
    let server = Server::start();
    let engine: &Arc<Engine> = &server.engine;
    engine.create_database(DB).unwrap();
    let mut settings = ContainerSettings::new(vec!["/pk".into()]);
    settings.throughput = Throughput::Manual(18_000);
    engine.create_container(DB, C, settings).unwrap();
    for i in 0..items {
        let team = ["red", "blue", "green"][i % 3];
        let doc =
            json!({"id": format!("o{i}"), "pk": format!("c{}", i % 12), "n": i, "team": team});
        engine
            .upsert_item(DB, C, doc.to_string().as_bytes(), None)
            .unwrap();
    }
    server
}

/// A gateway serving `backend` on a free loopback port (HTTPS with `tls`), on a runtime of
/// its own; stop it with `runtime.block_on(gateway.stop())`.
pub fn serve(
    backend: Arc<dyn Backend>,
    dir: &std::path::Path,
    tls: bool,
) -> (tokio::runtime::Runtime, cosmoscope::gateway::Gateway) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let options = cosmoscope::gateway::Options {
        addr: "127.0.0.1:0".parse().unwrap(),
        key: None,
        tls,
        data_dir: dir.to_path_buf(),
        enforce_throughput: false,
    };
    let gateway = runtime
        .block_on(cosmoscope::gateway::Gateway::start(backend, options))
        .expect("start the gateway");
    (runtime, gateway)
}

/// A remote backend on `server`, writable or not.
pub fn remote(server: &Server, read_write: bool) -> RemoteBackend {
    let mut config = RemoteConfig::new(&server.base, &Secret::new(EMULATOR_KEY)).unwrap();
    config.read_write = read_write;
    RemoteBackend::connect(&config).unwrap()
}
