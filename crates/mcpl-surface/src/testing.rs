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
