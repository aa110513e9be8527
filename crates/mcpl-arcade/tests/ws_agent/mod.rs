//! A test agent on a real WebSocket connection to the arcade: it connects with a bearer
//! token, does the handshake, answers pushes, and records every hints object it reads and
//! its rev, from results, pushes and `tools/hints` alike, so a test can check that each
//! connection reads revs 1, 2, 3, ... (RFC-014 §6.1).

// Each test file uses its own part of the agent.
#![allow(dead_code)]

use mcpl_rpc::transport::ws;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a request, a push or a hint may take to arrive.
pub const WAIT: Duration = Duration::from_secs(30);

/// One connection: every hint rev it read (with its read-order number), every hints object
/// it read, and every push.
pub struct Agent {
    pub peer: Peer,
    revs: Arc<Mutex<Vec<(u64, u64)>>>,
    hints: mpsc::UnboundedReceiver<Value>,
    hints_tx: mpsc::UnboundedSender<Value>,
    pushes: mpsc::UnboundedReceiver<Value>,
}

fn rev_of(hints: &Value) -> Option<u64> {
    hints.get("rev").and_then(Value::as_u64)
}

impl Agent {
    /// Connects to `url` as the principal of `token`, negotiates `toolHints` and
    /// `pushEvents`, and lists tools and toolsets (the first hints ride on the latter).
    pub async fn connect(url: &str, token: &str) -> Agent {
        let auth = format!("Bearer {token}");
        let transport = ws::connect(url, &[("Authorization", auth.as_str())], Limits::default())
            .await
            .expect("the server accepts the token");
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        let revs = Arc::new(Mutex::new(Vec::new()));
        let (hints_tx, hints) = mpsc::unbounded_channel();
        let (push_tx, pushes) = mpsc::unbounded_channel();
        let (seen, to_hints) = (revs.clone(), hints_tx.clone());
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
                                let _ = to_hints.send(params["hints"].clone());
                            }
                            let _ = responder.respond(json!({"accepted": true}));
                            let _ = push_tx.send(params);
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
                            let _ = to_hints.send(params);
                        }
                    }
                    _ => {}
                }
            }
        });
        let agent = Agent {
            peer,
            revs,
            hints,
            hints_tx,
            pushes,
        };
        agent
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"experimental": {"mcpl": {
                        "version": "0.5", "toolHints": true, "pushEvents": true, "featureSets": true
                    }}},
                    "clientInfo": {"name": "arcade-ws-test", "version": "0"},
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

    /// Sends a request; records the rev of any hints its result carries; returns the result.
    pub async fn request(&self, method: &str, params: Value) -> Value {
        let answered = self
            .peer
            .request_value(method, Some(params), RequestOptions::timeout(WAIT))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let hints = &answered.value["_meta"]["mcpl/hints"];
        if let Some(rev) = rev_of(hints) {
            self.revs.lock().unwrap().push((answered.seq, rev));
            let _ = self.hints_tx.send(hints.clone());
        }
        answered.value
    }

    /// Challenges `who` to a 9x9 game; the challenger's side opens in the call's own result
    /// (§6.2). Returns that side's instance.
    pub async fn challenge(&self, who: &str) -> String {
        let challenged = self
            .request(
                "tools/call",
                json!({"name": "challenge", "arguments": {"who": who, "size": 9}}),
            )
            .await;
        assert_ne!(challenged["isError"], json!(true), "{challenged}");
        challenged["_meta"]["mcpl/hints"]["toolsets"]
            .as_array()
            .and_then(|t| t.iter().find(|e| e["state"] == "open"))
            .and_then(|e| e["instance"].as_str())
            .unwrap_or_else(|| panic!("the challenge opens the challenger's side: {challenged}"))
            .to_owned()
    }

    /// Plays `mv` in `instance`; the result must accept it and hide `play` (§6.2).
    pub async fn play(&self, instance: &str, mv: &str) {
        let played = self
            .request(
                "tools/call",
                json!({"name": "play", "arguments": {"move": mv},
                       "_meta": {"mcpl/instance": instance}}),
            )
            .await;
        assert_ne!(played["isError"], json!(true), "{mv}: {played}");
        let tools = played["_meta"]["mcpl/hints"]["tools"]
            .as_array()
            .expect("the move's own consequences ride in its result");
        assert!(
            tools
                .iter()
                .any(|t| t["name"] == "play" && t["visible"] == json!(false)),
            "{played}"
        );
    }

    /// The legal moves of the next hints (from any source) that show `play` in `instance`.
    pub async fn next_turn(&mut self, instance: &str) -> Vec<String> {
        tokio::time::timeout(WAIT, async {
            loop {
                let hints = self.hints.recv().await.expect("the agent is listening");
                if let Some(moves) = play_moves(&hints, instance) {
                    return moves;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no hints showing `play` in {instance}"))
    }

    /// The next push whose params satisfy `want`, skipping others.
    pub async fn push_where(&mut self, want: impl Fn(&Value) -> bool) -> Value {
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

    /// `board`'s text for `instance`.
    pub async fn board(&self, instance: &str) -> String {
        let shown = self
            .request(
                "tools/call",
                json!({"name": "board", "arguments": {}, "_meta": {"mcpl/instance": instance}}),
            )
            .await;
        assert_ne!(shown["isError"], json!(true), "{shown}");
        shown["content"][0]["text"]
            .as_str()
            .expect("the board is text")
            .to_owned()
    }

    /// Asserts this connection read revs 1, 2, 3, ... in read order.
    pub fn assert_revs_consecutive(&self, who: &str) {
        let mut revs = self.revs.lock().unwrap().clone();
        revs.sort();
        let revs: Vec<u64> = revs.into_iter().map(|(_, rev)| rev).collect();
        let expected: Vec<u64> = (1..=revs.len() as u64).collect();
        assert_eq!(revs, expected, "{who}'s revs in read order");
    }
}

/// The legal moves `hints` give `play` in `instance`, when they make it visible there.
pub fn play_moves(hints: &Value, instance: &str) -> Option<Vec<String>> {
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
