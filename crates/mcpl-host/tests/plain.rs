//! Host-side toolsets for plain servers (issue 21): a server without MCPL has its tools
//! grouped by the host, opened and closed by the host alone, its `tools/list_changed`
//! folded in without changing the model's list, and look's search across every server.

mod common;

use std::collections::BTreeSet;

use common::*;
use mcpl_host::presenter::{LookQuery, Plan};
use mcpl_host::{ControllerConfig, Grouping};
use mcpl_protocol::jsonrpc::{Message, Notification};
use serde_json::{Value, json};

fn plain_tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
}

/// A server without MCPL listing `tools`.
fn plain(tools: Vec<Value>) -> Server {
    let mut s = arcade();
    s.manifest = json!({});
    s.tools = tools;
    s.open.clear();
    s.loose.clear();
    s
}

/// 12 `git_*`, 12 `fs_*` and `ping`: 25 tools, over the default static limit.
fn box_server() -> Server {
    let mut tools = Vec::new();
    for i in 0..12 {
        tools.push(plain_tool(&format!("git_t{i}"), &format!("Git thing {i}.")));
        tools.push(plain_tool(&format!("fs_t{i}"), &format!("File thing {i}.")));
    }
    tools.push(plain_tool("ping", "Answer pong."));
    plain(tools)
}

fn plain_host(servers: Vec<(&str, Server, Grouping)>) -> Host {
    let mut h = Host::new(vec![]);
    for (name, s, g) in servers {
        let mut cfg = ControllerConfig::new(sn(name), "alice");
        cfg.grouping = Some(g);
        h.pairs.push((name.to_owned(), Pair::with_config(s, cfg)));
    }
    h.sync();
    h.pres.rebuild();
    h
}

fn list_changed(h: &mut Host, server: &str) {
    let p = h.pair(server);
    p.feed(Message::Notification(Notification::new(
        "notifications/tools/list_changed",
        None,
    )));
    p.run();
    h.sync();
}

const META: [&str; 4] = [
    "toolsets_open",
    "toolsets_look",
    "toolsets_act",
    "toolsets_close",
];

#[test]
fn a_plain_server_over_the_limit_is_grouped_and_the_list_holds_only_the_meta_tools() {
    let mut h = plain_host(vec![("box", box_server(), Grouping::default())]);
    assert_eq!(h.names(), META);
    let look = h.call("toolsets_look", json!({}));
    for ts in ["git", "fs", "box"] {
        assert!(
            look.contains(&format!("- toolset `{ts}` (kept by the host): closed")),
            "{look}"
        );
    }
    assert!(look.contains("12 tools: git_t0, git_t1"), "{look}");
    assert!(look.contains("1 tool: ping. Answer pong."), "{look}");
}

#[test]
fn open_call_close_are_host_side_and_a_closed_toolsets_tool_is_refused_with_the_open_call() {
    let mut h = plain_host(vec![("box", box_server(), Grouping::default())]);
    let refused = h.call("toolsets_act", json!({"tool": "git_t1"}));
    assert_eq!(
        refused,
        r#"toolset `git` is not open; open it with toolsets_open {"server":"box","toolset":"git"}"#
    );
    let opened = h.call("toolsets_open", json!({"server": "box", "toolset": "git"}));
    assert_eq!(opened, "opened `git` on `box` (host side)");
    // Nothing went to the server for the open: it knows nothing of toolsets.
    assert!(
        !h.pair("box")
            .sent_methods()
            .iter()
            .any(|m| m.starts_with("toolsets/"))
    );
    let called = h.call("toolsets_act", json!({"tool": "git_t1"}));
    assert!(called.starts_with("ok"), "{called}");
    let closed = h.call("toolsets_close", json!({"server": "box", "toolset": "git"}));
    assert_eq!(closed, "closed `git` on `box` (host side)");
    let again = h.call("toolsets_act", json!({"tool": "git_t1"}));
    assert!(
        again.contains(r#"toolsets_open {"server":"box","toolset":"git"}"#),
        "{again}"
    );
    assert_eq!(h.names(), META);
}

#[test]
fn auto_open_plans_the_open_before_the_call() {
    let g = Grouping {
        auto_open: true,
        ..Grouping::default()
    };
    let h = plain_host(vec![("box", box_server(), g)]);
    let plan = h
        .pres
        .plan("toolsets_act", json!({"tool": "fs_t2"}))
        .unwrap();
    assert!(
        matches!(&plan, Plan::ActOpening { server, group, req } if server == "box" && group == "fs" && req.tool == "fs_t2"),
        "{plan:?}"
    );
}

#[test]
fn list_changed_is_folded_in_without_changing_the_list_only_static_changes_count() {
    let g = Grouping {
        toolsets: vec![(open_key("git", None).0, vec!["git_*".into()])],
        ..Grouping::default()
    };
    let mut h = plain_host(vec![("box", box_server(), g)]);
    let first = h.names();
    let base = h.pres.list_changes();
    assert!(first.contains(&"ping".to_owned()) && !first.contains(&"git_t0".to_owned()));
    // A new git tool: re-read, placed in `git`, the list does not change.
    h.pair("box")
        .server
        .borrow_mut()
        .tools
        .push(plain_tool("git_new", "New."));
    list_changed(&mut h, "box");
    assert!(
        h.pres
            .snapshot(&sn("box"))
            .unwrap()
            .tool("git_new")
            .is_some()
    );
    assert!(!h.pres.needs_rebuild());
    assert!(!h.rebuild());
    assert_eq!(h.names(), first);
    assert_eq!(h.pres.list_changes(), base);
    h.call("toolsets_open", json!({"toolset": "git"}));
    assert!(
        h.call("toolsets_act", json!({"tool": "git_new"}))
            .starts_with("ok")
    );
    // A new tool no glob matches stays static: the list changes, and that is counted.
    h.pair("box")
        .server
        .borrow_mut()
        .tools
        .push(plain_tool("extra", "Extra."));
    list_changed(&mut h, "box");
    assert!(h.pres.needs_rebuild());
    assert!(h.rebuild());
    assert_eq!(h.pres.list_changes(), base + 1);
    assert!(h.names().contains(&"extra".to_owned()));
}

#[test]
fn grouping_is_fixed_at_the_first_read_a_server_crossing_the_limit_is_not_regrouped() {
    let g = Grouping {
        static_limit: 3,
        ..Grouping::default()
    };
    let small = plain(vec![
        plain_tool("a_1", "One."),
        plain_tool("a_2", "Two."),
        plain_tool("a_3", "Three."),
    ]);
    let mut h = plain_host(vec![("s", small, g)]);
    assert_eq!(h.names().len(), 3 + META.len());
    for i in 4..10 {
        h.pair("s")
            .server
            .borrow_mut()
            .tools
            .push(plain_tool(&format!("a_{i}"), "More."));
    }
    list_changed(&mut h, "s");
    let snap = h.pres.snapshot(&sn("s")).unwrap();
    assert_eq!(snap.tools().len(), 9);
    assert!(snap.tools().iter().all(|t| t.toolset.is_none()));
    assert!(h.rebuild());
    assert_eq!(h.names().len(), 9 + META.len());
}

#[test]
fn search_ranks_by_description_with_ties_in_server_then_name_order_and_the_open_call() {
    let tools = || {
        let mut t: Vec<Value> = (0..21)
            .map(|i| plain_tool(&format!("misc_t{i}"), "Does nothing much."))
            .collect();
        t.push(plain_tool("web_fetch", "Download the contents of a page."));
        t.push(plain_tool("web_post", "Send a form."));
        t
    };
    let mut h = plain_host(vec![
        ("zed", plain(tools()), Grouping::default()),
        ("alpha", plain(tools()), Grouping::default()),
    ]);
    let agent = h.agent.clone();
    let q = LookQuery {
        query: Some("download page contents".into()),
        ..LookQuery::default()
    };
    let text = h.pres.look(&agent, &q, &[]).text;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"best matches for "download page contents", best first:"#
    );
    assert!(
        lines[1].starts_with("1. tool `web_fetch` on `alpha` in toolset `web` (closed)"),
        "{text}"
    );
    assert!(
        lines[1].ends_with(
            r#"open it with toolsets_open {"server":"alpha","toolset":"web"}, then call toolsets_act {"server":"alpha","tool":"web_fetch","args":{}}"#
        ),
        "{text}"
    );
    assert!(
        lines[2].starts_with("2. tool `web_fetch` on `zed`"),
        "{text}"
    );
    assert_eq!(lines.len(), 3, "only matching documents: {text}");
    let none = LookQuery {
        query: Some("zebra".into()),
        ..LookQuery::default()
    };
    assert_eq!(
        h.pres.look(&agent, &none, &[]).text,
        r#"no toolset or tool matches "zebra""#
    );
}

#[test]
fn model_tool_names_of_plain_tools_are_prefixed_fit_64_and_stay_distinct() {
    let long = "x".repeat(128);
    let names = [
        "a.b".to_owned(),
        "a/b".to_owned(),
        "a_b".to_owned(),
        long.clone(),
        format!("{long}y"),
    ];
    let tools: Vec<Value> = names.iter().map(|n| plain_tool(n, "T.")).collect();
    let mut h = plain_host(vec![
        ("one", plain(tools.clone()), Grouping::default()),
        (
            "two",
            plain(vec![plain_tool("t", "T.")]),
            Grouping::default(),
        ),
    ]);
    h.rebuild();
    let listed: Vec<String> = h.names();
    let ours: Vec<&String> = listed.iter().filter(|n| n.starts_with("one__")).collect();
    assert_eq!(ours.len(), names.len(), "{listed:?}");
    let distinct: BTreeSet<&&String> = ours.iter().collect();
    assert_eq!(distinct.len(), names.len());
    for n in &ours {
        assert!(
            n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{n}"
        );
    }
    assert!(listed.contains(&"one__a_b".to_owned()));
    // Each routes to its own tool.
    for raw in &names {
        let model = h.pres.model_name(&sn("one"), raw);
        match h.pres.plan(&model, json!({})).unwrap() {
            Plan::Call { server, req } => {
                assert_eq!((server.as_str(), req.tool.as_str()), ("one", raw.as_str()))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_reconnected_plain_server_keeps_its_grouping_and_the_toolsets_the_host_had_open() {
    let g = Grouping {
        static_limit: 3,
        ..Grouping::default()
    };
    let mut h = plain_host(vec![("box", box_server(), g.clone())]);
    h.call("toolsets_open", json!({"toolset": "git"}));
    // The server now lists only three tools: a fresh read would keep them all static.
    h.pair("box").server.borrow_mut().tools.truncate(3);
    let p = h.pair("box");
    let prev = p.host.snapshot().clone();
    let mut cfg = ControllerConfig::new(sn("box"), "alice");
    cfg.grouping = Some(g);
    p.host = mcpl_host::Controller::resume(cfg, p.now, Some(prev));
    p.run();
    h.sync();
    let snap = h.pres.snapshot(&sn("box")).unwrap();
    assert_eq!(snap.tools().len(), 3);
    assert!(
        snap.tools().iter().all(|t| t.toolset.is_some()),
        "not regrouped"
    );
    assert!(
        snap.is_open("git"),
        "the host's open toolset survives the reconnect"
    );
    assert!(
        h.call("toolsets_act", json!({"tool": "git_t0"}))
            .starts_with("ok")
    );
}

#[test]
fn a_plain_server_is_ready_once_its_first_tools_list_is_read() {
    // No toolsets/list ever comes from a plain server: its picture is whole with the list,
    // so a caller waiting for `ready` (a surface's wait_connected) does not wait forever.
    let h = plain_host(vec![("box", box_server(), Grouping::default())]);
    let snap = h.pres.snapshot(&sn("box")).expect("box is presented");
    assert!(!snap.hinted() && snap.listed());
    assert!(snap.ready(), "a listed plain server is ready");
}

#[test]
fn a_host_side_open_that_failed_says_not_done_never_opened() {
    let mut h = plain_host(vec![("box", box_server(), Grouping::default())]);
    let plan = h
        .pres
        .plan("toolsets_open", json!({"server": "box", "toolset": "git"}))
        .expect("a plan");
    assert!(matches!(plan, Plan::OpenGroup { .. }), "{plan:?}");
    let failed = h.pres.answer_text(&plan, Err(&mcpl_host::Error::Closed));
    assert_eq!(
        failed,
        "not done: `git` on `box` was not opened (the connection is closed)"
    );
    // Through the host loop: the connection closes, then the open is refused by it.
    let now = h.pair("box").now;
    h.pair("box").host.handle_close(now);
    let answer = h.call("toolsets_open", json!({"server": "box", "toolset": "git"}));
    assert!(answer.starts_with("not done:"), "{answer}");
    assert!(!answer.contains("opened `git`"), "{answer}");
}

/// H78 across a change of kind: a plain server the host grouped that comes back with
/// toolHints on starts from nothing (its host-side toolsets are not the server's), and a
/// hinted server that comes back without them starts from nothing too, grouping or not.
#[test]
fn h78_a_server_that_turns_tool_hints_on_or_off_across_a_reconnect_starts_afresh() {
    let g = Grouping {
        static_limit: 3,
        ..Grouping::default()
    };
    let mut h = plain_host(vec![("box", box_server(), g.clone())]);
    h.call("toolsets_open", json!({"toolset": "git"}));
    let prev = h.pair("box").host.snapshot().clone();
    assert!(prev.is_open("git"));
    let mut hinted = ControllerConfig::new(sn("box"), "alice");
    hinted.manifest = Some(arcade().manifest);
    hinted.grouping = Some(g.clone());
    let c = mcpl_host::Controller::resume(hinted, h.pair("box").now, Some(prev));
    assert!(c.snapshot().hinted(), "the manifest turns hints on");
    assert!(
        c.snapshot().open().is_empty() && c.snapshot().tools().is_empty(),
        "the host's grouping survived the server turning hints on"
    );
    // The other way: the arcade, hinted with `g1` open, comes back without toolHints.
    let mut p = Pair::new(arcade());
    p.open_game("g1");
    let prev = p.host.snapshot().clone();
    let mut plain = config(&arcade());
    plain.manifest = Some(json!({"version": "0.5"}));
    plain.grouping = Some(g);
    let c = mcpl_host::Controller::resume(plain, p.now, Some(prev));
    assert!(!c.snapshot().hinted());
    assert!(
        c.snapshot().open().is_empty() && c.snapshot().tools().is_empty(),
        "a hinted server's state survived the server turning hints off"
    );
}

/// H40: a search hit on a toolset the host keeps sums up that toolset's own tools, none of
/// another's, and gives the open call only while the toolset is closed.
#[test]
fn h40_a_host_side_toolset_hit_sums_up_its_own_tools_and_offers_the_open_while_closed() {
    let g = Grouping {
        toolsets: vec![(open_key("vcs", None).0, vec!["git_*".into()])],
        ..Grouping::default()
    };
    let mut h = plain_host(vec![("box", box_server(), g)]);
    let agent = h.agent.clone();
    let q = LookQuery {
        query: Some("vcs".into()),
        ..LookQuery::default()
    };
    let text = h.pres.look(&agent, &q, &[]).text;
    let line = text
        .lines()
        .find(|l| l.contains("toolset `vcs` on `box`"))
        .unwrap_or_else(|| panic!("no hit on the toolset: {text}"));
    assert!(line.contains("12 tools: git_t0, git_t1"), "{line}");
    assert!(!line.contains("fs_t") && !line.contains("ping"), "{line}");
    assert!(
        line.ends_with(r#"; open it with toolsets_open {"server":"box","toolset":"vcs"}"#),
        "{line}"
    );
    // Once open, the hit says so and no longer asks for the open.
    h.call("toolsets_open", json!({"server": "box", "toolset": "vcs"}));
    let text = h.pres.look(&agent, &q, &[]).text;
    let line = text
        .lines()
        .find(|l| l.contains("toolset `vcs` on `box`"))
        .unwrap_or_else(|| panic!("no hit on the toolset: {text}"));
    assert!(line.contains("toolset `vcs` on `box` (open)"), "{line}");
    assert!(!line.contains("open it with"), "{line}");
}
