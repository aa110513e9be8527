//! Transport hardening: sessions bound to the credentials that opened them, `Origin` checks,
//! session limits, idle expiry with the client's re-initialize, resumable GET streams, bounded
//! outbound queues, and TLS (`https://`, `wss://`) with certificates made here.

use axum::http::StatusCode;
use mcpl_rpc::transport::http::{self, HttpServerConfig};
use mcpl_rpc::transport::origin::AllowedOrigins;
use mcpl_rpc::transport::tls::{ClientTls, ServerTls};
use mcpl_rpc::transport::ws;
use mcpl_rpc::{ClientOptions, Event, Events, Limits, Peer, PeerConfig, Transport, TransportKind};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

mod common;
use common::pki::test_pki;
use common::raw_http::Raw;
use common::streamable::{ServerSide, answer, initialize, opts, serve};

/// Runs [`answer`] on every session.
fn run_sessions(
    sessions: mpsc::Receiver<http::HttpSession>,
) -> mpsc::UnboundedReceiver<ServerSide> {
    common::streamable::run_sessions(sessions, answer)
}

const ECHO: &str = r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"x":1}}"#;

#[tokio::test]
async fn a_session_answers_only_the_credentials_that_opened_it() {
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let mut servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    let ada = [("authorization", "Bearer ada-token")];
    let session = raw.open(&ada).await;
    let mut server = servers.recv().await.unwrap();

    // Bob's valid credentials, or none, naming ada's session: 404, as for a session that does
    // not exist, and nothing reaches the session.
    for headers in [
        vec![
            ("authorization", "Bearer bob-token"),
            ("mcp-session-id", session.as_str()),
        ],
        vec![("mcp-session-id", session.as_str())],
    ] {
        let response = raw.post(&headers, ECHO).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            response.text().await.unwrap(),
            format!("unknown session `{session}`")
        );
        assert_eq!(raw.get(&headers).await.status(), StatusCode::NOT_FOUND);
        let deleted = raw.delete(&headers).await;
        assert_eq!(deleted.status(), StatusCode::NOT_FOUND);
    }
    let nothing = tokio::time::timeout(Duration::from_millis(100), server.seen.recv()).await;
    assert!(nothing.is_err(), "the session heard {nothing:?}");
    assert!(!server.peer.is_closed());

    // Ada's own requests go on.
    let response = raw
        .post(&[ada[0], ("mcp-session-id", session.as_str())], ECHO)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains(r#""result":{"x":1}"#)
    );
}

#[tokio::test]
async fn the_owner_hook_binds_sessions_to_principals_not_to_tokens() {
    let config = HttpServerConfig {
        // Two tokens of one principal, as a token map may have.
        owner: Some(std::sync::Arc::new(
            |headers: &axum::http::HeaderMap| match headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
            {
                Some("Bearer ada-1" | "Bearer ada-2") => "ada".to_owned(),
                other => format!("other:{other:?}"),
            },
        )),
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let _servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    let session = raw.open(&[("authorization", "Bearer ada-1")]).await;
    let same = [
        ("authorization", "Bearer ada-2"),
        ("mcp-session-id", session.as_str()),
    ];
    assert_eq!(raw.post(&same, ECHO).await.status(), StatusCode::OK);
    let bob = [
        ("authorization", "Bearer bob"),
        ("mcp-session-id", session.as_str()),
    ];
    assert_eq!(raw.post(&bob, ECHO).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_foreign_origin_gets_403_and_loopback_or_none_passes() {
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let _servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let response = raw.post(&[("origin", "https://evil.example")], init).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        response.text().await.unwrap(),
        "origin `https://evil.example` is not allowed"
    );
    let session = raw.open(&[("origin", "http://localhost:6274")]).await;
    let _ = raw.open(&[]).await;
    let foreign = [
        ("origin", "http://evil.example"),
        ("mcp-session-id", session.as_str()),
    ];
    assert_eq!(raw.get(&foreign).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        raw.post(&foreign, ECHO).await.status(),
        StatusCode::FORBIDDEN
    );

    // An operator may allow more.
    let config = HttpServerConfig {
        origins: AllowedOrigins::default().allow("https://app.example"),
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let _servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    raw.open(&[("origin", "https://app.example")]).await;
}

#[tokio::test]
async fn session_limits_refuse_new_sessions_and_keep_the_open_ones() {
    let config = HttpServerConfig {
        max_sessions: 2,
        max_sessions_per_owner: 1,
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let _servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    let ada = [("authorization", "Bearer ada")];
    let first = raw.open(&ada).await;
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#;
    let refused = raw.post(&ada, init).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let reply: Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    assert_eq!(reply["id"], 7);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 per principal"),
        "{reply}"
    );
    raw.open(&[("authorization", "Bearer bob")]).await;
    let refused = raw.post(&[("authorization", "Bearer cy")], init).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let reply: Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit is 2"),
        "{reply}"
    );
    // The open session lost nothing.
    let response = raw
        .post(&[ada[0], ("mcp-session-id", first.as_str())], ECHO)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn an_idle_session_expires_and_the_client_starts_a_new_one() {
    let config = HttpServerConfig {
        idle_timeout: Some(Duration::from_millis(200)),
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let mut servers = run_sessions(sessions);
    let url = serve(router).await;
    let raw = Raw::new(&url);

    // Raw: the expired session answers 404.
    let session = raw.open(&[]).await;
    let mut first = servers.recv().await.unwrap();
    let reason = loop {
        match first.seen.recv().await {
            Some(Event::Closed { reason }) => break reason,
            Some(_) => continue,
            None => panic!("no close"),
        }
    };
    assert!(reason.unwrap().contains("expired"));
    let response = raw
        .post(&[("mcp-session-id", session.as_str())], ECHO)
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // The mcpl-rpc client: a GET stream keeps its session alive; without one it expires,
    // and the next request re-initializes and succeeds.
    let transport = http::connect(&url, &[], Limits::default()).unwrap();
    let (client, _events) = Peer::start(transport, PeerConfig::default());
    initialize(&client).await.unwrap();
    let mut second = servers.recv().await.unwrap();
    let echo = client
        .request_value("echo", Some(json!({"n": 1})), opts())
        .await;
    assert_eq!(echo.unwrap().value, json!({"n": 1}));
    // End the session from the server side, as an expiry or restart does.
    second.peer.close().await;
    while second.seen.recv().await.is_some() {}
    let echo = client
        .request_value("echo", Some(json!({"n": 2})), opts())
        .await
        .unwrap();
    assert_eq!(echo.value, json!({"n": 2}));
    let mut third = servers.recv().await.unwrap();
    // The new session heard `notifications/initialized` again.
    let Some(Event::Notification { notification, .. }) = third.seen.recv().await else {
        panic!("no initialized on the new session")
    };
    assert_eq!(notification.method, "notifications/initialized");
}

/// Reads SSE events from a GET response until `n` have come; returns (id, n-value) pairs.
async fn read_events(response: &mut reqwest::Response, n: usize) -> Vec<(u64, u64)> {
    let mut text = String::new();
    let mut events = Vec::new();
    while events.len() < n {
        let chunk = response.chunk().await.unwrap().expect("more events");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            let id = event
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .expect("an event id")
                .parse()
                .unwrap();
            let data = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            let value: Value = serde_json::from_str(data).unwrap();
            events.push((id, value["params"]["n"].as_u64().unwrap()));
        }
    }
    events
}

#[tokio::test]
async fn a_stream_cut_mid_push_resumes_with_last_event_id_losing_and_repeating_nothing() {
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let mut servers = run_sessions(sessions);
    let raw = Raw::new(&serve(router).await);
    let session = raw.open(&[]).await;
    let server = servers.recv().await.unwrap();
    let named = [("mcp-session-id", session.as_str())];

    let mut stream = raw.get(&named).await;
    for n in 1..=5 {
        server
            .peer
            .notify_value("push", Some(json!({ "n": n })))
            .unwrap();
    }
    let first = read_events(&mut stream, 2).await;
    assert_eq!(first.iter().map(|e| e.1).collect::<Vec<_>>(), [1, 2]);
    // The connection is cut mid-push: events 3.. were written or queued, not read.
    drop(stream);
    for n in 6..=10 {
        server
            .peer
            .notify_value("push", Some(json!({ "n": n })))
            .unwrap();
    }
    let last = first.last().unwrap().0.to_string();
    let mut resumed = raw.get(&[named[0], ("last-event-id", last.as_str())]).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let rest = read_events(&mut resumed, 8).await;
    assert_eq!(
        rest.iter().map(|e| e.1).collect::<Vec<_>>(),
        (3..=10).collect::<Vec<_>>()
    );
    let ids: Vec<u64> = first.iter().chain(&rest).map(|e| e.0).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    // A Last-Event-ID that is not ours is refused, and the session goes on.
    let bad = raw.get(&[named[0], ("last-event-id", "zzz")]).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

/// A TCP relay to `target` whose connections the test can cut at once.
async fn cutting_proxy(
    target: std::net::SocketAddr,
) -> (std::net::SocketAddr, mpsc::UnboundedSender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (cut_tx, mut cut_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let mut live = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (mut inbound, _) = accepted.unwrap();
                    live.spawn(async move {
                        let mut outbound = tokio::net::TcpStream::connect(target).await.unwrap();
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    });
                }
                cut = cut_rx.recv() => match cut {
                    Some(()) => live.abort_all(),
                    None => return,
                },
            }
        }
    });
    (addr, cut_tx)
}

/// The `n` of the next `push` notification.
async fn next_push(events: &mut Events) -> u64 {
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
            Ok(Some(Event::Notification { notification, .. })) if notification.method == "push" => {
                return notification.params.unwrap()["n"].as_u64().unwrap();
            }
            Ok(Some(_)) => {}
            other => panic!("no push: {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_client_resumes_a_cut_stream_and_gets_every_push_once() {
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let mut servers = run_sessions(sessions);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = listener.local_addr().unwrap();
    tokio::spawn(http::serve(listener, router));
    let (proxy, cut) = cutting_proxy(target).await;
    let url = format!("http://{proxy}/mcp");
    let transport = http::connect(&url, &[], Limits::default()).unwrap();
    let (client, mut events) = Peer::start(transport, PeerConfig::default());
    initialize(&client).await.unwrap();
    let server = servers.recv().await.unwrap();
    let mut got = Vec::new();
    for n in 0..5 {
        server
            .peer
            .notify_value("push", Some(json!({ "n": n })))
            .unwrap();
    }
    for _ in 0..5 {
        got.push(next_push(&mut events).await);
    }
    // Cut every connection in the middle of a burst of pushes.
    for n in 5..20 {
        server
            .peer
            .notify_value("push", Some(json!({ "n": n })))
            .unwrap();
        if n == 8 {
            cut.send(()).unwrap();
        }
    }
    while got.len() < 20 {
        got.push(next_push(&mut events).await);
    }
    assert_eq!(got, (0..20).collect::<Vec<_>>(), "lost or repeated");
    let extra = tokio::time::timeout(Duration::from_millis(300), events.recv()).await;
    assert!(
        !matches!(extra, Ok(Some(Event::Notification { .. }))),
        "repeated: {extra:?}"
    );
}

#[tokio::test]
async fn a_consumer_too_slow_for_the_outbound_queue_is_disconnected_and_others_go_on() {
    let (slow, _ends) = Transport::from_channels_with(TransportKind::Stdio, Limits::default(), 4);
    let (slow_peer, mut slow_events) = Peer::start(slow, PeerConfig::default());
    let (a, b) = Transport::memory_pair();
    let (other, _other_events) = Peer::start(a, PeerConfig::default());
    let (echo, echo_events) = Peer::start(b, PeerConfig::default());
    let _answers = answer(echo, echo_events);
    for n in 0..10 {
        let _ = slow_peer.notify_value("n", Some(json!({ "n": n })));
    }
    let reason = loop {
        match slow_events.recv().await {
            Some(Event::Closed { reason }) => break reason.unwrap(),
            Some(_) => continue,
            None => panic!("no close"),
        }
    };
    assert!(reason.contains("reads too slowly"), "{reason}");
    let pong = other
        .request_value("echo", Some(json!({"n": 1})), opts())
        .await;
    assert_eq!(pong.unwrap().value, json!({"n": 1}));
}

#[tokio::test]
async fn https_end_to_end_with_the_ca_and_refused_without_it() {
    let (ca, cert, key) = test_pki();
    let tls = ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let _servers = run_sessions(sessions);
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let listener = tls.listener(tcp, Duration::from_secs(10));
    tokio::spawn(http::serve(listener, router));
    let url = format!("https://localhost:{port}/mcp");

    let trusted = ClientOptions::new().tls(ClientTls::with_ca_pem(ca.as_bytes()).unwrap());
    let (client, _events) = Peer::start(
        http::connect_with(&url, &trusted).unwrap(),
        PeerConfig::default(),
    );
    initialize(&client).await.unwrap();
    let echo = client
        .request_value("echo", Some(json!({"over": "tls"})), opts())
        .await;
    assert_eq!(echo.unwrap().value, json!({"over": "tls"}));

    let (untrusting, _events) = Peer::start(
        http::connect_with(&url, &ClientOptions::new()).unwrap(),
        PeerConfig::default(),
    );
    let err = initialize(&untrusting).await.unwrap_err().to_string();
    assert!(err.contains("certificate is not trusted"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(err.contains("--ca FILE"), "{err}");
}

#[tokio::test]
async fn wss_end_to_end_with_the_ca_and_refused_without_it() {
    let (ca, cert, key) = test_pki();
    let tls = ServerTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let tls = tls.clone();
            tokio::spawn(async move {
                let Ok(stream) = tls.accept(tcp, Duration::from_secs(10)).await else {
                    return;
                };
                let (transport, _) = ws::accept_with(stream, Limits::default(), |_| Ok(()))
                    .await
                    .unwrap();
                let (peer, events) = Peer::start(transport, PeerConfig::default());
                let mut seen = answer(peer, events);
                while seen.recv().await.is_some() {}
            });
        }
    });
    let url = format!("wss://localhost:{port}/");
    let trusted = ClientOptions::new().tls(ClientTls::with_ca_pem(ca.as_bytes()).unwrap());
    let transport = ws::connect_with(&url, &trusted).await.unwrap();
    assert_eq!(transport.kind(), TransportKind::WebSocket);
    let (client, _events) = Peer::start(transport, PeerConfig::default());
    let echo = client
        .request_value("echo", Some(json!({"over": "wss"})), opts())
        .await;
    assert_eq!(echo.unwrap().value, json!({"over": "wss"}));

    let err = ws::connect_with(&url, &ClientOptions::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("certificate is not trusted"), "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
}

#[tokio::test]
async fn a_websocket_from_a_foreign_origin_is_refused_with_403() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let allowed = AllowedOrigins::default();
                let accepted = ws::accept_with(tcp, Limits::default(), |hs: &ws::Handshake| {
                    if hs.origin_permitted(&allowed) {
                        Ok(())
                    } else {
                        Err(ws::Rejection::forbidden_origin(hs))
                    }
                })
                .await;
                if let Ok((transport, ())) = accepted {
                    let (peer, events) = Peer::start(transport, PeerConfig::default());
                    let mut seen = answer(peer, events);
                    while seen.recv().await.is_some() {}
                }
            });
        }
    });
    let url = format!("ws://127.0.0.1:{port}/");
    let err = ws::connect(
        &url,
        &[("Origin", "https://evil.example")],
        Limits::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("403"), "{err}");
    let ok = ws::connect(
        &url,
        &[("Origin", "http://127.0.0.1:8080")],
        Limits::default(),
    )
    .await;
    assert!(ok.is_ok());
    let ok = ws::connect(&url, &[], Limits::default()).await;
    let (client, _events) = Peer::start(ok.unwrap(), PeerConfig::default());
    let echo = client
        .request_value("echo", Some(json!({"n": 3})), opts())
        .await;
    assert_eq!(echo.unwrap().value, json!({"n": 3}));
}
