//! The host suite against the project's own host under test: the surface host
//! (`mcpl-surface`), started in process and pointed at the suite's scripted server.

use mcpl_conformance::{
    BoxFuture, HostLauncher, HostTarget, Options, Outcome, Unreachable, run_host_suite,
};
use mcpl_rpc::Transport;
use mcpl_surface::{ServerSpec, StandardConnector, Surface, SurfaceConfig};
use std::sync::Arc;
use std::time::Duration;

struct SurfaceLauncher;

impl HostLauncher for SurfaceLauncher {
    fn launch(&self, server_url: String) -> BoxFuture<'_, Result<Transport, Unreachable>> {
        Box::pin(async move {
            let spec = ServerSpec::parse(&server_url).map_err(Unreachable::new)?;
            let mut config = SurfaceConfig::new(vec![spec]);
            config.settle = Duration::from_secs(2);
            // A short request timeout, so v35 (a late toolsets/open result) runs quickly.
            config.timing.request_timeout = Duration::from_secs(2);
            let surface =
                Surface::start(config, Arc::new(StandardConnector)).map_err(Unreachable::new)?;
            let (agent, ours) = Transport::memory_pair();
            tokio::spawn(async move {
                let _ = surface.serve(ours).await;
                surface.shutdown().await;
            });
            Ok(agent)
        })
    }

    fn describe(&self) -> String {
        "mcpl-surface (in process)".into()
    }
}

#[tokio::test]
async fn s13_surface_host_passes_every_host_check() {
    let options = Options {
        timeout: Duration::from_secs(10),
        wait: Duration::from_secs(4),
        quiet: Duration::from_millis(200),
        ..Options::default()
    };
    let report = run_host_suite(HostTarget::Launcher(Arc::new(SurfaceLauncher)), options).await;
    println!("{}", mcpl_conformance::render::table(&report));
    let failed: Vec<_> = report
        .checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Fail { .. }))
        .map(|c| c.id.clone())
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}
