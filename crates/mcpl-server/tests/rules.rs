//! RFC-014 §4–§6 and §11 rules that no vector covers, and bad input: each refusal is clear
//! and changes no state.

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_server::{
    CallKind, ConnectionId, Declarations, Effect, Outcome, Principal, Server, ServerConfig,
    ToolDef, ToolsetDef, Update, WallClock,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// A debug rendering of a principal's open state, to compare before and after.
fn snapshot(w: &World, p: &Principal) -> String {
    let s = w.state(p);
    format!("{:?} {:?} {}", s.open, s.free, s.ended.len())
}

#[test]
fn s4_1_a_call_to_an_invisible_tool_is_a_tool_error_saying_why() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.call(h, "flip", json!({"show": false}), None);
    let r = w.call(h, "hint", json!({}), None);
    assert!(is_error(&r));
    assert_eq!(text(&r), "tool `hint` is not available now");
    w.open_game(h, "g1");
    w.call(h, "play", json!({"move": "A1"}), Some("g1")); // hides play in g1
    let r = w.call(h, "play", json!({"move": "B2"}), Some("g1"));
    assert_eq!(
        text(&r),
        "tool `play` is not available now in instance `g1` of `game`"
    );
}

#[test]
fn s4_1_a_call_into_a_closed_declared_toolset_is_a_tool_error() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let r = w.call(h, "note", json!({}), None);
    assert!(is_error(&r));
    assert_eq!(
        text(&r),
        "toolset `notes` is not open; open it with toolsets/open"
    );
    let r = w.call(h, "board", json!({}), None);
    assert!(
        text(&r).contains("toolset `game` is not open"),
        "{}",
        text(&r)
    );
}

#[test]
fn s4_1_a_static_tool_listed_with_its_visibility() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    let challenge = listed(&list, "challenge").unwrap();
    assert_eq!(challenge["_meta"], json!({"mcpl/visible": true}));
    let hint = listed(&list, "hint").unwrap();
    assert_eq!(
        hint["_meta"],
        json!({"mcpl/presence": "dynamic", "mcpl/visible": true})
    );
}

#[test]
fn s4_3_instance_routing_table() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    // none open
    let r = w.call(h, "board", json!({}), None);
    assert!(text(&r).contains("not open"), "{}", text(&r));
    // exactly one, no name: that one
    w.open_game(h, "g1");
    assert!(!is_error(&w.call(h, "board", json!({}), None)));
    // a name that is not open: names the open ones
    let r = w.call(h, "board", json!({}), Some("g9"));
    assert_eq!(
        text(&r),
        "instance `g9` of `game` is not open; open instances: g1"
    );
    // a name that is open
    w.open_game(h, "g2");
    assert!(!is_error(&w.call(h, "board", json!({}), Some("g2"))));
}

#[test]
fn s4_3_servers_ignore_an_instance_on_a_toolset_without_instances() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let r = w.call(h, "tip", json!({}), Some("whatever"));
    assert!(!is_error(&r), "{r}");
}

#[test]
fn s5_2_an_unknown_toolset_is_refused_and_changes_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let before = snapshot(&w, &ada());
    let err = w
        .request(h, "toolsets/open", json!({"toolset": "chess"}))
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert_eq!(
        err.message,
        "unknown toolset `chess`; declared toolsets: game, notes, quiz, tips"
    );
    let err = w
        .request(h, "toolsets/open", json!({"toolset": "bad name"}))
        .unwrap_err();
    assert!(
        err.message.contains("toolset name `bad name`"),
        "{}",
        err.message
    );
    assert_eq!(snapshot(&w, &ada()), before);
    assert_eq!(w.conns[h].session.rev().get(), 0);
}

#[test]
fn s5_2_options_failing_the_schema_are_refused_naming_option_and_rule() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let before = snapshot(&w, &ada());
    let err = w
        .request(
            h,
            "toolsets/open",
            json!({"toolset": "game", "instance": "g1",
            "options": {"size": 7}}),
        )
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(
        err.message.starts_with("option `size`: "),
        "{}",
        err.message
    );
    assert!(err.message.contains("rule `enum`"), "{}", err.message);
    let err = w
        .request(h, "toolsets/open", json!({"toolset": "quiz"}))
        .unwrap_err();
    assert!(err.message.contains("\"topic\""), "{}", err.message);
    assert!(err.message.contains("rule `required`"), "{}", err.message);
    let err = w
        .request(
            h,
            "toolsets/open",
            json!({"toolset": "game", "options": [1]}),
        )
        .unwrap_err();
    assert_eq!(err.message, "`options` must be an object");
    assert_eq!(snapshot(&w, &ada()), before);
}

#[test]
fn s5_2_an_instance_on_a_toolset_without_instances_is_refused() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let err = w
        .request(
            h,
            "toolsets/open",
            json!({"toolset": "notes", "instance": "n1"}),
        )
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(err.message.contains("has no instances"), "{}", err.message);
    assert!(
        !w.state(&ada())
            .open
            .keys()
            .any(|k| k.toolset.as_str() == "notes")
    );
}

#[test]
fn s5_2_unnamed_opens_get_distinct_server_chosen_names() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let a = w
        .request(h, "toolsets/open", json!({"toolset": "game"}))
        .unwrap();
    let b = w
        .request(h, "toolsets/open", json!({"toolset": "game"}))
        .unwrap();
    assert_eq!(a["instance"], json!("game-1"));
    assert_eq!(b["instance"], json!("game-2"));
    assert_eq!(w.state(&ada()).instances_of("game").len(), 2);
}

#[test]
fn s5_2_closing_without_instance_on_an_instanced_toolset_is_invalid() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    let before = snapshot(&w, &ada());
    let err = w
        .request(h, "toolsets/close", json!({"toolset": "game"}))
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(
        err.message.contains("name the one to close (open: g1)"),
        "{}",
        err.message
    );
    assert_eq!(snapshot(&w, &ada()), before);
}

#[test]
fn s5_2_closing_what_is_not_open_succeeds_without_hints_or_rev() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let before = snapshot(&w, &ada());
    let r = w
        .request(
            h,
            "toolsets/close",
            json!({"toolset": "game", "instance": "g1"}),
        )
        .unwrap();
    assert_eq!(
        text(&r),
        "instance `g1` of `game` is not open; nothing was closed"
    );
    assert!(r.get("_meta").is_none());
    assert_eq!(w.conns[h].session.rev().get(), 0);
    assert_eq!(snapshot(&w, &ada()), before);
    let err = w
        .request(h, "toolsets/close", json!({"toolset": "chess"}))
        .unwrap_err();
    assert_eq!(err.message, "unknown toolset `chess`");
}

#[test]
fn s5_2_a_close_applies_to_every_connection_and_records_the_end() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(ada(), true, true);
    w.open_game(a, "g1");
    w.take(b);
    let r = w
        .request(
            a,
            "toolsets/close",
            json!({"toolset": "game", "instance": "g1"}),
        )
        .unwrap();
    let id = r["_meta"]["mcpl/hints"]["toolsets"][0]["ended"].clone();
    let msgs = w.take(b);
    let hints = hints_of(&msgs[0]).unwrap();
    assert_eq!(hints["toolsets"][0]["state"], json!("closed"));
    assert_eq!(
        hints["toolsets"][0]["ended"], id,
        "the same record on every connection"
    );
    let list = w.request(b, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["ended"][0]["id"], id);
}

#[test]
fn s5_2_a_default_open_toolset_closes_until_reopened() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.request(h, "toolsets/close", json!({"toolset": "tips"}))
        .unwrap();
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["open"], json!([]));
    let r = w
        .request(h, "toolsets/open", json!({"toolset": "tips"}))
        .unwrap();
    assert!(r.get("adopted").is_none());
    assert_eq!(
        r["_meta"]["mcpl/hints"]["toolsets"][0]["state"],
        json!("open")
    );
}

#[test]
fn s5_3_ended_records_are_kept_a_configurable_time_with_fresh_ids() {
    let t0 = Instant::now();
    let mut config = ServerConfig::new(WallClock::new(t0, UNIX_EPOCH));
    config.ended_ttl = Duration::from_secs(60);
    let store = std::sync::Arc::new(mcpl_server::MemoryStore::new());
    let server = Server::with_store(arcade().build().unwrap(), config, store.clone());
    let mut w = World::with_server(server, store, t0);
    let h = w.connect(ada(), true, true);
    for name in ["g1", "g2"] {
        w.open_game(h, name);
        w.request(
            h,
            "toolsets/close",
            json!({"toolset": "game", "instance": name}),
        )
        .unwrap();
    }
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    let ids: Vec<&Value> = list["ended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["id"])
        .collect();
    assert_eq!(ids, [&json!("e-0"), &json!("e-1")]);
    w.advance(Duration::from_secs(61));
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert!(list.get("ended").is_none());
    w.open_game(h, "g3");
    let r = w
        .request(
            h,
            "toolsets/close",
            json!({"toolset": "game", "instance": "g3"}),
        )
        .unwrap();
    assert_eq!(
        r["_meta"]["mcpl/hints"]["toolsets"][0]["ended"],
        json!("e-2"),
        "never reused"
    );
}

#[test]
fn s5_3_the_full_statement_states_visible_tools_with_their_own_definitions() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.call(h, "play", json!({"move": "A1"}), Some("g1"));
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    let hints = &list["_meta"]["mcpl/hints"];
    assert!(tool_entry(hints, "board", Some("g1")).is_some());
    assert!(
        tool_entry(hints, "play", Some("g1")).is_none(),
        "invisible: not stated"
    );
    assert!(hints.get("suggest").is_none() && hints.get("toolsets").is_none());
    assert_eq!(list["open"][0]["title"], json!("Go vs bot (9x9)"));
}

#[test]
fn s5_5_visibility_is_per_instance() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.open_game(h, "g2");
    let r = w.call(h, "play", json!({"move": "A1"}), Some("g1"));
    let hints = &r["_meta"]["mcpl/hints"];
    assert_eq!(
        tool_entry(hints, "play", Some("g1")).unwrap()["visible"],
        json!(false)
    );
    assert!(tool_entry(hints, "play", Some("g2")).is_none());
    assert!(!is_error(&w.call(
        h,
        "play",
        json!({"move": "A1"}),
        Some("g2")
    )));
    // tools/list: visible in at least one open instance.
    let list = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(
        listed(&list, "pass").unwrap()["_meta"]["mcpl/visible"],
        json!(false)
    );
    assert_eq!(
        listed(&list, "board").unwrap()["_meta"]["mcpl/visible"],
        json!(true)
    );
}

#[test]
fn s5_6_a_call_naming_another_principals_instance_is_refused() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(bob(), true, true);
    w.open_game(b, "bobs-game");
    w.open_game(a, "adas-game");
    let bob_before = snapshot(&w, &bob());
    let r = w.call(a, "play", json!({"move": "A1"}), Some("bobs-game"));
    assert!(is_error(&r));
    assert_eq!(
        text(&r),
        "instance `bobs-game` of `game` is not open; open instances: adas-game"
    );
    assert_eq!(snapshot(&w, &bob()), bob_before);
    let err = w
        .request(
            a,
            "toolsets/close",
            json!({"toolset": "game", "instance": "bobs-game"}),
        )
        .unwrap();
    assert!(text(&err).contains("not open"));
    assert_eq!(snapshot(&w, &bob()), bob_before);
}

#[test]
fn s5_6_principals_do_not_share_state_and_changes_reach_only_their_own() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(bob(), true, true);
    w.open_game(a, "g1");
    assert!(w.take(b).is_empty());
    let list = w.request(b, "toolsets/list", json!({})).unwrap();
    assert!(
        !list["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["toolset"] == json!("game"))
    );
}

#[test]
fn s5_6_a_per_connection_principal_ends_its_toolsets_at_disconnect() {
    let mut w = World::arcade();
    let p = Principal::of_connection(ConnectionId(99));
    let h = w.connect(p.clone(), true, true);
    w.open_game(h, "g1");
    w.take(h);
    w.hold_calls = true;
    let now = w.now;
    w.conns[h].session.handle_disconnect(now);
    w.drive();
    let kinds: Vec<CallKind> = w.held.iter().map(|(_, c)| c.kind.clone()).collect();
    assert!(
        kinds.contains(&CallKind::Close { disconnect: true }),
        "{kinds:?}"
    );
    assert!(w.state(&p).instances_of("game").is_empty());
    w.complete_held(0);
    assert!(w.take(h).is_empty(), "nothing is written after disconnect");
}

#[test]
fn s6_1_tools_list_names_rev_zero_before_any_and_takes_none() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    for _ in 0..2 {
        let l = w.request(h, "tools/list", json!({})).unwrap();
        assert_eq!(l["_meta"]["mcpl/rev"], json!(0));
    }
    assert_eq!(w.conns[h].session.rev().get(), 0);
}

#[test]
fn s6_2_another_principals_action_reaches_them_as_a_push_with_a_suggestion() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(bob(), true, true);
    let r = w.call(a, "challenge", json!({"who": "bob"}), None);
    assert!(r.get("_meta").is_none(), "nothing changed for ada");
    let msgs = w.take(b);
    assert_eq!(methods(&msgs), ["push/event"]);
    let hints = hints_of(&msgs[0]).unwrap();
    assert_eq!(hints["rev"], json!(1));
    assert_eq!(
        hints["suggest"],
        json!([{"action": "open", "toolset": "game", "instance": "vs-ada",
                "options": {"size": 13}, "reason": "ada challenged you"}])
    );
}

#[test]
fn bad_input_gets_clear_errors_and_the_connection_goes_on() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let err = w
        .request(h, "tools/call", json!({"name": "play", "arguments": [1]}))
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(
        err.message.starts_with("invalid tools/call params"),
        "{}",
        err.message
    );
    let err = w
        .request(h, "tools/call", json!({"name": "nope"}))
        .unwrap_err();
    assert_eq!(err.message, "unknown tool `nope`");
    let err = w.request(h, "chess/move", json!({})).unwrap_err();
    assert_eq!(err.code, -32601);
    let err = w
        .request(h, "toolsets/open", json!({"instance": 5}))
        .unwrap_err();
    assert!(
        err.message.starts_with("invalid toolsets/open params"),
        "{}",
        err.message
    );
    let r = w.call(h, "challenge", json!({"who": 5}), None);
    assert!(is_error(&r));
    assert!(text(&r).starts_with("argument `who`:"), "{}", text(&r));
    assert!(text(&r).contains("rule `type`"), "{}", text(&r));
    // Still serving.
    assert!(w.request(h, "ping", json!({})).is_ok());
    assert_eq!(w.conns[h].session.rev().get(), 0);
}

#[test]
fn app_updates_that_break_the_declarations_change_nothing() {
    let mut w = World::arcade();
    w.connect(ada(), true, true);
    let before = snapshot(&w, &ada());
    let mut u = Update::new();
    u.tools().show("hint");
    u.instance("game", "g1").show("nope");
    let err = w.commit(&ada(), &u).unwrap_err();
    assert!(err.to_string().contains("unknown tool `nope`"), "{err}");
    assert_eq!(snapshot(&w, &ada()), before);
}

#[test]
fn declarations_refuse_reserved_and_bad_names() {
    let err = Declarations::new("s", "1")
        .tool(ToolDef::new("toolset_open", "x"))
        .build();
    assert!(err.unwrap_err().to_string().contains("reserved"));
    let err = Declarations::new("s", "1")
        .toolset(ToolsetDef::new("g", "G").options_schema(json!({"type": 7})))
        .build();
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("invalid options schema")
    );
}

#[test]
fn s6_2_an_event_without_hints_and_without_a_push_grant_sends_nothing() {
    // Until the policy grants pushEvents the server pushes nothing (DIGEST D4), and with no
    // hints there is nothing for tools/hints to carry.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, false);
    let mut u = Update::new();
    u.event(mcpl_server::Event::text("hello"));
    w.apply(&ada(), u);
    assert!(w.take(h).is_empty());
    assert_eq!(w.conns[h].session.rev().get(), 0);
}

#[test]
fn s5_2_an_instance_the_server_ends_while_it_opens_is_reported_not_opened() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.hold_calls = true;
    let id = w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    w.drive();
    let mut u = Update::new();
    u.instance("game", "g1").end("the table was cancelled");
    w.apply(&ada(), u);
    w.complete_held(0);
    let err = w.response(h, &id).unwrap().unwrap_err();
    assert_eq!(
        err.message,
        "instance `g1` of `game` ended while it was being opened"
    );
    assert!(w.state(&ada()).instances_of("game").is_empty());
}

#[test]
fn s5_6_a_call_finishing_after_disconnect_leaves_no_state_for_a_per_connection_principal() {
    let mut w = World::arcade();
    let p = Principal::of_connection(ConnectionId(98));
    let h = w.connect(p.clone(), true, true);
    w.open_game(h, "g1");
    w.hold_calls = true;
    w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"}, "_meta": {"mcpl/instance": "g1"}}),
    );
    w.drive();
    let now = w.now;
    w.conns[h].session.handle_disconnect(now);
    w.drive();
    while !w.held.is_empty() {
        w.complete_held(0);
    }
    assert!(
        !w.store.principals_now().contains(&p),
        "the per-connection principal's state is gone"
    );
}

#[test]
fn s5_6_reading_a_principals_state_creates_none() {
    let w = World::arcade();
    let stranger = Principal::authenticated("stranger");
    let state = w.state(&stranger);
    // It reads as a first connection would see it: default-open toolsets open.
    assert!(state.open.keys().any(|k| k.toolset.as_str() == "tips"));
    assert!(
        w.store.principals_now().is_empty(),
        "a read changed the store"
    );
}

#[test]
fn s4_1_an_unknown_tool_name_is_a_protocol_error_but_an_unusable_one_a_tool_error() {
    // MCP lists "unknown tools" among protocol errors (-32602); RFC-014 §4.1 makes only calls
    // to declared tools that cannot be served now (invisible, toolset closed) tool errors.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let err = w
        .request(h, "tools/call", json!({"name": "nope", "arguments": {}}))
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert_eq!(err.message, "unknown tool `nope`");
    let r = w.call(h, "note", json!({}), None);
    assert!(is_error(&r), "a closed toolset's tool is a tool error");
    assert!(text(&r).contains("not open"), "{}", text(&r));
}

#[test]
fn s5_6_an_open_finishing_after_disconnect_still_gets_its_cleanup_close() {
    let mut w = World::arcade();
    let p = Principal::of_connection(ConnectionId(97));
    let h = w.connect(p.clone(), true, true);
    w.hold_calls = true;
    w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "late"}),
    );
    w.drive();
    let now = w.now;
    w.conns[h].session.handle_disconnect(now);
    w.drive();
    let at = w
        .held
        .iter()
        .position(|(_, c)| c.kind == CallKind::Open)
        .expect("the open is in flight");
    w.complete_held(at);
    let late_closes = w
        .held
        .iter()
        .filter(|(_, c)| {
            c.kind == CallKind::Close { disconnect: true }
                && c.context.instance().map(|i| i.as_str()) == Some("late")
        })
        .count();
    assert_eq!(
        late_closes, 1,
        "the app that opened `late` is told it ended with the connection"
    );
    while !w.held.is_empty() {
        w.complete_held(0);
    }
    assert_eq!(w.conns[h].session.calls_in_flight(), 0);
    assert!(w.take(h).is_empty(), "nothing is written after disconnect");
    assert!(!w.store.principals_now().contains(&p));
}

#[test]
fn s5_2_an_open_the_app_does_not_title_is_listed_under_the_declared_title() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, false);
    // The fixture app answers a `notes` open with text and no title.
    let r = w
        .request(h, "toolsets/open", json!({"toolset": "notes"}))
        .unwrap();
    assert_eq!(r["title"], json!("Notes"));
    // The server opens an instance on its own initiative, without a title either.
    let mut u = Update::new();
    u.instance("game", "g7").open(json!({}), None);
    w.apply(&ada(), u);
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    let title = |toolset: &str, instance: Option<&str>| {
        list["open"].as_array().unwrap().iter().find_map(|e| {
            (e["toolset"] == json!(toolset)
                && e.get("instance").and_then(Value::as_str) == instance)
                .then(|| e["title"].clone())
        })
    };
    assert_eq!(title("notes", None), Some(json!("Notes")));
    assert_eq!(title("game", Some("g7")), Some(json!("Go (g7)")));
}

#[test]
fn s6_one_change_states_each_toolset_and_instance_it_opens() {
    // Entries are one per (toolset, instance): two instances of one toolset, and one instance
    // name in two toolsets, are all different things.
    let decls = Declarations::new("boards", "1")
        .toolset(
            ToolsetDef::new("go", "Go")
                .instances()
                .tool(ToolDef::new("place", "Place a stone.")),
        )
        .toolset(
            ToolsetDef::new("chess", "Chess")
                .instances()
                .tool(ToolDef::new("move", "Move a piece.")),
        );
    let mut w = World::new(decls);
    let h = w.connect(ada(), true, false);
    let mut u = Update::new();
    u.instance("go", "a").open(Value::Null, None);
    u.instance("go", "b").open(Value::Null, None);
    u.instance("chess", "a").open(Value::Null, None);
    w.apply(&ada(), u);
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["tools/hints"]);
    let hints = hints_of(&msgs[0]).unwrap();
    let stated: Vec<(&str, &str, &str)> = hints["toolsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["toolset"].as_str().unwrap(),
                e["instance"].as_str().unwrap(),
                e["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stated,
        [
            ("go", "a", "open"),
            ("go", "b", "open"),
            ("chess", "a", "open")
        ]
    );
    for (tool, instance) in [("place", "a"), ("place", "b"), ("move", "a")] {
        assert_eq!(
            tool_entry(&hints, tool, Some(instance)).map(|e| &e["visible"]),
            Some(&json!(true)),
            "{tool} in {instance}"
        );
    }
}

#[test]
fn s5_6_a_call_that_changes_nothing_publishes_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.hold_calls = true;
    // Runs `tool` with the held app call finished by hand; counts the Publish effects it
    // queues for the principal's other connections.
    let publishes = |w: &mut World, tool: &str, args: Value| {
        w.send_request(h, "tools/call", json!({"name": tool, "arguments": args}));
        w.drive();
        let (_, mut call) = w.held.remove(0);
        let reply = run_app(&mut call);
        let outcome = Outcome {
            context: call.context,
            reply,
        };
        let now = w.now;
        w.conns[h]
            .session
            .handle_call_done(now, call.id, outcome)
            .expect("the outcome fits");
        let mut published = 0;
        while let Some(effect) = w.conns[h].session.poll_effect() {
            match effect {
                Effect::Write(write) => w.write(h, &write),
                Effect::Publish(_) => published += 1,
                _ => {}
            }
        }
        published
    };
    assert_eq!(publishes(&mut w, "tip", json!({})), 0);
    assert_eq!(publishes(&mut w, "flip", json!({"show": false})), 1);
    let nothing = w.commit(&ada(), &Update::new()).unwrap();
    assert!(nothing.is_empty());
}

#[test]
fn s5_2_a_toolset_whose_open_is_still_running_is_not_open_yet() {
    // Its tools are neither listed visible nor callable until the app's open handler finishes.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.hold_calls = true;
    let id = w.send_request(h, "toolsets/open", json!({"toolset": "notes"}));
    w.drive();
    assert_eq!(w.held.len(), 1, "the open handler is running");
    let list = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(
        listed(&list, "note").unwrap()["_meta"]["mcpl/visible"],
        json!(false)
    );
    let r = w.call(h, "note", json!({}), None);
    assert!(is_error(&r));
    assert_eq!(
        text(&r),
        "tool `note` is not available now in toolset `notes`"
    );
    assert!(
        w.held.len() == 1,
        "no app call was started for the refused call"
    );

    w.complete_held(0);
    w.hold_calls = false;
    assert!(w.response(h, &id).unwrap().is_ok(), "the open succeeded");
    let list = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(
        listed(&list, "note").unwrap()["_meta"]["mcpl/visible"],
        json!(true)
    );
    assert_eq!(text(&w.call(h, "note", json!({}), None)), "note done");
}

#[test]
fn s5_3_a_session_asks_to_wake_when_its_first_ended_record_expires() {
    let t0 = Instant::now();
    let mut config = ServerConfig::new(WallClock::new(t0, UNIX_EPOCH));
    config.ended_ttl = Duration::from_secs(60);
    let store = std::sync::Arc::new(mcpl_server::MemoryStore::new());
    let server = Server::with_store(arcade().build().unwrap(), config, store.clone());
    let mut w = World::with_server(server, store, t0);
    let h = w.connect(ada(), true, true);
    assert_eq!(w.conns[h].session.poll_timeout(), None, "nothing to expire");
    let close = |w: &mut World, name: &str| {
        w.open_game(h, name);
        w.request(
            h,
            "toolsets/close",
            json!({"toolset": "game", "instance": name}),
        )
        .unwrap();
    };
    close(&mut w, "g1");
    w.now += Duration::from_secs(10);
    close(&mut w, "g2");
    let first = t0 + Duration::from_secs(60);
    assert_eq!(w.conns[h].session.poll_timeout(), Some(first));
    // Another connection of the principal wakes for the same records.
    let other = w.connect(ada(), true, true);
    assert_eq!(w.conns[other].session.poll_timeout(), Some(first));

    w.now = first;
    w.conns[h].session.handle_timeout(first);
    w.drive();
    assert_eq!(
        w.conns[h].session.poll_timeout(),
        Some(first + Duration::from_secs(10)),
        "then the next record's expiry"
    );
    w.now = first + Duration::from_secs(10);
    w.conns[h].session.handle_timeout(w.now);
    w.drive();
    assert_eq!(w.conns[h].session.poll_timeout(), None);
}

#[test]
fn a_catalog_change_before_initialize_is_not_announced() {
    // MCP: nothing but pings and logs before the host has initialized; the host reads the
    // new declarations in its own initialize.
    let w = World::arcade();
    let mut s = w.server.session(ada(), ConnectionId(7), w.now);
    // No store at all: the session asks for the principal's state, and gets it by hand.
    assert!(matches!(s.poll_effect(), Some(Effect::Load(p)) if p == ada()));
    let seeded = w.server.seeded(Default::default());
    s.handle_state(
        w.now,
        mcpl_server::Versioned {
            state: std::sync::Arc::new(seeded),
            version: 0,
        },
    );
    let mut changed = arcade().tool(ToolDef::new("extra", "One more tool."));
    w.server.replace_catalog(changed.clone().build().unwrap());
    s.handle_catalog_change(w.now);
    assert!(
        s.poll_effect().is_none(),
        "an uninitialized host hears nothing"
    );

    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test-host", "version": "1"}});
    s.handle_message(
        w.now,
        Message::Request(Request::new(RequestId::Number(1), "initialize", Some(init))),
    );
    assert!(matches!(
        s.poll_effect(),
        Some(Effect::Send(Message::Response(_)))
    ));
    changed = changed.tool(ToolDef::new("another", "And another."));
    w.server.replace_catalog(changed.build().unwrap());
    s.handle_catalog_change(w.now);
    let told: Vec<String> = std::iter::from_fn(|| s.poll_effect())
        .filter_map(|e| match e {
            Effect::Send(Message::Notification(n)) => Some(n.method),
            _ => None,
        })
        .collect();
    assert!(
        told.iter().any(|m| m == "notifications/tools/list_changed"),
        "an initialized host is told the tools changed: {told:?}"
    );
}

#[test]
fn s5_2_adopting_an_open_instance_reports_its_title() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1", "options": {"size": 13}}),
    )
    .unwrap();
    let again = w.open_game(h, "g1");
    assert_eq!(again["adopted"], json!(true));
    assert_eq!(again["instance"], json!("g1"));
    assert_eq!(again["title"], json!("Go vs bot (13x13)"), "{again}");
    // §5.2: only options the host gave and the instance does not use are reported; none
    // were given here.
    let t = text(&again);
    assert!(t.contains("adopted it unchanged"), "{t}");
    assert!(!t.contains("Options not applied"), "{t}");
}

#[test]
fn s5_2_closing_an_instance_whose_open_is_still_running_closes_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.hold_calls = true;
    let opening = w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    w.drive();
    assert_eq!(w.held.len(), 1, "the open handler is running");
    let close = w.send_request(
        h,
        "toolsets/close",
        json!({"toolset": "game", "instance": "g1"}),
    );
    w.drive();
    assert_eq!(w.held.len(), 1, "no close handler was started");
    let r = w
        .response(h, &close)
        .expect("the close is answered at once")
        .expect("a close of what is not open succeeds");
    assert_eq!(
        text(&r),
        "instance `g1` of `game` is not open; nothing was closed"
    );
    assert!(r.get("_meta").is_none(), "no hints and no rev: {r}");

    w.hold_calls = false;
    w.complete_held(0);
    assert!(w.response(h, &opening).unwrap().is_ok(), "the open went on");
    let names: Vec<String> = w
        .state(&ada())
        .instances_of("game")
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(names, ["g1"]);
}

#[test]
fn s5_2_closing_without_instance_names_only_instances_that_are_open() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.hold_calls = true;
    w.send_request(
        h,
        "toolsets/open",
        json!({"toolset": "game", "instance": "g2"}),
    );
    w.drive();
    assert_eq!(w.held.len(), 1, "g2 is still opening");
    let err = w
        .request(h, "toolsets/close", json!({"toolset": "game"}))
        .unwrap_err();
    assert!(
        err.message.ends_with("name the one to close (open: g1)"),
        "{}",
        err.message
    );
}

#[test]
fn s4_2_a_static_tool_definition_is_not_changed_by_an_update() {
    let mut w = World::arcade();
    w.connect(ada(), true, true);
    let before = snapshot(&w, &ada());
    let mut redefined = mcpl_protocol::mcp::Tool::new("challenge");
    redefined.description = Some(json!("Challenge someone to chess instead."));
    let mut u = Update::new();
    u.tools().define(redefined);
    let err = w.commit(&ada(), &u).unwrap_err();
    assert!(
        err.to_string().contains("tool `challenge` is static"),
        "{err}"
    );
    assert_eq!(snapshot(&w, &ada()), before);

    // A dynamic tool outside toolsets takes a definition of its own.
    let mut hint = mcpl_protocol::mcp::Tool::new("hint");
    hint.description = Some(json!("Get a hint about the opening."));
    let mut u = Update::new();
    u.tools().define(hint.clone());
    w.commit(&ada(), &u).expect("hint is dynamic");
    let state = w.state(&ada());
    assert_eq!(state.free["hint"].definition.as_deref(), Some(&hint));
}

#[test]
fn app_updates_changing_a_tool_outside_its_toolset_are_refused() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.request(h, "toolsets/open", json!({"toolset": "notes"}))
        .unwrap();
    let before = snapshot(&w, &ada());
    let mut u = Update::new();
    u.toolset("notes").show("tip");
    let err = w.commit(&ada(), &u).unwrap_err();
    assert!(
        err.to_string()
            .contains("tool `tip` does not belong to toolset `notes`"),
        "{err}"
    );
    let mut u = Update::new();
    u.instance("game", "g1").hide("note");
    let err = w.commit(&ada(), &u).unwrap_err();
    assert!(
        err.to_string()
            .contains("tool `note` does not belong to toolset `game`"),
        "{err}"
    );
    assert_eq!(snapshot(&w, &ada()), before);
}

#[test]
fn s5_3_ended_records_leave_the_store_when_the_session_times_out() {
    let t0 = Instant::now();
    let mut config = ServerConfig::new(WallClock::new(t0, UNIX_EPOCH));
    config.ended_ttl = Duration::from_secs(60);
    let store = std::sync::Arc::new(mcpl_server::MemoryStore::new());
    let server = Server::with_store(arcade().build().unwrap(), config, store.clone());
    let mut w = World::with_server(server, store, t0);
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.request(
        h,
        "toolsets/close",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .unwrap();
    w.advance(Duration::from_secs(59));
    assert_eq!(w.state(&ada()).ended.len(), 1, "kept until it expires");
    w.advance(Duration::from_secs(1));
    assert!(
        w.state(&ada()).ended.is_empty(),
        "the timeout dropped the expired record"
    );
}

#[test]
fn a_published_change_names_the_connection_that_caused_it() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.send_request(
        h,
        "tools/call",
        json!({"name": "flip", "arguments": {"show": true}}),
    );
    let now = w.now;
    let store = w.store.clone();
    let session = &mut w.conns[h].session;
    let mut origins = Vec::new();
    while let Some(effect) = session.poll_effect() {
        match effect {
            Effect::Write(write) => match store.write_now(&write) {
                mcpl_server::Written::Done { version } => session.handle_written(now, version),
                mcpl_server::Written::Conflict(stored) => session.handle_conflict(now, stored),
            },
            Effect::Call(mut call) => {
                let reply = run_app(&mut call);
                let outcome = Outcome {
                    context: call.context,
                    reply,
                };
                session.handle_call_done(now, call.id, outcome).unwrap();
            }
            Effect::Publish(change) => origins.push(change.origin()),
            _ => {}
        }
    }
    assert_eq!(origins, [Some(session.connection())]);
    // A change the server makes on its own comes from no connection.
    let mut u = Update::new();
    u.tools().show("hint");
    assert_eq!(w.commit(&ada(), &u).unwrap().origin(), None);
}

#[test]
fn calls_in_flight_counts_app_calls_until_they_finish() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    assert_eq!(w.conns[h].session.calls_in_flight(), 0);
    w.hold_calls = true;
    w.send_request(
        h,
        "tools/call",
        json!({"name": "flip", "arguments": {"show": true}}),
    );
    w.send_request(
        h,
        "tools/call",
        json!({"name": "challenge", "arguments": {"who": "bob"}}),
    );
    w.drive();
    assert_eq!(w.conns[h].session.calls_in_flight(), 2);
    w.complete_held(0);
    assert_eq!(w.conns[h].session.calls_in_flight(), 1);
    w.complete_held(0);
    assert_eq!(w.conns[h].session.calls_in_flight(), 0);
}

#[test]
fn closing_a_session_asks_its_driver_to_close_the_connection() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.drive();
    w.conns[h].session.close();
    let effects: Vec<Effect> = std::iter::from_fn(|| w.conns[h].session.poll_effect()).collect();
    assert!(
        matches!(effects.as_slice(), [Effect::Close]),
        "one Close effect, nothing else: {effects:?}"
    );
}

#[test]
fn s5_6_a_disconnect_drops_unwritten_messages_and_keeps_the_app_work_in_flight() {
    // "Calls in flight still finish, but nothing more is written": a tool call's app work and
    // a ping's reply are both queued, neither polled, when the transport closes.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.send_request(
        h,
        "tools/call",
        json!({"name": "flip", "arguments": {"show": true}}),
    );
    w.send_request(h, "ping", json!({}));
    let now = w.now;
    w.conns[h].session.handle_disconnect(now);
    let mut sends = 0;
    let mut calls = 0;
    while let Some(effect) = w.conns[h].session.poll_effect() {
        match effect {
            Effect::Send(_) => sends += 1,
            Effect::Call(_) => calls += 1,
            _ => {}
        }
    }
    assert_eq!(sends, 0, "a message was written after the disconnect");
    assert_eq!(calls, 1, "the call in flight was dropped");
}

#[test]
fn s5_2_an_open_answered_with_the_wrong_kind_of_reply_is_refused_and_leaves_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let (id, call) = w.open_held(h, "g1");
    assert!(matches!(call.kind, CallKind::Open));
    // The app answers the open as if it were a tool call.
    let outcome = Outcome {
        context: call.context,
        reply: mcpl_server::Reply::Tool(mcpl_protocol::mcp::CallToolResult::text("done")),
    };
    let now = w.now;
    let _ = w.conns[h].session.handle_call_done(now, call.id, outcome);
    w.drive();
    assert!(
        w.response(h, &id).is_some_and(|r| r.is_err()),
        "the open is refused"
    );
    let key = mcpl_server::OpenKey::new(
        mcpl_protocol::rfc014::ToolsetName::parse("game").unwrap(),
        Some(mcpl_protocol::rfc014::InstanceName::parse("g1").unwrap()),
    );
    assert!(
        !w.state(&ada()).open.contains_key(&key),
        "no half-opened entry is left in the state"
    );
    assert!(!w.conns[h].session.state().open.contains_key(&key));
}

#[test]
fn an_update_for_another_principal_that_the_declarations_refuse_is_an_error_and_applies_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let b = w.connect(bob(), true, true);
    w.hold_calls = true;
    let id = w.send_request(h, "tools/call", json!({"name": "fortune", "arguments": {}}));
    w.drive();
    let (_, mut call) = w.held.remove(0);
    call.context
        .update_for(&bob())
        .tools()
        .set_visible("no-such-tool", true);
    let outcome = Outcome {
        context: call.context,
        reply: mcpl_server::Reply::Tool(mcpl_protocol::mcp::CallToolResult::text("told")),
    };
    let now = w.now;
    let refused = w.conns[h].session.handle_call_done(now, call.id, outcome);
    let err = refused.expect_err("the declarations refuse the update");
    assert!(err.to_string().contains("no-such-tool"), "{err}");
    let mut applies = 0;
    while let Some(effect) = w.conns[h].session.poll_effect() {
        if let Effect::Apply(..) = effect {
            applies += 1;
        } else if let Effect::Send(msg) = effect {
            w.conns[h].written.push(msg);
        }
    }
    assert_eq!(applies, 0, "nothing is applied to bob");
    assert!(w.response(h, &id).is_some(), "the reply is still sent");
    assert!(w.take(b).is_empty());
}

#[test]
fn s6_a_push_names_its_instance_only_when_every_change_is_in_it() {
    // §6: a push carrying hints should name its toolset and instance; an event that does not
    // name them takes the one place its changes are in, and none when they are in two.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.open_game(h, "g1");
    w.open_game(h, "g2");
    w.take(h);
    let push_params = |w: &mut World| {
        let msgs = w.take(h);
        let Some(Message::Request(push)) = msgs.first() else {
            panic!("a push: {msgs:?}");
        };
        assert_eq!(push.method, "push/event");
        push.params.clone().unwrap()
    };

    let mut one_place = Update::new();
    one_place.instance("game", "g1").hide("play");
    one_place.instance("game", "g1").hide("pass");
    one_place.event(mcpl_server::Event::text("White moved."));
    w.apply(&ada(), one_place);
    let params = push_params(&mut w);
    assert_eq!(params["toolset"], json!("game"), "{params}");
    assert_eq!(params["instance"], json!("g1"), "{params}");

    let mut two_places = Update::new();
    two_places.instance("game", "g1").show("play");
    two_places.instance("game", "g2").hide("play");
    two_places.event(mcpl_server::Event::text("Both boards moved."));
    w.apply(&ada(), two_places);
    let params = push_params(&mut w);
    assert!(params.get("toolset").is_none(), "{params}");
    assert!(params.get("instance").is_none(), "{params}");
}
