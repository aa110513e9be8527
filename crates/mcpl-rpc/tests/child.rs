//! The child-process transport. The child is `cat`, which writes back every line it reads:
//! each message this peer sends returns as a message from the child, so one peer plays both
//! roles (a request out, the same request in, its answer back) through a real process's
//! stdin and stdout.

#![cfg(unix)]

use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, Transport, TransportKind};
use serde_json::json;
use std::time::Duration;
use tokio::process::Command;

fn opts() -> RequestOptions {
    RequestOptions::timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn requests_and_notifications_round_trip_through_a_child() {
    let transport =
        Transport::child(Command::new("cat"), StderrMode::Discard, Limits::default()).unwrap();
    assert_eq!(transport.kind(), TransportKind::ChildProcess);
    assert!(transport.kind().is_ordered());
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());

    // Our request comes back as a request from the child; answering it answers ours.
    let pending = peer
        .start_request("tools/list", Some(json!({})), opts())
        .unwrap();
    let Some(Event::Request {
        seq,
        request,
        responder,
    }) = events.recv().await
    else {
        panic!("no request from the child")
    };
    assert_eq!((seq, request.method.as_str()), (1, "tools/list"));
    responder.respond(json!({"tools": []})).unwrap();
    let answered = pending.wait().await.unwrap();
    assert_eq!(answered.value, json!({"tools": []}));
    assert_eq!(answered.seq, 2);

    // A notification out is a notification in.
    peer.notify_value("notifications/message", Some(json!({"level": "info"})))
        .unwrap();
    let Some(Event::Notification { seq, notification }) = events.recv().await else {
        panic!("no notification from the child")
    };
    assert_eq!(
        (seq, notification.method.as_str()),
        (3, "notifications/message")
    );
    peer.close().await;
    assert!(matches!(events.recv().await, Some(Event::Closed { .. })));
}

#[tokio::test]
async fn stderr_is_captured_line_by_line() {
    let mut transport =
        Transport::child_shell("echo 'server starting' >&2; exec cat", StderrMode::Capture)
            .unwrap();
    let mut stderr = transport.take_stderr().expect("captured");
    assert_eq!(stderr.next_line().await.as_deref(), Some("server starting"));
    let (peer, _events) = Peer::start(transport, PeerConfig::default());
    peer.close().await;
}

#[tokio::test]
async fn a_child_that_exits_closes_the_connection() {
    let transport = Transport::child_shell("exit 0", StderrMode::Inherit).unwrap();
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    assert!(matches!(events.recv().await, Some(Event::Closed { .. })));
    assert!(peer.request_value("ping", None, opts()).await.is_err());
}

#[tokio::test]
async fn a_missing_program_is_a_transport_error() {
    let err = Transport::child(
        Command::new("/nonexistent/mcpl-server"),
        StderrMode::Inherit,
        Limits::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("transport: cannot spawn"),
        "{err}"
    );
}

#[cfg(target_os = "linux")] // reads /proc
#[tokio::test]
async fn dropping_the_transport_kills_the_child() {
    let transport = Transport::child_shell("exec sleep 600", StderrMode::Discard).unwrap();
    let pid = transport.child_id().expect("a running child");
    let alive = |pid: u32| {
        // Gone, or a zombie waiting to be reaped, counts as dead.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false)
    };
    assert!(alive(pid));
    drop(transport);
    let mut waited = 0;
    while alive(pid) && waited < 500 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    assert!(
        !alive(pid),
        "child {pid} still runs after the transport was dropped"
    );
}
