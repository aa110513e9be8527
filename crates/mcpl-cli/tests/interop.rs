//! Interoperability through the `mcpl` binary (issue 22), against stand-ins of our own that
//! behave like the independently written MCPL peers the project was run against (see
//! docs/INTEROP.md):
//!
//! - [`PushHandler`]: an MCPL client of the surface that, like agent-framework's push
//!   handler, refuses a push naming a feature set its sender did not declare and drops one
//!   whose `eventId` it saw before;
//! - [`old_server`]: an MCPL 0.4 server (like heartbeat-mcpl) that answers
//!   `featureSets/update` with -32601 and pushes anyway;
//! - [`channels_server`]: a server whose feature set needs channels (like mcpl-cc-bridge's
//!   toy server);
//! - [`hintless_host`]: a generic host without `toolHints` (like mcpl-harness) driving the
//!   arcade by its compatibility tools.

mod support;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use mcpl_protocol::jsonrpc::ErrorObject;
use mcpl_rpc::{Event, Peer, PeerConfig, RequestOptions};
use serde_json::{Map, Value, json};
use support::{Client, KillableArcade};

/// What an MCPL client's push handler saw, judged as agent-framework's does (MCPL §9.2,
/// §9.4).
#[derive(Debug, Default)]
struct PushHandler {
    /// The feature sets the sender declared in `initialize`.
    declared: BTreeSet<String>,
    /// Every push accepted, in arrival order.
    accepted: Vec<Value>,
    /// Pushes refused: they named a feature set the sender never declared.
    refused: Vec<Value>,
    /// Pushes dropped as duplicates: their `eventId` was seen before.
    duplicates: Vec<Value>,
    seen: BTreeSet<String>,
}

impl PushHandler {
    /// Judges one `push/event`; returns the answer to send.
    fn judge(&mut self, params: &Value) -> Result<Value, Value> {
        let set = params["featureSet"].as_str().unwrap_or_default();
        if !self.declared.contains(set) {
            self.refused.push(params.clone());
            return Err(json!({"code": -32602, "message": format!("Unknown feature set: {set}")}));
        }
        let id = params["eventId"].as_str().unwrap_or_default().to_owned();
        if !self.seen.insert(id) {
            self.duplicates.push(params.clone());
            return Ok(json!({"accepted": true})); // acknowledged, not delivered again
        }
        self.accepted.push(params.clone());
        Ok(json!({"accepted": true}))
    }
}

/// An MCPL client of `mcpl surface ARGS`: it grants `pushEvents` to every feature set the
/// surface declared, and its push handler judges what arrives.
struct McplClient {
    client: Client,
    pushes: Rc<RefCell<PushHandler>>,
}

impl McplClient {
    fn start(args: &[&str]) -> McplClient {
        let mut client = Client::start(
            args,
            json!({"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}}),
        );
        let declared: BTreeSet<String> =
            client.init["capabilities"]["experimental"]["mcpl"]["featureSets"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        assert!(
            !declared.is_empty(),
            "the surface declares a feature set: {}",
            client.init
        );
        let pushes = Rc::new(RefCell::new(PushHandler {
            declared: declared.clone(),
            ..PushHandler::default()
        }));
        let handler = pushes.clone();
        client.answer_requests(move |request| {
            assert_eq!(request["method"], "push/event", "{request}");
            handler.borrow_mut().judge(&request["params"])
        });
        let enabled: Map<String, Value> = declared
            .iter()
            .map(|s| (s.clone(), json!({"enabled": true})))
            .collect();
        client.request(
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"], "featureSets": enabled}),
        );
        McplClient { client, pushes }
    }

    fn call(&mut self, name: &str, args: Value) -> (String, bool) {
        self.client.call(name, args)
    }

    fn handler(&self) -> std::cell::Ref<'_, PushHandler> {
        self.pushes.borrow()
    }
}

/// A stand-in MCPL server on a WebSocket at 127.0.0.1, served by a runtime of its own.
struct StandIn {
    url: String,
    /// Lines the stand-in records (what its peer answered to its pushes).
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// How a stand-in answers.
#[derive(Clone, Copy)]
enum Kind {
    /// MCPL 0.4: no `featureSets/update` (-32601); pushes on every `beat` call.
    Old,
    /// MCPL 0.5 with a feature set that needs channels.
    Channels,
}

fn stand_in(kind: Kind) -> StandIn {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let url = format!("ws://{}", listener.local_addr().expect("addr"));
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = log.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            while let Ok((transport, _)) =
                mcpl_rpc::transport::ws::accept_next(&listener, mcpl_rpc::Limits::default()).await
            {
                tokio::spawn(serve_stand_in(kind, transport, kept.clone()));
            }
        });
    });
    StandIn { url, log }
}

async fn serve_stand_in(
    kind: Kind,
    transport: mcpl_rpc::Transport,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let mcpl = match kind {
        Kind::Old => json!({"version": "0.4", "pushEvents": true,
            "featureSets": {"heartbeat": {"description": "Beats", "uses": ["pushEvents"]}}}),
        Kind::Channels => json!({"version": "0.5", "pushEvents": true,
            "featureSets": {"chat": {"description": "Chat",
                "uses": ["pushEvents", "channels.publish"]}}}),
    };
    let mut pushes = 0;
    while let Some(event) = events.recv().await {
        let Event::Request {
            request, responder, ..
        } = event
        else {
            continue;
        };
        let _ = match request.method.as_str() {
            "initialize" => responder.respond(json!({
                "protocolVersion": request.params.as_ref()
                    .and_then(|p| p.get("protocolVersion")).cloned()
                    .unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {}, "experimental": {"mcpl": mcpl}},
                "serverInfo": {"name": "stand-in", "version": "0"}
            })),
            "featureSets/update" => match kind {
                Kind::Old => responder.method_not_found(),
                Kind::Channels => responder.respond(json!({"accepted": true})),
            },
            "tools/list" => responder.respond(json!({"tools": [{
                "name": "beat", "description": "Beat once.",
                "inputSchema": {"type": "object", "properties": {}}
            }]})),
            "tools/call" => {
                pushes += 1;
                let params = json!({"featureSet": "heartbeat",
                    "eventId": format!("hb-{pushes}"), "timestamp": "2026-01-01T00:00:00Z",
                    "payload": {"content": [{"type": "text", "text": "beat"}]}});
                let (p, l) = (peer.clone(), log.clone());
                let id = format!("beat-{pushes}");
                tokio::spawn(async move {
                    let answer = p
                        .request_value(
                            "push/event",
                            Some(params),
                            RequestOptions::timeout(Duration::from_secs(5)),
                        )
                        .await;
                    let line = match answer {
                        Ok(a) => format!("{id}: {}", a.value),
                        Err(e) => format!("{id}: {e}"),
                    };
                    if let Ok(mut l) = l.lock() {
                        l.push(line);
                    }
                });
                responder.respond(json!({"content": [{"type": "text", "text": "beat sent"}]}))
            }
            "ping" => responder.respond(json!({})),
            _ => responder.error(ErrorObject::new(
                mcpl_protocol::jsonrpc::ErrorCode::MethodNotFound,
                "no such method",
            )),
        };
    }
}

/// The sentence the agent reads about an older MCPL server's events.
const OLD_SENTENCE: &str = "events from `heartbeat` will not reach you: it speaks an older MCPL (0.4) without `featureSets/update`";

#[test]
fn mcpl_0_4_a_backend_answering_feature_sets_update_with_32601_is_one_clear_sentence_then_look() {
    let old = stand_in(Kind::Old);
    let spec = format!("heartbeat={}", old.url);
    let mut c = Client::plain(&["surface", "--server", &spec]);
    let (first, err) = c.call("beat", json!({}));
    assert!(!err, "{first}");
    assert!(first.starts_with("beat sent"), "{first}");
    assert_eq!(first.matches(OLD_SENTENCE).count(), 1, "{first}");
    assert_eq!(first.matches("will not reach you").count(), 1, "{first}");
    // Told once: the next answers do not repeat it; look shows it while it holds.
    let (second, _) = c.call("beat", json!({}));
    assert!(!second.contains("will not reach you"), "{second}");
    let (look, _) = c.call("toolsets_look", json!({}));
    assert_eq!(look.matches(OLD_SENTENCE).count(), 1, "{look}");
    // And it is true: the server's pushes were refused for want of the grant.
    let mut log = Vec::new();
    for _ in 0..500 {
        log = old.log.lock().expect("log").clone();
        if log.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(log.len() >= 2, "{log:?}");
    assert!(log.iter().all(|l| l.contains("-32002")), "{log:?}");
}

#[test]
fn a_feature_set_needing_channels_is_told_once_by_look_and_not_again() {
    let toy = stand_in(Kind::Channels);
    let spec = format!("toy={}", toy.url);
    let mut c = Client::plain(&["surface", "--server", &spec]);
    let sentence = "events of `toy`'s feature set `chat` will not reach you: it needs `channels.publish`, which this host does not grant";
    let (look, _) = c.call("toolsets_look", json!({}));
    assert_eq!(look.matches(sentence).count(), 1, "{look}");
    let (next, _) = c.call("beat", json!({}));
    assert!(!next.contains("will not reach you"), "{next}");
    let (look, _) = c.call("toolsets_look", json!({}));
    assert_eq!(look.matches(sentence).count(), 1, "{look}");
}

/// Plays a 9x9 game `instance` against the bot until the push handler has `at_least`
/// pushes; returns the answers' texts.
fn play_until_pushed(c: &mut McplClient, instance: &str, at_least: usize) -> Vec<String> {
    let mut texts = Vec::new();
    let (text, err) = c.call(
        "toolsets_open",
        json!({"toolset": "go", "instance": instance, "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    texts.push(text);
    for mv in ["E5", "C3", "G7", "C7", "G3"] {
        let (text, _) = c.call(
            "toolsets_act",
            json!({"tool": "play", "instance": instance, "args": {"move": mv}}),
        );
        texts.push(text);
        for _ in 0..300 {
            if c.handler().accepted.len() >= at_least {
                return texts;
            }
            let (text, _) = c.call("toolsets_look", json!({"toolset": "lobby"}));
            texts.push(text);
            if text_has_turn(texts.last().map(String::as_str).unwrap_or_default()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    texts
}

fn text_has_turn(text: &str) -> bool {
    text.contains("`play` in `go`")
}

#[test]
fn mcpl_9_2_9_4_surface_pushes_name_its_declared_set_are_told_once_and_survive_a_backend_restart() {
    let arcade = KillableArcade::new("interop");
    let mut c = McplClient::start(&["surface", "--server", &arcade.spec]);
    let mut texts = play_until_pushed(&mut c, "g", 1);
    let before = c.handler().accepted.len();
    assert!(before >= 1, "no push arrived:\n{}", texts.join("\n---\n"));

    // The backend dies and comes back: its ids start again, the surface's do not.
    arcade.kill();
    for _ in 0..500 {
        let (text, _) = c.call("toolsets_look", json!({}));
        texts.push(text.clone());
        if text.contains("`arcade` reconnected") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        texts.iter().any(|t| t.contains("`arcade` reconnected")),
        "{}",
        texts.join("\n---\n")
    );
    texts.extend(play_until_pushed(&mut c, "h", before + 1));

    let h = c.handler();
    assert!(h.accepted.len() > before, "no push after the restart");
    // Every push names the feature set the surface declared, and the backend in origin.
    assert!(h.refused.is_empty(), "refused: {:?}", h.refused);
    assert_eq!(h.declared, BTreeSet::from(["surface.events".to_owned()]));
    assert!(h.duplicates.is_empty(), "ids repeated: {:?}", h.duplicates);
    for p in &h.accepted {
        assert_eq!(p["origin"]["server"], "arcade", "{p}");
        assert!(
            p.get("hints").is_none() && p.get("toolset").is_none(),
            "{p}"
        );
        assert_ne!(p["eventId"], p["origin"]["eventId"], "{p}");
    }
    // The surface's ids are its own whatever the backend's are (a backend that numbers its
    // events per connection repeats them after a restart; the client never sees that).
    let ids: BTreeSet<&str> = h
        .accepted
        .iter()
        .filter_map(|p| p["eventId"].as_str())
        .collect();
    assert_eq!(ids.len(), h.accepted.len(), "{:?}", h.accepted);
    assert!(ids.iter().all(|i| i.starts_with("surface-")), "{ids:?}");
    // And the backend's own ids (server SDK: a random prefix per process) differ across its
    // restart too.
    let backend: BTreeSet<String> = h
        .accepted
        .iter()
        .map(|p| p["origin"]["eventId"].to_string())
        .collect();
    assert_eq!(backend.len(), h.accepted.len(), "{:?}", h.accepted);
    // Told once: an event pushed to this client is never news in an answer too.
    for t in &texts {
        assert!(!t.contains("event from arcade"), "told twice:\n{t}");
    }
}

#[test]
fn a_plain_client_gets_each_event_once_as_news() {
    let mut c = Client::plain(&["surface"]);
    let (text, err) = c.call(
        "toolsets_open",
        json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    let (mut all, _) = c.call(
        "toolsets_act",
        json!({"tool": "play", "instance": "g", "args": {"move": "E5"}}),
    );
    for _ in 0..300 {
        if all.contains("event from arcade") {
            break;
        }
        let (text, _) = c.call("toolsets_look", json!({"toolset": "lobby"}));
        all.push_str(&text);
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(all.matches("event from arcade").count(), 1, "{all}");
    let (text, _) = c.call("toolsets_look", json!({}));
    assert!(!text.contains("event from arcade"), "{text}");
}

#[test]
fn s11_a_hintless_generic_host_plays_by_the_compatibility_tools() {
    hintless_host();
}

/// A generic MCPL host without `toolHints`, as mcpl-harness: it sees `toolset_open`,
/// `toolset_choose` and `toolset_close` and plays through them.
fn hintless_host() {
    let mut c = Client::start(
        &["arcade"],
        json!({"experimental": {"mcpl": {"version": "0.5", "pushEvents": true}}}),
    );
    let tools = c.request("tools/list", json!({}))["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for t in ["toolset_open", "toolset_choose", "toolset_close"] {
        assert!(names.contains(&t), "{names:?}");
    }
    let (text, err) = c.call(
        "toolset_open",
        json!({"toolset": "go", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    let tools = c.request("tools/list", json!({}))["tools"].clone();
    assert!(
        tools
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "play"),
        "{tools}"
    );
    let (text, err) = c.call("play", json!({"move": "E5"}));
    assert!(!err, "{text}");
    let (text, err) = c.call("toolset_close", json!({"toolset": "go"}));
    assert!(!err, "{text}");
}
