//! §6.3 and §11: what hosts without `toolHints` see, and the compatibility tools with their
//! current instance.

mod common;

use common::*;
use mcpl_server::{Declarations, ToolDef, ToolsetDef};
use serde_json::json;

#[test]
fn s6_3_toolsets_methods_are_refused_to_hosts_without_tool_hints() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, true);
    for method in ["toolsets/list", "toolsets/open", "toolsets/close"] {
        let err = w
            .request(h, method, json!({"toolset": "game"}))
            .unwrap_err();
        assert_eq!(err.code, -32601);
        assert!(err.message.contains("toolHints"), "{}", err.message);
    }
}

#[test]
fn s6_3_the_manifest_is_tailored_and_compat_tools_go_only_to_plain_hosts() {
    let mut w = World::arcade();
    let plain = w.connect(ada(), false, false);
    let hinted = w.connect(ada(), true, false);
    let m_plain = w.request(plain, "mcpl/manifest", json!({})).unwrap();
    let m_hinted = w.request(hinted, "mcpl/manifest", json!({})).unwrap();
    assert!(m_plain.get("toolsets").is_none() && m_plain.get("toolHints").is_none());
    assert_eq!(m_hinted["toolHints"], json!(true));
    assert_eq!(
        m_hinted["surface"],
        json!({"title": "Arcade", "summary": "Games"})
    );
    let l = w.request(hinted, "tools/list", json!({})).unwrap();
    assert!(listed(&l, "toolset_open").is_none());
    let err = w.request(
        hinted,
        "tools/call",
        json!({"name": "toolset_open",
        "arguments": {"toolset": "game"}}),
    );
    assert_eq!(err.unwrap_err().message, "unknown tool `toolset_open`");
}

#[test]
fn s11_when_the_current_instance_closes_the_one_left_becomes_current() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    for name in ["g1", "g2", "g3"] {
        w.call(
            h,
            "toolset_open",
            json!({"toolset": "game", "instance": name}),
            None,
        );
    }
    let r = w.call(h, "toolset_close", json!({"toolset": "game"}), None); // closes g3
    assert_eq!(text(&r), "You resigned; White wins.");
    let r = w.call(h, "board", json!({}), None);
    assert!(is_error(&r));
    assert_eq!(
        text(&r),
        "instances of `game` are open: g1, g2; choose one with toolset_choose"
    );
    w.call(
        h,
        "toolset_close",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    let r = w.call(h, "play", json!({"move": "A1"}), None);
    assert_eq!(text(&r), "You played A1 in g2.");
}

#[test]
fn s11_toolset_open_adopts_and_makes_current_without_a_second_game() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g2"}),
        None,
    );
    let r = w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    assert!(text(&r).contains("already open"), "{}", text(&r));
    assert_eq!(
        text(&w.call(h, "play", json!({"move": "A1"}), None)),
        "You played A1 in g1."
    );
    assert_eq!(w.state(&ada()).instances_of("game").len(), 2);
}

#[test]
fn s6_3_a_session_knows_whether_its_host_advertised_tool_hints() {
    let mut w = World::arcade();
    let plain = w.connect(ada(), false, true);
    let hinted = w.connect(ada(), true, true);
    assert!(!w.conns[plain].session.host_has_tool_hints());
    assert!(w.conns[hinted].session.host_has_tool_hints());
}

#[test]
fn s11_compat_tools_are_offered_only_when_a_toolset_needs_them() {
    // Toolsets without instances and without required options are implicitly open for a plain
    // host (§6.3), so it needs no `toolset_*` tools to reach them.
    let decls = Declarations::new("notebook", "1")
        .tool(ToolDef::new("hello", "Say hello."))
        .toolset(ToolsetDef::new("notes", "Notes").tool(ToolDef::new("note", "Write a note.")));
    let mut w = World::new(decls);
    let h = w.connect(ada(), false, false);
    let list = w.request(h, "tools/list", json!({})).unwrap();
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["hello", "note"]);
    let err = w
        .request(
            h,
            "tools/call",
            json!({"name": "toolset_open", "arguments": {"toolset": "notes"}}),
        )
        .unwrap_err();
    assert_eq!(err.code, -32602);
    assert_eq!(err.message, "unknown tool `toolset_open`");
    assert_eq!(text(&w.call(h, "note", json!({}), None)), "note done");
}

#[test]
fn s11_closing_another_instance_keeps_the_current_one() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    for name in ["g1", "g2", "g3"] {
        w.call(
            h,
            "toolset_open",
            json!({"toolset": "game", "instance": name}),
            None,
        );
    }
    // g3 is current; closing g1 by name leaves it so.
    w.call(
        h,
        "toolset_close",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    let r = w.call(h, "play", json!({"move": "A1"}), None);
    assert_eq!(text(&r), "You played A1 in g3.");
    // A close without a name still means the current one.
    let r = w.call(h, "toolset_close", json!({"toolset": "game"}), None);
    assert!(!is_error(&r), "{r}");
    let open: Vec<String> = w
        .state(&ada())
        .instances_of("game")
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(open, ["g2"]);
}

#[test]
fn s11_a_call_with_no_instance_open_is_a_tool_error_saying_how_to_open_one() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    let r = w.call(h, "board", json!({}), None);
    assert!(is_error(&r));
    assert_eq!(
        text(&r),
        "no instance of `game` is open; open one with toolset_open"
    );
    // The same once the only instance has closed again.
    w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g1"}),
        None,
    );
    w.call(h, "toolset_close", json!({"toolset": "game"}), None);
    let r = w.call(h, "board", json!({}), None);
    assert_eq!(
        text(&r),
        "no instance of `game` is open; open one with toolset_open"
    );
}

#[test]
fn s6_2_a_session_pushes_only_when_push_events_is_advertised_and_granted() {
    let mut w = World::arcade();
    let both = w.connect(ada(), true, true);
    let neither = w.connect(ada(), true, false);
    assert!(w.conns[both].session.push_granted());
    assert!(!w.conns[neither].session.push_granted());
}

#[test]
fn s11_toolset_open_answers_with_the_apps_open_text_then_the_current_instance() {
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    let r = w.call(
        h,
        "toolset_open",
        json!({"toolset": "game", "instance": "g1", "options": {"size": 13}}),
        None,
    );
    assert!(!is_error(&r), "{r}");
    // The app's own words come first: the agent learns the game started, then where it is.
    assert_eq!(
        text(&r),
        "New 13x13 game. You are Black; your move.\ninstance `g1` of `game` is open and current"
    );
}

#[test]
fn s11_when_the_server_ends_the_current_instance_the_one_left_is_used() {
    // The app ends the current game itself (not `toolset_close`): the session still holds
    // it as current, and must not route to it once it is gone.
    let mut w = World::arcade();
    let h = w.connect(ada(), false, false);
    for name in ["g1", "g2"] {
        w.call(
            h,
            "toolset_open",
            json!({"toolset": "game", "instance": name}),
            None,
        );
    }
    let mut end = mcpl_server::Update::new();
    end.instance("game", "g2").end("White resigned.");
    w.apply(&ada(), end);
    let r = w.call(h, "play", json!({"move": "A1"}), None);
    assert_eq!(text(&r), "You played A1 in g1.");
}
