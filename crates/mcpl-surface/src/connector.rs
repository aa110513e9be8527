//! Connectors: how a [`ServerSpec`] becomes a transport.
//!
//! The surface asks its [`Connector`] for a fresh transport on every connect and reconnect.
//! [`StandardConnector`] reaches command lines, WebSocket and Streamable HTTP URLs; an
//! embedding binary wraps it to serve [`Target::Embedded`] in process (the CLI does this for
//! the arcade), and tests wrap it to cut connections on purpose.

use std::future::Future;
use std::pin::Pin;

use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Limits, Transport};

use crate::spec::{ServerSpec, Target};

/// A boxed future, for object-safe async trait methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Opens a transport to a backing server; called again for every reconnect.
pub trait Connector: Send + Sync + 'static {
    /// A fresh transport to `spec`, or why there is none (shown to the agent while the
    /// server is down).
    fn connect<'a>(&'a self, spec: &'a ServerSpec) -> BoxFuture<'a, Result<Transport, String>>;
}

/// Reaches command lines (stderr passed through), `ws://` and `http://` URLs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardConnector;

impl Connector for StandardConnector {
    fn connect<'a>(&'a self, spec: &'a ServerSpec) -> BoxFuture<'a, Result<Transport, String>> {
        Box::pin(async move {
            match &spec.target {
                Target::Command(line) => {
                    Transport::child_shell(line, StderrMode::Inherit).map_err(|e| e.to_string())
                }
                Target::WebSocket(url) => {
                    mcpl_rpc::transport::ws::connect(url, &[], Limits::default())
                        .await
                        .map_err(|e| e.to_string())
                }
                Target::Http(url) => {
                    mcpl_rpc::transport::http::connect(url, &[], Limits::default())
                        .map_err(|e| e.to_string())
                }
                Target::Embedded => Err("this build has no embedded server".to_owned()),
            }
        })
    }
}
