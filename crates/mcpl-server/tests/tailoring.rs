//! §6.3 and §11: what hosts without `toolHints` see, and the compatibility tools with their
//! current instance.

mod common;

use common::*;
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
    assert_eq!(w.server.state(&ada()).instances_of("game").len(), 2);
}
