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

use std::time::Duration;

use mcpl_rpc::{Events, Peer};
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::ControllerConfig;
use crate::controller::PushEvent;
use crate::names::ServerName;
use crate::presenter::{AgentId, LinkState, Presenter, WindowItem, Withheld};

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

    /// A server pushed an event; for agents that show pushes as they arrive. Return true
    /// when this told the agent the event (an MCPL client's own `push/event`): it is then not
    /// told again as news. Showing it where the model may not read it (a log message) does
    /// not count: return false.
    fn pushed(&mut self, _server: &ServerName, _event: &PushEvent) -> bool {
        false
    }
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

/// What became of a call made with [`Host::ask_if`] or [`Host::ask_then`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The call was made and answered.
    Answered(Answer),
    /// The gate did not hold when the host task took the call: nothing was sent; the
    /// arguments come back.
    Declined(Value),
    /// The host task stopped before it answered.
    Stopped,
}

/// A callback that takes a call's fate inside the host task; it returns whether an answer
/// reached the caller (what rode with it is then told, H44, H45).
type Then = Box<dyn FnOnce(Asked) -> bool + Send>;

/// Where a call's answer goes: a waiting caller, or a callback run in the host task (no
/// trip through another task). One that is dropped unanswered (the host task stopped)
/// tells its callback [`Asked::Stopped`].
pub(crate) struct Replier(Option<ReplyTo>);

enum ReplyTo {
    Channel(oneshot::Sender<Asked>),
    Then(Then),
}

impl Replier {
    fn channel() -> (Replier, oneshot::Receiver<Asked>) {
        let (tx, rx) = oneshot::channel();
        (Replier(Some(ReplyTo::Channel(tx))), rx)
    }

    fn then(f: Then) -> Replier {
        Replier(Some(ReplyTo::Then(f)))
    }

    /// Hands `asked` over; true when an answer reached its caller.
    pub(crate) fn send(mut self, asked: Asked) -> bool {
        match self.0.take() {
            Some(ReplyTo::Channel(tx)) => tx.send(asked).is_ok(),
            Some(ReplyTo::Then(f)) => f(asked),
            None => false,
        }
    }
}

impl Drop for Replier {
    fn drop(&mut self) {
        if let Some(ReplyTo::Then(f)) = self.0.take() {
            f(Asked::Stopped);
        }
    }
}

type Inspect = Box<dyn FnOnce(&Presenter) + Send>;
type Gate = Box<dyn FnOnce(&Presenter) -> bool + Send>;
type Observer = Box<dyn FnMut(&Presenter) + Send>;

enum Command {
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
    fn reads_only(&self) -> bool {
        matches!(
            self,
            Command::Inspect(_) | Command::Status(_) | Command::Turns(_)
        )
    }
}

mod answers;
mod host;
mod status;
mod status_read;
mod task;

pub use host::Host;
pub use status::{AgentStatus, HostStatus, OpenStatus, ServerStatus};

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A call's callback always hears once: a replier the host task drops unanswered (the
    /// task ended) tells it the host stopped, and one that answered does not tell it again.
    #[test]
    fn a_replier_tells_its_callback_once_and_stopped_when_dropped_unanswered() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let then = |heard: Arc<Mutex<Vec<Asked>>>| {
            Box::new(move |asked| {
                heard.lock().expect("lock").push(asked);
                true
            }) as Then
        };
        drop(Replier::then(then(heard.clone())));
        assert!(Replier::then(then(heard.clone())).send(Asked::Declined(Value::Null)));
        let (channel, rx) = Replier::channel();
        drop(channel);
        assert!(
            rx.blocking_recv().is_err(),
            "a waiting caller just sees the end"
        );
        assert_eq!(
            *heard.lock().expect("lock"),
            [Asked::Stopped, Asked::Declined(Value::Null)]
        );
    }
}
