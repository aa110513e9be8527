//! H55-H68: the four meta-tools: selectors, resolution, refusals that name what exists,
//! unconfirmed outcomes, look, act routing and the argument check.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::presenter::{
    ArgCheck, CallTrace, META_ACT, META_CLOSE, META_LOOK, META_OPEN, Plan, RefusedCall, check_args,
};
use serde_json::json;

fn two_servers() -> Host {
    Host::new(vec![("arcade", arcade()), ("other", arcade())])
}

#[test]
fn h55_four_static_meta_tools_each_with_a_server_selector() {
    let h = two_servers();
    let names = h.names();
    for m in [META_OPEN, META_LOOK, META_ACT, META_CLOSE] {
        assert!(names.contains(&m.to_owned()), "{m} missing");
        let t = h
            .pres
            .tool_list()
            .iter()
            .find(|t| t.name == m)
            .expect("tool");
        assert!(
            t.input_schema["properties"]["server"].is_object(),
            "{m} has no server selector"
        );
        let re = regex_like(&t.name);
        assert!(re, "{m} is not a valid model tool name");
    }
}

fn regex_like(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[test]
fn h56_a_selector_that_is_not_a_string_is_refused_by_name_and_null_is_absent() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    for (sel, val) in [
        ("server", json!(1)),
        ("toolset", json!(["game"])),
        ("instance", json!({})),
        ("tool", json!(true)),
    ] {
        let mut args = json!({"toolset": "game", "tool": "play"});
        args[sel] = val;
        let text = h.call(META_LOOK, args);
        assert!(
            text.contains(&format!("`{sel}` must be a string")),
            "{sel}: {text}"
        );
    }
    let text = h.call(
        META_OPEN,
        json!({"toolset": "game", "server": null, "instance": null}),
    );
    assert!(text.contains("opened"), "{text}");
}

#[test]
fn h57_ambiguous_names_are_refused_with_the_candidates() {
    let mut h = two_servers();
    let text = h.call(META_OPEN, json!({"toolset": "game"}));
    assert!(
        text.contains("several servers") && text.contains("`arcade`") && text.contains("`other`"),
        "{text}"
    );
    h.call(
        META_OPEN,
        json!({"server": "arcade", "toolset": "game", "instance": "a"}),
    );
    h.call(
        META_OPEN,
        json!({"server": "arcade", "toolset": "game", "instance": "b"}),
    );
    let text = h.call(
        META_ACT,
        json!({"server": "arcade", "tool": "pass", "args": {}}),
    );
    assert!(
        text.contains("several open instances") && text.contains("`a`") && text.contains("`b`"),
        "{text}"
    );
}

#[test]
fn h58_refusals_name_what_exists() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_OPEN, json!({"server": "arcade", "toolset": "chess"}));
    assert!(
        text.contains("`game`") && text.contains("`cards`"),
        "{text}"
    );
    let text = h.call(META_ACT, json!({"tool": "nope"}));
    assert!(text.contains("`arcade` has toolsets"), "{text}");
    let mut h = Host::new(vec![("plain", server_without_tool_hints())]);
    let text = h.call(META_OPEN, json!({"toolset": "game"}));
    assert!(text.contains("no server presents toolsets"), "{text}");
}

#[test]
fn h59_open_proposes_a_valid_instance_name_and_a_retry_adopts() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let plan = h
        .pres
        .plan(META_OPEN, json!({"toolset": "game"}))
        .expect("plan");
    let Plan::Open { req, .. } = &plan else {
        panic!("not an open: {plan:?}")
    };
    let name = req.instance.clone().expect("a proposed name");
    assert!(mcpl_protocol::rfc014::check_name("instance", &name).is_ok());
    let text = h.call(META_OPEN, json!({"toolset": "game", "instance": name}));
    assert!(text.contains("opened"), "{text}");
    let text = h.call(META_OPEN, json!({"toolset": "game", "instance": name}));
    assert!(text.contains("adopted"), "a retry did not adopt: {text}");
}

#[test]
fn h60_open_and_close_outcomes_not_done_unconfirmed_done_refused() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    // Never sent: the connection is closed.
    let now = h.pair("arcade").now;
    h.pair("arcade").host.handle_close(now);
    let text = h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    assert!(
        text.starts_with("not done") && !text.contains(META_LOOK),
        "{text}"
    );
    // Sent, no answer: unconfirmed, pointing to look.
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pair("arcade").hold.insert("toolsets/open".into());
    let plan = h
        .pres
        .plan(META_OPEN, json!({"toolset": "game", "instance": "g1"}))
        .expect("plan");
    let Plan::Open { req, .. } = plan.clone() else {
        panic!()
    };
    let p = h.pair("arcade");
    let pending = p.host.open(p.now, req).expect("sent");
    p.flush();
    p.advance(Duration::from_secs(31));
    let outcome = p.answer_of(pending).cloned().expect("settled");
    let text = h.pres.answer_text(&plan, Ok(&outcome));
    assert!(
        text.starts_with("unconfirmed") && text.contains(META_LOOK),
        "{text}"
    );
    // Refused by the server.
    let text = h.call(
        META_OPEN,
        json!({"toolset": "game", "instance": "g2", "options": 3}),
    );
    assert!(text.contains("`options` must be an object"), "{text}");
}

#[test]
fn h61_act_of_unknown_outcome_is_unconfirmed_and_never_sent_has_no_look_hint() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    let plan = h
        .pres
        .plan(META_ACT, json!({"tool": "pass", "args": {}}))
        .expect("plan");
    let Plan::Act { req, .. } = plan.clone() else {
        panic!()
    };
    let p = h.pair("arcade");
    p.hold.insert("tools/call".into());
    let pending = p.host.call(p.now, req).expect("sent");
    p.flush();
    p.host.handle_close(p.now);
    p.flush();
    let outcome = p.answer_of(pending).cloned().expect("settled");
    let text = h.pres.answer_text(&plan, Ok(&outcome));
    assert!(
        text.contains("outcome unknown") && text.contains(META_LOOK),
        "{text}"
    );
    let text = h.pres.answer_text(&plan, Err(&mcpl_host::Error::Closed));
    assert!(
        text.starts_with("not done") && !text.contains(META_LOOK),
        "{text}"
    );
}

#[test]
fn h62_look_rereads_every_presenting_server_and_says_which_it_could_not_ask() {
    let mut h = two_servers();
    h.pair("other").hold.insert("toolsets/list".into());
    for (_, p) in &mut h.pairs {
        p.clear();
    }
    let text = h.call(META_LOOK, json!({}));
    assert!(h.pair("arcade").sent_methods().contains(&"toolsets/list"));
    assert!(h.pair("other").sent_methods().contains(&"toolsets/list"));
    assert!(text.contains("could not ask `other`"), "{text}");
}

#[test]
fn h63_look_at_a_tool_shows_the_definition_act_would_check() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.pair("arcade").server.borrow_mut().redefine(
        "play",
        Some("g1"),
        json!({"name": "play", "description": "Play.",
        "inputSchema": {"type": "object", "properties": {"move": {"enum": ["C3", "D4"]}}}}),
    );
    h.sync();
    let text = h.call(META_LOOK, json!({"tool": "play"}));
    assert!(text.contains("signature: play(move: string)"), "{text}");
    assert!(text.contains("description: arcade says"), "{text}");
    assert!(text.contains("input schema:"), "{text}");
    assert!(
        text.contains("toolsets_act checks against (instance `g1`)") && text.contains("\"C3\""),
        "{text}"
    );
}

#[test]
fn h64_act_needs_a_visible_tool_in_an_open_place_and_sets_the_instance_only_when_instanced() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_ACT, json!({"tool": "play", "args": {"move": "A1"}}));
    assert!(text.contains("no open instance"), "{text}");
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.call(META_OPEN, json!({"toolset": "cards"}));
    h.pair("arcade").clear();
    h.call(META_ACT, json!({"tool": "play", "args": {"move": "A1"}}));
    h.call(META_ACT, json!({"tool": "draw", "args": {}}));
    let sent = &h.pair("arcade").sent;
    assert_eq!(
        sent[0].params.as_ref().expect("p")["_meta"]["mcpl/instance"],
        "g1"
    );
    assert!(
        sent[1].params.as_ref().expect("p").get("_meta").is_none(),
        "an instance was sent for a toolset without instances"
    );
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("draw", None, false);
    let text = h.call(META_ACT, json!({"tool": "draw", "args": {}}));
    assert!(text.contains("not available"), "{text}");
    let text = h.call(META_ACT, json!({"tool": "challenge", "args": {}}));
    assert!(
        text.contains("not a dynamic tool") && text.contains("`challenge`"),
        "{text}"
    );
}

/// A [`CallTrace`] that keeps what it is told, for a test to read.
#[derive(Default)]
struct Recorded(std::sync::Mutex<Vec<RefusedCall>>);

impl CallTrace for Recorded {
    fn refused(&self, call: &RefusedCall) {
        self.0.lock().expect("lock").push(*call);
    }
}

#[test]
fn h65_a_refused_act_is_traced_as_a_failed_call_without_server_values() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let trace = std::sync::Arc::new(Recorded::default());
    h.pres.set_call_trace(trace.clone());
    // A name act cannot resolve at all, a static tool (resolved, then refused), a tool of an
    // instanced toolset with no instance open, and a call with no tool.
    for args in [
        json!({"tool": "secret-tool-name"}),
        json!({"tool": "challenge"}),
        json!({"tool": "play", "args": {"move": "A1"}}),
        json!({}),
    ] {
        assert!(
            h.pres.plan(META_ACT, args.clone()).is_err(),
            "{args} was planned"
        );
    }
    // Refusals of the other meta-tools are not act's, and a planned act is no failure.
    assert!(h.pres.plan(META_OPEN, json!({"toolset": "nope"})).is_err());
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    assert!(
        h.pres
            .plan(META_ACT, json!({"tool": "pass", "args": {}}))
            .is_ok()
    );
    let told = trace.0.lock().expect("lock").clone();
    let refused = |refusal| RefusedCall {
        tool: META_ACT,
        refusal,
    };
    assert_eq!(
        told,
        vec![
            refused("no_server_has"),
            refused("not_dynamic"),
            refused("none_open"),
            refused("missing"),
        ]
    );
    // The record has no room for a server's value: only the host's own names.
    let debug = format!("{told:?}");
    for server_value in ["secret-tool-name", "challenge", "play", "game"] {
        assert!(!debug.contains(server_value), "{server_value} in {debug}");
    }
}

#[test]
fn h66_an_open_answer_carries_changes_read_meanwhile() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "cards"}));
    h.pair("arcade").hold.insert("toolsets/open".into());
    let plan = h
        .pres
        .plan(META_OPEN, json!({"toolset": "game", "instance": "g1"}))
        .expect("plan");
    let Plan::Open { req, .. } = plan.clone() else {
        panic!()
    };
    let now = h.pair("arcade").now;
    let pending = h.pair("arcade").host.open(now, req).expect("sent");
    let agent = h.agent.clone();
    h.pres.register_taker(&agent, &sn("arcade"), pending);
    h.pair("arcade").flush();
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("draw", None, false);
    h.sync();
    h.pair("arcade").release("toolsets/open");
    h.sync();
    let item = h
        .pres
        .take(&agent, &sn("arcade"), pending, None)
        .expect("change");
    assert!(
        item.text.contains("`draw`") && item.text.contains("`play`"),
        "{}",
        item.text
    );
}

#[test]
fn h67_an_act_counts_as_a_call_to_the_tool_it_resolves_to() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    let plan = h
        .pres
        .plan(META_ACT, json!({"tool": "pass", "args": {}}))
        .expect("plan");
    assert_eq!(plan.target(), Some((&sn("arcade"), "pass")));
    assert!(
        h.pres.plan(META_ACT, json!({"tool": "nope"})).is_err(),
        "an unresolvable act has no target"
    );
}

#[test]
fn h68_the_argument_check_agrees_with_json_schema_2020_12() {
    let pp = json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(
        check_args(&pp, json!({"x-a": "1"}).as_object().expect("o")),
        ArgCheck::Valid
    );
    let tuple = json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}}}});
    assert_eq!(
        check_args(&tuple, json!({"t": ["a", 1, 2]}).as_object().expect("o")),
        ArgCheck::Valid
    );
    let any = json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}});
    let ArgCheck::Invalid(p) = check_args(&any, json!({"v": true}).as_object().expect("o")) else {
        panic!("accepted")
    };
    assert!(
        p[0].contains("/v") && p[0].contains("\"string\"") && p[0].contains("\"integer\""),
        "{p:?}"
    );
    let defaults = json!({"type": "object", "required": ["size"], "properties": {"size": {"type": "integer", "default": 9}}});
    assert_eq!(
        check_args(&defaults, &serde_json::Map::new()),
        ArgCheck::Valid
    );
    let broken =
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s.json"}}});
    assert_eq!(
        check_args(&broken, json!({"a": 1}).as_object().expect("o")),
        ArgCheck::Skipped
    );
    // And act refuses before sending, with the pointer.
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "game", "instance": "g1"}));
    h.pair("arcade").clear();
    let text = h.call(META_ACT, json!({"tool": "play", "args": {"move": 5}}));
    assert!(text.contains("/move"), "{text}");
    assert!(!h.pair("arcade").sent_methods().contains(&"tools/call"));
}

#[test]
fn h29_the_host_refuses_calls_to_a_closed_undeclared_group() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_ACT, json!({"tool": "probe", "args": {}}));
    assert!(text.contains("`lab` is not open"), "{text}");
    let text = h.call("probe", json!({}));
    assert!(
        text.contains(META_ACT),
        "a call by name to a closed group's tool went out: {text}"
    );
    assert!(
        h.call(META_OPEN, json!({"toolset": "lab"}))
            .contains("host side")
    );
    assert_eq!(h.call(META_ACT, json!({"tool": "probe", "args": {}})), "ok");
    assert!(!h.pair("arcade").sent_methods().contains(&"toolsets/open"));
}

#[test]
fn h60_a_server_refusal_is_reported_as_refused_in_the_servers_words() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pair("arcade").hold.insert("toolsets/open".into());
    let plan = h
        .pres
        .plan(META_OPEN, json!({"toolset": "game", "instance": "g1"}))
        .expect("plan");
    let Plan::Open { req, .. } = plan.clone() else {
        panic!()
    };
    let p = h.pair("arcade");
    let pending = p.host.open(p.now, req).expect("sent");
    p.flush();
    let r = p.held.pop().expect("held");
    let err = mcpl_protocol::jsonrpc::ErrorObject::new(
        mcpl_protocol::jsonrpc::ErrorCode::InvalidParams,
        "options do not validate",
    );
    p.feed(mcpl_protocol::jsonrpc::Message::Response(
        mcpl_protocol::jsonrpc::Response::error(Some(r.id), err),
    ));
    let outcome = p.answer_of(pending).cloned().expect("answered");
    let text = h.pres.answer_text(&plan, Ok(&outcome));
    assert_eq!(text, "refused: arcade says \"options do not validate\"");
}

/// A toolHints server whose only tool is static and which declares no toolsets.
fn static_only() -> Server {
    let mut s = arcade();
    s.tools.retain(|t| t["name"] == "challenge");
    s.manifest = json!({"version": "0.5", "pushEvents": true, "toolHints": true});
    s
}

#[test]
fn h58_a_hinted_server_with_neither_toolsets_nor_dynamic_tools_presents_none() {
    let mut h = Host::new(vec![("plain", static_only())]);
    assert!(h.pair("plain").host.snapshot().hinted());
    let text = h.call(META_OPEN, json!({"toolset": "game"}));
    assert!(text.contains("no server presents toolsets"), "{text}");
}

#[test]
fn h62_look_rereads_only_the_servers_that_present_toolsets() {
    let mut h = Host::new(vec![("arcade", arcade()), ("plain", static_only())]);
    h.sync();
    match h.pres.plan(META_LOOK, json!({})) {
        Ok(Plan::Look { servers, .. }) => assert_eq!(servers, vec![sn("arcade")]),
        other => panic!("not a look: {other:?}"),
    }
}

#[test]
fn h56_a_meta_tool_called_with_null_arguments_has_every_selector_absent() {
    let h = Host::new(vec![("arcade", arcade())]);
    match h.pres.plan(META_LOOK, serde_json::Value::Null) {
        Ok(Plan::Look { servers, query }) => {
            assert_eq!(servers, vec![sn("arcade")]);
            assert!(query.server.is_none() && query.toolset.is_none() && query.tool.is_none());
        }
        other => panic!("null arguments were not read as none: {other:?}"),
    }
    let refused = h.pres.plan(META_LOOK, json!(["game"]));
    assert_eq!(
        refused.err(),
        Some(mcpl_host::presenter::Refusal::NotAnObject)
    );
}

#[test]
fn h59_the_proposed_name_is_the_toolset_and_the_smallest_number_not_open() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let proposed = |h: &Host| match h.pres.plan(META_OPEN, json!({"toolset": "game"})) {
        Ok(Plan::Open { req, .. }) => req.instance.clone(),
        other => panic!("not an open: {other:?}"),
    };
    assert_eq!(proposed(&h).as_deref(), Some("game-1"));
    let text = h.call(META_OPEN, json!({"toolset": "game", "instance": "game-1"}));
    assert!(text.contains("opened"), "{text}");
    h.sync();
    assert_eq!(proposed(&h).as_deref(), Some("game-2"));
}

#[test]
fn h62_look_at_one_toolset_shows_that_toolset_only() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_LOOK, json!({"toolset": "cards"}));
    assert!(text.contains("toolset `cards`"), "{text}");
    assert!(
        !text.contains("toolset `game`") && !text.contains("toolset `lab`"),
        "another toolset was shown: {text}"
    );
}

#[test]
fn h62_a_dynamic_tool_in_the_latest_list_presents_before_the_rebuild() {
    let mut h = Host::new(vec![("plain", static_only())]);
    h.sync();
    // The published list (built above) has no dynamic tool; the latest list gets one.
    {
        let p = h.pair("plain");
        p.server.borrow_mut().tools.push(tool(
            "hint",
            json!({"mcpl/presence": "dynamic", "mcpl/visible": true}),
        ));
        p.host.resync(p.now);
    }
    h.sync();
    assert!(h.pair("plain").host.snapshot().tool("hint").is_some());
    match h.pres.plan(META_LOOK, json!({})) {
        Ok(Plan::Look { servers, .. }) => assert_eq!(
            servers,
            vec![sn("plain")],
            "a server whose latest list has a dynamic tool does not present"
        ),
        other => panic!("not a look: {other:?}"),
    }
}

#[test]
fn h40_a_search_hit_on_a_static_tool_says_call_it_by_name_and_a_loose_dynamic_one_says_act() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_LOOK, json!({"query": "challenge"}));
    let line = text
        .lines()
        .find(|l| l.contains("tool `challenge`"))
        .unwrap_or_else(|| panic!("no hit for `challenge`: {text}"));
    assert!(
        line.contains("(static)") && line.contains("call it by name as `challenge`"),
        "{line}"
    );
    let text = h.call(META_LOOK, json!({"query": "hint"}));
    let line = text
        .lines()
        .find(|l| l.contains("tool `hint`"))
        .unwrap_or_else(|| panic!("no hit for `hint`: {text}"));
    assert!(
        line.contains("(no toolset)") && line.contains(&format!("call {META_ACT}")),
        "{line}"
    );
    assert!(!line.contains("(static)"), "{line}");
}

#[test]
fn h40_a_search_hit_says_open_only_for_the_toolset_that_is_open() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "cards"}));
    let hit = |h: &mut Host, query: &str, what: &str| {
        let text = h.call(META_LOOK, json!({ "query": query }));
        text.lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no hit for {what}: {text}"))
            .to_owned()
    };
    let draw = hit(&mut h, "draw", "tool `draw`");
    assert!(
        draw.contains("(open)") && !draw.contains("open it with"),
        "{draw}"
    );
    let pass = hit(&mut h, "pass", "tool `pass`");
    assert!(
        pass.contains("(closed)") && pass.contains("open it with"),
        "{pass}"
    );
    let game = hit(&mut h, "game", "toolset `game`");
    assert!(
        game.contains("(closed)") && game.contains("open it with"),
        "{game}"
    );
}

#[test]
fn h62_look_lists_each_visible_tool_once_and_no_static_tool_among_the_loose_ones() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(META_OPEN, json!({"toolset": "cards"}));
    h.pair("arcade")
        .server
        .borrow_mut()
        .set_visible("hint", None, true);
    h.sync();
    let text = h.call(META_LOOK, json!({}));
    let lines: Vec<&str> = text.lines().collect();
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("- hint("), 1, "the loose dynamic tool: {text}");
    assert_eq!(count("  - draw("), 1, "the open toolset's tool: {text}");
    assert_eq!(count("- draw("), 0, "a toolset's tool is not loose: {text}");
    assert!(
        !text.contains("challenge("),
        "a static tool is the model's own, not looked up: {text}"
    );
}

#[test]
fn h57_act_reaches_the_instance_it_names_among_several_open() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    for g in ["g1", "g2", "g3"] {
        h.call(META_OPEN, json!({"toolset": "game", "instance": g}));
    }
    h.pair("arcade").clear();
    for g in ["g2", "g1", "g3"] {
        let text = h.call(
            META_ACT,
            json!({"tool": "play", "instance": g, "args": {"move": "A1"}}),
        );
        assert!(!text.contains("not"), "{text}");
    }
    let sent: Vec<&str> = h
        .pair("arcade")
        .sent
        .iter()
        .filter(|r| r.method == "tools/call")
        .map(|r| {
            r.params.as_ref().expect("params")["_meta"]["mcpl/instance"]
                .as_str()
                .expect("an instance")
        })
        .collect();
    assert_eq!(sent, vec!["g2", "g1", "g3"]);
    let text = h.call(
        META_ACT,
        json!({"tool": "play", "instance": "g9", "args": {"move": "A1"}}),
    );
    assert!(
        text.contains("g9"),
        "an instance not open is refused by name: {text}"
    );
}

#[test]
fn h62_look_names_a_server_that_presents_nothing_only_while_it_is_not_up() {
    use mcpl_host::presenter::LinkState;
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pres.set_link(&sn("arcade"), LinkState::Up);
    h.pres.set_link(&sn("ghost"), LinkState::Up);
    h.pres
        .set_link(&sn("dead"), LinkState::Connecting { attempt: 2 });
    let text = h.call(META_LOOK, json!({}));
    assert!(
        text.contains("server \"dead\": reconnecting (attempt 2)"),
        "{text}"
    );
    assert!(
        !text.contains("server \"ghost\""),
        "an up server was named: {text}"
    );
    assert!(!text.contains("server \"arcade\":"), "{text}");
    // A look at one server, or at one tool, is about that alone.
    for query in [json!({"server": "arcade"}), json!({"tool": "play"})] {
        let text = h.call(META_LOOK, query);
        assert!(!text.contains("\"dead\""), "{text}");
    }
}

/// A look at a server the host does not know is refused with every server it does know,
/// one it has only a connection state for (not read yet) included, each once.
#[test]
fn h62_a_look_at_an_unknown_server_names_the_servers_known_linked_ones_included() {
    use mcpl_host::presenter::LinkState;
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pres.set_link(&sn("arcade"), LinkState::Up);
    h.pres
        .set_link(&sn("dead"), LinkState::Connecting { attempt: 2 });
    let text = h.call(META_LOOK, json!({"server": "nope"}));
    assert_eq!(text, "no server `nope`; servers: `arcade`, `dead`");
}

#[test]
fn a_refusal_names_what_was_wanted_as_a_toolset_or_a_tool() {
    use mcpl_host::presenter::Wanted;
    let ts = mcpl_host::names::ToolsetName::parse("game").unwrap();
    assert_eq!(Wanted::Toolset(ts).to_string(), "toolset `game`");
    assert_eq!(Wanted::Tool("play".into()).to_string(), "tool `play`");
}

/// A call to a server whose connection closed is refused before anything is sent, and says
/// why: the link state the embedder reported when it is not up, else that the connection is
/// closed (an embedder may still report up a moment after the close).
#[test]
fn h62_a_call_never_sent_names_the_link_state_or_the_closed_connection() {
    use mcpl_host::presenter::LinkState;
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pres.set_link(&sn("arcade"), LinkState::Up);
    let p = h.pair("arcade");
    p.host.handle_close(p.now);
    assert_eq!(
        h.call("challenge", json!({})),
        "not done: the call was never sent (the connection to `arcade` is closed); try again shortly"
    );
    h.pres
        .set_link(&sn("arcade"), LinkState::Connecting { attempt: 2 });
    assert_eq!(
        h.call("challenge", json!({})),
        "not done: the call was never sent (`arcade` is reconnecting (attempt 2)); try again shortly"
    );
}

/// A look at one server by name shows that server's toolsets.
#[test]
fn h62_a_look_at_a_named_server_shows_its_toolsets() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_LOOK, json!({"server": "arcade"}));
    assert!(!text.starts_with("no server"), "{text}");
    assert!(text.contains("game"), "{text}");
}

/// Look names withheld events when it looks at servers (all, or one), not when it looks at
/// one tool, one toolset or a search.
#[test]
fn h62_look_names_withheld_events_only_when_it_looks_at_servers() {
    use mcpl_host::presenter::Withheld;
    let mut h = Host::new(vec![("arcade", arcade())]);
    let why = Withheld::Needs {
        feature_set: "chat".into(),
        missing: vec!["channels.publish".into()],
    };
    let sentence = why.sentence(&sn("arcade"));
    h.pres.set_withheld(&sn("arcade"), vec![why]);
    for query in [json!({}), json!({"server": "arcade"})] {
        let text = h.call(META_LOOK, query.clone());
        assert!(text.contains(&sentence), "{query}: {text}");
    }
    for query in [
        json!({"tool": "play"}),
        json!({"toolset": "game"}),
        json!({"query": "board"}),
    ] {
        let text = h.call(META_LOOK, query.clone());
        assert!(!text.contains(&sentence), "{query}: {text}");
    }
}

/// H74: look at one tool shows its `mcpl/class`, given as one string or as a list of them.
#[test]
fn h74_look_at_a_tool_shows_its_class_given_as_a_string_or_a_list() {
    for (class, shown) in [
        (json!("game"), "class: game"),
        (json!(["game", "board"]), "class: game, board"),
    ] {
        let mut server = arcade();
        for t in &mut server.tools {
            if t["name"] == "challenge" {
                t["_meta"]["mcpl/class"] = class.clone();
            }
        }
        let mut h = Host::new(vec![("arcade", server)]);
        let text = h.call(META_LOOK, json!({"tool": "challenge"}));
        assert!(text.contains(shown), "{class}: {text}");
    }
}

/// A server that is up is headed by its name alone; one that is not, by its state and a note
/// that what follows is the last state known. A catalog with a server in it never says that
/// no server presents toolsets.
#[test]
fn h62_look_heads_a_server_with_its_state_only_when_it_is_not_up() {
    use mcpl_host::presenter::LinkState;
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.pres.set_link(&sn("arcade"), LinkState::Up);
    let text = h.call(META_LOOK, json!({}));
    assert!(text.lines().any(|l| l == "server `arcade`:"), "{text}");
    assert!(!text.contains("showing the last state known"), "{text}");
    assert!(!text.contains("no server presents toolsets"), "{text}");
    h.pres
        .set_link(&sn("arcade"), LinkState::Connecting { attempt: 2 });
    let text = h.call(META_LOOK, json!({"server": "arcade"}));
    assert!(
        text.lines()
            .any(|l| l
                == "server `arcade` (reconnecting (attempt 2); showing the last state known):"),
        "{text}"
    );
}

/// H64: act on a static tool is refused with the name to call it by on the server it was
/// asked of; a server that does not exist is refused as unknown, even when another server
/// has a static tool of that name.
#[test]
fn h64_act_on_a_static_tool_names_it_on_the_server_asked_of() {
    let mut h = two_servers();
    for server in ["arcade", "other"] {
        let text = h.call(META_ACT, json!({"server": server, "tool": "challenge"}));
        let model = h.pres.model_name(&sn(server), "challenge");
        assert_eq!(
            text,
            format!("`challenge` is not a dynamic tool; call it by name as `{model}`")
        );
    }
    let mut h = Host::new(vec![("arcade", arcade())]);
    let text = h.call(META_ACT, json!({"server": "nope", "tool": "challenge"}));
    assert!(!text.contains("call it by name"), "{text}");
    assert!(text.contains("no server `nope`"), "{text}");
}
