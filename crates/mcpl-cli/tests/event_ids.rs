//! Issue 22: `push/event` ids are unique across server processes (and so across restarts):
//! two `mcpl arcade` processes serving the same script never hand out the same id.

use std::time::Duration;

use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, Transport};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

async fn ask(peer: &Peer, method: &str, params: Value) -> Value {
    peer.request_value(method, Some(params), RequestOptions::timeout(WAIT))
        .await
        .unwrap_or_else(|e| panic!("{method} failed: {e}"))
        .value
}

/// Plays one move against the bot in a fresh `mcpl arcade` and returns the id of the push
/// that carries the bot's answer.
async fn first_event_id() -> String {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl"));
    command.arg("arcade");
    let transport = Transport::child(command, StderrMode::Discard, Limits::default())
        .expect("mcpl arcade starts");
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    ask(
        &peer,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
               "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                   "pushEvents": true, "featureSets": true}}},
               "clientInfo": {"name": "event-ids", "version": "1"}}),
    )
    .await;
    peer.notify_value("notifications/initialized", None)
        .expect("the peer is open");
    ask(
        &peer,
        "featureSets/update",
        json!({"effectiveCapabilities": ["pushEvents"]}),
    )
    .await;
    ask(
        &peer,
        "toolsets/open",
        json!({"toolset": "go", "instance": "vs-bot", "options": {"size": 9}}),
    )
    .await;
    ask(
        &peer,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "vs-bot"}}),
    )
    .await;
    let id = tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await {
                Some(Event::Request {
                    request, responder, ..
                }) if request.method == "push/event" => {
                    let _ = responder.respond(json!({}));
                    let params = request.params.unwrap_or(Value::Null);
                    break params["eventId"].as_str().unwrap_or_default().to_owned();
                }
                Some(_) => {}
                None => panic!("the arcade closed before pushing the bot's move"),
            }
        }
    })
    .await
    .expect("the bot's move is pushed");
    peer.close().await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue22_two_server_processes_never_share_an_event_id() {
    let first = first_event_id().await;
    let second = first_event_id().await;
    // The same script in each: same connection number, same counter; only the process's own
    // random prefix tells them apart.
    assert!(first.ends_with("-c1-ev-0"), "{first}");
    assert!(second.ends_with("-c1-ev-0"), "{second}");
    assert_ne!(first, second, "two processes handed out the same event id");
}
