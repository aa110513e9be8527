//! Test helpers shared by the crate's unit tests.

use std::time::Instant;

use mcpl_host::controller::Effect;
use mcpl_host::{Controller, ControllerConfig, ServerName};
use mcpl_protocol::jsonrpc::{Message, Response};
use mcpl_protocol::methods;
use serde_json::json;

/// A controller for `name` whose `tools/list` (one static tool, `t`) was answered; the
/// statement a toolHints server is asked for next stays unanswered.
pub(crate) fn listed(name: &str, tool_hints: bool) -> Controller {
    let mut cfg = ControllerConfig::new(ServerName::parse(name).expect("a name"), "alice");
    if tool_hints {
        cfg.manifest = Some(json!({"version": "0.5", "toolHints": true}));
    }
    let now = Instant::now();
    let mut c = Controller::new(cfg, now);
    while let Some(effect) = c.poll_effect() {
        if let Effect::Send(Message::Request(r)) = effect {
            if r.method == methods::TOOLS_LIST {
                let page = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]});
                c.handle_message(now, None, Message::Response(Response::ok(r.id, page)));
            }
        }
    }
    c
}

/// A controller for `name` on a toolHints server with an instanced toolset `game` open as
/// `g1`: of its tools `play` and `pass`, the statement holds `play` visible and `pass` not.
pub(crate) fn in_play(name: &str) -> Controller {
    let mut cfg = ControllerConfig::new(ServerName::parse(name).expect("a name"), "alice");
    cfg.manifest = Some(json!({"version": "0.5", "toolHints": true,
        "toolsets": {"game": {"title": "Go", "instances": true}}}));
    let now = Instant::now();
    let mut c = Controller::new(cfg, now);
    let tool = |name: &str| {
        json!({"name": name, "inputSchema": {"type": "object"},
            "_meta": {"mcpl/toolset": "game", "mcpl/visible": false}})
    };
    while let Some(effect) = c.poll_effect() {
        let Effect::Send(Message::Request(r)) = effect else {
            continue;
        };
        let answer = match r.method.as_str() {
            methods::TOOLS_LIST => json!({"tools": [tool("play"), tool("pass")]}),
            methods::TOOLSETS_LIST => json!({
                "open": [{"toolset": "game", "instance": "g1", "title": "Go"}],
                "ended": [],
                "_meta": {"mcpl/hints": {"rev": 1,
                    "tools": [{"name": "play", "instance": "g1", "visible": true}]}}}),
            _ => continue,
        };
        c.handle_message(now, None, Message::Response(Response::ok(r.id, answer)));
    }
    c
}
