//! The child-process transport. The child is `cat`, which writes back every line it reads:
//! each message this peer sends returns as a message from the child, so one peer plays both
//! roles (a request out, the same request in, its answer back) through a real process's
//! stdin and stdout.

#![cfg(unix)]

use mcpl_rpc::transport::child::{STDERR_LINE_MAX, StderrMode};
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

/// A child floods its stderr while nobody reads it: at most `STDERR_BACKLOG` lines wait, the
/// rest are dropped and counted, and the child is never blocked (it writes every line, then
/// its notification). No line is lost without being counted.
#[tokio::test]
async fn a_flood_of_stderr_is_bounded_and_what_is_dropped_is_counted() {
    const LINES: u64 = 100_000;
    // Far more than a pipe holds: the child can only get to its notification once this side
    // has read almost every line.
    let script = format!(
        r#"seq -f 'line %g' 1 {LINES} >&2; echo '{{"jsonrpc":"2.0","method":"flooded"}}'; exec cat 2>&-"#
    );
    let mut transport = Transport::child_shell(&script, StderrMode::Capture).unwrap();
    let mut stderr = transport.take_stderr().expect("captured");
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let Some(Event::Notification { notification, .. }) = events.recv().await else {
        panic!("the child did not get past its stderr")
    };
    assert_eq!(notification.method, "flooded");
    let mut read: Vec<String> = Vec::new();
    while let Some(line) = stderr.next_line().await {
        read.push(line);
    }
    assert_eq!(read.first().map(String::as_str), Some("line 1"));
    assert!(stderr.dropped() > 0, "read {} lines", read.len());
    assert_eq!(read.len() as u64 + stderr.dropped(), LINES);
    assert!(read.len() < LINES as usize);
    peer.close().await;
}

/// A child writes a 3 MB stderr line, then a short one, then 3 MB without a newline: each long
/// line arrives cut to `STDERR_LINE_MAX` bytes with the count of what was cut, and the line
/// after it is whole.
#[tokio::test]
async fn an_unbounded_stderr_line_is_cut_to_its_head_and_marked() {
    const LONG: usize = 3_000_000;
    let script = format!(
        "head -c {LONG} /dev/zero | tr '\\0' x >&2; echo >&2; echo after >&2; \
         head -c {LONG} /dev/zero | tr '\\0' y >&2; exec cat 2>&-"
    );
    let mut transport = Transport::child_shell(&script, StderrMode::Capture).unwrap();
    let mut stderr = transport.take_stderr().expect("captured");
    let cut = LONG - STDERR_LINE_MAX;
    let first = stderr.next_line().await.expect("the long line");
    assert_eq!(
        first,
        format!("{}… [cut {cut} bytes]", "x".repeat(STDERR_LINE_MAX))
    );
    assert_eq!(stderr.next_line().await.as_deref(), Some("after"));
    // The last line has no newline: it ends with the stream (the child closes its stderr
    // before it becomes `cat`), cut the same way.
    let last = stderr.next_line().await.expect("the last line");
    assert_eq!(
        last,
        format!("{}… [cut {cut} bytes]", "y".repeat(STDERR_LINE_MAX))
    );
    assert_eq!(stderr.next_line().await, None);
    assert_eq!(stderr.dropped(), 0);
    drop(transport);
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
