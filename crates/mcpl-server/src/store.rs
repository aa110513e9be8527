//! Principal state and the [`PrincipalStore`] seam (§5.6, §14).
//!
//! Toolsets belong to the principal, not to a connection: every connection of a principal
//! reads and changes the same [`PrincipalState`]. [`MemoryStore`] keeps it in this process; a
//! store for several replicas (`mcpl-server-redis`) implements the same trait.

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{EndedRecord, InstanceName, Presence, ToolsetName};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use crate::principal::{ConnectionId, Principal};

/// Which open thing: a toolset, or one instance of an instanced toolset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpenKey {
    /// The toolset.
    pub toolset: ToolsetName,
    /// The instance, for instanced toolsets.
    pub instance: Option<InstanceName>,
}

impl OpenKey {
    /// The key of `toolset` (and `instance`).
    pub fn new(toolset: ToolsetName, instance: Option<InstanceName>) -> Self {
        OpenKey { toolset, instance }
    }

    /// "`go` instance `vs-bot`" or "`notes`", for messages.
    pub fn describe(&self) -> String {
        match &self.instance {
            Some(i) => format!("instance `{i}` of `{}`", self.toolset),
            None => format!("toolset `{}`", self.toolset),
        }
    }
}

/// Who opened something (kept for policy and diagnostics).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Opener {
    /// Open from the start (`default: "open"`).
    Default,
    /// A host, through `toolsets/open` or a compatibility tool, on this connection.
    Host(ConnectionId),
    /// The server itself (app code).
    Server,
}

/// Where an open is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Phase {
    /// The app's open handler is running; not listed yet.
    Opening,
    /// Open.
    Open,
    /// The app's close handler is running.
    Closing,
}

/// One tool's state in one scope. `None` members read as the declaration's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolState {
    /// Visible now; `None`: the declared initial visibility.
    pub visible: Option<bool>,
    /// This scope's own definition; `None`: the declared one.
    pub definition: Option<Tool>,
}

/// An open toolset or instance (§14).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenState {
    /// The options in force.
    pub options: Value,
    /// The current title.
    pub title: String,
    /// Who opened it.
    pub opener: Opener,
    /// Per-tool visibility and definitions in this toolset or instance.
    pub tools: BTreeMap<String, ToolState>,
    pub(crate) phase: Phase,
}

impl OpenState {
    /// Whether it is listed as open (its open handler finished).
    pub fn is_listed(&self) -> bool {
        self.phase != Phase::Opening
    }
}

/// An ended record with its expiry (§5.3).
#[derive(Debug, Clone)]
pub struct StoredEnd {
    /// The record as listed.
    pub record: EndedRecord,
    /// When it stops being listed.
    pub expires: Instant,
}

/// Everything the server keeps for one principal (§14, "Server, per principal").
#[derive(Debug, Clone, Default)]
pub struct PrincipalState {
    /// Open toolsets and instances.
    pub open: BTreeMap<OpenKey, OpenState>,
    /// Tools outside declared toolsets (static tools, dynamic tools without a toolset, and
    /// tools of undeclared groups): visibility and definitions.
    pub free: BTreeMap<String, ToolState>,
    /// Presence moves (§4.2) in force, by tool.
    pub presence: BTreeMap<String, Presence>,
    /// Ended records until they expire.
    pub ended: Vec<StoredEnd>,
    /// The next ended-record id; ids are never reused.
    pub next_ended: u64,
    /// The next number for a server-chosen instance name.
    pub next_instance: u64,
    /// Whether default-open toolsets have been opened for this principal's session.
    pub seeded: bool,
}

impl PrincipalState {
    /// Drops ended records that expired at `now`.
    pub fn expire(&mut self, now: Instant) {
        self.ended.retain(|e| e.expires > now);
    }

    /// The earliest expiry of an ended record.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.ended.iter().map(|e| e.expires).min()
    }

    /// The open (listed) instances of `toolset`, in name order.
    pub fn instances_of(&self, toolset: &str) -> Vec<InstanceName> {
        self.open
            .iter()
            .filter(|(k, s)| k.toolset.as_str() == toolset && s.is_listed())
            .filter_map(|(k, _)| k.instance.clone())
            .collect()
    }

    /// Whether `key` is open and listed.
    pub fn is_open(&self, key: &OpenKey) -> bool {
        self.open.get(key).is_some_and(OpenState::is_listed)
    }
}

/// Where principal state lives. Every method is one atomic step for that principal.
///
/// The session core calls it synchronously; an implementation backed by a remote engine
/// either blocks for its round trip (as `mcpl-server-redis` does, over loopback-fast Redis)
/// or keeps its own cache.
pub trait PrincipalStore: Send + Sync + 'static {
    /// Runs `f` on `principal`'s state (created empty if absent), atomically. A store that
    /// cannot hold a lock across the call (several processes) may run `f` again on a fresh
    /// copy when another writer got in first; only the last run's edits are kept, so `f`
    /// must edit only the state it is given.
    fn update(&self, principal: &Principal, f: &mut dyn FnMut(&mut PrincipalState));

    /// Forgets `principal`'s state entirely (a per-connection principal at disconnect).
    fn remove(&self, principal: &Principal);

    /// A copy of `principal`'s state, or `None` when it has none. Reading creates nothing
    /// (§5.6: a principal nobody has served has no state), which is why there is no default
    /// going through [`update`](Self::update).
    fn get(&self, principal: &Principal) -> Option<PrincipalState>;

    /// Every principal with state (for ends that apply to all, such as a removed toolset).
    fn principals(&self) -> Vec<Principal>;

    /// Why new opens must be refused now, in words for the host (a store whose engine is
    /// unreachable cannot make an open visible to the principal's other replicas), or
    /// `None` to accept them. The default accepts.
    fn refuse_opens(&self) -> Option<String> {
        None
    }
}

/// Runs `f` on `principal`'s state in `store` and returns its value.
///
/// `f` must be a pure edit of the state it is given: a store shared by several processes
/// (optimistic transactions) may run it more than once, each time on a fresh copy, and
/// keeps only the last run's edits and value. Every call site in this crate computes from
/// the state and from values it only reads.
pub fn with_state<R>(
    store: &dyn PrincipalStore,
    principal: &Principal,
    mut f: impl FnMut(&mut PrincipalState) -> R,
) -> R {
    let mut out = None;
    store.update(principal, &mut |state| out = Some(f(state)));
    out.expect("PrincipalStore::update must run its closure at least once")
}

/// The default store: every principal's state in this process, behind one mutex.
#[derive(Debug, Default)]
pub struct MemoryStore {
    states: Mutex<HashMap<Principal, PrincipalState>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PrincipalStore for MemoryStore {
    fn update(&self, principal: &Principal, f: &mut dyn FnMut(&mut PrincipalState)) {
        // A panic in another session's closure poisons the lock; the state it left is still
        // a set of values, so carry on with it.
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        f(states.entry(principal.clone()).or_default());
    }

    fn remove(&self, principal: &Principal) {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        states.remove(principal);
    }

    fn get(&self, principal: &Principal) -> Option<PrincipalState> {
        let states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        states.get(principal).cloned()
    }

    fn principals(&self) -> Vec<Principal> {
        let states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<Principal> = states.keys().cloned().collect();
        all.sort();
        all
    }
}
