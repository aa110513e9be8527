//! The handle to the host task: adding servers and agents, calls, the link state, and
//! inspection, each sent to the task as a [`Command`].

use std::time::Duration;

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::mcpl::{FeatureSetsUpdate, FeatureSetsUpdateParams};
use mcpl_rpc::{Events, Peer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::agent::Agent;
use super::answer::Answer;
use super::command::Command;
use super::connection::Connection;
use super::policy::HostPolicy;
use super::reply::{Asked, Replier};
use super::status::HostStatus;
use super::task;
use crate::config::ControllerConfig;
use crate::error::Error;
use crate::names::ServerName;
use crate::presenter::{AgentId, LinkState, Presenter, PresenterConfig, Withheld, needs_ungranted};

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
    AgentId::new("agent")
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
        tokio::spawn(task::run(cfg, policy, rx, progress_tx));
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
        let mut withheld = Vec::new();
        if let Some(manifest) = cfg.manifest.as_ref().filter(|_| grant) {
            withheld.extend(needs_ungranted(manifest, &["pushEvents"]));
        }
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
                Ok(receipt) => {
                    granted = grant && receipt.value.accepted;
                    if grant && !granted {
                        withheld = vec![no_policy(cfg.manifest.as_ref(), None)];
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %cfg.server, error = %e, "initial policy not acknowledged; no grant");
                    if grant {
                        withheld = vec![no_policy(cfg.manifest.as_ref(), Some(&e))];
                    }
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
            withheld,
            closed,
        })?;
        Ok(Connection { closed: rx })
    }

    /// Removes a server and forgets its toolset state (H77).
    pub fn remove_server(&self, server: &ServerName) -> Result<(), Error> {
        self.send(Command::Remove(server.clone()))
    }

    /// Reports where a server's connection stands (shown by look and in refusals; a lost
    /// and a regained connection are told once each).
    pub fn set_link(&self, server: &ServerName, state: LinkState) -> Result<(), Error> {
        self.send(Command::Link(server.clone(), state))
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
        let (reply, rx) = Replier::channel();
        self.send(Command::Call(agent.clone(), tool.to_owned(), args, reply))?;
        match rx.await {
            Ok(Asked::Answered(answer)) => Ok(answer),
            _ => Err(Error::Closed),
        }
    }

    /// [`ask`](Self::ask), made only if `gate` holds for the presenter when the host task
    /// takes the call (checked and called in one trip to the task); `Ok(None)` when it did
    /// not hold and nothing was sent.
    pub async fn ask_if(
        &self,
        agent: &AgentId,
        tool: &str,
        args: Value,
        gate: impl FnOnce(&Presenter) -> bool + Send + 'static,
    ) -> Result<Option<Answer>, Error> {
        let (reply, rx) = Replier::channel();
        let gate = Box::new(gate);
        self.send(Command::CallIf(
            agent.clone(),
            tool.to_owned(),
            args,
            gate,
            reply,
        ))?;
        match rx.await {
            Ok(Asked::Answered(answer)) => Ok(Some(answer)),
            Ok(Asked::Declined(_)) => Ok(None),
            Ok(Asked::Stopped) | Err(_) => Err(Error::Closed),
        }
    }

    /// [`ask_if`](Self::ask_if) without waiting: `then` takes what became of the call inside
    /// the host task, as soon as it is known (the answer, the arguments back if `gate` did
    /// not hold, or [`Asked::Stopped`]), and returns whether an answer reached the caller
    /// (false for one that could not be delivered: what rode with it stays owed, H45).
    /// `then` runs exactly once, also when the host task is gone already; it must not wait.
    pub fn ask_then(
        &self,
        agent: &AgentId,
        tool: &str,
        args: Value,
        gate: impl FnOnce(&Presenter) -> bool + Send + 'static,
        then: impl FnOnce(Asked) -> bool + Send + 'static,
    ) {
        let command = Command::CallIf(
            agent.clone(),
            tool.to_owned(),
            args,
            Box::new(gate),
            Replier::then(Box::new(then)),
        );
        // A task that is gone drops the command, and its replier tells `then` so.
        let _ = self.send(command);
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

    /// What the host is doing now: servers, revs, recovery, the list and its change count,
    /// the news each agent is owed. Read inside the host task; changes nothing.
    pub async fn status(&self) -> Result<HostStatus, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Status(reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// A counter that grows after every turn of the host task that may have changed what
    /// [`status`](Self::status) shows (a frame, a deadline, a command other than a read).
    /// Made on first use: a host nobody watches counts nothing.
    pub async fn turns(&self) -> Result<watch::Receiver<u64>, Error> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::Turns(reply))?;
        rx.await.map_err(|_| Error::Closed)
    }

    /// Waits until `ready` holds for the presenter, or `limit` passes; returns whether it
    /// held. `ready` is checked again after each turn that may have changed something (reads
    /// do not count), and not after the limit, however busy the host is.
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
                Ok(Ok(())) if Instant::now() < deadline => {}
                _ => return false,
            }
        }
    }

    fn send(&self, c: Command) -> Result<(), Error> {
        self.tx.send(c).map_err(|_| Error::Closed)
    }
}

/// Why a server that offers `pushEvents` got no grant: its error answer to the initial
/// policy, or (`None`) a receipt that did not accept it.
fn no_policy(manifest: Option<&Value>, e: Option<&mcpl_rpc::RpcError>) -> Withheld {
    let version = manifest
        .and_then(|m| m.get("version"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match e {
        Some(mcpl_rpc::RpcError::Remote { error, .. }) => Withheld::NoPolicy {
            version,
            code: Some(error.code),
            message: error.message.clone(),
        },
        None => Withheld::NoPolicy {
            version,
            code: None,
            message: "it answered `accepted: false`".to_owned(),
        },
        Some(other) => Withheld::NoPolicy {
            version,
            code: None,
            message: other.to_string(),
        },
    }
}
