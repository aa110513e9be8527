//! The reference fixture: a small, correct RFC-014 server that meets the [fixture
//! contract](crate::fixture), written straight on `mcpl-rpc`, with [`Faults`] that break it one
//! rule at a time (the broken fixtures the suite is tested against).
//!
//! It is a test subject, not an SDK: it shows a server author in any language what the suite
//! expects, and lets the suite be run end to end (`mcpl-conformance-fixture` serves it on stdio
//! or WebSocket). One task per connection writes every message, so allocating a rev and writing
//! its message are one step (§6.1). Principal state lives in a [`Principal`] shared by the
//! connections of one principal; changes made on one connection reach the others as hint
//! changes on their own revs (§5.6).
//!
//! - this file: [`Faults`], [`Principal`], [`ReferenceServer`], [`serve`] and the connection loop.
//! - `session`: one connection's answers; `call`: its `tools/call`.

mod call;
mod session;

use crate::fixture::*;
use crate::target::{BoxFuture, Connector};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use mcpl_rpc::{Event, Peer, PeerConfig, Responder, Transport};
use serde_json::{Value, json};
use session::Session;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Ways to break the fixture, one rule each.
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    /// Gives the third hinted message the same rev as the second.
    pub reuse_rev: bool,
    /// Skips rev 3.
    pub skip_rev: bool,
    /// Leaves the full statement out of a toolsets/list when nothing the host opened is open.
    pub no_hints_on_empty_list: bool,
    /// Appends `x` to every proposed instance name.
    pub rename_instance: bool,
    /// Also pushes a call's own consequences (vector 2).
    pub push_own_consequences: bool,
    /// Sends hints to hosts without toolHints (vector 8).
    pub hints_to_plain_hosts: bool,
    /// Keeps no ended records (vector 13).
    pub no_ended_records: bool,
    /// Accepts any instance name (vector 34).
    pub accept_bad_names: bool,
    /// Answers an ambiguous call by picking an instance (vector 6).
    pub guess_instance: bool,
    /// Sends something else's consequences as tools/hints even with a push grant (vector 3).
    pub never_push: bool,
    /// Drops the consequences of a cancelled call (vector 28).
    pub drop_cancelled: bool,
    /// Opens again instead of adopting (vector 17).
    pub no_adoption: bool,
    /// Leaves invisible tools out of tools/list (vector 1).
    pub hide_invisible: bool,
    /// Leaves `instance` out of an open's result (vector 5).
    pub no_instance_in_result: bool,
    /// Sends tools/list_changed when an instance opens (vector 7).
    pub list_changed_on_open: bool,
    /// Forgets the principal's instances when a connection closes, recording nothing (vector 9).
    pub forget_on_disconnect: bool,
    /// Opens an undeclared toolset when asked (vector 10).
    pub open_undeclared: bool,
    /// Restates the hints of a push the host refused or failed (vectors 11, 29).
    pub restate_refused: bool,
    /// Tells the principal's other connections nothing (vector 14).
    pub no_fan_out: bool,
    /// Keeps listing the moved tool as static (vector 15).
    pub move_not_listed: bool,
    /// Closes without hints (vector 16).
    pub close_without_hints: bool,
    /// One definition for every instance, and no per-instance check (vector 23).
    pub one_definition: bool,
    /// The compatibility choose tool does nothing (vector 26).
    pub choose_ignored: bool,
    /// The full statement leaves out dynamic tools outside declared toolsets (vector 30).
    pub statement_without_loose_tools: bool,
    /// Removes a declaration without mcpl/manifestChanged (vector 31).
    pub silent_manifest_change: bool,
    /// Pushes without a pushEvents grant (vector 33).
    pub push_without_grant: bool,
    /// Keeps flat toolsets closed for hosts without toolHints (vector 38).
    pub plain_flat_closed: bool,
}

impl Faults {
    /// The fault called `name` (a field name, such as `reuse_rev`) switched on in `self`;
    /// `None` for an unknown name.
    pub fn with(mut self, name: &str) -> Option<Faults> {
        let flag = match name {
            "reuse_rev" => &mut self.reuse_rev,
            "skip_rev" => &mut self.skip_rev,
            "no_hints_on_empty_list" => &mut self.no_hints_on_empty_list,
            "rename_instance" => &mut self.rename_instance,
            "push_own_consequences" => &mut self.push_own_consequences,
            "hints_to_plain_hosts" => &mut self.hints_to_plain_hosts,
            "no_ended_records" => &mut self.no_ended_records,
            "accept_bad_names" => &mut self.accept_bad_names,
            "guess_instance" => &mut self.guess_instance,
            "never_push" => &mut self.never_push,
            "drop_cancelled" => &mut self.drop_cancelled,
            "no_adoption" => &mut self.no_adoption,
            "hide_invisible" => &mut self.hide_invisible,
            "no_instance_in_result" => &mut self.no_instance_in_result,
            "list_changed_on_open" => &mut self.list_changed_on_open,
            "forget_on_disconnect" => &mut self.forget_on_disconnect,
            "open_undeclared" => &mut self.open_undeclared,
            "restate_refused" => &mut self.restate_refused,
            "no_fan_out" => &mut self.no_fan_out,
            "move_not_listed" => &mut self.move_not_listed,
            "close_without_hints" => &mut self.close_without_hints,
            "one_definition" => &mut self.one_definition,
            "choose_ignored" => &mut self.choose_ignored,
            "statement_without_loose_tools" => &mut self.statement_without_loose_tools,
            "silent_manifest_change" => &mut self.silent_manifest_change,
            "push_without_grant" => &mut self.push_without_grant,
            "plain_flat_closed" => &mut self.plain_flat_closed,
            _ => return None,
        };
        *flag = true;
        Some(self)
    }
}

/// The state of one principal, shared by its connections. Cheap to clone.
#[derive(Clone)]
pub struct Principal {
    world: Arc<Mutex<World>>,
}

impl Default for Principal {
    fn default() -> Self {
        Principal::new()
    }
}

impl Principal {
    /// A principal with nothing open (the default-open toolset aside).
    pub fn new() -> Self {
        Principal {
            world: Arc::new(Mutex::new(World::new())),
        }
    }
}

/// Opens in-memory connections to the reference fixture: a [`Connector`] for
/// [`crate::ServerTarget::Connector`].
pub struct ReferenceServer {
    faults: Faults,
    shared: Option<Principal>,
}

impl ReferenceServer {
    /// A fixture whose connections all act for one principal.
    pub fn shared(faults: Faults) -> Arc<ReferenceServer> {
        Arc::new(ReferenceServer {
            faults,
            shared: Some(Principal::new()),
        })
    }

    /// A fixture whose every connection is its own principal.
    pub fn separate(faults: Faults) -> Arc<ReferenceServer> {
        Arc::new(ReferenceServer {
            faults,
            shared: None,
        })
    }
}

impl Connector for ReferenceServer {
    fn connect(&self) -> BoxFuture<'_, Result<Transport, String>> {
        let principal = self.shared.clone().unwrap_or_default();
        let faults = self.faults;
        Box::pin(async move {
            let (ours, theirs) = Transport::memory_pair();
            tokio::spawn(serve(ours, principal, faults));
            Ok(theirs)
        })
    }

    fn shares_principal(&self) -> bool {
        self.shared.is_some()
    }

    fn describe(&self) -> String {
        format!("in-memory reference fixture {:?}", self.faults)
    }
}

/// Locks a mutex, taking the data even if a panicking thread poisoned it.
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A principal's state.
pub(super) struct World {
    instances: BTreeMap<String, Option<i64>>,
    flat_open: bool,
    default_open: bool,
    flat_declared: bool,
    mover_dynamic: bool,
    ended: Vec<Value>,
    next_ended: u64,
    next_auto: u64,
    conns: Vec<(u64, mpsc::UnboundedSender<Internal>)>,
    next_conn: u64,
}

impl World {
    fn new() -> Self {
        World {
            instances: BTreeMap::new(),
            flat_open: false,
            default_open: true,
            flat_declared: true,
            mover_dynamic: false,
            ended: Vec::new(),
            next_ended: 1,
            next_auto: 1,
            conns: Vec::new(),
            next_conn: 1,
        }
    }

    pub(super) fn record_end(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        reason: &str,
        faults: &Faults,
    ) -> String {
        let id = format!("e-{}", self.next_ended);
        self.next_ended += 1;
        if !faults.no_ended_records {
            let mut rec = json!({"id": id, "toolset": toolset, "reason": reason});
            if let Some(i) = instance {
                rec["instance"] = json!(i);
            }
            self.ended.push(rec);
        }
        id
    }
}

/// Work a connection's task does besides reading the wire.
pub(super) enum Internal {
    /// Hints caused elsewhere (another connection or a timer), without a rev yet.
    Foreign(Value),
    /// A delayed `cf_reveal` is due.
    Reveal {
        id: RequestId,
        responder: Responder,
        visible: bool,
    },
    /// A `cf_later` change is due.
    Later { visible: bool },
    /// A broken fixture restating a refused push's hints as tools/hints.
    Restate(Value),
}

/// Serves one connection of `principal` on `transport` until it closes.
pub async fn serve(transport: Transport, principal: Principal, faults: Faults) {
    let world = principal.world;
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let me = {
        let mut w = lock(&world);
        let me = w.next_conn;
        w.next_conn += 1;
        w.conns.push((me, tx.clone()));
        me
    };
    let mut s = Session {
        peer,
        world: world.clone(),
        faults,
        me,
        tx,
        rev: 0,
        allocated: 0,
        hinted: false,
        push: false,
        revealed: false,
        current: None,
        cancelled: HashSet::new(),
        events: 0,
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                None | Some(Event::Closed { .. }) => break,
                Some(Event::Request { request, responder, .. }) => {
                    let params = request.params.clone().unwrap_or(json!({}));
                    s.request(&request.method, params, request.id.clone(), responder);
                }
                Some(Event::Notification { .. }) => {}
                Some(Event::Cancelled { id, .. }) => { s.cancelled.insert(id); }
                Some(_) => {}
            },
            Some(work) = rx.recv() => s.internal(work),
        }
    }
    let mut w = lock(&world);
    w.conns.retain(|(id, _)| *id != me);
    if faults.forget_on_disconnect {
        w.instances.clear();
    }
}

pub(super) fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

pub(super) fn tool_error(t: &str) -> Value {
    json!({"content": text(t), "isError": true})
}

pub(super) fn invalid(detail: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::InvalidParams, detail.into())
}

pub(super) fn echo_def(instance: &str, one: bool) -> Value {
    let instance = if one { "any" } else { instance };
    json!({"name": ECHO, "description": "Echo a value this instance accepts.",
           "inputSchema": {"type": "object", "required": ["value"],
                           "properties": {"value": {"enum": [instance]}}}})
}

pub(super) fn open_entries_for(instance: &str, visible: bool, one: bool) -> Vec<Value> {
    let mut echo = json!({"name": ECHO, "instance": instance, "visible": visible});
    if visible {
        echo["definition"] = echo_def(instance, one);
    }
    vec![
        echo,
        json!({"name": FINISH, "instance": instance, "visible": visible}),
    ]
}
