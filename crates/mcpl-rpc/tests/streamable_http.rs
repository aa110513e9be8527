//! Streamable HTTP: the axum server and the reqwest client, sessions, both directions,
//! JSON and SSE answers, auth headers, bad bodies, and cross-stream reordering made real.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use futures_util::StreamExt;
use mcpl_rpc::transport::http::{self, HttpServerConfig};
use mcpl_rpc::{Event, Events, Limits, Peer, PeerConfig, RequestOptions, RpcError, TransportKind};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};

mod common;
use common::streamable::{ServerSide, answer, initialize, opts, serve};

/// Runs [`answer`] on every new session.
fn run_sessions(
    sessions: mpsc::Receiver<http::HttpSession>,
) -> mpsc::UnboundedReceiver<ServerSide> {
    common::streamable::run_sessions(sessions, answer)
}

#[tokio::test]
async fn requests_and_notifications_flow_both_ways_with_sse_answers() {
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let mut servers = run_sessions(sessions);
    let url = serve(router).await;
    let transport =
        http::connect(&url, &[("Authorization", "Bearer t1")], Limits::default()).unwrap();
    let (client, client_events) = Peer::start(transport, PeerConfig::default());
    assert_eq!(client.kind(), TransportKind::StreamableHttp);
    assert!(!client.kind().is_ordered());
    let mut client_seen = answer_pings(client_events);

    initialize(&client).await.unwrap();
    let mut server = servers.recv().await.unwrap();
    assert_eq!(server.headers["authorization"], "Bearer t1");
    let Some(Event::Notification { notification, .. }) = server.seen.recv().await else {
        panic!("no initialized notification")
    };
    assert_eq!(notification.method, "notifications/initialized");

    let echo = client
        .request_value("echo", Some(json!({"x": 1})), opts())
        .await
        .unwrap();
    assert_eq!(echo.value, json!({"x": 1}));

    // Server to client: a request and a notification on the GET stream.
    let pong = server
        .peer
        .request_value("ping", None, opts())
        .await
        .unwrap();
    assert_eq!(pong.value, json!({"pong": true}));
    server.peer.notify_value("s/hello", None).unwrap();
    let Some(Event::Notification { notification, .. }) = client_seen.recv().await else {
        panic!("no server notification")
    };
    assert_eq!(notification.method, "s/hello");

    // Closing the client ends the session (DELETE).
    client.close().await;
    assert!(matches!(
        server.seen.recv().await,
        Some(Event::Closed { .. })
    ));
}

/// The client application: answers `ping` with `{pong: true}`, forwards everything else.
fn answer_pings(mut events: Events) -> mpsc::UnboundedReceiver<Event> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                Event::Request { responder, .. } if responder.method() == "ping" => {
                    let _ = responder.respond(json!({"pong": true}));
                }
                other => {
                    let _ = tx.send(other);
                }
            }
        }
    });
    rx
}

#[tokio::test]
async fn json_answers_and_related_messages_on_the_get_stream() {
    let config = HttpServerConfig {
        json_response: true,
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let _servers = run_sessions(sessions);
    let url = serve(router).await;
    let (client, events) = Peer::start(
        http::connect(&url, &[], Limits::default()).unwrap(),
        PeerConfig::default(),
    );
    let mut seen = answer_pings(events);
    initialize(&client).await.unwrap();
    let answer = client
        .request_value("test/race", None, opts())
        .await
        .unwrap();
    assert_eq!(answer.value, json!({"done": true}));
    // With JSON answers both notifications travel on the GET stream, in write order.
    let mut methods = Vec::new();
    for _ in 0..2 {
        let Some(Event::Notification { notification, .. }) = seen.recv().await else {
            panic!("missing notification")
        };
        methods.push(notification.method);
    }
    assert_eq!(methods, ["test/a", "test/b"]);
}

/// Holds the body of the next SSE answer to a POST (once armed) until `release` is notified.
#[derive(Clone, Default)]
struct Gate {
    armed: Arc<AtomicBool>,
    release: Arc<Notify>,
}

async fn hold_post_body(gate: Gate, request: Request, next: Next) -> Response {
    let is_post = request.method() == Method::POST;
    let response = next.run(request).await;
    let is_sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v == "text/event-stream");
    if !(is_post && is_sse && gate.armed.swap(false, Ordering::SeqCst)) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let release = gate.release.clone();
    let wait = futures_util::stream::once(async move { release.notified().await })
        .filter_map(|()| async { None::<Result<bytes::Bytes, axum::Error>> });
    let held = wait.chain(body.into_data_stream());
    Response::from_parts(parts, Body::from_stream(held))
}

#[tokio::test]
async fn s6_1_messages_on_two_streams_are_read_out_of_write_order() {
    let gate = Gate::default();
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let router = router.layer(middleware::from_fn({
        let gate = gate.clone();
        move |req, next| hold_post_body(gate.clone(), req, next)
    }));
    let _servers = run_sessions(sessions);
    let url = serve(router).await;
    let (client, events) = Peer::start(
        http::connect(&url, &[], Limits::default()).unwrap(),
        PeerConfig::default(),
    );
    let mut seen = answer_pings(events);
    initialize(&client).await.unwrap();

    // The server writes A (on this POST's stream) and then B (on the GET stream); the POST's
    // body is held, so B is read first.
    gate.armed.store(true, Ordering::SeqCst);
    let race = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("test/race", None, opts()).await }
    });
    let Some(Event::Notification {
        seq: seq_b,
        notification,
    }) = seen.recv().await
    else {
        panic!("no notification")
    };
    assert_eq!(notification.method, "test/b");
    gate.release.notify_one();
    let Some(Event::Notification {
        seq: seq_a,
        notification,
    }) = seen.recv().await
    else {
        panic!("no notification")
    };
    assert_eq!(notification.method, "test/a");
    let answered = race.await.unwrap().unwrap();
    // The client reports the order it read, not the order the server wrote.
    assert!(seq_b < seq_a, "B read as {seq_b}, A as {seq_a}");
    assert_eq!(answered.seq, seq_a + 1, "A and the answer share one stream");
}

#[tokio::test]
async fn authorization_is_checked_on_every_request() {
    let config = HttpServerConfig {
        authorize: Some(Arc::new(|headers: &HeaderMap| {
            match headers.get("authorization").and_then(|v| v.to_str().ok()) {
                Some("Bearer good") => Ok(()),
                _ => Err(StatusCode::UNAUTHORIZED),
            }
        })),
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let _servers = run_sessions(sessions);
    let url = serve(router).await;
    let (bad, _events) = Peer::start(
        http::connect(&url, &[("Authorization", "Bearer bad")], Limits::default()).unwrap(),
        PeerConfig::default(),
    );
    let err = bad
        .request_value("initialize", Some(json!({})), opts())
        .await
        .unwrap_err();
    let RpcError::Remote { error, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(error.code, -32603);
    assert!(
        error.message.starts_with("http status 401"),
        "{}",
        error.message
    );

    let (good, _events) = Peer::start(
        http::connect(&url, &[("Authorization", "Bearer good")], Limits::default()).unwrap(),
        PeerConfig::default(),
    );
    initialize(&good).await.unwrap();
}

/// Raw HTTP against the server: session rules and bad bodies.
#[tokio::test]
async fn sessions_and_bad_bodies_over_raw_http() {
    let config = HttpServerConfig {
        limits: Limits {
            max_frame_bytes: 2048,
            ..Limits::default()
        },
        ..HttpServerConfig::default()
    };
    let (router, sessions) = http::router("/mcp", config);
    let mut servers = run_sessions(sessions);
    let url = serve(router).await;
    mcpl_rpc::transport::tls::install_default_provider();
    let http = reqwest::Client::new();
    let post = |body: String, session: Option<&str>| {
        let mut builder = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(session) = session {
            builder = builder.header("mcp-session-id", session);
        }
        builder.send()
    };

    // Only `initialize` may open a session.
    let response = post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), None)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = post(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.into(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(session.len(), 32);
    let body = response.text().await.unwrap();
    assert!(
        body.starts_with(
            r#"event: message
data: {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25""#
        ),
        "{body}"
    );
    let mut server = servers.recv().await.unwrap();

    // Malformed JSON: 400 with a parse error; the session goes on.
    let response = post("{oops".into(), Some(&session)).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["id"], Value::Null);
    assert!(matches!(
        server.seen.recv().await,
        Some(Event::BadFrame { replied: true, .. })
    ));
    // Too deep: 400 with the id.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"echo","params":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let response = post(deep, Some(&session)).await.unwrap();
    let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(
        reply,
        json!({"jsonrpc":"2.0","id":8,"error":{"code":-32600,
               "message":"nesting depth 129 exceeds the limit of 128"}})
    );
    // Over the cap: 413.
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"n","params":{{"s":"{}"}}}}"#,
        "x".repeat(4000)
    );
    let response = post(big, Some(&session)).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let reply: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(
        reply["error"]["message"],
        "frame of 4048 bytes exceeds the cap of 2048 bytes"
    );
    // Still working: a notification gets 202.
    let response = post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    // An unknown session is 404.
    let response = post(r#"{"jsonrpc":"2.0","method":"n"}"#.into(), Some("nope"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // DELETE ends the session.
    let response = http
        .delete(&url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    loop {
        match server.seen.recv().await {
            Some(Event::Closed { reason }) => {
                assert_eq!(reason.as_deref(), Some("the client ended the session"));
                break;
            }
            Some(_) => continue,
            None => panic!("no close"),
        }
    }
    let response = post(r#"{"jsonrpc":"2.0","method":"n"}"#.into(), Some(&session))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(server.peer.is_closed());
}

/// H76 on the client side of Streamable HTTP: an answer over the client's frame cap, as an SSE
/// event or a JSON body, fails the request it answers at once (its id is read from its first
/// bytes) instead of leaving it to its timeout; a server request over the cap, on the GET
/// stream, gets its error reply at once. The session goes on.
#[tokio::test]
async fn h76_an_oversized_answer_or_request_from_the_server_fails_at_once() {
    for json_response in [false, true] {
        let config = HttpServerConfig {
            json_response,
            ..HttpServerConfig::default()
        };
        let (router, sessions) = http::router("/mcp", config);
        let mut servers = run_sessions(sessions);
        let url = serve(router).await;
        let limits = Limits {
            max_frame_bytes: 1024,
            ..Limits::default()
        };
        let (client, events) = Peer::start(
            http::connect(&url, &[], limits).unwrap(),
            PeerConfig::default(),
        );
        let _seen = answer_pings(events);
        initialize(&client).await.unwrap();
        let server = servers.recv().await.unwrap();
        // Far longer than the test runs: only the refusal can end these requests.
        let patient = RequestOptions::timeout(Duration::from_secs(3600));

        let big = json!({"s": "x".repeat(3000)});
        let err = client
            .request_value("echo", Some(big.clone()), patient.clone())
            .await
            .unwrap_err();
        let RpcError::BadAnswer { method, detail, .. } = &err else {
            panic!("json_response {json_response}: {err}")
        };
        assert_eq!(method, "echo");
        assert!(detail.contains("exceeds the cap of 1024 bytes"), "{detail}");

        let err = server
            .peer
            .request_value("big", Some(big), patient)
            .await
            .unwrap_err();
        let RpcError::Remote { error, .. } = &err else {
            panic!("json_response {json_response}: {err}")
        };
        assert_eq!(error.code, -32600, "{err}");

        let echo = client
            .request_value("echo", Some(json!({"x": 1})), opts())
            .await
            .unwrap();
        assert_eq!(echo.value, json!({"x": 1}));
        client.close().await;
    }
}

#[tokio::test]
async fn a_one_mebibyte_message_goes_both_ways_through_eight_kib_connection_buffers() {
    // `http::serve` holds each connection's buffer to 8 KiB at rest: a body far larger streams
    // through it, both ways, and the session goes on with small messages after.
    let (router, sessions) = http::router("/mcp", HttpServerConfig::default());
    let _servers = run_sessions(sessions);
    let url = serve(router).await;
    let transport = http::connect(&url, &[], Limits::default()).unwrap();
    let (client, client_events) = Peer::start(transport, PeerConfig::default());
    let _client_seen = answer_pings(client_events);
    initialize(&client).await.unwrap();
    let big = "z".repeat(1024 * 1024);
    let echo = client
        .request_value("echo", Some(json!({"text": big})), opts())
        .await
        .unwrap();
    assert_eq!(echo.value, json!({"text": big}));
    let echo = client
        .request_value("echo", Some(json!({"text": "small"})), opts())
        .await
        .unwrap();
    assert_eq!(echo.value, json!({"text": "small"}));
}

#[tokio::test]
async fn a_request_head_larger_than_the_connection_buffer_is_refused() {
    let (router, _sessions) = http::router("/mcp", HttpServerConfig::default());
    let url = serve(router).await;
    // A raw reqwest client: it needs the process's rustls provider.
    mcpl_rpc::transport::tls::install_default_provider();
    let answer = reqwest::Client::new()
        .post(&url)
        .header("x-padding", "p".repeat(16 * 1024))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
}
