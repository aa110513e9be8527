//! One connection of the reference fixture: its rev counter, its host's advertisement and
//! grant, and the answer to every request.

use super::world::{Faults, Internal, World, invalid, open_entries_for, strip_ended, text};
use crate::fixture::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Message, RequestId, Response};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::check_name;
use mcpl_rpc::{Peer, RequestOptions, Responder};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// One connection's state.
pub(super) struct Session {
    pub(super) peer: Peer,
    pub(super) world: Arc<Mutex<World>>,
    pub(super) faults: Faults,
    pub(super) me: u64,
    pub(super) tx: mpsc::UnboundedSender<Internal>,
    pub(super) rev: u64,
    pub(super) allocated: u64,
    pub(super) hinted: bool,
    pub(super) push: bool,
    pub(super) revealed: bool,
    pub(super) current: Option<String>,
    pub(super) cancelled: HashSet<RequestId>,
    pub(super) events: u64,
}

impl Session {
    pub(super) fn next_rev(&mut self) -> u64 {
        self.allocated += 1;
        if self.faults.reuse_rev && self.allocated == 3 {
            return self.rev;
        }
        if self.faults.skip_rev && self.rev == 2 {
            self.rev += 1;
        }
        self.rev += 1;
        self.rev
    }

    pub(super) fn may_hint(&self) -> bool {
        self.hinted || self.faults.hints_to_plain_hosts
    }

    /// Wraps a hint body in the next rev, or `None` for a hint-less host.
    pub(super) fn stamp(&mut self, mut body: Value) -> Option<Value> {
        if !self.may_hint() {
            return None;
        }
        body["rev"] = json!(self.next_rev());
        Some(body)
    }

    /// Sends something else's consequences: a push when granted, else tools/hints.
    pub(super) fn send_foreign(&mut self, body: Value, why: &str) {
        let Some(hints) = self.stamp(body) else {
            return;
        };
        if (self.push || self.faults.push_without_grant) && !self.faults.never_push {
            self.events += 1;
            let params = json!({"featureSet": "cf", "eventId": format!("c{}-{}", self.me, self.events),
                "timestamp": "2026-01-01T00:00:00Z", "payload": {"content": text(why)}, "hints": hints});
            if let Ok(pending) = self.peer.start_request(
                methods::PUSH_EVENT,
                Some(params),
                RequestOptions::default(),
            ) {
                let restate = self
                    .faults
                    .restate_refused
                    .then(|| (self.tx.clone(), hints.clone()));
                tokio::spawn(async move {
                    let answer = pending.wait().await;
                    let refused =
                        !matches!(&answer, Ok(a) if a.value.get("accepted") == Some(&json!(true)));
                    if let (true, Some((tx, mut hints))) = (refused, restate) {
                        if let Some(h) = hints.as_object_mut() {
                            h.remove("rev");
                        }
                        let _ = tx.send(Internal::Restate(hints));
                    }
                });
            }
        } else {
            let _ = self.peer.notify_value(methods::TOOLS_HINTS, Some(hints));
        }
    }

    pub(super) fn fan_out(&self, body: Value) {
        if self.faults.no_fan_out {
            return;
        }
        let w = self.world.lock().unwrap_or_else(|p| p.into_inner());
        for (id, tx) in &w.conns {
            if *id != self.me {
                let _ = tx.send(Internal::Foreign(body.clone()));
            }
        }
    }

    pub(super) fn internal(&mut self, work: Internal) {
        match work {
            Internal::Foreign(body) => self.send_foreign(body, "changed on another connection"),
            Internal::Restate(body) => {
                if let Some(h) = self.stamp(body) {
                    let _ = self.peer.notify_value(methods::TOOLS_HINTS, Some(h));
                }
            }
            Internal::Later { visible } => {
                self.revealed = visible;
                self.send_foreign(
                    json!({"tools": [{"name": REVEALED, "visible": visible}]}),
                    "the world moved",
                );
            }
            Internal::Reveal {
                id,
                responder,
                visible,
            } => {
                self.revealed = visible;
                let body = json!({"tools": [{"name": REVEALED, "visible": visible}]});
                if self.cancelled.contains(&id) {
                    drop(responder.disarm());
                    if !self.faults.drop_cancelled
                        && let Some(h) = self.stamp(body)
                    {
                        let _ = self.peer.notify_value(methods::TOOLS_HINTS, Some(h));
                    }
                } else {
                    let result = self.with_hints(json!({"content": text("revealed")}), body);
                    let _ = responder.respond(result);
                }
            }
        }
    }

    pub(super) fn with_hints(&mut self, mut result: Value, body: Value) -> Value {
        if let Some(h) = self.stamp(body.clone()) {
            result["_meta"] = json!({"mcpl/hints": h});
            if self.faults.push_own_consequences {
                self.send_foreign(body, "pushed as well");
            }
        }
        result
    }

    pub(super) fn manifest(&self) -> Value {
        let mut m = json!({"version": "0.5", "pushEvents": true,
            "featureSets": {"cf": {"description": "conformance fixture", "uses": ["pushEvents"]}}});
        if self.hinted {
            let w = self.world.lock().unwrap_or_else(|p| p.into_inner());
            let mut toolsets = Map::new();
            toolsets.insert(INSTANCED.into(), json!({"title": "Game", "default": "closed", "instances": true,
                "options": {"type": "object", "additionalProperties": false,
                            "properties": {"level": {"type": "integer", "minimum": 1, "maximum": 3}}}}));
            if w.flat_declared {
                toolsets.insert(FLAT.into(), json!({"title": "Flat", "default": "closed"}));
            }
            toolsets.insert(
                DEFAULT_OPEN.into(),
                json!({"title": "Open", "default": "open"}),
            );
            m["toolHints"] = json!(true);
            m["toolsets"] = Value::Object(toolsets);
        }
        m
    }

    pub(super) fn request(
        &mut self,
        method: &str,
        params: Value,
        id: RequestId,
        responder: Responder,
    ) {
        let outcome = match method {
            methods::INITIALIZE => {
                let mcpl = params.pointer("/capabilities/experimental/mcpl");
                self.hinted = mcpl
                    .and_then(|m| m.get("toolHints"))
                    .and_then(Value::as_bool)
                    == Some(true);
                Ok(
                    json!({"protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                    "capabilities": {"tools": {"listChanged": true}, "experimental": {"mcpl": self.manifest()}},
                    "serverInfo": {"name": "cf-fixture", "version": "0"}}),
                )
            }
            methods::FEATURE_SETS_UPDATE => {
                self.push = params
                    .get("effectiveCapabilities")
                    .and_then(Value::as_array)
                    .is_some_and(|c| c.iter().any(|x| x == "pushEvents"));
                Ok(json!({"accepted": true}))
            }
            methods::MANIFEST => Ok(self.manifest()),
            methods::TOOLS_LIST => Ok(self.tools_list()),
            methods::TOOLSETS_LIST if self.hinted => Ok(self.toolsets_list()),
            methods::TOOLSETS_OPEN if self.hinted => self.open(&params),
            methods::TOOLSETS_CLOSE if self.hinted => self.close(&params),
            methods::TOOLS_CALL => {
                let echo = params.get("name") == Some(&json!(ECHO));
                match self.call(&params, id, responder) {
                    Some((r, responder)) if echo && self.faults.string_response_id => {
                        let id = responder.disarm();
                        let id = RequestId::String(id.to_string());
                        let _ = self.peer.send(Message::Response(Response::ok(id, r)));
                    }
                    Some((r, responder)) => {
                        let _ = responder.respond(r);
                    }
                    None => {}
                }
                return;
            }
            _ => {
                let _ = responder.method_not_found();
                return;
            }
        };
        let f = self.faults;
        match outcome {
            Ok(v) if method == methods::TOOLSETS_OPEN && f.double_response => {
                let id = responder.disarm();
                let _ = self
                    .peer
                    .send(Message::Response(Response::ok(id.clone(), v.clone())));
                let _ = self.peer.send(Message::Response(Response::ok(id, v)));
            }
            Ok(v) if method == methods::TOOLSETS_CLOSE && f.wrong_response_id => {
                let id = match responder.disarm() {
                    RequestId::Number(n) => RequestId::Number(n + 1),
                    RequestId::String(s) => RequestId::String(format!("{s}x")),
                };
                let _ = self.peer.send(Message::Response(Response::ok(id, v)));
            }
            Ok(v) => {
                let _ = responder.respond(v);
            }
            Err(e) => {
                let _ = responder.error(e);
            }
        }
    }

    pub(super) fn tools_list(&self) -> Value {
        let w = self.world.lock().unwrap_or_else(|p| p.into_inner());
        let any_instance = !w.instances.is_empty();
        let mut tools = vec![
            (
                ECHO,
                json!({"mcpl/toolset": INSTANCED, "mcpl/visible": any_instance}),
            ),
            (
                FINISH,
                json!({"mcpl/toolset": INSTANCED, "mcpl/visible": any_instance}),
            ),
            (
                FLAT_TOOL,
                if self.faults.flat_tool_static {
                    json!({"mcpl/presence": "static"})
                } else {
                    json!({"mcpl/toolset": FLAT, "mcpl/visible": w.flat_open})
                },
            ),
            (
                OPENED_TOOL,
                json!({"mcpl/toolset": DEFAULT_OPEN, "mcpl/visible": w.default_open}),
            ),
            (GROUPED, json!({"mcpl/toolset": GROUP})),
            (
                REVEALED,
                json!({"mcpl/presence": "dynamic", "mcpl/visible": self.revealed}),
            ),
            (REVEAL, json!({})),
            (LATER, json!({})),
            (MOVE, json!({})),
            (UNDECLARE, json!({})),
            (
                MOVER,
                json!({"mcpl/presence": if w.mover_dynamic && !self.faults.move_not_listed { "dynamic" } else { "static" }}),
            ),
        ];
        if self.faults.hide_invisible && !self.revealed {
            tools.retain(|(name, _)| *name != REVEALED);
        }
        if self.faults.opened_tool_unlisted {
            tools.retain(|(name, _)| *name != OPENED_TOOL);
        }
        if !self.hinted {
            tools.extend([
                (COMPAT_OPEN, json!({})),
                (COMPAT_CHOOSE, json!({})),
                (COMPAT_CLOSE, json!({})),
            ]);
        }
        let tools: Vec<Value> = tools
            .into_iter()
            .map(|(name, meta)| {
                let mut t = json!({"name": name, "description": format!("Fixture tool {name}."),
                    "inputSchema": {"type": "object"}});
                if self.hinted && meta.as_object().is_some_and(|m| !m.is_empty()) {
                    t["_meta"] = meta;
                }
                t
            })
            .collect();
        let mut r = json!({"tools": tools});
        if self.hinted {
            r["_meta"] = json!({"mcpl/rev": self.rev});
        }
        r
    }

    pub(super) fn toolsets_list(&mut self) -> Value {
        let (open, ended, mut tools) = {
            let w = self.world.lock().unwrap_or_else(|p| p.into_inner());
            let mut open = Vec::new();
            let mut tools = Vec::new();
            let mut live: Vec<(&String, &Option<i64>)> = w.instances.iter().collect();
            live.sort_by_key(|(i, _)| w.age.get(*i).copied().unwrap_or(0));
            let n = live.len();
            let f = self.faults;
            for (k, (i, level)) in live.into_iter().enumerate() {
                let mut e =
                    json!({"toolset": INSTANCED, "instance": i, "title": format!("Game {i}")});
                if let Some(l) = level {
                    e["options"] = json!({"level": l});
                }
                open.push(e);
                let omitted = (f.statement_omits_oldest && n >= 2 && k == 0)
                    || (f.statement_omits_newest && n >= 3 && k == n - 1);
                if !omitted {
                    tools.extend(open_entries_for(i, true, f.one_definition));
                }
            }
            if f.statement_shows_closed {
                for i in w.age.keys().filter(|i| !w.instances.contains_key(*i)) {
                    tools.extend(open_entries_for(i, true, f.one_definition));
                }
            }
            if w.flat_open {
                open.push(json!({"toolset": FLAT}));
                tools.push(json!({"name": FLAT_TOOL, "visible": true}));
            }
            if w.default_open {
                open.push(json!({"toolset": DEFAULT_OPEN}));
                tools.push(json!({"name": OPENED_TOOL, "visible": true}));
            }
            if w.mover_dynamic {
                tools.push(json!({"name": MOVER, "visible": true}));
            }
            let mut ended = w.ended.clone();
            if self.faults.duplicate_ended {
                ended.extend(w.ended.clone());
            }
            (open, ended, tools)
        };
        if self.faults.ended_expires_at_once {
            self.world
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .ended
                .clear();
        }
        if !self.faults.statement_without_loose_tools {
            tools.push(json!({"name": GROUPED, "visible": true}));
            if self.revealed {
                tools.push(json!({"name": REVEALED, "visible": true}));
            }
        }
        let mut r = json!({"open": open});
        if !ended.is_empty() {
            r["ended"] = json!(ended);
        }
        // "Empty": nothing the host opened (the default-open toolset does not count).
        let empty = r["open"]
            .as_array()
            .is_some_and(|o| o.iter().all(|e| e["toolset"] == json!(DEFAULT_OPEN)));
        if !(self.faults.no_hints_on_empty_list && empty) {
            let h = self.stamp(json!({"tools": tools})).unwrap_or(json!({}));
            r["_meta"] = json!({"mcpl/hints": h});
        }
        r
    }

    pub(super) fn open(&mut self, p: &Value) -> Result<Value, ErrorObject> {
        let toolset = p.get("toolset").and_then(Value::as_str).unwrap_or("");
        let instance = p.get("instance").and_then(Value::as_str);
        let options = p.get("options");
        match toolset {
            INSTANCED => {
                let level = match options {
                    None => None,
                    Some(o) => {
                        let ok = o
                            .as_object()
                            .is_some_and(|m| m.keys().all(|k| k == "level"));
                        let level = o
                            .get("level")
                            .map(|l| l.as_i64().filter(|n| (1..=3).contains(n)));
                        match (ok, level) {
                            (true, None) => None,
                            (true, Some(Some(n))) => Some(n),
                            _ => {
                                return Err(invalid(
                                    "options do not fit the schema {level?: 1..3}",
                                ));
                            }
                        }
                    }
                };
                let name = match instance {
                    Some(i) => {
                        let f = self.faults;
                        // The broken fixtures' looser grammars: what they let through is
                        // checked as the grammatical name it resembles.
                        let mut judged = i.to_owned();
                        if f.accept_leading_underscore && judged.starts_with('_') {
                            judged.replace_range(0..1, "u");
                        }
                        if f.accept_dotted_names {
                            judged = judged.replace('.', "-");
                        }
                        if !f.accept_bad_names {
                            check_name("instance", &judged).map_err(|e| invalid(e.to_string()))?;
                        }
                        let mut name = i.to_owned();
                        if f.rename_instance {
                            name.push('x');
                        }
                        if f.lowercase_names {
                            name = name.to_lowercase();
                        }
                        if f.truncate_names {
                            name.truncate(16);
                        }
                        name
                    }
                    None => {
                        let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                        let n = w.next_auto;
                        w.next_auto += 1;
                        format!("auto-{n}")
                    }
                };
                let existing = self
                    .world
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .instances
                    .get(&name)
                    .cloned();
                if let Some(current) = existing.filter(|_| !self.faults.no_adoption) {
                    let mut r = json!({"instance": name, "adopted": true});
                    if level.is_some() && level != current {
                        r["content"] =
                            text("options not applied: level (the instance keeps its own)");
                    }
                    return Ok(r);
                }
                {
                    let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                    w.instances.insert(name.clone(), level);
                    w.note_open(&name);
                }
                let body = json!({"toolsets": [{"toolset": INSTANCED, "instance": name, "state": "open",
                    "title": format!("Game {name}")}], "tools": open_entries_for(&name, true, self.faults.one_definition)});
                self.fan_out(body.clone());
                let mut r = json!({"instance": name, "title": format!("Game {name}"), "content": text("opened")});
                if self.faults.no_instance_in_result {
                    r.as_object_mut().map(|o| o.remove("instance"));
                }
                if self.faults.list_changed_on_open {
                    let _ = self
                        .peer
                        .notify_value(methods::TOOLS_LIST_CHANGED, Some(json!({})));
                }
                Ok(self.with_hints(r, body))
            }
            FLAT | DEFAULT_OPEN => {
                if instance.is_some() {
                    return Err(invalid(format!("`{toolset}` has no instances")));
                }
                let tool = if toolset == FLAT {
                    FLAT_TOOL
                } else {
                    OPENED_TOOL
                };
                {
                    let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                    if toolset == FLAT && !w.flat_declared {
                        return Err(invalid(format!("unknown toolset `{toolset}`")));
                    }
                    let flag = if toolset == FLAT {
                        &mut w.flat_open
                    } else {
                        &mut w.default_open
                    };
                    if *flag && !self.faults.no_adoption {
                        return Ok(json!({"adopted": true}));
                    }
                    *flag = true;
                }
                let body = json!({"toolsets": [{"toolset": toolset, "state": "open"}],
                    "tools": [{"name": tool, "visible": true}]});
                self.fan_out(body.clone());
                Ok(self.with_hints(json!({"content": text("opened")}), body))
            }
            GROUP if self.faults.open_undeclared => Ok(json!({"content": text("opened")})),
            _ => Err(invalid(format!("unknown toolset `{toolset}`"))),
        }
    }

    pub(super) fn close(&mut self, p: &Value) -> Result<Value, ErrorObject> {
        let toolset = p.get("toolset").and_then(Value::as_str).unwrap_or("");
        let instance = p.get("instance").and_then(Value::as_str);
        let faults = self.faults;
        let body = match toolset {
            INSTANCED => {
                let Some(i) = instance else {
                    return Err(invalid("instance is required for an instanced toolset"));
                };
                let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                if w.instances.remove(i).is_none() {
                    return Ok(not_open(&faults));
                }
                let id = w.record_end(
                    INSTANCED,
                    Some(i),
                    "closed by a host of the principal",
                    &faults,
                );
                json!({"toolsets": [{"toolset": INSTANCED, "instance": i, "state": "closed", "ended": id}],
                       "tools": open_entries_for(i, false, self.faults.one_definition)})
            }
            FLAT | DEFAULT_OPEN => {
                let tool = if toolset == FLAT {
                    FLAT_TOOL
                } else {
                    OPENED_TOOL
                };
                let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                let flag = if toolset == FLAT {
                    &mut w.flat_open
                } else {
                    &mut w.default_open
                };
                if !*flag {
                    return Ok(not_open(&faults));
                }
                *flag = false;
                let id = w.record_end(toolset, None, "closed by a host of the principal", &faults);
                json!({"toolsets": [{"toolset": toolset, "state": "closed", "ended": id}],
                       "tools": [{"name": tool, "visible": false}]})
            }
            _ => return Err(invalid(format!("unknown toolset `{toolset}`"))),
        };
        let mut body = body;
        if self.faults.close_without_ended_id {
            strip_ended(&mut body);
        }
        self.fan_out(body.clone());
        if self.faults.close_without_hints {
            return Ok(json!({"content": text("closed")}));
        }
        Ok(self.with_hints(json!({"content": text("closed")}), body))
    }
}

/// The answer to closing what is not open: `result: null` from a broken fixture.
fn not_open(faults: &Faults) -> Value {
    if faults.null_result {
        Value::Null
    } else {
        json!({"content": text("not open")})
    }
}
