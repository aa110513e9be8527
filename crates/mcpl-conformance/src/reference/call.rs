//! The reference fixture's `tools/call`: routing to an instance (§4.3) and every fixture
//! tool's behaviour.

use super::session::Session;
use super::world::{Internal, open_entries_for, strip_ended, text, tool_error};
use crate::fixture::*;
use mcpl_protocol::jsonrpc::RequestId;
use mcpl_protocol::methods;
use mcpl_rpc::Responder;
use serde_json::{Value, json};
use std::time::Duration;

impl Session {
    /// Resolves the target instance of a call (§4.3; §11's current instance without hints).
    pub(super) fn resolve(&self, p: &Value) -> Result<String, String> {
        let w = self.world.lock().unwrap_or_else(|p| p.into_inner());
        let open: Vec<&String> = w.instances.keys().collect();
        let named = if self.hinted {
            p.pointer("/_meta/mcpl~1instance")
                .and_then(Value::as_str)
                .map(str::to_owned)
        } else {
            self.current.clone().filter(|c| w.instances.contains_key(c))
        };
        match named {
            Some(i) if w.instances.contains_key(&i) => Ok(i),
            Some(i) => Err(format!("`{i}` is not open; open: {open:?}")),
            None => match open.as_slice() {
                [one] => Ok((*one).clone()),
                [] => Err("no instance is open".into()),
                [first, ..] if self.faults.guess_instance => Ok((*first).clone()),
                many => Err(format!(
                    "several instances are open: {}",
                    many.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            },
        }
    }

    pub(super) fn call(
        &mut self,
        p: &Value,
        id: RequestId,
        responder: Responder,
    ) -> Option<(Value, Responder)> {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let args = p.get("arguments").cloned().unwrap_or(json!({}));
        let visible = args.get("visible").and_then(Value::as_bool).unwrap_or(true);
        let delay = Duration::from_millis(args.get("delayMs").and_then(Value::as_u64).unwrap_or(0));
        let result = match name.as_str() {
            ECHO => match self.resolve(p) {
                Err(e) => tool_error(&e),
                Ok(i) => match args.get("value").and_then(Value::as_str) {
                    Some(v) if v == i || self.faults.one_definition => {
                        json!({"content": text(&format!("{i}:{v}"))})
                    }
                    other => {
                        tool_error(&format!("value {other:?} is not in instance `{i}`'s enum"))
                    }
                },
            },
            FINISH => match self.resolve(p) {
                Err(e) => tool_error(&e),
                Ok(i) => {
                    let faults = self.faults;
                    let id = {
                        let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                        w.instances.remove(&i);
                        w.record_end(INSTANCED, Some(&i), "the game finished", &faults)
                    };
                    let mut body = json!({"toolsets": [{"toolset": INSTANCED, "instance": i, "state": "closed",
                        "ended": id, "reason": "the game finished"}], "tools": open_entries_for(&i, false, self.faults.one_definition)});
                    if self.faults.close_without_ended_id {
                        strip_ended(&mut body);
                    }
                    self.fan_out(body.clone());
                    self.with_hints(json!({"content": text("finished")}), body)
                }
            },
            FLAT_TOOL => {
                let open = self
                    .world
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .flat_open;
                if (self.hinted || self.faults.plain_flat_closed) && !open {
                    tool_error("cf-flat is not open")
                } else {
                    json!({"content": text("flat")})
                }
            }
            OPENED_TOOL | GROUPED | MOVER => json!({"content": text("ok")}),
            REVEALED => {
                if self.revealed {
                    json!({"content": text("ok")})
                } else {
                    tool_error("not visible")
                }
            }
            REVEAL => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let _ = tx.send(Internal::Reveal {
                        id,
                        responder,
                        visible,
                    });
                });
                return None;
            }
            LATER => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let _ = tx.send(Internal::Later { visible });
                });
                json!({"content": text("later")})
            }
            MOVE => {
                let dynamic = args.get("presence") == Some(&json!("dynamic"));
                self.world
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .mover_dynamic = dynamic;
                let body = json!({"tools": [{"name": MOVER, "presence": if dynamic {"dynamic"} else {"static"}, "visible": true}]});
                self.with_hints(json!({"content": text("moved")}), body)
            }
            UNDECLARE => {
                let restore = args.get("restore") == Some(&json!(true));
                let faults = self.faults;
                let body = {
                    let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                    w.flat_declared = restore;
                    if !restore && w.flat_open {
                        w.flat_open = false;
                        let id = w.record_end(FLAT, None, "the toolset was removed", &faults);
                        Some(
                            json!({"toolsets": [{"toolset": FLAT, "state": "closed", "ended": id}],
                                    "tools": [{"name": FLAT_TOOL, "visible": false}]}),
                        )
                    } else {
                        None
                    }
                };
                if !self.faults.silent_manifest_change {
                    let _ = self.peer.notify_value(
                        methods::MANIFEST_CHANGED,
                        Some(json!({"revision": "sha256:fixture", "domains": ["toolsets"]})),
                    );
                }
                match body {
                    Some(b) => self.with_hints(json!({"content": text("removed")}), b),
                    None => json!({"content": text("done")}),
                }
            }
            COMPAT_OPEN | COMPAT_CHOOSE | COMPAT_CLOSE if !self.hinted => {
                let i = args
                    .get("instance")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let mut w = self.world.lock().unwrap_or_else(|p| p.into_inner());
                match name.as_str() {
                    COMPAT_OPEN => {
                        if !w.instances.contains_key(&i) {
                            w.instances.insert(i.clone(), None);
                            w.note_open(&i);
                        }
                        self.current = Some(i);
                        json!({"content": text("opened")})
                    }
                    COMPAT_CHOOSE if w.instances.contains_key(&i) => {
                        if !self.faults.choose_ignored {
                            self.current = Some(i);
                        }
                        json!({"content": text("chosen")})
                    }
                    COMPAT_CHOOSE => tool_error(&format!("`{i}` is not open")),
                    _ => {
                        w.instances.remove(&i);
                        json!({"content": text("closed")})
                    }
                }
            }
            other => tool_error(&format!("unknown tool `{other}`")),
        };
        Some((result, responder))
    }
}
