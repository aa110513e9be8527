//! Steps: a session takes the principal's state as input and hands its changes out as a
//! write set with the version it read; a conflict runs the step again on the newer state; an
//! unreachable store refuses opens (§5.2, §5.6).

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_server::{ConnectionId, Effect, Versioned, Written};
use serde_json::{Value, json};

fn request(id: i64, method: &str, params: Value) -> Message {
    Message::Request(Request::new(RequestId::Number(id), method, Some(params)))
}

fn initialize() -> Value {
    json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
        "clientInfo": {"name": "t", "version": "1"}})
}

/// Every effect queued now, in order.
fn effects(s: &mut mcpl_server::Session) -> Vec<Effect> {
    std::iter::from_fn(|| s.poll_effect()).collect()
}

#[test]
fn s5_6_a_session_runs_with_no_store_at_all() {
    // The state comes in by hand and the write set goes out as a value: nothing else is read
    // or written anywhere.
    let w = World::arcade();
    let mut s = w.server.session(ada(), ConnectionId(1), w.now);
    let asked = effects(&mut s);
    assert!(matches!(asked.as_slice(), [Effect::Load(p)] if *p == ada()));
    // Input before the state arrives waits for it.
    s.handle_message(w.now, request(1, "initialize", initialize()));
    assert!(
        s.poll_effect().is_none(),
        "nothing runs before the state is in"
    );
    s.handle_state(w.now, Versioned::default());
    // `initialize` read the state; seeding the default-open `tips` is this step's write.
    let out = effects(&mut s);
    let [Effect::Write(write)] = out.as_slice() else {
        panic!("the step's write comes first, alone: {out:?}");
    };
    assert_eq!(write.read, 0);
    let written = write.state.as_ref().expect("a state to store");
    assert!(written.open.keys().any(|k| k.toolset.as_str() == "tips"));
    s.handle_written(w.now, 1);
    let out = effects(&mut s);
    assert!(
        matches!(out.as_slice(), [Effect::Send(Message::Response(r))] if r.id == Some(RequestId::Number(1))),
        "the answer is released once the write is acknowledged: {out:?}"
    );
    assert_eq!(s.state_version(), 1);

    // An open marks the instance opening in a write from version 1, then runs app code.
    s.handle_message(
        w.now,
        request(
            2,
            "toolsets/open",
            json!({"toolset": "game", "instance": "g1"}),
        ),
    );
    let out = effects(&mut s);
    let [Effect::Write(write)] = out.as_slice() else {
        panic!("{out:?}");
    };
    assert_eq!(write.read, 1);
    s.handle_written(w.now, 2);
    assert_eq!(s.state_version(), 2, "the copy is the state as written");
    assert!(matches!(effects(&mut s).as_slice(), [Effect::Call(_)]));
}

#[test]
fn s5_2_a_write_conflict_runs_the_step_again_on_the_newer_state() {
    // Two connections of ada read version 1; the first opens g1. The second's open of g1,
    // computed from the older copy, conflicts; run again on the stored state it finds g1
    // being opened and says so, and takes no rev.
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(ada(), true, true);
    w.hold_calls = true;
    w.send_request(
        a,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    // Only a's effects: its write lands, its app call is held.
    while let Some(effect) = w.conns[a].session.poll_effect() {
        match effect {
            Effect::Write(write) => w.write(a, &write),
            Effect::Call(call) => w.held.push((a, *call)),
            _ => {}
        }
    }
    let stale = w.conns[b].session.state_version();
    assert!(
        stale < w.store.load_now(&ada()).version,
        "b holds an older copy"
    );
    let id = w.send_request(
        b,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    let Some(Effect::Write(write)) = w.conns[b].session.poll_effect() else {
        panic!("b's step asks to write");
    };
    assert_eq!(write.read, stale);
    let Written::Conflict(now) = w.store.write_now(&write) else {
        panic!("a wrote first");
    };
    let t = w.now;
    w.conns[b].session.handle_conflict(t, now);
    w.drive();
    let err = w.response(b, &id).expect("answered").unwrap_err();
    assert!(
        err.message.contains("still being opened"),
        "{}",
        err.message
    );
    assert_eq!(
        w.conns[b].session.rev().get(),
        0,
        "the first run's rev was put back"
    );
    assert_eq!(w.held.len(), 1, "only a's open handler runs");
}

#[test]
fn s5_6_an_unreachable_store_refuses_opens_saying_so_and_changes_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let id = w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    let Some(Effect::Write(_)) = w.conns[h].session.poll_effect() else {
        panic!("the open asks to write");
    };
    let t = w.now;
    w.conns[h]
        .session
        .handle_store_error(t, "connection refused");
    w.drive();
    let err = w.response(h, &id).expect("answered").unwrap_err();
    assert!(
        err.message
            .contains("store is unreachable (connection refused)"),
        "{}",
        err.message
    );
    assert!(w.held.is_empty() && w.conns[h].session.calls_in_flight() == 0);
    assert!(
        !w.state(&ada())
            .open
            .keys()
            .any(|k| k.toolset.as_str() == "game"),
        "nothing opened"
    );
    // The next open tries the store again.
    let r = w.request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn issue22_event_ids_carry_the_drivers_prefix_and_the_connection() {
    // A driver passes a prefix of its own process (random per process), so ids never repeat
    // across connections, processes or restarts.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.conns[h].session.set_event_prefix("p7");
    let mut u = mcpl_server::Update::new();
    u.event(mcpl_server::Event::text("hello"));
    w.apply(&ada(), u);
    let msgs = w.take(h);
    let push = msgs
        .iter()
        .find_map(|m| match m {
            Message::Request(r) if r.method == "push/event" => r.params.clone(),
            _ => None,
        })
        .expect("a push");
    assert_eq!(push["eventId"], json!("p7-c1-ev-0"));
}

/// Whether two state borrows are the same value in memory (not merely equal).
fn same(a: &mcpl_server::PrincipalState, b: &mcpl_server::PrincipalState) -> bool {
    std::ptr::eq(a, b)
}

#[test]
fn s5_6_a_change_shares_one_copy_of_the_state_with_every_session_of_the_principal() {
    // The state travels copy on write: the store, the writing session and each session the
    // change reaches hold the same value, so a change costs no copy per receiving
    // connection.
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(ada(), true, false);
    let c = w.connect(ada(), true, false);
    w.request(
        a,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .expect("the open succeeds");
    for other in [b, c] {
        let got = w.take(other);
        assert_eq!(methods(&got), ["tools/hints"], "{got:?}");
    }
    let stored = w.store.load_now(&ada());
    assert_eq!(stored.state.instances_of("game").len(), 1);
    for conn in [a, b, c] {
        assert!(
            same(w.conns[conn].session.state(), &stored.state),
            "connection {conn} holds its own copy"
        );
    }
    // A step that changes nothing keeps sharing.
    w.request(b, "ping", json!({})).expect("ping answers");
    assert!(same(w.conns[b].session.state(), &stored.state));
}

#[test]
fn s5_6_an_edit_copies_the_shared_state_and_leaves_the_other_holders_as_they_were() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(ada(), true, false);
    w.request(
        a,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .expect("the open succeeds");
    let before = w.store.load_now(&ada());
    w.request(
        b,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g2"}),
    )
    .expect("the open succeeds");
    // The value read before is untouched: the edit went to a copy.
    let names: Vec<String> = before
        .state
        .instances_of("game")
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(names, ["g1"]);
    let after = w.store.load_now(&ada());
    assert_eq!(after.state.instances_of("game").len(), 2);
    assert!(!same(&before.state, &after.state));
    assert!(same(w.conns[a].session.state(), &after.state));
}

#[test]
fn s5_2_adopting_an_open_instance_changes_nothing_and_writes_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    let version = w.store.load_now(&ada()).version;
    w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    let out = effects(&mut w.conns[h].session);
    assert!(
        !out.iter().any(|e| matches!(e, Effect::Write(_))),
        "an adoption asks for no write: {out:?}"
    );
    assert!(
        matches!(out.as_slice(), [Effect::Send(Message::Response(_))]),
        "{out:?}"
    );
    assert_eq!(w.store.load_now(&ada()).version, version);
}
