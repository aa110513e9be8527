//! H12-H22: applying hint changes on read, in rev order, with gaps, reversals, duplicates,
//! unknown names, definitions and full statements.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::controller::{
    Carrier, ChangeItem, CloseRequest, Effect, OpenRequest, Outcome, Presence, RecoveryReason,
    Unconfirmed,
};
use mcpl_host::{Error, InstanceName};
use mcpl_protocol::jsonrpc::{ErrorCode, RequestId};
use serde_json::json;

fn next(p: &Pair) -> u64 {
    p.host.snapshot().applied().get() + 1
}

#[test]
fn h12_hints_ignored_and_no_toolsets_requests_without_tool_hints() {
    let mut p = Pair::new(server_without_tool_hints());
    assert!(!p.sent_methods().contains(&"toolsets/list"));
    p.feed(hint_note(1, false));
    assert!(
        p.host.snapshot().visible("hint", None),
        "a hint from a hint-less server applied"
    );
    assert_eq!(
        p.host.snapshot().tool("play").map(|t| t.presence),
        Some(Presence::Static)
    );
    // A result's hint `_meta` is ignored too.
    p.server.borrow_mut().call_hints = Some(json!({"tools": [{"name": "hint", "visible": false}]}));
    let call = mcpl_host::controller::CallRequest {
        tool: "hint".into(),
        ..Default::default()
    };
    p.host.call(p.now, call).expect("call");
    p.run();
    assert!(
        p.host.snapshot().visible("hint", None),
        "a result's hints from a hint-less server applied"
    );
    let r = p.host.open(
        p.now,
        OpenRequest {
            toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
            instance: None,
            options: None,
        },
    );
    assert_eq!(r, Err(Error::HintsOff));
    // The host's own switch counts too.
    let s = arcade();
    let mut cfg = config(&s);
    cfg.host_tool_hints = false;
    let p = Pair::with_config(s, cfg);
    assert!(!p.sent_methods().contains(&"toolsets/list"));
    assert!(!p.host.snapshot().hinted());
}

/// The one change a hint making `hint` visible brings.
fn hint_shown() -> Vec<ChangeItem> {
    vec![ChangeItem::Visibility {
        tool: "hint".into(),
        toolset: None,
        instance: None,
        visible: true,
    }]
}

/// A connection to the arcade whose server does not hold the `pushEvents` grant.
fn ungranted() -> Pair {
    let s = arcade();
    let mut cfg = config(&s);
    cfg.push_events = false;
    let mut p = Pair::with_config(s, cfg);
    p.clear();
    p
}

#[test]
fn h13_a_refused_push_still_applies_its_hints() {
    let mut p = ungranted();
    let rev = next(&p);
    p.feed(push(
        "e1",
        json!({"rev": rev, "tools": [{"name": "hint", "visible": true}]}),
    ));
    assert!(p.host.snapshot().visible("hint", None));
    assert_eq!(p.host.snapshot().applied().get(), rev);
    // Exactly one reply: the refusal of `p-e1`.
    assert_eq!(p.replies.len(), 1, "{:?}", p.replies);
    assert_eq!(p.replies[0].id, Some(RequestId::String("p-e1".into())));
    let refusal = p.replies[0]
        .outcome
        .as_ref()
        .expect_err("the push was accepted");
    assert_eq!(refusal.known_code(), Some(ErrorCode::CapabilityDenied));
    // Exactly one change, carried by the refused push, holding exactly the hint's change.
    let changes = p.changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        changes[0].carrier,
        Carrier::Push {
            event_id: Some("e1".into()),
            accepted: false,
        }
    );
    assert_eq!(changes[0].items, hint_shown());
}

#[test]
fn h13_a_result_nobody_awaits_still_applies() {
    let mut p = Pair::new(arcade());
    p.hold.insert("tools/call".into());
    let call = mcpl_host::controller::CallRequest {
        tool: "hint".into(),
        ..Default::default()
    };
    let pending = p.host.call(p.now, call).expect("call");
    p.flush();
    p.advance(Duration::from_secs(31));
    assert_eq!(
        p.answer_of(pending),
        Some(&Outcome::Unconfirmed(Unconfirmed::Timeout))
    );
    p.clear();
    let rev = next(&p);
    p.server.borrow_mut().call_hints = Some(json!({"tools": [{"name": "hint", "visible": true}]}));
    p.release("tools/call");
    assert!(
        p.host.snapshot().visible("hint", None),
        "a late result's hints were dropped"
    );
    assert_eq!(p.host.snapshot().applied().get(), rev);
    // The late result carries exactly the hint's change, marked late, and answers nobody.
    let changes = p.changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        changes[0].carrier,
        Carrier::Result {
            pending,
            late: true,
        }
    );
    assert_eq!(changes[0].items, hint_shown());
    assert_eq!(
        p.answer_of(pending),
        None,
        "a timed-out call was answered twice"
    );
}

#[test]
fn h14_a_late_close_still_closes_and_a_late_open_still_records() {
    let mut p = Pair::new(arcade());
    p.hold.insert("toolsets/open".into());
    let req = OpenRequest {
        toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("g1").unwrap()),
        options: None,
    };
    let pending = p.host.open(p.now, req).expect("open");
    p.flush();
    p.advance(Duration::from_secs(31));
    assert_eq!(
        p.answer_of(pending),
        Some(&Outcome::Unconfirmed(Unconfirmed::Timeout))
    );
    p.release("toolsets/open");
    let key = open_key("game", Some("g1"));
    assert!(
        p.host.snapshot().open().contains_key(&key),
        "a late open was not recorded"
    );
    assert!(
        p.host.snapshot().opened_here().contains(&key),
        "a late open lost who opened it"
    );
    p.hold.insert("toolsets/close".into());
    let close = CloseRequest {
        toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("g1").unwrap()),
    };
    p.host.close(p.now, close).expect("close");
    p.flush();
    p.advance(Duration::from_secs(31));
    p.release("toolsets/close");
    assert!(
        !p.host.snapshot().open().contains_key(&key),
        "a late close did not close"
    );
}

#[test]
fn h15_consecutive_revs_apply_and_passed_revs_never_do() {
    let mut p = Pair::http(arcade());
    let r = next(&p);
    p.feed(hint_note(r, true));
    assert!(p.host.snapshot().visible("hint", None));
    assert_eq!(p.host.snapshot().applied().get(), r);
    p.feed(hint_note(r, false));
    assert!(
        p.host.snapshot().visible("hint", None),
        "a rev at `applied` was applied again"
    );
}

#[test]
fn h16_ordered_gap_recovers_at_once() {
    let mut p = Pair::new(arcade());
    p.clear();
    let r = next(&p) + 1;
    p.hold.insert("tools/list".into());
    p.feed(hint_note(r, true));
    assert!(
        !p.host.snapshot().visible("hint", None),
        "an early rev applied on an ordered transport"
    );
    assert!(p.effects.contains(&Effect::Recovering(RecoveryReason::Gap)));
}

#[test]
fn h16_ordered_reversal_recovers() {
    let mut p = Pair::new(arcade());
    p.clear();
    let r = p.host.snapshot().applied().get();
    p.feed(hint_note(r, true));
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal))
    );
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h16_http_early_rev_is_held_then_applied_in_order_without_recovery() {
    let mut p = Pair::http(arcade());
    p.clear();
    let a = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.server.borrow_mut().loose.insert("hint".into(), false);
    let b = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": false}]}));
    p.feed(b);
    assert!(!p.host.snapshot().visible("hint", None));
    p.feed(a);
    assert!(
        !p.host.snapshot().visible("hint", None),
        "rev n+1 did not apply after n"
    );
    assert_eq!(p.recoveries(), 0);
    let seen: Vec<bool> = p
        .items()
        .iter()
        .filter_map(|i| match i {
            ChangeItem::Visibility { tool, visible, .. } if tool == "hint" => Some(*visible),
            _ => None,
        })
        .collect();
    assert_eq!(seen, vec![true, false], "applied out of rev order");
}

/// A Streamable HTTP pair whose server lost one hinted message and then sent the next one
/// (showing the loose tool `hint`): the host holds that early rev, waiting for the gap (H16).
fn http_pair_holding_an_early_hint() -> Pair {
    let mut p = Pair::http(arcade());
    p.clear();
    let _lost = p.server.borrow_mut().hinted(0, json!({"tools": []}));
    p.server.borrow_mut().loose.insert("hint".into(), true);
    let early = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.feed(early);
    p
}

#[test]
fn h16_http_held_rev_recovers_after_the_hold_limit() {
    let mut p = http_pair_holding_an_early_hint();
    p.advance(Duration::from_millis(1999));
    assert_eq!(p.recoveries(), 0, "recovered before the hold limit");
    p.advance(Duration::from_millis(1));
    assert_eq!(p.recoveries(), 1);
    assert!(p.host.snapshot().visible("hint", None));
}

#[test]
fn h16_http_reversal_is_only_ignored() {
    let mut p = Pair::http(arcade());
    p.clear();
    let r = p.host.snapshot().applied().get();
    p.feed(hint_note(r, true));
    assert_eq!(p.recoveries(), 0);
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h17_a_duplicate_event_is_ignored_and_its_rev_passes() {
    let mut p = Pair::new(arcade());
    let r = next(&p);
    p.feed(push(
        "e1",
        json!({"rev": r, "tools": [{"name": "hint", "visible": true}]}),
    ));
    p.clear();
    // A duplicate of an applied event: no recovery.
    p.feed(push(
        "e1",
        json!({"rev": r, "tools": [{"name": "hint", "visible": false}]}),
    ));
    assert!(p.host.snapshot().visible("hint", None));
    assert_eq!(p.recoveries(), 0, "a duplicate counted as a reversal");
    // A duplicate id with a fresh rev: hints ignored, rev passed, and the host recovers.
    p.hold.insert("tools/list".into());
    p.feed(push(
        "e1",
        json!({"rev": r + 1, "tools": [{"name": "hint", "visible": false}]}),
    ));
    assert!(p.host.snapshot().visible("hint", None));
    assert_eq!(
        p.host.snapshot().applied().get(),
        r + 1,
        "the duplicate's rev did not count as passed"
    );
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::DuplicateEvent))
    );
    // The next rev is not a gap.
    p.feed(hint_note(r + 2, false));
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h18_a_hint_naming_an_unknown_tool_recovers_list_then_statement() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.server
        .borrow_mut()
        .tools
        .push(tool("fresh", json!({"mcpl/presence": "dynamic"})));
    p.server.borrow_mut().loose.insert("fresh".into(), true);
    let msg = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "fresh", "visible": true}]}));
    p.feed(msg);
    p.run();
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::UnknownTool))
    );
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
    assert!(p.host.snapshot().visible("fresh", None));
}

#[test]
fn h19_a_definition_replaces_only_description_schema_annotations() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.open_game("g2");
    let def = json!({"name": "renamed", "title": "T", "description": "New.",
        "inputSchema": {"type": "object", "properties": {"move": {"enum": ["A1"]}}},
        "_meta": {"mcpl/class": "admin", "mcpl/presence": "static", "mcpl/toolset": "cards"}});
    p.server.borrow_mut().redefine("play", Some("g1"), def);
    p.run();
    let snap = p.host.snapshot();
    let d = snap.definition("play", Some(&inst("g1"))).expect("def");
    assert_eq!(d.description, Some(json!("New.")));
    assert_eq!(d.input_schema["properties"]["move"]["enum"], json!(["A1"]));
    let listed = snap.tool("play").expect("listed");
    assert_eq!(listed.tool.name, "play");
    assert_eq!(listed.presence, Presence::Dynamic);
    assert_eq!(listed.toolset.as_deref(), Some("game"));
    let other = snap.definition("play", Some(&inst("g2"))).expect("def");
    assert_eq!(
        other.description,
        Some(json!("Play a move. Only legal moves.")),
        "g2 got g1's definition"
    );
}

#[test]
fn h20_a_move_entry_keeps_its_definition_and_visibility() {
    let mut p = Pair::new(arcade());
    // `challenge` is static; the entry moves it to dynamic with a definition and visibility.
    let r = next(&p);
    p.feed(hints_note(json!({"rev": r, "tools": [{"name": "challenge", "presence": "dynamic",
        "visible": false, "definition": {"name": "challenge", "description": "Moved.", "inputSchema": {"type": "object"}}}]})));
    let snap = p.host.snapshot();
    assert_eq!(
        snap.tool("challenge").map(|t| t.presence),
        Some(Presence::Static),
        "a hint moved the tool"
    );
    assert!(
        !snap.visible("challenge", None),
        "the entry's visibility was dropped"
    );
    assert_eq!(
        snap.definition("challenge", None)
            .and_then(|d| d.into_owned().description),
        Some(json!("Moved."))
    );
}

#[test]
fn h21_a_statement_replaces_all_dynamic_state_and_an_early_one_resyncs() {
    let mut p = Pair::http(arcade());
    p.open_game("g1");
    p.clear();
    // The server forgets everything and states so at a much later rev; an early hint is held.
    p.server.borrow_mut().open.clear();
    let _lost = p.server.borrow_mut().hinted(0, json!({}));
    let mut st = p.server.borrow_mut().statement(0);
    let st_rev = p.host.snapshot().applied().get() + 5;
    st["_meta"]["mcpl/hints"]["rev"] = json!(st_rev);
    // Deliver the later hint first (held), then the statement via a refresh.
    let early = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.feed(early.clone());
    p.hold.insert("toolsets/list".into());
    p.host.refresh(p.now).expect("refresh");
    p.flush();
    let r = p.held.pop().expect("held list");
    p.feed(ok(r.id, st));
    let snap = p.host.snapshot();
    assert!(
        snap.open().is_empty(),
        "an empty statement left an instance open"
    );
    assert!(!snap.visible("play", Some(&inst("g1"))));
    assert_eq!(
        snap.applied().get(),
        st_rev,
        "the statement did not set applied"
    );
    assert!(
        !snap.visible("hint", None),
        "a held hint below the statement survived it"
    );
    assert_eq!(p.recoveries(), 0, "an early statement counted as a gap");
}

#[test]
fn h22_a_statement_without_open_is_malformed_and_fails_the_recovery() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.clear();
    p.hold.insert("toolsets/list".into());
    p.host.resync(p.now);
    p.run();
    let r = p.held.pop().expect("held statement");
    p.hold.clear();
    p.feed(ok(
        r.id,
        json!({"open": {}, "_meta": {"mcpl/hints": {"rev": 99}}}),
    ));
    let key = open_key("game", Some("g1"));
    assert!(
        p.host.snapshot().open().contains_key(&key),
        "a malformed statement changed state"
    );
    assert!(p.host.snapshot().applied().get() < 99);
    assert!(
        p.host.poll_timeout().is_some(),
        "the failed read scheduled no retry"
    );
}

#[test]
fn h16_the_hold_is_at_most_two_seconds() {
    let s = arcade();
    let mut cfg = config(&s);
    cfg.transport = mcpl_host::Transport::StreamableHttp;
    cfg.hold_limit = Duration::from_secs(30);
    let mut p = Pair::with_config(s, cfg);
    p.clear();
    let _lost = p.server.borrow_mut().hinted(0, json!({"tools": []}));
    let b = p.server.borrow_mut().hinted(0, json!({"tools": []}));
    p.feed(b);
    p.advance(Duration::from_secs(2));
    assert_eq!(p.recoveries(), 1, "held longer than Appendix B.3 allows");
}

/// Asks for a refresh and holds its `toolsets/list`: the rev applied before it, and the
/// held request (answer it with `ok`).
fn refresh_held(p: &mut Pair) -> (u64, mcpl_protocol::jsonrpc::Request) {
    p.clear();
    let before = p.host.snapshot().applied().get();
    p.hold.insert("toolsets/list".into());
    p.host.refresh(p.now).expect("refresh");
    p.flush();
    (before, p.held.pop().expect("held statement"))
}

/// Refreshes with a statement that jumps past two revs (`before + 1`, `before + 2`) to its
/// own, `before + 3`, on an ordered transport. Returns `before`.
fn statement_jumping_two_revs(p: &mut Pair) -> u64 {
    let (before, r) = refresh_held(p);
    let mut st = p.server.borrow_mut().statement(0);
    st["_meta"]["mcpl/hints"]["rev"] = json!(before + 3);
    p.feed(ok(r.id, st));
    assert_eq!(p.host.snapshot().applied().get(), before + 3);
    assert_eq!(p.recoveries(), 0, "an early statement counted as a gap");
    before
}

#[test]
fn h16_a_statements_own_rev_seen_again_is_a_reversal_not_a_jumped_rev() {
    let mut p = Pair::new(arcade());
    let before = statement_jumping_two_revs(&mut p);
    // A rev the statement jumped past is only ignored (H21).
    p.feed(hint_note(before + 2, true));
    assert_eq!(p.recoveries(), 0, "a jumped rev started a recovery");
    // The statement's own rev was used, not jumped: on an ordered transport it is a reversal.
    p.feed(hint_note(before + 3, true));
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal)),
        "a repeat of the statement's rev was taken as jumped"
    );
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h16_the_rev_applied_before_a_jumping_statement_seen_again_is_a_reversal() {
    let mut p = Pair::new(arcade());
    let before = statement_jumping_two_revs(&mut p);
    p.feed(hint_note(before, true));
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal)),
        "the rev applied before the statement was taken as one it jumped past"
    );
}

/// The `Visibility` items of `p`'s changes, as (tool, instance, visible).
fn visibility(p: &Pair) -> Vec<(String, Option<InstanceName>, bool)> {
    p.items()
        .iter()
        .filter_map(|i| match i {
            ChangeItem::Visibility {
                tool,
                instance,
                visible,
                ..
            } => Some((tool.clone(), instance.clone(), *visible)),
            _ => None,
        })
        .collect()
}

#[test]
fn s6_a_change_to_a_titled_instance_names_no_retitle_when_the_title_stayed() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let title = p.host.snapshot().open()[&open_key("game", Some("g1"))]
        .title
        .clone();
    assert!(title.is_some(), "the fixture's instance has no title");
    p.clear();
    p.server.borrow_mut().set_visible("pass", Some("g1"), false);
    p.run();
    let items = p.items();
    assert!(
        !items
            .iter()
            .any(|i| matches!(i, ChangeItem::Retitled { .. })),
        "an unchanged title was told as a retitle: {items:?}"
    );
    assert_eq!(
        visibility(&p),
        vec![("pass".to_owned(), Some(inst("g1")), false)]
    );
    assert_eq!(items.len(), 1, "{items:?}");
}

#[test]
fn s6_an_instance_opened_by_hints_tells_only_its_visible_tools() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.feed(hints_note(json!({"rev": next(&p),
        "toolsets": [{"toolset": "game", "instance": "g2", "state": "open", "title": "G2"}],
        "tools": [{"name": "play", "instance": "g2", "visible": true}]})));
    let snap = p.host.snapshot();
    assert!(snap.visible("play", Some(&inst("g2"))));
    assert!(!snap.visible("pass", Some(&inst("g2"))));
    assert!(!snap.visible("board", Some(&inst("g2"))));
    assert_eq!(
        visibility(&p),
        vec![("play".to_owned(), Some(inst("g2")), true)],
        "a tool the instance opened without was told as visible"
    );
    assert!(p.items().iter().any(|i| matches!(
        i,
        ChangeItem::Opened { instance: Some(i), .. } if i == "g2"
    )));
}

#[test]
fn s6_a_close_and_reopen_in_one_message_tells_the_tools_it_hid() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    assert!(p.host.snapshot().visible("play", Some(&inst("g1"))));
    p.clear();
    // A rematch under the same instance name: the old instance ends, a fresh one opens, and
    // no tool of the fresh one has been made visible yet.
    p.feed(hints_note(json!({"rev": next(&p), "toolsets": [
        {"toolset": "game", "instance": "g1", "state": "closed", "ended": "end-7"},
        {"toolset": "game", "instance": "g1", "state": "open", "title": "rematch"}]})));
    let snap = p.host.snapshot();
    assert!(snap.open().contains_key(&open_key("game", Some("g1"))));
    let g1 = Some(inst("g1"));
    for t in ["board", "pass", "play"] {
        assert!(!snap.visible(t, Some(&inst("g1"))), "{t} stayed visible");
    }
    assert_eq!(
        visibility(&p),
        vec![
            ("board".to_owned(), g1.clone(), false),
            ("pass".to_owned(), g1.clone(), false),
            ("play".to_owned(), g1, false),
        ],
        "the reopened instance's hidden tools were not told"
    );
}

#[test]
fn h16_an_expired_hold_starts_one_recovery_and_leaves_no_stale_deadline() {
    let mut p = http_pair_holding_an_early_hint();
    p.hold.insert("tools/list".into());
    p.advance(Duration::from_secs(2));
    assert_eq!(p.recoveries(), 1);
    let next = p.host.poll_timeout().expect("the recovery's list is out");
    assert!(next > p.now, "the expired hold is still reported as due");
    // A driver woken again at the same instant starts nothing more.
    p.host.handle_timeout(p.now);
    p.release("tools/list");
    assert_eq!(p.recoveries(), 1, "one gap was recovered twice");
    assert!(p.host.snapshot().visible("hint", None));
}

#[test]
fn h16_a_hold_filled_in_time_leaves_no_deadline_and_recovers_nothing() {
    let mut p = Pair::http(arcade());
    p.clear();
    let a = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    let b = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "board", "visible": false}]}));
    p.feed(b);
    assert!(
        p.host.poll_timeout().is_some(),
        "an early rev is held until a deadline"
    );
    p.feed(a);
    assert_eq!(
        p.host.poll_timeout(),
        None,
        "the filled hold kept its deadline"
    );
    p.advance(Duration::from_secs(3));
    assert_eq!(p.recoveries(), 0);
    assert!(p.host.snapshot().visible("hint", None));
}

#[test]
fn h16_a_statement_at_the_largest_rev_applies_and_a_later_hint_is_a_reversal_not_a_panic() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.hold.insert("toolsets/list".into());
    let pending = p.host.refresh(p.now).expect("refresh");
    p.flush();
    let r = p.held.pop().expect("the statement request");
    p.hold.clear();
    // A server may write any integer as its rev; u64::MAX leaves no next rev.
    p.feed(ok(
        r.id,
        json!({"open": [], "ended": [],
               "_meta": {"mcpl/hints": {"rev": u64::MAX,
                                         "tools": [{"name": "hint", "visible": true}]}}}),
    ));
    assert!(matches!(p.answer_of(pending), Some(Outcome::Result(_))));
    assert_eq!(p.host.snapshot().applied().get(), u64::MAX);
    assert!(p.host.snapshot().visible("hint", None));
    p.hold.insert("tools/list".into());
    p.feed(hint_note(u64::MAX, false));
    assert!(
        p.host.snapshot().visible("hint", None),
        "the statement's own rev applied again"
    );
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal))
    );
}

/// Answers a `refresh` with the server's statement, its rev set to `rev`.
fn state_at(p: &mut Pair, rev: u64) {
    p.hold.insert("toolsets/list".into());
    p.host.refresh(p.now).expect("refresh");
    p.flush();
    let r = p.held.pop().expect("held statement");
    p.hold.remove("toolsets/list");
    let mut st = p.server.borrow_mut().statement(0);
    st["_meta"]["mcpl/hints"]["rev"] = json!(rev);
    p.feed(ok(r.id, st));
}

#[test]
fn h21_a_held_hint_above_a_statements_rev_applies_after_it() {
    let mut p = Pair::http(arcade());
    p.clear();
    let a = p.host.snapshot().applied().get();
    // Appendix B.4: the statement at a + 3 covers a + 2, but not the held a + 4.
    p.feed(hints_note(
        json!({"rev": a + 2, "tools": [{"name": "board", "visible": true}]}),
    ));
    p.feed(hint_note(a + 4, true));
    assert!(
        !p.host.snapshot().visible("hint", None),
        "a + 4 applied early"
    );
    state_at(&mut p, a + 3);
    let snap = p.host.snapshot();
    assert_eq!(
        snap.applied().get(),
        a + 4,
        "the held a + 4 was not applied"
    );
    assert!(snap.visible("hint", None), "the held a + 4 was dropped");
    assert_eq!(p.recoveries(), 0);
    assert_eq!(p.host.poll_timeout(), None, "nothing waits any more");
}

#[test]
fn h21_a_jumped_rev_stays_ignored_however_many_contiguous_statements_follow() {
    let mut p = Pair::new(arcade());
    p.clear();
    let before = p.host.snapshot().applied().get();
    // One statement jumps past before + 1 and before + 2.
    state_at(&mut p, before + 3);
    // Statements at the next rev jump past nothing, so they leave the jumped range alone.
    for _ in 0..70 {
        let n = next(&p);
        state_at(&mut p, n);
        assert_eq!(p.host.snapshot().applied().get(), n);
    }
    assert_eq!(p.recoveries(), 0);
    p.feed(hint_note(before + 2, true));
    assert_eq!(
        p.recoveries(),
        0,
        "a rev the first statement jumped past was taken as a reversal"
    );
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h17_a_duplicates_rev_taken_by_a_statement_is_a_reversal_when_seen_again() {
    let mut p = Pair::new(arcade());
    p.server.borrow_mut().push = true;
    let first = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.server.borrow_mut().loose.insert("hint".into(), true);
    p.feed(first);
    let a = p.host.snapshot().applied().get();
    // The server spends a + 1 on a message that is lost.
    let _lost = p.server.borrow_mut().hinted(0, json!({}));
    p.clear();
    // A repeat of e1 carries a + 2: its rev is passed, and the host recovers; the recovery's
    // statement takes that same rev, a + 2.
    p.feed(push(
        "e1",
        json!({"rev": a + 2, "tools": [{"name": "hint", "visible": false}]}),
    ));
    p.run();
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::DuplicateEvent))
    );
    assert_eq!(p.host.snapshot().applied().get(), a + 2);
    assert!(p.host.snapshot().visible("hint", None));
    p.clear();
    // a + 2 is spent now; on an ordered transport it is a reversal, not a passed rev.
    p.hold.insert("tools/list".into());
    p.feed(hint_note(a + 2, false));
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal)),
        "a rev the statement took was still counted as passed"
    );
    assert!(p.host.snapshot().visible("hint", None));
}

#[test]
fn s6_a_new_title_for_an_open_instance_is_told_as_a_retitle() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.clear();
    p.feed(hints_note(json!({"rev": next(&p),
        "toolsets": [{"toolset": "game", "instance": "g1", "title": "Go, round two"}]})));
    let key = open_key("game", Some("g1"));
    assert_eq!(
        p.host.snapshot().open()[&key].title.as_deref(),
        Some("Go, round two")
    );
    assert!(
        p.items().iter().any(|i| matches!(
            i,
            ChangeItem::Retitled { instance: Some(i), title, .. }
                if i == "g1" && title == "Go, round two"
        )),
        "a new title was not told: {:?}",
        p.items()
    );
}

#[test]
fn h13_every_applied_hint_gives_the_snapshot_a_larger_version() {
    let mut p = Pair::new(arcade());
    for visible in [true, false, true] {
        let before = p.host.snapshot().version();
        p.feed(hints_note(
            json!({"rev": next(&p), "tools": [{"name": "hint", "visible": visible}]}),
        ));
        assert_eq!(p.host.snapshot().visible("hint", None), visible);
        assert_eq!(
            p.host.snapshot().version(),
            before + 1,
            "one applied hint is one state change"
        );
    }
}

#[test]
fn h17_an_event_id_is_still_known_as_a_duplicate_after_later_events() {
    let mut p = Pair::new(arcade());
    let r = next(&p);
    p.feed(push(
        "e1",
        json!({"rev": r, "tools": [{"name": "hint", "visible": true}]}),
    ));
    p.feed(push(
        "e2",
        json!({"rev": r + 1, "tools": [{"name": "hint", "visible": true}]}),
    ));
    p.clear();
    p.hold.insert("tools/list".into());
    // `e1` came two events ago: its redelivery is still a duplicate, and its hints are ignored.
    p.feed(push(
        "e1",
        json!({"rev": r + 2, "tools": [{"name": "hint", "visible": false}]}),
    ));
    assert!(
        p.host.snapshot().visible("hint", None),
        "a duplicate's hints were applied"
    );
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::DuplicateEvent))
    );
}

#[test]
fn h19_a_definition_for_a_tool_of_an_undeclared_group_is_the_one_checked() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.feed(hints_note(
        json!({"rev": next(&p), "tools": [{"name": "probe",
        "definition": {"name": "probe", "description": "Probed anew.",
                       "inputSchema": {"type": "object"}}}]}),
    ));
    let d = p.host.snapshot().definition("probe", None).expect("def");
    assert_eq!(
        d.description,
        Some(json!("Probed anew.")),
        "the hint-set definition of `lab`'s tool was lost"
    );
}

#[test]
fn h21_a_statement_that_omits_a_visible_dynamic_tool_makes_it_invisible() {
    let mut p = Pair::new(arcade());
    p.server.borrow_mut().loose.insert("hint".into(), true);
    let shown = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.feed(shown);
    assert!(p.host.snapshot().visible("hint", None));
    // The hint that hid it is lost; the next statement no longer names it.
    p.server.borrow_mut().loose.insert("hint".into(), false);
    p.clear();
    p.host.resync(p.now);
    p.run();
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
    assert!(
        !p.host.snapshot().visible("hint", None),
        "a dynamic tool the statement left out stayed visible"
    );
    assert!(p.host.snapshot().visible("challenge", None));
}

#[test]
fn h21_a_statement_drops_a_held_hint_at_its_own_rev() {
    let mut p = http_pair_holding_an_early_hint();
    let held = p.host.snapshot().applied().get() + 2;
    assert!(p.host.poll_timeout().is_some(), "the early rev is not held");
    // The recovery's statement reports the rev of the server's last change: the held one.
    p.server.borrow_mut().conns[0].rev = held - 1;
    p.host.resync(p.now);
    p.run();
    assert_eq!(p.host.snapshot().applied().get(), held);
    assert!(p.host.snapshot().visible("hint", None));
    assert_eq!(
        p.host.poll_timeout(),
        None,
        "the statement covered the held rev but its hold stayed"
    );
    p.clear();
    p.advance(Duration::from_secs(3));
    assert_eq!(p.recoveries(), 0, "a covered hold expired into a recovery");
}

#[test]
fn h21_a_held_list_below_a_statement_takes_effect_before_it() {
    let mut p = Pair::http_rereading(arcade());
    // The server moves `hint` to static (visible) under rev 2, which is lost on the way.
    {
        let mut s = p.server.borrow_mut();
        for t in &mut s.tools {
            if t["name"] == "hint" {
                t["_meta"]["mcpl/presence"] = json!("static");
            }
        }
        s.loose.insert("hint".into(), true);
        let _lost = s.hinted(
            0,
            json!({"tools": [{"name": "hint", "presence": "static"}]}),
        );
    }
    // The list (rev 2) is ahead of applied (1): held.
    let page = p.answer_held("tools/list").remove(0);
    p.feed(page);
    assert_eq!(
        p.host.snapshot().tool("hint").map(|t| t.presence),
        Some(Presence::Dynamic),
        "a list ahead of applied took effect early"
    );
    // The statement (rev 3) comes before the hold limit. The list takes effect at its place,
    // before it: `hint` is static and visible, which the statement does not restate.
    let statement = p.answer_held("toolsets/list").remove(0);
    p.feed(statement);
    let snap = p.host.snapshot();
    assert_eq!(snap.applied().get(), 3);
    assert_eq!(
        snap.tool("hint").map(|t| t.presence),
        Some(Presence::Static)
    );
    assert!(
        snap.visible("hint", None),
        "the statement hid a tool the list before it had made static"
    );
}

#[test]
fn h21_a_statement_that_drops_a_static_tools_hint_reads_the_list_again() {
    let mut p = Pair::http(arcade());
    p.clear();
    // Rev 2 is lost; rev 3 hides the static `challenge` and waits behind the gap.
    let _lost = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.server.borrow_mut().set_visible("challenge", None, false);
    p.run();
    assert!(
        p.host.snapshot().visible("challenge", None),
        "rev 3 was held"
    );
    // A statement (rev 4) overtakes and drops rev 3; it does not state static tools, so
    // the host reads `tools/list` again, which shows `challenge` hidden.
    p.host.refresh(p.now).expect("refresh");
    p.run();
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Unstated)),
        "no re-read after dropping a static tool's hint"
    );
    assert!(!p.host.snapshot().visible("challenge", None));
}

#[test]
fn h41_a_recovery_that_finds_nothing_new_tells_no_change() {
    // Changes are the difference between the state before and after a read; a re-read of an
    // unchanged server differs in nothing, so telling anything would tell a change twice.
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.clear();
    p.host.resync(p.now);
    p.run();
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
    assert_eq!(p.items(), Vec::<&ChangeItem>::new());
    assert_eq!(p.picture(), truth(&p.server.borrow()));
}

#[test]
fn h41_each_message_read_takes_the_next_read_position_unless_the_embedder_gives_one() {
    let mut p = Pair::new(arcade());
    p.clear();
    let rev = p.host.snapshot().applied().get();
    let note = |rev: u64, visible: bool| {
        hints_note(json!({"rev": rev, "tools": [{"name": "hint", "visible": visible}]}))
    };
    p.host.handle_message(p.now, None, note(rev + 1, true));
    p.host.handle_message(p.now, None, note(rev + 2, false));
    p.host.handle_message(p.now, Some(100), note(rev + 3, true));
    p.host.handle_message(p.now, None, note(rev + 4, false));
    // A position given lower than one already read does not move the count back.
    p.host.handle_message(p.now, Some(5), note(rev + 5, true));
    p.flush();
    let seqs: Vec<u64> = p.changes().iter().map(|c| c.seq).collect();
    let first = seqs[0];
    assert_eq!(seqs, vec![first, first + 1, 100, 101, 101], "{seqs:?}");
}

#[test]
fn h21_a_stale_statement_on_streamable_http_is_dropped_without_a_recovery() {
    let mut p = Pair::http(arcade());
    let (before, r) = refresh_held(&mut p);
    // The statement was overtaken on another stream: a hint at the next rev came first.
    p.feed(hint_note(before + 1, true));
    let mut st = p.server.borrow_mut().statement(0);
    st["_meta"]["mcpl/hints"]["rev"] = json!(before + 1);
    p.feed(ok(r.id, st));
    assert_eq!(p.host.snapshot().applied().get(), before + 1);
    assert!(
        p.host.snapshot().visible("hint", None),
        "the stale statement was applied"
    );
    assert_eq!(
        p.recoveries(),
        0,
        "a stale statement on HTTP started a recovery"
    );
}

#[test]
fn h13_a_grant_given_later_makes_the_next_push_accepted() {
    let mut p = ungranted();
    let first = next(&p);
    p.feed(push("e1", json!({"rev": first, "tools": []})));
    p.host.set_push_events(true);
    p.feed(push("e2", json!({"rev": first + 1, "tools": []})));
    let outcomes: Vec<Option<ErrorCode>> = p
        .replies
        .iter()
        .map(|r| r.outcome.as_ref().err().and_then(|e| e.known_code()))
        .collect();
    assert_eq!(outcomes, vec![Some(ErrorCode::CapabilityDenied), None]);
}

#[test]
fn h16_a_stale_statement_on_an_ordered_transport_is_a_reversal() {
    let mut p = Pair::new(arcade());
    let (before, r) = refresh_held(&mut p);
    p.feed(hint_note(before + 1, true));
    let mut st = p.server.borrow_mut().statement(0);
    st["_meta"]["mcpl/hints"]["rev"] = json!(before + 1);
    p.feed(ok(r.id, st));
    assert!(
        p.host.snapshot().visible("hint", None),
        "the stale statement was applied"
    );
    assert!(
        p.effects
            .contains(&Effect::Recovering(RecoveryReason::Reversal)),
        "a statement at a rev already applied, on an ordered transport, was not a reversal"
    );
}

#[test]
fn h14_two_late_results_each_apply_their_hints_and_are_told_as_late() {
    let mut p = Pair::new(arcade());
    p.hold.insert("tools/call".into());
    let mut pendings = Vec::new();
    for _ in 0..2 {
        let call = mcpl_host::controller::CallRequest {
            tool: "hint".into(),
            ..Default::default()
        };
        pendings.push(p.host.call(p.now, call).expect("call"));
    }
    p.flush();
    p.advance(Duration::from_secs(31));
    p.clear();
    let rev = next(&p);
    let held: Vec<_> = std::mem::take(&mut p.held);
    assert_eq!(held.len(), 2);
    for (k, r) in held.into_iter().enumerate() {
        let hints = json!({"rev": rev + k as u64,
            "tools": [{"name": "hint", "visible": k == 0}]});
        p.feed(ok(
            r.id,
            json!({"content": [], "_meta": {"mcpl/hints": hints}}),
        ));
    }
    let carriers: Vec<&Carrier> = p.changes().iter().map(|c| &c.carrier).collect();
    assert_eq!(
        carriers,
        vec![
            &Carrier::Result {
                pending: pendings[0],
                late: true
            },
            &Carrier::Result {
                pending: pendings[1],
                late: true
            },
        ]
    );
    assert_eq!(p.host.snapshot().applied().get(), rev + 1);
    assert_eq!(p.recoveries(), 0, "a late result went unrecognised");
}

#[test]
fn h17_a_rev_passed_above_a_statements_rev_still_counts_after_the_statement() {
    let mut p = Pair::http(arcade());
    let (a, r) = refresh_held(&mut p);
    p.feed(push(
        "e1",
        json!({"rev": a + 1, "tools": [{"name": "hint", "visible": true}]}),
    ));
    // A repeat of e1 carrying a + 4: its rev is passed (H17). The recovery it starts waits.
    p.hold.insert("tools/list".into());
    p.feed(push(
        "e1",
        json!({"rev": a + 4, "tools": [{"name": "hint", "visible": false}]}),
    ));
    // The refresh's statement answers at a + 2: it states a + 2 but not the passed a + 4,
    // which must stay passed (Appendix B.4 drops only what the statement covers).
    let mut st = p.server.borrow_mut().statement(0);
    st["_meta"]["mcpl/hints"]["rev"] = json!(a + 2);
    p.feed(ok(r.id, st));
    assert_eq!(p.host.snapshot().applied().get(), a + 2);
    // a + 3 arrives: it applies, and the passed a + 4 follows it at once.
    p.feed(hint_note(a + 3, false));
    assert_eq!(
        p.host.snapshot().applied().get(),
        a + 4,
        "the rev passed above the statement's was forgotten by the statement"
    );
    // So a + 5 is no gap: it applies at once, with nothing held.
    p.feed(hint_note(a + 5, true));
    assert_eq!(p.host.snapshot().applied().get(), a + 5);
    assert!(p.host.snapshot().visible("hint", None));
}
