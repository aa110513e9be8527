//! [`InProcess`]: the server suite's way in to a server on the SDK running in this process.

use mcpl_conformance::{BoxFuture, Connector, Unreachable};
use mcpl_rpc::Transport;
use mcpl_server::Principal;
use mcpl_server::driver::{App, Runtime};

/// Opens each of the suite's connections as a fresh in-memory transport that `runtime` serves.
/// With `shared`, every connection acts for the one principal `cf` (vectors 9, 14 and 32 need
/// two connections of one principal); without, each is its own principal.
pub struct InProcess<A: App> {
    runtime: Runtime<A>,
    shared: bool,
    name: String,
}

impl<A: App> InProcess<A> {
    /// Connections to `runtime`, named `name` in the suite's report.
    pub fn new(runtime: Runtime<A>, shared: bool, name: impl Into<String>) -> Self {
        InProcess {
            runtime,
            shared,
            name: name.into(),
        }
    }
}

impl<A: App> Connector for InProcess<A> {
    fn connect(&self) -> BoxFuture<'_, Result<Transport, Unreachable>> {
        Box::pin(async move {
            let (ours, theirs) = Transport::memory_pair();
            let connection = self.runtime.next_connection();
            let principal = if self.shared {
                Principal::authenticated("cf")
            } else {
                Principal::of_connection(connection)
            };
            let runtime = self.runtime.clone();
            tokio::spawn(async move {
                let _ = runtime.serve(ours, principal, connection).await;
            });
            Ok(theirs)
        })
    }

    fn shares_principal(&self) -> bool {
        self.shared
    }

    fn describe(&self) -> String {
        format!("{} (shared principal: {})", self.name, self.shared)
    }
}
