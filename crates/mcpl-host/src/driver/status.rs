//! A read-only picture of the running host for a watcher (the inspector page): every
//! server's connection, rev and recovery, the model-facing list with its digest and change
//! count, and the news each agent is still owed. Built inside the host task from the same
//! presenter and controllers that answer the model; reading it changes nothing.

use crate::controller::RecoveryStatus;
use crate::names::{Rev, ServerName};
use crate::presenter::{AgentId, LinkState, Waiting};

use super::task::Task;

/// What the host is doing now ([`Host::status`](super::Host::status)).
#[derive(Debug, Clone, PartialEq)]
pub struct HostStatus {
    /// Every server the host knows, by name.
    pub servers: Vec<ServerStatus>,
    /// The model-facing tool names, in list order.
    pub tools: Vec<String>,
    /// The digest of the published list.
    pub digest: String,
    /// How many rebuilds changed the published list since the first (0 is the point).
    pub list_changes: u64,
    /// Every agent and the news it is still owed.
    pub agents: Vec<AgentStatus>,
}

/// One backing server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    /// Its name.
    pub name: ServerName,
    /// Where its connection stands, as the embedder reported it.
    pub link: Option<LinkState>,
    /// True while the host has a live connection (a controller) for it.
    pub connected: bool,
    /// Both sides switched `toolHints` on.
    pub hinted: bool,
    /// The first `toolsets/list` of this connection was applied.
    pub ready: bool,
    /// Holds the `pushEvents` grant.
    pub push_events: bool,
    /// The last applied rev of this connection (0: none yet).
    pub rev: Rev,
    /// Its connection's recovery; `None` without a live connection.
    pub recovery: Option<RecoveryStatus>,
    /// Listed tools.
    pub listed_tools: usize,
    /// Open toolsets and instances (and a plain server's open host-side groups).
    pub open: Vec<OpenStatus>,
    /// Ended records its last statement reported.
    pub ended: usize,
}

/// One open toolset or instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenStatus {
    /// The toolset.
    pub toolset: String,
    /// The instance, for an instanced toolset.
    pub instance: Option<String>,
    /// The server's title for it (server-written text).
    pub title: Option<String>,
    /// Its tools usable now.
    pub visible: Vec<String>,
}

/// One agent window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStatus {
    /// The agent.
    pub id: AgentId,
    /// What it has not been told yet, in read order.
    pub waiting: Vec<Waiting>,
}

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
                        let instance = instance.as_ref().map(ToString::to_string);
                        let visible = inst
                            .tools
                            .keys()
                            .filter(|t| s.visible(t, instance.as_deref()))
                            .map(ToString::to_string)
                            .collect();
                        open.push(OpenStatus {
                            toolset: toolset.to_string(),
                            instance,
                            title: inst.title.clone(),
                            visible,
                        });
                    }
                    for group in s.groups_open() {
                        let visible = s
                            .tools()
                            .iter()
                            .filter(|t| t.toolset.as_deref() == Some(group.as_str()))
                            .filter(|t| s.visible(&t.tool.name, None))
                            .map(|t| t.tool.name.clone())
                            .collect();
                        open.push(OpenStatus {
                            toolset: group.to_string(),
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
