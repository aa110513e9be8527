//! Links: one task per backing server that connects, runs its host controller, and
//! reconnects with backoff when the server crashes or disconnects.
//!
//! The task is the controller's thin driver: it reads the clock, feeds every frame in read
//! order to `Controller::handle_message`, sleeps until `poll_timeout`, and hands the effects
//! to the hub (under its lock, so `Send`s leave in the order they were polled). After a
//! reconnect the controller resumes with the old snapshot and re-reads `tools/list` and
//! `toolsets/list` (§5.2: the listed state is the truth; nothing is re-opened).

use std::sync::Arc;
use std::time::Duration;

use mcpl_host::ControllerConfig;
use mcpl_host::controller::Controller;
use mcpl_protocol::jsonrpc::Message;
use mcpl_protocol::mcp::{ClientCapabilities, Implementation, InitializeParams, InitializeResult};
use mcpl_protocol::mcpl::FeatureSetsUpdateParams;
use mcpl_protocol::methods;
use mcpl_rpc::{Event, Events, Peer, PeerConfig, RequestOptions};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::connector::Connector;
use crate::hub::Hub;
use crate::spec::ServerSpec;

/// Where a backing server's connection stands; shown to the agent when a call cannot go out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkStatus {
    /// Connecting for the first time, or again (`attempt` counts since the last good link).
    Connecting {
        /// Attempts since the last good connection, from 1.
        attempt: u32,
    },
    /// Connected and initialized; its controller is running.
    Up,
    /// Down; the next attempt is due after the backoff.
    Down {
        /// Failed attempts since the last good connection.
        attempt: u32,
        /// Why the last connection ended or the last attempt failed.
        error: String,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
}

impl std::fmt::Display for LinkStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkStatus::Connecting { attempt: 1 } => write!(f, "connecting"),
            LinkStatus::Connecting { attempt } => write!(f, "reconnecting (attempt {attempt})"),
            LinkStatus::Up => write!(f, "connected"),
            LinkStatus::Down {
                attempt,
                error,
                retry_in,
            } => write!(
                f,
                "disconnected ({error}); retry {} in {} ms",
                attempt + 1,
                retry_in.as_millis()
            ),
        }
    }
}

/// Link timing: how long requests wait and how the reconnect backoff grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    /// How long the handshake and each controller request may take.
    pub request_timeout: Duration,
    /// The first reconnect delay; it doubles per failed attempt.
    pub backoff_initial: Duration,
    /// The longest reconnect delay.
    pub backoff_max: Duration,
}

impl Default for LinkTiming {
    fn default() -> Self {
        LinkTiming {
            request_timeout: Duration::from_secs(30),
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

/// The clock the driver reads: tokio's, so tests with paused time stay virtual.
pub(crate) fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// A connected, initialized server.
struct Session {
    peer: Peer,
    events: Events,
    manifest: Option<Value>,
    push_granted: bool,
}

/// The MCPL host capabilities the surface advertises to each backing server.
fn host_capabilities() -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    let mcpl = json!({ "version": "0.5", "pushEvents": true, "toolHints": true });
    caps.experimental = Some(serde_json::Map::from_iter([("mcpl".to_owned(), mcpl)]));
    caps
}

/// Connects and runs the MCP/MCPL handshake: `initialize`, `notifications/initialized`, and
/// a `featureSets/update` that grants `pushEvents` when the server offers it.
async fn handshake(
    connector: &dyn Connector,
    spec: &ServerSpec,
    timing: LinkTiming,
) -> Result<Session, String> {
    let transport = connector.connect(spec).await?;
    let (peer, events) = Peer::start(transport, PeerConfig::default());
    let options = RequestOptions::timeout(timing.request_timeout);
    let info = Implementation::new("mcpl-surface", env!("CARGO_PKG_VERSION"));
    let params = InitializeParams::new(host_capabilities(), info);
    let params = serde_json::to_value(&params).map_err(|e| e.to_string())?;
    let answer = peer
        .request_value(methods::INITIALIZE, Some(params), options.clone())
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let init: InitializeResult = serde_json::from_value(answer.value)
        .map_err(|e| format!("initialize result unreadable: {e}"))?;
    peer.notify_value(methods::INITIALIZED, None)
        .map_err(|e| e.to_string())?;
    let manifest = init.capabilities.mcpl_value().cloned();
    let offers_push = manifest
        .as_ref()
        .and_then(|m| m.get("pushEvents"))
        .and_then(Value::as_bool)
        == Some(true);
    let mut push_granted = false;
    if offers_push {
        // MCPL §5.3: the policy request is the only path to the pushEvents grant.
        let policy = FeatureSetsUpdateParams::granting(["pushEvents"]);
        let policy = serde_json::to_value(&policy).map_err(|e| e.to_string())?;
        push_granted = peer
            .request_value(methods::FEATURE_SETS_UPDATE, Some(policy), options)
            .await
            .is_ok();
    }
    Ok(Session {
        peer,
        events,
        manifest,
        push_granted,
    })
}

/// Runs one backing server's link until the hub shuts down: connect, serve, back off, again.
pub(crate) async fn run(hub: Arc<Hub>, spec: ServerSpec, wake: Arc<Notify>) {
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        hub.set_status(&spec.name, LinkStatus::Connecting { attempt });
        let error = match handshake(hub.connector(), &spec, hub.timing()).await {
            Ok(session) => {
                attempt = 0;
                serve(&hub, &spec, session, &wake).await
            }
            Err(e) => e,
        };
        if hub.is_shut_down() {
            return;
        }
        let retry_in = hub.timing().backoff(attempt.max(1));
        tracing::info!(server = %spec.name, %error, ?retry_in, "backing server down");
        hub.set_status(
            &spec.name,
            LinkStatus::Down {
                attempt,
                error,
                retry_in,
            },
        );
        tokio::select! {
            () = tokio::time::sleep(retry_in) => {}
            () = hub.shut_down_signal() => return,
        }
    }
}

/// Drives one connection's controller until the connection ends; returns why it ended.
async fn serve(hub: &Arc<Hub>, spec: &ServerSpec, session: Session, wake: &Notify) -> String {
    let Session {
        peer,
        mut events,
        manifest,
        push_granted,
    } = session;
    let mut cfg = ControllerConfig::new(spec.name.clone(), hub.principal());
    cfg.manifest = manifest;
    cfg.push_events = push_granted;
    cfg.request_timeout = hub.timing().request_timeout;
    hub.attach(
        &spec.name,
        |previous| Controller::resume(cfg, now(), previous),
        peer.clone(),
        push_granted,
    );
    let reason = loop {
        let deadline = hub
            .poll_timeout(&spec.name)
            .map(tokio::time::Instant::from_std);
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = events.recv() => match event {
                None => break "connection closed".to_owned(),
                Some(Event::Closed { reason }) => {
                    break reason.unwrap_or_else(|| "connection closed".to_owned());
                }
                Some(event) => feed(hub, &spec.name, event),
            },
            () = sleep => hub.with_controller(&spec.name, |c| c.handle_timeout(now())),
            () = wake.notified() => {}
            () = hub.shut_down_signal() => break "surface shut down".to_owned(),
        }
    };
    hub.detach(&spec.name, &reason);
    peer.close().await;
    reason
}

/// Hands one frame to the controller, in read order.
fn feed(hub: &Hub, server: &str, event: Event) {
    let (seq, msg) = match event {
        Event::Request {
            seq,
            request,
            responder,
        } => {
            // The controller writes its own replies (push/event, ping).
            responder.disarm();
            (seq, Message::Request(request))
        }
        Event::Notification { seq, notification } => (seq, Message::Notification(notification)),
        Event::Response { seq, response } => (seq, Message::Response(response)),
        // Answers to the handshake's own requests, cancellations of nothing we run, frames
        // that are not messages: nothing for the controller.
        _ => return,
    };
    hub.with_controller(server, |c| c.handle_message(now(), Some(seq), msg));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let t = LinkTiming {
            request_timeout: Duration::from_secs(1),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
        };
        assert_eq!(t.backoff(1), Duration::from_millis(100));
        assert_eq!(t.backoff(2), Duration::from_millis(200));
        assert_eq!(t.backoff(4), Duration::from_millis(800));
        assert_eq!(t.backoff(5), Duration::from_millis(1000));
        assert_eq!(t.backoff(60), Duration::from_millis(1000));
    }

    #[test]
    fn status_text_names_the_state() {
        let down = LinkStatus::Down {
            attempt: 2,
            error: "connection closed".into(),
            retry_in: Duration::from_millis(400),
        };
        assert_eq!(
            down.to_string(),
            "disconnected (connection closed); retry 3 in 400 ms"
        );
        assert_eq!(
            LinkStatus::Connecting { attempt: 3 }.to_string(),
            "reconnecting (attempt 3)"
        );
    }
}
