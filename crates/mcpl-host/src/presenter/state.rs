//! The presenter's state: its settings, what it holds per server, and the published tool
//! list. The agent windows, meta-tools and notices add their methods to [`Presenter`] from
//! their own modules.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::Presence;
use serde_json::{Value, json};

use super::agent::AgentId;
use super::link_state::LinkState;
use super::queue::{self, MAX_NOTICE};
use super::trace::{self, CallTrace};
use super::{meta_tools, naming, render};
use crate::controller::Snapshot;
use crate::names::ServerName;

/// The bound on one notice's length, in bytes (H73).
pub fn window_cap() -> usize {
    MAX_NOTICE
}

/// Presenter settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresenterConfig {
    /// §8.4: show visible dynamic tools as real tools with host-namespaced names. Off by
    /// default: the list then changes with every visibility change.
    pub projection: bool,
    /// §5.5, §8.2: check act's arguments against the instance's definition before sending.
    pub check_args: bool,
}

impl Default for PresenterConfig {
    fn default() -> Self {
        PresenterConfig {
            projection: false,
            check_args: true,
        }
    }
}

/// What the presenter holds per server.
#[derive(Debug, Clone)]
pub(super) struct ServerEntry {
    /// Shared with the controller: taking it after a drain copies nothing.
    pub(super) snap: Arc<Snapshot>,
    pub(super) push_events: bool,
    /// Ended ids some statement has reported, for H49's forgetting.
    pub(super) reported: BTreeSet<String>,
    pub(super) statements: u64,
}

/// One server's part of the published list (H36: kept whole when a rebuild cannot list it).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Part {
    pub(super) presence: BTreeMap<String, Presence>,
    pub(super) statics: Vec<Tool>,
}

/// The model-facing picture across servers; see the module doc.
///
/// Inputs: [`update`](Self::update) after draining a controller's effects (and
/// [`handle_change`](Self::handle_change), [`handle_event`](Self::handle_event),
/// [`handle_notice`](Self::handle_notice) for each effect, in order, as they are polled);
/// [`remove_server`](Self::remove_server). Tool list: [`rebuild`](Self::rebuild),
/// [`tool_list`](Self::tool_list), [`digest`](Self::digest). Window:
/// [`poll_window`](Self::poll_window), [`take`](Self::take), [`stored`](Self::stored).
#[derive(Debug, Default)]
pub struct Presenter {
    pub(super) cfg: PresenterConfig,
    pub(super) servers: BTreeMap<ServerName, ServerEntry>,
    pub(super) published: BTreeMap<ServerName, Part>,
    pub(super) list: Vec<Tool>,
    pub(super) digest: String,
    pub(super) list_changes: u64,
    pub(super) rebuilt_once: bool,
    pub(super) agents: BTreeMap<AgentId, queue::Agent>,
    pub(super) links: BTreeMap<ServerName, LinkState>,
    pub(super) ever_up: BTreeSet<ServerName>,
    /// Per server, the sentences about events it cannot send the agent.
    pub(super) withheld: BTreeMap<ServerName, Vec<String>>,
    pub(super) next_token: u64,
    /// Where refused acts are reported (H65).
    pub(super) trace: trace::Sink,
}

impl Presenter {
    /// An empty presenter; call [`rebuild`](Self::rebuild) once servers are added.
    pub fn new(cfg: PresenterConfig) -> Self {
        let mut p = Presenter {
            cfg,
            ..Presenter::default()
        };
        p.rebuild();
        // The empty list above was never published: the embedder's first rebuild is the
        // first publication, and only changes after it count.
        p.list_changes = 0;
        p.rebuilt_once = false;
        p
    }

    /// Reports refused acts (H65) to `trace` instead of the default `tracing` warning.
    pub fn set_call_trace(&mut self, trace: std::sync::Arc<dyn CallTrace>) {
        self.trace = trace::Sink(trace);
    }

    /// Adds or refreshes a server's snapshot and whether it holds the `pushEvents` grant.
    pub fn update(&mut self, snap: &Snapshot, push_events: bool) {
        self.update_shared(Arc::new(snap.clone()), push_events);
    }

    /// [`update`](Self::update) with a snapshot shared with its controller
    /// ([`Controller::shared_snapshot`](crate::Controller::shared_snapshot)): nothing is
    /// copied, and the same snapshot again is recognised at once and changes nothing.
    pub fn update_shared(&mut self, snap: Arc<Snapshot>, push_events: bool) {
        let id = snap.server().clone();
        if let Some(e) = self.servers.get(&id) {
            if Arc::ptr_eq(&e.snap, &snap) && e.push_events == push_events {
                return;
            }
        }
        let entry = self
            .servers
            .entry(id.clone())
            .or_insert_with(|| ServerEntry {
                snap: snap.clone(),
                push_events,
                reported: BTreeSet::new(),
                statements: 0,
            });
        entry.snap = snap.clone();
        entry.push_events = push_events;
        if snap.statements() != entry.statements {
            entry.statements = snap.statements();
            // H49: an id the server stopped reporting is forgotten, so a later record under
            // it is told again. Only ids some statement reported are forgotten, so a close's
            // ended id told before any statement listed it is kept.
            let now: BTreeSet<String> = snap.ended().iter().map(|e| e.id.clone()).collect();
            let gone: Vec<String> = entry.reported.difference(&now).cloned().collect();
            entry.reported = now;
            let principal = snap.principal().to_owned();
            for agent in self.agents.values_mut() {
                for g in &gone {
                    agent.forget_ended(&id, &principal, g);
                }
            }
        }
    }

    /// Forgets a server and all its toolset state: owed changes, told and shown marks,
    /// reminders (H77). Its part of the published list goes at the next rebuild.
    pub fn remove_server(&mut self, server: &ServerName) {
        self.servers.remove(server);
        for agent in self.agents.values_mut() {
            agent.forget_server(server);
        }
    }

    /// The ids of the servers the presenter knows, sorted.
    pub fn servers(&self) -> Vec<&ServerName> {
        self.servers.keys().collect()
    }

    /// The latest snapshot of a server.
    pub fn snapshot(&self, server: &ServerName) -> Option<&Snapshot> {
        self.servers.get(server).map(|e| &*e.snap)
    }

    /// The published model-facing tool list.
    pub fn tool_list(&self) -> &[Tool] {
        &self.list
    }

    /// The digest of the published list (the cache report's key).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// How many rebuilds changed the published list since the embedder's first one.
    pub fn list_changes(&self) -> u64 {
        self.list_changes
    }

    pub(super) fn multi(&self) -> bool {
        self.servers.len() > 1
    }

    /// The name the model calls a server's static tool by.
    pub fn model_name(&self, server: &ServerName, tool: &str) -> String {
        if self.multi() {
            naming::fit(&format!("{server}__{tool}"))
        } else {
            tool.to_owned()
        }
    }

    /// Whether `model` is [`model_name`](Self::model_name) of `server`'s `tool`, without
    /// building the name in the common case (a call by name asks it of every listed tool).
    pub(super) fn is_model_name(&self, server: &ServerName, tool: &str, model: &str) -> bool {
        if self.multi() {
            naming::is_joined_fit(server.as_str(), tool, model)
        } else {
            tool == model
        }
    }

    pub(super) fn part_of(snap: &Snapshot) -> Part {
        let mut part = Part::default();
        for t in snap.tools() {
            part.presence.insert(t.tool.name.clone(), t.presence);
            if t.presence == Presence::Static {
                part.statics.push(t.tool.clone());
            }
        }
        part
    }

    /// True when the static part of the list changed for a reason other than a presence
    /// move: a move alone never asks for a rebuild (H33).
    pub fn needs_rebuild(&self) -> bool {
        if self.published.keys().any(|s| !self.servers.contains_key(s)) {
            return true; // a server was removed
        }
        for (id, e) in &self.servers {
            if !e.snap.listed() {
                continue;
            }
            let Some(old) = self.published.get(id) else {
                return true;
            };
            let new = Self::part_of(&e.snap);
            let moved = |name: &str| matches!((old.presence.get(name), new.presence.get(name)), (Some(a), Some(b)) if a != b);
            let olds: Vec<&Tool> = old.statics.iter().filter(|t| !moved(&t.name)).collect();
            let news: Vec<&Tool> = new.statics.iter().filter(|t| !moved(&t.name)).collect();
            if olds != news {
                return true;
            }
        }
        self.cfg.projection && self.projected() != self.list_projected()
    }

    /// Rebuilds the published list from every server's applied state. A server that cannot
    /// be listed keeps its published part and none of its moves is told (H36). Moves the new
    /// list reflects are published and told once each (H34, H35); a move a later list undid is
    /// never seen. Returns true when the list changed.
    pub fn rebuild(&mut self) -> bool {
        let mut parts = BTreeMap::new();
        let mut moves: Vec<(ServerName, String, bool)> = Vec::new();
        for (id, e) in &self.servers {
            if !e.snap.listed() {
                if let Some(old) = self.published.get(id) {
                    parts.insert(id.clone(), old.clone());
                }
                continue;
            }
            let new = Self::part_of(&e.snap);
            if let Some(old) = self.published.get(id) {
                for (name, p) in &new.presence {
                    if let Some(was) = old.presence.get(name) {
                        if was != p {
                            moves.push((id.clone(), name.clone(), *p == Presence::Static));
                        }
                    }
                }
            }
            parts.insert(id.clone(), new);
        }
        self.published = parts;
        let mut list = Vec::new();
        for (id, part) in &self.published {
            for t in &part.statics {
                let mut tool = t.clone();
                tool.name = self.model_name(id, &t.name);
                list.push(tool);
            }
        }
        list.extend(meta_tools::meta_tools());
        if self.cfg.projection {
            list.extend(self.projected());
        }
        let digest = render::identity(&json!(
            list.iter()
                .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
                .collect::<Vec<_>>()
        ));
        let changed = digest != self.digest;
        if changed && self.rebuilt_once {
            self.list_changes += 1;
        }
        self.rebuilt_once = true;
        self.list = list;
        self.digest = digest;
        for (server, tool, now_static) in moves {
            self.push_move(&server, &tool, now_static);
        }
        changed
    }

    pub(super) fn list_projected(&self) -> Vec<Tool> {
        let metas = meta_tools::meta_tools().len();
        let statics: usize = self.published.values().map(|p| p.statics.len()).sum();
        self.list.iter().skip(statics + metas).cloned().collect()
    }

    /// Where a tool is in the published list: `Some(Static)` when offered by name,
    /// `Some(Dynamic)` when published as dynamic, `None` when never published.
    pub(super) fn published_presence(&self, server: &ServerName, tool: &str) -> Option<Presence> {
        self.published.get(server)?.presence.get(tool).copied()
    }

    /// H37: a call by name works while the published list or the latest list shows the
    /// tool static.
    pub fn callable_by_name(&self, server: &ServerName, tool: &str) -> bool {
        let latest = self
            .snapshot(server)
            .and_then(|s| s.tool(tool))
            .map(|t| t.presence);
        self.published_presence(server, tool) == Some(Presence::Static)
            || latest == Some(Presence::Static)
    }

    /// H37: act takes a tool while the published list or the latest list shows it dynamic.
    pub fn actable(&self, server: &ServerName, tool: &str) -> bool {
        let latest = self
            .snapshot(server)
            .and_then(|s| s.tool(tool))
            .map(|t| t.presence);
        (self.published_presence(server, tool) == Some(Presence::Dynamic)
            || latest == Some(Presence::Dynamic))
            && self
                .snapshot(server)
                .is_some_and(|s| s.tool(tool).is_some())
    }
}
