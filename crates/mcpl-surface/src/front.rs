//! The front: the MCP server a plain client talks to (protocol 2025-11-25 down to
//! 2024-11-05).
//!
//! It answers `initialize`, `ping`, `logging/setLevel`, `tools/list` and `tools/call`. The
//! tool list is the servers' static tools plus the four meta-tools, published once the
//! servers have been read; it changes only if a server changes a static tool's definition,
//! never because toolsets opened, closed or changed (§8.1, §8.6). Each `tools/call` runs in
//! its own task, so a slow call never blocks the next.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcpl_protocol::mcp::{
    CallToolParams, Implementation, InitializeParams, InitializeResult, ServerCapabilities,
    ToolsCapability, ToolsListResult,
};
use mcpl_protocol::mcpl::{FeatureSet, FeatureSetsUpdateParams, FeatureSetsUpdateResult};
use mcpl_protocol::methods;
use mcpl_rpc::{Event, Peer, PeerConfig, Responder, Transport, decode_params};
use serde_json::{Map, Value, json};

use crate::error::Error;
use crate::hub::{ClientSink, Hub};

/// What the front has published: the cache report's first column.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    pub(crate) first_bytes: u64,
    pub(crate) lists: u64,
    pub(crate) changes: u64,
    pub(crate) resent_bytes: u64,
    last: Option<String>,
    /// `tools/list_changed` was sent and the client has not re-listed since.
    pub(crate) told_stale: bool,
    /// The client advertised MCPL `pushEvents` in `initialize`.
    pub(crate) client_push: bool,
}

impl Published {
    /// True once the client has been given a list.
    pub(crate) fn published(&self) -> bool {
        self.last.is_some()
    }
}

/// Serves one client over `transport` until it closes.
pub(crate) async fn serve(
    hub: Arc<Hub>,
    transport: Transport,
    settle: Duration,
) -> Result<(), Error> {
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    while let Some(event) = events.recv().await {
        match event {
            Event::Request {
                request, responder, ..
            } => {
                let method = request.method.clone();
                match method.as_str() {
                    methods::INITIALIZE => initialize(&hub, &peer, &request, responder),
                    methods::FEATURE_SETS_UPDATE => {
                        feature_sets_update(&hub, &peer, &request, responder)
                    }
                    methods::PING => {
                        let _ = responder.respond(json!({}));
                    }
                    "logging/setLevel" => {
                        let _ = responder.respond(json!({}));
                    }
                    methods::TOOLS_LIST => {
                        let hub = hub.clone();
                        tokio::spawn(async move {
                            let list = tools_list(&hub, settle).await;
                            let _ = responder.respond(list);
                        });
                    }
                    methods::TOOLS_CALL => {
                        let params: CallToolParams = match decode_params(&request) {
                            Ok(p) => p,
                            Err(e) => {
                                let _ = responder.error(e);
                                continue;
                            }
                        };
                        let hub = hub.clone();
                        tokio::spawn(
                            async move { tools_call(&hub, params, responder, settle).await },
                        );
                    }
                    _ => {
                        let _ = responder.method_not_found();
                    }
                }
            }
            Event::Closed { .. } => break,
            // Notifications (initialized, cancelled) and answers to our pushes need nothing.
            _ => {}
        }
    }
    peer.close().await;
    Ok(())
}

fn initialize(
    hub: &Hub,
    peer: &Peer,
    request: &mcpl_protocol::jsonrpc::Request,
    responder: Responder,
) {
    let params: InitializeParams = match decode_params(request) {
        Ok(p) => p,
        Err(e) => {
            let _ = responder.error(e);
            return;
        }
    };
    let client_push = params
        .capabilities
        .mcpl_value()
        .and_then(|m| m.get("pushEvents"))
        .and_then(Value::as_bool)
        == Some(true);
    // Pushes go out as log messages until an MCPL client grants pushEvents (MCPL §5.3).
    hub.set_sink(ClientSink::Log(peer.clone()));
    hub.lock().published.client_push = client_push;
    let mut caps = ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            extra: Map::new(),
        }),
        logging: Some(Map::new()),
        ..ServerCapabilities::default()
    };
    // For MCPL clients: events reach them as push/event (MCPL §9).
    let mcpl = json!({"version": "0.5", "pushEvents": true,
        "featureSets": {EVENTS: {"description": "Events from the servers behind this surface", "uses": ["pushEvents"]}}});
    caps.experimental = Some(Map::from_iter([("mcpl".to_owned(), mcpl)]));
    let mut info = Implementation::new("mcpl-surface", env!("CARGO_PKG_VERSION"));
    info.title = Some("MCPL surface host".to_owned());
    let mut result = InitializeResult::answer(&params, caps, info);
    result.instructions = Some(
        "Tools that come and go (games, modes) are reached through toolsets_open, toolsets_look, toolsets_act and toolsets_close. Each result ends with what changed and any news; call toolsets_look to check for news."
            .to_owned(),
    );
    let _ = responder.respond_with(&result);
}

/// The feature set the surface's pushes use.
const EVENTS: &str = "surface.events";

/// MCPL §5.3: the client's policy; `push/event` goes to it only once `pushEvents` is
/// granted for our feature set, and back to log messages if a later policy withdraws it.
fn feature_sets_update(
    hub: &Hub,
    peer: &Peer,
    request: &mcpl_protocol::jsonrpc::Request,
    responder: Responder,
) {
    let params: FeatureSetsUpdateParams = match decode_params(request) {
        Ok(p) => p,
        Err(e) => {
            let _ = responder.error(e);
            return;
        }
    };
    if let Err(e) = params.check() {
        hub.set_sink(ClientSink::Log(peer.clone()));
        let _ = responder.invalid_params(e);
        return;
    }
    let set = FeatureSet::new(
        "Events from the servers behind this surface",
        ["pushEvents"],
    );
    let advertised = hub.lock().published.client_push;
    let granted = advertised && params.feature_set_state(EVENTS, &set).is_ok();
    hub.set_sink(if granted {
        ClientSink::Push(peer.clone())
    } else {
        ClientSink::Log(peer.clone())
    });
    let _ = responder.respond_with(&FeatureSetsUpdateResult::accepted());
}

/// Waits (bounded) until every server was read, so the first list is the lasting one.
async fn settle(hub: &Hub, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let progress = hub.progress.notified();
        if hub.settled() {
            return;
        }
        if tokio::time::timeout_at(deadline, progress).await.is_err() {
            return;
        }
    }
}

async fn tools_list(hub: &Hub, limit: Duration) -> Value {
    settle(hub, limit).await;
    let mut inner = hub.lock();
    // The host library's list: static tools plus the four meta-tools. It is rebuilt only
    // when a static definition changed, never for a toolset (§8.1).
    if inner.presenter.needs_rebuild() {
        inner.presenter.rebuild();
    }
    let tools = inner.presenter.tool_list().to_vec();
    let result = ToolsListResult::new(tools);
    let value = serde_json::to_value(&result).unwrap_or_else(|_| json!({"tools": []}));
    let text = value.to_string();
    let inner = &mut *inner;
    let p = &mut inner.published;
    p.lists += 1;
    match &p.last {
        None => {
            p.first_bytes = text.len() as u64;
            let snaps: BTreeMap<&str, &mcpl_host::controller::Snapshot> = inner
                .links
                .iter()
                .filter_map(|(n, l)| l.snapshot().map(|s| (n.as_str(), s)))
                .collect();
            inner.meter.start(&snaps);
        }
        Some(last) if *last != text => {
            p.changes += 1;
            p.resent_bytes += text.len() as u64;
        }
        Some(_) => {}
    }
    p.last = Some(text);
    p.told_stale = false;
    value
}

async fn tools_call(hub: &Arc<Hub>, params: CallToolParams, responder: Responder, limit: Duration) {
    settle(hub, limit).await;
    let args = params.arguments.unwrap_or_default();
    match crate::meta::call(hub, &params.name, args).await {
        Some(result) => {
            let _ = responder.respond_with(&result);
        }
        None => {
            let _ = responder.invalid_params(format!("unknown tool `{}`", params.name));
        }
    }
}
