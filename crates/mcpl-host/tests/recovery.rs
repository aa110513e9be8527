//! H23-H30: recovery runs, connect reads, undeclared groups and manifest changes.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::Error;
use mcpl_host::controller::{
    ChangeItem, CloseCause, CloseRequest, Effect, OpenRequest, RecoveryReason,
};
use serde_json::json;

#[test]
fn h23_recovery_reads_the_list_then_the_statement() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.host.resync(p.now);
    p.run();
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
}

/// A connected arcade pair with a recovery run started whose `method` requests are held
/// (the run waits at that read).
fn resync_holding(method: &str) -> Pair {
    let mut p = Pair::new(arcade());
    p.clear();
    p.hold.insert(method.into());
    p.host.resync(p.now);
    p.run();
    p
}

#[test]
fn h24_one_run_at_a_time_and_exactly_one_more_for_triggers_during_it() {
    let mut p = resync_holding("tools/list");
    for _ in 0..5 {
        p.host.resync(p.now);
        p.flush();
    }
    assert_eq!(
        p.sent_methods(),
        vec!["tools/list"],
        "a second run started while one was out"
    );
    p.release("tools/list");
    p.run();
    assert_eq!(
        p.recoveries(),
        2,
        "five triggers during a run must schedule exactly one more"
    );
    assert_eq!(
        p.sent_methods()
            .iter()
            .filter(|m| **m == "toolsets/list")
            .count(),
        2
    );
}

#[test]
fn h25_a_failed_recovery_list_still_reads_the_statement_and_retries() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.server.borrow_mut().fail_list = true;
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    p.host.resync(p.now);
    p.run();
    assert_eq!(
        p.sent_methods(),
        vec!["tools/list", "toolsets/list"],
        "the statement was skipped"
    );
    assert!(p.host.snapshot().tool("fresh").is_none());
    // Retries back off and continue until a whole list is applied.
    p.advance(Duration::from_secs(1));
    let lists = p
        .sent_methods()
        .iter()
        .filter(|m| **m == "tools/list")
        .count();
    assert!(lists >= 2, "no retry after a failed list");
    p.server.borrow_mut().fail_list = false;
    p.settle(Duration::from_secs(60));
    assert!(p.host.snapshot().tool("fresh").is_some());
    assert!(
        p.host.poll_timeout().is_none(),
        "retries continued after a whole list"
    );
}

#[test]
fn h25_backoff_is_bounded_and_grows() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.server.borrow_mut().fail_list = true;
    p.host.resync(p.now);
    p.run();
    let mut gaps = Vec::new();
    for _ in 0..10 {
        let t = p.host.poll_timeout().expect("a retry is scheduled");
        gaps.push(t - p.now);
        p.now = t;
        p.host.handle_timeout(t);
        p.run();
    }
    assert!(
        gaps.windows(2).all(|w| w[0] <= w[1]),
        "back-off shrank: {gaps:?}"
    );
    assert!(
        gaps.iter().all(|g| *g <= Duration::from_secs(10)),
        "back-off unbounded: {gaps:?}"
    );
}

#[test]
fn h26_a_failed_statement_retries() {
    let mut p = resync_holding("toolsets/list");
    let r = p.held.pop().expect("statement");
    p.hold.clear();
    p.feed(mcpl_protocol::jsonrpc::Message::Response(
        mcpl_protocol::jsonrpc::Response::error(
            Some(r.id),
            mcpl_protocol::jsonrpc::ErrorObject::new(
                mcpl_protocol::jsonrpc::ErrorCode::InternalError,
                "no",
            ),
        ),
    ));
    assert!(p.host.poll_timeout().is_some());
    p.settle(Duration::from_secs(5));
    assert!(
        p.sent_methods()
            .iter()
            .filter(|m| **m == "toolsets/list")
            .count()
            >= 2
    );
}

#[test]
fn h27_a_closed_connection_applies_and_schedules_nothing() {
    let mut p = resync_holding("tools/list");
    p.host.handle_close(p.now);
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    p.release("tools/list");
    p.feed(hint_note(2, true));
    assert!(p.host.snapshot().tool("fresh").is_none());
    assert!(!p.host.snapshot().visible("hint", None));
    assert!(p.host.poll_timeout().is_none());
    assert_eq!(p.sent_methods(), vec!["tools/list"]);
}

#[test]
fn h28_connect_reads_list_then_statement_even_without_toolsets() {
    let mut s = arcade();
    s.manifest = json!({"version": "0.5", "toolHints": true});
    let p = Pair::new(s);
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
}

/// A host that had `g1` and `g2` open comes back after both ended while it was away: `g1` with
/// a record, `g2` without one. Returns the second connection, its connect reads not yet run.
fn back_from_away() -> Pair {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.open_game("g2");
    let prev = p.host.snapshot().clone();
    {
        let mut s = p.server.borrow_mut();
        s.open.remove(&("game".into(), Some("g1".into())));
        s.ended
            .push(json!({"id": "x1", "toolset": "game", "instance": "g1", "reason": "resigned"}));
        s.open.remove(&("game".into(), Some("g2".into())));
    }
    let cfg = config(&p.server.borrow());
    let server = p.server.clone();
    let mut q = Pair::attach(server, cfg.clone());
    q.host = mcpl_host::Controller::resume(cfg, q.now, Some(prev));
    q.clear();
    q
}

/// `g2` (no record) is told as ended while away, `g1` (with its record) as the server's close.
fn assert_told_ended_while_away(q: &Pair) {
    let items = q.items();
    assert!(items.iter().any(|i| matches!(i, ChangeItem::Closed { instance: Some(i), cause: CloseCause::EndedWhileAway, .. } if i == "g2")), "{items:?}");
    assert!(items.iter().any(|i| matches!(i, ChangeItem::Closed { instance: Some(i), cause: CloseCause::Server, .. } if i == "g1")), "{items:?}");
    assert!(
        items
            .iter()
            .any(|i| matches!(i, ChangeItem::Ended { id, .. } if id == "x1"))
    );
    assert!(q.host.snapshot().open().is_empty());
}

#[test]
fn h28_reconnect_takes_the_statement_as_truth_and_tells_ended_while_away() {
    let mut q = back_from_away();
    q.run();
    assert_eq!(q.sent_methods(), vec!["tools/list", "toolsets/list"]);
    assert!(
        !q.sent_methods().contains(&"toolsets/open"),
        "the host re-opened on its own"
    );
    assert_told_ended_while_away(&q);
}

#[test]
fn h28_a_connect_read_retried_after_its_statement_failed_is_still_the_connect_read() {
    let mut q = back_from_away();
    // The connect run's statement read is lost: it times out, and the run is retried.
    q.hold.insert("toolsets/list".into());
    q.run();
    q.hold.clear();
    q.held.clear();
    assert!(
        q.items().is_empty(),
        "nothing is applied before a statement arrives"
    );
    q.settle(Duration::from_secs(600));
    assert_eq!(
        q.sent_methods(),
        vec!["tools/list", "toolsets/list", "tools/list", "toolsets/list"]
    );
    assert_told_ended_while_away(&q);
}

#[test]
fn h29_undeclared_groups_are_the_hosts_and_never_sent() {
    let mut p = Pair::new(arcade());
    p.clear();
    let r = p.host.open(
        p.now,
        OpenRequest {
            toolset: mcpl_host::names::ToolsetName::parse("lab").unwrap(),
            instance: None,
            options: None,
        },
    );
    assert_eq!(
        r,
        Err(Error::Undeclared(
            mcpl_host::names::ToolsetName::parse("lab").unwrap()
        ))
    );
    assert!(
        !p.host.snapshot().visible("probe", None),
        "a closed group's tool is visible"
    );
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), true)
        .expect("group");
    p.flush();
    assert!(p.host.snapshot().visible("probe", None));
    p.server.borrow_mut().set_visible("probe", None, false);
    p.run();
    assert!(
        !p.host.snapshot().visible("probe", None),
        "visible needs the server's word too"
    );
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), false)
        .expect("group");
    assert!(p.sent.iter().all(|r| !r.method.starts_with("toolsets/")));
}

#[test]
fn h30_a_removed_declaration_closes_its_instances_and_withdrawn_hints_go_hintless() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.clear();
    p.server.borrow_mut().manifest["toolsets"]
        .as_object_mut()
        .expect("obj")
        .remove("game");
    p.server.borrow_mut().open.clear();
    p.feed(toolsets_changed("x"));
    p.run();
    assert!(p.host.snapshot().open().is_empty());
    assert!(p.items().iter().any(|i| matches!(
        i,
        ChangeItem::Closed {
            cause: CloseCause::DeclarationRemoved,
            ..
        }
    )));
    assert!(
        p.host.snapshot().is_undeclared("game"),
        "tools naming it make it undeclared"
    );
    p.server.borrow_mut().manifest = json!({"version": "0.5"});
    p.feed(toolsets_changed("y"));
    p.run();
    assert!(!p.host.snapshot().hinted());
    let _ = (Effect::Recovering(RecoveryReason::Gap),);
}

#[test]
fn h30_a_policy_close_only_closes_what_this_host_opened() {
    let server = std::rc::Rc::new(std::cell::RefCell::new(arcade()));
    let cfg = config(&server.borrow());
    let mut a = Pair::attach(server.clone(), cfg.clone());
    let mut b = Pair::attach(server, cfg);
    a.open_game("g1");
    b.run();
    let key = open_key("game", Some("g1"));
    assert!(
        b.host.snapshot().open().contains_key(&key),
        "b did not see a's open"
    );
    let req = mcpl_host::controller::CloseRequest {
        toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("g1").unwrap()),
    };
    assert!(matches!(
        b.host.policy_close(b.now, req.clone()),
        Err(Error::NotOpenedHere { .. })
    ));
    assert!(a.host.policy_close(a.now, req).is_ok());
}

#[test]
fn h30_withdrawn_tool_hints_gives_the_snapshot_a_new_version() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let before = p.host.snapshot().version();
    p.server.borrow_mut().manifest = json!({"version": "0.5"});
    p.feed(toolsets_changed("z"));
    p.run();
    let snap = p.host.snapshot();
    assert!(!snap.hinted());
    assert!(
        snap.open().is_empty(),
        "a hint-less server kept an instance"
    );
    // A reader comparing versions must see that the state changed.
    assert!(
        snap.version() > before,
        "the withdrawal left the version at {before}"
    );
}

#[test]
fn s5_2_an_instance_for_a_toolset_without_instances_is_refused_before_sending() {
    let mut p = Pair::new(arcade());
    p.clear();
    let open = OpenRequest {
        toolset: mcpl_host::names::ToolsetName::parse("cards").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("c1").unwrap()),
        options: None,
    };
    assert_eq!(
        p.host.open(p.now, open),
        Err(Error::InstanceNotAllowed(
            mcpl_host::names::ToolsetName::parse("cards").unwrap()
        ))
    );
    p.run();
    assert!(p.sent_methods().is_empty(), "{:?}", p.sent_methods());
    assert!(p.host.snapshot().open().is_empty());
    // A close naming an instance of it is refused the same way.
    let close = CloseRequest {
        toolset: mcpl_host::names::ToolsetName::parse("cards").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("c1").unwrap()),
    };
    assert_eq!(
        p.host.close(p.now, close),
        Err(Error::InstanceNotAllowed(
            mcpl_host::names::ToolsetName::parse("cards").unwrap()
        ))
    );
    p.run();
    assert!(p.sent_methods().is_empty(), "{:?}", p.sent_methods());
}

#[test]
fn s5_2_closing_an_instanced_toolset_must_name_the_instance() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.clear();
    let close = CloseRequest {
        toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
        instance: None,
    };
    assert_eq!(
        p.host.close(p.now, close),
        Err(Error::InstanceRequired(
            mcpl_host::names::ToolsetName::parse("game").unwrap()
        ))
    );
    p.run();
    assert!(p.sent_methods().is_empty(), "{:?}", p.sent_methods());
    let key = open_key("game", Some("g1"));
    assert!(p.host.snapshot().open().contains_key(&key));
}

#[test]
fn h28_only_the_connect_read_tells_a_vanished_instance_as_ended_while_away() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    // On a live connection the server drops g1 with no hint and no ended record; a re-read
    // finds it gone, but the connection was never down.
    p.server
        .borrow_mut()
        .open
        .remove(&("game".into(), Some("g1".into())));
    p.clear();
    p.host.resync(p.now);
    p.run();
    let causes: Vec<CloseCause> = p
        .items()
        .into_iter()
        .filter_map(|i| match i {
            ChangeItem::Closed {
                instance, cause, ..
            } if instance.as_deref() == Some("g1") => Some(cause.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(causes, vec![CloseCause::Server]);
}

#[test]
fn h25_backoff_doubles_from_the_first_delay_up_to_the_longest() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.server.borrow_mut().fail_list = true;
    p.host.resync(p.now);
    p.run();
    let mut gaps = Vec::new();
    for _ in 0..9 {
        let t = p.host.poll_timeout().expect("a retry is scheduled");
        gaps.push((t - p.now).as_millis());
        p.now = t;
        p.host.handle_timeout(t);
        p.run();
    }
    // The defaults: 100 ms, doubling per failed run, at most 10 s.
    assert_eq!(
        gaps,
        vec![100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]
    );
}

#[test]
fn h29_an_opened_group_is_in_groups_open_and_each_change_gives_a_larger_version() {
    let mut p = Pair::new(arcade());
    assert!(p.host.snapshot().groups_open().is_empty());
    let v0 = p.host.snapshot().version();
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), true)
        .expect("group");
    let snap = p.host.snapshot();
    assert_eq!(
        snap.groups_open().iter().collect::<Vec<_>>(),
        vec!["lab"],
        "the open group is not listed"
    );
    let v1 = snap.version();
    assert!(v1 > v0, "opening a group left the version at {v0}");
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), false)
        .expect("group");
    let snap = p.host.snapshot();
    assert!(snap.groups_open().is_empty(), "a closed group is listed");
    assert!(
        snap.version() > v1,
        "closing a group left the version at {v1}"
    );
}

#[test]
fn h30_a_removed_declaration_gives_the_snapshot_a_larger_version() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let before = p.host.snapshot().version();
    p.server.borrow_mut().manifest["toolsets"]
        .as_object_mut()
        .expect("obj")
        .remove("game");
    // Only the manifest is answered: the change seen is the removal alone.
    p.hold.insert("tools/list".into());
    p.hold.insert("toolsets/list".into());
    p.feed(toolsets_changed("x"));
    p.run();
    let snap = p.host.snapshot();
    assert!(snap.open().is_empty(), "the removed toolset is still open");
    assert!(
        snap.version() > before,
        "the removal left the version at {before}"
    );
}

#[test]
fn h29_only_a_tagged_group_is_undeclared_a_name_nobody_uses_is_unknown() {
    let mut p = Pair::new(arcade());
    p.clear();
    for toolset in ["nosuch", "lab"] {
        let open = p.host.open(
            p.now,
            OpenRequest {
                toolset: mcpl_host::names::ToolsetName::parse(toolset).unwrap(),
                instance: None,
                options: None,
            },
        );
        let close = p.host.close(
            p.now,
            CloseRequest {
                toolset: mcpl_host::names::ToolsetName::parse(toolset).unwrap(),
                instance: None,
            },
        );
        let want = |toolset: &str| {
            if toolset == "lab" {
                Error::Undeclared(mcpl_host::names::ToolsetName::parse(toolset).unwrap())
            } else {
                Error::UnknownToolset(mcpl_host::names::ToolsetName::parse(toolset).unwrap())
            }
        };
        assert_eq!(open, Err(want(toolset)), "open of `{toolset}`");
        assert_eq!(close, Err(want(toolset)), "close of `{toolset}`");
    }
    p.flush();
    assert!(p.sent_methods().is_empty(), "a refused open was sent");
}

#[test]
fn s5_1_a_declared_toolset_defaults_open_only_when_stated_and_never_with_instances() {
    let mut s = arcade();
    let toolsets = &mut s.manifest["toolsets"];
    toolsets["news"] = json!({"title": "News", "default": "open"});
    toolsets["arena"] = json!({"title": "Arena", "default": "open", "instances": true});
    toolsets["quiet"] = json!({"title": "Quiet"});
    let p = Pair::new(s);
    let snap = p.host.snapshot();
    let declared = snap.declared();
    let default_open = |ts: &str| declared.get(ts).map(|d| d.default_open);
    assert_eq!(default_open("news"), Some(true));
    assert_eq!(default_open("cards"), Some(false), "`closed` read as open");
    // Absent reads as closed; Appendix B.9: instances force closed.
    assert_eq!(default_open("quiet"), Some(false));
    assert_eq!(default_open("arena"), Some(false));
}

#[test]
fn s6_an_instance_that_closes_tells_the_close_not_its_tools_going_invisible() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.server.borrow_mut().set_visible("play", Some("g1"), true);
    p.run();
    assert!(p.host.snapshot().visible("play", Some(&inst("g1"))));
    p.clear();
    let key = ("game".to_owned(), Some("g1".to_owned()));
    p.server.borrow_mut().end(&key, "over");
    p.run();
    let items = p.items();
    assert!(
        items
            .iter()
            .any(|i| matches!(i, ChangeItem::Closed { instance: Some(i), .. } if i == "g1")),
        "the close was not told: {items:?}"
    );
    assert!(
        !items
            .iter()
            .any(|i| matches!(i, ChangeItem::Visibility { .. })),
        "the close also told its tools going invisible: {items:?}"
    );
}

#[test]
fn h24_h25_recovery_status_shows_the_read_the_queued_run_and_the_back_off() {
    use mcpl_host::controller::RecoveryPhase;
    let mut p = Pair::new(arcade());
    p.clear();
    assert_eq!(p.host.recovery().phase, RecoveryPhase::Idle);
    let runs = p.host.recovery().runs;
    p.hold.insert("tools/list".into());
    p.host.resync(p.now);
    p.flush();
    p.host.resync(p.now);
    p.flush();
    let reading = p.host.recovery();
    assert_eq!(reading.phase, RecoveryPhase::ReadingList);
    assert_eq!(reading.runs, runs + 1);
    assert!(reading.again, "the trigger during the run queues one more");
    assert_eq!(
        reading.to_string(),
        "reading tools/list; one more run queued"
    );
    p.release("tools/list");
    p.run();
    assert_eq!(p.host.recovery().phase, RecoveryPhase::Idle);
    assert_eq!(p.host.recovery().runs, runs + 2);

    // A failed read waits out its back-off, and says so.
    p.server.borrow_mut().fail_list = true;
    p.host.resync(p.now);
    p.run();
    let failed = p.host.recovery();
    assert!(matches!(failed.phase, RecoveryPhase::Waiting { .. }));
    assert_eq!(failed.failures, 1);
    assert_eq!(failed.to_string(), "waiting to retry (1 failed in a row)");
}

#[test]
fn h11_a_new_connections_list_sets_visibility_over_the_old_connections_revs() {
    let mut p = Pair::new(arcade());
    // On the first connection a hint at rev 2 makes the static `challenge` visible.
    p.server.borrow_mut().set_visible("challenge", None, true);
    p.run();
    assert!(p.host.snapshot().visible("challenge", None));
    let prev = p.host.snapshot().clone();
    // While away it goes invisible; the new connection's list (rev 0) says so.
    p.server
        .borrow_mut()
        .loose
        .insert("challenge".into(), false);
    let cfg = config(&p.server.borrow());
    let server = p.server.clone();
    let mut q = Pair::attach(server, cfg.clone());
    q.host = mcpl_host::Controller::resume(cfg, q.now, Some(prev));
    q.clear();
    q.run();
    assert_eq!(q.sent_methods(), vec!["tools/list", "toolsets/list"]);
    // H11: revs restart at 0 on a new connection, so rev 2 of the old one outranks nothing.
    assert!(
        !q.host.snapshot().visible("challenge", None),
        "the old connection's rev 2 kept a value the new connection's list replaced"
    );
}

#[test]
fn h21_a_statement_tells_each_visibility_it_changed_in_an_instance_and_in_an_undeclared_group() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), true)
        .expect("group");
    p.run();
    assert!(p.host.snapshot().visible("probe", None));
    assert!(p.host.snapshot().visible("play", Some(&inst("g1"))));
    p.clear();
    // Changed on the server with no hint sent: only the next statement says so.
    {
        let mut s = p.server.borrow_mut();
        let g1 = s.open.get_mut(&("game".into(), Some("g1".into()))).unwrap();
        g1.vis.insert("play".into(), false);
        s.loose.insert("probe".into(), false);
    }
    p.host.resync(p.now);
    p.run();
    let items = p.visibility_items();
    assert_eq!(
        items,
        vec![
            &ChangeItem::Visibility {
                tool: "play".into(),
                toolset: Some(mcpl_host::names::ToolsetName::parse("game").unwrap()),
                instance: Some(inst("g1")),
                visible: false,
            },
            &ChangeItem::Visibility {
                tool: "probe".into(),
                toolset: Some(mcpl_host::names::ToolsetName::parse("lab").unwrap()),
                instance: None,
                visible: false,
            },
        ]
    );
}

#[test]
fn h29_opening_a_group_is_told_as_the_hosts_own_change() {
    let mut p = Pair::new(arcade());
    p.clear();
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), true)
        .expect("group");
    p.flush();
    let changes = p.changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].carrier, mcpl_host::controller::Carrier::Host);
    assert!(
        changes[0].items.iter().any(|i| matches!(
            i,
            ChangeItem::Visibility { tool, visible: true, .. } if tool == "probe"
        )),
        "{changes:?}"
    );
}

#[test]
fn h28_a_later_run_retried_after_its_statement_failed_is_not_a_connect_read() {
    let mut p = Pair::new(arcade());
    p.open_game("g2");
    // g2 vanishes without a record while the host is connected: a close by the server.
    p.server
        .borrow_mut()
        .open
        .remove(&("game".into(), Some("g2".into())));
    p.clear();
    p.hold.insert("toolsets/list".into());
    p.host.resync(p.now);
    p.run();
    p.hold.clear();
    p.held.clear();
    p.settle(Duration::from_secs(600));
    assert_eq!(
        p.sent_methods(),
        vec!["tools/list", "toolsets/list", "tools/list", "toolsets/list"]
    );
    let items = p.items();
    assert!(
        items.iter().any(|i| matches!(i, ChangeItem::Closed { instance: Some(i), cause: CloseCause::Server, .. } if i == "g2")),
        "{items:?}"
    );
}

#[test]
fn h21_a_tool_the_list_moves_to_another_toolset_is_told_gone_from_the_instance_it_left() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    assert!(p.host.snapshot().visible("board", Some(&inst("g1"))));
    p.clear();
    {
        // `board` now belongs to `cards` (declared, not open): it leaves `g1`, which stays.
        let mut s = p.server.borrow_mut();
        let board = s.tools.iter_mut().find(|t| t["name"] == "board").unwrap();
        board["_meta"]["mcpl/toolset"] = json!("cards");
        let g1 = s.open.get_mut(&("game".into(), Some("g1".into()))).unwrap();
        g1.vis.remove("board");
    }
    p.host.resync(p.now);
    p.run();
    assert!(!p.host.snapshot().visible("board", Some(&inst("g1"))));
    let items = p.visibility_items();
    assert_eq!(
        items,
        vec![&ChangeItem::Visibility {
            tool: "board".into(),
            toolset: Some(mcpl_host::names::ToolsetName::parse("game").unwrap()),
            instance: Some(inst("g1")),
            visible: false,
        }]
    );
}

/// H02: a new list that changes the listed definition of a dynamic tool in an open instance
/// (no per-instance override) tells it as redefined there; the old definition is kept to
/// compare with, not read from the list that replaced it.
#[test]
fn h02_a_list_that_changes_a_listed_definition_tells_it_redefined_in_the_open_instance() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let before = p.items().len();
    for t in &mut p.server.borrow_mut().tools {
        if t["name"] == "board" {
            t["description"] = json!("Shows the board, with coordinates.");
        }
    }
    p.feed(mcpl_protocol::jsonrpc::Message::Notification(
        mcpl_protocol::jsonrpc::Notification::new("notifications/tools/list_changed", None),
    ));
    p.run();
    assert_board_redefined_in_g1(&p, before);
}

/// A tool of an undeclared group is loose (§5.4): with the group open on the host side, a
/// hint that hides it is told (the change is computed over the entries it names, and the
/// tool's entry is its loose one, not one under an open toolset instance).
#[test]
fn s5_4_a_hint_on_a_tool_of_an_open_undeclared_group_is_told() {
    let mut p = Pair::new(arcade());
    p.host
        .set_group(&mcpl_host::names::ToolsetName::parse("lab").unwrap(), true)
        .expect("group");
    p.run();
    assert!(p.host.snapshot().visible("probe", None));
    let before = p.items().len();
    let rev = p.host.snapshot().applied().get() + 1;
    p.feed(hints_note(
        json!({"rev": rev, "tools": [{"name": "probe", "visible": false}]}),
    ));
    p.run();
    let items = p.items();
    assert!(
        items[before..].iter().any(|i| matches!(i,
            ChangeItem::Visibility { tool, visible: false, .. } if tool == "probe")),
        "{:?}",
        &items[before..]
    );
}

/// A statement read alone (a refresh) gives the snapshot a new version.
#[test]
fn h26_a_statement_read_alone_gives_the_snapshot_a_new_version() {
    let mut p = Pair::new(arcade());
    let before = p.host.snapshot().version();
    p.host.refresh(p.now).expect("refresh");
    p.run();
    let after = p.host.snapshot().version();
    assert!(after > before, "{before} -> {after}");
}

/// Drops `name` from the server's list (and from what its instances and loose state say),
/// then lets the host read the list again.
fn drop_from_list(p: &mut Pair, name: &str) {
    {
        let mut s = p.server.borrow_mut();
        s.tools.retain(|t| t["name"] != name);
        for inst in s.open.values_mut() {
            inst.vis.remove(name);
        }
        s.loose.remove(name);
    }
    p.host.resync(p.now);
    p.run();
}

/// A visible tool of an open instance that the server drops from its list is told once as
/// gone from that instance: the model saw it there and must not be left to call it.
#[test]
fn h02_a_visible_tool_the_list_drops_is_told_gone_from_its_open_instance() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    p.open_game("g2");
    assert!(p.host.snapshot().visible("board", Some(&inst("g1"))));
    p.clear();
    drop_from_list(&mut p, "board");
    assert!(!p.host.snapshot().visible("board", Some(&inst("g1"))));
    let game = mcpl_host::names::ToolsetName::parse("game").unwrap();
    let gone = |i: &str| ChangeItem::Visibility {
        tool: "board".into(),
        toolset: Some(game.clone()),
        instance: Some(inst(i)),
        visible: false,
    };
    assert_eq!(p.visibility_items(), vec![&gone("g1"), &gone("g2")]);
    // Read again, nothing more is told.
    p.clear();
    p.host.resync(p.now);
    p.run();
    assert_eq!(p.visibility_items(), Vec::<&ChangeItem>::new());
}

/// The same for a visible dynamic tool outside toolsets; a dropped tool the model never saw
/// (invisible) is not told at all.
#[test]
fn h02_a_visible_loose_tool_the_list_drops_is_told_gone_and_an_invisible_one_is_not() {
    let mut p = Pair::new(arcade());
    p.server.borrow_mut().set_visible("hint", None, true);
    p.host.resync(p.now);
    p.run();
    assert!(p.host.snapshot().visible("hint", None));
    p.open_game("g1");
    p.clear();
    drop_from_list(&mut p, "hint");
    assert_eq!(
        p.visibility_items(),
        vec![&ChangeItem::Visibility {
            tool: "hint".into(),
            toolset: None,
            instance: None,
            visible: false,
        }]
    );
    // `play` is in `g1` but invisible there: dropping it tells nothing.
    p.server.borrow_mut().set_visible("play", Some("g1"), false);
    p.host.resync(p.now);
    p.run();
    assert!(!p.host.snapshot().visible("play", Some(&inst("g1"))));
    p.clear();
    drop_from_list(&mut p, "play");
    assert_eq!(p.visibility_items(), Vec::<&ChangeItem>::new());
}

/// H26: a statement that answers after its read timed out leaves the failed run's back-off
/// as it was: the failure is counted once and the retry keeps its time.
#[test]
fn h26_a_statement_answered_after_its_timeout_leaves_the_back_off_as_it_was() {
    use mcpl_host::controller::RecoveryPhase;
    let mut p = resync_holding("toolsets/list");
    assert_eq!(p.held.len(), 1, "the statement is out");
    p.advance(Duration::from_secs(31));
    let waiting = p.host.recovery();
    assert!(
        matches!(waiting.phase, RecoveryPhase::Waiting { .. }),
        "{waiting:?}"
    );
    assert_eq!(waiting.failures, 1);
    p.release("toolsets/list");
    assert_eq!(p.host.recovery(), waiting);
}

/// H21: a statement that gives a tool of an open instance a definition of its own, where the
/// instance had the listed one, tells it as redefined there.
#[test]
fn h21_a_statement_that_gives_an_instance_its_own_definition_tells_it_redefined() {
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let mut def = p
        .server
        .borrow()
        .tools
        .iter()
        .find(|t| t["name"] == "board")
        .cloned()
        .expect("board");
    def["description"] = json!("Shows the board of g1.");
    // The server's state changes without a hint: only the statement read shows it.
    p.server
        .borrow_mut()
        .open
        .get_mut(&("game".into(), Some("g1".into())))
        .expect("g1")
        .defs
        .insert("board".into(), def);
    let before = p.items().len();
    p.host.resync(p.now);
    p.run();
    assert_board_redefined_in_g1(&p, before);
}

/// Asserts that `board` was told redefined in `g1` among the items since the first `before`.
fn assert_board_redefined_in_g1(p: &Pair, before: usize) {
    let items = p.items();
    assert!(
        items[before..].iter().any(|i| matches!(i,
            ChangeItem::Redefined { tool, instance: Some(n) } if tool == "board" && n.as_str() == "g1")),
        "{:?}",
        &items[before..]
    );
}
