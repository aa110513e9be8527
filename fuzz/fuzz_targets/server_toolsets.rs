//! `toolsets/*` handling in the server's session core: an initialized toolHints session is
//! fed arbitrary frames, one per line. A line that is JSON but not a message becomes the
//! params of a request whose method the line's first byte picks (`toolsets/open`, `close`,
//! `list`, `tools/call`, `tools/list`). App calls are answered at once. Every request must
//! get exactly one answer, and the session must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpl_protocol::frame::{self, Limits};
use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::{
    CallKind, CloseReply, ConnectionId, Declarations, Effect, MemoryStore, OpenReply, Outcome,
    Principal, Reply, Server, ServerConfig, Session, ToolDef, ToolsetDef, WallClock,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Instant, SystemTime};

const METHODS: [&str; 5] = [
    "toolsets/open",
    "toolsets/close",
    "toolsets/list",
    "tools/call",
    "tools/list",
];

fn server(now: Instant) -> Server {
    let decls = Declarations::new("fuzz", "0.1.0")
        .tool(ToolDef::new("who", "Who is here."))
        .toolset(
            ToolsetDef::new("go", "Go")
                .instances()
                .options_schema(json!({"type": "object",
                    "properties": {"size": {"enum": [9, 13, 19]}}}))
                .tool(
                    ToolDef::new("play", "Play a move.").input_schema(json!({"type": "object",
                        "required": ["move"], "properties": {"move": {"type": "string"}}})),
                )
                .tool(ToolDef::new("pass", "Pass.")),
        )
        .toolset(ToolsetDef::new("notes", "Notes").tool(ToolDef::new("note", "Write.")))
        .toolset(
            ToolsetDef::new("tips", "Tips")
                .default_open()
                .tool(ToolDef::new("tip", "A tip.")),
        )
        .build()
        .expect("fixed declarations are valid");
    Server::new(
        decls,
        ServerConfig::new(WallClock::new(now, SystemTime::UNIX_EPOCH)),
    )
}

/// Drains effects, answering store reads and writes from `store` and running app code at
/// once; returns the ids answered.
fn drive(s: &mut Session, store: &MemoryStore, now: Instant, answered: &mut Vec<RequestId>) {
    while let Some(effect) = s.poll_effect() {
        let Some(effect) = s.answer_from(store, now, effect) else {
            continue;
        };
        match effect {
            Effect::Send(Message::Response(r)) => answered.extend(r.id),
            Effect::Call(call) => {
                let reply = match &call.kind {
                    CallKind::Open => Reply::Open(OpenReply::default()),
                    CallKind::Close { .. } => Reply::Close(CloseReply::default()),
                    _ => Reply::Tool(CallToolResult::text("ok")),
                };
                let outcome = Outcome {
                    context: call.context,
                    reply,
                };
                s.handle_call_done(now, call.id, outcome)
                    .expect("a call the session asked for is accepted");
            }
            _ => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let server = server(now);
    let mut s = server.session(Principal::authenticated("fuzz"), ConnectionId(1), now);
    let store = MemoryStore::new();
    let mut answered = Vec::new();
    let init = json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
        "clientInfo": {"name": "fuzz", "version": "1"}});
    s.handle_message(
        now,
        Message::Request(Request::new(RequestId::Number(0), "initialize", Some(init))),
    );
    drive(&mut s, &store, now, &mut answered);

    let mut asked = BTreeSet::new();
    for (n, line) in data.split(|b| *b == b'\n').enumerate().take(64) {
        let msg = match frame::decode(line, &Limits::default()) {
            Ok(m) => m,
            Err(_) => {
                let Some((first, rest)) = line.split_first() else {
                    continue;
                };
                let Ok(params) = serde_json::from_slice::<Value>(rest) else {
                    continue;
                };
                let method = METHODS[*first as usize % METHODS.len()];
                let id = RequestId::String(format!("f{n}"));
                Message::Request(Request::new(id, method, Some(params)))
            }
        };
        if let Message::Request(r) = &msg {
            // A reused id is the host's mistake; count each id once.
            asked.insert(r.id.clone());
        }
        s.handle_message(now, msg);
        drive(&mut s, &store, now, &mut answered);
    }
    s.handle_disconnect(now);
    drive(&mut s, &store, now, &mut answered);
    let answered: BTreeSet<RequestId> = answered.into_iter().collect();
    for id in &asked {
        assert!(answered.contains(id), "request {id} was never answered");
    }
});
