//! [`Server`]: a server's declarations, principal store and settings (the `shared` half),
//! the sessions it makes, and the pure commits a driver runs around store reads and writes.

use crate::decl::Catalog;
use crate::error::Error;
use crate::principal::{ConnectionId, Principal};
use crate::session::Session;
use crate::shared::{ServerConfig, Shared};
use crate::store::{MemoryStore, OpenKey, PrincipalState, PrincipalStore};
use crate::update::{self, CommitEnv, PrincipalChange, Touch, Update};
use mcpl_protocol::rfc014::ToolsetName;
use std::sync::Arc;
use std::time::Instant;

/// A server: its declarations, its principal store and its settings. Cheap to clone; every
/// connection's [`Session`] shares it.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", self.inner.config())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server over `catalog` with the in-memory store.
    pub fn new(catalog: Catalog, config: ServerConfig) -> Self {
        Self::with_store(catalog, config, Arc::new(MemoryStore::new()))
    }

    /// A server over `catalog` with `store`.
    pub fn with_store(
        catalog: Catalog,
        config: ServerConfig,
        store: Arc<dyn PrincipalStore>,
    ) -> Self {
        Server {
            inner: Arc::new(Shared::new(catalog, config, store)),
        }
    }

    /// The declarations in force.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog()
    }

    /// The principal store (for the driver; the session core never calls it).
    pub fn store(&self) -> &Arc<dyn PrincipalStore> {
        self.inner.store()
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        self.inner.config()
    }

    /// A session for a new connection of `principal`. Its first effect is
    /// [`Effect::Load`](crate::Effect::Load): it needs the principal's state before it
    /// answers anything.
    pub fn session(&self, principal: Principal, connection: ConnectionId, now: Instant) -> Session {
        Session::new(self.inner.clone(), principal, connection, now)
    }

    /// `state` as the principal's first connection sees it: default-open toolsets open
    /// (§5.1). For reading state a store returned.
    pub fn seeded(&self, mut state: PrincipalState) -> PrincipalState {
        update::seed(&self.catalog(), &mut state);
        state
    }

    pub(crate) fn env<'a>(&'a self, catalog: &'a Catalog, now: Instant) -> CommitEnv<'a> {
        self.inner.env(catalog, now)
    }

    /// Commits `update` to `state`, `principal`'s state as read from the store, on the
    /// server's initiative (a bot's move, a timer, another principal's action), and returns
    /// the change for every session of the principal once the caller stored `state`: they
    /// carry it on a push that explains it, or as `tools/hints` (§6.2). A bad update changes
    /// nothing. Pure: the driver reads and writes the store around it, and runs it again on
    /// a fresh copy when another writer got in first.
    pub fn apply_to(
        &self,
        now: Instant,
        principal: &Principal,
        state: &mut PrincipalState,
        update: &Update,
    ) -> Result<PrincipalChange, Error> {
        let catalog = self.catalog();
        let env = self.env(&catalog, now);
        update::seed(&catalog, state);
        let touches = update::commit(&env, state, update)?;
        Ok(PrincipalChange {
            principal: principal.clone(),
            origin: None,
            touches,
            event: update.event.clone(),
            suggest: update.suggest.clone(),
            state: None,
            restated: false,
        })
    }

    /// Replaces the declarations (vector 31) and returns what went: toolsets that were
    /// removed, or lost or gained `instances`. Their open instances must end for every
    /// principal with state: run [`end_removed`](Self::end_removed) on each principal's
    /// stored state, store it, and hand the change to its sessions. Then tell every session
    /// through [`Session::handle_catalog_change`], which announces `mcpl/manifestChanged`.
    pub fn replace_catalog(&self, catalog: Catalog) -> Removed {
        let new = Arc::new(catalog);
        let old = self.inner.replace(new.clone());
        let toolsets = old
            .toolsets
            .values()
            .filter(|t| {
                new.entry(t.name.as_str())
                    .is_none_or(|n| n.instanced() != t.instanced())
            })
            .map(|t| t.name.clone())
            .collect();
        Removed { toolsets, old }
    }

    /// Ends, in `state` (`principal`'s stored state), whatever is open of the toolsets
    /// `removed` names, with `ended` records; the change for the principal's sessions, or
    /// `None` when nothing of them was open. Pure, like [`apply_to`](Self::apply_to).
    pub fn end_removed(
        &self,
        now: Instant,
        removed: &Removed,
        principal: &Principal,
        state: &mut PrincipalState,
    ) -> Option<PrincipalChange> {
        let env = self.env(&removed.old, now);
        let keys: Vec<OpenKey> = state
            .open
            .keys()
            .filter(|k| removed.toolsets.contains(&k.toolset))
            .cloned()
            .collect();
        let reason = "the server no longer offers this toolset".to_owned();
        let touches: Vec<Touch> = keys
            .into_iter()
            .filter_map(|key| {
                let id = update::end(&env, state, &key, Some(reason.clone()))?;
                Some(Touch::State {
                    key,
                    tools: true,
                    ended: Some(id),
                    reason: Some(reason.clone()),
                })
            })
            .collect();
        (!touches.is_empty()).then(|| PrincipalChange {
            principal: principal.clone(),
            origin: None,
            touches,
            event: None,
            suggest: Vec::new(),
            state: None,
            restated: false,
        })
    }
}

/// Toolsets a [`Server::replace_catalog`] took away, with the declarations they had.
#[derive(Debug, Clone)]
pub struct Removed {
    toolsets: Vec<ToolsetName>,
    old: Arc<Catalog>,
}

impl Removed {
    /// Whether nothing went (then no principal's state changes).
    pub fn is_empty(&self) -> bool {
        self.toolsets.is_empty()
    }

    /// The toolsets that went.
    pub fn toolsets(&self) -> &[ToolsetName] {
        &self.toolsets
    }
}
