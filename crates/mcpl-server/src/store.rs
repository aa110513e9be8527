//! Principal state and the [`PrincipalStore`] seam (§5.6, §14).
//!
//! Toolsets belong to the principal, not to a connection: every connection of a principal
//! reads and changes the same [`PrincipalState`]. Sessions never call a store: they take the
//! state they need as input ([`Versioned`]) and hand changes out as a [`WriteSet`]; the
//! driver runs [`PrincipalStore`] calls asynchronously. [`MemoryStore`] keeps the states in
//! this process; a store for several replicas (`mcpl-server-redis`) implements the same
//! trait.

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{EndedRecord, InstanceName, Presence, ToolsetName};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
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
    /// This scope's own definition; `None`: the declared one. Shared with the hint entries
    /// that state it and with copies of the state, so neither copies its schema.
    pub definition: Option<Arc<Tool>>,
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

/// A principal's state as a store holds it, with its version: `0` when the store has none
/// (reading creates nothing, §5.6: a principal nobody has served has no state), then one
/// more for every write.
///
/// The state is shared, copy on write: the store, a write, a published change and every
/// session of the principal hold the same value until one of them edits it
/// (`Arc::make_mut`), so handing it around costs a reference count, not a copy.
#[derive(Debug, Clone, Default)]
pub struct Versioned {
    /// The state (empty when the store has none).
    pub state: Arc<PrincipalState>,
    /// The version it had when read.
    pub version: u64,
}

/// What a session asks its driver to store ([`crate::Effect::Write`]): the principal's new
/// state, written only if the store still holds the version the session read.
#[derive(Debug, Clone)]
pub struct WriteSet {
    /// Whose state.
    pub principal: Principal,
    /// The version the change was computed from.
    pub read: u64,
    /// The new state (shared with the session that wrote it); `None` forgets the principal
    /// (a per-connection principal at disconnect, §5.6).
    pub state: Option<Arc<PrincipalState>>,
}

/// How a write ended.
#[derive(Debug, Clone)]
pub enum Written {
    /// Stored under this new version.
    Done {
        /// The version the state has now.
        version: u64,
    },
    /// Another writer got in first: nothing was written; here is what the store holds now.
    Conflict(Versioned),
}

/// The store could not be reached or refused the command; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the shared principal store is unreachable ({0})")]
pub struct StoreError(pub String);

/// A store call in flight.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where principal state lives. Only a driver calls it, asynchronously: the session core
/// asks for reads and writes through [`crate::Effect::Load`] and [`crate::Effect::Write`]
/// and never waits on a store.
///
/// Writes are optimistic: [`write`](Self::write) stores the new state only if the version
/// is still the one read (one atomic step: a mutex here, a Lua script on Redis), and
/// otherwise answers [`Written::Conflict`] with the current state, on which the session
/// runs its step again.
pub trait PrincipalStore: Send + Sync + 'static {
    /// `principal`'s state and version (empty, version 0, when there is none).
    fn load<'a>(&'a self, principal: &'a Principal) -> StoreFuture<'a, Versioned>;

    /// Writes `write` if the stored version is still `write.read`.
    fn write<'a>(&'a self, write: &'a WriteSet) -> StoreFuture<'a, Written>;

    /// Every principal with state (for ends that apply to all, such as a removed toolset).
    fn principals(&self) -> StoreFuture<'_, Vec<Principal>>;
}

/// The default store: every principal's state in this process, behind one mutex. Its
/// futures are ready at once, and it can be used without any runtime through
/// [`load_now`](Self::load_now) and [`write_now`](Self::write_now) (test harnesses).
#[derive(Debug, Default)]
pub struct MemoryStore {
    states: Mutex<HashMap<Principal, Versioned>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Principal, Versioned>> {
        // A panic elsewhere poisons the lock; the states it guards are whole values.
        self.states.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `principal`'s state and version, now.
    pub fn load_now(&self, principal: &Principal) -> Versioned {
        self.lock().get(principal).cloned().unwrap_or_default()
    }

    /// Applies `write` now if its version is current.
    pub fn write_now(&self, write: &WriteSet) -> Written {
        let mut states = self.lock();
        let current = states.get(&write.principal).map_or(0, |v| v.version);
        if current != write.read {
            let now = states.get(&write.principal).cloned().unwrap_or_default();
            return Written::Conflict(now);
        }
        match &write.state {
            Some(state) => {
                let version = current + 1;
                states.insert(
                    write.principal.clone(),
                    Versioned {
                        state: state.clone(),
                        version,
                    },
                );
                Written::Done { version }
            }
            None => {
                states.remove(&write.principal);
                Written::Done { version: 0 }
            }
        }
    }

    /// Every principal with state, in order.
    pub fn principals_now(&self) -> Vec<Principal> {
        let mut all: Vec<Principal> = self.lock().keys().cloned().collect();
        all.sort();
        all
    }
}

impl PrincipalStore for MemoryStore {
    fn load<'a>(&'a self, principal: &'a Principal) -> StoreFuture<'a, Versioned> {
        Box::pin(std::future::ready(Ok(self.load_now(principal))))
    }

    fn write<'a>(&'a self, write: &'a WriteSet) -> StoreFuture<'a, Written> {
        Box::pin(std::future::ready(Ok(self.write_now(write))))
    }

    fn principals(&self) -> StoreFuture<'_, Vec<Principal>> {
        Box::pin(std::future::ready(Ok(self.principals_now())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_6_a_write_from_a_stale_version_changes_nothing_and_returns_the_current_state() {
        let store = MemoryStore::new();
        let ada = Principal::authenticated("ada");
        assert_eq!(store.load_now(&ada).version, 0, "reading creates nothing");
        assert!(store.principals_now().is_empty());
        let mut state = PrincipalState {
            next_instance: 1,
            ..PrincipalState::default()
        };
        let first = WriteSet {
            principal: ada.clone(),
            read: 0,
            state: Some(Arc::new(state.clone())),
        };
        assert!(matches!(
            store.write_now(&first),
            Written::Done { version: 1 }
        ));
        // A second writer that also read version 0 loses, and sees the winner's state.
        state.next_instance = 9;
        let stale = WriteSet {
            principal: ada.clone(),
            read: 0,
            state: Some(Arc::new(state)),
        };
        match store.write_now(&stale) {
            Written::Conflict(now) => {
                assert_eq!((now.version, now.state.next_instance), (1, 1));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert_eq!(store.load_now(&ada).state.next_instance, 1);
        let forget = WriteSet {
            principal: ada.clone(),
            read: 1,
            state: None,
        };
        assert!(matches!(
            store.write_now(&forget),
            Written::Done { version: 0 }
        ));
        assert!(store.principals_now().is_empty());
    }
}
