//! The host task: one loop owning the presenter and every controller. It feeds frames,
//! commands and deadlines to the cores and drains their effects; `answers` words what the
//! agents get back.

use std::collections::BTreeMap;
use std::future::Future;
use std::task::Poll;

use mcpl_rpc::{Event, Events, Peer};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::agent::Agent;
use super::command::{Command, Observer};
use super::policy::HostPolicy;
use super::reply::{Asked, Replier};
use crate::controller::{CallRequest, Controller, Effect, Outcome, Pending, Snapshot};
use crate::error::Error;
use crate::names::ServerName;
use crate::presenter::{AgentId, LinkState, LookQuery, Plan, Presenter, PresenterConfig};

pub(super) struct Conn {
    pub(super) ctrl: Controller,
    pub(super) peer: Peer,
    /// The connection's events, which this task polls itself (no task in between).
    pub(super) events: Events,
    pub(super) granted: bool,
    pub(super) epoch: u64,
    pub(super) closed: Option<oneshot::Sender<String>>,
}

/// A model call waiting for its answer.
pub(super) struct Waiting {
    pub(super) agent: AgentId,
    pub(super) plan: Plan,
    pub(super) reply: Replier,
}

/// A look waiting for its servers' re-reads (H62).
pub(super) struct LookWait {
    pub(super) agent: AgentId,
    pub(super) left: Vec<(ServerName, Pending)>,
    pub(super) unreachable: Vec<ServerName>,
    pub(super) query: LookQuery,
    pub(super) reply: Replier,
}

/// An event from a connection (its server and epoch), or its end (`None`).
type Frame = (ServerName, u64, Option<Event>);

pub(super) struct Task {
    pub(super) pres: Presenter,
    pub(super) policy: HostPolicy,
    pub(super) agents: BTreeMap<AgentId, Box<dyn Agent>>,
    pub(super) conns: BTreeMap<ServerName, Conn>,
    /// The last picture of each server whose connection ended, resumed on reconnect.
    pub(super) kept: BTreeMap<ServerName, Snapshot>,
    pub(super) waiting: BTreeMap<(ServerName, Pending), Waiting>,
    pub(super) looks: Vec<LookWait>,
    pub(super) observers: Vec<Observer>,
    pub(super) next_epoch: u64,
    /// Each server's snapshot version when last drained; a new one runs the observers.
    pub(super) versions: BTreeMap<ServerName, u64>,
    pub(super) changed: bool,
    /// Counts turns that may have changed the status, once someone asked to watch.
    pub(super) turns: Option<watch::Sender<u64>>,
}

pub(super) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

pub(super) async fn run(
    cfg: PresenterConfig,
    policy: HostPolicy,
    mut rx: mpsc::UnboundedReceiver<Command>,
    progress: watch::Sender<u64>,
) {
    let mut t = Task {
        pres: Presenter::new(cfg),
        policy,
        agents: BTreeMap::new(),
        conns: BTreeMap::new(),
        kept: BTreeMap::new(),
        waiting: BTreeMap::new(),
        looks: Vec::new(),
        observers: Vec::new(),
        next_epoch: 0,
        versions: BTreeMap::new(),
        changed: false,
        turns: None,
    };
    let mut turn: usize = 0;
    loop {
        turn = turn.wrapping_add(1);
        let deadline = t.conns.values().filter_map(|c| c.ctrl.poll_timeout()).min();
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(Instant::from_std(d)).await,
                None => std::future::pending().await,
            }
        };
        let mut read_only = false;
        tokio::select! {
            cmd = rx.recv() => match cmd {
                Some(cmd) => {
                    read_only = cmd.reads_only();
                    t.command(cmd);
                }
                None => break,
            },
            (server, epoch, ev) = next_event(&mut t.conns, turn) => t.frame(&server, epoch, ev),
            () = sleep => {
                let n = now();
                for c in t.conns.values_mut() {
                    c.ctrl.handle_timeout(n);
                }
            }
        }
        t.drain();
        if read_only {
            // A read changes nothing: counting it would wake `wait_until` for its own
            // inspection, again and again, so it would never wait out its limit.
            continue;
        }
        progress.send_modify(|n| *n += 1);
        if let Some(turns) = t.turns.as_ref() {
            turns.send_modify(|n| *n += 1);
        }
    }
    for (_, c) in std::mem::take(&mut t.conns) {
        c.peer.close().await;
    }
}

/// The next event of any connection, each asked in turn from the `start`th so that a busy
/// one does not keep the others waiting. Never ready without connections.
fn next_event(
    conns: &mut BTreeMap<ServerName, Conn>,
    start: usize,
) -> impl Future<Output = Frame> + '_ {
    std::future::poll_fn(move |cx| {
        let skip = start % conns.len().max(1);
        let (later, earlier) = (conns.iter_mut().skip(skip), skip);
        for (name, c) in later {
            if let Poll::Ready(ev) = c.events.poll_recv(cx) {
                return Poll::Ready((name.clone(), c.epoch, ev));
            }
        }
        for (name, c) in conns.iter_mut().take(earlier) {
            if let Poll::Ready(ev) = c.events.poll_recv(cx) {
                return Poll::Ready((name.clone(), c.epoch, ev));
            }
        }
        Poll::Pending
    })
}

impl Task {
    fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Add {
                cfg,
                peer,
                events,
                granted,
                withheld,
                closed,
            } => {
                let server = cfg.server.clone();
                self.pres.set_withheld(&server, withheld);
                let ctrl = Controller::resume(*cfg, now(), self.kept.remove(&server));
                self.next_epoch += 1;
                let epoch = self.next_epoch;
                if let Some(old) = self.conns.insert(
                    server.clone(),
                    Conn {
                        ctrl,
                        peer,
                        events,
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
            Command::Call(agent, tool, args, reply) => self.call(agent, &tool, args, reply),
            Command::CallIf(agent, tool, args, gate, reply) => {
                if gate(&self.pres) {
                    self.call(agent, &tool, args, reply);
                } else {
                    reply.send(Asked::Declined(args));
                }
            }
            Command::Rebuild(reply) => {
                let changed = self.pres.rebuild();
                let _ = reply.send((changed, self.pres.digest().to_owned()));
            }
            Command::Inspect(f) => f(&self.pres),
            Command::Observe(f) => self.observers.push(f),
            Command::Status(reply) => {
                let _ = reply.send(self.status());
            }
            Command::Turns(reply) => {
                let turns = self.turns.get_or_insert_with(|| watch::channel(0).0);
                let _ = reply.send(turns.subscribe());
            }
        }
    }

    fn call(&mut self, agent: AgentId, tool: &str, args: Value, reply: Replier) {
        let plan = match self.pres.plan(tool, args) {
            Ok(p) => p,
            Err(refusal) => {
                self.reply(&agent, reply, refusal.to_string(), true, None);
                return;
            }
        };
        let mut plan = match plan {
            Plan::ActOpening { server, group, req } => {
                let r = match self.conns.get_mut(server.as_str()) {
                    Some(c) => c.ctrl.set_group(&group, true),
                    None => Err(Error::Closed),
                };
                if let Err(e) = r {
                    let text = format!(
                        "not done: `{group}` on `{server}` could not be opened ({e}); the call was never sent"
                    );
                    self.reply(&agent, reply, text, true, None);
                    return;
                }
                Plan::Act { server, req }
            }
            p => p,
        };
        let n = now();
        // A call's arguments go to the server as they are, not copied: the plan kept for the
        // answer keeps the tool and the instance, which is all its words use.
        let call_args = match &mut plan {
            Plan::Act { req, .. } | Plan::Call { req, .. } | Plan::ActOpening { req, .. } => {
                std::mem::take(&mut req.args)
            }
            _ => Map::new(),
        };
        let (server, sent) = match &plan {
            Plan::Look { servers, query } => {
                let mut left = Vec::new();
                let mut unreachable = Vec::new();
                for s in servers {
                    let conn = self.conns.get_mut(s);
                    if conn
                        .as_ref()
                        .is_some_and(|c| c.ctrl.snapshot().host_grouped())
                    {
                        continue; // host-side toolsets: the host's state is current
                    }
                    match conn.map(|c| c.ctrl.refresh(n)) {
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
            Plan::Open { server, req } => (
                server.clone(),
                self.with(server, |c| c.open(n, req.clone())),
            ),
            Plan::Close { server, req } => (
                server.clone(),
                self.with(server, |c| c.close(n, req.clone())),
            ),
            Plan::Act { server, req }
            | Plan::Call { server, req }
            | Plan::ActOpening { server, req, .. } => {
                let req = CallRequest {
                    tool: req.tool.clone(),
                    instance: req.instance.clone(),
                    args: call_args,
                };
                (server.clone(), self.with(server, |c| c.call(n, req)))
            }
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
        server: &ServerName,
        f: impl FnOnce(&mut Controller) -> Result<Pending, Error>,
    ) -> Result<Pending, Error> {
        match self.conns.get_mut(server) {
            Some(c) => f(&mut c.ctrl),
            None => Err(Error::Closed),
        }
    }

    fn frame(&mut self, server: &ServerName, epoch: u64, ev: Option<Event>) {
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
        // The one seam between mcpl-rpc and the controller: every event that carries a
        // message (a late response included, H14) goes in through `Event::into_message`.
        match ev {
            Event::BadFrame { error, .. } => c.ctrl.handle_undecodable(n, error.id().cloned()),
            other => {
                if let Some(msg) = other.into_message() {
                    c.ctrl.handle_message(n, seq, msg);
                }
            }
        }
    }

    /// A connection ended: its pending commands settle as unconfirmed (H82) and its picture
    /// is kept for the next connection and for look.
    fn end(&mut self, server: &ServerName, reason: String) {
        let Some(mut c) = self.conns.remove(server) else {
            return;
        };
        // The embedder hears of the end after this task does; until it reports the link's
        // state, a call refused for the missing connection says the link is down, not up.
        if self.pres.link(server) == Some(&LinkState::Up) {
            let down = LinkState::Down {
                attempt: 1,
                error: reason.clone(),
                retry_in: std::time::Duration::ZERO,
            };
            self.pres.set_link(server, down);
        }
        c.ctrl.handle_close(now());
        let answers = self.drain_conn(server, &mut c);
        self.kept
            .insert(server.to_owned(), c.ctrl.snapshot().clone());
        if let Some(tx) = c.closed.take() {
            let _ = tx.send(reason);
        }
        for a in answers {
            self.answered(server, a.pending, a.outcome);
        }
    }

    /// Drains one controller's effects in order; returns the answers to settle.
    fn drain_conn(&mut self, name: &ServerName, c: &mut Conn) -> Vec<crate::controller::Answer> {
        let mut answers = Vec::new();
        if self.note_version(name, c.ctrl.snapshot().version()) {
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
                    let told = self
                        .agents
                        .iter_mut()
                        .filter_map(|(id, a)| a.pushed(name, &ev).then(|| id.clone()))
                        .collect();
                    self.pres.handle_event_told(name, &ev, &told);
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
        self.pres.update_shared(c.ctrl.shared_snapshot(), c.granted);
        if self.note_version(name, c.ctrl.snapshot().version()) {
            self.changed = true;
        }
        answers
    }

    /// Records `server`'s snapshot version; true when it differs from the one recorded.
    fn note_version(&mut self, server: &ServerName, version: u64) -> bool {
        match self.versions.get_mut(server) {
            Some(seen) if *seen == version => false,
            Some(seen) => {
                *seen = version;
                true
            }
            None => {
                self.versions.insert(server.clone(), version);
                true
            }
        }
    }

    /// Drains every controller's effects in order, then tells the agents what is owed.
    fn drain(&mut self) {
        // The connections are set aside while they are drained (every turn, so without
        // copying names or rebuilding the map): draining and answering use the rest of the
        // task, and none of it reads the connections.
        let mut conns = std::mem::take(&mut self.conns);
        for (name, c) in conns.iter_mut() {
            let answers = self.drain_conn(name, c);
            for a in answers {
                self.answered(name, a.pending, a.outcome);
            }
        }
        debug_assert!(
            self.conns.is_empty(),
            "a connection was added while draining"
        );
        self.conns = conns;
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
}
