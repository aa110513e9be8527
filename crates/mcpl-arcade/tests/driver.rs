//! The arcade over the SDK's tokio driver and a real (in-memory) transport: the bot's reply
//! is pushed after the play result, one rev later (§6.1, §6.2).

use std::time::Duration;

use mcpl_arcade::{ArcadeConfig, start};
use mcpl_rpc::{Event, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::Principal;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

async fn request(peer: &Peer, method: &str, params: Value) -> Value {
    peer.request_value(method, Some(params), RequestOptions::timeout(WAIT))
        .await
        .unwrap_or_else(|e| panic!("{method} failed: {e}"))
        .value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s6_2_the_bots_move_is_pushed_after_the_play_result_with_the_next_rev() {
    let mut config = ArcadeConfig::default();
    config.bot.playouts = 50;
    config.bot.resign_below = None;
    let server = start(config).expect("the arcade starts");
    let (client, transport) = Transport::memory_pair();
    let runtime = server.runtime().clone();
    let connection = runtime.next_connection();
    tokio::spawn(async move {
        let _ = runtime
            .serve(transport, Principal::authenticated("alice"), connection)
            .await;
    });

    let (peer, mut events) = Peer::start(client, PeerConfig::default());
    request(
        &peer,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
               "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                   "pushEvents": true, "featureSets": true}}},
               "clientInfo": {"name": "driver-test", "version": "1"}}),
    )
    .await;
    peer.notify_value("notifications/initialized", None)
        .expect("the peer is open");
    request(
        &peer,
        "featureSets/update",
        json!({"effectiveCapabilities": ["pushEvents"]}),
    )
    .await;
    request(&peer, "toolsets/list", json!({})).await;
    request(
        &peer,
        "toolsets/open",
        json!({"toolset": "go", "instance": "vs-bot", "options": {"size": 9}}),
    )
    .await;
    let played = request(
        &peer,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "E5"}, "_meta": {"mcpl/instance": "vs-bot"}}),
    )
    .await;
    let rev = played["_meta"]["mcpl/hints"]["rev"]
        .as_u64()
        .expect("the result carries hints");

    let push = tokio::time::timeout(WAIT, async {
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
    .expect("the bot answers");
    let hints = &push["hints"];
    assert_eq!(hints["rev"].as_u64(), Some(rev + 1));
    let play = hints["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "play"))
        .expect("play is stated");
    assert_eq!(play["visible"], true);
    let moves = play["definition"]["inputSchema"]["properties"]["move"]["enum"]
        .as_array()
        .expect("the new legal moves")
        .len();
    assert_eq!(moves, 79);
    assert_eq!(server.arcade().games(), 1);
    peer.close().await;
}
