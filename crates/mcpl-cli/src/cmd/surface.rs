//! `mcpl surface`: the surface host on stdio, in front of the given servers or the embedded
//! arcade.

use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mcpl_arcade::{ArcadeConfig, ArcadeServer};
use mcpl_rpc::Transport;
use mcpl_server::Principal;
use mcpl_surface::listen::ListenConfig;
use mcpl_surface::{
    BoxFuture, ConnectError, Connector, FileConfig, ServerSpec, StandardConnector, Surface,
    SurfaceConfig, Target,
};
use tokio::task::JoinHandle;

/// The principal the embedded arcade serves: one local agent, whose games outlive a
/// connection (so a reconnect finds them, §5.6).
const LOCAL: &str = "local";

/// Serves [`Target::Embedded`] with an in-process arcade (started on first use and kept
/// across reconnects), and everything else with [`StandardConnector`].
#[derive(Clone)]
pub(crate) struct EmbeddedConnector {
    config: ArcadeConfig,
    arcade: Arc<Mutex<Option<Arc<ArcadeServer>>>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl EmbeddedConnector {
    pub(crate) fn new(config: ArcadeConfig) -> Self {
        EmbeddedConnector {
            config,
            arcade: Arc::default(),
            connections: Arc::default(),
        }
    }

    /// Drops every connection to the embedded arcade, as a network failure would; the
    /// arcade and its games live on.
    pub(crate) fn cut(&self) {
        let conns =
            std::mem::take(&mut *self.connections.lock().unwrap_or_else(|e| e.into_inner()));
        for c in conns {
            c.abort();
        }
    }

    fn arcade(&self) -> Result<Arc<ArcadeServer>, ConnectError> {
        let mut slot = self.arcade.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = &*slot {
            return Ok(a.clone());
        }
        let a = Arc::new(
            mcpl_arcade::start(self.config.clone())
                .map_err(|e| ConnectError::Transport(e.to_string()))?,
        );
        *slot = Some(a.clone());
        Ok(a)
    }
}

impl Connector for EmbeddedConnector {
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
        if spec.target != Target::Embedded {
            return StandardConnector.connect(spec);
        }
        Box::pin(async move {
            let arcade = self.arcade()?;
            let (ours, theirs) = Transport::memory_pair();
            let runtime = arcade.runtime().clone();
            let connection = runtime.handle().next_connection();
            let task = tokio::spawn(async move {
                let _ = runtime
                    .serve(theirs, Principal::authenticated(LOCAL), connection)
                    .await;
            });
            self.connections
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(task);
            Ok(ours)
        })
    }
}

/// What `mcpl surface` was given.
#[derive(Debug)]
pub struct Options {
    /// `--server` values.
    pub servers: Vec<String>,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--inline-cap BYTES`.
    pub inline_cap: Option<usize>,
    /// `--static-limit N`.
    pub static_limit: usize,
    /// `--settle SECS`.
    pub settle: std::time::Duration,
    /// `--listen http://ADDR`.
    pub listen: Option<String>,
    /// `--token TOKEN`.
    pub token: Option<String>,
    /// `--ca FILE`: trusted for every URL server that names no `ca` of its own.
    pub ca: Option<PathBuf>,
    /// `--inspect ADDR`: where to serve the live inspector page.
    pub inspect: Option<String>,
    /// `--inspect-token`: required when `--inspect` is not loopback.
    pub inspect_token: Option<String>,
}

/// The surface's configuration from the options: the config file's servers, then the
/// `--server` ones; none at all means the embedded arcade.
fn surface_config(opts: &Options) -> anyhow::Result<SurfaceConfig> {
    let mut servers = Vec::new();
    let mut cap = None;
    if let Some(path) = &opts.config {
        let file = FileConfig::load(path)?;
        servers = file.servers;
        cap = file.inline_cap;
    }
    if !opts.servers.is_empty() || servers.is_empty() {
        for spec in ServerSpec::parse_all(&opts.servers)? {
            if servers.iter().any(|s| s.name == spec.name) {
                anyhow::bail!(
                    "server name `{}` is used twice (config file and --server)",
                    spec.name
                );
            }
            servers.push(spec);
        }
    }
    if let Some(ca) = &opts.ca {
        for spec in servers.iter_mut().filter(|s| s.ca.is_none()) {
            spec.ca = Some(ca.clone());
        }
    }
    let mut config = SurfaceConfig::new(servers);
    if let Some(cap) = opts.inline_cap.or(cap) {
        config.inline_cap = Some(cap);
    }
    config.static_limit = opts.static_limit;
    config.settle = opts.settle;
    Ok(config)
}

/// Run `mcpl surface`.
pub fn run(opts: Options) -> anyhow::Result<ExitCode> {
    let config = surface_config(&opts)?;
    let listen = opts
        .listen
        .as_deref()
        .map(|l| ListenConfig::parse(l, opts.token.clone()))
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let connector = EmbeddedConnector::new(ArcadeConfig::default());
        // The inspector's address and token are checked before any backend is started.
        let inspect = match &opts.inspect {
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("binding --inspect {addr}"))?;
                mcpl_inspect::Access::new(listener.local_addr()?, opts.inspect_token.clone())?;
                Some(listener)
            }
            None => None,
        };
        let surface = Arc::new(Surface::start(config, Arc::new(connector))?);
        if let Some(listener) = inspect {
            let inspector = mcpl_inspect::inspect_host(
                listener,
                surface.host().clone(),
                opts.inspect_token.clone(),
            )
            .await?;
            eprintln!("mcpl surface: inspect at http://{}/", inspector.addr);
        }
        match listen {
            Some(listen) => mcpl_surface::listen::serve(surface, listen).await?,
            None => {
                surface.serve(Transport::process_stdio()).await?;
                if let Ok(surface) = Arc::try_unwrap(surface) {
                    surface.shutdown().await;
                }
            }
        }
        anyhow::Ok(())
    })?;
    // Child processes and sockets are closed with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}
