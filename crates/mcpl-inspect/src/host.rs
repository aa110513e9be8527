//! The page's picture of a surface host: built from the host library's own
//! [`HostStatus`] (the driver's presenter and controllers, read in its task), plus a short
//! history of rev moves per backend, sent to the page as one JSON snapshot.

use mcpl_host::driver::HostStatus;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};

/// How many rev moves the page keeps (the oldest go first).
pub const REV_MOVES_KEPT: usize = 200;

/// The host view: the latest status and the rev moves seen so far.
#[derive(Debug, Default)]
pub struct HostModel {
    revs: BTreeMap<String, u64>,
    moves: VecDeque<Value>,
    status: Option<Value>,
}

impl HostModel {
    /// Takes the status read `t_ms` after start; notes every backend whose rev moved.
    pub fn update(&mut self, t_ms: u64, status: &HostStatus) {
        let mut servers = Vec::new();
        for s in &status.servers {
            let name = s.name.to_string();
            let rev = s.rev.0;
            let was = self.revs.insert(name.clone(), rev);
            if was.is_some_and(|w| w != rev) || (was.is_none() && rev > 0) {
                if self.moves.len() == REV_MOVES_KEPT {
                    self.moves.pop_front();
                }
                self.moves.push_back(json!({
                    "t_ms": t_ms, "server": name, "from": was.unwrap_or(0), "to": rev,
                }));
            }
            let open: Vec<Value> = s
                .open
                .iter()
                .map(|o| {
                    json!({"toolset": o.toolset, "instance": o.instance, "title": o.title,
                           "visible": o.visible})
                })
                .collect();
            servers.push(json!({
                "name": name,
                "link": s.link.as_ref().map(ToString::to_string),
                "connected": s.connected,
                "hinted": s.hinted,
                "ready": s.ready,
                "push_events": s.push_events,
                "rev": rev,
                "recovery": s.recovery.map(|r| r.to_string()),
                "listed_tools": s.listed_tools,
                "open": open,
                "ended": s.ended,
            }));
        }
        let agents: Vec<Value> = status
            .agents
            .iter()
            .map(|a| {
                let waiting: Vec<Value> = a
                    .waiting
                    .iter()
                    .map(|w| {
                        json!({"server": w.server.to_string(), "state": w.state.to_string(),
                               "text": w.text})
                    })
                    .collect();
                json!({"id": a.id.as_str(), "waiting": waiting})
            })
            .collect();
        self.status = Some(json!({
            "servers": servers,
            "list": {"tools": status.tools, "digest": status.digest,
                     "changes": status.list_changes},
            "agents": agents,
        }));
    }

    /// The snapshot the page draws.
    pub fn snapshot(&self, now_ms: u64) -> Value {
        let mut v = self
            .status
            .clone()
            .unwrap_or_else(|| json!({"servers": [], "list": null, "agents": []}));
        v["view"] = json!("host");
        v["now_ms"] = json!(now_ms);
        v["rev_moves"] = json!(self.moves);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_host::driver::{OpenStatus, ServerStatus};
    use mcpl_host::{InstanceName, Rev, ServerName, ToolsetName};

    fn status(rev: u64) -> HostStatus {
        HostStatus {
            servers: vec![ServerStatus {
                name: ServerName::parse("arcade").unwrap(),
                link: None,
                connected: true,
                hinted: true,
                ready: true,
                push_events: true,
                rev: Rev(rev),
                recovery: None,
                listed_tools: 3,
                open: vec![OpenStatus {
                    toolset: ToolsetName::parse("go").unwrap(),
                    instance: Some(InstanceName::parse("g1").unwrap()),
                    title: Some("<b>G1</b>".into()),
                    visible: vec!["play".into()],
                }],
                ended: 0,
            }],
            tools: vec!["toolsets_open".into()],
            digest: "d1".into(),
            list_changes: 0,
            agents: Vec::new(),
        }
    }

    #[test]
    fn rev_moves_are_recorded_once_each_and_names_stay_data() {
        let mut m = HostModel::default();
        m.update(1, &status(2));
        m.update(2, &status(2));
        m.update(3, &status(5));
        let s = m.snapshot(4);
        assert_eq!(s["view"], "host");
        assert_eq!(s["servers"][0]["rev"], 5);
        assert_eq!(s["list"]["changes"], 0);
        let moves = s["rev_moves"].as_array().unwrap();
        assert_eq!(moves.len(), 2);
        assert_eq!(
            (moves[1]["from"].as_u64(), moves[1]["to"].as_u64()),
            (Some(2), Some(5))
        );
        // Server-written text travels as a JSON string; the page sets it as text only. Names
        // are in the grammar (no markup can reach them); a title is free text.
        assert_eq!(s["servers"][0]["open"][0]["instance"], "g1");
        assert_eq!(s["servers"][0]["open"][0]["title"], "<b>G1</b>");
    }
}
