//! The sans-IO session core: one [`Session`] per connection.
//!
//! A session never reads a clock, spawns a task, touches a socket or calls a store. Messages,
//! time and the principal's stored state come in through `handle_*`; what to write, what app
//! code to run, what to store and what to tell the principal's other connections come out of
//! [`Session::poll_effect`]. Each input runs as one *step* on the session's copy of the
//! principal's state (see `step`): a step that changed it asks for a [`WriteSet`](crate::store::WriteSet) and holds
//! its other effects back until the write is acknowledged; on a conflict it runs again on
//! the state the store holds now.

mod call;
mod carrier;
mod catalog;
mod compat;
mod data;
mod statement;
mod step;
mod toolsets;

use crate::context::{AfterCommit, Context, Outcome};
use crate::error::{Error, Refusal};
use crate::principal::CallId;
use crate::principal::{ConnectionId, Principal};
use crate::shared::Shared;
use crate::store::PrincipalState;
use crate::update::PrincipalChange;
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::{InstanceName, Rev, ToolsetName};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use data::Effect;
pub(crate) use data::PlannedCall;
use data::{Host, Input, Pending, Staged};

/// One connection's protocol state (§14, "Server, per connection").
///
/// Method kinds:
/// - `handle_*` feed input: [`handle_message`](Self::handle_message) for each frame in read
///   order, [`handle_call_done`](Self::handle_call_done) when app code finishes,
///   [`handle_principal_change`](Self::handle_principal_change) for changes published by other
///   sessions or by the server, [`handle_catalog_change`](Self::handle_catalog_change) after
///   [`Server::replace_catalog`](crate::Server::replace_catalog), [`handle_timeout`](Self::handle_timeout) at the deadline and
///   [`handle_disconnect`](Self::handle_disconnect) when the transport closes; and the
///   store's answers: [`handle_state`](Self::handle_state) for [`Effect::Load`], and
///   [`handle_written`](Self::handle_written), [`handle_conflict`](Self::handle_conflict) or
///   [`handle_store_error`](Self::handle_store_error) for [`Effect::Write`].
/// - `poll_*` drain output: [`poll_effect`](Self::poll_effect) until `None`, then
///   [`poll_timeout`](Self::poll_timeout). `now` must never go backwards.
/// - Getters: [`rev`](Self::rev), [`principal`](Self::principal), ...
///
/// Any `handle_*` may queue effects; a peer's mistake is answered with an error reply or a
/// tool error and changes nothing. `Err` is returned for caller misuse only.
#[derive(Debug)]
pub struct Session {
    server: Arc<Shared>,
    principal: Principal,
    connection: ConnectionId,
    host: Host,
    rev: Rev,
    effects: VecDeque<Effect>,
    /// App calls in flight, with the flag [`Context::is_cancelled`] reads.
    calls: HashMap<CallId, (Pending, Arc<AtomicBool>)>,
    by_request: HashMap<RequestId, CallId>,
    next_call: u64,
    next_out: u64,
    current: BTreeMap<ToolsetName, InstanceName>,
    announced: Option<Arc<Value>>,
    disconnected: bool,
    /// Ids of our `push/event` requests the host has not answered yet.
    pending_events: HashSet<RequestId>,
    /// Where this session's `push/event` ids start (unique per process: see
    /// [`Session::set_event_prefix`]).
    event_prefix: String,
    /// The principal's state as this session last read or wrote it, with its version. Shared
    /// copy on write with the store, the step's snapshot and the principal's other sessions:
    /// only an edit ([`Session::edit`]) copies it, once per step.
    state: Arc<PrincipalState>,
    version: u64,
    /// Whether the state was read yet ([`Effect::Load`] answered).
    loaded: bool,
    /// The version of the state this session first read. A change committed at or before
    /// it is in everything the session states, so it is not news to this connection.
    first_read: u64,
    /// Whether `state` has changes not stored yet.
    dirty: bool,
    /// Whether the principal's state is to be forgotten (§5.6, per-connection principals).
    forget: bool,
    /// Set while a step runs again after the store failed: why opens are refused.
    store_down: Option<String>,
    /// The step waiting for its write, with the effects it holds back.
    staged: Option<Staged>,
    /// Inputs waiting for the state or for a write.
    inbox: VecDeque<Input>,
    /// Hooks of finished calls whose step runs again.
    rerun_hooks: HashMap<CallId, AfterCommit>,
}

impl Session {
    pub(crate) fn new(
        server: Arc<Shared>,
        principal: Principal,
        connection: ConnectionId,
        _now: Instant,
    ) -> Self {
        Session {
            server,
            principal,
            connection,
            host: Host::default(),
            rev: Rev::ZERO,
            effects: VecDeque::new(),
            calls: HashMap::new(),
            by_request: HashMap::new(),
            next_call: 0,
            next_out: 0,
            current: BTreeMap::new(),
            announced: None,
            disconnected: false,
            pending_events: HashSet::new(),
            event_prefix: "local".to_owned(),
            state: Arc::default(),
            version: 0,
            loaded: false,
            first_read: 0,
            dirty: false,
            forget: false,
            store_down: None,
            staged: None,
            inbox: VecDeque::from([]),
            rerun_hooks: HashMap::new(),
        }
        .asking_for_state()
    }

    fn asking_for_state(mut self) -> Self {
        self.effects.push_back(Effect::Load(self.principal.clone()));
        self
    }

    /// Sets where this session's `push/event` ids start: ids read `PREFIX-CONNECTION-ev-N`.
    /// A driver passes a prefix unique to its process (random, chosen at start), so ids stay
    /// unique across connections, processes and restarts; tests pass a fixed one.
    pub fn set_event_prefix(&mut self, prefix: impl Into<String>) {
        self.event_prefix = prefix.into();
    }

    /// The principal's state as this session holds it now.
    pub fn state(&self) -> &PrincipalState {
        &self.state
    }

    /// The store version [`state`](Self::state) was read at or written as.
    pub fn state_version(&self) -> u64 {
        self.version
    }

    /// The principal this connection acts for.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// This connection.
    pub fn connection(&self) -> ConnectionId {
        self.connection
    }

    /// The last rev allocated on this connection (`Rev::ZERO` before any).
    pub fn rev(&self) -> Rev {
        self.rev
    }

    /// Whether the host advertised `toolHints`.
    pub fn host_has_tool_hints(&self) -> bool {
        self.host.tool_hints
    }

    /// Whether `push/event` may be sent: advertised by the host and granted by its policy.
    pub fn push_granted(&self) -> bool {
        self.host.push_advertised && self.host.push_granted
    }

    /// How many of this connection's `push/event` requests the host has not answered.
    pub fn pending_events(&self) -> usize {
        self.pending_events.len()
    }

    /// How many calls to app code are outstanding.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// The next thing to do, in order. May yield after any `handle_*` call.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next run: the next expiry of an
    /// ended record of this principal, in the state this session holds.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.state.next_expiry()
    }

    /// Expires ended records (§5.3). Harmless when spurious.
    pub fn handle_timeout(&mut self, now: Instant) {
        let _ = self.submit(Input::Timeout(now));
    }

    fn expire(&mut self, now: Instant) {
        if self.state.next_expiry().is_some_and(|t| t <= now) {
            self.edit(|s| s.expire(now));
        }
    }

    /// Asks the driver to close the connection (server shutdown, say).
    pub fn close(&mut self) {
        self.effects.push_back(Effect::Close);
    }

    /// Feeds one frame from the host, in read order.
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        let _ = self.submit(Input::Message(now, message));
    }

    fn message(&mut self, now: Instant, message: Message) {
        if self.disconnected {
            return;
        }
        match message {
            Message::Request(req) => self.handle_request(now, req),
            Message::Notification(n) => match n.method.as_str() {
                methods::CANCELLED => self.handle_cancelled(n.params),
                methods::INITIALIZED => self.host.initialized = true,
                _ => {}
            },
            // Answers to our pushes: a push carrying hints is never retried (§6.1), and
            // `accepted: false` is the host's treatment decision, so an answer only frees its
            // place among the pending events.
            Message::Response(r) => {
                if let Some(id) = &r.id {
                    self.pending_events.remove(id);
                }
            }
        }
    }

    fn handle_request(&mut self, now: Instant, req: Request) {
        let Request {
            id, method, params, ..
        } = req;
        let toolsets_method = matches!(
            method.as_str(),
            methods::TOOLSETS_OPEN | methods::TOOLSETS_CLOSE | methods::TOOLSETS_LIST
        );
        if toolsets_method && !self.host.tool_hints {
            // §6.3: hint-carrying results go only to hosts with `toolHints`.
            let r = Refusal::method_not_found(format!(
                "{method} is offered only to hosts that advertise toolHints"
            ));
            return self.respond(id, Err(r));
        }
        match method.as_str() {
            methods::INITIALIZE => self.initialize(id, params),
            methods::PING => self.respond(id, Ok(Value::Object(Default::default()))),
            methods::TOOLS_LIST => self.tools_list(now, id),
            methods::TOOLS_CALL => self.tools_call(now, id, params),
            methods::TOOLSETS_OPEN => self.toolsets_open(now, id, params),
            methods::TOOLSETS_CLOSE => self.toolsets_close(now, id, params),
            methods::TOOLSETS_LIST => self.toolsets_list(now, id),
            methods::FEATURE_SETS_UPDATE => self.feature_sets_update(id, params),
            methods::MANIFEST => self.manifest(id),
            other => {
                let r = Refusal::method_not_found(format!("method `{other}` is not offered"));
                self.respond(id, Err(r))
            }
        }
    }

    fn handle_cancelled(&mut self, params: Option<Value>) {
        let Some(id) = params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|v| RequestId::from_value(v).ok())
        else {
            return;
        };
        if let Some(call) = self.by_request.get(&id) {
            if let Some((_, cancelled)) = self.calls.get_mut(call) {
                // MCP: a cancelled request gets no response. Its consequences still reach
                // the host, as `tools/hints` (§6.1, vector 28). App code may see the flag.
                cancelled.store(true, Ordering::Release);
            }
        }
    }

    /// Feeds the outcome of app code started by an [`Effect::Call`].
    ///
    /// Commits the recorded changes, answers the request with its consequences under the
    /// next rev (or as `tools/hints` if it was cancelled) and publishes the changes for the
    /// principal's other connections and for other principals. Then, last, it queues
    /// [`Effect::Committed`] with the context's [`Context::after_commit`] hooks, whatever
    /// happened before (also after a misuse `Err` below, and after a disconnect, when no
    /// `Send` is queued). `Err` means misuse: an unknown call (nothing is queued), or a reply
    /// of the wrong kind (the request then gets an internal error), or an update that does
    /// not fit the declarations (the reply is still sent, without it).
    ///
    /// While the session waits for its state or a write, the outcome waits too, and errors
    /// found when it runs are logged instead.
    pub fn handle_call_done(
        &mut self,
        now: Instant,
        call: CallId,
        outcome: Outcome,
    ) -> Result<(), Error> {
        if !self.calls.contains_key(&call) && !self.inbox_has_call(call) {
            return Err(Error::UnknownCall(call));
        }
        self.submit(Input::CallDone(now, call, Box::new(outcome)))
    }

    fn call_done(&mut self, now: Instant, call: CallId, mut outcome: Outcome) -> Result<(), Error> {
        let Some((pending, cancelled)) = self.calls.remove(&call) else {
            return Err(Error::UnknownCall(call));
        };
        let cancelled = cancelled.load(Ordering::Acquire);
        let hooks = match self.rerun_hooks.remove(&call) {
            Some(hooks) => hooks,
            None => std::mem::take(&mut outcome.context.after_commit),
        };
        match &pending {
            Pending::Tool { request }
            | Pending::Open { request, .. }
            | Pending::Close { request, .. } => {
                self.by_request.remove(request);
            }
            Pending::Disconnect => {}
        }
        let finished = self.finish(now, call, pending, cancelled, outcome);
        if self.disconnected && self.principal.ends_at_disconnect() {
            // §5.6: the state went with the connection; a call that finished late must not
            // leave a copy behind that nobody will ever serve again.
            self.forget_state();
        }
        // §6.1: everything the call caused has its rev now; what the hooks start comes after.
        self.effects.push_back(Effect::Committed { call, hooks });
        finished
    }

    /// Feeds a change published by another session or by the server ([`Effect::Publish`],
    /// [`Server::apply_to`](crate::Server::apply_to)). Changes of other principals, and this session's own, are ignored.
    /// Queues a push that carries the hints where `pushEvents` is granted and an event
    /// explains them, else `tools/hints` (§6.2); nothing for hosts without `toolHints` but
    /// the event itself (§6.3).
    ///
    /// A change that carries the principal's state ([`PrincipalChange::with_state`]) newer
    /// than this session's copy replaces the copy first.
    pub fn handle_principal_change(&mut self, now: Instant, change: &PrincipalChange) {
        if change.principal != self.principal || change.origin == Some(self.connection) {
            return;
        }
        let _ = self.submit(Input::Change(now, Arc::new(change.clone())));
    }

    /// [`handle_principal_change`](Self::handle_principal_change) for a change shared by
    /// several sessions (a driver hands the same one to every session of the principal):
    /// the session keeps a reference to it, not a copy.
    pub fn handle_shared_change(&mut self, now: Instant, change: Arc<PrincipalChange>) {
        if change.principal != self.principal || change.origin == Some(self.connection) {
            return;
        }
        let _ = self.submit(Input::Change(now, change));
    }

    fn principal_change(&mut self, now: Instant, change: &PrincipalChange) {
        if let Some(stored) = &change.state {
            if change.restated {
                self.restate_from(stored);
            } else if stored.version <= self.first_read {
                // Committed before this connection first read the state (it registered
                // between the commit and the fan-out, or a relay was slow): nothing to say.
                return;
            } else {
                self.adopt(stored);
            }
        }
        if self.disconnected
            || change.principal != self.principal
            || change.origin == Some(self.connection)
            || change.is_empty()
        {
            return;
        }
        self.deliver(now, change);
    }

    /// Tells the host that the declarations changed, after [`Server::replace_catalog`](crate::Server::replace_catalog):
    /// `mcpl/manifestChanged` when the manifest it sees changed, and
    /// `notifications/tools/list_changed`.
    pub fn handle_catalog_change(&mut self, now: Instant) {
        let _ = self.submit(Input::Catalog(now));
    }

    fn catalog_change(&mut self) {
        if self.disconnected || !self.host.initialized && self.announced.is_none() {
            return;
        }
        self.announce_catalog();
    }

    /// The transport closed. Calls in flight still finish (their changes are committed and
    /// published), but nothing more is written. A per-connection principal's toolsets end
    /// here (§5.6): each open one gets an [`Effect::Call`] with
    /// [`CallKind::Close`](crate::CallKind::Close) `{disconnect: true}` for app cleanup, and
    /// the principal's state is dropped.
    pub fn handle_disconnect(&mut self, now: Instant) {
        let _ = self.submit(Input::Disconnect(now));
    }

    fn disconnect(&mut self, now: Instant) {
        if self.disconnected {
            return;
        }
        self.disconnected = true;
        self.effects.retain(|e| !matches!(e, Effect::Send(_)));
        if self.principal.ends_at_disconnect() {
            self.end_at_disconnect(now);
        }
    }

    /// Registers app work for `context`, sharing its cancellation flag.
    fn new_call(&mut self, pending: Pending, context: &Context) -> CallId {
        let id = CallId(self.next_call);
        self.next_call += 1;
        match &pending {
            Pending::Tool { request }
            | Pending::Open { request, .. }
            | Pending::Close { request, .. } => {
                self.by_request.insert(request.clone(), id);
            }
            Pending::Disconnect => {}
        }
        self.calls.insert(id, (pending, context.cancelled.clone()));
        id
    }

    /// Queues an answer to `id`.
    fn respond(&mut self, id: RequestId, result: Result<Value, Refusal>) {
        let response = match result {
            Ok(v) => Response::ok(id, v),
            Err(r) => Response::error(Some(id), ErrorObject::from(&r)),
        };
        self.send(Message::Response(response));
    }

    fn send(&mut self, message: Message) {
        if !self.disconnected {
            self.effects.push_back(Effect::Send(message));
        }
    }
}
