//! Streamable HTTP test harness: a local server and the sessions it opens.

use axum::Router;
use axum::http::HeaderMap;
use mcpl_rpc::transport::http;
use mcpl_rpc::{Event, Events, Peer, PeerConfig, RequestOptions, TransportKind};
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
