//! The tokio driver: runs one [`Controller`] per server connection over `mcpl-rpc` peers,
//! feeds a [`Presenter`], and hands its output to the embedding agents.
//!
//! One task owns the presenter and every controller. It `select!`s over frames from all
//! connections (in each connection's read order, with the peer's sequence numbers), commands
//! from [`Host`] handles, and the earliest controller deadline; it reads the clock, calls
//! `handle_*`, and drains `poll_*`. Every RFC decision is in the cores.
//!
//! A connection that ends keeps its server's picture: pending commands settle as unconfirmed
//! (H82), look shows the last state known with the state the embedder reported
//! ([`Host::set_link`]), and the next [`Host::add_server`] for that server resumes from it
//! (H28). Agents come in two kinds: one with a window of its own gets notices as they come
//! ([`Agent::notice`]); one whose only window is its results (a plain MCP client) gets what
//! it is owed with its next answer, in read order, within the inline cap.

use std::collections::BTreeMap;
use std::time::Duration;

use mcpl_protocol::jsonrpc::{Message, Response};
use mcpl_protocol::mcp::Tool;
use mcpl_protocol::mcpl::{FeatureSetsUpdate, FeatureSetsUpdateParams};
use mcpl_rpc::{Event, Events, Peer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::controller::{Controller, Effect, Outcome, Pending, PushEvent, Snapshot};
use crate::presenter::{
    AgentId, LinkState, LookQuery, Plan, Presenter, PresenterConfig, Token, WindowItem, can_carry,
};
use crate::{ControllerConfig, Error};

/// The embedding agent: where notices go.
pub trait Agent: Send + 'static {
    /// Store `item` in the agent's window; return false if it could not be stored (the
    /// change then stays owed, H45).
    fn notice(&mut self, item: &WindowItem) -> bool;

    /// True for an agent whose only window is its results (a plain MCP client): notices
    /// are not written as they come but ride with its next answer, in read order.
    fn results_are_window(&self) -> bool {
        false
    }

    /// A server pushed an event; for agents that show pushes as they arrive (for example
    /// as log messages). Showing it here does not count as telling it.
    fn pushed(&mut self, _server: &str, _event: &PushEvent) {}
}

/// The default cap on what a result may carry beside its own text, in bytes (H84, H88).
pub const DEFAULT_INLINE_CAP: usize = 16_000;

/// The host's grant policy for the servers it connects, and its inline cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    /// Grant `pushEvents` (sent as the initial `featureSets/update`); notices need it (H47).
    pub grant_push_events: bool,
    /// How long `featureSets/update` may take.
    pub policy_timeout: Duration,
    /// The most bytes a result and the change appended to it may take (H84, H88); a change
    /// that does not fit is told as a notice instead. `None`: no cap.
    pub inline_cap: Option<usize>,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            grant_push_events: true,
            policy_timeout: Duration::from_secs(10),
            inline_cap: Some(DEFAULT_INLINE_CAP),
        }
    }
}

/// Marks a part of an answer whose marks were already committed.
const NO_TOKEN: Token = 0;

/// What the model reads for one of its tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The text: the outcome, then anything the answer carries.
    pub text: String,
    /// True when the call was refused, failed, or its outcome is unknown.
    pub is_error: bool,
    /// What the answer carries after the outcome (changes, news), empty when nothing; the
    /// end of [`text`](Self::text).
    pub news: String,
    /// The server's own tool result, for a call that was answered (an embedder may pass its
    /// content blocks on as they are and add [`news`](Self::news) as the last block, H83).
    pub result: Option<Value>,
}

/// A live connection added with [`Host::add_server`].
#[derive(Debug)]
pub struct Connection {
    closed: oneshot::Receiver<String>,
}

impl Connection {
    /// Waits until the connection ends (the peer closed, or the host task stopped); returns
    /// why.
    pub async fn closed(self) -> String {
        self.closed
            .await
            .unwrap_or_else(|_| "the host stopped".to_owned())
    }
}

type Inspect = Box<dyn FnOnce(&Presenter) + Send>;
type Observer = Box<dyn FnMut(&Presenter) + Send>;

enum Command {
    Add {
        cfg: Box<ControllerConfig>,
        peer: Peer,
        events: Events,
        granted: bool,
        closed: oneshot::Sender<String>,
    },
    Remove(String),
    Link(String, LinkState),
    AddAgent(AgentId, Box<dyn Agent>),
    RemoveAgent(AgentId),
    Call(AgentId, String, Value, oneshot::Sender<Answer>),
    Rebuild(oneshot::Sender<(bool, String)>),
    Inspect(Inspect),
    Observe(Observer),
}

/// A handle to the running host task. Cloning it is cheap; the task ends when every handle
/// is dropped.
#[derive(Clone, Debug)]
pub struct Host {
    tx: mpsc::UnboundedSender<Command>,
    policy: HostPolicy,
    progress: watch::Receiver<u64>,
}

/// The agent [`Host::spawn`] registers.
fn default_agent() -> AgentId {
    AgentId("agent".into())
}

impl Host {
    /// Starts the host task with one agent window (id `agent`).
    pub fn spawn(cfg: PresenterConfig, policy: HostPolicy, agent: impl Agent) -> Host {
        let host = Host::start(cfg, policy);
        let _ = host.add_agent(default_agent(), agent);
        host
    }

    /// Starts the host task with no agent; add them with [`add_agent`](Self::add_agent).
    pub fn start(cfg: PresenterConfig, policy: HostPolicy) -> Host {
        let (tx, rx) = mpsc::unbounded_channel();
        let (progress_tx, progress) = watch::channel(0);
        tokio::spawn(run(cfg, policy, rx, progress_tx));
        Host {
            tx,
            policy,
            progress,
        }
    }

    /// The policy the host runs with.
    pub fn policy(&self) -> HostPolicy {
        self.policy
    }

    /// Connects a server over an initialized peer: sends the initial policy
    /// (`featureSets/update`, granting `pushEvents` per [`HostPolicy`]) when the server
    /// offers MCPL, then starts its controller, which reads `tools/list` and `toolsets/list`
    /// (H28). A server connected before resumes from its last picture.
    pub async fn add_server(
        &self,
        mut cfg: ControllerConfig,
        peer: Peer,
        events: Events,
    ) -> Result<Connection, Error> {
        let offers_push = cfg
            .manifest
            .as_ref()
            .and_then(|m| m.get("pushEvents"))
            .and_then(Value::as_bool)
            == Some(true);
        let grant = self.policy.grant_push_events && offers_push;
        let mut granted = false;
        if cfg.manifest.is_some() {
            let params = if grant {
                FeatureSetsUpdateParams::granting(["pushEvents"])
            } else {
                FeatureSetsUpdateParams::default()
            };
            match peer
                .request::<FeatureSetsUpdate>(params, self.policy.policy_timeout)
                .await
            {
                Ok(receipt) => granted = grant && receipt.value.accepted,
                Err(e) => {
                    tracing::warn!(server = %cfg.server, error = %e, "initial policy not acknowledged; no grant");
                }
            }
        }
        cfg.push_events = granted;
        let (closed, rx) = oneshot::channel();
        self.send(Command::Add {
            cfg: Box::new(cfg),
            peer,
            events,
            granted,
            closed,
        })?;
        Ok(Connection { closed: rx })
    }

    /// Removes a server and forgets its toolset state (H77).
    pub fn remove_server(&self, server: &str) -> Result<(), Error> {
        self.send(Command::Remove(server.to_owned()))
    }

    /// Reports where a server's connection stands (shown by look and in refusals; a lost
    /// and a regained connection are told once each).
    pub fn set_link(&self, server: &str, state: LinkState) -> Result<(), Error> {
        self.send(Command::Link(server.to_owned(), state))
    }

    /// Registers an agent with its own window queue (for example one client session).
    pub fn add_agent(&self, id: AgentId, agent: impl Agent) -> Result<(), Error> {
        self.send(Command::AddAgent(id, Box::new(agent)))
    }

    /// Forgets an agent and what it was owed.
    pub fn remove_agent(&self, id: &AgentId) -> Result<(), Error> {
        self.send(Command::RemoveAgent(id.clone()))
    }

    /// The default agent calls `tool` (a meta-tool, a static tool's model-facing name, or a
    /// projected tool) with `args`; returns the text the model reads, with any change riding
    /// along.
    pub async fn call(&self, tool: &str, args: Value) -> Result<String, Error> {
        Ok(self.ask(&default_agent(), tool, args).await?.text)
    }

    /// Agent `agent` calls `tool` with `args`; returns what the model reads.
    pub async fn ask(&self, agent: &AgentId, tool: &str, args: Value) -> Result<Answer, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Call(agent.clone(), tool.to_owned(), args, reply))?;
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
        self.inspect(Presenter::needs_rebuild).await
    }

    /// The published tool list and its digest.
    pub async fn tool_list(&self) -> Result<(Vec<Tool>, String), Error> {
        self.inspect(|p| (p.tool_list().to_vec(), p.digest().to_owned()))
            .await
    }

    /// Reads the presenter (snapshots, link states, the list) inside the host task.
    pub async fn inspect<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Presenter) -> R + Send + 'static,
    ) -> Result<R, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Inspect(Box::new(move |p| {
            let _ = reply.send(f(p));
        })))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Runs `f` after every turn of the host task that applied a change (for meters, and to
    /// tell a client its tool list went stale).
    pub fn observe(&self, f: impl FnMut(&Presenter) + Send + 'static) -> Result<(), Error> {
        self.send(Command::Observe(Box::new(f)))
    }

    /// Waits until `ready` holds for the presenter, or `limit` passes; returns whether it
    /// held.
    pub async fn wait_until(
        &self,
        ready: impl Fn(&Presenter) -> bool + Send + Sync + Clone + 'static,
        limit: Duration,
    ) -> bool {
        let mut progress = self.progress.clone();
        let deadline = Instant::now() + limit;
        loop {
            progress.borrow_and_update();
            if self.inspect(ready.clone()).await.unwrap_or(false) {
                return true;
            }
            match tokio::time::timeout_at(deadline, progress.changed()).await {
                Ok(Ok(())) => {}
                _ => return false,
            }
        }
    }

    fn send(&self, c: Command) -> Result<(), Error> {
        self.tx.send(c).map_err(|_| Error::Closed)
    }
}

struct Conn {
    ctrl: Controller,
    peer: Peer,
    granted: bool,
    epoch: u64,
    closed: Option<oneshot::Sender<String>>,
}

/// A model call waiting for its answer.
struct Waiting {
    agent: AgentId,
    plan: Plan,
    reply: oneshot::Sender<Answer>,
}

/// A look waiting for its servers' re-reads (H62).
struct LookWait {
    agent: AgentId,
    left: Vec<(String, Pending)>,
    unreachable: Vec<String>,
    query: LookQuery,
    reply: oneshot::Sender<Answer>,
}

/// A frame from a connection, or its end (`None`).
type Frame = (String, u64, Option<Event>);

struct Task {
    pres: Presenter,
    policy: HostPolicy,
    agents: BTreeMap<AgentId, Box<dyn Agent>>,
    conns: BTreeMap<String, Conn>,
    /// The last picture of each server whose connection ended, resumed on reconnect.
    kept: BTreeMap<String, Snapshot>,
    waiting: BTreeMap<(String, Pending), Waiting>,
    looks: Vec<LookWait>,
    observers: Vec<Observer>,
    inbox: mpsc::UnboundedSender<Frame>,
    next_epoch: u64,
    /// Each server's snapshot version when last drained; a new one runs the observers.
    versions: BTreeMap<String, u64>,
    changed: bool,
}

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

async fn run(
    cfg: PresenterConfig,
    policy: HostPolicy,
    mut rx: mpsc::UnboundedReceiver<Command>,
    progress: watch::Sender<u64>,
) {
    let (inbox, mut frames) = mpsc::unbounded_channel();
    let mut t = Task {
        pres: Presenter::new(cfg),
        policy,
        agents: BTreeMap::new(),
        conns: BTreeMap::new(),
        kept: BTreeMap::new(),
        waiting: BTreeMap::new(),
        looks: Vec::new(),
        observers: Vec::new(),
        inbox,
        next_epoch: 0,
        versions: BTreeMap::new(),
        changed: false,
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
            Some((server, epoch, ev)) = frames.recv() => t.frame(&server, epoch, ev),
            () = sleep => {
                let n = now();
                for c in t.conns.values_mut() {
                    c.ctrl.handle_timeout(n);
                }
            }
        }
        t.drain();
        progress.send_modify(|n| *n += 1);
    }
    for (_, c) in std::mem::take(&mut t.conns) {
        c.peer.close().await;
    }
}

impl Task {
    fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Add {
                cfg,
                peer,
                mut events,
                granted,
                closed,
            } => {
                let server = cfg.server.clone();
                let ctrl = Controller::resume(*cfg, now(), self.kept.remove(&server));
                self.next_epoch += 1;
                let epoch = self.next_epoch;
                let inbox = self.inbox.clone();
                let name = server.clone();
                tokio::spawn(async move {
                    while let Some(ev) = events.recv().await {
                        let end = matches!(ev, Event::Closed { .. });
                        if inbox.send((name.clone(), epoch, Some(ev))).is_err() || end {
                            return;
                        }
                    }
                    let _ = inbox.send((name, epoch, None));
                });
                if let Some(old) = self.conns.insert(
                    server.clone(),
                    Conn {
                        ctrl,
                        peer,
                        granted,
                        epoch,
                        closed: Some(closed),
                    },
                ) {
                    tokio::spawn(async move { old.peer.close().await });
                }
            }
            Command::Remove(server) => {
                if let Some(c) = self.conns.remove(&server) {
                    tokio::spawn(async move { c.peer.close().await });
                }
                self.kept.remove(&server);
                self.pres.remove_server(&server);
                self.waiting.retain(|(s, _), _| *s != server);
            }
            Command::Link(server, state) => self.pres.set_link(&server, state),
            Command::AddAgent(id, agent) => {
                self.pres.add_agent(id.clone());
                self.agents.insert(id, agent);
            }
            Command::RemoveAgent(id) => {
                self.pres.remove_agent(&id);
                self.agents.remove(&id);
            }
            Command::Call(agent, tool, args, reply) => self.call(agent, &tool, &args, reply),
            Command::Rebuild(reply) => {
                let changed = self.pres.rebuild();
                let _ = reply.send((changed, self.pres.digest().to_owned()));
            }
            Command::Inspect(f) => f(&self.pres),
            Command::Observe(f) => self.observers.push(f),
        }
    }

    fn call(&mut self, agent: AgentId, tool: &str, args: &Value, reply: oneshot::Sender<Answer>) {
        let plan = match self.pres.plan(tool, args) {
            Ok(p) => p,
            Err(refusal) => {
                self.reply(&agent, reply, refusal.to_string(), true, None);
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
                    agent,
                    left,
                    unreachable,
                    query: query.clone(),
                    reply,
                });
                self.finish_looks();
                return;
            }
            Plan::OpenGroup { server, group } | Plan::CloseGroup { server, group } => {
                let open = matches!(plan, Plan::OpenGroup { .. });
                let r = match self.conns.get_mut(server) {
                    Some(c) => c.ctrl.set_group(group, open),
                    None => Err(Error::Closed),
                };
                let (text, failed) = match r {
                    Ok(()) => (
                        self.pres
                            .answer_text(&plan, Ok(&Outcome::Result(json!({})))),
                        false,
                    ),
                    Err(e) => (self.pres.answer_text(&plan, Err(&e)), true),
                };
                self.reply(&agent, reply, text, failed, None);
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
                self.pres.register_taker(&agent, &server, pending);
                self.waiting
                    .insert((server, pending), Waiting { agent, plan, reply });
            }
            Err(e) => {
                let text = self.pres.answer_text(&plan, Err(&e));
                self.reply(&agent, reply, text, true, None);
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

    fn frame(&mut self, server: &str, epoch: u64, ev: Option<Event>) {
        let Some(c) = self.conns.get_mut(server).filter(|c| c.epoch == epoch) else {
            return;
        };
        let n = now();
        let ev = match ev {
            None => return self.end(server, "connection closed".to_owned()),
            Some(Event::Closed { reason }) => {
                return self.end(
                    server,
                    reason.unwrap_or_else(|| "connection closed".to_owned()),
                );
            }
            Some(ev) => ev,
        };
        let seq = ev.seq();
        match ev {
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

    /// A connection ended: its pending commands settle as unconfirmed (H82) and its picture
    /// is kept for the next connection and for look.
    fn end(&mut self, server: &str, reason: String) {
        let Some(mut c) = self.conns.remove(server) else {
            return;
        };
        c.ctrl.handle_close(now());
        let answers = self.drain_conn(server, &mut c);
        self.kept
            .insert(server.to_owned(), c.ctrl.snapshot().clone());
        if let Some(tx) = c.closed.take() {
            let _ = tx.send(reason);
        }
        for a in answers {
            self.answered(server, a.pending, &a.outcome);
        }
    }

    /// Drains one controller's effects in order; returns the answers to settle.
    fn drain_conn(&mut self, name: &str, c: &mut Conn) -> Vec<crate::controller::Answer> {
        let mut answers = Vec::new();
        let version = c.ctrl.snapshot().version();
        if self.versions.insert(name.to_owned(), version) != Some(version) {
            self.changed = true;
        }
        while let Some(effect) = c.ctrl.poll_effect() {
            match effect {
                Effect::Send(m) => {
                    if c.peer.send(m).is_err() {
                        c.ctrl.handle_close(now());
                    }
                }
                Effect::Changed(ch) => {
                    self.changed = true;
                    self.pres.handle_change(name, &ch);
                }
                Effect::Event(ev) => {
                    for a in self.agents.values_mut() {
                        a.pushed(name, &ev);
                    }
                    self.pres.handle_event(name, &ev);
                }
                Effect::Notice(no) => self.pres.handle_notice(name, &no),
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
        if self.versions.get(name) != Some(&c.ctrl.snapshot().version()) {
            self.versions
                .insert(name.to_owned(), c.ctrl.snapshot().version());
            self.changed = true;
        }
        answers
    }

    /// Drains every controller's effects in order, then tells the agents what is owed.
    fn drain(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let Some(mut c) = self.conns.remove(&name) else {
                continue;
            };
            let answers = self.drain_conn(&name, &mut c);
            self.conns.insert(name.clone(), c);
            for a in answers {
                self.answered(&name, a.pending, &a.outcome);
            }
        }
        if std::mem::take(&mut self.changed) {
            for f in &mut self.observers {
                f(&self.pres);
            }
        }
        for (id, agent) in &mut self.agents {
            if agent.results_are_window() {
                continue;
            }
            while let Some(item) = self.pres.poll_window(id) {
                if agent.notice(&item) {
                    self.pres.stored(id, item.token);
                } else {
                    self.pres.not_stored(id, item.token);
                    break;
                }
            }
        }
    }

    fn inline(&self, agent: &AgentId) -> bool {
        self.agents
            .get(agent)
            .is_some_and(|a| a.results_are_window())
    }

    /// Owed notices for an agent whose results are its window, in read order, while they fit
    /// in `room` bytes; stops at the first that does not (it waits for the next answer).
    ///
    /// Each counts as stored as soon as it is taken into the answer: the answer is the
    /// agent's window, and the next notice is only handed out once the one before it is
    /// stored (H46). An answer that then cannot be delivered means the client is gone.
    fn owed_text(&mut self, agent: &AgentId, room: &mut usize, out: &mut Vec<(Token, String)>) {
        while let Some(item) = self.pres.poll_window(agent) {
            if item.text.len() + 1 > *room {
                self.pres.not_stored(agent, item.token);
                *room = 0;
                return;
            }
            *room -= item.text.len() + 1;
            self.pres.stored(agent, item.token);
            out.push((NO_TOKEN, item.text));
        }
    }

    /// Answers an agent's call with `text`; an agent whose results are its window also gets
    /// what it is owed (unless `carries` is `Some(false)`: the result must read as it would
    /// without RFC-014, H85, H86).
    fn reply(
        &mut self,
        agent: &AgentId,
        reply: oneshot::Sender<Answer>,
        text: String,
        is_error: bool,
        carries: Option<bool>,
    ) {
        let mut parts = Vec::new();
        if self.inline(agent) && carries != Some(false) {
            let mut room = self.room(&text);
            self.owed_text(agent, &mut room, &mut parts);
        }
        self.deliver(agent, reply, text, is_error, parts, None);
    }

    fn room(&self, text: &str) -> usize {
        self.policy
            .inline_cap
            .map_or(usize::MAX, |cap| cap.saturating_sub(text.len()))
    }

    /// Sends the answer with the parts appended; their marks commit only if it reached the
    /// caller (H44, H45).
    fn deliver(
        &mut self,
        agent: &AgentId,
        reply: oneshot::Sender<Answer>,
        text: String,
        is_error: bool,
        parts: Vec<(Token, String)>,
        result: Option<Value>,
    ) {
        let news = parts
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(_, p)| p.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let text = if news.is_empty() {
            text
        } else {
            format!("{text}\n{news}")
        };
        let answer = Answer {
            text,
            is_error,
            news,
            result,
        };
        let delivered = reply.send(answer).is_ok();
        for (token, _) in parts.into_iter().filter(|(t, _)| *t != NO_TOKEN) {
            if delivered {
                self.pres.stored(agent, token);
            } else {
                self.pres.not_stored(agent, token);
            }
        }
    }

    fn answered(&mut self, server: &str, pending: Pending, outcome: &Outcome) {
        let key = (server.to_owned(), pending);
        if let Some(w) = self.waiting.remove(&key) {
            self.answer_call(server, pending, outcome, w);
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
        self.finish_looks();
    }

    fn answer_call(&mut self, server: &str, pending: Pending, outcome: &Outcome, w: Waiting) {
        let Waiting { agent, plan, reply } = w;
        let text = self.pres.answer_text(&plan, Ok(outcome));
        let is_error = match outcome {
            Outcome::Result(v) => v.get("isError") == Some(&Value::Bool(true)),
            _ => true,
        };
        let carries = match outcome {
            Outcome::Result(v) => {
                !matches!(plan, Plan::Act { .. } | Plan::Call { .. }) || can_carry(v)
            }
            _ => true,
        };
        let result = match (outcome, &plan) {
            (Outcome::Result(v), Plan::Act { .. } | Plan::Call { .. }) => Some(v.clone()),
            _ => None,
        };
        let inline = self.inline(&agent);
        let mut room = self.room(&text);
        let mut parts = Vec::new();
        if !carries {
            self.pres.release(&agent, server, pending);
            return self.deliver(&agent, reply, text, is_error, parts, result);
        }
        // In read order: what was owed before this result's change, the change (H83, H84),
        // then what came after.
        if inline {
            self.owed_text(&agent, &mut room, &mut parts);
        }
        let claimed = self.pres.claims(&agent, server, pending);
        let owed_before = self.pres.owed(&agent);
        match self.pres.take(&agent, server, pending, Some(room)) {
            Some(item) => {
                room = room.saturating_sub(item.text.len() + 1);
                if inline {
                    self.pres.stored(&agent, item.token);
                    parts.push((NO_TOKEN, item.text));
                    self.owed_text(&agent, &mut room, &mut parts);
                } else {
                    parts.push((item.token, item.text));
                }
            }
            // Did not fit (H84) or nothing to tell: the rest waits for the next answer.
            None if claimed && self.pres.owed(&agent) == owed_before => {}
            None => {
                if inline {
                    self.owed_text(&agent, &mut room, &mut parts);
                }
            }
        }
        self.deliver(&agent, reply, text, is_error, parts, result);
    }

    fn finish_looks(&mut self) {
        let done: Vec<LookWait> = {
            let (done, rest) = std::mem::take(&mut self.looks)
                .into_iter()
                .partition(|l| l.left.is_empty());
            self.looks = rest;
            done
        };
        for l in done {
            let item = self.pres.look(&l.agent, &l.query, &l.unreachable);
            // The look's own text leads. For an agent whose results are its window, what the
            // look restated counts as shown before the news after it is rendered, so the
            // news does not repeat it (H51).
            let mut parts = Vec::new();
            if self.inline(&l.agent) {
                self.pres.stored(&l.agent, item.token);
            } else {
                parts.push((item.token, String::new()));
            }
            if self.inline(&l.agent) {
                // Look is how such an agent asks for its news: it carries all of it (the
                // inline cap guards tool results, H84; here nothing is cut, H88).
                let mut room = usize::MAX;
                self.owed_text(&l.agent, &mut room, &mut parts);
            }
            self.deliver(&l.agent, l.reply, item.text, false, parts, None);
        }
    }
}
