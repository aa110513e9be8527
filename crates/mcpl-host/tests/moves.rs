//! H31-H40: presence moves wait for the next rebuild, and the tool keeps working where the
//! model was shown it until then (§4.2).

mod common;

use common::*;
use mcpl_host::ToolPolicy;
use mcpl_host::controller::{ChangeItem, Presence};
use mcpl_protocol::jsonrpc::{Message, Notification};
use serde_json::json;

fn set_presence(h: &mut Host, server: &str, tool: &str, presence: &str) {
    let p = h.pair(server);
    for t in &mut p.server.borrow_mut().tools {
        if t["name"] == tool {
            t["_meta"]["mcpl/presence"] = json!(presence);
        }
    }
    p.feed(Message::Notification(Notification::new(
        "notifications/tools/list_changed",
        None,
    )));
    p.run();
    h.sync();
}

fn arcade_host() -> Host {
    Host::new(vec![("arcade", arcade())])
}

#[test]
fn h31_presence_comes_from_the_latest_list_not_from_a_hint() {
    let mut h = arcade_host();
    let p = h.pair("arcade");
    let r = p.host.snapshot().applied().get() + 1;
    p.feed(hints_note(
        json!({"rev": r, "tools": [{"name": "challenge", "presence": "dynamic"}]}),
    ));
    assert_eq!(
        p.host.snapshot().tool("challenge").map(|t| t.presence),
        Some(Presence::Static)
    );
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    let snap = h.pair("arcade").host.snapshot();
    assert_eq!(
        snap.tool("challenge").map(|t| t.presence),
        Some(Presence::Dynamic)
    );
}

#[test]
fn h32_lists_that_disagree_record_a_pending_move() {
    let mut h = arcade_host();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    let moved = h.pair("arcade").items().iter().any(|i| {
        matches!(i, ChangeItem::PresenceListed { tool, now_static: false } if tool == "challenge")
    });
    assert!(moved);
    assert!(
        h.names().contains(&"challenge".to_owned()),
        "the move was published at once"
    );
}

/// A visible loose tool that a list makes static is told as moved and only so: it is in the
/// stable list now, so an "invisible" item beside the move would tell the model the opposite.
#[test]
fn h35_a_visible_loose_tool_the_list_makes_static_is_told_as_moved_and_not_as_invisible() {
    let mut h = arcade_host();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    let p = h.pair("arcade");
    assert!(p.host.snapshot().visible("challenge", None));
    let before = p.items().len();
    set_presence(&mut h, "arcade", "challenge", "static");
    let items = h.pair("arcade").items();
    assert_eq!(
        items[before..],
        [&ChangeItem::PresenceListed {
            tool: "challenge".into(),
            now_static: true
        }]
    );
}

#[test]
fn h33_a_move_alone_never_rebuilds_and_leaves_the_list_byte_identical() {
    let mut h = arcade_host();
    let before = serde_json::to_string(h.pres.tool_list()).expect("json");
    let digest = h.pres.digest().to_owned();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    assert!(!h.pres.needs_rebuild(), "a move asked for a rebuild");
    assert_eq!(
        serde_json::to_string(h.pres.tool_list()).expect("json"),
        before
    );
    assert_eq!(h.pres.digest(), digest);
    // A static definition change does ask for one.
    h.pair("arcade")
        .server
        .borrow_mut()
        .tools
        .push(tool("extra", json!({})));
    set_presence(&mut h, "arcade", "hint", "dynamic");
    assert!(h.pres.needs_rebuild());
    assert!(h.rebuild(), "the rebuild changed nothing");
    assert_ne!(h.pres.digest(), digest, "a new list kept the old digest");
    let d = h.pres.digest();
    assert!(
        d.len() == 32 && d.bytes().all(|b| b.is_ascii_hexdigit()),
        "{d}"
    );
}

#[test]
fn h34_a_move_is_published_when_the_rebuild_reflects_it_and_an_undone_move_is_never_told() {
    let mut h = arcade_host();
    h.notices();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    set_presence(&mut h, "arcade", "challenge", "static");
    h.rebuild();
    let told = h.notices();
    assert!(
        told.iter().all(|t| !t.contains("moved")),
        "an undone move was told: {told:?}"
    );
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    h.rebuild();
    assert!(
        !h.names().contains(&"challenge".to_owned()),
        "the rebuild did not reflect the move"
    );
    assert!(h.notices().iter().any(|t| t.contains("`challenge` moved")));
}

#[test]
fn h35_a_published_move_is_told_once_with_where_the_tool_lives() {
    let mut h = arcade_host();
    h.notices();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    h.rebuild();
    let told = h.notices().join("\n");
    assert!(told.contains("toolsets_act"), "{told}");
    h.rebuild();
    assert!(h.notices().is_empty(), "a move was told twice");
    set_presence(&mut h, "arcade", "challenge", "static");
    h.rebuild();
    assert!(
        h.notices()
            .join("\n")
            .contains("call it by name as `challenge`")
    );
}

#[test]
fn h36_a_server_that_cannot_be_listed_keeps_its_part_and_tells_no_moves() {
    let mut h = Host::new(vec![("arcade", arcade()), ("second", arcade())]);
    h.notices();
    let names = h.names();
    assert!(names.contains(&"second__challenge".to_owned()));
    // `second` reconnects, and its list read fails.
    {
        let p = h.pair("second");
        p.server.borrow_mut().fail_list = true;
        let cfg = named_config("second", &p.server.borrow());
        p.host = mcpl_host::Controller::new(cfg, p.now);
        p.run();
    }
    h.sync();
    h.rebuild();
    assert_eq!(h.names(), names, "an unlisted server's part changed");
    assert!(h.notices().iter().all(|t| !t.contains("moved")));
}

#[test]
fn h37_both_routes_work_inside_the_window_and_one_outside() {
    let mut h = arcade_host();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    // Inside the window: by name (published static) and through act (latest dynamic).
    assert!(h.pres.callable_by_name(&sn("arcade"), "challenge"));
    assert!(h.pres.actable(&sn("arcade"), "challenge"));
    assert!(h.call("challenge", json!({})).contains("ok"));
    h.rebuild();
    assert!(!h.pres.callable_by_name(&sn("arcade"), "challenge"));
    assert!(h.pres.actable(&sn("arcade"), "challenge"));
    // And the other way: a tool moving to static is callable by name at once.
    set_presence(&mut h, "arcade", "hint", "static");
    assert!(h.pres.callable_by_name(&sn("arcade"), "hint"));
    assert!(h.pres.actable(&sn("arcade"), "hint"));
    h.rebuild();
    assert!(!h.pres.actable(&sn("arcade"), "hint"));
}

#[test]
fn h38_after_the_rebuild_a_call_by_name_points_to_act_by_listed_name() {
    let mut h = arcade_host();
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    h.rebuild();
    let text = h.call("challenge", json!({}));
    assert!(
        text.contains("toolsets_act") && text.contains("`challenge`"),
        "{text}"
    );
    assert!(!h.pair("arcade").sent_methods().contains(&"tools/call"));
}

#[test]
fn h39_patterns_naming_a_dynamic_tool_count_as_matched() {
    let h = arcade_host();
    let policy = ToolPolicy {
        allow: vec![],
        deny: vec!["pla*".into(), "nothing*".into()],
    };
    let snap = h.pres.snapshot(&sn("arcade")).expect("snap");
    let names: Vec<&str> = snap.tools().iter().map(|t| t.tool.name.as_str()).collect();
    assert_eq!(policy.unmatched(&names), vec!["nothing*"]);
}

#[test]
fn h40_look_says_called_by_name_for_a_static_tool_published_or_not() {
    let mut h = arcade_host();
    set_presence(&mut h, "arcade", "hint", "static");
    let text = h.call("toolsets_look", json!({"tool": "hint"}));
    assert!(text.contains("called by name"), "{text}");
    h.rebuild();
    let text = h.call("toolsets_look", json!({"tool": "hint"}));
    assert!(text.contains("called by name"), "{text}");
}

#[test]
fn h37_a_call_by_name_is_refused_while_the_picture_holds_the_tool_invisible() {
    let mut h = arcade_host();
    // A hint hides the static `challenge` (§4.1: it stays in the header, unavailable).
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("challenge", None, false);
    h.sync();
    h.pair("arcade").clear();
    let text = h.call("challenge", json!({}));
    assert!(text.contains("not available now"), "{text}");
    assert!(!h.pair("arcade").sent_methods().contains(&"tools/call"));
    // Inside a move's window too: moved to dynamic and hidden by the same hint, the tool is
    // still callable by name (published static) but not while the picture holds it invisible.
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("challenge", None, true);
    set_presence(&mut h, "arcade", "challenge", "dynamic");
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("challenge", None, false);
    h.sync();
    assert!(h.pres.callable_by_name(&sn("arcade"), "challenge"));
    h.pair("arcade").clear();
    let text = h.call("challenge", json!({}));
    assert!(text.contains("not available now"), "{text}");
    assert!(!h.pair("arcade").sent_methods().contains(&"tools/call"));
    // Visible again: the call goes out.
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("challenge", None, true);
    assert!(h.call("challenge", json!({})).contains("ok"));
}
