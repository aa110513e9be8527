//! The tokio driver: runs one [`Controller`] per server connection over `mcpl-rpc` peers,
//! feeds a [`Presenter`], and hands its output to an embedding agent.
//!
//! One task owns the presenter and every controller. It `select!`s over frames from all
//! connections (in each connection's read order, with the peer's sequence numbers), commands
//! from [`Host`] handles, and the earliest controller deadline; it reads the clock, calls
//! `handle_*`, and drains `poll_*`. Every RFC decision is in the cores.

use std::collections::BTreeMap;
use std::time::Duration;

use mcpl_protocol::jsonrpc::{Message, Response};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::mcpl::{FeatureSetsUpdate, FeatureSetsUpdateParams};
use mcpl_rpc::{Event, Events, Peer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::controller::{Controller, Effect, Outcome, Pending};
use crate::presenter::{
    AgentId, LookQuery, Plan, Presenter, PresenterConfig, WindowItem, can_carry,
};
use crate::{ControllerConfig, Error};

/// The embedding agent: where notices go.
pub trait Agent: Send + 'static {
    /// Store `item` in the agent's window; return false if it could not be stored (the
    /// change then stays owed, H45).
    fn notice(&mut self, item: &WindowItem) -> bool;
}

/// The host's grant policy for the servers it connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    /// Grant `pushEvents` (sent as the initial `featureSets/update`); notices need it (H47).
    pub grant_push_events: bool,
    /// How long `featureSets/update` may take.
    pub policy_timeout: Duration,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            grant_push_events: true,
            policy_timeout: Duration::from_secs(10),
        }
    }
}

enum Command {
    Add(Box<ControllerConfig>, Peer, Events, bool),
    Remove(String),
    Call(String, Value, oneshot::Sender<String>),
    Rebuild(oneshot::Sender<(bool, String)>),
    NeedsRebuild(oneshot::Sender<bool>),
    Tools(oneshot::Sender<(Vec<Tool>, String)>),
}

/// A handle to the running host task. Cloning it is cheap; the task ends when every handle
/// is dropped.
#[derive(Clone, Debug)]
pub struct Host {
    tx: mpsc::UnboundedSender<Command>,
    policy: HostPolicy,
}

impl Host {
    /// Starts the host task with one agent window.
    pub fn spawn(cfg: PresenterConfig, policy: HostPolicy, agent: impl Agent) -> Host {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(cfg, Box::new(agent), rx));
        Host { tx, policy }
    }

    /// Connects a server over an initialized peer: sends the initial policy
    /// (`featureSets/update`, granting `pushEvents` per [`HostPolicy`]), then starts its
    /// controller, which reads `tools/list` and `toolsets/list` (H28).
    pub async fn add_server(
        &self,
        mut cfg: ControllerConfig,
        peer: Peer,
        events: Events,
    ) -> Result<(), Error> {
        let grant = self.policy.grant_push_events;
        let params = if grant {
            FeatureSetsUpdateParams::granting(["pushEvents"])
        } else {
            FeatureSetsUpdateParams::default()
        };
        let granted = match peer
            .request::<FeatureSetsUpdate>(params, self.policy.policy_timeout)
            .await
        {
            Ok(receipt) => grant && receipt.value.accepted,
            Err(e) => {
                tracing::warn!(server = %cfg.server, error = %e, "initial policy not acknowledged; no grant");
                false
            }
        };
        cfg.push_events = granted;
        self.send(Command::Add(Box::new(cfg), peer, events, granted))
    }

    /// Removes a server and forgets its toolset state (H77).
    pub fn remove_server(&self, server: &str) -> Result<(), Error> {
        self.send(Command::Remove(server.to_owned()))
    }

    /// The model calls `tool` (a meta-tool, a static tool's model-facing name, or a projected
    /// tool) with `args`; returns the text the model reads, with any change riding along.
    pub async fn call(&self, tool: &str, args: Value) -> Result<String, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Call(tool.to_owned(), args, reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Rebuilds the model-facing tool list; returns whether it changed and its digest.
    pub async fn rebuild(&self) -> Result<(bool, String), Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Rebuild(reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Whether the static part of the tool list changed for a reason other than a presence
    /// move (a move alone never asks for a rebuild, H33).
    pub async fn needs_rebuild(&self) -> Result<bool, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::NeedsRebuild(reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// The published tool list and its digest.
    pub async fn tool_list(&self) -> Result<(Vec<Tool>, String), Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Tools(reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    fn send(&self, c: Command) -> Result<(), Error> {
        self.tx.send(c).map_err(|_| Error::Closed)
    }
}

struct Conn {
    ctrl: Controller,
    peer: Peer,
    granted: bool,
}

/// A model call waiting for its answer.
struct Waiting {
    plan: Plan,
    reply: oneshot::Sender<String>,
}

/// A look waiting for its servers' re-reads (H62).
struct LookWait {
    left: Vec<(String, Pending)>,
    unreachable: Vec<String>,
    query: LookQuery,
    reply: oneshot::Sender<String>,
}

struct Task {
    pres: Presenter,
    agent_id: AgentId,
    agent: Box<dyn Agent>,
    conns: BTreeMap<String, Conn>,
    waiting: BTreeMap<(String, Pending), Waiting>,
    looks: Vec<LookWait>,
    inbox: mpsc::UnboundedSender<(String, Event)>,
}

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

async fn run(
    cfg: PresenterConfig,
    agent: Box<dyn Agent>,
    mut rx: mpsc::UnboundedReceiver<Command>,
) {
    let (inbox, mut frames) = mpsc::unbounded_channel();
    let agent_id = AgentId("agent".into());
    let mut pres = Presenter::new(cfg);
    pres.add_agent(agent_id.clone());
    let mut t = Task {
        pres,
        agent_id,
        agent,
        conns: BTreeMap::new(),
        waiting: BTreeMap::new(),
        looks: Vec::new(),
        inbox,
    };
    loop {
        let deadline = t.conns.values().filter_map(|c| c.ctrl.poll_timeout()).min();
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(Instant::from_std(d)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            cmd = rx.recv() => match cmd {
                Some(cmd) => t.command(cmd),
                None => break,
            },
            Some((server, ev)) = frames.recv() => t.frame(&server, ev),
            () = sleep => {
                let n = now();
                for c in t.conns.values_mut() {
                    c.ctrl.handle_timeout(n);
                }
            }
        }
        t.drain();
    }
}

impl Task {
    fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Add(cfg, peer, mut events, granted) => {
                let server = cfg.server.clone();
                let ctrl = Controller::new(*cfg, now());
                let inbox = self.inbox.clone();
                let name = server.clone();
                tokio::spawn(async move {
                    while let Some(ev) = events.recv().await {
                        if inbox.send((name.clone(), ev)).is_err() {
                            break;
                        }
                    }
                });
                self.conns.insert(
                    server,
                    Conn {
                        ctrl,
                        peer,
                        granted,
                    },
                );
            }
            Command::Remove(server) => {
                if let Some(c) = self.conns.remove(&server) {
                    tokio::spawn(async move { c.peer.close().await });
                }
                self.pres.remove_server(&server);
                self.waiting.retain(|(s, _), _| *s != server);
            }
            Command::Call(tool, args, reply) => self.call(&tool, &args, reply),
            Command::Rebuild(reply) => {
                let changed = self.pres.rebuild();
                let _ = reply.send((changed, self.pres.digest().to_owned()));
            }
            Command::NeedsRebuild(reply) => {
                let _ = reply.send(self.pres.needs_rebuild());
            }
            Command::Tools(reply) => {
                let _ = reply.send((
                    self.pres.tool_list().to_vec(),
                    self.pres.digest().to_owned(),
                ));
            }
        }
    }

    fn call(&mut self, tool: &str, args: &Value, reply: oneshot::Sender<String>) {
        let plan = match self.pres.plan(tool, args) {
            Ok(p) => p,
            Err(refusal) => {
                let _ = reply.send(refusal);
                return;
            }
        };
        let n = now();
        let sent = match &plan {
            Plan::Look { servers, query } => {
                let mut left = Vec::new();
                let mut unreachable = Vec::new();
                for s in servers {
                    match self.conns.get_mut(s).map(|c| c.ctrl.refresh(n)) {
                        Some(Ok(p)) => left.push((s.clone(), p)),
                        _ => unreachable.push(s.clone()),
                    }
                }
                self.looks.push(LookWait {
                    left,
                    unreachable,
                    query: query.clone(),
                    reply,
                });
                return;
            }
            Plan::OpenGroup { server, group } | Plan::CloseGroup { server, group } => {
                let open = matches!(plan, Plan::OpenGroup { .. });
                let r = match self.conns.get_mut(server) {
                    Some(c) => c.ctrl.set_group(group, open),
                    None => Err(Error::Closed),
                };
                let text = match r {
                    Ok(()) => self
                        .pres
                        .answer_text(&plan, Ok(&Outcome::Result(json!({})))),
                    Err(e) => self.pres.answer_text(&plan, Err(&e)),
                };
                let _ = reply.send(text);
                return;
            }
            Plan::Open { server, req } => self.with(server, |c| c.open(n, req.clone())),
            Plan::Close { server, req } => self.with(server, |c| c.close(n, req.clone())),
            Plan::Act { server, req } | Plan::Call { server, req } => {
                self.with(server, |c| c.call(n, req.clone()))
            }
        };
        let server = match &plan {
            Plan::Open { server, .. }
            | Plan::Close { server, .. }
            | Plan::Act { server, .. }
            | Plan::Call { server, .. } => server.clone(),
            _ => String::new(),
        };
        match sent {
            Ok(pending) => {
                // H42: the taker is registered before the answer can be read.
                self.pres.register_taker(&self.agent_id, &server, pending);
                self.waiting
                    .insert((server, pending), Waiting { plan, reply });
            }
            Err(e) => {
                let _ = reply.send(self.pres.answer_text(&plan, Err(&e)));
            }
        }
    }

    fn with(
        &mut self,
        server: &str,
        f: impl FnOnce(&mut Controller) -> Result<Pending, Error>,
    ) -> Result<Pending, Error> {
        match self.conns.get_mut(server) {
            Some(c) => f(&mut c.ctrl),
            None => Err(Error::Closed),
        }
    }

    fn frame(&mut self, server: &str, ev: Event) {
        let Some(c) = self.conns.get_mut(server) else {
            return;
        };
        let n = now();
        let seq = ev.seq();
        match ev {
            Event::Closed { .. } => c.ctrl.handle_close(n),
            Event::BadFrame { error, .. } => c.ctrl.handle_undecodable(n, error.id().cloned()),
            Event::LateResponse { id, outcome, .. } => {
                let msg = Message::Response(Response {
                    id: Some(id),
                    outcome,
                    extra: Default::default(),
                });
                c.ctrl.handle_message(n, seq, msg);
            }
            other => {
                if let Some(msg) = other.into_message() {
                    c.ctrl.handle_message(n, seq, msg);
                }
            }
        }
    }

    /// Drains every controller's effects in order, then tells the agent what is owed.
    fn drain(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let mut answers = Vec::new();
            if let Some(c) = self.conns.get_mut(&name) {
                while let Some(effect) = c.ctrl.poll_effect() {
                    match effect {
                        Effect::Send(m) => {
                            if c.peer.send(m).is_err() {
                                c.ctrl.handle_close(now());
                            }
                        }
                        Effect::Changed(ch) => self.pres.handle_change(&name, &ch),
                        Effect::Event(ev) => self.pres.handle_event(&name, &ev),
                        Effect::Notice(no) => self.pres.handle_notice(&name, &no),
                        Effect::Answered(a) => answers.push(a),
                        Effect::Recovering(r) => {
                            tracing::debug!(server = %name, reason = ?r, "recovering")
                        }
                        Effect::RecoveryLimited { reason, until } => {
                            let wait = until.saturating_duration_since(now());
                            tracing::warn!(server = %name, ?reason, ?wait, "recovery deferred by its rate limit")
                        }
                    }
                }
                self.pres.update(c.ctrl.snapshot(), c.granted);
            }
            for a in answers {
                self.answered(&name, a.pending, &a.outcome);
            }
        }
        while let Some(item) = self.pres.poll_window(&self.agent_id) {
            if self.agent.notice(&item) {
                self.pres.stored(&self.agent_id, item.token);
            } else {
                self.pres.not_stored(&self.agent_id, item.token);
                break;
            }
        }
    }

    fn answered(&mut self, server: &str, pending: Pending, outcome: &Outcome) {
        let key = (server.to_owned(), pending);
        if let Some(w) = self.waiting.remove(&key) {
            let mut text = self.pres.answer_text(&w.plan, Ok(outcome));
            let carries = match outcome {
                Outcome::Result(v) => {
                    !matches!(w.plan, Plan::Act { .. } | Plan::Call { .. }) || can_carry(v)
                }
                _ => true,
            };
            let item = if carries {
                self.pres.take(&self.agent_id, server, pending, None)
            } else {
                self.pres.release(&self.agent_id, server, pending);
                None
            };
            if let Some(item) = &item {
                text = format!("{text}\n{}", item.text);
            }
            // The answer reaches the agent only if the caller still awaits it (H44, H45).
            let delivered = w.reply.send(text).is_ok();
            if let Some(item) = item {
                if delivered {
                    self.pres.stored(&self.agent_id, item.token);
                } else {
                    self.pres.not_stored(&self.agent_id, item.token);
                }
            }
            return;
        }
        for look in &mut self.looks {
            if let Some(at) = look.left.iter().position(|k| *k == key) {
                look.left.remove(at);
                if !matches!(outcome, Outcome::Result(_)) {
                    look.unreachable.push(server.to_owned());
                }
            }
        }
        let done: Vec<LookWait> = {
            let (done, rest) = std::mem::take(&mut self.looks)
                .into_iter()
                .partition(|l| l.left.is_empty());
            self.looks = rest;
            done
        };
        for l in done {
            let item = self.pres.look(&self.agent_id, &l.query, &l.unreachable);
            if l.reply.send(item.text.clone()).is_ok() {
                self.pres.stored(&self.agent_id, item.token);
            } else {
                self.pres.not_stored(&self.agent_id, item.token);
            }
        }
    }
}
