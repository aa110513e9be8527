//! The WebSocket transport: one message per text frame, a handshake whose headers a server
//! maps to a principal, requests and notifications both ways, and oversized frames refused
//! with the connection kept.

mod common;

use common::serve_echo;
use mcpl_rpc::transport::ws::{self, Rejection};
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, TransportKind};
use serde_json::json;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::http::StatusCode;

fn opts() -> RequestOptions {
    RequestOptions::timeout(Duration::from_secs(10))
}

/// Maps `Authorization: Bearer TOKEN` to a principal; anything else is refused with 401.
fn principal_of(handshake: &ws::Handshake) -> Result<String, Rejection> {
    let token = handshake
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token {
        Some("alice-token") => Ok("alice".to_owned()),
        _ => Err(Rejection {
            status: StatusCode::UNAUTHORIZED,
            message: "unknown token".into(),
        }),
    }
}

async fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcpl", listener.local_addr().unwrap());
    (listener, url)
}

/// A client connected to a server that accepts with `server_limits` and answers with
/// [`serve_echo`]: the client, its events, the server's peer, what the server saw besides
/// requests, and the handshake.
async fn echo_connection(
    server_limits: Limits,
) -> (
    Peer,
    mcpl_rpc::Events,
    Peer,
    tokio::sync::mpsc::UnboundedReceiver<Event>,
    ws::Handshake,
) {
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, server_limits).await.unwrap() });
    let client_t = ws::connect(&url, &[], Limits::default()).await.unwrap();
    let (server_t, handshake) = server.await.unwrap();
    let (client, client_events) = Peer::start(client_t, PeerConfig::default());
    let (server, server_events) = Peer::start(server_t, PeerConfig::default());
    let server_seen = serve_echo(server_events);
    (client, client_events, server, server_seen, handshake)
}

#[tokio::test]
async fn requests_and_notifications_flow_both_ways() {
    let (listener, url) = listener().await;
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        ws::accept_with(stream, Limits::default(), principal_of)
            .await
            .unwrap()
    });
    let client_t = ws::connect(
        &url,
        &[("Authorization", "Bearer alice-token")],
        Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(client_t.kind(), TransportKind::WebSocket);
    let (server_t, principal) = server.await.unwrap();
    assert_eq!(principal, "alice");

    let (client, client_events) = Peer::start(client_t, PeerConfig::default());
    let (server, server_events) = Peer::start(server_t, PeerConfig::default());
    let mut client_seen = serve_echo(client_events);
    let mut server_seen = serve_echo(server_events);

    let answer = client
        .request_value("echo", Some(json!({"text": "up"})), opts())
        .await
        .unwrap();
    assert_eq!(answer.value, json!({"text": "up"}));
    let answer = server.request_value("ping", None, opts()).await.unwrap();
    assert_eq!(answer.value, json!({}));

    client.notify_value("c/n", None).unwrap();
    server.notify_value("s/n", None).unwrap();
    let Some(Event::Notification { notification, .. }) = server_seen.recv().await else {
        panic!("server saw no notification")
    };
    assert_eq!(notification.method, "c/n");
    let Some(Event::Notification { notification, .. }) = client_seen.recv().await else {
        panic!("client saw no notification")
    };
    assert_eq!(notification.method, "s/n");

    client.close().await;
    assert!(matches!(
        server_seen.recv().await,
        Some(Event::Closed { .. })
    ));
}

#[tokio::test]
async fn a_bad_token_is_refused_at_the_handshake() {
    let (listener, url) = listener().await;
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        ws::accept_with(stream, Limits::default(), principal_of).await
    });
    let err = ws::connect(
        &url,
        &[("Authorization", "Bearer mallory")],
        Limits::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    assert!(server.await.unwrap().is_err());
}

#[tokio::test]
async fn an_oversized_frame_is_refused_and_the_connection_survives() {
    let small = Limits {
        max_frame_bytes: 1024,
        ..Limits::default()
    };
    let (client, mut client_events, _server, mut server_seen, handshake) =
        echo_connection(small).await;
    assert_eq!(handshake.uri.path(), "/mcpl");

    let big = "x".repeat(4000);
    let pending = client
        .start_request("echo", Some(json!({"text": big})), opts())
        .unwrap();
    let Some(Event::BadFrame { error, replied, .. }) = server_seen.recv().await else {
        panic!("no bad frame")
    };
    assert!(replied);
    assert_eq!(
        error.to_string(),
        "frame of 4061 bytes exceeds the cap of 1024 bytes"
    );
    // The frame was never parsed whole, but its id was read from its first bytes, so the
    // error reply answers the request at once.
    let refused = pending.wait().await;
    assert!(refused.is_err(), "{refused:?}");
    let _ = &mut client_events;
    let answer = client
        .request_value("echo", Some(json!({"text": "small"})), opts())
        .await
        .unwrap();
    assert_eq!(answer.value, json!({"text": "small"}));
}

#[tokio::test]
async fn a_one_mebibyte_message_goes_both_ways_through_an_accepted_connection() {
    let (client, _client_events, _server, _seen, _) = echo_connection(Limits::default()).await;

    // Many reads on the server side, echoed back in one frame with a 64-bit length.
    let big = "z".repeat(1024 * 1024);
    let answer = client
        .request_value("echo", Some(json!({"text": big})), opts())
        .await
        .unwrap();
    assert_eq!(
        answer.value["text"].as_str().map(str::len),
        Some(1024 * 1024)
    );
    assert_eq!(answer.value, json!({"text": big}));
    // And the connection goes on with small frames.
    let answer = client
        .request_value("echo", Some(json!({"text": "small"})), opts())
        .await
        .unwrap();
    assert_eq!(answer.value, json!({"text": "small"}));
}

#[tokio::test]
async fn the_server_answers_a_raw_clients_ping_and_closing_handshake() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message as WsMessage;
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, Limits::default()).await.unwrap() });
    let (mut raw, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let (server_t, _) = server.await.unwrap();
    let (_server, mut server_events) = Peer::start(server_t, PeerConfig::default());

    raw.send(WsMessage::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    match raw.next().await {
        Some(Ok(WsMessage::Pong(payload))) => assert_eq!(&payload[..], b"are you there"),
        other => panic!("expected a pong, got {other:?}"),
    }
    raw.close(None).await.unwrap();
    // tungstenite reads the server's closing frame and ends the stream cleanly.
    while let Some(frame) = raw.next().await {
        frame.unwrap();
    }
    match server_events.recv().await {
        Some(Event::Closed { reason }) => assert_eq!(reason, None),
        other => panic!("expected the connection to close, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_flooded_with_frames_it_has_not_read_still_writes_and_closes() {
    // One task moves the server's frames both ways: while the peer's inbound queue is full
    // it must still write what the peer sends and end when the peer closes.
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, Limits::default()).await.unwrap() });
    let client_t = ws::connect(&url, &[], Limits::default()).await.unwrap();
    let (server_t, _) = server.await.unwrap();
    let (client, mut client_events) = Peer::start(client_t, PeerConfig::default());
    let (server, _server_events) = Peer::start(server_t, PeerConfig::default());
    for i in 0..2_000 {
        client
            .notify_value("flood", Some(json!({"i": i, "pad": "x".repeat(256)})))
            .unwrap();
    }
    server
        .notify_value("still/writing", Some(json!({})))
        .unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match client_events.recv().await {
                Some(Event::Notification { notification, .. })
                    if notification.method == "still/writing" =>
                {
                    return true;
                }
                Some(_) => {}
                None => return false,
            }
        }
    })
    .await;
    assert_eq!(seen, Ok(true), "the server's notification never arrived");
    tokio::time::timeout(Duration::from_secs(10), server.close())
        .await
        .expect("the server closed while frames were still arriving");
    assert!(server.is_closed());
}

#[tokio::test]
async fn two_peers_writing_large_messages_to_each_other_at_once_both_get_through() {
    // Each side writes more than the sockets buffer while the other does the same: a side
    // that stopped reading while it wrote would wait forever on the other.
    let limits = Limits {
        max_frame_bytes: 8 * 1024 * 1024,
        ..Limits::default()
    };
    let (listener, url) = listener().await;
    let server = tokio::spawn(async move { ws::accept_next(&listener, limits).await.unwrap() });
    let client_t = ws::connect(&url, &[], limits).await.unwrap();
    let (server_t, _) = server.await.unwrap();
    let (client, client_events) = Peer::start(client_t, PeerConfig::default());
    let (server, server_events) = Peer::start(server_t, PeerConfig::default());
    let big = "b".repeat(3 * 1024 * 1024);
    for _ in 0..4 {
        client
            .notify_value("big", Some(json!({"text": big})))
            .unwrap();
        server
            .notify_value("big", Some(json!({"text": big})))
            .unwrap();
    }
    async fn count_big(mut events: mcpl_rpc::Events) -> usize {
        let mut seen = 0;
        while seen < 4 {
            match events.recv().await {
                Some(Event::Notification { notification, .. }) if notification.method == "big" => {
                    seen += 1;
                }
                Some(_) => {}
                None => break,
            }
        }
        seen
    }
    let both = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(count_big(client_events), count_big(server_events))
    })
    .await
    .expect("the two sides waited on each other");
    assert_eq!(both, (4, 4));
}

#[tokio::test]
async fn a_websocket_transport_runs_no_task_of_its_own_and_its_peer_one() {
    // The peer's task moves a WebSocket's frames itself: no reader or writer task per
    // connection, and no queues between them.
    let metrics = tokio::runtime::Handle::current().metrics();
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, Limits::default()).await.unwrap() });
    let client_t = ws::connect(&url, &[], Limits::default()).await.unwrap();
    let (server_t, _) = server.await.unwrap();
    while metrics.num_alive_tasks() > 0 {
        tokio::task::yield_now().await; // the accepting task ends
    }
    let (client, _client_events) = Peer::start(client_t, PeerConfig::default());
    let (server, server_events) = Peer::start(server_t, PeerConfig::default());
    assert_eq!(metrics.num_alive_tasks(), 2, "one task per peer");
    let _seen = serve_echo(server_events);
    let answer = client
        .request_value("echo", Some(json!({"text": "one task"})), opts())
        .await
        .unwrap();
    assert_eq!(answer.value, json!({"text": "one task"}));
    client.close().await;
    server.close().await;
}

#[tokio::test]
async fn a_websocket_client_that_stops_reading_is_disconnected_once_too_much_waits_for_it() {
    // A raw client that never reads: the socket fills, then messages wait in the peer's
    // task until `OUTBOUND_CAPACITY` of them do, and the connection is closed.
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, Limits::default()).await.unwrap() });
    let (_raw, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let (server_t, _) = server.await.unwrap();
    let (server, mut server_events) = Peer::start(server_t, PeerConfig::default());
    let big = "f".repeat(1024 * 1024);
    for _ in 0..16 {
        let _ = server.notify_value("fill", Some(json!({ "text": big })));
    }
    for n in 0..mcpl_rpc::transport::OUTBOUND_CAPACITY + 16 {
        let _ = server.notify_value("n", Some(json!({ "n": n })));
    }
    let reason = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match server_events.recv().await {
                Some(Event::Closed { reason }) => break reason,
                Some(_) => continue,
                None => break None,
            }
        }
    })
    .await
    .expect("the server never gave up on the client");
    let reason = reason.unwrap_or_default();
    assert!(reason.contains("reads too slowly"), "{reason}");
    assert!(server.is_closed());
}

#[tokio::test]
async fn a_large_message_reaches_the_client_whole_in_frames_of_at_most_one_kibibyte() {
    // The server writes a long message as a first frame and continuations, so tungstenite's
    // write buffer never grows past one small frame; a client refusing any frame over
    // 1 KiB still reads the whole message, characters split across frames included.
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message as WsMessage;
    use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
    let (listener, url) = listener().await;
    let server =
        tokio::spawn(async move { ws::accept_next(&listener, Limits::default()).await.unwrap() });
    let config = WebSocketConfig::default().max_frame_size(Some(1024));
    let (mut raw, _) = tokio_tungstenite::connect_async_with_config(&url, Some(config), false)
        .await
        .unwrap();
    let (server_t, _) = server.await.unwrap();
    let (server, _server_events) = Peer::start(server_t, PeerConfig::default());
    let big = "é".repeat(50_000);
    server
        .notify_value("big", Some(json!({ "text": big })))
        .unwrap();
    server.notify_value("small", None).unwrap();
    let Some(Ok(WsMessage::Text(text))) = raw.next().await else {
        panic!("no large message")
    };
    let message: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(message["params"]["text"], json!(big));
    let Some(Ok(WsMessage::Text(text))) = raw.next().await else {
        panic!("no message after the large one")
    };
    assert!(text.contains("\"small\""), "{text}");
}
