//! The controller: one sans-IO state machine per server connection.
//!
//! It reads every frame of its connection in read order, keeps the server's tool catalog and
//! dynamic-tool state (rev order, held messages, recovery), and hands out what happened as
//! effects. It never reads a clock, spawns a task or touches a socket.

mod catalog;
mod change;
mod inbound;
mod names;
mod pending;
mod recovery;
mod recovery_state;
mod rev;
mod rev_state;
mod snapshot;
mod state;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use mcpl_protocol::jsonrpc::{ErrorObject, Message, Request, RequestId};
use mcpl_protocol::methods;
use serde_json::{Map, Value, json};

pub use change::{Carrier, Change, ChangeItem, CloseCause, Notice, ReadSeq};
pub use pending::Pending;
pub use snapshot::{
    Declared, Definition, EndedRecord, Instance, ListedTool, Live, OpenKey, Presence, Snapshot,
};

use crate::config::ControllerConfig;
use crate::error::Error;
use crate::names::{InstanceName, ToolsetName};
use recovery_state::Recovery;
pub use recovery_state::{RecoveryPhase, RecoveryStatus};
use rev_state::RevOrder;

/// Why a recovery started (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryReason {
    /// A new connection reads its state (H28).
    Connect,
    /// A rev above the next one on an ordered transport, or held too long (H16).
    Gap,
    /// A rev at or below the last applied one on an ordered transport (H16).
    Reversal,
    /// A duplicate event id whose rev was never applied (H17).
    DuplicateEvent,
    /// A hint or statement named a tool the latest list lacks (H18).
    UnknownTool,
    /// A list's pages carried different revs (H07).
    Straddled,
    /// A list's rev disagreed with the applied rev (H11).
    ListOutOfStep,
    /// A hinted message could not be read (no numeric rev).
    Malformed,
    /// The server announced `tools/list_changed`.
    ListChanged,
    /// The embedding code asked for a re-read.
    Requested,
    /// A retry after a failed read (H25, H26).
    Retry,
    /// A full statement jumped past hints it does not restate: a static tool's visibility
    /// (§4.1) or a move (§4.2). Only `tools/list` states them, so it is read again.
    Unstated,
}

/// Why an open, close or call has no known outcome (H60, H61, H82).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unconfirmed {
    /// The request timed out; a late answer still applies its hints (H14).
    Timeout,
    /// The connection closed before an answer came.
    Disconnected,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// The server answered with this result (its hints were already applied).
    Result(Value),
    /// The server refused with a JSON-RPC error.
    Error(ErrorObject),
    /// The request was sent but no answer is known: report it as unconfirmed (H60).
    Unconfirmed(Unconfirmed),
}

/// A command's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The command's handle.
    pub pending: Pending,
    /// How it ended.
    pub outcome: Outcome,
}

/// A `push/event` the server sent, as the host decided on it.
#[derive(Debug, Clone, PartialEq)]
pub struct PushEvent {
    /// Where in read order it was read.
    pub seq: ReadSeq,
    /// The event's params (server-written content, §10).
    pub params: Value,
    /// Whether the host accepted it (it needs the `pushEvents` grant).
    pub accepted: bool,
}

/// What the caller must do next. Drain with [`Controller::poll_effect`] until `None`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Effect {
    /// Write this message to the server. Write `Send`s in the order polled, and never drop one.
    Send(Message),
    /// State changed: tell it (the presenter decides who takes it, H42).
    Changed(Change),
    /// Show this to the agent; it changes no state (suggestions, §7).
    Notice(Notice),
    /// A pushed event to deliver to the agent (its hints were applied already, H13).
    Event(PushEvent),
    /// A command finished.
    Answered(Answer),
    /// A recovery run started.
    Recovering(RecoveryReason),
    /// A recovery run was due but [`ControllerConfig::max_recoveries_per_minute`] runs
    /// started in the last minute already. It starts by itself at `until` (through
    /// [`Controller::handle_timeout`]); hints keep applying meanwhile. Log it: a server that
    /// keeps needing recovery is broken or hostile.
    RecoveryLimited {
        /// Why the run was due.
        reason: RecoveryReason,
        /// When it will start.
        until: Instant,
    },
}

/// A request to open a declared toolset (§5.2).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenRequest {
    /// The toolset.
    pub toolset: ToolsetName,
    /// The proposed instance name (instanced toolsets only).
    pub instance: Option<InstanceName>,
    /// Options, checked by the server against the declared schema.
    pub options: Option<Value>,
}

/// A request to close a declared toolset or one of its instances (§5.2).
#[derive(Debug, Clone, PartialEq)]
pub struct CloseRequest {
    /// The toolset.
    pub toolset: ToolsetName,
    /// The instance (required for instanced toolsets, Appendix B.10).
    pub instance: Option<InstanceName>,
}

/// A `tools/call` to send.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallRequest {
    /// The tool's listed name.
    pub tool: String,
    /// The instance; sent as `mcpl/instance` only when the toolset is instanced (§4.3).
    pub instance: Option<InstanceName>,
    /// The arguments.
    pub args: Map<String, Value>,
}

/// What an outstanding request is for; a late answer keeps only what its read needs (H14).
#[derive(Debug, Clone, PartialEq)]
enum ReqKind {
    ListPage {
        run: u64,
    },
    Statement {
        run: Option<u64>,
        pending: Option<Pending>,
    },
    Open {
        pending: Pending,
        toolset: ToolsetName,
        instance: Option<InstanceName>,
    },
    Close {
        pending: Pending,
    },
    Call {
        pending: Pending,
    },
    Manifest,
}

#[derive(Debug)]
struct Req {
    kind: ReqKind,
    deadline: Instant,
}

/// Late-answer records are bounded; the oldest is forgotten first.
const LATE_CAP: usize = 256;
/// Seen event ids are bounded (§9.4 dedup window).
const EVENT_CAP: usize = 1024;

/// The per-connection host state machine.
///
/// Method kinds, as in quinn-proto:
/// - **getters**: [`snapshot`](Self::snapshot);
/// - **input**: [`handle_message`](Self::handle_message) for every frame in read order,
///   [`handle_timeout`](Self::handle_timeout) when [`poll_timeout`](Self::poll_timeout)'s
///   deadline passes (harmless when early), [`handle_undecodable`](Self::handle_undecodable),
///   [`handle_close`](Self::handle_close);
/// - **commands**: [`open`](Self::open), [`close`](Self::close),
///   [`policy_close`](Self::policy_close), [`call`](Self::call),
///   [`refresh`](Self::refresh), [`set_group`](Self::set_group), [`resync`](Self::resync);
/// - **output**: [`poll_effect`](Self::poll_effect).
///
/// Drain order: after any input or command, call `poll_effect` until `None`, then read
/// `poll_timeout`. `now` must never go backwards.
#[derive(Debug)]
pub struct Controller {
    cfg: ControllerConfig,
    /// Shared with whoever took [`Controller::shared_snapshot`]: a change copies it only if
    /// someone still holds the old one (copy on write).
    snap: Arc<Snapshot>,
    effects: VecDeque<Effect>,
    next_id: i64,
    next_pending: u64,
    read_seq: ReadSeq,
    /// The controller's own outstanding requests and what each is for. Not a copy of
    /// `mcpl-rpc`'s pending table: the controller is sans-IO, so it allocates its own ids
    /// (strings, `host-N`) and the driver writes them with `Peer::send`, which tracks only
    /// ids the peer allocated itself. Answers come back as `Event::Response` through the one
    /// seam (`Event::into_message`); only this table knows a page from a statement or an
    /// open, and its deadlines are the controller's timeouts (H14).
    requests: BTreeMap<RequestId, Req>,
    /// Requests that timed out, kept so a late answer still applies its hints (H14).
    late: VecDeque<(RequestId, ReqKind)>,
    order: RevOrder,
    recovery: Recovery,
    seen_events: VecDeque<String>,
    seen_set: BTreeSet<String>,
    closed: bool,
}

impl Controller {
    /// A controller for a fresh connection; queues the connect reads (H28).
    pub fn new(config: ControllerConfig, now: Instant) -> Self {
        Self::resume(config, now, None)
    }

    /// A controller for a reconnect that keeps the previous connection's picture, to be
    /// reconciled by the connect reads (H28, H78). Pass `None` for a fresh start.
    pub fn resume(config: ControllerConfig, now: Instant, previous: Option<Snapshot>) -> Self {
        let server_hints = config
            .manifest
            .as_ref()
            .and_then(|m| m.get("toolHints"))
            .and_then(Value::as_bool)
            == Some(true);
        let hinted = config.host_tool_hints && server_hints;
        // H78: only the same server with toolHints still on keeps its state.
        let mut snap = match previous {
            Some(prev) if hinted && prev.server == config.server && prev.hinted => prev,
            // A plain server keeps its fixed grouping and the toolsets the host has open.
            Some(prev)
                if !hinted
                    && !prev.hinted
                    && prev.server == config.server
                    && prev.rules.is_some()
                    && config.grouping.is_some() =>
            {
                prev
            }
            _ => Snapshot::empty(config.server.clone(), config.principal.clone()),
        };
        snap.server = config.server.clone();
        snap.principal = config.principal.clone();
        snap.hinted = hinted;
        snap.new_connection(); // H11: a new connection starts at 0, its stamps too
        snap.ready = false;
        snap.auto_open = config.grouping.as_ref().is_some_and(|g| g.auto_open);
        let manifest = config.manifest.clone();
        let mut config = config;
        // Appendix B.3: an early rev is held at most 2 s.
        config.hold_limit = config.hold_limit.min(std::time::Duration::from_secs(2));
        let mut c = Controller {
            cfg: config,
            snap: Arc::new(snap),
            effects: VecDeque::new(),
            next_id: 1,
            next_pending: 1,
            read_seq: 0,
            requests: BTreeMap::new(),
            late: VecDeque::new(),
            order: RevOrder::default(),
            recovery: Recovery::default(),
            seen_events: VecDeque::new(),
            seen_set: BTreeSet::new(),
            closed: false,
        };
        if hinted {
            let gone = state::set_declared(c.snap_mut(), manifest.as_ref());
            c.emit_change(Carrier::Manifest, gone);
        }
        c.trigger(now, RecoveryReason::Connect);
        c
    }

    /// What the controller knows about its server.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The same, shared: cheap to take after every drain, and the same pointer until the
    /// state changes (compare with [`Arc::ptr_eq`]).
    pub fn shared_snapshot(&self) -> Arc<Snapshot> {
        self.snap.clone()
    }

    /// The snapshot to change; copied first only if someone still holds the old one.
    fn snap_mut(&mut self) -> &mut Snapshot {
        Arc::make_mut(&mut self.snap)
    }

    /// The next effect to act on, in order. May yield after any `handle_*` or command.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// The earliest time [`handle_timeout`](Self::handle_timeout) should be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let req = self.requests.values().map(|r| r.deadline).min();
        [req, self.order.deadline(), self.recovery.deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Expires timed-out requests (H05, H60), held early revs (H16) and recovery back-off
    /// (H25). Harmless when called early.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.closed {
            return;
        }
        let expired: Vec<RequestId> = self
            .requests
            .iter()
            .filter(|(_, r)| r.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(req) = self.requests.remove(&id) {
                self.expire(now, id, req.kind);
            }
        }
        if self.order.deadline().is_some_and(|d| d <= now) {
            self.order.clear_deadline();
            self.trigger(now, RecoveryReason::Gap);
        }
        if self.recovery.deadline().is_some_and(|d| d <= now) {
            self.start_run(now, RecoveryReason::Retry);
        }
    }

    fn expire(&mut self, now: Instant, id: RequestId, kind: ReqKind) {
        match kind {
            // H05: a late list page is dropped, and the read fails.
            ReqKind::ListPage { run } => self.list_failed(now, run),
            ReqKind::Statement { run, pending } => {
                self.remember_late(
                    id,
                    ReqKind::Statement {
                        run: None,
                        pending: None,
                    },
                );
                if let Some(p) = pending {
                    self.answer(p, Outcome::Unconfirmed(Unconfirmed::Timeout));
                }
                if let Some(run) = run {
                    self.statement_done(now, run, false);
                }
            }
            ReqKind::Open {
                pending,
                toolset,
                instance,
            } => {
                // H14: the late record keeps only what the read needs.
                self.remember_late(
                    id,
                    ReqKind::Open {
                        pending,
                        toolset,
                        instance,
                    },
                );
                self.answer(pending, Outcome::Unconfirmed(Unconfirmed::Timeout));
            }
            ReqKind::Close { pending } | ReqKind::Call { pending } => {
                self.remember_late(id, kind);
                self.answer(pending, Outcome::Unconfirmed(Unconfirmed::Timeout));
            }
            ReqKind::Manifest => {}
        }
    }

    fn remember_late(&mut self, id: RequestId, kind: ReqKind) {
        if self.late.len() >= LATE_CAP {
            self.late.pop_front();
        }
        self.late.push_back((id, kind));
    }

    /// The connection closed: pending commands settle as unconfirmed, late records are
    /// discarded, and nothing more is sent (H27, H82). Changes already read stay told.
    pub fn handle_close(&mut self, _now: Instant) {
        if self.closed {
            return;
        }
        self.closed = true;
        let reqs = std::mem::take(&mut self.requests);
        for (_, req) in reqs {
            match req.kind {
                ReqKind::Open { pending, .. }
                | ReqKind::Close { pending }
                | ReqKind::Call { pending }
                | ReqKind::Statement {
                    pending: Some(pending),
                    ..
                } => {
                    self.answer(pending, Outcome::Unconfirmed(Unconfirmed::Disconnected));
                }
                _ => {}
            }
        }
        self.late.clear();
        self.order = RevOrder::default();
        self.recovery = Recovery::default();
    }

    /// True once [`handle_close`](Self::handle_close) ran.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Sets whether the server holds the `pushEvents` grant (pushes are refused without it).
    pub fn set_push_events(&mut self, granted: bool) {
        self.cfg.push_events = granted;
    }

    /// Sends `toolsets/open` for a declared toolset (§5.2).
    pub fn open(&mut self, now: Instant, req: OpenRequest) -> Result<Pending, Error> {
        self.usable()?;
        let decl = self.declared(&req.toolset)?;
        if req.instance.is_some() && !decl.instances {
            return Err(Error::InstanceNotAllowed(req.toolset));
        }
        let mut params = json!({ "toolset": req.toolset });
        if let Some(i) = &req.instance {
            params["instance"] = json!(i);
        }
        if let Some(o) = &req.options {
            params["options"] = o.clone();
        }
        let pending = self.pending();
        let kind = ReqKind::Open {
            pending,
            toolset: req.toolset,
            instance: req.instance,
        };
        self.request(now, methods::TOOLSETS_OPEN, Some(params), kind);
        Ok(pending)
    }

    /// Sends `toolsets/close` for a declared toolset or instance (§5.2).
    pub fn close(&mut self, now: Instant, req: CloseRequest) -> Result<Pending, Error> {
        self.usable()?;
        let decl = self.declared(&req.toolset)?;
        match (&req.instance, decl.instances) {
            (None, true) => return Err(Error::InstanceRequired(req.toolset)),
            (Some(_), false) => return Err(Error::InstanceNotAllowed(req.toolset)),
            _ => {}
        }
        let mut params = json!({ "toolset": req.toolset });
        if let Some(i) = &req.instance {
            params["instance"] = json!(i);
        }
        let pending = self.pending();
        self.request(
            now,
            methods::TOOLSETS_CLOSE,
            Some(params),
            ReqKind::Close { pending },
        );
        Ok(pending)
    }

    /// A close by the host's own policy (for example after many idle turns): allowed only for
    /// a toolset or instance this host opened, on this connection or an earlier one to the
    /// same server (§5.2, H30). The agent should be told; the close's change is owed as usual.
    pub fn policy_close(&mut self, now: Instant, req: CloseRequest) -> Result<Pending, Error> {
        let key = (req.toolset.clone(), req.instance.clone());
        if !self.snap.opened_here.contains(&key) {
            return Err(Error::NotOpenedHere {
                toolset: req.toolset,
                instance: req.instance,
            });
        }
        self.close(now, req)
    }

    /// Sends `tools/call`, with `mcpl/instance` exactly when the tool's toolset is instanced
    /// (§4.3, §8.4). Routing and gating decisions belong to the caller (the presenter).
    pub fn call(&mut self, now: Instant, req: CallRequest) -> Result<Pending, Error> {
        if self.closed {
            return Err(Error::Closed);
        }
        let mut params = json!({ "name": req.tool, "arguments": Value::Object(req.args) });
        let instanced = self
            .snap
            .tool(&req.tool)
            .and_then(|t| t.toolset.as_deref())
            .is_some_and(|ts| self.snap.instanced(ts));
        if let (true, true, Some(i)) = (self.snap.hinted, instanced, &req.instance) {
            params["_meta"] = json!({ "mcpl/instance": i });
        }
        let pending = self.pending();
        self.request(
            now,
            methods::TOOLS_CALL,
            Some(params),
            ReqKind::Call { pending },
        );
        Ok(pending)
    }

    /// Re-reads `toolsets/list` (look does this, H62); answered like any command.
    /// A plain server's toolsets are the host's own: there is nothing to re-read.
    pub fn refresh(&mut self, now: Instant) -> Result<Pending, Error> {
        self.usable()?;
        if !self.snap.hinted {
            return Err(Error::HintsOff);
        }
        let pending = self.pending();
        let kind = ReqKind::Statement {
            run: None,
            pending: Some(pending),
        };
        self.request(now, methods::TOOLSETS_LIST, Some(json!({})), kind);
        Ok(pending)
    }

    /// Starts a recovery (or schedules one after the current run, H24).
    pub fn resync(&mut self, now: Instant) {
        self.trigger(now, RecoveryReason::Requested);
    }

    /// Opens or closes an undeclared group on the host side; nothing is sent (§5.4, H29).
    pub fn set_group(&mut self, group: &ToolsetName, open: bool) -> Result<(), Error> {
        self.usable()?;
        if !self.snap.is_undeclared(group) {
            return Err(if self.snap.declared.contains_key(group.as_str()) {
                Error::Undeclared(group.clone())
            } else {
                Error::UnknownToolset(group.clone())
            });
        }
        let items = state::set_group(self.snap_mut(), group, open);
        self.emit_change(Carrier::Host, items);
        Ok(())
    }

    fn usable(&self) -> Result<(), Error> {
        if self.closed {
            Err(Error::Closed)
        } else if !self.snap.hinted && !self.snap.host_grouped() {
            Err(Error::HintsOff)
        } else {
            Ok(())
        }
    }

    fn declared(&self, toolset: &ToolsetName) -> Result<Declared, Error> {
        match self.snap.declared.get(toolset.as_str()) {
            Some(d) => Ok(d.clone()),
            None if self.snap.is_undeclared(toolset) => Err(Error::Undeclared(toolset.clone())),
            None => Err(Error::UnknownToolset(toolset.clone())),
        }
    }

    fn pending(&mut self) -> Pending {
        self.next_pending += 1;
        Pending(self.next_pending)
    }

    fn request(&mut self, now: Instant, method: &str, params: Option<Value>, kind: ReqKind) {
        // String ids, so they never collide with the numeric ids mcpl-rpc allocates for the
        // driver's own requests on the same connection.
        let id = RequestId::String(format!("host-{}", self.next_id));
        self.next_id += 1;
        let timeout = match (&kind, self.cfg.call_timeout) {
            (ReqKind::Call { .. }, Some(t)) => t,
            _ => self.cfg.request_timeout,
        };
        let deadline = now + timeout;
        self.requests.insert(id.clone(), Req { kind, deadline });
        self.effects
            .push_back(Effect::Send(Message::Request(Request {
                id,
                method: method.to_owned(),
                params,
                extra: Map::new(),
            })));
    }

    fn answer(&mut self, pending: Pending, outcome: Outcome) {
        self.effects
            .push_back(Effect::Answered(Answer { pending, outcome }));
    }

    fn emit_change(&mut self, carrier: Carrier, items: Vec<ChangeItem>) {
        if !items.is_empty() {
            self.effects.push_back(Effect::Changed(Change {
                seq: self.read_seq,
                carrier,
                items,
            }));
        }
    }
}
