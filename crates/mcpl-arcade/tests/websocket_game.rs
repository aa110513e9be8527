//! A game between two principals over real WebSocket connections: a challenge, the suggestion
//! it pushes, the accepting open, and moves that reach the other side as pushes with hints.
//! Every hint-carrying message on each connection takes the next rev (RFC-014 §6.1), whatever
//! carried it: results, pushes or `tools/hints`.

use mcpl_arcade::{ArcadeConfig, start};
use mcpl_rpc::transport::ws;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions};
use mcpl_server::{Identity, TokenMap};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(20);

/// One agent's connection: every hint rev it read, with the read-order number of its frame.
struct Agent {
    peer: Peer,
    revs: Arc<Mutex<Vec<(u64, u64)>>>,
    pushes: mpsc::UnboundedReceiver<Value>,
}

fn rev_of(hints: &Value) -> Option<u64> {
    hints.get("rev").and_then(Value::as_u64)
}

impl Agent {
    async fn connect(url: &str, token: &str) -> Agent {
        let auth = format!("Bearer {token}");
        let transport = ws::connect(url, &[("Authorization", auth.as_str())], Limits::default())
            .await
            .expect("the arcade accepts the token");
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        let revs = Arc::new(Mutex::new(Vec::new()));
        let (tx, pushes) = mpsc::unbounded_channel();
        let seen = revs.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Request {
                        seq,
                        request,
                        responder,
                    } => {
                        let params = request.params.clone().unwrap_or(Value::Null);
                        if request.method == "push/event" {
                            // §6.1: hints apply when read, before any decision on the event.
                            if let Some(rev) = rev_of(&params["hints"]) {
                                seen.lock().unwrap().push((seq, rev));
                            }
                            let _ = responder.respond(json!({"accepted": true}));
                            let _ = tx.send(params);
                        } else {
                            let _ = responder.respond(json!({}));
                        }
                    }
                    Event::Notification { seq, notification }
                        if notification.method == "tools/hints" =>
                    {
                        let params = notification.params.unwrap_or(Value::Null);
                        if let Some(rev) = rev_of(&params) {
                            seen.lock().unwrap().push((seq, rev));
                        }
                    }
                    _ => {}
                }
            }
        });
        let agent = Agent { peer, revs, pushes };
        agent
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"experimental": {"mcpl": {
                        "version": "0.5", "toolHints": true, "pushEvents": true, "featureSets": true
                    }}},
                    "clientInfo": {"name": "websocket-game-test", "version": "0"},
                }),
            )
            .await;
        agent
            .peer
            .notify_value("notifications/initialized", None)
            .unwrap();
        agent
            .request(
                "featureSets/update",
                json!({"effectiveCapabilities": ["pushEvents"]}),
            )
            .await;
        agent.request("tools/list", json!({})).await;
        let list = agent.request("toolsets/list", json!({})).await;
        assert!(rev_of(&list["_meta"]["mcpl/hints"]).is_some(), "{list}");
        agent
    }

    /// Sends a request, records the rev of any hints its result carries, returns the result.
    async fn request(&self, method: &str, params: Value) -> Value {
        let answered = self
            .peer
            .request_value(method, Some(params), RequestOptions::timeout(WAIT))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        if let Some(rev) = rev_of(&answered.value["_meta"]["mcpl/hints"]) {
            self.revs.lock().unwrap().push((answered.seq, rev));
        }
        answered.value
    }

    /// The next push whose params satisfy `want`, skipping others.
    async fn push_where(&mut self, want: impl Fn(&Value) -> bool) -> Value {
        tokio::time::timeout(WAIT, async {
            loop {
                let push = self.pushes.recv().await.expect("the connection stays up");
                if want(&push) {
                    return push;
                }
            }
        })
        .await
        .expect("the push arrives")
    }

    /// Asserts this connection read revs 1, 2, 3, ... in read order.
    fn assert_revs_consecutive(&self, who: &str) {
        let mut revs = self.revs.lock().unwrap().clone();
        revs.sort();
        let revs: Vec<u64> = revs.into_iter().map(|(_, rev)| rev).collect();
        let expected: Vec<u64> = (1..=revs.len() as u64).collect();
        assert_eq!(revs, expected, "{who}'s revs in read order");
    }
}

/// The legal moves `hints` gives `play` in `instance`, when it makes `play` visible there.
fn play_moves(hints: &Value, instance: &str) -> Option<Vec<String>> {
    let entry = hints["tools"].as_array()?.iter().find(|t| {
        t["name"] == "play" && t["instance"] == instance && t["visible"] == json!(true)
    })?;
    let moves = entry["definition"]["inputSchema"]["properties"]["move"]["enum"].as_array()?;
    Some(
        moves
            .iter()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_principals_play_over_websocket_with_consecutive_revs() {
    let arcade = start(ArcadeConfig::default()).expect("the arcade builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/", listener.local_addr().unwrap());
    let identity = Identity::Tokens(TokenMap::new().with("t-ada", "ada").with("t-bob", "bob"));
    let runtime = arcade.runtime().clone();
    tokio::spawn(async move { runtime.serve_ws(listener, identity).await });

    let mut ada = Agent::connect(&url, "t-ada").await;
    let mut bob = Agent::connect(&url, "t-bob").await;

    // Ada challenges Bob: her side opens in the call's own result (§6.2).
    let challenged = ada
        .request(
            "tools/call",
            json!({"name": "challenge", "arguments": {"who": "bob", "size": 9}}),
        )
        .await;
    assert_ne!(challenged["isError"], json!(true), "{challenged}");
    let ada_game = challenged["_meta"]["mcpl/hints"]["toolsets"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["state"] == "open"))
        .and_then(|e| e["instance"].as_str())
        .expect("the challenge opens Ada's side")
        .to_owned();

    // Bob is pushed a suggestion; it opens nothing by itself (§7).
    let invitation = bob.push_where(|p| p["hints"]["suggest"].is_array()).await;
    let suggest = &invitation["hints"]["suggest"][0];
    assert_eq!(suggest["action"], "open");
    assert_eq!(suggest["toolset"], "go");
    let bob_game = suggest["instance"].as_str().unwrap().to_owned();
    let listed = bob.request("toolsets/list", json!({})).await;
    assert!(
        listed["open"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["toolset"] != "go"),
        "a suggestion opened something: {listed}"
    );

    // Bob accepts by opening the suggested instance with the suggested options.
    let opened = bob
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": bob_game, "options": suggest["options"]}),
        )
        .await;
    assert_eq!(opened["instance"], bob_game.as_str());

    // Ada (Black) is told by a push that carries the hints showing `play` with its enum.
    let mut mover_moves = loop {
        let push = ada.push_where(|p| p["hints"].is_object()).await;
        if let Some(moves) = play_moves(&push["hints"], &ada_game) {
            break moves;
        }
    };
    assert_eq!(mover_moves.len(), 81, "an empty 9x9 board");

    // Three moves, alternating; each reaches the other side as a push with hints.
    for turn in 0..3 {
        let (mover, other, mover_game, other_game) = if turn % 2 == 0 {
            (&mut ada, &mut bob, ada_game.as_str(), bob_game.as_str())
        } else {
            (&mut bob, &mut ada, bob_game.as_str(), ada_game.as_str())
        };
        let mv = mover_moves[turn * 7 % mover_moves.len()].clone();
        let played = mover
            .request(
                "tools/call",
                json!({"name": "play", "arguments": {"move": mv},
                       "_meta": {"mcpl/instance": mover_game}}),
            )
            .await;
        assert_ne!(played["isError"], json!(true), "{played}");
        let hidden = played["_meta"]["mcpl/hints"]["tools"]
            .as_array()
            .expect("the move's own consequences ride in its result");
        assert!(
            hidden
                .iter()
                .any(|t| t["name"] == "play" && t["visible"] == json!(false)),
            "{played}"
        );
        mover_moves = loop {
            let push = other.push_where(|p| p["hints"].is_object()).await;
            if let Some(moves) = play_moves(&push["hints"], other_game) {
                break moves;
            }
        };
        assert!(
            !mover_moves.contains(&mv),
            "{mv} is taken, so it is no longer a legal move"
        );
    }

    ada.assert_revs_consecutive("ada");
    bob.assert_revs_consecutive("bob");
    ada.peer.close().await;
    bob.peer.close().await;
}
