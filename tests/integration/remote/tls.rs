//! HTTPS to `cosmoscope serve --tls`: its self-signed certificate is trusted when given with
//! `--ca-cert` (here the config's `ca_cert`), and refused otherwise.

use std::sync::Arc;

use cosmoscope::engine::remote::{RemoteBackend, RemoteConfig, Secret};
use cosmoscope::engine::{Backend, Engine};
use cosmoscope::error::StatusCode;
use cosmoscope::gateway::EMULATOR_KEY;

#[test]
fn https_needs_the_servers_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path()).unwrap());
    engine.create_database("tls").unwrap();
    let (runtime, gateway) = super::serve(engine.clone(), dir.path(), true);
    let endpoint = gateway.endpoint();
    assert!(endpoint.starts_with("https://"), "{endpoint}");
    let cert = gateway.certificate().expect("a certificate").to_path_buf();

    let untrusted = RemoteConfig::new(&endpoint, &Secret::new(EMULATOR_KEY)).unwrap();
    let e = RemoteBackend::connect(&untrusted)
        .unwrap()
        .list_databases()
        .unwrap_err();
    assert_eq!(e.status, StatusCode::ServiceUnavailable);
    assert!(e.message.to_lowercase().contains("certificate"), "{e}");

    let mut trusted = untrusted.clone();
    trusted.ca_cert = Some(cert);
    let dbs = RemoteBackend::connect(&trusted)
        .unwrap()
        .list_databases()
        .unwrap();
    assert_eq!(dbs[0].id, "tls");

    let mut bad = trusted.clone();
    bad.ca_cert = Some(dir.path().join("missing.pem"));
    let e = RemoteBackend::connect(&bad).unwrap_err();
    assert!(e.message.contains("--ca-cert"), "{e}");
    runtime.block_on(gateway.stop());
}
