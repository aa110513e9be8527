//! The arcade over the SDK's tokio driver and a real (in-memory) transport: the bot's reply
//! is pushed after the play result, one rev later (§6.1, §6.2).

use mcpl_arcade::{ArcadeConfig, ArcadeServer, start};
use mcpl_protocol::jsonrpc::{Message, Notification, Request, RequestId, Response};
use mcpl_rpc::{Inbound, Limits, Peer, PeerConfig, Transport, TransportEnds, TransportKind};
use mcpl_server::Principal;
use serde_json::{Value, json};

mod bot_game;
use bot_game::{WAIT, next_push, play_first_move};

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
    let played = play_first_move(&peer, "driver-test").await;
    let rev = played["_meta"]["mcpl/hints"]["rev"]
        .as_u64()
        .expect("the result carries hints");
    let push = next_push(&mut events).await;
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
    assert_eq!(server.arcade().games().unwrap(), 1);
    peer.close().await;
}

/// A scripted host on the raw ends of a transport: it sees the server's messages in the
/// order the server wrote them.
struct Wire {
    ends: TransportEnds,
    next_id: i64,
}

impl Wire {
    async fn send(&self, message: Message) {
        self.ends
            .inbound
            .send(Inbound::Message(message))
            .await
            .expect("the server reads");
    }

    /// The next message the server wrote.
    async fn next(&mut self) -> Message {
        tokio::time::timeout(WAIT, self.ends.outbound.recv())
            .await
            .expect("the server writes within the safety timeout")
            .expect("the server's side is open")
            .message
    }

    async fn request(&mut self, method: &str, params: Value) -> (RequestId, Value) {
        self.next_id += 1;
        let id = RequestId::Number(self.next_id);
        self.send(Message::Request(Request::new(
            id.clone(),
            method,
            Some(params),
        )))
        .await;
        loop {
            if let Message::Response(r) = self.next().await {
                if r.id.as_ref() == Some(&id) {
                    let v = r
                        .outcome
                        .unwrap_or_else(|e| panic!("{method} failed: {e:?}"));
                    return (id, v);
                }
            }
        }
    }
}

/// The legal moves `hints` give `play`, if they state its definition.
fn legal_moves(hints: &Value) -> Option<Vec<String>> {
    let play = hints["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == "play")?;
    if play["visible"] == false {
        return Some(Vec::new());
    }
    let moves = play["definition"]["inputSchema"]["properties"]["move"]["enum"].as_array()?;
    Some(
        moves
            .iter()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect(),
    )
}

/// An arcade serving alice over raw transport ends, with `vs-bot` open on 9x9 against a
/// quick bot. Returns the server (keep it: its worker stops when it drops), the wire, the
/// serving task and the legal moves the open stated.
async fn game_vs_bot() -> (
    ArcadeServer,
    Wire,
    tokio::task::JoinHandle<Result<(), mcpl_server::Error>>,
    Vec<String>,
) {
    let mut config = ArcadeConfig::default();
    config.bot.playouts = 16;
    config.bot.resign_below = None;
    config.hint_playouts = 16;
    let server = start(config).expect("the arcade starts");
    let (transport, ends) = Transport::from_channels(TransportKind::Stdio, Limits::default());
    let runtime = server.runtime().clone();
    let connection = runtime.next_connection();
    let serving = tokio::spawn(async move {
        runtime
            .serve(transport, Principal::authenticated("alice"), connection)
            .await
    });
    let mut wire = Wire { ends, next_id: 0 };
    wire.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18",
               "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                   "pushEvents": true, "featureSets": true}}},
               "clientInfo": {"name": "order-test", "version": "1"}}),
    )
    .await;
    wire.send(Message::Notification(Notification::new(
        "notifications/initialized",
        None,
    )))
    .await;
    wire.request(
        "featureSets/update",
        json!({"effectiveCapabilities": ["pushEvents"]}),
    )
    .await;
    let (_, opened) = wire
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": "vs-bot", "options": {"size": 9}}),
        )
        .await;
    let legal = legal_moves(&opened["_meta"]["mcpl/hints"]).expect("the open states play");
    (server, wire, serving, legal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s6_1_over_many_moves_each_bot_push_follows_its_result_with_the_next_rev() {
    let (_server, mut wire, serving, mut legal) = game_vs_bot().await;
    let mut replies = 0;
    for turn in 0..30usize {
        let (tool, args) = if legal.is_empty() {
            ("pass", json!({}))
        } else {
            ("play", json!({"move": legal[(turn * 7) % legal.len()]}))
        };
        wire.next_id += 1;
        let id = RequestId::Number(wire.next_id);
        wire.send(Message::Request(Request::new(
            id.clone(),
            "tools/call",
            Some(json!({"name": tool, "arguments": args,
                        "_meta": {"mcpl/instance": "vs-bot"}})),
        )))
        .await;
        // Read in write order: the result must come first, then the bot's push.
        let result = match wire.next().await {
            Message::Response(r) if r.id.as_ref() == Some(&id) => {
                r.outcome.expect("the move is accepted")
            }
            other => panic!(
                "turn {turn}: expected the result first, got {}",
                other.to_json()
            ),
        };
        let rev = result["_meta"]["mcpl/hints"]["rev"]
            .as_u64()
            .unwrap_or_else(|| panic!("turn {turn}: the result carries hints: {result}"));
        let push = match wire.next().await {
            Message::Request(r) if r.method == "push/event" => {
                wire.send(Message::Response(Response::ok(r.id.clone(), json!({}))))
                    .await;
                r.params.expect("push params")
            }
            other => panic!(
                "turn {turn}: expected the bot's push, got {}",
                other.to_json()
            ),
        };
        assert_eq!(
            push["hints"]["rev"].as_u64(),
            Some(rev + 1),
            "turn {turn}: the bot's push takes the rev after the result's"
        );
        replies += 1;
        if push["hints"]["toolsets"].as_array().is_some_and(|t| {
            t.iter()
                .any(|e| e["state"] == "closed" || e.get("ended").is_some())
        }) {
            break; // the game ended (two passes)
        }
        legal = legal_moves(&push["hints"]).expect("the bot's push states play");
    }
    assert!(replies >= 10, "only {replies} bot replies were checked");
    drop(wire);
    let _ = tokio::time::timeout(WAIT, serving).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hint_thinks_off_the_connection_task_and_answers() {
    let (_server, mut wire, serving, _) = game_vs_bot().await;
    let (_, hint) = wire
        .request(
            "tools/call",
            json!({"name": "hint", "arguments": {"game": "vs-bot"}}),
        )
        .await;
    let text = hint["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("The bot would "), "{hint}");
    assert_ne!(hint["isError"], true);
    let (_, bad) = wire
        .request(
            "tools/call",
            json!({"name": "hint", "arguments": {"game": "nowhere"}}),
        )
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
    drop(wire);
    let _ = tokio::time::timeout(WAIT, serving).await;
}
