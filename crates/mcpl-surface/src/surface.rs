//! The [`Surface`]: starts a link per backing server and serves clients.

use std::sync::Arc;
use std::time::Duration;

use mcpl_rpc::Transport;
use tokio::task::JoinHandle;

use crate::connector::Connector;
use crate::error::Error;
use crate::hub::Hub;
use crate::link::{self, LinkStatus, LinkTiming};
use crate::meter::CacheReport;
use crate::spec::ServerSpec;

/// How a surface runs.
#[derive(Debug, Clone)]
pub struct SurfaceConfig {
    /// The backing servers, with unique names.
    pub servers: Vec<ServerSpec>,
    /// The principal the surface acts for (§8.6: it connects as the agent).
    pub principal: String,
    /// Request timeouts and reconnect backoff.
    pub timing: LinkTiming,
    /// How long the first `tools/list` waits for every server to be read.
    pub settle: Duration,
}

impl SurfaceConfig {
    /// A configuration with default timing for `servers`.
    pub fn new(servers: Vec<ServerSpec>) -> Self {
        SurfaceConfig {
            servers,
            principal: "local".to_owned(),
            timing: LinkTiming::default(),
            settle: Duration::from_secs(10),
        }
    }
}

/// A running surface host: one link task per backing server, serving any number of clients
/// one after the other (stdio has one).
#[derive(Debug)]
pub struct Surface {
    hub: Arc<Hub>,
    links: Vec<JoinHandle<()>>,
    settle: Duration,
}

impl Surface {
    /// Starts connecting to every server (in the background, with reconnects).
    pub fn start(config: SurfaceConfig, connector: Arc<dyn Connector>) -> Result<Surface, Error> {
        let names: Vec<String> = config.servers.iter().map(|s| s.name.clone()).collect();
        let mut seen = std::collections::BTreeSet::new();
        for n in &names {
            if !seen.insert(n) {
                return Err(Error::BadSpec {
                    spec: n.clone(),
                    why: "two servers share this name".to_owned(),
                });
            }
        }
        let hub = Arc::new(Hub::new(&names, connector, config.timing, config.principal));
        let mut links = Vec::new();
        for spec in config.servers {
            let wake = hub.wake_of(&spec.name).expect("every spec has a link");
            links.push(tokio::spawn(link::run(hub.clone(), spec, wake)));
        }
        Ok(Surface {
            hub,
            links,
            settle: config.settle,
        })
    }

    /// Serves one client over `transport` (for example [`Transport::process_stdio`]) until
    /// it closes.
    pub async fn serve(&self, transport: Transport) -> Result<(), Error> {
        crate::front::serve(self.hub.clone(), transport, self.settle).await
    }

    /// Where each backing server's link stands.
    pub fn status(&self, server: &str) -> Option<LinkStatus> {
        self.hub.lock().links.get(server).map(|l| l.status.clone())
    }

    /// How many times a server has connected (2 and more: it reconnected).
    pub fn connects(&self, server: &str) -> u64 {
        self.hub.lock().links.get(server).map_or(0, |l| l.connects)
    }

    /// Waits until `server` has connected at least `n` times and been read again.
    pub async fn wait_connected(&self, server: &str, n: u64) {
        loop {
            let progress = self.hub.progress.notified();
            let done = {
                let inner = self.hub.lock();
                inner.links.get(server).is_some_and(|l| {
                    l.connects >= n && l.controller.as_ref().is_some_and(|c| c.snapshot().ready())
                })
            };
            if done {
                return;
            }
            progress.await;
        }
    }

    /// The cache report so far: the surface's own list changes against both baselines.
    pub fn cache_report(&self) -> CacheReport {
        let inner = self.hub.lock();
        CacheReport {
            surface_bytes: inner.published.first_bytes,
            surface_changes: inner.published.changes,
            surface_resent_bytes: inner.published.resent_bytes,
            surface_lists: inner.published.lists,
            plain: inner.meter.plain.clone(),
            groups: inner.meter.groups.clone(),
        }
    }

    /// Stops every link and closes the backing connections.
    pub async fn shutdown(self) {
        self.hub.shut_down();
        for l in self.links {
            let _ = l.await;
        }
    }
}
