//! Links: one task per backing server that connects, hands the connection to the host
//! library's driver, and reconnects with backoff when the server crashes or disconnects.
//!
//! The driver keeps the server's picture across connections and resumes from it, so after a
//! reconnect it re-reads `tools/list` and `toolsets/list` (§5.2: the listed state is the
//! truth; nothing is re-opened). The task reports each state to the driver
//! ([`mcpl_host::driver::Host::set_link`]), where look and refusals show it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpl_host::ControllerConfig;
use mcpl_host::ServerName;
use mcpl_host::driver::Host;
use mcpl_host::presenter::LinkState;
use mcpl_protocol::mcp::{ClientCapabilities, Implementation, InitializeParams, InitializeResult};
use mcpl_protocol::methods;
use mcpl_rpc::{Events, Peer, PeerConfig, RequestOptions};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::connector::{ConnectError, Connector};
use crate::spec::{ServerSpec, Target};

/// Where a backing server's connection stands.
pub type LinkStatus = LinkState;

/// Link timing: how long requests wait and how the reconnect backoff grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// How long the handshake and each `toolsets/*` or list request may take; an open or
    /// close that takes longer is told as unconfirmed (its late result still applies).
    pub request_timeout: Duration,
    /// How long a tool call may take before it is told as unconfirmed.
    pub call_timeout: Duration,
    /// The first reconnect delay; it doubles per failed attempt.
    pub backoff_initial: Duration,
    /// The longest reconnect delay.
    pub backoff_max: Duration,
}

impl Default for LinkTiming {
    fn default() -> Self {
        LinkTiming {
            request_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(120),
            backoff_initial: Duration::from_millis(200),
            backoff_max: Duration::from_secs(10),
        }
    }
}

impl LinkTiming {
    /// The wait before attempt `attempt + 1`, after `attempt` failures (from 1).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.backoff_initial
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// One link's state as the surface reports it: its status and how often it connected.
#[derive(Debug, Clone)]
pub(crate) struct LinkInfo {
    pub(crate) status: LinkStatus,
    pub(crate) connects: u64,
}

/// Every link's state, by server name.
pub(crate) type Links = Arc<Mutex<std::collections::BTreeMap<ServerName, LinkInfo>>>;

/// What a link task needs.
pub(crate) struct LinkContext {
    pub(crate) host: Host,
    pub(crate) connector: Arc<dyn Connector>,
    pub(crate) timing: LinkTiming,
    pub(crate) principal: String,
    pub(crate) static_limit: usize,
    pub(crate) links: Links,
    pub(crate) shut: watch::Receiver<bool>,
}

/// A connected, initialized server.
struct Session {
    peer: Peer,
    events: Events,
    manifest: Option<Value>,
}

/// The MCPL host capabilities the surface advertises to each backing server.
fn host_capabilities() -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    let mcpl = json!({ "version": "0.5", "pushEvents": true, "toolHints": true });
    caps.experimental = Some(serde_json::Map::from_iter([("mcpl".to_owned(), mcpl)]));
    caps
}

/// Why a connect attempt failed; the `Display` is what look shows the agent while the
/// server is down.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    /// The connector could not open a transport.
    #[error("{0}")]
    Connect(#[from] ConnectError),
    /// The `initialize` params could not be written.
    #[error("{0}")]
    Params(serde_json::Error),
    /// A child process ended before it answered `initialize`.
    #[error("the process ended before answering `initialize`")]
    EndedBeforeInitialize,
    /// `initialize` failed.
    #[error("initialize failed: {0}")]
    Initialize(mcpl_rpc::RpcError),
    /// The `initialize` result could not be read.
    #[error("initialize result unreadable: {0}")]
    Unreadable(serde_json::Error),
    /// `notifications/initialized` could not be sent.
    #[error("{0}")]
    Initialized(mcpl_rpc::RpcError),
}

/// Connects and runs the MCP handshake: `initialize` and `notifications/initialized`.
async fn handshake(
    connector: &dyn Connector,
    spec: &ServerSpec,
    timing: LinkTiming,
) -> Result<Session, HandshakeError> {
    let transport = connector.connect(spec).await?;
    let (peer, events) = Peer::start(transport, PeerConfig::default());
    let options = RequestOptions::timeout(timing.request_timeout);
    let info = Implementation::new("mcpl-surface", env!("CARGO_PKG_VERSION"));
    let params = InitializeParams::new(host_capabilities(), info);
    let params = serde_json::to_value(&params).map_err(HandshakeError::Params)?;
    let answer = match peer
        .request_value(methods::INITIALIZE, Some(params), options)
        .await
    {
        Ok(a) => a,
        Err(e) => {
            peer.close().await;
            let closed = matches!(e, mcpl_rpc::RpcError::Closed { .. })
                || e.to_string().contains("connection closed");
            return Err(match &spec.target {
                Target::Command(_) | Target::Exec { .. } if closed => {
                    HandshakeError::EndedBeforeInitialize
                }
                _ => HandshakeError::Initialize(e),
            });
        }
    };
    let init: InitializeResult =
        serde_json::from_value(answer.value).map_err(HandshakeError::Unreadable)?;
    peer.notify_value(methods::INITIALIZED, None)
        .map_err(HandshakeError::Initialized)?;
    let manifest = init.capabilities.mcpl_value().cloned();
    Ok(Session {
        peer,
        events,
        manifest,
    })
}

impl LinkContext {
    fn set(&self, server: &ServerName, status: LinkStatus, connected: bool) {
        if let Ok(mut links) = self.links.lock() {
            let info = links.entry(server.clone()).or_insert(LinkInfo {
                status: status.clone(),
                connects: 0,
            });
            info.status = status.clone();
            info.connects += u64::from(connected);
        }
        let _ = self.host.set_link(server, status);
    }

    /// Resolves once the surface shuts down.
    fn shut_down(&self) -> impl std::future::Future<Output = ()> + 'static {
        let mut shut = self.shut.clone();
        async move {
            while !*shut.borrow_and_update() {
                if shut.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Runs one backing server's link until the surface shuts down: connect, serve, back off,
/// again.
pub(crate) async fn run(cx: LinkContext, spec: ServerSpec) {
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        cx.set(&spec.name, LinkStatus::Connecting { attempt }, false);
        let connected = tokio::select! {
            r = handshake(&*cx.connector, &spec, cx.timing) => r,
            () = cx.shut_down() => return,
        };
        let error = match connected {
            Ok(session) => {
                let peer = session.peer.clone();
                let mut cfg = ControllerConfig::new(spec.name.clone(), cx.principal.clone());
                cfg.manifest = session.manifest;
                cfg.request_timeout = cx.timing.request_timeout;
                cfg.call_timeout = Some(cx.timing.call_timeout);
                cfg.grouping = Some(mcpl_host::Grouping {
                    static_limit: cx.static_limit,
                    ..spec.grouping.clone()
                });
                if matches!(spec.target, Target::Http(_)) {
                    // Responses and SSE streams are not mutually ordered: hold early revs.
                    cfg.transport = mcpl_host::Transport::StreamableHttp;
                }
                match cx.host.add_server(cfg, session.peer, session.events).await {
                    Ok(conn) => {
                        attempt = 0;
                        cx.set(&spec.name, LinkStatus::Up, true);
                        tokio::select! {
                            reason = conn.closed() => reason,
                            () = cx.shut_down() => {
                                peer.close().await;
                                return;
                            }
                        }
                    }
                    Err(e) => return tracing::warn!(server = %spec.name, %e, "host stopped"),
                }
            }
            Err(e) => e.to_string(),
        };
        let retry_in = cx.timing.backoff(attempt.max(1));
        tracing::info!(server = %spec.name, %error, ?retry_in, "backing server down");
        let status = LinkStatus::Down {
            attempt: attempt.max(1),
            error,
            retry_in,
        };
        cx.set(&spec.name, status, false);
        tokio::select! {
            () = tokio::time::sleep(retry_in) => {}
            () = cx.shut_down() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connector::{BoxFuture, ConnectError, Connector};
    use crate::spec::{ServerSpec, Target};
    use mcpl_rpc::Transport;

    /// Hands out an in-memory connection whose far end `.0` takes: it may drop it, as a
    /// process that exited, or serve it.
    struct FarEnd(fn(Transport));

    impl Connector for FarEnd {
        fn connect<'a>(
            &'a self,
            _spec: &'a ServerSpec,
        ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
            let take = self.0;
            Box::pin(async move {
                let (near, far) = Transport::memory_pair();
                take(far);
                Ok(near)
            })
        }
    }

    /// Short enough timings for a test.
    fn quick_timing() -> LinkTiming {
        LinkTiming {
            request_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(5),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
        }
    }

    /// A server that refuses every request, `initialize` included, with an error.
    fn refuse_everything(far: Transport) {
        let (peer, mut events) = mcpl_rpc::Peer::start(far, Default::default());
        tokio::spawn(async move {
            let _keep_open = peer;
            while let Some(event) = events.recv().await {
                if let mcpl_rpc::Event::Request { responder, .. } = event {
                    let _ = responder.method_not_found();
                }
            }
        });
    }

    #[tokio::test]
    async fn a_program_that_refuses_initialize_is_named_by_its_error_not_as_ended() {
        let timing = quick_timing();
        let exec = ServerSpec::new(
            ServerName::parse("refuses").expect("a name"),
            Target::Exec {
                program: "refuses".into(),
                args: vec![],
            },
        );
        let err = handshake(&FarEnd(refuse_everything), &exec, timing)
            .await
            .err();
        assert!(
            matches!(err, Some(HandshakeError::Initialize(_))),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_program_that_ends_before_initialize_is_named_so_and_a_url_is_not() {
        let timing = quick_timing();
        let name = || ServerName::parse("gone").expect("a name");
        let exec = ServerSpec::new(
            name(),
            Target::Exec {
                program: "gone".into(),
                args: vec![],
            },
        );
        let err = handshake(&FarEnd(drop), &exec, timing).await.err();
        assert!(
            matches!(err, Some(HandshakeError::EndedBeforeInitialize)),
            "{err:?}"
        );
        let url = ServerSpec::new(name(), Target::WebSocket("ws://127.0.0.1:9/".into()));
        let err = handshake(&FarEnd(drop), &url, timing).await.err();
        assert!(
            matches!(err, Some(HandshakeError::Initialize(_))),
            "{err:?}"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let t = LinkTiming {
            request_timeout: Duration::from_secs(1),
            call_timeout: Duration::from_secs(1),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
        };
        assert_eq!(t.backoff(1), Duration::from_millis(100));
        assert_eq!(t.backoff(2), Duration::from_millis(200));
        assert_eq!(t.backoff(4), Duration::from_millis(800));
        assert_eq!(t.backoff(5), Duration::from_millis(1000));
        assert_eq!(t.backoff(60), Duration::from_millis(1000));
    }
}
