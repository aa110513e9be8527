//! Connectors: how a [`ServerSpec`] becomes a transport.
//!
//! The surface asks its [`Connector`] for a fresh transport on every connect and reconnect.
//! [`StandardConnector`] starts programs and command lines and reaches WebSocket and
//! Streamable HTTP URLs (with the spec's headers every time); an embedding binary wraps it to
//! serve [`Target::Embedded`] in process (the CLI does this for the arcade), and tests wrap it
//! to cut connections on purpose.

use std::future::Future;
use std::pin::Pin;

use mcpl_rpc::transport::ClientOptions;
use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Limits, Transport};

use crate::spec::{ServerSpec, Target};

/// A boxed future, for object-safe async trait methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a backing server could not be reached; the `Display` is what look shows the agent
/// while the server is down.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The program could not be started.
    #[error("cannot start \"{program}\": {why}")]
    CannotStart {
        /// The program as configured.
        program: String,
        /// The operating system's reason.
        why: String,
    },
    /// The address could not be reached.
    #[error("cannot connect to {url}: {why}")]
    Unreachable {
        /// The URL as configured.
        url: String,
        /// The cause.
        why: String,
    },
    /// The CA file to trust cannot be read or holds no certificate.
    #[error("cannot use the CA file {path}: {why}")]
    BadCa {
        /// The file as configured.
        path: String,
        /// Why it cannot be used.
        why: String,
    },
    /// The connector has no way to reach this kind of target.
    #[error("{0}")]
    Unsupported(String),
    /// Opening the transport failed otherwise.
    #[error("{0}")]
    Transport(String),
}

/// Opens a transport to a backing server; called again for every reconnect.
pub trait Connector: Send + Sync + 'static {
    /// A fresh transport to `spec`, or why there is none (shown to the agent while the
    /// server is down).
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>>;
}

/// Reaches programs, command lines (stderr passed through), `ws://` and `http://` URLs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardConnector;

/// An OS error without its "(os error N)" tail.
fn os_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// Starts `program` directly, so a missing program is named (a shell would only exit).
fn start(spec: &ServerSpec, program: &str, args: &[String]) -> Result<Transport, ConnectError> {
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    for (k, v) in &spec.env {
        command.env(k, v);
    }
    if let Some(dir) = &spec.cwd {
        command.current_dir(dir);
    }
    find(spec, program).map_err(|why| ConnectError::CannotStart {
        program: program.to_owned(),
        why: why.to_string(),
    })?;
    Transport::child(command, StderrMode::Inherit, Limits::default())
        .map_err(|e| ConnectError::Transport(e.to_string()))
}

/// Why a program cannot be started; the `Display` is the reason the agent reads.
#[derive(Debug, thiserror::Error)]
enum NotFound {
    /// A path that cannot be read (the OS reason, without its error number).
    #[error("{0}")]
    Path(String),
    /// A bare name no `PATH` directory holds.
    #[error("not found on PATH")]
    NotOnPath,
}

/// Checks that `program` can be started: a path must exist, a bare name must be on `PATH`
/// (the child's own `PATH` when the spec sets one).
fn find(spec: &ServerSpec, program: &str) -> Result<(), NotFound> {
    if program.contains('/') {
        let path = match &spec.cwd {
            Some(dir) => dir.join(program),
            None => program.into(),
        };
        return std::fs::metadata(&path)
            .map(drop)
            .map_err(|e| NotFound::Path(os_text(&e)));
    }
    let path = spec
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone().into())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| dir.join(program).is_file()) {
        Ok(())
    } else {
        Err(NotFound::NotOnPath)
    }
}

/// Opens (and drops) a TCP connection to an `http(s)://` URL's host and port.
async fn reachable(url: &str) -> Result<(), ConnectError> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let addr = if has_port {
        authority.to_owned()
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        format!("{authority}:{port}")
    };
    let addr = addr.replace(['[', ']'], "");
    let target = match addr.rsplit_once(':') {
        Some((host, port)) if host.contains(':') => format!("[{host}]:{port}"),
        _ => addr,
    };
    tokio::net::TcpStream::connect(&target)
        .await
        .map(drop)
        .map_err(|e| ConnectError::Unreachable {
            url: url.to_owned(),
            why: os_text(&e),
        })
}

/// How a URL target connects: the spec's headers on every request, and its CA file (if
/// any) trusted besides the web roots.
fn client_options(spec: &ServerSpec) -> Result<ClientOptions, ConnectError> {
    let mut options = ClientOptions::new().limits(Limits::default());
    for (name, value) in &spec.headers {
        options = options.header(name, value);
    }
    match &spec.ca {
        Some(ca) => options.ca_file(ca).map_err(|e| ConnectError::BadCa {
            path: ca.display().to_string(),
            why: e.to_string(),
        }),
        None => Ok(options),
    }
}

/// A plain command line (no shell syntax) split into program and arguments.
fn plain_words(line: &str) -> Option<Vec<String>> {
    let special = |c: char| "|&;<>()$`\\\"'*?[]#~=%{}!".contains(c);
    (!line.chars().any(special)).then(|| line.split_whitespace().map(str::to_owned).collect())
}

impl Connector for StandardConnector {
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
        Box::pin(async move {
            let options = || client_options(spec);
            match &spec.target {
                Target::Exec { program, args } => start(spec, program, args),
                Target::Command(line) => match plain_words(line).as_deref() {
                    Some([program, args @ ..]) => start(spec, program, args),
                    _ => Transport::child_shell(line, StderrMode::Inherit)
                        .map_err(|e| ConnectError::Transport(e.to_string())),
                },
                Target::WebSocket(url) => mcpl_rpc::transport::ws::connect_with(url, &options()?)
                    .await
                    .map_err(|e| ConnectError::Unreachable {
                        url: url.clone(),
                        why: e.to_string(),
                    }),
                Target::Http(url) => {
                    // Streamable HTTP connects lazily; reach the address first, so a dead
                    // server is named as unreachable, with the cause, not as a server error.
                    reachable(url).await?;
                    mcpl_rpc::transport::http::connect_with(url, &options()?).map_err(|e| {
                        ConnectError::Unreachable {
                            url: url.clone(),
                            why: e.to_string(),
                        }
                    })
                }
                Target::Embedded => Err(ConnectError::Unsupported(
                    "this build has no embedded server".to_owned(),
                )),
            }
        })
    }
}
