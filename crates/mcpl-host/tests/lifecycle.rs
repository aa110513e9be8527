//! H77-H88: lifecycle (removal, restart, disconnects, redaction) and the inline cap.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::controller::{CloseRequest, OpenRequest, Outcome, Unconfirmed};
use mcpl_host::presenter::{META_ACT, META_LOOK, META_OPEN, can_carry, result_text};
use mcpl_host::{Controller, mask_capabilities};
use serde_json::json;

#[test]
fn h77_removing_a_server_forgets_its_toolset_state() {
    let mut s = arcade();
    s.ended
        .push(json!({"id": "e-1", "toolset": "game", "instance": "x", "reason": "over"}));
    let mut h = Host::new(vec![("arcade", s)]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("board", Some("g1"), false);
    h.sync();
    assert!(h.pres.owed(&h.agent) > 0);
    h.pres.remove_server(&sn("arcade"));
    assert_eq!(h.pres.owed(&h.agent), 0, "owed changes survived removal");
    assert!(h.pres.needs_rebuild());
    h.pres.rebuild();
    assert!(!h.names().contains(&"challenge".to_owned()));
    // Added again: nothing of the old state counts (the ended id is told again).
    h.sync();
    let p = h.pair("arcade");
    p.host.resync(p.now);
    let told = h.notices().join("\n");
    assert!(
        told.contains("over"),
        "a told mark survived removal: {told}"
    );
}

#[test]
fn h78_a_restart_under_another_id_or_without_hints_forgets_and_the_same_id_keeps() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let prev = p.host.snapshot().clone();
    let key = open_key("game", Some("g1"));
    let mut other = config(&arcade());
    other.server = sn("renamed");
    let c = Controller::resume(other, p.now, Some(prev.clone()));
    assert!(c.snapshot().open().is_empty() && c.snapshot().opened_here().is_empty());
    let mut off = config(&arcade());
    off.host_tool_hints = false;
    let c = Controller::resume(off, p.now, Some(prev.clone()));
    assert!(c.snapshot().open().is_empty());
    let c = Controller::resume(config(&arcade()), p.now, Some(prev));
    assert!(
        c.snapshot().opened_here().contains(&key),
        "the same id lost its state"
    );
}

#[test]
fn h79_a_disconnect_during_connect_ends_the_connect() {
    // Stopped while the connect waits for its list, and while it waits for its statement.
    for (held, dialled) in [
        ("tools/list", vec!["tools/list"]),
        ("toolsets/list", vec!["tools/list", "toolsets/list"]),
    ] {
        let s = arcade();
        let cfg = config(&s);
        let mut p = Pair::with_config(s, cfg.clone());
        p.hold.insert(held.into());
        p.host = Controller::new(cfg, p.now);
        p.clear();
        p.run();
        p.effects.clear();
        let before = p.host.snapshot().clone();
        p.host.handle_close(p.now);
        assert!(p.host.is_closed(), "the stop did not take ({held} held)");
        p.release(held);
        // Long past every retry and back-off: nothing is dialled again.
        p.advance(Duration::from_secs(600));
        assert_eq!(
            p.sent_methods(),
            dialled,
            "dialled on after the stop ({held} held)"
        );
        // The version counts every state change: none happened.
        let state = |c: &mcpl_host::controller::Snapshot| {
            (
                c.version(),
                c.listed(),
                c.ready(),
                c.applied().get(),
                c.tools().len(),
            )
        };
        assert_eq!(
            state(p.host.snapshot()),
            state(&before),
            "late state applied after the stop ({held} held)"
        );
        assert!(!p.host.snapshot().ready());
        assert!(p.effects.is_empty(), "{:?}", p.effects);
        assert!(p.host.poll_timeout().is_none());
    }
}

#[test]
fn h80_the_capability_mask_never_touches_rfc_014_members() {
    let manifest = json!({"version": "0.5", "toolHints": true, "toolsets": {}, "surface": {"title": "A"}, "channels": true});
    let mask: Vec<String> = ["toolHints", "toolsets", "surface", "channels"]
        .map(String::from)
        .to_vec();
    let (masked, reported) = mask_capabilities(&manifest, &mask);
    assert_eq!(reported, vec!["channels".to_owned()]);
    assert_eq!(masked["toolHints"], true);
    assert!(masked["toolsets"].is_object() && masked["surface"].is_object());
    assert!(masked.get("channels").is_none());
}

#[test]
fn h82_a_dropped_connection_settles_pending_requests_as_unconfirmed() {
    let mut p = Pair::new(arcade());
    p.hold = ["toolsets/open", "toolsets/close", "tools/call"]
        .map(String::from)
        .into();
    let o = p
        .host
        .open(
            p.now,
            OpenRequest {
                toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
                instance: Some(mcpl_host::names::InstanceName::parse("g1").unwrap()),
                options: None,
            },
        )
        .expect("open");
    let c = p
        .host
        .close(
            p.now,
            CloseRequest {
                toolset: mcpl_host::names::ToolsetName::parse("cards").unwrap(),
                instance: None,
            },
        )
        .expect("close");
    let a = p
        .host
        .call(
            p.now,
            mcpl_host::controller::CallRequest {
                tool: "hint".into(),
                ..Default::default()
            },
        )
        .expect("call");
    p.flush();
    // One times out first, so it has a late record; the drop discards it.
    p.host.handle_close(p.now + Duration::from_secs(1));
    p.flush();
    for x in [o, c, a] {
        assert_eq!(
            p.answer_of(x),
            Some(&Outcome::Unconfirmed(Unconfirmed::Disconnected))
        );
    }
    p.release("toolsets/open");
    assert!(
        p.host.snapshot().open().is_empty(),
        "a late answer applied after the drop"
    );
}

#[test]
fn h83_the_change_follows_the_result_text() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.pair("arcade").server.borrow_mut().call_hints =
        Some(json!({"tools": [{"name": "board", "instance": "g1", "visible": false}]}));
    let text = h.call(META_ACT, json!({"tool": "pass", "args": {}}));
    let ok_at = text.find("ok").expect("result");
    let change_at = text.find("`board`").expect("change");
    assert!(ok_at < change_at, "{text}");
}

#[test]
fn h84_a_change_that_would_not_fit_goes_out_as_a_notice_and_the_result_is_untouched() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.notices();
    h.cap = Some(20);
    h.pair("arcade").server.borrow_mut().call_hints =
        Some(json!({"tools": [{"name": "board", "instance": "g1", "visible": false}]}));
    let text = h.call(META_ACT, json!({"tool": "pass", "args": {}}));
    assert_eq!(text, "ok", "the result changed");
    assert!(
        h.notices().join("\n").contains("`board`"),
        "the change was cut off"
    );
}

/// What the model reads when `board` in `game`/`g1` is hidden by a call's hints.
const BOARD_GONE: &str =
    "Toolset update from arcade:\n- `board` in `game`/`g1` is no longer available";

/// A host with `game`/`g1` open and nothing owed; the next `tools/call` answers `result` and,
/// with `hides_board`, carries a hint hiding `board` in `g1`.
fn next_call(result: serde_json::Value, hides_board: bool) -> Host {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    // The open's change rode with its answer: nothing is owed.
    assert_eq!(h.notices(), Vec::<String>::new());
    let mut s = h.pair("arcade").server.borrow_mut();
    s.call_result = Some(result);
    if hides_board {
        s.call_hints =
            Some(json!({"tools": [{"name": "board", "instance": "g1", "visible": false}]}));
    }
    drop(s);
    h
}

#[test]
fn h85_a_structured_only_result_is_shown_as_json_and_reads_as_before_without_a_change() {
    let structured = json!({"content": [], "structuredContent": {"score": 3}});
    // Through act (a dynamic tool) and by name (the static `challenge`).
    for call in [
        (META_ACT, json!({"tool": "pass", "args": {}})),
        ("challenge", json!({})),
    ] {
        let mut h = next_call(structured.clone(), true);
        let text = h.call(call.0, call.1.clone());
        assert_eq!(text, format!("{{\"score\":3}}\n{BOARD_GONE}"), "{call:?}");
        assert_eq!(h.window.last(), Some(&text));
        assert_eq!(h.notices(), Vec::<String>::new(), "told twice: {call:?}");
        // No change: exactly the JSON text, as without RFC-014, and nothing else told.
        let mut h = next_call(structured.clone(), false);
        let text = h.call(call.0, call.1.clone());
        assert_eq!(text, "{\"score\":3}", "{call:?}");
        assert_eq!(h.notices(), Vec::<String>::new(), "{call:?}");
    }
    // The rendering rule itself: text blocks win over structured content; nothing shows
    // nothing.
    assert_eq!(
        result_text(
            &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                            "structuredContent": {"score": 3}})
        ),
        "a\nb"
    );
    assert_eq!(result_text(&json!({"structuredContent": [1, 2]})), "[1,2]");
    assert_eq!(result_text(&json!({"content": []})), "");
    assert!(can_carry(&structured));
    assert!(!can_carry(&json!({"content": []})));
}

#[test]
fn h86_a_structured_error_keeps_its_json_and_a_null_one_sends_its_change_as_a_notice() {
    // A structured-only error: its JSON first, then the change, in one answer.
    let mut h = next_call(
        json!({"content": [], "structuredContent": {"why": "bad"}, "isError": true}),
        true,
    );
    let text = h.call(META_ACT, json!({"tool": "pass", "args": {}}));
    assert_eq!(text, format!("{{\"why\":\"bad\"}}\n{BOARD_GONE}"));
    assert_eq!(h.notices(), Vec::<String>::new());
    // A null one reads as without RFC-014 (nothing), and its change is one notice.
    let null = json!({"content": [], "structuredContent": null, "isError": true});
    assert!(!can_carry(&null));
    assert_eq!(result_text(&null), "");
    let mut h = next_call(null.clone(), true);
    let text = h.call(META_ACT, json!({"tool": "pass", "args": {}}));
    assert_eq!(text, "");
    assert_eq!(h.notices(), vec![BOARD_GONE.to_owned()]);
    assert_eq!(h.notices(), Vec::<String>::new(), "told twice");
    // Without a change it reads the same, and nothing is told.
    let mut h = next_call(null, false);
    assert_eq!(h.call(META_ACT, json!({"tool": "pass", "args": {}})), "");
    assert_eq!(h.notices(), Vec::<String>::new());
}

#[test]
fn h87_a_call_that_fails_after_its_result_was_read_tells_its_change_as_a_notice() {
    let mut h = next_call(json!({"content": [{"type": "text", "text": "ok"}]}), true);
    let window = h.window.len();
    let now = h.pair("arcade").now;
    let req = mcpl_host::controller::CallRequest {
        tool: "pass".into(),
        instance: Some(mcpl_host::names::InstanceName::parse("g1").unwrap()),
        ..Default::default()
    };
    let pending = h.pair("arcade").host.call(now, req).expect("call");
    let agent = h.agent.clone();
    h.pres.register_taker(&agent, &sn("arcade"), pending);
    h.sync();
    assert!(
        matches!(
            h.pair("arcade").answer_of(pending),
            Some(Outcome::Result(_))
        ),
        "the result was not read"
    );
    // Claimed by the call, so not a notice yet.
    assert_eq!(h.notices(), Vec::<String>::new());
    // The result was read, then the call failed on the host side: the change is one notice.
    h.pres.release(&agent, &sn("arcade"), pending);
    assert_eq!(h.notices(), vec![BOARD_GONE.to_owned()]);
    assert_eq!(h.notices(), Vec::<String>::new(), "told twice");
    assert_eq!(h.window.len(), window + 1, "{:?}", h.window);
    // Once released, the call can no longer take it.
    assert!(h.pres.take(&agent, &sn("arcade"), pending, None).is_none());
}

#[test]
fn h88_an_open_result_is_never_cut_silently() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.cap = Some(40);
    let text = h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    assert!(
        !text.contains("`play`"),
        "the change did not fit, yet rode along: {text}"
    );
    assert!(
        h.notices().join("\n").contains("`play`"),
        "the change was lost"
    );
}

#[test]
fn h77_removing_a_server_keeps_the_other_servers_reminder_marks() {
    let mut h = Host::new(vec![("arcade", arcade()), ("other", arcade())]);
    for server in ["arcade", "other"] {
        h.call(
            META_OPEN,
            json!({"server": server, "toolset": "game", "instance": "g1"}),
        );
    }
    let agent = h.agent.clone();
    let rows = h.rows.clone();
    assert!(h.pres.reminder(&agent, &rows).is_none());
    h.pres.remove_server(&sn("arcade"));
    // `other`'s announcement is still whole in the compile: nothing to remind.
    let reminder = h.pres.reminder(&agent, &rows);
    assert!(
        reminder.is_none(),
        "removing `arcade` lost `other`'s marks: {reminder:?}"
    );
}

#[test]
fn h77_a_removed_server_leaves_the_presenters_server_list() {
    let mut h = Host::new(vec![("games", arcade()), ("arcade", arcade())]);
    assert_eq!(h.pres.servers(), vec!["arcade", "games"], "sorted ids");
    h.pres.remove_server(&sn("arcade"));
    assert_eq!(h.pres.servers(), vec!["games"]);
    assert!(h.pres.snapshot(&sn("arcade")).is_none());
}

#[test]
fn h79_a_controller_reports_closed_only_once_it_is_stopped() {
    let mut p = Pair::new(arcade());
    assert!(!p.host.is_closed(), "a live connection reads as closed");
    p.host.handle_close(p.now);
    assert!(p.host.is_closed());
}

#[test]
fn a_servers_ping_is_answered_and_any_other_request_is_refused_as_unknown() {
    use mcpl_protocol::jsonrpc::{ErrorCode, Message, Request, RequestId};
    let mut p = Pair::new(arcade());
    p.clear();
    p.feed(Message::Request(Request::new(7, "ping", None)));
    p.feed(Message::Request(Request::new(
        8,
        "sampling/createMessage",
        None,
    )));
    assert_eq!(p.replies.len(), 2, "{:?}", p.replies);
    assert_eq!(p.replies[0].id, Some(RequestId::Number(7)));
    assert_eq!(p.replies[0].outcome, Ok(json!({})));
    assert_eq!(p.replies[1].id, Some(RequestId::Number(8)));
    let refusal = p.replies[1].outcome.as_ref().expect_err("answered");
    assert_eq!(refusal.known_code(), Some(ErrorCode::MethodNotFound));
    assert!(
        p.sent_methods().is_empty(),
        "a ping asks nothing of the server"
    );
}

#[test]
fn a_lost_link_and_its_return_are_each_told_once_and_a_first_connect_is_no_return() {
    use mcpl_host::presenter::LinkState;
    let mut h = Host::new(vec![("arcade", arcade())]);
    let told = |h: &mut Host| {
        let mut all = h.notices();
        all.push(h.call(META_LOOK, json!({})));
        all.join("\n")
    };
    let arcade_id = sn("arcade");
    h.pres
        .set_link(&arcade_id, LinkState::Connecting { attempt: 1 });
    h.pres.set_link(&arcade_id, LinkState::Up);
    let first = told(&mut h);
    assert!(!first.contains("reconnected"), "a first connect: {first}");
    assert!(!first.contains("lost"), "a first connect: {first}");
    h.pres.set_link(
        &arcade_id,
        LinkState::Down {
            attempt: 1,
            error: "connection closed".into(),
            retry_in: Duration::ZERO,
        },
    );
    h.pres
        .set_link(&arcade_id, LinkState::Connecting { attempt: 1 });
    h.pres.set_link(&arcade_id, LinkState::Up);
    let back = told(&mut h);
    assert_eq!(
        back.matches("connection to `arcade` lost (connection closed)")
            .count(),
        1,
        "{back}"
    );
    assert_eq!(back.matches("`arcade` reconnected").count(), 1, "{back}");
    let after = told(&mut h);
    assert!(
        !after.contains("reconnected") && !after.contains("lost"),
        "told again: {after}"
    );
    assert_eq!(h.pres.link(&arcade_id), Some(&LinkState::Up));
    assert_eq!(h.pres.link(&sn("elsewhere")), None);
    // Up reported again while up is no news.
    h.pres.set_link(&arcade_id, LinkState::Up);
    let again = told(&mut h);
    assert!(!again.contains("reconnected"), "told again: {again}");
}

#[test]
fn h77_removing_a_server_keeps_what_the_other_servers_descriptions_have_shown() {
    let mut h = Host::new(vec![("arcade", arcade()), ("other", arcade())]);
    for server in ["arcade", "other"] {
        let opened = h.call(
            META_OPEN,
            json!({"server": server, "toolset": "game", "instance": "g1"}),
        );
        assert!(opened.contains("Play a move."), "{opened}");
    }
    h.pres.remove_server(&sn("arcade"));
    let other = h.pair("other");
    other
        .server
        .borrow_mut()
        .set_visible("play", Some("g1"), false);
    other
        .server
        .borrow_mut()
        .set_visible("play", Some("g1"), true);
    let told = h.notices().join("\n");
    assert!(told.contains("play"), "the change is told: {told}");
    assert!(
        !told.contains("Play a move."),
        "removing `arcade` forgot that `other`'s description was shown: {told}"
    );
}

#[test]
fn a_call_takes_its_own_longer_timeout_and_other_requests_keep_theirs() {
    let s = arcade();
    let mut cfg = config(&s);
    cfg.call_timeout = Some(Duration::from_secs(120));
    let mut p = Pair::with_config(s, cfg);
    p.open_game("g1");
    p.clear();
    p.hold.insert("tools/call".into());
    p.hold.insert("tools/list".into());
    let call = mcpl_host::controller::CallRequest {
        tool: "play".into(),
        instance: Some(inst("g1")),
        ..Default::default()
    };
    let pending = p.host.call(p.now, call).expect("call");
    p.host.resync(p.now);
    p.run();
    assert!(!p.sent_methods().contains(&"toolsets/list"));
    // Past the request timeout (30 s) the list read has failed and the run went on to the
    // statement (H25); the call still waits.
    p.advance(Duration::from_secs(31));
    assert!(
        p.sent_methods().contains(&"toolsets/list"),
        "the list read did not time out at the request timeout: {:?}",
        p.sent_methods()
    );
    assert_eq!(
        p.answer_of(pending),
        None,
        "the call took the request timeout"
    );
    p.advance(Duration::from_secs(90));
    assert_eq!(
        p.answer_of(pending),
        Some(&Outcome::Unconfirmed(Unconfirmed::Timeout))
    );
}
