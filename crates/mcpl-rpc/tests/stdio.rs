//! The peer over newline-delimited stdio (an in-memory pipe): requests both ways, read order,
//! timeouts with cancellation and late answers, cancellation from the other side, closing.

mod common;

use common::{raw_pair, serve_echo};
use mcpl_protocol::jsonrpc::{ErrorCode, RequestId};
use mcpl_protocol::method::RequestMethod;
use mcpl_rpc::{
    Event, LateReason, Limits, Peer, PeerConfig, RequestOptions, RpcError, Transport, TransportKind,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;

fn secs(n: u64) -> RequestOptions {
    RequestOptions::timeout(Duration::from_secs(n))
}

struct Echo;
#[derive(Debug, Serialize, Deserialize)]
struct EchoText {
    text: String,
}
impl RequestMethod for Echo {
    const METHOD: &'static str = "echo";
    type Params = EchoText;
    type Result = EchoText;
}

#[tokio::test]
async fn requests_and_notifications_flow_both_ways() {
    let (a, b) = Transport::memory_pair();
    assert_eq!(a.kind(), TransportKind::Stdio);
    assert!(a.kind().is_ordered());
    let (client, client_events) = Peer::start(a, PeerConfig::default());
    let (server, server_events) = Peer::start(b, PeerConfig::default());
    let mut client_seen = serve_echo(client_events);
    let mut server_seen = serve_echo(server_events);

    // Client to server, typed.
    let answer = client
        .request::<Echo>(EchoText { text: "hi".into() }, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(answer.value.text, "hi");
    // Server to client, untyped.
    let answer = server.request_value("ping", None, secs(5)).await.unwrap();
    assert_eq!(answer.value, json!({}));
    // Notifications both ways.
    client
        .notify_value("from/client", Some(json!({"n": 1})))
        .unwrap();
    server.notify_value("from/server", None).unwrap();
    let Some(Event::Notification { notification, .. }) = server_seen.recv().await else {
        panic!("server saw no notification")
    };
    assert_eq!(notification.method, "from/client");
    assert_eq!(notification.params, Some(json!({"n": 1})));
    let Some(Event::Notification { notification, .. }) = client_seen.recv().await else {
        panic!("client saw no notification")
    };
    assert_eq!(notification.method, "from/server");
    client.close().await;
}

#[tokio::test]
async fn requests_in_flight_both_ways_at_once() {
    let (a, b) = Transport::memory_pair();
    let (client, client_events) = Peer::start(a, PeerConfig::default());
    let (server, server_events) = Peer::start(b, PeerConfig::default());
    let _c = serve_echo(client_events);
    let _s = serve_echo(server_events);
    let calls = (0..20).map(|i| {
        let (client, server) = (client.clone(), server.clone());
        async move {
            let params = Some(json!({"text": format!("m{i}")}));
            let (x, y) = tokio::join!(
                client.request_value("echo", params.clone(), secs(5)),
                server.request_value("echo", params, secs(5)),
            );
            (x.unwrap().value, y.unwrap().value)
        }
    });
    let results = futures_util::future::join_all(calls).await;
    for (i, (x, y)) in results.into_iter().enumerate() {
        assert_eq!(x, json!({"text": format!("m{i}")}));
        assert_eq!(y, x);
    }
}

#[tokio::test]
async fn h13_every_frame_read_takes_the_next_number() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("tools/list", None, secs(5)).unwrap();
    let sent = raw.recv_json().await;
    assert_eq!(
        sent,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        "the request as written"
    );
    raw.send(r#"{"jsonrpc":"2.0","method":"n/one"}"#).await;
    raw.send("not json").await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":"r","method":"x/y"}"#)
        .await;
    let answered = pending.wait().await.unwrap();
    assert_eq!(answered.seq, 3);
    let mut seqs = Vec::new();
    for _ in 0..3 {
        let event = events.recv().await.unwrap();
        seqs.push((event.seq().unwrap(), kind(&event)));
    }
    assert_eq!(seqs, [(1, "notification"), (2, "bad"), (4, "request")]);
    peer.close().await;
}

fn kind(event: &Event) -> &'static str {
    match event {
        Event::Request { .. } => "request",
        Event::Notification { .. } => "notification",
        Event::Cancelled { .. } => "cancelled",
        Event::Response { .. } => "response",
        Event::LateResponse { .. } => "late",
        Event::BadFrame { .. } => "bad",
        Event::Closed { .. } => "closed",
        _ => "other",
    }
}

#[tokio::test(start_paused = true)]
async fn s6_1_timeout_sends_cancelled_and_the_late_answer_is_delivered() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request_value("toolsets/close", Some(json!({"toolset":"go"})), secs(5))
                .await
        }
    });
    let request = raw.recv_json().await;
    assert_eq!(request["method"], "toolsets/close");
    // Nobody answers; the paused clock jumps to the deadline.
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(
        err,
        RpcError::Timeout {
            method: "toolsets/close".into(),
            after: Duration::from_secs(5)
        }
    );
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timed out after 5s"}}"#
    );
    // The answer crosses the cancellation on the wire and is still read.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"mcpl/hints":{"rev":4}}}}"#)
        .await;
    let Some(Event::LateResponse {
        seq,
        id,
        method,
        outcome,
        reason,
    }) = events.recv().await
    else {
        panic!("no late response")
    };
    assert_eq!(seq, 1);
    assert_eq!(id, RequestId::Number(1));
    assert_eq!(method, "toolsets/close");
    assert_eq!(outcome.unwrap()["_meta"]["mcpl/hints"]["rev"], 4);
    assert_eq!(reason, LateReason::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn the_default_timeout_applies_when_none_is_given() {
    let config = PeerConfig {
        default_timeout: Duration::from_millis(250),
        ..PeerConfig::default()
    };
    let (peer, _events, mut raw) = raw_pair(Limits::default(), config);
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request_value("slow", None, RequestOptions::default())
                .await
        }
    });
    let _ = raw.recv().await;
    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, RpcError::Timeout { after, .. } if after == Duration::from_millis(250)));
}

#[tokio::test]
async fn explicit_cancel_sends_cancelled_and_a_late_answer_is_delivered() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("tools/call", None, secs(60)).unwrap();
    let id = pending.id().clone();
    let _ = raw.recv().await;
    pending.cancel("user pressed stop");
    assert_eq!(
        raw.recv_json().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
               "params":{"requestId":id,"reason":"user pressed stop"}})
    );
    let err = pending.wait().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "`tools/call` was cancelled: user pressed stop"
    );
    raw.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))
        .await;
    let Some(Event::LateResponse { reason, method, .. }) = events.recv().await else {
        panic!("no late response")
    };
    assert_eq!(
        (reason, method.as_str()),
        (LateReason::Cancelled, "tools/call")
    );
}

#[tokio::test]
async fn h13_an_answer_nobody_awaits_is_still_delivered() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("toolsets/open", None, secs(60)).unwrap();
    drop(pending); // the caller went away
    let _ = raw.recv().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"result":{"instance":"g1"}}"#)
        .await;
    let Some(Event::LateResponse {
        seq,
        id,
        method,
        reason,
        outcome,
    }) = events.recv().await
    else {
        panic!("no late response")
    };
    // Delivered whole, as the first frame read, for the method it answers.
    assert_eq!(seq, 1);
    assert_eq!(id, RequestId::Number(1));
    assert_eq!(method, "toolsets/open");
    assert_eq!(reason, LateReason::Abandoned);
    assert_eq!(outcome, Ok(json!({"instance": "g1"})));
}

#[tokio::test]
async fn remote_errors_keep_their_code_and_read_order() {
    let (peer, _events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("push/event", None, secs(5)).unwrap();
    let _ = raw.recv().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Capability denied","data":{"capability":"pushEvents"}}}"#).await;
    let RpcError::Remote { method, error, seq } = pending.wait().await.unwrap_err() else {
        panic!("not a remote error")
    };
    assert_eq!(method, "push/event");
    assert_eq!(error.known_code(), Some(ErrorCode::CapabilityDenied));
    assert_eq!(error.data, Some(json!({"capability":"pushEvents"})));
    assert_eq!(seq, 1);
}

#[tokio::test]
async fn a_typed_answer_that_does_not_fit_is_a_bad_result() {
    let (peer, _events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request::<Echo>(EchoText { text: "x".into() }, Duration::from_secs(5))
                .await
        }
    });
    let _ = raw.recv().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"result":{"text":7}}"#)
        .await;
    let err = call.await.unwrap().unwrap_err();
    assert!(
        matches!(&err, RpcError::BadResult { method, .. } if method == "echo"),
        "{err}"
    );
}

#[tokio::test]
async fn a_cancellation_from_the_other_side_is_delivered_and_suppresses_the_answer() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timed out"}}"#).await;
    let Some(Event::Request { responder, .. }) = events.recv().await else {
        panic!("no request")
    };
    let Some(Event::Cancelled { seq, id, reason }) = events.recv().await else {
        panic!("no cancellation")
    };
    assert_eq!(
        (seq, id, reason.as_deref()),
        (2, RequestId::Number(7), Some("timed out"))
    );
    // MCP: no answer after a cancellation; RFC-014 §6.1 then wants the hints as tools/hints.
    let err = responder.respond(json!({})).unwrap_err();
    assert_eq!(
        err,
        RpcError::AnswerSuppressed {
            id: RequestId::Number(7)
        }
    );
    // Nothing was written for id 7: the next line is the notification below.
    peer.notify_value("after", None).unwrap();
    assert_eq!(raw.recv_json().await["method"], "after");
}

#[tokio::test]
async fn mcpl_6_6_a_dropped_responder_answers_internal_error() {
    let (_peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    raw.send(r#"{"jsonrpc":"2.0","id":"q","method":"model/info"}"#)
        .await;
    let Some(Event::Request { responder, .. }) = events.recv().await else {
        panic!("no request")
    };
    drop(responder);
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":"q","error":{"code":-32603,"message":"request `model/info` was dropped without an answer"}}"#
    );
}

#[tokio::test]
async fn a_disarmed_responder_lets_a_core_answer_with_send() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"toolsets/list"}"#)
        .await;
    let Some(Event::Request { responder, .. }) = events.recv().await else {
        panic!("no request")
    };
    let id = responder.disarm();
    peer.send(mcpl_protocol::jsonrpc::Response::ok(id.clone(), json!({"toolsets":[]})).into())
        .unwrap();
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"toolsets":[]}}"#
    );
    assert_eq!(
        peer.respond(id.clone(), Ok(Value::Null)),
        Err(RpcError::UnknownRequest { id })
    );
}

#[tokio::test]
async fn responses_to_ids_the_peer_did_not_allocate_are_events() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    // A sans-IO core sends its own request with a string id.
    peer.send(mcpl_protocol::jsonrpc::Request::new("core-1", "tools/list", None).into())
        .unwrap();
    assert_eq!(raw.recv_json().await["id"], "core-1");
    raw.send(r#"{"jsonrpc":"2.0","id":"core-1","result":{"tools":[]}}"#)
        .await;
    let Some(Event::Response { seq, response }) = events.recv().await else {
        panic!("no response event")
    };
    assert_eq!(seq, 1);
    assert_eq!(response.id, Some(RequestId::from("core-1")));
}

#[tokio::test]
async fn the_other_side_closing_fails_pending_requests() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("ping", None, secs(60)).unwrap();
    let _ = raw.recv().await;
    raw.close().await;
    assert_eq!(
        pending.wait().await.unwrap_err(),
        RpcError::Closed { reason: None }
    );
    assert!(matches!(
        events.recv().await,
        Some(Event::Closed { reason: None })
    ));
    assert!(events.recv().await.is_none());
    assert_eq!(
        peer.request_value("ping", None, secs(1)).await.unwrap_err(),
        RpcError::Closed { reason: None }
    );
}

#[tokio::test]
async fn close_writes_queued_messages_then_ends_the_stream() {
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let pending = peer.start_request("ping", None, secs(60)).unwrap();
    peer.notify_value("bye", None).unwrap();
    peer.close().await;
    assert_eq!(raw.recv_json().await["method"], "ping");
    assert_eq!(raw.recv_json().await["method"], "bye");
    assert_eq!(raw.recv().await, None, "the writer closed its side");
    assert!(matches!(pending.wait().await, Err(RpcError::Closed { .. })));
    assert!(matches!(events.recv().await, Some(Event::Closed { .. })));
    assert!(peer.is_closed());
}

#[tokio::test]
async fn a_thin_driver_feeds_messages_in_read_order_and_writes_what_it_is_given() {
    // What a host or server driver does: take events in read order, hand the messages to a
    // core (here: a list), and write the core's answers with `send`.
    let (peer, mut events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"toolsets/list"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"late"}}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"tools/hints","params":{"rev":1}}"#)
        .await;
    let mut core_input = Vec::new();
    for _ in 0..3 {
        let event = events.recv().await.unwrap();
        let seq = event.seq().unwrap();
        core_input.push((seq, event.into_message().unwrap().to_json()));
    }
    assert_eq!(
        core_input,
        [
            (1, r#"{"jsonrpc":"2.0","id":1,"method":"toolsets/list"}"#.to_owned()),
            (
                2,
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"late"}}"#.to_owned()
            ),
            (3, r#"{"jsonrpc":"2.0","method":"tools/hints","params":{"rev":1}}"#.to_owned()),
        ]
    );
    // The disarmed request sent no -32603; the core's own message is the next line.
    peer.send(
        mcpl_protocol::jsonrpc::Notification::new("tools/hints", Some(json!({"rev": 2}))).into(),
    )
    .unwrap();
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","method":"tools/hints","params":{"rev":2}}"#
    );
}

/// A client that writes its requests and closes its side (`printf ... | server`) still gets
/// every answer: the peer answers what it read before end-of-file, then closes.
#[tokio::test]
async fn requests_read_before_end_of_file_are_still_answered() {
    let (_peer, events, mut raw) = common::raw_pair(Limits::default(), PeerConfig::default());
    let mut seen = common::serve_echo(events);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    raw.close_write().await;
    let mut answers = [raw.recv_json().await, raw.recv_json().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers[0]["result"]["text"], "a");
    assert_eq!(answers[1]["result"], serde_json::json!({}));
    assert!(matches!(seen.recv().await, Some(Event::Closed { .. })));
    // Every request answered: the peer shuts its side too.
    assert_eq!(raw.recv().await, None);
}

/// Handles write answers and notifications straight to the writer's queue, and requests
/// through the connection's task (which registers them first): either way, messages leave in
/// the order they were made.
#[tokio::test]
async fn writes_leave_in_the_order_they_were_made_whichever_way_they_go() {
    let (peer, _events, mut raw) = raw_pair(Limits::default(), PeerConfig::default());
    let mut requests = Vec::new();
    for n in 0..60 {
        if n % 3 == 0 {
            let sent = peer.start_request("echo", Some(json!({"n": n})), secs(5));
            requests.push(sent.expect("sent"));
        } else {
            peer.notify_value("note", Some(json!({"n": n})))
                .expect("sent");
        }
    }
    for n in 0..60 {
        let line = raw.recv_json().await;
        assert_eq!(line["params"]["n"], json!(n), "{line}");
    }
    assert_eq!(requests.len(), 20);
}

struct Progress;
impl mcpl_protocol::method::NotificationMethod for Progress {
    const METHOD: &'static str = "test/progress";
    type Params = EchoText;
}

struct Bare;
impl mcpl_protocol::method::NotificationMethod for Bare {
    const METHOD: &'static str = "test/bare";
    type Params = ();
}

#[tokio::test]
async fn a_typed_notification_is_written_with_its_method_and_params_and_unit_means_none() {
    let (a, b) = Transport::memory_pair();
    let (client, _client_events) = Peer::start(a, PeerConfig::default());
    let (_server, server_events) = Peer::start(b, PeerConfig::default());
    let mut server_seen = serve_echo(server_events);

    client
        .notify::<Progress>(EchoText {
            text: "half".into(),
        })
        .unwrap();
    client.notify::<Bare>(()).unwrap();
    // The wire is ordered: once a later request is answered, the notifications were read.
    client.request_value("ping", None, secs(5)).await.unwrap();
    let Ok(Event::Notification { notification, .. }) = server_seen.try_recv() else {
        panic!("server saw no typed notification")
    };
    assert_eq!(notification.method, "test/progress");
    assert_eq!(notification.params, Some(json!({"text": "half"})));
    let Ok(Event::Notification { notification, .. }) = server_seen.try_recv() else {
        panic!("server saw no second notification")
    };
    assert_eq!(notification.method, "test/bare");
    assert_eq!(notification.params, None);
    client.close().await;
}

#[test]
fn a_peer_whose_runtime_has_shut_down_is_closed() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The other end stays open: only the connection's task goes away, with its runtime.
    let (peer, _events, _other_end) = runtime.block_on(async {
        let (a, b) = Transport::memory_pair();
        let (peer, events) = Peer::start(a, PeerConfig::default());
        (peer, events, b)
    });
    assert!(!peer.is_closed());
    drop(runtime);
    assert!(peer.is_closed());
    assert!(matches!(
        peer.notify_value("after", None),
        Err(RpcError::Closed { .. })
    ));
}

#[tokio::test]
async fn an_inline_handler_takes_its_requests_on_the_connection_task_and_passes_the_rest() {
    let (a, b) = Transport::memory_pair();
    let inline = mcpl_rpc::InlineRequests::new(|request, responder| {
        if request.method != "fast" {
            return Some((request, responder));
        }
        let _ = responder.respond(json!({"inline": true}));
        None
    });
    let config = PeerConfig {
        inline_requests: Some(inline),
        ..PeerConfig::default()
    };
    let (server, mut server_events) = Peer::start(b, config);
    let (client, _client_events) = Peer::start(a, PeerConfig::default());
    let seen = tokio::spawn(async move {
        let mut methods = Vec::new();
        while let Some(event) = server_events.recv().await {
            if let Event::Request {
                request, responder, ..
            } = event
            {
                methods.push(request.method.clone());
                let _ = responder.respond(json!({"inline": false}));
            }
        }
        methods
    });
    let fast = client.request_value("fast", None, secs(5)).await.unwrap();
    assert_eq!(fast.value, json!({"inline": true}));
    let slow = client.request_value("slow", None, secs(5)).await.unwrap();
    assert_eq!(slow.value, json!({"inline": false}));
    client.close().await;
    server.close().await;
    drop(server);
    assert_eq!(
        seen.await.unwrap(),
        ["slow"],
        "the inline handler's request became an event"
    );
}
