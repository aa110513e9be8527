//! H01-H11: reading `tools/list` whole, at its last page, and only then.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::ToolPolicy;
use mcpl_host::controller::Presence;
use serde_json::json;

fn paged(page: usize) -> Server {
    let mut s = arcade();
    s.page_size = page;
    s
}

/// Runs a recovery whose `tools/list` pages are held, and returns the pair with the first
/// page request held.
fn resync_held(mut p: Pair) -> Pair {
    p.clear();
    p.hold.insert("tools/list".into());
    p.host.resync(p.now);
    p.flush();
    p
}

fn id_of_held(p: &Pair) -> mcpl_protocol::jsonrpc::RequestId {
    p.held.last().expect("a held request").id.clone()
}

#[test]
fn h01_pages_followed_and_nothing_applied_before_last() {
    let mut p = resync_held(Pair::new(paged(2)));
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    // Deliver pages one at a time: nothing new is state until the last.
    let mut pages = 0;
    loop {
        let answers = p.answer_held("tools/list");
        if answers.is_empty() {
            break;
        }
        for a in answers {
            pages += 1;
            assert!(
                p.host.snapshot().tool("fresh").is_none(),
                "applied before the last page"
            );
            p.feed(a);
        }
    }
    assert_eq!(pages, 4, "8 tools in pages of 2");
    p.release("tools/list");
    assert!(p.host.snapshot().tool("fresh").is_some());
}

#[test]
fn h02_hints_read_after_last_page_apply_on_top_of_the_list() {
    let mut p = resync_held(Pair::new(arcade()));
    let page = p.answer_held("tools/list").remove(0);
    p.hold.insert("toolsets/list".into());
    p.feed(page); // list says `hint` invisible (rev 1)
    let rev = p.host.snapshot().applied().get() + 1;
    p.feed(hint_note(rev, true));
    assert!(
        p.host.snapshot().visible("hint", None),
        "the list overwrote a later hint"
    );
}

#[test]
fn h03_a_malformed_page_fails_the_whole_list() {
    let bad_pages = [
        json!("not an object"),
        json!({"tools": {"a": 1}}),
        json!({"tools": [{"description": "no name"}]}),
        json!({"tools": [{"name": 7}]}),
        json!({"tools": [], "nextCursor": 5}),
    ];
    for bad in bad_pages {
        let mut p = resync_held(Pair::new(paged(4)));
        p.server
            .borrow_mut()
            .tools
            .insert(0, tool("fresh", json!({})));
        let before = p.host.snapshot().tools().len();
        let first = p.answer_held("tools/list").remove(0);
        p.feed(first);
        let id = id_of_held(&p);
        p.feed(ok(id, bad.clone()));
        p.held.clear();
        assert!(
            p.host.snapshot().tool("fresh").is_none(),
            "page 1 applied though page 2 was {bad}"
        );
        assert_eq!(p.host.snapshot().tools().len(), before);
    }
}

#[test]
fn h04_a_repeating_cursor_fails_the_list() {
    let mut p = resync_held(Pair::new(arcade()));
    let before = p.host.snapshot().clone();
    // Page 1 names cursor `same`; the page asked for with `same` names `same` again.
    for _ in 0..2 {
        let r = p.held.pop().expect("a tools/list request held");
        p.feed(ok(
            r.id,
            json!({"tools": [{"name": "loop"}], "nextCursor": "same"}),
        ));
    }
    assert!(p.held.is_empty(), "a page was asked for after the repeat");
    let cursors: Vec<Option<&str>> = p
        .sent
        .iter()
        .filter(|r| r.method == "tools/list")
        .map(|r| r.params.as_ref().and_then(|v| v["cursor"].as_str()))
        .collect();
    assert_eq!(
        cursors,
        vec![None, Some("same")],
        "the repeated cursor was followed"
    );
    // Nothing of the failed read was applied.
    assert_eq!(p.host.snapshot().tools(), before.tools());
    assert!(p.host.snapshot().tool("loop").is_none());
}

/// Connects to `tools` tools listed one per page under a bound of `max_pages`; returns the
/// pair and the cursors of the `tools/list` requests it sent.
fn list_under_bound(tools: usize, max_pages: usize) -> (Pair, Vec<Option<String>>) {
    let mut s = arcade();
    s.tools.truncate(tools);
    s.page_size = 1;
    let mut cfg = config(&s);
    cfg.max_pages = max_pages;
    let p = Pair::with_config(s, cfg);
    let cursors = p
        .sent
        .iter()
        .filter(|r| r.method == "tools/list")
        .map(|r| {
            r.params
                .as_ref()
                .and_then(|v| v["cursor"].as_str())
                .map(str::to_owned)
        })
        .collect();
    (p, cursors)
}

#[test]
fn h04_a_list_of_exactly_the_bound_in_pages_is_applied() {
    let (p, cursors) = list_under_bound(3, 3);
    assert!(
        p.host.snapshot().listed(),
        "a 3-page list failed a 3-page bound"
    );
    assert_eq!(p.host.snapshot().tools().len(), 3);
    assert_eq!(
        cursors,
        vec![None, Some("1".to_owned()), Some("2".to_owned())]
    );
}

#[test]
fn h04_a_page_count_above_the_bound_fails_the_list() {
    // One page past the bound: the third page still names a cursor, so the read fails there
    // and a fourth page is never asked for.
    let (p, cursors) = list_under_bound(4, 3);
    assert!(
        !p.host.snapshot().listed(),
        "a 4-page list passed a 3-page bound"
    );
    assert!(p.host.snapshot().tools().is_empty(), "a page was applied");
    assert_eq!(
        cursors,
        vec![None, Some("1".to_owned()), Some("2".to_owned())],
        "paged past the bound"
    );
}

#[test]
fn h05_a_list_answered_after_its_timeout_applies_nothing() {
    let mut p = resync_held(Pair::new(arcade()));
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    p.hold.insert("toolsets/list".into());
    p.advance(std::time::Duration::from_secs(31));
    let late = p.answer_held("tools/list");
    assert!(!late.is_empty());
    for m in late {
        p.feed(m);
    }
    assert!(p.host.snapshot().tool("fresh").is_none());
}

#[test]
fn h06_no_failure_after_apply_and_no_apply_after_failure() {
    // A list that fails at its last page: nothing applied, and the run is a failure (retry).
    let mut p = resync_held(Pair::new(paged(4)));
    p.server
        .borrow_mut()
        .tools
        .insert(0, tool("fresh", json!({})));
    let first = p.answer_held("tools/list").remove(0);
    p.feed(first);
    let id = id_of_held(&p);
    p.held.clear();
    p.hold.clear();
    p.feed(ok(id, json!({"tools": 3})));
    p.run();
    assert!(p.host.snapshot().tool("fresh").is_none());
    assert!(
        p.host.poll_timeout().is_some(),
        "a failed list must schedule a retry"
    );
    // A whole list: applied, and no retry is scheduled.
    p.settle(std::time::Duration::from_secs(60));
    assert!(p.host.snapshot().tool("fresh").is_some());
    assert!(
        p.host
            .poll_timeout()
            .is_none_or(|t| t > p.now + std::time::Duration::from_secs(29))
    );
}

#[test]
fn h07_pages_with_different_revs_straddle_and_recover_even_inside_a_recovery() {
    let mut p = resync_held(Pair::new(paged(4)));
    p.server
        .borrow_mut()
        .tools
        .insert(0, tool("fresh", json!({})));
    let first = p.answer_held("tools/list").remove(0);
    p.feed(first);
    // The server moves on between pages.
    p.server.borrow_mut().conns[0].rev += 1;
    let second = p.answer_held("tools/list").remove(0);
    p.hold.clear();
    p.feed(second);
    assert!(
        p.host.snapshot().tool("fresh").is_none(),
        "a straddled list was adopted"
    );
    p.settle(std::time::Duration::from_secs(60));
    assert!(
        p.recoveries() >= 2,
        "the straddle inside a recovery started no further run"
    );
    assert!(p.host.snapshot().tool("fresh").is_some());
}

#[test]
fn h07_pages_without_numeric_revs_do_not_straddle() {
    let mut p = resync_held(Pair::new(arcade()));
    let r = p.held.pop().expect("page 1");
    p.feed(ok(
        r.id,
        json!({"tools": [{"name": "a"}], "nextCursor": "c1", "_meta": {"mcpl/rev": "x"}}),
    ));
    let r = p.held.pop().expect("page 2");
    p.feed(ok(r.id, json!({"tools": [{"name": "b"}], "_meta": {}})));
    assert!(p.host.snapshot().tool("a").is_some() && p.host.snapshot().tool("b").is_some());
}

#[test]
fn h08_the_first_of_duplicate_names_counts() {
    let mut s = arcade();
    s.tools.push(json!({"name": "challenge", "description": "second", "_meta": {"mcpl/presence": "dynamic"}}));
    let p = Pair::new(s);
    let t = p.host.snapshot().tool("challenge").expect("listed");
    assert_eq!(t.presence, Presence::Static);
    assert_eq!(
        p.host
            .snapshot()
            .tools()
            .iter()
            .filter(|t| t.tool.name == "challenge")
            .count(),
        1
    );
}

#[test]
fn h09_every_name_goes_through_the_tool_policy() {
    let s = arcade();
    let mut cfg = config(&s);
    cfg.policy = ToolPolicy {
        allow: vec![],
        deny: vec!["hint".into(), "pa*".into()],
    };
    let mut p = Pair::with_config(s, cfg);
    assert!(p.host.snapshot().tool("hint").is_none());
    assert!(p.host.snapshot().tool("pass").is_none());
    p.clear();
    let rev = p.host.snapshot().applied().get() + 1;
    p.feed(hint_note(rev, true));
    assert!(!p.host.snapshot().visible("hint", None));
    assert_eq!(p.recoveries(), 0, "a denied name is not an unknown one");
    // The statement's entries are filtered the same way.
    p.server.borrow_mut().loose.insert("hint".into(), true);
    p.host.resync(p.now);
    p.run();
    assert!(p.host.snapshot().tool("hint").is_none());
    assert!(!p.host.snapshot().visible("hint", None));
}

#[test]
fn h10_a_toolset_tool_is_dynamic_even_if_it_says_static() {
    let mut s = arcade();
    s.tools.push(tool(
        "odd",
        json!({"mcpl/toolset": "cards", "mcpl/presence": "static"}),
    ));
    let p = Pair::new(s);
    assert_eq!(
        p.host.snapshot().tool("odd").map(|t| t.presence),
        Some(Presence::Dynamic)
    );
}

#[test]
fn h11_applied_starts_at_zero_and_a_list_does_not_set_it() {
    let mut s = arcade();
    s.add_conn(); // another connection's counter is not ours
    let mut p = Pair::with_config(s, config(&arcade()));
    // Hold the statement: after the list alone, applied is still 0 even with a list rev.
    p.server.borrow_mut().conns[p.conn].rev = 0;
    let cfg = config(&arcade());
    let start = p.now;
    p.host = mcpl_host::Controller::new(cfg, start);
    p.hold.insert("toolsets/list".into());
    p.server.borrow_mut().conns[p.conn].rev = 5;
    p.run();
    assert!(p.host.snapshot().listed());
    assert_eq!(p.host.snapshot().applied().get(), 0);
}

#[test]
fn h11_ordered_list_behind_applied_recovers() {
    let mut p = resync_held(Pair::new(arcade()));
    let r = p.held.pop().expect("page");
    p.clear();
    // A list claiming rev 0 while rev 1 (the statement) was applied: older than our state.
    p.feed(ok(r.id, json!({"tools": [], "_meta": {"mcpl/rev": 0}})));
    p.run();
    assert!(
        p.recoveries() >= 1,
        "a list behind the applied rev started no recovery"
    );
}

#[test]
fn h11_http_list_ahead_waits_for_the_missing_revs() {
    let mut p = Pair::http_rereading(arcade());
    // The server spends rev 2 on a message still in flight, then lists (rev 2).
    p.server.borrow_mut().loose.insert("hint".into(), true);
    let in_flight = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    let page = p.answer_held("tools/list").remove(0);
    p.feed(page);
    assert!(
        p.host.snapshot().tool("fresh").is_none(),
        "a list ahead of applied was applied early"
    );
    p.feed(in_flight);
    assert!(
        p.host.snapshot().tool("fresh").is_some(),
        "the list did not apply once its rev was reached"
    );
    assert!(p.host.snapshot().visible("hint", None));
}

#[test]
fn h11_http_list_at_the_applied_rev_applies_at_once() {
    let mut p = Pair::http_rereading(arcade());
    // Nothing is in flight: the list's rev is the applied rev, so there is nothing to wait for.
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    let page = p.answer_held("tools/list").remove(0);
    p.feed(page);
    assert!(
        p.host.snapshot().tool("fresh").is_some(),
        "a list at the applied rev waited as if it were ahead"
    );
    p.release("toolsets/list");
    assert!(p.host.snapshot().tool("fresh").is_some());
    assert_eq!(p.recoveries(), 1, "only the requested run");
}

#[test]
fn h11_http_list_ahead_waits_the_hold_limit_before_it_counts_as_a_gap() {
    let mut p = Pair::http_rereading(arcade());
    p.server.borrow_mut().loose.insert("hint".into(), true);
    let in_flight = p
        .server
        .borrow_mut()
        .hinted(0, json!({"tools": [{"name": "hint", "visible": true}]}));
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    let page = p.answer_held("tools/list").remove(0);
    p.feed(page);
    assert!(p.host.snapshot().tool("fresh").is_none());
    let due = p.host.poll_timeout().expect("the held list has a deadline");
    assert!(due > p.now, "the held list is already overdue");
    // Just inside the hold limit the missing rev arrives: no gap, no second run.
    p.advance(Duration::from_millis(1999));
    p.feed(in_flight);
    assert!(p.host.snapshot().tool("fresh").is_some());
    p.release("toolsets/list");
    assert_eq!(p.recoveries(), 1, "a list held in time counted as a gap");
}

#[test]
fn h11_http_a_list_still_ahead_after_one_missing_rev_arrives_still_counts_as_a_gap_in_time() {
    let mut p = Pair::http_rereading(arcade());
    // Two messages in flight (revs 2 and 3), then the list (rev 3); only rev 2 ever arrives.
    p.server.borrow_mut().loose.insert("hint".into(), true);
    let body = json!({"tools": [{"name": "hint", "visible": true}]});
    let arrives = p.server.borrow_mut().hinted(0, body.clone());
    let _lost = p.server.borrow_mut().hinted(0, body);
    p.server.borrow_mut().tools.push(tool("fresh", json!({})));
    let page = p.answer_held("tools/list").remove(0);
    p.feed(page);
    p.feed(arrives);
    assert!(p.host.snapshot().visible("hint", None), "rev 2 applied");
    assert!(
        p.host.snapshot().tool("fresh").is_none(),
        "the list (rev 3) is still ahead"
    );
    // Past the hold limit the missing rev 3 is a gap: one more run follows the current one.
    p.advance(Duration::from_secs(2));
    p.release("toolsets/list");
    assert_eq!(
        p.recoveries(),
        2,
        "the list kept waiting without a limit once rev 2 had arrived"
    );
}

/// H02 for a server without tool hints, where a list is all that is read: a new list gives
/// the snapshot a new version, so a reader comparing versions (the host task) sees it.
#[test]
fn h02_a_new_list_alone_gives_the_snapshot_a_new_version() {
    let mut p = Pair::new(server_without_tool_hints());
    let before = p.host.snapshot().version();
    p.server.borrow_mut().tools.push(tool("extra", json!({})));
    p.feed(mcpl_protocol::jsonrpc::Message::Notification(
        mcpl_protocol::jsonrpc::Notification::new("notifications/tools/list_changed", None),
    ));
    p.run();
    let snap = p.host.snapshot();
    assert!(snap.tool("extra").is_some(), "the list was not read");
    assert!(snap.version() > before, "{before} -> {}", snap.version());
}
