//! A read-only picture of the running host for a watcher (the inspector page): every
//! server's connection, rev and recovery, the model-facing list with its digest and change
//! count, and the news each agent is still owed. Built inside the host task from the same
//! presenter and controllers that answer the model; reading it changes nothing.

use crate::controller::RecoveryStatus;
use crate::names::{InstanceName, Rev, ServerName, ToolsetName};
use crate::presenter::{AgentId, LinkState, Waiting};

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
    pub toolset: ToolsetName,
    /// The instance, for an instanced toolset.
    pub instance: Option<InstanceName>,
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
