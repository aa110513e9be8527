//! What the reference fixture's connections share (a leaf under them): the [`Faults`] that
//! break it, a principal's [`World`], the work a connection's task is handed, and the
//! shapes of its answers.

use crate::fixture::*;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use mcpl_rpc::Responder;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

macro_rules! faults {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Ways to break the fixture, one rule each: the broken fixtures the suite's own
        /// mutation test runs (`tests/mutation.rs`), each behind its flag.
        #[derive(Debug, Clone, Copy, Default)]
        pub struct Faults {
            $($(#[doc = $doc])* pub $name: bool,)*
        }

        impl Faults {
            /// Every fault's name (its field name), in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The fault called `name` (a field name, such as `reuse_rev`) switched on in
            /// `self`; `None` for an unknown name.
            pub fn with(mut self, name: &str) -> Option<Faults> {
                match name {
                    $(stringify!($name) => self.$name = true,)*
                    _ => return None,
                }
                Some(self)
            }
        }
    };
}

faults! {
    /// Gives the third hinted message the same rev as the second.
    reuse_rev,
    /// Skips rev 3.
    skip_rev,
    /// Leaves the full statement out of a toolsets/list when nothing the host opened is open.
    no_hints_on_empty_list,
    /// Appends `x` to every proposed instance name.
    rename_instance,
    /// Also pushes a call's own consequences (vector 2).
    push_own_consequences,
    /// Sends hints to hosts without toolHints (vector 8).
    hints_to_plain_hosts,
    /// Keeps no ended records (vector 13).
    no_ended_records,
    /// Accepts any instance name (vector 34).
    accept_bad_names,
    /// Answers an ambiguous call by picking an instance (vector 6).
    guess_instance,
    /// Sends something else's consequences as tools/hints even with a push grant (vector 3).
    never_push,
    /// Drops the consequences of a cancelled call (vector 28).
    drop_cancelled,
    /// Opens again instead of adopting (vector 17).
    no_adoption,
    /// Leaves invisible tools out of tools/list (vector 1).
    hide_invisible,
    /// Leaves `instance` out of an open's result (vector 5).
    no_instance_in_result,
    /// Sends tools/list_changed when an instance opens (vector 7).
    list_changed_on_open,
    /// Forgets the principal's instances when a connection closes, recording nothing (vector 9).
    forget_on_disconnect,
    /// Opens an undeclared toolset when asked (vector 10).
    open_undeclared,
    /// Restates the hints of a push the host refused or failed (vectors 11, 29).
    restate_refused,
    /// Tells the principal's other connections nothing (vector 14).
    no_fan_out,
    /// Keeps listing the moved tool as static (vector 15).
    move_not_listed,
    /// Closes without hints (vector 16).
    close_without_hints,
    /// One definition for every instance, and no per-instance check (vector 23).
    one_definition,
    /// The compatibility choose tool does nothing (vector 26).
    choose_ignored,
    /// The full statement leaves out dynamic tools outside declared toolsets (vector 30).
    statement_without_loose_tools,
    /// Removes a declaration without mcpl/manifestChanged (vector 31).
    silent_manifest_change,
    /// Pushes without a pushEvents grant (vector 33).
    push_without_grant,
    /// Keeps flat toolsets closed for hosts without toolHints (vector 38).
    plain_flat_closed,
    /// Lowercases every proposed instance name (vector 18).
    lowercase_names,
    /// Cuts proposed instance names to 16 characters (vector 18).
    truncate_names,
    /// Accepts instance names that start with `_` (vector 34).
    accept_leading_underscore,
    /// Accepts instance names with a `.` in them (vector 34).
    accept_dotted_names,
    /// Answers every toolsets/open twice (one response per request).
    double_response,
    /// Answers toolsets/close with an id one above the request's (a wrong id).
    wrong_response_id,
    /// Answers tools/call of cf_echo with the request's numeric id turned into a string.
    string_response_id,
    /// Answers a toolsets/close of something not open with `result: null` (not an object).
    null_result,
    /// Leaves the oldest open instance out of the full statement when two or more are open (vector 37).
    statement_omits_oldest,
    /// Leaves the newest open instance out of the full statement when three or more are open (vector 37).
    statement_omits_newest,
    /// Keeps closed instances' tools visible in the full statement (vector 37).
    statement_shows_closed,
    /// Lists cf_flat, a tool of a declared toolset, as static with no toolset (vector 1).
    flat_tool_static,
    /// Leaves cf_opened, the default-open toolset's tool, out of tools/list (vector 1).
    opened_tool_unlisted,
    /// Lists every ended record twice in toolsets/list (vector 13).
    duplicate_ended,
    /// Gives every end the same ended id (vector 13).
    reuse_ended_id,
    /// Leaves the `ended` id out of the closing toolsets entry (vectors 13, 16).
    close_without_ended_id,
    /// Drops an ended record once one toolsets/list has carried it (vector 13).
    ended_expires_at_once,
}

/// Locks a mutex, taking the data even if a panicking thread poisoned it.
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A principal's state.
pub(super) struct World {
    pub(super) instances: BTreeMap<String, Option<i64>>,
    pub(super) flat_open: bool,
    pub(super) default_open: bool,
    pub(super) flat_declared: bool,
    pub(super) mover_dynamic: bool,
    pub(super) ended: Vec<Value>,
    pub(super) next_ended: u64,
    pub(super) next_auto: u64,
    pub(super) conns: Vec<(u64, mpsc::UnboundedSender<Internal>)>,
    pub(super) next_conn: u64,
    /// When each instance ever opened was last opened (a counter), for the statement's order.
    pub(super) age: BTreeMap<String, u64>,
}

impl World {
    pub(super) fn new() -> Self {
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
            age: BTreeMap::new(),
        }
    }

    /// Notes that `instance` opened now.
    pub(super) fn note_open(&mut self, instance: &str) {
        let next = self.age.len() as u64 + self.age.values().max().copied().unwrap_or(0) + 1;
        self.age.insert(instance.to_owned(), next);
    }

    pub(super) fn record_end(
        &mut self,
        toolset: &str,
        instance: Option<&str>,
        reason: &str,
        faults: &Faults,
    ) -> String {
        let id = format!("e-{}", self.next_ended);
        if !faults.reuse_ended_id {
            self.next_ended += 1;
        }
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

/// Takes the `ended` ids out of a hint body's toolsets entries (a broken fixture).
pub(super) fn strip_ended(body: &mut Value) {
    if let Some(entries) = body.get_mut("toolsets").and_then(Value::as_array_mut) {
        for e in entries {
            if let Some(o) = e.as_object_mut() {
                o.remove("ended");
            }
        }
    }
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
