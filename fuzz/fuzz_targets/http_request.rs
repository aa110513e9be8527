//! The Streamable HTTP request path, in process: arbitrary headers (`Origin`, `Authorization`,
//! `Mcp-Session-Id`, `Last-Event-ID`) and bodies against the server router. It never panics,
//! answers only with the statuses the transport uses, never opens a session for a foreign
//! origin, and never serves a session to credentials other than its owner's.
#![no_main]

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use mcpl_rpc::transport::http::{self, HttpServerConfig};
use mcpl_rpc::{Limits, Peer, PeerConfig};
use std::sync::OnceLock;
use tower::ServiceExt;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Splits the input at its first four 0xFF bytes: origin, token, last event id, body.
fn parts(data: &[u8]) -> [&[u8]; 4] {
    let mut out = [&data[..0]; 4];
    let mut rest = data;
    for slot in out.iter_mut().take(3) {
        match rest.iter().position(|&b| b == 0xFF) {
            Some(i) => {
                *slot = &rest[..i];
                rest = &rest[i + 1..];
            }
            None => break,
        }
    }
    out[3] = rest;
    out
}

const KNOWN: [StatusCode; 8] = [
    StatusCode::OK,
    StatusCode::ACCEPTED,
    StatusCode::BAD_REQUEST,
    StatusCode::FORBIDDEN,
    StatusCode::NOT_FOUND,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::SERVICE_UNAVAILABLE,
    StatusCode::METHOD_NOT_ALLOWED,
];

fuzz_target!(|data: &[u8]| {
    let [origin, token, last_event, body] = parts(data);
    runtime().block_on(async {
        let config = HttpServerConfig {
            limits: Limits {
                max_frame_bytes: 2048,
                ..Limits::default()
            },
            ..HttpServerConfig::default()
        };
        let (router, mut sessions) = http::router("/mcp", config);
        // Every session gets a peer that answers nothing: enough to route.
        tokio::spawn(async move {
            while let Some(session) = sessions.recv().await {
                let (_peer, _events) = Peer::start(session.transport, PeerConfig::default());
            }
        });
        let header = |b: &[u8]| String::from_utf8_lossy(b).replace(['\r', '\n', '\0'], "");
        let mut post = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            // A loopback name: past the Host check (DNS rebinding), into the request path.
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if !origin.is_empty() {
            post = post.header("origin", header(origin));
        }
        if !token.is_empty() {
            post = post.header("authorization", format!("Bearer {}", header(token)));
        }
        let Ok(post) = post.body(Body::from(body.to_vec())) else {
            return;
        };
        let Ok(response) = router.clone().oneshot(post).await;
        assert!(KNOWN.contains(&response.status()), "{}", response.status());
        let session = response.headers().get("mcp-session-id").cloned();
        if let Some(session) = session {
            // A session opened for these credentials is no one else's.
            let foreign = Request::builder()
                .method(Method::GET)
                .uri("/mcp")
                .header("host", "localhost")
                .header("mcp-session-id", session.clone())
                .header("authorization", "Bearer someone-else")
                .header("last-event-id", header(last_event))
                .body(Body::empty())
                .unwrap();
            let Ok(refused) = router.clone().oneshot(foreign).await;
            assert_ne!(refused.status(), StatusCode::OK);
        }
    });
});
