//! What a suite runs against: how to reach a server under test, or how to start a host under
//! test, and the settings of a run.

use mcpl_rpc::Transport;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A boxed future, for the connector traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a [`Connector`] could not open a connection or a [`HostLauncher`] could not start its
/// host. The `Display` is the reason as the report shows it (an I/O error, a process that
/// would not start, a refused handshake).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unreachable {
    /// Why, in words for the report.
    pub reason: String,
}

impl Unreachable {
    /// An `Unreachable` for any error or message.
    pub fn new(reason: impl fmt::Display) -> Unreachable {
        Unreachable {
            reason: reason.to_string(),
        }
    }
}

/// Opens connections to a server under test from code: for tests and for embedding the suite
/// in another program (a server SDK's own test suite, for example).
pub trait Connector: Send + Sync {
    /// Opens a new connection to the server; `Err` says why it could not.
    fn connect(&self) -> BoxFuture<'_, Result<Transport, Unreachable>>;
    /// Whether two connections opened by this connector act for the same principal (§5.6).
    /// Vectors 9, 14 and 32 need it and are not applicable without it (counted apart).
    fn shares_principal(&self) -> bool;
    /// How the target is named in the report.
    fn describe(&self) -> String;
}

/// The server under test.
#[derive(Clone)]
pub enum ServerTarget {
    /// A command line; each connection starts a new process and speaks MCP stdio with it.
    /// Connections never share a principal.
    Command(Vec<String>),
    /// A running server at a `ws://` URL. With a `token`, every connection sends
    /// `Authorization: Bearer TOKEN`, and the suite takes them as one principal.
    Url {
        /// The URL.
        url: String,
        /// A credential that makes connections one principal, if the server has one.
        token: Option<String>,
        /// Other headers sent on every connection (`--header NAME=VALUE`).
        headers: Vec<(String, String)>,
    },
    /// Connections opened by code.
    Connector(Arc<dyn Connector>),
}

impl fmt::Debug for ServerTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl ServerTarget {
    /// How the target is named in the report.
    pub fn describe(&self) -> String {
        match self {
            ServerTarget::Command(cmd) => cmd.join(" "),
            ServerTarget::Url { url, .. } => url.clone(),
            ServerTarget::Connector(c) => c.describe(),
        }
    }

    /// Whether two connections act for one principal.
    pub fn shares_principal(&self) -> bool {
        match self {
            ServerTarget::Command(_) => false,
            ServerTarget::Url { token, .. } => token.is_some(),
            ServerTarget::Connector(c) => c.shares_principal(),
        }
    }
}

/// Starts a host under test from code, for tests and embedding: given the URL of the suite's
/// scripted server, it starts the host and returns the agent's side of the host (MCP over a
/// stdio-like transport).
pub trait HostLauncher: Send + Sync {
    /// Starts a host that connects to `server_url`.
    fn launch(&self, server_url: String) -> BoxFuture<'_, Result<Transport, Unreachable>>;
    /// How the target is named in the report.
    fn describe(&self) -> String;
}

/// The host under test.
#[derive(Clone)]
pub enum HostTarget {
    /// A command line. `{url}` in any argument is replaced by the scripted server's URL; the
    /// URL is also in the environment as `MCPL_CONFORMANCE_URL`. The process speaks MCP on its
    /// stdio as a server to the agent (the suite), as a surface host does.
    Command(Vec<String>),
    /// A host started by code.
    Launcher(Arc<dyn HostLauncher>),
}

impl fmt::Debug for HostTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl HostTarget {
    /// How the target is named in the report.
    pub fn describe(&self) -> String {
        match self {
            HostTarget::Command(cmd) => cmd.join(" "),
            HostTarget::Launcher(l) => l.describe(),
        }
    }
}

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a request may take before the check fails (default 10 s).
    pub timeout: Duration,
    /// How long to wait for a message the rule says must come (default 3 s).
    pub wait: Duration,
    /// How long to watch for messages the rule says must not come (default 300 ms). A longer
    /// window catches slower misbehaviour; the default keeps a run short.
    pub quiet: Duration,
    /// Run only the checks with these ids; empty runs all.
    pub only: Vec<String>,
    /// The vector file whose steps the server suite runs; `None` for the one shipped with
    /// the suite (`conformance/vectors.json`).
    pub vectors: Option<Arc<crate::data::VectorFile>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
            wait: Duration::from_secs(3),
            quiet: Duration::from_millis(300),
            only: Vec::new(),
            vectors: None,
        }
    }
}

impl Options {
    /// Whether the check `id` is selected.
    pub fn selects(&self, id: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == id)
    }
}
