//! Concurrency: many calls in flight on one connection and many connections of one
//! principal, completed in any order, with server pushes and list reads in between. Revs stay
//! consecutive per connection (§6.1) and every call is answered exactly once.

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, RequestId};
use mcpl_server::{Event, Update};
use proptest::prelude::*;
use serde_json::json;

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
}

fn action(conns: usize) -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (0..conns, any::<bool>()).prop_map(|(conn, show)| Action::Call { conn, show }),
        3 => any::<usize>().prop_map(Action::Complete),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(show, event)| Action::Apply { show, event }),
        1 => (0..conns).prop_map(|conn| Action::List { conn }),
    ]
}

fn scenario() -> impl Strategy<Value = (usize, Vec<Action>)> {
    (1usize..5).prop_flat_map(|n| (Just(n), prop::collection::vec(action(n), 1..60)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn s6_1_revs_stay_consecutive_per_connection((conns, actions) in scenario()) {
        let mut w = World::arcade();
        let hosts: Vec<usize> = (0..conns).map(|_| w.connect(ada(), true, true)).collect();
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
                    w.send_request(hosts[conn], "toolsets/list", json!({}));
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
        for (h, id) in calls {
            let answers = w.conns[h].written.iter().filter(|m| matches!(m,
                Message::Response(r) if r.id.as_ref() == Some(&id))).count();
            prop_assert_eq!(answers, 1, "call {} answered once", id);
        }
    }
}
