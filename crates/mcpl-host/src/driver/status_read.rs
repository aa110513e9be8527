//! The host task's read of its status: a [`HostStatus`] built from the same presenter and
//! controllers that answer the model (above `task` and `status`, so the types stay a leaf).

use crate::names::{Rev, ServerName};

use super::status::{AgentStatus, HostStatus, OpenStatus, ServerStatus};
use super::task::Task;

impl Task {
    /// The picture [`HostStatus`] describes, from the presenter and the live controllers.
    pub(super) fn status(&self) -> HostStatus {
        let p = &self.pres;
        let mut names: Vec<&ServerName> = p.servers();
        names.extend(p.linked());
        names.extend(self.conns.keys());
        names.sort();
        names.dedup();
        let servers = names
            .into_iter()
            .map(|name| {
                let conn = self.conns.get(name);
                let snap = conn.map(|c| c.ctrl.snapshot()).or_else(|| p.snapshot(name));
                let mut open = Vec::new();
                if let Some(s) = snap {
                    for ((toolset, instance), inst) in s.open() {
                        let visible = inst
                            .tools
                            .keys()
                            .filter(|t| s.visible(t, instance.as_ref()))
                            .map(ToString::to_string)
                            .collect();
                        open.push(OpenStatus {
                            toolset: toolset.clone(),
                            instance: instance.clone(),
                            title: inst.title.clone(),
                            visible,
                        });
                    }
                    for group in s.groups_open() {
                        let visible = s
                            .tools()
                            .iter()
                            .filter(|t| t.toolset.as_ref() == Some(group))
                            .filter(|t| s.visible(&t.tool.name, None))
                            .map(|t| t.tool.name.clone())
                            .collect();
                        open.push(OpenStatus {
                            toolset: group.clone(),
                            instance: None,
                            title: None,
                            visible,
                        });
                    }
                }
                ServerStatus {
                    name: name.clone(),
                    link: p.link(name).cloned(),
                    connected: conn.is_some(),
                    hinted: snap.is_some_and(|s| s.hinted()),
                    ready: snap.is_some_and(|s| s.ready()),
                    push_events: conn.is_some_and(|c| c.granted),
                    rev: snap.map_or(Rev(0), |s| s.applied()),
                    recovery: conn.map(|c| c.ctrl.recovery()),
                    listed_tools: snap.map_or(0, |s| s.tools().len()),
                    open,
                    ended: snap.map_or(0, |s| s.ended().len()),
                }
            })
            .collect();
        HostStatus {
            servers,
            tools: p.tool_list().iter().map(|t| t.name.clone()).collect(),
            digest: p.digest().to_owned(),
            list_changes: p.list_changes(),
            agents: p
                .agents()
                .into_iter()
                .map(|id| AgentStatus {
                    id: id.clone(),
                    waiting: p.waiting(id),
                })
                .collect(),
        }
    }
}
