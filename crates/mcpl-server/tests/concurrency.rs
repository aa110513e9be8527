//! Concurrency: many calls in flight on one connection and many connections of one
//! principal, completed in any order, with server pushes and list reads in between. Revs stay
//! consecutive per connection (§6.1), every request is answered exactly once, and a host that
//! applies every change in rev order ends where a fresh full statement is (§5.3).

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, RequestId};
use mcpl_server::{Event, Update};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

type Visible = BTreeSet<(String, Option<String>)>;

fn visible_set(hints: &Value) -> Visible {
    hints["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["visible"] == json!(true))
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["instance"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// What a minimal host does with a message's hints: a full statement replaces, anything else
/// sets the values it states.
fn apply_hints(model: &mut Visible, msg: &Message) {
    let Some(hints) = hints_of(msg) else { return };
    let full = matches!(msg, Message::Response(r)
        if r.outcome.as_ref().is_ok_and(|v| v.get("open").is_some()));
    if full {
        *model = visible_set(&hints);
        return;
    }
    for e in hints["tools"].as_array().into_iter().flatten() {
        let key = (
            e["name"].as_str().unwrap().to_owned(),
            e["instance"].as_str().map(str::to_owned),
        );
        match e["visible"].as_bool() {
            Some(true) => {
                model.insert(key);
            }
            Some(false) => {
                model.remove(&key);
            }
            None => {}
        }
    }
}

#[derive(Debug, Clone)]
enum Action {
    /// A call in flight on a connection (app code held).
    Call { conn: usize, show: bool },
    /// App code finishes one held call (index taken modulo the number held).
    Complete(usize),
    /// The server changes state with an event (a push or `tools/hints`).
    Apply { show: bool, event: bool },
    /// A host re-reads `toolsets/list` (a full statement, always a rev).
    List { conn: usize },
    /// A host opens, plays in or closes one of three games (app code held).
    Game { conn: usize, game: u8, what: u8 },
}

fn action(conns: usize) -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (0..conns, any::<bool>()).prop_map(|(conn, show)| Action::Call { conn, show }),
        3 => any::<usize>().prop_map(Action::Complete),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(show, event)| Action::Apply { show, event }),
        1 => (0..conns).prop_map(|conn| Action::List { conn }),
        3 => (0..conns, 0u8..3, 0u8..3).prop_map(|(conn, game, what)| Action::Game { conn, game, what }),
    ]
}

fn scenario() -> impl Strategy<Value = (usize, Vec<Action>)> {
    (1usize..5).prop_flat_map(|n| (Just(n), prop::collection::vec(action(n), 1..60)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn s6_1_revs_stay_consecutive_per_connection((conns, actions) in scenario()) {
        let mut w = World::arcade();
        let hosts: Vec<usize> = (0..conns).map(|_| w.connect(ada(), true, true)).collect();
        for &h in &hosts {
            w.request(h, "toolsets/list", json!({})).unwrap(); // each host's baseline
        }
        w.hold_calls = true;
        let mut calls: Vec<(usize, RequestId)> = Vec::new();
        for a in actions {
            match a {
                Action::Call { conn, show } => {
                    let id = w.send_request(hosts[conn], "tools/call",
                        json!({"name": "flip", "arguments": {"show": show}}));
                    calls.push((hosts[conn], id));
                    w.drive();
                }
                Action::Complete(k) if !w.held.is_empty() => {
                    let i = k % w.held.len();
                    w.complete_held(i);
                }
                Action::Complete(_) => {}
                Action::Apply { show, event } => {
                    let mut u = Update::new();
                    u.tools().set_visible("hint", show);
                    if event {
                        u.event(Event::text("something happened"));
                    }
                    w.apply(&ada(), u);
                }
                Action::List { conn } => {
                    let id = w.send_request(hosts[conn], "toolsets/list", json!({}));
                    calls.push((hosts[conn], id));
                    w.drive();
                }
                Action::Game { conn, game, what } => {
                    let g = format!("g{game}");
                    let (method, params) = match what {
                        0 => ("toolsets/open", json!({"toolset": "game", "instance": g})),
                        1 => ("toolsets/close", json!({"toolset": "game", "instance": g})),
                        _ => ("tools/call", json!({"name": "play", "arguments": {"move": "A1"},
                            "_meta": {"mcpl/instance": g}})),
                    };
                    let id = w.send_request(hosts[conn], method, params);
                    calls.push((hosts[conn], id));
                    w.drive();
                }
            }
        }
        while !w.held.is_empty() {
            w.complete_held(w.held.len() - 1);
        }
        for &h in &hosts {
            let revs = all_revs(&w, h);
            let expected: Vec<u64> = (1..=revs.len() as u64).collect();
            prop_assert_eq!(&revs, &expected, "connection {}", h);
            prop_assert_eq!(w.conns[h].session.rev().get(), revs.len() as u64);
        }
        // A host that applies every change in rev order ends where a fresh full statement is.
        for &h in &hosts {
            let mut model = BTreeSet::new();
            for msg in &w.conns[h].written {
                apply_hints(&mut model, msg);
            }
            w.hold_calls = false;
            let list = w.request(h, "toolsets/list", json!({})).unwrap();
            let truth = visible_set(&list["_meta"]["mcpl/hints"]);
            prop_assert_eq!(&model, &truth, "connection {}", h);
        }
        for (h, id) in calls {
            let answers = w.conns[h].written.iter().filter(|m| matches!(m,
                Message::Response(r) if r.id.as_ref() == Some(&id))).count();
            prop_assert_eq!(answers, 1, "call {} answered once", id);
        }
    }
}
