//! Streamable HTTP test harness: a local server and the sessions it opens.

use axum::Router;
use axum::http::HeaderMap;
use mcpl_rpc::transport::http;
use mcpl_rpc::{Event, Events, Peer, PeerConfig, RequestOptions, RpcError, TransportKind};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// The MCP protocol version the tests speak.
pub const PROTOCOL: &str = "2025-11-25";

/// A request that waits at most 10 s.
pub fn opts() -> RequestOptions {
    RequestOptions::timeout(Duration::from_secs(10))
}

/// Serves `router` on a free local port; returns the endpoint URL (`http://.../mcp`).
pub async fn serve(router: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(http::serve(listener, router));
    url
}

/// A server session as the test sees it.
pub struct ServerSide {
    /// The session's peer.
    pub peer: Peer,
    /// The headers of the request that opened it.
    pub headers: HeaderMap,
    /// Every event the session read that `app` did not handle.
    pub seen: mpsc::UnboundedReceiver<Event>,
}

/// Starts a peer on every new session, with `app` answering its events; yields the sessions.
pub fn run_sessions(
    mut sessions: mpsc::Receiver<http::HttpSession>,
    app: fn(Peer, Events) -> mpsc::UnboundedReceiver<Event>,
) -> mpsc::UnboundedReceiver<ServerSide> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(session) = sessions.recv().await {
            assert_eq!(session.transport.kind(), TransportKind::StreamableHttp);
            let (peer, events) = Peer::start(session.transport, PeerConfig::default());
            let seen = app(peer.clone(), events);
            let _ = tx.send(ServerSide {
                peer,
                headers: session.headers,
                seen,
            });
        }
    });
    rx
}

/// An MCP-ish server application: answers `initialize`, `ping`, `echo` (its params back) and
/// `test/race` (a notification on the request's own stream, then one on the GET stream, then
/// the answer), any other request with -32601; forwards every other event.
pub fn answer(peer: Peer, mut events: Events) -> mpsc::UnboundedReceiver<Event> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let Event::Request {
                request, responder, ..
            } = event
            else {
                let _ = tx.send(event);
                continue;
            };
            let _ = match request.method.as_str() {
                "initialize" => responder.respond(json!({
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "serverInfo": {"name": "test", "version": "0"}
                })),
                "ping" => responder.respond(json!({})),
                "echo" => responder.respond(request.params.clone().unwrap_or(Value::Null)),
                "test/race" => {
                    // Written first, on this POST's SSE stream ...
                    responder.notify("test/a", None).unwrap();
                    // ... written second, on the GET stream.
                    peer.notify_value("test/b", None).unwrap();
                    responder.respond(json!({"done": true}))
                }
                _ => responder.method_not_found(),
            };
        }
    });
    rx
}

/// The client's side of the MCP handshake: `initialize` (its answer must name [`PROTOCOL`]),
/// then `notifications/initialized`.
pub async fn initialize(client: &Peer) -> Result<(), RpcError> {
    let init = client
        .request_value(
            "initialize",
            Some(json!({"protocolVersion": PROTOCOL, "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}})),
            opts(),
        )
        .await?;
    assert_eq!(init.value["protocolVersion"], PROTOCOL);
    client.notify_value("notifications/initialized", None)?;
    Ok(())
}
