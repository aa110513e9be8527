//! A principal's changes reaching its other sessions (§5.6): whose changes a session takes,
//! when it tells them, and what a restatement replaces. Each test here pins a rule a mutant
//! of `session/mod.rs` or `session/step.rs` broke without another test noticing.

mod common;

use common::*;
use mcpl_protocol::rfc014::{InstanceName, ToolsetName};
use mcpl_server::{OpenKey, PrincipalChange, Update, Versioned};
use serde_json::json;
use std::sync::Arc;

fn game(instance: &str) -> OpenKey {
    OpenKey::new(
        ToolsetName::parse("game").unwrap(),
        Some(InstanceName::parse(instance).unwrap()),
    )
}

#[test]
fn s5_6_a_shared_change_of_another_principal_is_not_taken() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(bob(), true, true);
    w.open_game(b, "g1");
    w.take(b);

    // Bob's change, with Bob's state as stored, handed to Ada's session as a driver hands
    // one shared change to every session.
    let mut hide = Update::new();
    hide.instance("game", "g1").hide("play");
    let change = w.commit(&bob(), &hide).unwrap();
    assert_eq!(
        change.state().map(|s| s.version),
        Some(w.store.load_now(&bob()).version),
        "the change carries Bob's state as stored"
    );
    let now = w.now;
    w.conns[a]
        .session
        .handle_shared_change(now, Arc::new(change));
    w.drive();
    assert!(w.take(a).is_empty(), "Ada is told nothing of Bob's games");
    assert!(
        w.open_instances(a).is_empty(),
        "and her session keeps her own state, not Bob's"
    );
}

#[test]
fn s5_6_a_disconnected_session_tells_nothing_more() {
    let mut w = World::arcade();
    let first = w.connect(ada(), true, true);
    let second = w.connect(ada(), true, true);
    w.open_game(first, "g1");
    w.take(first);
    w.take(second);
    let now = w.now;
    w.conns[second].session.handle_disconnect(now);
    w.drive();
    w.take(second);
    let rev = w.conns[second].session.rev();

    let mut hide = Update::new();
    hide.instance("game", "g1").hide("play");
    w.apply(&ada(), hide);
    assert!(
        w.take(second).is_empty(),
        "a closed connection is written nothing"
    );
    assert_eq!(
        w.conns[second].session.rev(),
        rev,
        "nor does its session state the change to itself"
    );
    assert_eq!(
        revs(&w.take(first)),
        [2],
        "the connection still open is told (rev 1 was the open)"
    );
}

#[test]
fn s5_6_a_restatement_replaces_the_sessions_copy_even_with_an_older_version() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let before = w.store.load_now(&ada());
    w.open_game(h, "g1");
    assert_eq!(w.open_instances(h), ["g1"]);
    w.take(h);

    // After an outage the store holds an older state, without g1 (the open's write was
    // lost): the restatement wins over the session's newer copy.
    let older = Versioned {
        state: before.state,
        version: before.version,
    };
    assert!(older.version < w.store.load_now(&ada()).version);
    let restated = PrincipalChange::restate(ada(), [game("g1")], []).with_state(older);
    let now = w.now;
    w.conns[h].session.handle_principal_change(now, &restated);
    w.drive();
    let msgs = w.take(h);
    let hints = msgs.iter().find_map(hints_of).expect("g1 is restated");
    let g1 = hints["toolsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["instance"] == json!("g1"))
        .unwrap_or_else(|| panic!("an entry for g1 in {hints}"));
    assert_eq!(g1["state"], json!("closed"), "{hints}");
    assert!(w.open_instances(h).is_empty());
}

#[test]
fn a_state_fed_while_a_step_waits_for_its_write_runs_nothing_queued_behind_it() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    // The first open's step waits for its write; the second queues behind it.
    let first = w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    let second = w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g2"}),
    );
    // A state fed now (a driver's late load) must not start the queued step early.
    let stored = w.store.load_now(&ada());
    let now = w.now;
    w.conns[h].session.handle_state(now, stored);
    w.drive();
    for id in [&first, &second] {
        assert!(w.response(h, id).unwrap().is_ok());
    }
    let state = w.state(&ada());
    assert!(state.is_open(&game("g1")) && state.is_open(&game("g2")));
    assert_eq!(
        revs(&w.take(h)),
        [1, 2],
        "each open on its own rev, in order"
    );
}

#[test]
fn an_outcome_for_a_finished_call_is_refused_at_once_even_while_a_write_is_pending() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.hold_calls = true;
    for _ in 0..2 {
        w.send_request(
            h,
            "tools/call",
            json!({"name": "board", "arguments": {}, "_meta": {"mcpl/instance": "g1"}}),
        );
    }
    w.drive();
    assert_eq!(w.held.len(), 2);
    let finished = w.held[0].1.id;
    w.complete_held(0);
    let (_, other) = w.held.remove(0);

    // A step now waits for its write; an outcome for the finished call must still be
    // refused at once, not queued behind the step and dropped later.
    w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g2"}),
    );
    let outcome = mcpl_server::Outcome {
        context: other.context,
        reply: mcpl_server::Reply::Tool(mcpl_protocol::mcp::CallToolResult::text("again")),
    };
    let now = w.now;
    let refused = w.conns[h].session.handle_call_done(now, finished, outcome);
    assert!(
        matches!(refused, Err(mcpl_server::Error::UnknownCall(id)) if id == finished),
        "{refused:?}"
    );
}
