//! `mcpl surface`: the surface host on stdio, in front of the given servers or the embedded
//! arcade.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mcpl_arcade::{ArcadeConfig, ArcadeServer};
use mcpl_rpc::Transport;
use mcpl_server::Principal;
use mcpl_surface::{
    BoxFuture, Connector, ServerSpec, StandardConnector, Surface, SurfaceConfig, Target,
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

    fn arcade(&self) -> Result<Arc<ArcadeServer>, String> {
        let mut slot = self.arcade.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = &*slot {
            return Ok(a.clone());
        }
        let a = Arc::new(mcpl_arcade::start(self.config.clone()).map_err(|e| e.to_string())?);
        *slot = Some(a.clone());
        Ok(a)
    }
}

impl Connector for EmbeddedConnector {
    fn connect<'a>(&'a self, spec: &'a ServerSpec) -> BoxFuture<'a, Result<Transport, String>> {
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

/// Run `mcpl surface`.
pub fn run(servers: Vec<String>) -> anyhow::Result<ExitCode> {
    let specs = ServerSpec::parse_all(&servers)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let connector = EmbeddedConnector::new(ArcadeConfig::default());
        let surface = Surface::start(SurfaceConfig::new(specs), Arc::new(connector))?;
        surface.serve(Transport::process_stdio()).await?;
        surface.shutdown().await;
        anyhow::Ok(())
    })?;
    // Child processes and sockets are closed with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}
