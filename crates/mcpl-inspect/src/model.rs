//! The page's picture of a server: built from observer records and principal states, sent to
//! the page as one JSON snapshot.

use mcpl_server::observe::{LastSeen, Observation};
use mcpl_server::{PrincipalState, ToolState};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

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
    /// Milliseconds since the inspector started, at its last inbound message or record.
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
#[derive(Debug)]
pub struct ServerModel {
    /// When the inspector started: the page's times are milliseconds after it.
    start: Instant,
    connections: BTreeMap<u64, ConnectionView>,
    /// Each open connection's last inbound message, as its driver stamps it.
    seen: BTreeMap<u64, Arc<LastSeen>>,
    principals: BTreeMap<String, Value>,
    changes: VecDeque<ChangeView>,
    total_changes: u64,
    /// Records the observer channel dropped because the inspector fell behind.
    missed: u64,
}

impl ServerModel {
    /// An empty view; its times count from `start`.
    pub fn new(start: Instant) -> Self {
        ServerModel {
            start,
            connections: BTreeMap::new(),
            seen: BTreeMap::new(),
            principals: BTreeMap::new(),
            changes: VecDeque::new(),
            total_changes: 0,
            missed: 0,
        }
    }

    /// Brings each open connection's last-seen time up to its last inbound message; true
    /// when one moved (the page should be sent a new snapshot).
    pub fn refresh_seen(&mut self) -> bool {
        let mut moved = false;
        for (id, seen) in &self.seen {
            let at = u64::try_from(seen.at().saturating_duration_since(self.start).as_millis())
                .unwrap_or(u64::MAX);
            if let Some(c) = self.connections.get_mut(id)
                && at > c.last_seen_ms
            {
                c.last_seen_ms = at;
                moved = true;
            }
        }
        moved
    }

    /// Takes one observer record seen `t_ms` after start; returns the principal whose state
    /// should be read again.
    pub fn record(&mut self, t_ms: u64, observation: Observation) -> String {
        match observation {
            Observation::Connected {
                connection,
                principal,
                seen,
            } => {
                self.seen.insert(connection.0, seen);
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
                self.seen.remove(&connection.0);
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
        let start = Instant::now();
        let mut m = ServerModel::new(start);
        let p = Principal::authenticated("ada");
        m.record(
            1,
            Observation::Connected {
                connection: ConnectionId(3),
                principal: p.clone(),
                seen: Arc::new(LastSeen::new(start)),
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

    #[test]
    fn last_seen_follows_every_inbound_message_not_only_records() {
        use std::time::Duration;
        let start = Instant::now();
        let mut m = ServerModel::new(start);
        let seen = Arc::new(LastSeen::new(start + Duration::from_millis(10)));
        m.record(
            10,
            Observation::Connected {
                connection: ConnectionId(1),
                principal: Principal::authenticated("ada"),
                seen: seen.clone(),
            },
        );
        assert!(!m.refresh_seen(), "nothing arrived yet");
        // A ping, say: no record, but the driver stamped it.
        seen.touch(start + Duration::from_millis(2500));
        assert!(m.refresh_seen());
        assert_eq!(m.snapshot(3000)["connections"][0]["last_seen_ms"], 2500);
        assert!(!m.refresh_seen(), "no new message, no new snapshot");
    }
}
