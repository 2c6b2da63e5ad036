//! `cosmoscope serve`: the gateway on this store until Ctrl-C (or SIGTERM). It prints
//! where to connect, one `name: value` per line, the endpoint first so scripts can read it;
//! the key is printed only when it is the emulator's public one.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::args::{ServeArgs, SyncMode};
use super::{CliResult, Failure};
use crate::engine::{Backend, Engine, FLUSH_INTERVAL};
use crate::error::Error;
use crate::gateway::{EMULATOR_KEY, Gateway, Options};

pub fn serve(engine: Engine, dir: &Path, args: ServeArgs) -> CliResult {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(crate::gateway::runtime_workers())
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the runtime: {e}")))?;
    engine.set_durability(args.sync.durability())?;
    let sync = args.sync;
    let backend: Arc<dyn Backend> = Arc::new(engine);
    runtime.block_on(async {
        let gateway = Gateway::start(
            backend,
            Options {
                addr: args.addr,
                key: args.key,
                tls: args.tls,
                data_dir: dir.to_path_buf(),
                enforce_throughput: args.enforce_throughput,
            },
        )
        .await?;
        announce(&gateway, dir, sync);
        wait_for_signal().await;
        gateway.stop().await;
        Ok::<(), Failure>(())
    })
}

fn announce(gateway: &Gateway, dir: &Path, sync: SyncMode) {
    let endpoint = gateway.endpoint();
    let mut lines = vec![format!("endpoint: {endpoint}")];
    if gateway.has_custom_key() {
        lines.push("key: the one given with --key".into());
    } else {
        lines.push(format!("key: {EMULATOR_KEY}"));
        lines.push(format!(
            "connection string: AccountEndpoint={endpoint};AccountKey={EMULATOR_KEY};"
        ));
    }
    if let Some(cert) = gateway.certificate() {
        lines.push(format!("certificate: {}", cert.display()));
    }
    lines.push(format!("store: {}", dir.display()));
    lines.push(match sync {
        SyncMode::Commit => "writes: on disk when answered".into(),
        SyncMode::Periodic => {
            let ms = FLUSH_INTERVAL.as_millis();
            format!(
                "writes: flushed to disk every {ms} ms (--sync periodic: an OS crash can lose \
                 the last {ms} ms and damage the data file)"
            )
        }
    });
    lines.push("stop with Ctrl-C".into());
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// Ctrl-C, or SIGTERM where there is one (how test harnesses and service managers stop it).
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
