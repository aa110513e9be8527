//! The page's picture of a server: built from observer records and principal states, sent to
//! the page as one JSON snapshot.

use mcpl_server::observe::Observation;
use mcpl_server::{PrincipalState, ToolState};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};

/// How many hint changes the page keeps (the oldest go first).
pub const CHANGES_KEPT: usize = 500;

/// One connection as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionView {
    /// The connection id.
    pub id: u64,
    /// Whom it acts for.
    pub principal: String,
    /// The last rev sent on it (0: none yet).
    pub rev: u64,
    /// Milliseconds since the inspector started, at its last record.
    pub last_seen_ms: u64,
    /// Still connected.
    pub open: bool,
}

/// One hint change as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeView {
    /// Milliseconds since the inspector started.
    pub t_ms: u64,
    /// The connection it went to.
    pub connection: u64,
    /// Whom it was for.
    pub principal: String,
    /// Its rev.
    pub rev: u64,
    /// `result`, `push/event` or `tools/hints`.
    pub carrier: &'static str,
    /// The changes as sent.
    pub hints: Value,
}

/// The server view: everything the page draws.
#[derive(Debug, Default)]
pub struct ServerModel {
    connections: BTreeMap<u64, ConnectionView>,
    principals: BTreeMap<String, Value>,
    changes: VecDeque<ChangeView>,
    total_changes: u64,
    /// Records the observer channel dropped because the inspector fell behind.
    missed: u64,
}

impl ServerModel {
    /// Takes one observer record seen `t_ms` after start; returns the principal whose state
    /// should be read again.
    pub fn record(&mut self, t_ms: u64, observation: Observation) -> String {
        match observation {
            Observation::Connected {
                connection,
                principal,
            } => {
                self.connections.insert(
                    connection.0,
                    ConnectionView {
                        id: connection.0,
                        principal: principal.to_string(),
                        rev: 0,
                        last_seen_ms: t_ms,
                        open: true,
                    },
                );
                principal.to_string()
            }
            Observation::Disconnected {
                connection,
                principal,
            } => {
                if let Some(c) = self.connections.get_mut(&connection.0) {
                    c.open = false;
                    c.last_seen_ms = t_ms;
                }
                principal.to_string()
            }
            Observation::Hints {
                connection,
                principal,
                carrier,
                hints,
            } => {
                let rev = hints.get("rev").and_then(Value::as_u64).unwrap_or(0);
                if let Some(c) = self.connections.get_mut(&connection.0) {
                    c.rev = c.rev.max(rev);
                    c.last_seen_ms = t_ms;
                }
                if self.changes.len() == CHANGES_KEPT {
                    self.changes.pop_front();
                }
                self.changes.push_back(ChangeView {
                    t_ms,
                    connection: connection.0,
                    principal: principal.to_string(),
                    rev,
                    carrier,
                    hints,
                });
                self.total_changes += 1;
                principal.to_string()
            }
        }
    }

    /// Notes that `n` records were dropped.
    pub fn missed(&mut self, n: u64) {
        self.missed += n;
    }

    /// Replaces what the page shows of `principal`'s toolsets and ended records.
    pub fn set_state(&mut self, principal: &str, state: &PrincipalState) {
        let toolsets: Vec<Value> = state
            .open
            .iter()
            .map(|(key, open)| {
                json!({
                    "toolset": key.toolset.to_string(),
                    "instance": key.instance.as_ref().map(ToString::to_string),
                    "title": open.title,
                    "tools": tools(&open.tools),
                })
            })
            .collect();
        let ended: Vec<Value> = state
            .ended
            .iter()
            .map(|e| serde_json::to_value(&e.record).unwrap_or(Value::Null))
            .collect();
        self.principals.insert(
            principal.to_owned(),
            json!({"toolsets": toolsets, "free": tools(&state.free), "ended": ended}),
        );
    }

    /// The snapshot the page draws.
    pub fn snapshot(&self, now_ms: u64) -> Value {
        let principals: Vec<Value> = self
            .principals
            .iter()
            .map(|(id, v)| {
                let mut v = v.clone();
                v["id"] = json!(id);
                v
            })
            .collect();
        json!({
            "view": "server",
            "now_ms": now_ms,
            "connections": self.connections.values().collect::<Vec<_>>(),
            "principals": principals,
            "changes": self.changes,
            "total_changes": self.total_changes,
            "missed": self.missed,
        })
    }
}

/// Tools and their visibility: `shown`, `hidden`, or `declared` (the declared default).
fn tools(tools: &BTreeMap<String, ToolState>) -> Vec<Value> {
    tools
        .iter()
        .map(|(name, t)| {
            let visible = match t.visible {
                Some(true) => "shown",
                Some(false) => "hidden",
                None => "declared",
            };
            json!({"name": name, "visible": visible})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_server::{ConnectionId, Principal};

    #[test]
    fn hint_changes_set_the_connection_rev_and_join_the_stream() {
        let mut m = ServerModel::default();
        let p = Principal::authenticated("ada");
        m.record(
            1,
            Observation::Connected {
                connection: ConnectionId(3),
                principal: p.clone(),
            },
        );
        for rev in 1..=2 {
            m.record(
                5,
                Observation::Hints {
                    connection: ConnectionId(3),
                    principal: p.clone(),
                    carrier: "result",
                    hints: json!({"rev": rev}),
                },
            );
        }
        let s = m.snapshot(9);
        assert_eq!(s["connections"][0]["rev"], 2);
        assert_eq!(s["changes"].as_array().unwrap().len(), 2);
        assert_eq!(s["total_changes"], 2);
        m.record(
            7,
            Observation::Disconnected {
                connection: ConnectionId(3),
                principal: p,
            },
        );
        assert_eq!(m.snapshot(9)["connections"][0]["open"], false);
    }
}
