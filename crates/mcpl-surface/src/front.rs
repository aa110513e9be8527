//! The front: the MCP server one plain client talks to (protocol 2025-11-25 down to
//! 2024-11-05), over the host library's driver.
//!
//! It answers `initialize`, `ping`, `logging/setLevel`, `tools/list` and `tools/call`. The
//! tool list is the host library's: the servers' static tools plus the four meta-tools,
//! published once the servers have been read; it changes only if a server changes a static
//! tool's definition, never because toolsets opened, closed or changed (§8.1, §8.6). Every
//! call goes to the driver as this session's agent, whose window is its results: what it is
//! owed rides with its next answer, in read order. A `tools/call` is handed to the host task
//! from the connection's own task (not through the session's loop), and the host task answers
//! the client itself when the call's answer comes (no task per call, and a slow call never
//! blocks the next); only a call that must first wait for the servers to be read gets a task
//! of its own.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use mcpl_host::ServerName;
use mcpl_host::controller::PushEvent;
use mcpl_host::driver::{Agent, Answer, Asked, Host};
use mcpl_host::presenter::{
    AgentId, LinkState, META_ACT, META_CLOSE, META_LOOK, META_OPEN, Presenter, WindowItem,
    event_line,
};
use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_protocol::mcp::{
    CallToolParams, CallToolResult, Implementation, InitializeParams, InitializeResult,
    ServerCapabilities, ToolsCapability, ToolsListResult,
};
use mcpl_protocol::mcpl::{FeatureSet, FeatureSetsUpdateParams, FeatureSetsUpdateResult};
use mcpl_protocol::methods;
use mcpl_rpc::{
    Event, InlineRequests, Peer, PeerConfig, Responder, Transport, decode_params, into_params_with,
};
use serde_json::{Map, Value, json};

use crate::meter::Counters;
use crate::relay::{self, EVENTS_DESCRIPTION, EVENTS_FEATURE_SET, EventIds};

/// What every session of one surface shares.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) host: Host,
    pub(crate) counters: Arc<Mutex<Counters>>,
    /// The configured servers, for the settle wait.
    pub(crate) servers: Arc<[ServerName]>,
    /// How long the first list or call waits for every server to be read.
    pub(crate) settle: Duration,
    /// The source of the `eventId`s of the surface's own pushes.
    pub(crate) event_ids: EventIds,
}

/// How pushes reach the client besides the meta-tool results.
#[derive(Debug, Clone)]
enum Sink {
    /// As `notifications/message` (clients that show logs).
    Log(Peer),
    /// As `push/event` (the client advertised MCPL with `pushEvents` and granted it).
    Push(Peer),
}

/// One client session as it looks from the host task.
#[derive(Debug)]
struct SessionState {
    sink: Option<Sink>,
    /// The client advertised MCPL `pushEvents` in `initialize`.
    client_push: bool,
    /// The client has been given a list.
    published: bool,
    /// `tools/list_changed` was sent and the client has not re-listed since.
    told_stale: bool,
    next_push_id: i64,
    /// Where this session's push `eventId`s come from (shared by the surface's sessions).
    event_ids: EventIds,
}

/// The driver's agent for one client: its results are its window.
struct ClientAgent(Arc<Mutex<SessionState>>);

impl Agent for ClientAgent {
    fn notice(&mut self, _item: &WindowItem) -> bool {
        false
    }

    fn results_are_window(&self) -> bool {
        true
    }

    /// Pushes also go to the client as they arrive: `push/event` to an MCPL client that
    /// granted it, in the surface's own name ([`relay`](crate::relay)), and then not again
    /// as news; a log message otherwise, and the meta-tool results still tell them.
    fn pushed(&mut self, server: &ServerName, event: &PushEvent) -> bool {
        let Ok(mut s) = self.0.lock() else {
            return false;
        };
        match s.sink.clone() {
            Some(Sink::Log(peer)) => {
                let text = event_line(server, &event.params);
                let params = json!({ "level": "info", "logger": server, "data": text });
                let _ = peer.notify_value(methods::MESSAGE, Some(params));
                false
            }
            Some(Sink::Push(peer)) => {
                s.next_push_id += 1;
                let params = relay::relayed(server, &event.params, s.event_ids.next_id());
                let id = RequestId::String(format!("surface-push-{}", s.next_push_id));
                peer.send(Message::Request(Request {
                    id,
                    method: methods::PUSH_EVENT.to_owned(),
                    params: Some(params),
                    extra: Map::new(),
                }))
                .is_ok()
            }
            None => false,
        }
    }
}

/// Serves one client over `transport` until it closes, as agent `agent`.
pub(crate) async fn serve(shared: Shared, transport: Transport, agent: AgentId) {
    let state = Arc::new(Mutex::new(SessionState {
        sink: None,
        client_push: false,
        published: false,
        told_stale: false,
        next_push_id: 0,
        event_ids: shared.event_ids.clone(),
    }));
    // The agent is known to the host task before the first call can reach it.
    let _ = shared
        .host
        .add_agent(agent.clone(), ClientAgent(state.clone()));
    let _ = shared.host.observe(stale_teller(Arc::downgrade(&state)));
    let config = PeerConfig {
        inline_requests: Some(calls_inline(shared.clone(), agent.clone())),
        ..PeerConfig::default()
    };
    let (peer, mut events) = Peer::start(transport, config);
    while let Some(event) = events.recv().await {
        match event {
            Event::Request {
                request, responder, ..
            } => match request.method.as_str() {
                methods::INITIALIZE => initialize(&state, &peer, &request, responder),
                methods::FEATURE_SETS_UPDATE => {
                    feature_sets_update(&state, &peer, &request, responder)
                }
                methods::PING | "logging/setLevel" => {
                    let _ = responder.respond(json!({}));
                }
                methods::TOOLS_LIST => {
                    let (shared, state) = (shared.clone(), state.clone());
                    tokio::spawn(async move {
                        let list = tools_list(&shared, &state).await;
                        let _ = responder.respond(list);
                    });
                }
                _ => {
                    let _ = responder.method_not_found();
                }
            },
            Event::Closed { .. } => break,
            // Notifications (initialized, cancelled) and answers to our pushes need nothing.
            _ => {}
        }
    }
    let _ = shared.host.remove_agent(&agent);
    peer.close().await;
}

/// `tools/call` taken on the connection's own task and handed straight to the host task
/// ([`tools_call`]), without a trip through the session's loop; every other request goes to
/// the loop.
fn calls_inline(shared: Shared, agent: AgentId) -> InlineRequests {
    InlineRequests::new(move |request, responder| {
        if request.method != methods::TOOLS_CALL {
            return Some((request, responder));
        }
        match into_params_with(request, CallToolParams::from_value) {
            Ok(params) => tools_call(&shared, &agent, params, responder),
            Err(e) => {
                let _ = responder.error(e);
            }
        }
        None
    })
}

/// After a change: if a static definition changed (never a toolset, §8.1), tell the client
/// once, so it re-lists at a time it chooses. Does nothing once the session is gone.
fn stale_teller(state: Weak<Mutex<SessionState>>) -> impl FnMut(&Presenter) + Send + 'static {
    move |p| {
        let Some(state) = state.upgrade() else { return };
        let Ok(mut s) = state.lock() else { return };
        if s.published && !s.told_stale && p.needs_rebuild() {
            s.told_stale = true;
            if let Some(Sink::Log(peer) | Sink::Push(peer)) = &s.sink {
                let _ = peer.notify_value(methods::TOOLS_LIST_CHANGED, None);
            }
        }
    }
}

fn initialize(
    state: &Mutex<SessionState>,
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
    if let Ok(mut s) = state.lock() {
        // Pushes go out as log messages until an MCPL client grants pushEvents (MCPL §5.3).
        s.sink = Some(Sink::Log(peer.clone()));
        s.client_push = client_push;
    }
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
        "featureSets": {EVENTS_FEATURE_SET: {"description": EVENTS_DESCRIPTION, "uses": ["pushEvents"]}}});
    caps.experimental = Some(Map::from_iter([("mcpl".to_owned(), mcpl)]));
    let mut info = Implementation::new("mcpl-surface", env!("CARGO_PKG_VERSION"));
    info.title = Some("MCPL surface host".to_owned());
    let mut result = InitializeResult::answer(&params, caps, info);
    result.instructions = Some(format!(
        "Tools that come and go (games, modes), and the tools of large servers grouped into toolsets, are reached through {META_OPEN}, {META_LOOK}, {META_ACT} and {META_CLOSE}; {META_LOOK} with a query searches every toolset and tool. Each result ends with what changed and any news since your last call; call {META_LOOK} to check for news and to see each server's state."
    ));
    let _ = responder.respond_with(&result);
}

/// MCPL §5.3: the client's policy; `push/event` goes to it only once `pushEvents` is
/// granted for our feature set, and back to log messages if a later policy withdraws it.
fn feature_sets_update(
    state: &Mutex<SessionState>,
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
    let Ok(mut s) = state.lock() else { return };
    if let Err(e) = params.check() {
        s.sink = Some(Sink::Log(peer.clone()));
        let _ = responder.invalid_params(e);
        return;
    }
    let set = FeatureSet::new(EVENTS_DESCRIPTION, ["pushEvents"]);
    let granted = s.client_push && params.feature_set_state(EVENTS_FEATURE_SET, &set).is_ok();
    s.sink = Some(if granted {
        Sink::Push(peer.clone())
    } else {
        Sink::Log(peer.clone())
    });
    let _ = responder.respond_with(&FeatureSetsUpdateResult::accepted());
}

/// True once every server was read (or is down), so the first list is the lasting one and
/// a static tool is routable from the first call.
fn settled(servers: &[ServerName], p: &Presenter) -> bool {
    servers.iter().all(|s| {
        p.snapshot(s)
            .is_some_and(|snap| snap.listed() && (snap.ready() || !snap.hinted()))
            || matches!(p.link(s), Some(LinkState::Down { .. }))
    })
}

async fn settle(shared: &Shared) {
    let servers = shared.servers.clone();
    shared
        .host
        .wait_until(move |p| settled(&servers, p), shared.settle)
        .await;
}

async fn tools_list(shared: &Shared, state: &Mutex<SessionState>) -> Value {
    settle(shared).await;
    // The host library's list: static tools plus the four meta-tools. It is rebuilt only
    // when a static definition changed, never for a toolset (§8.1).
    if shared.host.needs_rebuild().await.unwrap_or(false) {
        let _ = shared.host.rebuild().await;
    }
    let (tools, list_changes) = shared
        .host
        .inspect(|p| (p.tool_list().to_vec(), p.list_changes()))
        .await
        .unwrap_or_default();
    let value =
        serde_json::to_value(ToolsListResult::new(tools)).unwrap_or_else(|_| json!({"tools": []}));
    let bytes = value.to_string().len() as u64;
    let first = shared
        .counters
        .lock()
        .map(|mut c| c.published.observe(bytes, list_changes))
        .unwrap_or(false);
    if first {
        let counters = shared.counters.clone();
        let _ = shared
            .host
            .inspect(move |p| {
                if let Ok(mut c) = counters.lock() {
                    c.meter.start(&crate::meter::snapshots(p));
                }
            })
            .await;
    }
    if let Ok(mut s) = state.lock() {
        s.published = true;
        s.told_stale = false;
    }
    value
}

/// Whether `name` is a tool this surface routes: a meta-tool, or a static tool of a server
/// by its model-facing name, listed or not yet (routing is known once a server is read).
fn routes(p: &Presenter, name: &str) -> bool {
    [META_OPEN, META_LOOK, META_ACT, META_CLOSE].contains(&name)
        || p.tool_list().iter().any(|t| t.name == name)
        || p.servers().into_iter().any(|s| {
            p.snapshot(s).is_some_and(|snap| {
                snap.tools()
                    .iter()
                    .any(|t| p.model_name(s, &t.tool.name) == name)
            })
        })
}

/// A `tools/call`. Once the servers have been read (every call after the first), one trip
/// to the host task checks that and the routing, makes the call, and answers the client from
/// inside the host task when the answer comes. A call the gate declines (servers not read
/// yet, or not a tool here) goes to [`first_call`] in a task of its own.
fn tools_call(shared: &Shared, agent: &AgentId, params: CallToolParams, responder: Responder) {
    let CallToolParams {
        name, arguments, ..
    } = params;
    let args = Value::Object(arguments.unwrap_or_default());
    let gate = {
        let (name, servers) = (name.clone(), shared.servers.clone());
        move |p: &Presenter| settled(&servers, p) && routes(p, &name)
    };
    let (later, agent_later, tool) = (shared.clone(), agent.clone(), name.clone());
    let then = move |asked: Asked| match asked {
        Asked::Answered(answer) => responder.respond(result_of(answer)).is_ok(),
        Asked::Declined(args) => {
            tokio::spawn(async move {
                first_call(&later, &agent_later, &tool, args, responder).await;
            });
            false
        }
        Asked::Stopped => {
            let _ = responder.respond_with(&stopped(&mcpl_host::Error::Closed));
            false
        }
    };
    shared.host.ask_then(agent, &name, args, gate, then);
}

/// A call the fast path declined: wait for the servers to be read, then look again.
async fn first_call(
    shared: &Shared,
    agent: &AgentId,
    name: &str,
    args: Value,
    responder: Responder,
) {
    settle(shared).await;
    let known = {
        let name = name.to_owned();
        shared.host.inspect(move |p| routes(p, &name)).await
    };
    if known != Ok(true) {
        let _ = responder.invalid_params(format!("unknown tool `{name}`"));
        return;
    }
    let result = match shared.host.ask(agent, name, args).await {
        Ok(answer) => result_of(answer),
        Err(e) => to_value(&stopped(&e)),
    };
    let _ = responder.respond(result);
}

/// The client's result when the host task stopped before answering.
fn stopped(e: &mcpl_host::Error) -> CallToolResult {
    CallToolResult::error(format!("the surface host stopped: {e}"))
}

/// The client's result: a server's own tool result keeps its content blocks (images,
/// resources) and structured content, with the news as its last text block (H83); one made
/// of structured content alone reads as its JSON text followed by the news (H85); every
/// other answer is its text.
///
/// The server's result is passed on as the value it arrived as (checked, not decoded and
/// encoded again): only its `_meta` goes and the news block is added.
fn result_of(answer: Answer) -> Value {
    let own = answer.result.filter(|v| {
        CallToolResult::is_well_formed(v)
            && v.get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| !blocks.is_empty())
    });
    match own {
        Some(Value::Object(mut r)) => {
            r.shift_remove("_meta"); // hints are the host's, not the client's
            if !answer.news.is_empty()
                && let Some(Value::Array(blocks)) = r.get_mut("content")
            {
                blocks.push(json!({"type": "text", "text": answer.news}));
            }
            Value::Object(r)
        }
        _ if answer.is_error => to_value(&CallToolResult::error(answer.text)),
        _ => to_value(&CallToolResult::text(answer.text)),
    }
}

/// A result of ours as JSON. It always encodes; were it ever not to, the client still gets a
/// well-formed tool error saying so, not an empty object.
fn to_value(result: &CallToolResult) -> Value {
    serde_json::to_value(result).unwrap_or_else(|e| {
        json!({"content": [{"type": "text",
            "text": format!("the surface host could not encode its answer: {e}")}],
            "isError": true})
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::listed;
    use mcpl_host::presenter::PresenterConfig;

    fn answer(result: Option<Value>, news: &str) -> Answer {
        Answer {
            text: "the host's own words".to_owned(),
            is_error: false,
            news: news.to_owned(),
            result,
        }
    }

    #[test]
    fn h83_a_servers_result_passes_on_without_its_meta_and_with_the_news_last() {
        let image = json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
        let server = json!({"content": [{"type": "text", "text": "board"}, image],
            "structuredContent": {"turn": 3}, "vendor": [1],
            "_meta": {"mcpl/hints": {"rev": 2}}});
        let sent = result_of(answer(Some(server), "news: it is your move"));
        assert_eq!(
            sent,
            json!({"content": [{"type": "text", "text": "board"}, image,
                               {"type": "text", "text": "news: it is your move"}],
                   "structuredContent": {"turn": 3}, "vendor": [1]})
        );
        let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["content", "structuredContent", "vendor"],
            "order kept"
        );
        // Without news nothing is added.
        let quiet = result_of(answer(
            Some(json!({"content": [{"type": "text", "text": "b"}]})),
            "",
        ));
        assert_eq!(quiet, json!({"content": [{"type": "text", "text": "b"}]}));
    }

    #[test]
    fn h85_a_result_without_blocks_or_not_a_result_reads_as_the_hosts_text() {
        let text = json!({"content": [{"type": "text", "text": "the host's own words\nnews"}]});
        for result in [
            json!({"structuredContent": {"turn": 3}}),
            json!({"content": []}),
            json!({"content": [{"type": "text", "text": 7}]}),
            json!({"content": [{"text": "no type"}]}),
            json!({"content": [{"type": "text", "text": "x"}], "isError": "yes"}),
            json!("not an object"),
        ] {
            let mut a = answer(Some(result.clone()), "news");
            a.text = "the host's own words\nnews".to_owned();
            assert_eq!(result_of(a), text, "{result}");
        }
        let mut refused = answer(None, "");
        refused.is_error = true;
        assert_eq!(
            result_of(refused),
            json!({"content": [{"type": "text", "text": "the host's own words"}], "isError": true})
        );
    }

    #[test]
    fn the_first_list_waits_for_a_hinted_servers_statement_and_never_for_a_plain_server() {
        let plain = listed("plain", false);
        let hinted = listed("hinted", true);
        let (p_snap, h_snap) = (plain.snapshot(), hinted.snapshot());
        assert!(p_snap.listed() && !p_snap.hinted() && p_snap.ready());
        assert!(h_snap.listed() && h_snap.hinted() && !h_snap.ready());
        let mut pres = Presenter::new(PresenterConfig::default());
        pres.update(p_snap, false);
        pres.update(h_snap, false);
        let (p, h) = (p_snap.server().clone(), h_snap.server().clone());
        assert!(
            settled(std::slice::from_ref(&p), &pres),
            "a plain server's list is all there is"
        );
        assert!(
            !settled(std::slice::from_ref(&h), &pres),
            "settled before the statement"
        );
        assert!(!settled(&[p, h], &pres));
    }
}
