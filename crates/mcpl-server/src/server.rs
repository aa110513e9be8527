//! The shared half of a server: declarations, the principal store and settings. Each
//! connection's [`Session`] holds a clone.

use crate::clock::WallClock;
use crate::decl::Catalog;
use crate::error::Error;
use crate::principal::{ConnectionId, Principal};
use crate::session::Session;
use crate::store::{MemoryStore, OpenKey, PrincipalState, PrincipalStore, with_state};
use crate::update::{self, CommitEnv, PrincipalChange, Touch, Update};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How long ended records stay listed unless configured otherwise (§5.3: an hour).
pub const DEFAULT_ENDED_TTL: Duration = Duration::from_secs(3600);

/// How many instances one principal may have open at once unless configured otherwise.
pub(crate) const DEFAULT_MAX_OPEN_INSTANCES: usize = 128;

/// How many `push/event` requests one connection may have unanswered unless configured
/// otherwise.
pub(crate) const DEFAULT_MAX_PENDING_EVENTS: usize = 256;

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How long an ended record stays in `toolsets/list` (§5.3).
    pub ended_ttl: Duration,
    /// Anchors `now` to wall-clock time, for timestamps.
    pub clock: WallClock,
    /// The most instances (of instanced toolsets) one principal may have open at once. A
    /// host's open past it is refused with an error naming the limit; opens of toolsets
    /// without instances, adoptions and what app code opens itself are not counted against it.
    pub max_open_instances: usize,
    /// The most `push/event` requests one connection may have unanswered. Past it, a change
    /// goes as `tools/hints` without its event (the hints are never held back) and the drop
    /// is logged; pushes resume as the host answers.
    pub max_pending_events: usize,
}

impl ServerConfig {
    /// Default settings with `clock`.
    pub fn new(clock: WallClock) -> Self {
        ServerConfig {
            ended_ttl: DEFAULT_ENDED_TTL,
            clock,
            max_open_instances: DEFAULT_MAX_OPEN_INSTANCES,
            max_pending_events: DEFAULT_MAX_PENDING_EVENTS,
        }
    }
}

struct Inner {
    catalog: RwLock<Arc<Catalog>>,
    store: Arc<dyn PrincipalStore>,
    config: ServerConfig,
}

/// A server: its declarations, its principal store and its settings. Cheap to clone; every
/// connection's [`Session`] shares it.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.inner.config)
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
            inner: Arc::new(Inner {
                catalog: RwLock::new(Arc::new(catalog)),
                store,
                config,
            }),
        }
    }

    /// The declarations in force.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The principal store.
    pub fn store(&self) -> &dyn PrincipalStore {
        &*self.inner.store
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// A session for a new connection of `principal`.
    pub fn session(&self, principal: Principal, connection: ConnectionId, now: Instant) -> Session {
        Session::new(self.clone(), principal, connection, now)
    }

    /// A copy of `principal`'s state (for tests, diagnostics and app code that reads it), as
    /// the principal's first connection would see it: default-open toolsets open. A read:
    /// the store is not changed, and a principal nobody has served gets no state.
    pub fn state(&self, principal: &Principal) -> PrincipalState {
        let mut state = self.store().get(principal).unwrap_or_default();
        update::seed(&self.catalog(), &mut state);
        state
    }

    pub(crate) fn env<'a>(&'a self, catalog: &'a Catalog, now: Instant) -> CommitEnv<'a> {
        CommitEnv {
            catalog,
            now,
            clock: &self.inner.config.clock,
            ended_ttl: self.inner.config.ended_ttl,
        }
    }

    /// Commits `update` to `principal`'s state on the server's initiative (a bot's move, a
    /// timer, another principal's action) and returns the change for the driver to hand to
    /// every session of the principal: they carry it on a push that explains it, or as
    /// `tools/hints` (§6.2). A bad update changes nothing.
    pub fn apply(
        &self,
        now: Instant,
        principal: &Principal,
        update: Update,
    ) -> Result<PrincipalChange, Error> {
        self.apply_from(now, principal, update, None)
    }

    pub(crate) fn apply_from(
        &self,
        now: Instant,
        principal: &Principal,
        update: Update,
        origin: Option<ConnectionId>,
    ) -> Result<PrincipalChange, Error> {
        let catalog = self.catalog();
        let env = self.env(&catalog, now);
        let touches = with_state(self.store(), principal, |s| {
            update::seed(&catalog, s);
            update::commit(&env, s, &update)
        })?;
        Ok(PrincipalChange {
            principal: principal.clone(),
            origin,
            touches,
            event: update.event,
            suggest: update.suggest,
        })
    }

    /// Replaces the declarations (vector 31). Open instances of toolsets that were removed, or
    /// lost or gained `instances`, end for every principal in the store, with `ended`
    /// records; the returned changes carry those ends to their sessions. Then tell every
    /// session through [`Session::handle_catalog_change`], which announces
    /// `mcpl/manifestChanged`.
    pub fn replace_catalog(&self, now: Instant, catalog: Catalog) -> Vec<PrincipalChange> {
        let new = Arc::new(catalog);
        let old = {
            let mut slot = self
                .inner
                .catalog
                .write()
                .unwrap_or_else(|p| p.into_inner());
            std::mem::replace(&mut *slot, new.clone())
        };
        let gone: Vec<_> = old
            .toolsets
            .values()
            .filter(|t| {
                new.entry(t.name.as_str())
                    .is_none_or(|n| n.instanced() != t.instanced())
            })
            .map(|t| t.name.clone())
            .collect();
        let mut changes = Vec::new();
        if gone.is_empty() {
            return changes;
        }
        let env = self.env(&old, now);
        for principal in &self.store().principals() {
            let touches = with_state(self.store(), principal, |s| {
                let keys: Vec<OpenKey> = s
                    .open
                    .keys()
                    .filter(|k| gone.contains(&k.toolset))
                    .cloned()
                    .collect();
                let reason = "the server no longer offers this toolset".to_owned();
                keys.into_iter()
                    .filter_map(|key| {
                        let id = update::end(&env, s, &key, Some(reason.clone()))?;
                        Some(Touch::State {
                            key,
                            tools: true,
                            ended: Some(id),
                            reason: Some(reason.clone()),
                        })
                    })
                    .collect::<Vec<_>>()
            });
            if !touches.is_empty() {
                changes.push(PrincipalChange {
                    principal: principal.clone(),
                    origin: None,
                    touches,
                    event: None,
                    suggest: Vec::new(),
                });
            }
        }
        changes
    }
}
