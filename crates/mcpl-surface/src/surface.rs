//! The [`Surface`]: the host library's driver, a link task per backing server, and a front
//! per client session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpl_host::ServerName;
use mcpl_host::driver::{DEFAULT_INLINE_CAP, Host, HostPolicy};
use mcpl_host::grouping::DEFAULT_STATIC_LIMIT;
use mcpl_host::presenter::{AgentId, PresenterConfig};
use mcpl_rpc::Transport;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connector::Connector;
use crate::error::Error;
use crate::front::{self, Shared};
use crate::link::{self, LinkContext, LinkStatus, LinkTiming, Links};
use crate::meter::{CacheReport, Counters, snapshots};
use crate::relay::EventIds;
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
    /// How long the first `tools/list` or call waits for every server to be read.
    pub settle: Duration,
    /// The most bytes a result and what it carries may take (H84, H88); what does not fit
    /// waits for the next answer. Default [`DEFAULT_INLINE_CAP`]; `None`: no cap.
    pub inline_cap: Option<usize>,
    /// Where the `eventId`s of the surface's own pushes come from (random per process by
    /// default; tests seed it).
    pub event_ids: EventIds,
    /// A plain server without explicit `toolsets` that lists more tools than this at its
    /// first read is grouped into host-side toolsets by name prefix (default
    /// [`DEFAULT_STATIC_LIMIT`]).
    pub static_limit: usize,
}

impl SurfaceConfig {
    /// A configuration with default timing and cap for `servers`.
    pub fn new(servers: Vec<ServerSpec>) -> Self {
        SurfaceConfig {
            servers,
            principal: "local".to_owned(),
            timing: LinkTiming::default(),
            settle: Duration::from_secs(10),
            inline_cap: Some(DEFAULT_INLINE_CAP),
            event_ids: EventIds::random(),
            static_limit: DEFAULT_STATIC_LIMIT,
        }
    }
}

/// A running surface host: the driver, one link task per backing server, serving any number
/// of client sessions (stdio has one; `--listen` one per HTTP session), each its own agent.
#[derive(Debug)]
pub struct Surface {
    shared: Shared,
    links: Links,
    tasks: Vec<JoinHandle<()>>,
    shut: watch::Sender<bool>,
    sessions: AtomicU64,
}

impl Surface {
    /// Starts connecting to every server (in the background, with reconnects). Must run
    /// inside a tokio runtime.
    pub fn start(config: SurfaceConfig, connector: Arc<dyn Connector>) -> Result<Surface, Error> {
        let mut seen = std::collections::BTreeSet::new();
        for s in &config.servers {
            if !seen.insert(&s.name) {
                return Err(Error::BadSpec {
                    spec: s.name.to_string(),
                    why: "two servers share this name".to_owned(),
                });
            }
        }
        let policy = HostPolicy {
            inline_cap: config.inline_cap,
            policy_timeout: config.timing.request_timeout,
            ..HostPolicy::default()
        };
        let host = Host::start(PresenterConfig::default(), policy);
        let counters = Arc::new(Mutex::new(Counters::default()));
        let meter = counters.clone();
        let _ = host.observe(move |p| {
            if let Ok(mut c) = meter.lock() {
                c.meter.sample(&snapshots(p));
            }
        });
        let (shut, _) = watch::channel(false);
        let links: Links = Arc::default();
        let mut tasks = Vec::new();
        for spec in &config.servers {
            let cx = LinkContext {
                host: host.clone(),
                connector: connector.clone(),
                timing: config.timing,
                principal: config.principal.clone(),
                static_limit: config.static_limit,
                links: links.clone(),
                shut: shut.subscribe(),
            };
            tasks.push(tokio::spawn(link::run(cx, spec.clone())));
        }
        let shared = Shared {
            host,
            counters,
            servers: config.servers.iter().map(|s| s.name.clone()).collect(),
            settle: config.settle,
            event_ids: config.event_ids.clone(),
        };
        Ok(Surface {
            shared,
            links,
            tasks,
            shut,
            sessions: AtomicU64::new(0),
        })
    }

    /// Serves one client over `transport` (for example [`Transport::process_stdio`]) until
    /// it closes. Each call is a new agent with its own opens' news.
    pub async fn serve(&self, transport: Transport) -> Result<(), Error> {
        let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
        let agent = AgentId(format!("client-{n}"));
        front::serve(self.shared.clone(), transport, agent).await;
        Ok(())
    }

    /// The host library's driver the surface runs on, for read-only watchers (the
    /// inspector page reads [`Host::status`](mcpl_host::driver::Host::status)).
    pub fn host(&self) -> &mcpl_host::driver::Host {
        &self.shared.host
    }

    /// Where a backing server's link stands.
    pub fn status(&self, server: &ServerName) -> Option<LinkStatus> {
        let links = self.links.lock().ok()?;
        links.get(server).map(|l| l.status.clone())
    }

    /// How many times a server has connected (2 and more: it reconnected).
    pub fn connects(&self, server: &ServerName) -> u64 {
        self.links
            .lock()
            .ok()
            .and_then(|l| l.get(server).map(|l| l.connects))
            .unwrap_or(0)
    }

    /// Waits until `server` has connected at least `n` times and been read again.
    pub async fn wait_connected(&self, server: &ServerName, n: u64) {
        loop {
            if self.connects(server) >= n {
                let name = server.clone();
                let read = self
                    .shared
                    .host
                    .wait_until(
                        move |p| p.snapshot(&name).is_some_and(|s| s.ready()),
                        Duration::from_millis(50),
                    )
                    .await;
                if read && self.connects(server) >= n {
                    return;
                }
            } else {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }

    /// The cache report so far: the surface's own list changes against both baselines.
    pub fn cache_report(&self) -> CacheReport {
        self.shared
            .counters
            .lock()
            .map(|c| c.report())
            .unwrap_or_default()
    }

    /// Stops every link and closes the backing connections.
    pub async fn shutdown(self) {
        let _ = self.shut.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}
