//! The commands [`Host`](super::Host) handles send the host task.

use mcpl_rpc::{Events, Peer};
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use super::agent::Agent;
use super::reply::Replier;
use super::status::HostStatus;
use crate::config::ControllerConfig;
use crate::names::ServerName;
use crate::presenter::{AgentId, LinkState, Presenter, Withheld};

/// Reads the presenter once, on the host task.
pub(super) type Inspect = Box<dyn FnOnce(&Presenter) + Send>;
/// Decides, on the host task, whether a call is made.
pub(super) type Gate = Box<dyn FnOnce(&Presenter) -> bool + Send>;
/// Reads the presenter after every turn that may have changed it.
pub(super) type Observer = Box<dyn FnMut(&Presenter) + Send>;

/// What a [`Host`](super::Host) handle asks of the host task.
pub(super) enum Command {
    Add {
        cfg: Box<ControllerConfig>,
        peer: Peer,
        events: Events,
        granted: bool,
        withheld: Vec<Withheld>,
        closed: oneshot::Sender<String>,
    },
    Remove(ServerName),
    Link(ServerName, LinkState),
    AddAgent(AgentId, Box<dyn Agent>),
    RemoveAgent(AgentId),
    Call(AgentId, String, Value, Replier),
    /// A call made only if its gate holds; otherwise it is declined.
    CallIf(AgentId, String, Value, Gate, Replier),
    Rebuild(oneshot::Sender<(bool, String)>),
    Inspect(Inspect),
    Observe(Observer),
    Status(oneshot::Sender<HostStatus>),
    Turns(oneshot::Sender<watch::Receiver<u64>>),
}

impl Command {
    /// A command that only reads: the turn serving it changes nothing a watcher shows.
    pub(super) fn reads_only(&self) -> bool {
        matches!(
            self,
            Command::Inspect(_) | Command::Status(_) | Command::Turns(_)
        )
    }
}
