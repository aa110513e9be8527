//! The session's data (a leaf under the session's code): the effects it hands out, what
//! the host said about itself, why it waits for app code, the inputs a step keeps so it
//! can run again, and what a call's route and an open's start came to ([`Route`], [`Begin`],
//! here so that the session's methods returning them name no module that names the session).

use crate::context::{AfterCommit, Call, Outcome};
use crate::principal::{CallId, Principal};
use crate::store::{OpenKey, WriteSet};
use crate::update::{PrincipalChange, Update};
use mcpl_protocol::jsonrpc::{Message, RequestId};
use mcpl_protocol::rfc014::{InstanceName, Rev, ToolsetName};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// What the session asks its driver to do. Drain with [`Session::poll_effect`](super::Session::poll_effect) and handle
/// each in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Effect {
    /// Read the principal's state from the store and hand it to
    /// [`Session::handle_state`](super::Session::handle_state). Asked once, first; until it is answered, inputs wait.
    Load(Principal),
    /// Store this change of the principal's state if the store still holds the version it
    /// was computed from, then answer with [`Session::handle_written`](super::Session::handle_written) (stored),
    /// [`Session::handle_conflict`](super::Session::handle_conflict) (another writer got in first: the step runs again on the
    /// state given) or [`Session::handle_store_error`](super::Session::handle_store_error) (unreachable). Effects of the step
    /// that asked for it are held back until then; inputs fed meanwhile wait.
    Write(WriteSet),
    /// Commit `update` to another principal's state (app code's
    /// [`Context::update_for`](crate::Context::update_for)) with
    /// [`Server::apply_to`](crate::Server::apply_to) on its stored state, store it, and hand the change to that
    /// principal's sessions.
    Apply(Principal, Update),
    /// Write this message to the host. Write `Send`s in the order they were polled and never
    /// drop one: a hint-carrying message took its rev when it was queued, so writing in poll
    /// order is what makes "allocate and write" one step (§6.1).
    Send(Message),
    /// Run app code, then hand its [`Outcome`] to [`Session::handle_call_done`](super::Session::handle_call_done).
    Call(Box<Call>),
    /// Hand this change to every session of [`PrincipalChange::principal`] (this one
    /// included; it skips its own) through [`Session::handle_principal_change`](super::Session::handle_principal_change).
    Publish(PrincipalChange),
    /// Close the connection, after writing every `Send` polled before it.
    Close,
    /// App call `call` is finished: its answer (or, if the host cancelled it, the
    /// `tools/hints` carrying its changes) was queued as a `Send` before this effect, and its
    /// changes were published. Run `hooks` (registered with [`Context::after_commit`](crate::Context::after_commit)) after
    /// writing the `Send`s polled before it. Queued by
    /// [`handle_call_done`](super::Session::handle_call_done) for every call it accepts, last.
    Committed {
        /// The finished call.
        call: CallId,
        /// What app code asked to run now.
        hooks: AfterCommit,
    },
}

/// What the host said about itself in `initialize` and `featureSets/update`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Host {
    pub(super) initialized: bool,
    pub(super) tool_hints: bool,
    pub(super) push_advertised: bool,
    pub(super) push_granted: bool,
}

/// Why a session is waiting for app code.
#[derive(Debug, Clone)]
pub(super) enum Pending {
    /// A `tools/call`.
    Tool { request: RequestId },
    /// An open: `toolsets/open`, `toolset_open`, or an implicit open before a call (§6.3).
    Open {
        request: RequestId,
        key: OpenKey,
        compat: bool,
        then: Option<Box<PlannedCall>>,
    },
    /// A close: `toolsets/close` or `toolset_close`.
    Close {
        request: RequestId,
        key: OpenKey,
        compat: bool,
    },
    /// Cleanup of a per-connection principal's toolsets at disconnect (§5.6).
    Disconnect,
}

/// A tool call that passed routing, waiting to be gated and run.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCall {
    pub(super) request: RequestId,
    pub(super) tool: String,
    pub(super) args: Map<String, Value>,
    pub(super) key: Option<OpenKey>,
}

/// One input, kept so that its step can run again.
#[derive(Debug)]
pub(super) enum Input {
    Message(Instant, Message),
    CallDone(Instant, CallId, Box<Outcome>),
    /// Shared by every session the change was handed to: keeping it costs a count.
    Change(Instant, Arc<PrincipalChange>),
    Catalog(Instant),
    Timeout(Instant),
    Disconnect(Instant),
}

impl Input {
    /// A copy for running the step again (an outcome's hooks stay with the first run).
    pub(super) fn duplicate(&self) -> Input {
        match self {
            Input::Message(t, m) => Input::Message(*t, m.clone()),
            Input::CallDone(t, c, o) => Input::CallDone(*t, *c, Box::new(o.duplicate())),
            Input::Change(t, c) => Input::Change(*t, c.clone()),
            Input::Catalog(t) => Input::Catalog(*t),
            Input::Timeout(t) => Input::Timeout(*t),
            Input::Disconnect(t) => Input::Disconnect(*t),
        }
    }
}

/// The connection's own state before a step, to put back when the step runs again.
#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) host: Host,
    pub(super) rev: Rev,
    pub(super) calls: HashMap<CallId, (Pending, Arc<AtomicBool>)>,
    pub(super) by_request: HashMap<RequestId, CallId>,
    pub(super) next_call: u64,
    pub(super) next_out: u64,
    pub(super) current: BTreeMap<ToolsetName, InstanceName>,
    pub(super) announced: Option<Arc<Value>>,
    pub(super) disconnected: bool,
    pub(super) pending_events: HashSet<RequestId>,
    pub(super) state: Arc<crate::store::PrincipalState>,
    pub(super) version: u64,
    pub(super) dirty: bool,
    pub(super) forget: bool,
}

/// A step waiting for its write.
#[derive(Debug)]
pub(super) struct Staged {
    pub(super) snapshot: Snapshot,
    pub(super) inputs: Vec<Input>,
    /// The step's effects, released when the write is acknowledged.
    pub(super) held: VecDeque<Effect>,
}

/// Where a call goes, or why it cannot go anywhere.
pub(super) enum Route {
    /// To this open toolset or instance (`None`: no scope, as for a free or grouped tool).
    To(Option<OpenKey>),
    /// §6.3: a toolset implicitly open for a host without `toolHints` that is not open yet.
    OpenFirst(OpenKey),
    /// Nowhere: the tool error's text.
    Refuse(String),
}

/// How an open began.
pub(super) enum Begin {
    /// Already open: adopt it (§5.2).
    Adopted {
        key: OpenKey,
        title: String,
        options: Value,
    },
    /// Its open handler is still running.
    Busy(OpenKey),
    /// Marked opening; the app's open handler runs next.
    Started(OpenKey),
    /// Refused: the principal has `open` instances, the configured most.
    Full {
        /// The instance asked for.
        key: OpenKey,
        /// Instances the principal has open.
        open: usize,
    },
    /// Refused: the principal store cannot take new opens now (its engine is unreachable).
    Unavailable(String),
}

impl Begin {
    /// The refusal text of [`Begin::Full`].
    pub(super) fn full_text(key: &OpenKey, open: usize) -> String {
        format!(
            "cannot open {}: {open} instances are open for this principal, the most this server \
             allows (`max_open_instances`); close one first",
            key.describe()
        )
    }
}
