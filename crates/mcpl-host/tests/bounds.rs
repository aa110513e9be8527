//! H69-H76: rendering never panics and is bounded; definition identity misses nothing.

mod common;

use common::*;
use mcpl_host::presenter::render::{self, MAX_DEPTH, MAX_SIGNATURE, TOO_DEEP, TOO_LONG};
use proptest::prelude::*;
use serde_json::{Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("[a-z$]{0,8}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn nested(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = json!([v]);
    }
    v
}

proptest! {
    #[test]
    fn h69_rendering_never_panics_on_any_definition(desc in arb_json(), schema in arb_json(), class in arb_json()) {
        let _ = render::first_sentence(Some(&desc));
        let _ = render::signature("t", &schema);
        let _ = render::json(&schema);
        let _ = render::identity(&schema);
        let _ = render::type_of(&schema);
        // Through look and notices, with the definition on a live server.
        let mut s = arcade();
        s.tools.push(json!({"name": "odd", "description": desc, "inputSchema": schema,
            "_meta": {"mcpl/presence": "dynamic", "mcpl/class": class}}));
        let mut h = Host::new(vec![("arcade", s)]);
        let _ = h.call("toolsets_look", json!({"tool": "odd"}));
        let _ = h.call("toolsets_look", json!({}));
        h.pair("arcade").server.borrow_mut().set_visible("odd", None, true);
        let _ = h.notices();
    }
}

#[test]
fn h70_a_type_is_read_only_from_a_string_or_strings() {
    assert_eq!(render::type_of(&json!({"type": "string"})), "string");
    assert_eq!(
        render::type_of(&json!({"type": ["string", "null"]})),
        "string|null"
    );
    assert_eq!(render::type_of(&json!({"type": 5})), "unknown");
    assert_eq!(render::type_of(&json!({"type": ["string", 1]})), "unknown");
    assert_eq!(render::type_of(&json!({"type": {"a": 1}})), "unknown");
}

#[test]
fn h71_the_first_sentence_cut_falls_on_a_char_boundary() {
    // A 4-byte emoji exactly at the bound.
    let text = format!(
        "{}😀{}",
        "a".repeat(render::MAX_SENTENCE - 1),
        "b".repeat(50)
    );
    let s = render::first_sentence(Some(&json!(text))).expect("sentence");
    assert!(s.ends_with("😀…"), "{s}");
    // The longest prefix within the bound that ends on a char boundary: inside the emoji
    // (bytes 2..6) the cut falls back before it, never past it.
    let s = "ab😀cd";
    for cut_at in 0..10 {
        let want = match cut_at {
            0..=2 => &s[..cut_at],
            3..=5 => "ab",
            6..=8 => &s[..cut_at],
            _ => s,
        };
        assert_eq!(render::cut(s, cut_at), want, "cut at {cut_at}");
    }
    assert_eq!(
        render::first_sentence(Some(&json!(["not", "a", "string"]))),
        None
    );
}

#[test]
fn h72_one_fixed_nesting_bound_on_both_sides() {
    let below = nested(MAX_DEPTH - 1, json!(1));
    let at = nested(MAX_DEPTH, json!([1]));
    assert!(!render::json(&below).contains(TOO_DEEP));
    assert!(render::json(&at).contains(TOO_DEEP));
    // Objects count as levels the same way.
    let in_objects = |depth: usize| (0..depth).fold(json!(1), |v, _| json!({ "k": v }));
    assert!(!render::json(&in_objects(MAX_DEPTH)).contains(TOO_DEEP));
    assert!(render::json(&in_objects(MAX_DEPTH + 1)).contains(TOO_DEEP));
    // An enum literal nested deeper renders as `…` in a signature.
    let schema = json!({"properties": {"m": {"enum": [nested(MAX_DEPTH + 2, json!(1))]}}});
    let sig = render::signature("t", &schema);
    assert!(sig.contains('…'), "{sig}");
    assert!(!sig.contains(TOO_DEEP));
}

/// JSON printed at exactly the bound is whole; one byte more is cut with the marker.
#[test]
fn h73_json_exactly_at_the_bound_is_whole_and_one_byte_more_is_cut() {
    let at = json!("a".repeat(render::MAX_JSON - 2));
    assert_eq!(render::json(&at), at.to_string());
    let over = json!("a".repeat(render::MAX_JSON - 1));
    let printed = render::json(&over);
    assert!(printed.ends_with(TOO_LONG), "{}", printed.len());
    assert!(printed.starts_with(&over.to_string()[..render::MAX_JSON]));
}

#[test]
fn h73_output_is_bounded_in_size() {
    let long = json!({"properties": {"a": {"enum": ["x".repeat(100_000)]}}});
    let sig = render::signature("t", &long);
    assert!(
        sig.len() < 10_000 && sig.contains(TOO_LONG),
        "{}",
        sig.len()
    );
    let big = json!(vec!["y".repeat(1000); 100]);
    let printed = render::json(&big);
    assert!(printed.ends_with(TOO_LONG) && printed.len() <= render::MAX_JSON + 40);
    // One scalar past the bound is cut too (no later step to catch it on the way).
    let one = render::json(&json!("z".repeat(render::MAX_JSON * 2)));
    assert!(
        one.ends_with(TOO_LONG) && one.len() <= render::MAX_JSON + 40,
        "{}",
        one.len()
    );
    // A notice naming very many tools is capped, not failed.
    let mut s = arcade();
    for i in 0..2000 {
        s.tools.push(tool(
            &format!("t{i}"),
            json!({"mcpl/presence": "dynamic", "mcpl/visible": false}),
        ));
    }
    let mut h = Host::new(vec![("arcade", s)]);
    h.notices();
    {
        let p = h.pair("arcade");
        let mut srv = p.server.borrow_mut();
        for i in 0..2000 {
            srv.loose.insert(format!("t{i}"), true);
        }
        drop(srv);
        p.host.resync(p.now);
    }
    let told = h.notices();
    assert!(told.iter().any(|t| t.ends_with(TOO_LONG)), "not capped");
    assert!(
        told.iter()
            .all(|t| t.len() <= mcpl_host::presenter::window_cap() + 40)
    );
}

#[test]
fn h74_look_omits_non_string_descriptions_and_class_entries() {
    let mut s = arcade();
    s.tools.push(
        json!({"name": "odd", "description": {"evil": 1}, "inputSchema": {"type": "object"},
        "_meta": {"mcpl/presence": "dynamic", "mcpl/class": ["read", 7, {"x": 1}]}}),
    );
    let mut h = Host::new(vec![("arcade", s)]);
    let text = h.call("toolsets_look", json!({"tool": "odd"}));
    assert!(
        !text.contains("description:") && !text.contains("evil"),
        "{text}"
    );
    assert!(
        text.contains("class: read") && !text.contains('7'),
        "{text}"
    );
}

#[test]
fn h75_identity_tells_apart_definitions_that_differ_at_depth_70() {
    let a = json!({"type": "object", "properties": {"m": nested(70, json!("a"))}});
    let b = json!({"type": "object", "properties": {"m": nested(70, json!("b"))}});
    assert_ne!(render::identity(&a), render::identity(&b));
    // And the redefinition is told.
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.call(
        "toolsets_open",
        json!({"toolset": "game", "instance": "g1"}),
    );
    h.pair("arcade").server.borrow_mut().redefine(
        "play",
        Some("g1"),
        json!({"name": "play", "description": "Deep A.", "inputSchema": a}),
    );
    h.sync();
    h.notices();
    h.pair("arcade").server.borrow_mut().redefine(
        "play",
        Some("g1"),
        json!({"name": "play", "description": "Deep A.", "inputSchema": b}),
    );
    h.sync();
    let told = h.notices().join("\n");
    assert!(
        told.contains("`play` in `g1` changed: arcade says \"Deep A.\""),
        "{told}"
    );
}

#[test]
fn h76_input_too_deep_to_parse_fails_the_list_and_settles_the_request() {
    let mut h = Host::new(vec![("arcade", arcade())]);
    // 66 to 127 levels parse, cross the rendering cap, and render without panicking.
    for depth in [66, 100, 120] {
        let schema =
            json!({"type": "object", "properties": {"m": {"enum": [nested(depth, json!(1))]}}});
        let _ = render::signature("t", &schema);
        assert!(render::json(&schema).contains(TOO_DEEP));
    }
    // Past 128 levels: the frame fails to decode; its id is recovered and the list fails.
    let p = h.pair("arcade");
    p.clear();
    p.hold.insert("tools/list".into());
    p.host.resync(p.now);
    p.flush();
    let id = p.held.pop().expect("page").id;
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"x","inputSchema":{deep}}}]}}}}"#
    );
    p.hold.clear();
    let err =
        mcpl_protocol::frame::decode(line.as_bytes(), &Default::default()).expect_err("too deep");
    // The decoder recovers the answer's id (never to reply to it), so the read fails now
    // rather than at its timeout.
    assert_eq!(err.id().map(ToString::to_string), Some(id.to_string()));
    assert!(err.reply().is_none(), "a response is never answered");
    p.raw(&line);
    p.run();
    assert!(p.host.snapshot().tool("x").is_none());
    assert!(
        p.sent_methods().contains(&"toolsets/list"),
        "the list read did not settle as failed"
    );
    // With a recovered id, the request settles at once.
    p.settle(std::time::Duration::from_secs(60));
    p.clear();
    p.hold.insert("tools/list".into());
    p.host.resync(p.now);
    p.flush();
    let id = p.held.pop().expect("page").id;
    p.hold.clear();
    p.host.handle_undecodable(p.now, Some(id.clone()));
    p.run();
    assert!(
        p.sent_methods().contains(&"toolsets/list"),
        "a recovered id did not settle the read"
    );
    // A lone surrogate escape fails the same way, and nothing panics.
    let line =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"\ud800"}}]}}}}"#);
    p.raw(&line);
}

#[test]
fn h73_a_signature_is_cut_once_it_passes_the_bound_by_its_closing_parenthesis() {
    // `t(k…k: string)`: everything but the key is 11 bytes.
    let schema = |key_len: usize| {
        let key = "k".repeat(key_len);
        json!({"properties": {key.clone(): {"type": "string"}}, "required": [key]})
    };
    let at = render::signature("t", &schema(MAX_SIGNATURE - 11));
    assert_eq!(at.len(), MAX_SIGNATURE);
    assert!(
        at.ends_with(": string)"),
        "a signature at the bound was cut"
    );
    let over = render::signature("t", &schema(MAX_SIGNATURE - 10));
    assert!(
        over.ends_with(TOO_LONG),
        "a signature of {} bytes was shown whole",
        over.len()
    );
    assert!(over.len() <= MAX_SIGNATURE + 1 + TOO_LONG.len());
}

#[test]
fn h73_a_look_longer_than_the_bound_is_cut_with_the_marker() {
    let mut s = arcade();
    for i in 0..3000 {
        s.tools.push(tool(
            &format!("t{i}"),
            json!({"mcpl/presence": "dynamic", "mcpl/visible": true}),
        ));
    }
    let mut h = Host::new(vec![("arcade", s)]);
    let text = h.call(mcpl_host::presenter::META_LOOK, json!({}));
    assert!(text.ends_with(TOO_LONG), "a long look was not cut");
    assert!(
        text.len() <= render::MAX_JSON + TOO_LONG.len() + 1,
        "{}",
        text.len()
    );
    assert!(text.contains("- t0("), "the cut dropped the start");
}

/// Feeds a `push/event` whose params carry `text` and returns the one notice it makes.
fn event_notice(h: &mut Host, id: &str, text: String) -> String {
    h.pair("arcade")
        .feed(mcpl_protocol::jsonrpc::Message::Request(
            mcpl_protocol::jsonrpc::Request::new(
                mcpl_protocol::jsonrpc::RequestId::String(format!("p-{id}")),
                "push/event",
                Some(json!({"eventId": id, "text": text})),
            ),
        ));
    let told = h.notices();
    assert_eq!(told.len(), 1, "{told:?}");
    told[0].clone()
}

#[test]
fn h73_a_notice_exactly_at_the_bound_is_whole_and_one_byte_more_is_cut() {
    use mcpl_host::presenter::MAX_NOTICE;
    let mut h = Host::new(vec![("arcade", arcade())]);
    h.notices();
    let bare = event_notice(&mut h, "e1", String::new());
    let fill = MAX_NOTICE - bare.len();
    let whole = event_notice(&mut h, "e2", "x".repeat(fill));
    assert_eq!(whole.len(), MAX_NOTICE);
    assert!(
        !whole.contains(TOO_LONG),
        "a notice within the bound was cut"
    );
    let over = event_notice(&mut h, "e3", "x".repeat(fill + 1));
    assert!(
        over.ends_with(TOO_LONG),
        "a notice past the bound was not cut"
    );
    assert!(over.len() <= MAX_NOTICE + 1 + TOO_LONG.len());
}

/// A host whose look (no query) lists `n` loose dynamic tools, the last one's name padded
/// by `pad` characters.
fn look_of_loose_tools(n: usize, pad: usize) -> String {
    let mut s = arcade();
    for i in 0..n {
        let mut name = format!("loose_{i:04}_{}", "x".repeat(50));
        if i + 1 == n {
            name.push_str(&"y".repeat(pad));
        }
        s.tools
            .push(tool(&name, json!({"mcpl/presence": "dynamic"})));
    }
    let mut h = Host::new(vec![("arcade", s)]);
    h.call(mcpl_host::presenter::META_LOOK, json!({}))
}

#[test]
fn h73_a_look_exactly_at_the_bound_is_whole_and_one_byte_more_is_cut() {
    let base = look_of_loose_tools(1, 0);
    let line = look_of_loose_tools(2, 0).len() - base.len();
    let n = 1 + (render::MAX_JSON - base.len()) / line;
    let short = render::MAX_JSON - look_of_loose_tools(n, 0).len();
    let at = look_of_loose_tools(n, short);
    assert_eq!(at.len(), render::MAX_JSON);
    assert!(!at.contains(TOO_LONG), "a look at the bound was cut");
    let over = look_of_loose_tools(n, short + 1);
    assert!(
        over.ends_with(TOO_LONG),
        "a look one byte past the bound was whole"
    );
    assert!(over.len() <= render::MAX_JSON + TOO_LONG.len() + 1);
}
