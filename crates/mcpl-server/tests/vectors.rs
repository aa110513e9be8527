//! RFC-014 §13 conformance vectors, server side. Vectors that only a host can show (12, 19,
//! 20, 24, 25, 35, 36) are tested in `mcpl-host`.

mod common;

use common::*;
use mcpl_protocol::jsonrpc::{Message, Response};
use mcpl_protocol::rfc014::{InstanceName, Presence, ToolsetName};
use mcpl_server::{Declarations, Event, OpenKey, ToolDef, ToolsetDef, Update};
use serde_json::{Value, json};
use std::time::Duration;

fn open_game(w: &mut World, c: usize, instance: &str) -> Value {
    w.request(
        c,
        "toolsets/open",
        json!({"toolset": "game", "instance": instance,
        "options": {"size": 9}}),
    )
    .expect("the open succeeds")
}

/// The bot's move in `instance`: `play` and `pass` visible again, with new legal moves.
fn bot_moves(instance: &str) -> Update {
    let mut u = Update::new();
    u.instance("game", instance)
        .show("play")
        .show("pass")
        .define(play_def(&["D4", "E5"]));
    u.event(Event::text("White played E5.").about("game", Some(instance)));
    u
}

#[test]
fn v01_every_tool_is_listed_to_tool_hints_hosts() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let declared: Vec<String> = w.server.catalog().tool_names().map(str::to_owned).collect();
    assert_eq!(names, declared);
    // Invisible, in a closed toolset, and still listed.
    let play = listed(&list, "play").unwrap();
    assert_eq!(play["_meta"]["mcpl/toolset"], json!("game"));
    assert_eq!(play["_meta"]["mcpl/visible"], json!(false));
    assert_eq!(list["_meta"]["mcpl/rev"], json!(0));
}

#[test]
fn v02_a_call_reports_its_consequences_in_its_result_and_nothing_else() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let other = w.connect(ada(), true, true);
    w.call(h, "flip", json!({"show": false}), None);
    w.take(h);
    let result = w.call(h, "flip", json!({"show": true}), None);
    let hints = &result["_meta"]["mcpl/hints"];
    assert_eq!(
        tool_entry(hints, "hint", None).unwrap()["visible"],
        json!(true)
    );
    let after = w.take(h);
    assert_eq!(methods(&after), ["response"], "no push follows for it");
    // The principal's other connection learns it as state, not from the result.
    let elsewhere = w.take(other);
    assert_eq!(methods(&elsewhere), ["tools/hints", "tools/hints"]);
}

#[test]
fn v03_a_push_carries_the_visibility_change_it_explains() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.call(h, "play", json!({"move": "A1"}), Some("vs-bot"));
    w.take(h);
    w.apply(&ada(), bot_moves("vs-bot"));
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["push/event"]);
    let Message::Request(push) = &msgs[0] else {
        unreachable!()
    };
    let params = push.params.as_ref().unwrap();
    assert_eq!(params["toolset"], json!("game"));
    assert_eq!(params["instance"], json!("vs-bot"));
    assert_eq!(
        params["payload"]["content"][0]["text"],
        json!("White played E5.")
    );
    let play = tool_entry(&params["hints"], "play", Some("vs-bot")).unwrap();
    assert_eq!(play["visible"], json!(true));
    assert_eq!(
        play["definition"]["inputSchema"]["properties"]["move"]["enum"],
        json!(["D4", "E5"])
    );
}

#[test]
fn v04_revs_are_consecutive_across_every_carrier() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    w.request(h, "toolsets/list", json!({})).unwrap(); // 1
    open_game(&mut w, h, "vs-bot"); // 2
    w.call(h, "play", json!({"move": "A1"}), Some("vs-bot")); // 3
    w.apply(&ada(), bot_moves("vs-bot")); // 4, push
    let mut quiet = Update::new();
    quiet.tools().hide("hint");
    w.apply(&ada(), quiet); // 5, tools/hints
    let list = w.request(h, "tools/list", json!({})).unwrap(); // no rev
    assert_eq!(list["_meta"]["mcpl/rev"], json!(5));
    w.request(
        h,
        "toolsets/close",
        json!({"toolset": "game", "instance": "vs-bot"}),
    )
    .unwrap(); // 6
    assert_eq!(all_revs(&w, h), [1, 2, 3, 4, 5, 6]);
    let carriers = methods(&w.conns[h].written);
    assert!(carriers.contains(&"push/event".to_owned()));
    assert!(carriers.contains(&"tools/hints".to_owned()));
}

#[test]
fn v05_an_instanced_open_returns_the_name_and_calls_carry_it() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let named = open_game(&mut w, h, "vs-bot");
    assert_eq!(named["instance"], json!("vs-bot"));
    let unnamed = w
        .request(h, "toolsets/open", json!({"toolset": "game"}))
        .unwrap();
    let chosen = unnamed["instance"].as_str().unwrap().to_owned();
    assert_ne!(chosen, "vs-bot");
    let r = w.call(h, "play", json!({"move": "B2"}), Some(&chosen));
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), format!("You played B2 in {chosen}."));
}

#[test]
fn v06_a_call_without_instance_among_two_fails_and_names_them() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    open_game(&mut w, h, "vs-ada");
    let r = w.call(h, "board", json!({}), None);
    assert!(is_error(&r));
    assert!(text(&r).contains("vs-ada, vs-bot"), "{}", text(&r));
    assert!(r.get("_meta").is_none(), "a refused call changes nothing");
}

#[test]
fn v07_a_definition_change_reaches_the_host_without_list_changed() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    let mut u = Update::new();
    u.instance("game", "vs-bot").define(play_def(&["J9"]));
    w.apply(&ada(), u);
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["tools/hints"]);
    let hints = hints_of(&msgs[0]).unwrap();
    let play = tool_entry(&hints, "play", Some("vs-bot")).unwrap();
    assert_eq!(
        play["definition"]["inputSchema"]["properties"]["move"]["enum"],
        json!(["J9"])
    );
}

#[test]
fn v08_no_hints_of_any_kind_reach_a_host_without_tool_hints() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, true);
    let r = w.call(h, "flip", json!({"show": false}), None);
    assert!(r.get("_meta").is_none());
    let r = w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    assert!(!is_error(&r), "{r}");
    w.apply(&ada(), bot_moves("g1"));
    let mut quiet = Update::new();
    quiet.tools().show("hint");
    w.apply(&ada(), quiet);
    let msgs = w.take(h);
    assert!(!methods(&msgs).contains(&"tools/hints".to_owned()));
    assert!(msgs.iter().all(|m| hints_of(m).is_none()));
    // The push still goes, without RFC-014 members.
    let push = msgs.iter().find_map(|m| match m {
        Message::Request(r) if r.method == "push/event" => r.params.clone(),
        _ => None,
    });
    let push = push.expect("the event is still pushed");
    assert!(push.get("toolset").is_none() && push.get("hints").is_none());
}

#[test]
fn v09_a_kept_instance_is_listed_after_reconnect_and_reopening_adopts() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    let h2 = w.connect(ada(), true, true);
    let list = w.request(h2, "toolsets/list", json!({})).unwrap();
    assert!(
        list["open"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["instance"] == json!("vs-bot"))
    );
    assert_eq!(list["_meta"]["mcpl/hints"]["rev"], json!(1));
    let again = w.request(
        h2,
        "toolsets/open",
        json!({"toolset": "game", "instance": "vs-bot"}),
    );
    let again = again.unwrap();
    assert_eq!(again["adopted"], json!(true));
    assert_eq!(w.state(&ada()).instances_of("game").len(), 1);
}

#[test]
fn v10_an_undeclared_group_is_listed_but_never_opened_by_request() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(
        listed(&list, "fortune").unwrap()["_meta"]["mcpl/toolset"],
        json!("extras")
    );
    let err = w
        .request(h, "toolsets/open", json!({"toolset": "extras"}))
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(
        err.message.contains("unknown toolset `extras`"),
        "{}",
        err.message
    );
    // The server states its visibility without an instance and serves it; the host gates.
    let full = w.request(h, "toolsets/list", json!({})).unwrap();
    let entry = tool_entry(&full["_meta"]["mcpl/hints"], "fortune", None).unwrap();
    assert_eq!(entry["visible"], json!(true));
    assert!(!is_error(&w.call(h, "fortune", json!({}), None)));
}

#[test]
fn v11_a_refused_push_is_not_restated() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    w.apply(&ada(), bot_moves("vs-bot"));
    let msgs = w.take(h);
    let Message::Request(push) = &msgs[0] else {
        panic!("expected a push")
    };
    let refusal = Message::Response(Response::ok(
        push.id.clone(),
        json!({"accepted": false,
        "reason": "busy"}),
    ));
    let now = w.now;
    w.conns[h].session.handle_message(now, refusal);
    w.drive();
    assert!(w.take(h).is_empty(), "nothing is restated");
    assert_eq!(
        w.conns[h].session.rev().get(),
        2,
        "the refused push spent rev 2"
    );
}

#[test]
fn v13_an_ended_record_is_listed_until_it_expires() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    let mut u = Update::new();
    u.instance("game", "vs-bot")
        .end("Black won by resignation.");
    w.apply(&ada(), u);
    for _ in 0..3 {
        let list = w.request(h, "toolsets/list", json!({})).unwrap();
        let ended = list["ended"].as_array().unwrap();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0]["id"], json!("e-0"));
        assert_eq!(ended[0]["instance"], json!("vs-bot"));
        assert_eq!(ended[0]["reason"], json!("Black won by resignation."));
    }
    w.advance(Duration::from_secs(3599));
    assert!(
        w.request(h, "toolsets/list", json!({}))
            .unwrap()
            .get("ended")
            .is_some()
    );
    w.advance(Duration::from_secs(2));
    assert!(
        w.request(h, "toolsets/list", json!({}))
            .unwrap()
            .get("ended")
            .is_none()
    );
}

#[test]
fn v14_a_change_on_one_connection_reaches_another_on_its_own_revs() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    let b = w.connect(ada(), true, true);
    w.request(b, "toolsets/list", json!({})).unwrap(); // B: rev 1
    w.request(a, "toolsets/list", json!({})).unwrap(); // A: rev 1
    w.request(a, "tools/list", json!({})).unwrap();
    w.call(a, "flip", json!({"show": false}), None); // A: rev 2
    open_game(&mut w, a, "vs-bot"); // A: rev 3
    assert_eq!(all_revs(&w, a), [1, 2, 3]);
    assert_eq!(all_revs(&w, b), [1, 2, 3]);
    let last = w.conns[b].written.last().unwrap().clone();
    assert_eq!(methods(std::slice::from_ref(&last)), ["tools/hints"]);
    let hints = hints_of(&last).unwrap();
    assert_eq!(hints["toolsets"][0]["state"], json!("open"));
    assert!(hints.get("suggest").is_none(), "state, not a suggestion");
    assert_eq!(
        tool_entry(&hints, "play", Some("vs-bot")).unwrap()["visible"],
        json!(true)
    );
}

#[test]
fn v15_a_tool_moved_to_dynamic_keeps_working_and_the_list_shows_it() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let mut u = Update::new();
    u.move_tool("challenge", Presence::Dynamic);
    w.apply(&ada(), u);
    let msgs = w.take(h);
    let hints = hints_of(&msgs[0]).unwrap();
    assert_eq!(
        tool_entry(&hints, "challenge", None).unwrap()["presence"],
        json!("dynamic")
    );
    let r = w.call(h, "challenge", json!({"who": "bob"}), None);
    assert!(!is_error(&r), "{r}");
    let list = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(
        listed(&list, "challenge").unwrap()["_meta"]["mcpl/presence"],
        json!("dynamic")
    );
}

#[test]
fn v16_a_close_result_carries_its_hints_under_the_next_rev() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    let r = w.request(
        h,
        "toolsets/close",
        json!({"toolset": "game", "instance": "vs-bot"}),
    );
    let r = r.unwrap();
    let hints = &r["_meta"]["mcpl/hints"];
    assert_eq!(hints["rev"], json!(2));
    assert_eq!(hints["toolsets"][0]["state"], json!("closed"));
    assert_eq!(hints["toolsets"][0]["ended"], json!("e-0"));
    for tool in ["board", "play", "pass"] {
        assert_eq!(
            tool_entry(hints, tool, Some("vs-bot")).unwrap()["visible"],
            json!(false)
        );
    }
    assert_eq!(text(&r), "You resigned; White wins.");
}

#[test]
fn v17_reopening_by_name_adopts_and_reports_options_not_applied() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    let before = w.state(&ada()).open.clone();
    let rev = w.conns[h].session.rev();
    let r = w
        .request(
            h,
            "toolsets/open",
            json!({"toolset": "game", "instance": "vs-bot",
            "options": {"size": 19}}),
        )
        .unwrap();
    assert_eq!(r["adopted"], json!(true));
    assert_eq!(r["instance"], json!("vs-bot"));
    assert!(r["_meta"].get("mcpl/hints").is_none() && r.get("_meta").is_none());
    let t = text(&r);
    assert!(t.contains("Options not applied: {\"size\":19}"), "{t}");
    assert!(t.contains("{\"size\":9}"), "{t}");
    assert_eq!(w.conns[h].session.rev(), rev, "adoption takes no rev");
    let after = w.state(&ada()).open;
    assert_eq!(
        format!("{before:?}"),
        format!("{after:?}"),
        "adoption changes nothing"
    );
}

#[test]
fn v18_a_proposed_name_is_used_as_given_or_refused() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let r = open_game(&mut w, h, "My-Game_2");
    assert_eq!(r["instance"], json!("My-Game_2"));
    let err = w
        .request(
            h,
            "toolsets/open",
            json!({"toolset": "game", "instance": "forbidden"}),
        )
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(
        err.message.contains("that name is reserved"),
        "{}",
        err.message
    );
    let names = w.state(&ada()).instances_of("game");
    assert_eq!(
        names.iter().map(|n| n.as_str()).collect::<Vec<_>>(),
        ["My-Game_2"]
    );
    assert!(
        !w.state(&ada()).open.keys().any(|k| k
            .instance
            .as_ref()
            .is_some_and(|i| i.as_str() == "forbidden")),
        "the refused open leaves no entry behind, not even one being opened"
    );
}

#[test]
fn v21_toolset_tools_are_listed_dynamic_without_an_explicit_static() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    for name in ["play", "pass", "board", "tip", "note", "fortune"] {
        let meta = &listed(&list, name).unwrap()["_meta"];
        assert_ne!(meta.get("mcpl/presence"), Some(&json!("static")), "{name}");
        assert!(meta.get("mcpl/toolset").is_some(), "{name}");
    }
}

#[test]
fn v22_a_default_open_toolset_is_listed_open_and_opening_it_adopts() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["open"], json!([{"toolset": "tips", "title": "Tips"}]));
    assert!(tool_entry(&list["_meta"]["mcpl/hints"], "tip", None).is_some());
    let r = w
        .request(h, "toolsets/open", json!({"toolset": "tips"}))
        .unwrap();
    assert_eq!(r["adopted"], json!(true));
    assert!(!is_error(&w.call(h, "tip", json!({}), None)));
}

#[test]
fn v23_a_per_instance_definition_is_that_instance_own() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    open_game(&mut w, h, "g2");
    let mut u = Update::new();
    u.instance("game", "g1").define(play_def(&["A1"]));
    w.apply(&ada(), u);
    let r = w.call(h, "play", json!({"move": "B2"}), Some("g1"));
    assert!(is_error(&r));
    let t = text(&r);
    assert!(
        t.starts_with("argument `move`:") && t.contains("rule `enum`"),
        "{t}"
    );
    let r = w.call(h, "play", json!({"move": "B2"}), Some("g2"));
    assert!(!is_error(&r), "{r}");
}

#[test]
fn v26_a_host_without_tool_hints_opens_two_chooses_one_and_calls_go_there() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    for compat in ["toolset_open", "toolset_choose", "toolset_close"] {
        assert!(listed(&list, compat).is_some(), "{compat}");
    }
    for name in ["g1", "g2"] {
        let r = w.call(
            h,
            "toolset_open",
            json!({"toolset": "game", "instance": name}),
            None,
        );
        assert!(!is_error(&r), "{r}");
    }
    // g2, opened last, is current.
    assert_eq!(text(&w.call(h, "board", json!({}), None)), "board done");
    let r = w.call(h, "play", json!({"move": "A1"}), None);
    assert_eq!(text(&r), "You played A1 in g2.");
    let r = w.call(
        h,
        "toolset_choose",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    assert!(!is_error(&r), "{r}");
    let r = w.call(h, "play", json!({"move": "B2"}), None);
    assert_eq!(text(&r), "You played B2 in g1.");
    let r = w.call(
        h,
        "toolset_choose",
        json!({"toolset": "game", "instance": "nope"}),
        None,
    );
    assert!(is_error(&r));
    assert!(text(&r).contains("g1, g2"), "{}", text(&r));
}

#[test]
fn v27_toolsets_results_take_the_next_rev_and_tools_list_takes_none() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    let l0 = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(l0["_meta"]["mcpl/rev"], json!(0));
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["_meta"]["mcpl/hints"]["rev"], json!(1));
    let open = open_game(&mut w, h, "g1");
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(2));
    let l1 = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(l1["_meta"]["mcpl/rev"], json!(2));
    let close = w.request(
        h,
        "toolsets/close",
        json!({"toolset": "game", "instance": "g1"}),
    );
    assert_eq!(close.unwrap()["_meta"]["mcpl/hints"]["rev"], json!(3));
    let l2 = w.request(h, "tools/list", json!({})).unwrap();
    assert_eq!(l2["_meta"]["mcpl/rev"], json!(3));
}

#[test]
fn v28_a_cancelled_call_sends_its_consequences_as_tools_hints() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    w.hold_calls = true;
    let id = w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
        "_meta": {"mcpl/instance": "vs-bot"}}),
    );
    w.drive();
    w.notify(h, "notifications/cancelled", Some(json!({"requestId": id})));
    w.complete_held(0);
    assert!(
        w.response(h, &id).is_none(),
        "a cancelled call gets no result"
    );
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["tools/hints"]);
    let hints = hints_of(&msgs[0]).unwrap();
    assert_eq!(hints["rev"], json!(2));
    assert_eq!(
        tool_entry(&hints, "play", Some("vs-bot")).unwrap()["visible"],
        json!(false)
    );
}

#[test]
fn v29_a_push_with_hints_is_never_retried() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    w.apply(&ada(), bot_moves("vs-bot"));
    w.apply(&ada(), bot_moves("vs-bot"));
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["push/event", "push/event"]);
    let ids: Vec<Value> = msgs
        .iter()
        .map(|m| match m {
            Message::Request(r) => r.params.as_ref().unwrap()["eventId"].clone(),
            _ => Value::Null,
        })
        .collect();
    assert_ne!(ids[0], ids[1], "distinct events have distinct ids");
    // The host fails the first; the server neither retries nor restates it.
    let Message::Request(first) = &msgs[0] else {
        unreachable!()
    };
    let err = mcpl_protocol::jsonrpc::ErrorObject::new(
        mcpl_protocol::jsonrpc::ErrorCode::InternalError,
        "host hiccup",
    );
    let now = w.now;
    w.conns[h].session.handle_message(
        now,
        Message::Response(Response::error(Some(first.id.clone()), err)),
    );
    w.drive();
    assert!(w.take(h).is_empty());
    assert_eq!(revs(&msgs), [2, 3]);
}

#[test]
fn v30_a_server_without_toolsets_answers_toolsets_list() {
    let decls = Declarations::new("plain", "1")
        .tool(ToolDef::new("static-one", "A static tool."))
        .tool(ToolDef::new("live", "A dynamic tool.").dynamic());
    let mut w = World::new(decls);
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["open"], json!([]));
    let hints = &list["_meta"]["mcpl/hints"];
    assert_eq!(hints["rev"], json!(1));
    assert!(tool_entry(hints, "live", None).is_some());
    assert!(
        tool_entry(hints, "static-one", None).is_none(),
        "static tools are not stated"
    );
}

#[test]
fn v31_removing_a_toolset_closes_its_instances_with_hints_and_ended_records() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    let without_game = Declarations::new("arcade", "0.1.0")
        .surface("Arcade", Some("Games"))
        .toolset(
            ToolsetDef::new("tips", "Tips")
                .default_open()
                .tool(ToolDef::new("tip", "Read a tip.")),
        )
        .build()
        .unwrap();
    let now = w.now;
    for change in w.replace_catalog(without_game) {
        w.deliver(&change);
    }
    for c in &mut w.conns {
        c.session.handle_catalog_change(now);
    }
    w.drive();
    let msgs = w.take(h);
    assert_eq!(
        methods(&msgs),
        [
            "tools/hints",
            "mcpl/manifestChanged",
            "notifications/tools/list_changed"
        ]
    );
    let hints = hints_of(&msgs[0]).unwrap();
    assert_eq!(hints["toolsets"][0]["state"], json!("closed"));
    assert_eq!(hints["toolsets"][0]["ended"], json!("e-0"));
    let Message::Notification(changed) = &msgs[1] else {
        unreachable!()
    };
    assert_eq!(
        changed.params.as_ref().unwrap()["domains"],
        json!(["toolsets"])
    );
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["ended"][0]["toolset"], json!("game"));
    assert!(w.state(&ada()).instances_of("game").is_empty());
}

#[test]
fn v32_a_host_that_reconnects_reads_an_end_that_happened_while_it_was_away() {
    let mut w = World::arcade();
    let a = w.connect(ada(), true, true);
    open_game(&mut w, a, "vs-bob");
    let mut u = Update::new();
    u.instance("game", "vs-bob").end("Bob resigned; you won.");
    w.apply(&ada(), u);
    let b = w.connect(ada(), true, true);
    let list = w.request(b, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["ended"][0]["instance"], json!("vs-bob"));
    assert_eq!(list["ended"][0]["reason"], json!("Bob resigned; you won."));
    assert_eq!(list["ended"][0]["at"], json!("2026-01-23T10:30:00.000Z"));
}

#[test]
fn v33_without_a_push_grant_something_else_goes_as_tools_hints() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, false);
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    w.apply(&ada(), bot_moves("vs-bot"));
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["tools/hints"]);
    assert_eq!(hints_of(&msgs[0]).unwrap()["rev"], json!(2));
}

#[test]
fn v34_an_instance_name_that_breaks_the_grammar_is_refused() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    for bad in ["vs bot", "-lead", "x".repeat(33).as_str(), "é"] {
        let err = w
            .request(
                h,
                "toolsets/open",
                json!({"toolset": "game", "instance": bad}),
            )
            .unwrap_err();
        assert_eq!(err.code, -32602);
        assert!(
            err.message.contains("^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"),
            "{}",
            err.message
        );
    }
    assert!(w.state(&ada()).instances_of("game").is_empty());
    assert_eq!(w.conns[h].session.rev().get(), 0);
}

#[test]
fn v37_an_empty_full_statement_still_takes_a_rev() {
    let decls = Declarations::new("quiet", "1").toolset(
        ToolsetDef::new("game", "Go")
            .instances()
            .tool(ToolDef::new("play", "Play.")),
    );
    let mut w = World::new(decls);
    let h = w.connect(ada(), true, true);
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["_meta"]["mcpl/hints"], json!({"rev": 1}));
    let again = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(again["_meta"]["mcpl/hints"], json!({"rev": 2}));
}

#[test]
fn v38_toolsets_without_instances_work_without_an_open_for_plain_hosts() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    let r = w.call(h, "note", json!({}), None);
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "note done");
    let list = w.request(h, "tools/list", json!({})).unwrap();
    let raw = list.to_string();
    assert!(
        !raw.contains("mcpl/"),
        "no hint _meta in the tailored list: {raw}"
    );
    let init_free = serde_json::to_string(&w.conns[h].written).unwrap_or_default();
    assert!(!init_free.contains("mcpl/hints"));
    // An options-requiring toolset has no implicit open.
    let r = w.call(h, "answer", json!({}), None);
    assert!(is_error(&r));
    assert!(text(&r).contains("toolset_open"), "{}", text(&r));
}

#[test]
fn v20_a_hint_definition_carries_the_tool_own_name_and_no_hint_meta() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.take(h);
    let mut def = play_def(&["A1"]);
    def.meta = Some(
        json!({"mcpl/toolset": "other", "mcpl/presence": "static", "k": 1})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let mut u = Update::new();
    u.instance("game", "g1").define(def);
    w.apply(&ada(), u);
    let hints = hints_of(&w.take(h)[0]).unwrap();
    let entry = tool_entry(&hints, "play", Some("g1")).unwrap();
    assert_eq!(entry["definition"]["name"], json!("play"));
    assert_eq!(entry["definition"]["_meta"], json!({"k": 1}));
}

#[test]
fn v24_a_push_is_written_before_a_later_result_and_never_waits_for_its_answer() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.take(h);
    w.hold_calls = true;
    let id = w.send_request(
        h,
        "tools/call",
        json!({"name": "board", "arguments": {},
        "_meta": {"mcpl/instance": "g1"}}),
    );
    w.drive();
    w.apply(&ada(), bot_moves("g1")); // undecided push: the host has not answered it
    w.complete_held(0);
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["push/event", "response"]);
    assert_eq!(
        revs(&msgs),
        [2],
        "the result changed nothing, so it takes no rev"
    );
    assert!(w.response(h, &id).is_some());
}

#[test]
fn v25_reads_made_while_a_call_is_in_flight_state_the_truth_at_their_place() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.hold_calls = true;
    w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
        "_meta": {"mcpl/instance": "g1"}}),
    );
    w.drive();
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    let tl = w.request(h, "tools/list", json!({})).unwrap();
    // Before the call finishes, `play` is still visible in both reads.
    assert!(tool_entry(&list["_meta"]["mcpl/hints"], "play", Some("g1")).is_some());
    assert_eq!(
        listed(&tl, "play").unwrap()["_meta"]["mcpl/visible"],
        json!(true)
    );
    assert_eq!(tl["_meta"]["mcpl/rev"], list["_meta"]["mcpl/hints"]["rev"]);
    w.complete_held(0);
    // The result comes after both reads, under the next rev, so applying in rev order ends
    // where the server is.
    let last = w.conns[h].written.last().unwrap().clone();
    let hints = hints_of(&last).unwrap();
    assert_eq!(hints["rev"], json!(3));
    assert_eq!(
        tool_entry(&hints, "play", Some("g1")).unwrap()["visible"],
        json!(false)
    );
}

#[test]
fn v12_rereads_after_a_missed_change_state_what_was_missed() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1"); // rev 1
    let mut u = Update::new();
    u.instance("game", "g1").hide("board");
    w.apply(&ada(), u); // rev 2, which the host "drops"
    w.take(h);
    w.call(h, "play", json!({"move": "A1"}), Some("g1")); // rev 3: the host sees a gap
    let tl = w.request(h, "tools/list", json!({})).unwrap();
    let list = w.request(h, "toolsets/list", json!({})).unwrap();
    assert_eq!(tl["_meta"]["mcpl/rev"], json!(3));
    let hints = &list["_meta"]["mcpl/hints"];
    assert_eq!(hints["rev"], json!(4));
    assert!(
        tool_entry(hints, "board", Some("g1")).is_none(),
        "the missed hide is stated"
    );
    assert!(tool_entry(hints, "play", Some("g1")).is_none());
    assert!(tool_entry(hints, "tip", None).is_some());
    assert_eq!(list["open"][0]["instance"], json!("g1"));
}

#[test]
fn v19_each_push_states_whole_values_so_coalescing_loses_nothing() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.take(h);
    for moves in [&["D4"][..], &["E5", "F6"][..]] {
        let mut u = Update::new();
        u.instance("game", "g1")
            .show("play")
            .define(play_def(moves));
        u.event(Event::text("White moved.").about("game", Some("g1")));
        w.apply(&ada(), u);
    }
    let msgs = w.take(h);
    assert_eq!(revs(&msgs), [2, 3]);
    // The later push restates the whole value, so a host that coalesces the two and applies
    // the hints of both in rev order ends with the latest definition.
    let last = hints_of(&msgs[1]).unwrap();
    let play = tool_entry(&last, "play", Some("g1")).unwrap();
    assert_eq!(play["visible"], json!(true));
    assert_eq!(
        play["definition"]["inputSchema"]["properties"]["move"]["enum"],
        json!(["E5", "F6"])
    );
}

#[test]
fn v35_a_slow_result_is_still_written_with_its_hints() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.hold_calls = true;
    let id = w.send_request(
        h,
        "tools/call",
        json!({"name": "play", "arguments": {"move": "A1"},
        "_meta": {"mcpl/instance": "g1"}}),
    );
    w.drive();
    w.advance(Duration::from_secs(120)); // long past any host timeout
    w.complete_held(0);
    let result = w.response(h, &id).unwrap().unwrap();
    assert_eq!(result["_meta"]["mcpl/hints"]["rev"], json!(2));
}

#[test]
fn v36_messages_are_queued_in_rev_order_whatever_order_calls_finish_in() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    open_game(&mut w, h, "g2");
    w.take(h);
    w.hold_calls = true;
    for g in ["g1", "g2"] {
        w.send_request(
            h,
            "tools/call",
            json!({"name": "play", "arguments": {"move": "A1"},
            "_meta": {"mcpl/instance": g}}),
        );
    }
    w.drive();
    w.complete_held(1); // g2 finishes first
    w.complete_held(0);
    let msgs = w.take(h);
    assert_eq!(revs(&msgs), [3, 4], "write order is rev order");
    assert_eq!(text(&hints_result(&msgs[0])), "You played A1 in g2.");
}

fn hints_result(msg: &Message) -> Value {
    match msg {
        Message::Response(r) => r.outcome.clone().unwrap(),
        _ => Value::Null,
    }
}

#[test]
fn v03_a_push_names_its_instance_even_when_the_app_did_not() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "g1");
    w.take(h);
    let mut u = Update::new();
    u.instance("game", "g1").hide("board");
    u.event(Event::text("The lights went out."));
    w.apply(&ada(), u);
    let msgs = w.take(h);
    let Message::Request(push) = &msgs[0] else {
        panic!("expected a push")
    };
    let params = push.params.as_ref().unwrap();
    assert_eq!(params["toolset"], json!("game"));
    assert_eq!(params["instance"], json!("g1"));
}

#[test]
fn v33_a_push_advertised_but_not_granted_goes_as_tools_hints() {
    // §6.2: `pushEvents` must be both advertised and granted; here the policy withdraws it.
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    assert!(w.conns[h].session.push_granted());
    w.request(
        h,
        "featureSets/update",
        json!({"effectiveCapabilities": []}),
    )
    .expect("policy accepted");
    assert!(
        !w.conns[h].session.push_granted(),
        "advertised by the host, refused by its policy"
    );
    open_game(&mut w, h, "vs-bot");
    w.take(h);
    w.apply(&ada(), bot_moves("vs-bot"));
    let msgs = w.take(h);
    assert_eq!(methods(&msgs), ["tools/hints"]);
    assert_eq!(hints_of(&msgs[0]).unwrap()["rev"], json!(2));
}

#[test]
fn v31_a_toolset_kept_by_new_declarations_stays_open_and_one_that_gains_instances_ends() {
    let mut w = World::arcade();
    let h = w.connect(ada(), true, true);
    open_game(&mut w, h, "vs-bot");
    w.request(h, "toolsets/open", json!({"toolset": "notes"}))
        .unwrap();
    w.take(h);
    // `game` and `tips` are declared as they were; `notes` now has instances.
    let game = ToolsetDef::new("game", "Go")
        .instances()
        .tool(ToolDef::new("board", "Show the board."))
        .tool(ToolDef::new("play", "Play a move."))
        .tool(ToolDef::new("pass", "Pass your turn."));
    let notes = ToolsetDef::new("notes", "Notes")
        .instances()
        .tool(ToolDef::new("note", "Write a note."));
    let changed = Declarations::new("arcade", "0.2.0")
        .toolset(game)
        .toolset(notes)
        .toolset(
            ToolsetDef::new("tips", "Tips")
                .default_open()
                .tool(ToolDef::new("tip", "Read a tip.")),
        )
        .build()
        .unwrap();
    let changes = w.replace_catalog(changed);
    assert_eq!(changes.len(), 1, "only ada's notes ended");
    let state = w.state(&ada());
    let key = |toolset: &str, instance: Option<&str>| {
        OpenKey::new(
            ToolsetName::parse(toolset).unwrap(),
            instance.map(|i| InstanceName::parse(i).unwrap()),
        )
    };
    assert!(
        state.is_open(&key("game", Some("vs-bot"))),
        "{:?}",
        state.open
    );
    assert!(state.is_open(&key("tips", None)), "{:?}", state.open);
    assert!(!state.is_open(&key("notes", None)), "{:?}", state.open);
    assert_eq!(state.ended.len(), 1);
    assert_eq!(state.ended[0].record.toolset, "notes");
}
