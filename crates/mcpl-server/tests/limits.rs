//! Configurable limits: open instances per principal and pending events per connection.
//! Exceeding each gives a clear refusal and loses nothing else.

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, RequestId, Response};
use mcpl_server::{Event, Principal, Server, ServerConfig, Update, WallClock};
use serde_json::json;
use std::time::{Duration, Instant, UNIX_EPOCH};

fn world(config: impl FnOnce(&mut ServerConfig)) -> World {
    let t0 = Instant::now();
    let mut cfg = ServerConfig::new(WallClock::new(
        t0,
        UNIX_EPOCH + Duration::from_secs(1_769_164_200),
    ));
    config(&mut cfg);
    let store = std::sync::Arc::new(mcpl_server::MemoryStore::new());
    let server = Server::with_store(
        arcade().build().expect("fixture declarations"),
        cfg,
        store.clone(),
    );
    World::with_server(server, store, t0)
}

fn open(w: &mut World, c: usize, instance: &str) -> Result<serde_json::Value, String> {
    w.request(
        c,
        "toolsets/open",
        json!({"toolset": "game", "instance": instance, "options": {"size": 9}}),
    )
    .map_err(|e| format!("{} {}", e.code, e.message))
}

#[test]
fn limits_open_instances_per_principal_refuses_the_next_open_and_keeps_the_rest() {
    let mut w = world(|c| c.max_open_instances = 2);
    let ada = w.connect(Principal::authenticated("ada"), true, true);
    let bob = w.connect(Principal::authenticated("bob"), true, true);
    open(&mut w, ada, "g1").unwrap();
    open(&mut w, ada, "g2").unwrap();

    let err = open(&mut w, ada, "g3").unwrap_err();
    assert!(err.starts_with("-32602 "), "{err}");
    assert!(
        err.contains("`g3`") || err.contains("g3"),
        "names the instance: {err}"
    );
    assert!(err.contains("2 instances are open"), "{err}");
    assert!(
        err.contains("max_open_instances"),
        "names the setting: {err}"
    );

    // Nothing else is lost: both games stay open, an adoption and a toolset without
    // instances still open, and another principal has its own allowance.
    assert_eq!(w.open_instances(ada), ["g1", "g2"]);
    let adopted = open(&mut w, ada, "g1").unwrap();
    assert_eq!(adopted["adopted"], true);
    w.request(ada, "toolsets/open", json!({"toolset": "notes"}))
        .expect("a toolset without instances is not counted");
    open(&mut w, bob, "g1").expect("bob has his own allowance");

    // Closing one makes room.
    w.request(
        ada,
        "toolsets/close",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .unwrap();
    open(&mut w, ada, "g3").expect("room after a close");
    assert_eq!(w.open_instances(ada), ["g2", "g3"]);
}

#[test]
fn limits_open_instances_refuse_compat_opens_with_a_tool_error() {
    let mut w = world(|c| c.max_open_instances = 1);
    let plain = w.connect(Principal::authenticated("ada"), false, false);
    let first = w.call(
        plain,
        "toolset_open",
        json!({"toolset": "game", "instance": "a", "options": {"size": 9}}),
        None,
    );
    assert_ne!(first["isError"], true, "{first}");
    let second = w.call(
        plain,
        "toolset_open",
        json!({"toolset": "game", "instance": "b", "options": {"size": 9}}),
        None,
    );
    assert_eq!(second["isError"], true, "{second}");
    assert!(text(&second).contains("max_open_instances"), "{second}");
}

/// A change explained by an event, for `principal`'s game `g1`.
fn bot_moves() -> Update {
    let mut u = Update::new();
    u.instance("game", "g1").show("play");
    u.event(Event::text("White played E5.").about("game", Some("g1")));
    u
}

fn push_ids(msgs: &[Message]) -> Vec<RequestId> {
    msgs.iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == "push/event" => Some(r.id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn limits_pending_events_per_connection_send_hints_alone_past_the_limit() {
    let mut w = world(|c| c.max_pending_events = 2);
    let ada = Principal::authenticated("ada");
    let c = w.connect(ada.clone(), true, true);
    open(&mut w, c, "g1").unwrap();
    w.take(c);

    // The host answers no push: two go out, the third change goes as `tools/hints`.
    for _ in 0..3 {
        w.apply(&ada, bot_moves());
    }
    let out = w.take(c);
    assert_eq!(methods(&out), ["push/event", "push/event", "tools/hints"]);
    assert_eq!(w.conns[c].session.pending_events(), 2);
    // Nothing lost: every change took the next rev and carries its hints.
    let revs = revs(&out);
    assert_eq!(revs.len(), 3, "{out:?}");
    assert!(revs.windows(2).all(|p| p[1] == p[0] + 1), "{revs:?}");
    assert_eq!(
        hints_of(&out[2]).unwrap()["tools"][0]["name"],
        "play",
        "the hints ride alone"
    );

    // An answer frees a place: the next change is a push again.
    let first = push_ids(&out)[0].clone();
    let now = w.now;
    w.conns[c]
        .session
        .handle_message(now, Message::Response(Response::ok(first, json!({}))));
    assert_eq!(w.conns[c].session.pending_events(), 1);
    w.apply(&ada, bot_moves());
    assert_eq!(methods(&w.take(c)), ["push/event"]);

    // Requests still work on the connection.
    assert_eq!(w.open_instances(c), ["g1"]);
}
