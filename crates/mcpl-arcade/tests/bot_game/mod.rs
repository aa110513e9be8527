//! A host's first moves in a game against the arcade's bot, over any transport: the handshake
//! with `pushEvents` granted, a 9x9 game `vs-bot` opened, the move E5 played; then the push
//! that carries the bot's answer. Shared by the arcade's driver test and, by path, the `mcpl`
//! binary's event-id test (`crates/mcpl-cli/tests/event_ids.rs`).

#![allow(dead_code)] // each test file uses its own part

use mcpl_rpc::{Event, Events, Peer, RequestOptions};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a request or the bot's push may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// Sends a request and returns its result; a failure fails the test.
pub async fn request(peer: &Peer, method: &str, params: Value) -> Value {
    peer.request_value(method, Some(params), RequestOptions::timeout(WAIT))
        .await
        .unwrap_or_else(|e| panic!("{method} failed: {e}"))
        .value
}

/// Initializes as `client` (toolHints and pushEvents), grants `pushEvents`, lists the
/// toolsets, opens the 9x9 game `vs-bot` and plays E5 in it; returns the play's result.
pub async fn play_first_move(peer: &Peer, client: &str) -> Value {
    request(
        peer,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
               "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                   "pushEvents": true, "featureSets": true}}},
               "clientInfo": {"name": client, "version": "1"}}),
    )
    .await;
    peer.notify_value("notifications/initialized", None)
        .expect("the peer is open");
    request(
        peer,
        "featureSets/update",
        json!({"effectiveCapabilities": ["pushEvents"]}),
    )
    .await;
    request(peer, "toolsets/list", json!({})).await;
    request(
        peer,
        "toolsets/open",
        json!({"toolset": "go", "instance": "vs-bot", "options": {"size": 9}}),
    )
    .await;
    request(
        peer,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "vs-bot"}}),
    )
    .await
}

/// Waits for the next `push/event` (the bot's answer), accepts it and returns its params.
pub async fn next_push(events: &mut Events) -> Value {
    tokio::time::timeout(WAIT, async {
        loop {
            match events.recv().await {
                Some(Event::Request {
                    request, responder, ..
                }) if request.method == "push/event" => {
                    let _ = responder.respond(json!({}));
                    break request.params.unwrap_or_default();
                }
                Some(_) => continue,
                None => panic!("the connection closed before the bot moved"),
            }
        }
    })
    .await
    .expect("the bot answers")
}
