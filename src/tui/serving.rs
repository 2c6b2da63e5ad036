//! The gateway the explorer runs in its own process (`--serve`, the palette's gateway
//! action): started and stopped on the explorer's tokio runtime over the explorer's engine,
//! and its request log read for the Requests view. Reading the log is a copy of a few
//! pointers from memory, so it happens on the UI task, once a tick; every request's store
//! work runs on the gateway's own blocking threads.
//!
//! The account key lives here and nowhere else in the explorer: the state the screen is
//! drawn from only learns whether a key of the user's own is in use.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::Options as ExplorerOptions;
use super::msg::Msg;
use super::state::requests::GatewayInfo;
use crate::engine::Backend;
use crate::gateway::{Gateway, Options, Traffic};

pub struct Serving {
    engine: Arc<dyn Backend>,
    data_dir: PathBuf,
    /// How gateways are served: the key clients sign with (`None` for the emulator's
    /// public one), TLS, throughput enforcement. Its `serve` address is the state's.
    options: ExplorerOptions,
    /// The gateway serving now; the start task puts it here, the stop task takes it.
    running: Arc<Mutex<Option<Gateway>>>,
    /// The log being read and the number of the last request read from it.
    reading: Option<(Arc<Traffic>, u64)>,
}

impl Serving {
    pub fn new(engine: Arc<dyn Backend>, data_dir: PathBuf, options: ExplorerOptions) -> Serving {
        Serving {
            engine,
            data_dir,
            options,
            running: Arc::new(Mutex::new(None)),
            reading: None,
        }
    }

    fn slot(running: &Mutex<Option<Gateway>>) -> MutexGuard<'_, Option<Gateway>> {
        running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a gateway on `addr`, on the runtime that polls the returned future; it
    /// answers with [`Msg::GatewayStarted`] (an address in use is an error in it).
    pub fn start(&self, ticket: u64, addr: SocketAddr) -> impl Future<Output = Msg> + use<> {
        let options = Options {
            addr,
            key: self.options.key.clone(),
            tls: self.options.tls,
            data_dir: self.data_dir.clone(),
            enforce_throughput: self.options.enforce_throughput,
        };
        let (engine, running) = (self.engine.clone(), self.running.clone());
        async move {
            let result = Gateway::start(engine, options).await.map(|gateway| {
                let info = GatewayInfo {
                    endpoint: gateway.endpoint(),
                    addr: gateway.local_addr(),
                    custom_key: gateway.has_custom_key(),
                    certificate: gateway.certificate().map(Path::to_path_buf),
                };
                // The UI starts one gateway at a time; one left over would be dropped, which
                // stops its listener with it.
                *Serving::slot(&running) = Some(gateway);
                info
            });
            Msg::GatewayStarted { ticket, result }
        }
    }

    /// Stops the gateway, letting requests under way finish; answers with
    /// [`Msg::GatewayStopped`].
    pub fn stop(&self, ticket: u64) -> impl Future<Output = Msg> + use<> {
        let gateway = Serving::slot(&self.running).take();
        async move {
            if let Some(g) = gateway {
                g.stop().await;
            }
            Msg::GatewayStopped { ticket }
        }
    }

    /// The requests served since the last poll and the request rate, while a gateway runs.
    pub fn poll(&mut self) -> Option<Msg> {
        let Some(traffic) = self.traffic() else {
            self.reading = None;
            return None;
        };
        let seen = match &mut self.reading {
            Some((t, seen)) if Arc::ptr_eq(t, &traffic) => seen,
            _ => &mut self.reading.insert((traffic.clone(), 0)).1,
        };
        let exchanges = traffic.since(*seen);
        if let Some(last) = exchanges.last() {
            *seen = last.seq;
        }
        Some(Msg::Traffic {
            exchanges,
            rate: traffic.rate(),
        })
    }

    /// The running gateway's request log.
    pub fn traffic(&self) -> Option<Arc<Traffic>> {
        Serving::slot(&self.running).as_ref().map(Gateway::traffic)
    }

    /// Stops whatever gateway runs (the session is ending).
    pub fn shutdown(&self) -> impl Future<Output = ()> + use<> {
        let stop = self.stop(0);
        async move {
            stop.await;
        }
    }
}
