//! Changes delivered after the state moved on (§2.5, values not differences): a connection
//! states what is true when it delivers a change, not what was true when it was committed. A
//! change can arrive late through the driver's fan-out or a relay between replicas.

mod common;

use common::*;
use mcpl_protocol::rfc014::{InstanceName, Presence, ToolsetName};
use mcpl_server::{Declarations, OpenKey, ToolDef, ToolsetDef, Update};
use serde_json::json;

#[test]
fn s6_a_tool_change_arriving_after_its_instance_closed_states_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .unwrap();
    w.take(h);
    let g1 = OpenKey::new(
        ToolsetName::parse("game").unwrap(),
        Some(InstanceName::parse("g1").unwrap()),
    );
    assert!(w.state(&ada()).is_open(&g1));

    // Committed, then held back on its way to the connection.
    let mut hide = Update::new();
    hide.instance("game", "g1").hide("play");
    let late = w.commit(&ada(), &hide).unwrap();
    let mut end = Update::new();
    end.instance("game", "g1").end("White resigned.");
    w.apply(&ada(), end);
    assert!(!w.state(&ada()).is_open(&g1));
    let msgs = w.take(h);
    assert_eq!(revs(&msgs), [2], "the end states g1 closed with its tools");

    let now = w.now;
    w.conns[h].session.handle_principal_change(now, &late);
    w.drive();
    assert!(
        w.take(h).is_empty(),
        "the close already stated g1's tools; a late entry for a closed instance says nothing true"
    );
    assert_eq!(w.conns[h].session.rev().get(), 2, "and takes no rev");
}

#[test]
fn s4_1_a_presence_move_arriving_after_the_tool_joined_a_toolset_is_not_static() {
    // §4.1: a toolset tool stays dynamic, and servers should not send a move to static for
    // one. Here the move was committed while `hint` was a free tool, and delivered after new
    // declarations put it in a toolset.
    let decls =
        Declarations::new("helper", "1").tool(ToolDef::new("hint", "Get a hint.").dynamic());
    let mut w = World::new(decls);
    let h = w.connect(ada(), true, true);
    let mut to_static = Update::new();
    to_static.move_tool("hint", Presence::Static);
    let late = w.commit(&ada(), &to_static).unwrap();

    let moved = Declarations::new("helper", "2")
        .toolset(ToolsetDef::new("helpers", "Helpers").tool(ToolDef::new("hint", "Get a hint.")))
        .build()
        .unwrap();
    let now = w.now;
    assert!(w.server.replace_catalog(moved).is_empty());
    w.conns[h].session.handle_principal_change(now, &late);
    w.drive();
    let msgs = w.take(h);
    let hints = msgs.iter().find_map(hints_of).expect("the move is stated");
    let entry = tool_entry(&hints, "hint", None).expect("an entry for hint");
    assert_eq!(entry["presence"], json!("dynamic"), "{hints}");
}

/// §6.1, §2.5: a change committed before a connection first read the principal's state is
/// already in everything that connection states, so it is not news there: no message, no
/// rev. It reaches such a connection when the connection registers between the commit and
/// the fan-out (one conformance check's close reached the next check's new connection this
/// way) or through a slow relay. A connection that read the state before the commit still
/// hears of it.
#[test]
fn s6_1_a_change_committed_before_a_connection_first_read_the_state_is_not_news_to_it() {
    let mut w = World::arcade();
    let before = w.connect(ada(), true, true);
    w.take(before);
    let mut show = Update::new();
    show.tools().show("hint");
    let committed = w.commit(&ada(), &show).unwrap();
    assert!(
        committed.state().is_some(),
        "the change carries the stored state"
    );
    let after = w.connect(ada(), true, true);
    w.take(after);
    let rev_after = w.conns[after].session.rev().get();

    w.deliver(&committed);
    w.drive();
    assert!(
        w.take(after).is_empty(),
        "the new connection read the state with `hint` shown already"
    );
    assert_eq!(
        w.conns[after].session.rev().get(),
        rev_after,
        "and takes no rev"
    );
    let told = w.take(before);
    let hints = told
        .iter()
        .find_map(hints_of)
        .expect("the older connection is told");
    let entry = tool_entry(&hints, "hint", None).expect("an entry for hint");
    assert_eq!(entry["visible"], json!(true), "{hints}");
}
