//! Hint application in the host controller: a ready controller with a game open is fed
//! arbitrary frames, one per line. A line that is JSON but not a message is wrapped as
//! `tools/hints` params (or, with an `eventId`, as a `push/event`), so the fuzzer reaches
//! the hint code quickly. The controller's own reads are answered by a fixed server. It
//! must never panic, and its applied rev never goes backwards.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpl_host::controller::Effect;
use mcpl_host::{Controller, ControllerConfig};
use mcpl_protocol::frame::{self, Limits};
use mcpl_protocol::jsonrpc::{Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn manifest() -> Value {
    json!({"version": "0.5", "toolHints": true, "pushEvents": true,
        "toolsets": {"go": {"title": "Go", "default": "closed", "instances": true},
                     "cards": {"title": "Cards", "default": "closed"}}})
}

fn answer(req: &Request, rev: u64) -> Message {
    let meta = |ts: &str| json!({"mcpl/toolset": ts, "mcpl/visible": false});
    let result = match req.method.as_str() {
        "tools/list" => json!({"tools": [
            {"name": "play", "inputSchema": {"type": "object"}, "_meta": meta("go")},
            {"name": "pass", "inputSchema": {"type": "object"}, "_meta": meta("go")},
            {"name": "draw", "inputSchema": {"type": "object"}, "_meta": meta("cards")},
            {"name": "hint", "inputSchema": {"type": "object"},
             "_meta": {"mcpl/presence": "dynamic"}},
            {"name": "who", "inputSchema": {"type": "object"}}],
            "_meta": {"mcpl/rev": rev}}),
        "toolsets/list" => json!({"open": [{"toolset": "go", "instance": "g1", "title": "Go"}],
            "ended": [],
            "_meta": {"mcpl/hints": {"rev": rev + 1, "tools": [
                {"name": "play", "instance": "g1", "visible": true}]}}}),
        _ => json!({}),
    };
    Message::Response(Response::ok(req.id.clone(), result))
}

/// Answers every request the controller sent; returns how many.
fn serve(c: &mut Controller, now: Instant) -> usize {
    let mut answers = Vec::new();
    while let Some(effect) = c.poll_effect() {
        if let Effect::Send(Message::Request(req)) = effect {
            answers.push(answer(&req, c.snapshot().applied()));
        }
    }
    let n = answers.len();
    for a in answers {
        c.handle_message(now, None, a);
    }
    n
}

fn message(line: &[u8], n: usize) -> Option<Message> {
    if let Ok(m) = frame::decode(line, &Limits::default()) {
        return Some(m);
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    if value.get("eventId").is_some() {
        let id = RequestId::String(format!("ev{n}"));
        return Some(Message::Request(Request::new(
            id,
            "push/event",
            Some(value),
        )));
    }
    Some(Message::Notification(Notification::new(
        "tools/hints",
        Some(value),
    )))
}

fuzz_target!(|data: &[u8]| {
    let mut now = Instant::now();
    let mut config = ControllerConfig::new("arcade", "fuzz");
    config.manifest = Some(manifest());
    let mut c = Controller::new(config, now);
    for _ in 0..4 {
        if serve(&mut c, now) == 0 {
            break;
        }
    }
    let mut applied = c.snapshot().applied();
    for (n, line) in data.split(|b| *b == b'\n').enumerate().take(64) {
        if let Some(msg) = message(line, n) {
            c.handle_message(now, None, msg);
        }
        // Let time pass now and then, so held revs and back-offs expire.
        if line.first().is_some_and(|b| b % 4 == 0) {
            now += Duration::from_millis(700);
            c.handle_timeout(now);
        }
        for _ in 0..4 {
            if serve(&mut c, now) == 0 {
                break;
            }
        }
        let after = c.snapshot().applied();
        assert!(
            after >= applied,
            "applied rev went back from {applied} to {after}"
        );
        applied = after;
        let _ = c.poll_timeout();
    }
});
