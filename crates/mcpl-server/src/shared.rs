//! What every session of a server shares: the declarations in force, the principal store
//! and the settings. [`Server`](crate::Server) wraps it for apps and drivers; a session holds
//! it directly, so the session core never depends on the server that makes sessions.

use crate::clock::WallClock;
use crate::decl::Catalog;
use crate::schema::SchemaCache;
use crate::store::PrincipalStore;
use crate::update::CommitEnv;
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

/// The shared half of a server.
pub(crate) struct Shared {
    catalog: RwLock<Arc<Catalog>>,
    store: Arc<dyn PrincipalStore>,
    config: ServerConfig,
    /// Compiled schemas of definitions that arrive in principal state.
    schemas: SchemaCache,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(
        catalog: Catalog,
        config: ServerConfig,
        store: Arc<dyn PrincipalStore>,
    ) -> Self {
        Shared {
            catalog: RwLock::new(Arc::new(catalog)),
            store,
            config,
            schemas: SchemaCache::default(),
        }
    }

    /// Compiled schemas by content (a dynamic tool's own definitions).
    pub(crate) fn schemas(&self) -> &SchemaCache {
        &self.schemas
    }

    /// The declarations in force.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Puts `catalog` in force; returns the one it replaced.
    pub(crate) fn replace(&self, catalog: Arc<Catalog>) -> Arc<Catalog> {
        let mut slot = self.catalog.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *slot, catalog)
    }

    pub(crate) fn store(&self) -> &Arc<dyn PrincipalStore> {
        &self.store
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// What a commit at `now` under `catalog` needs.
    pub(crate) fn env<'a>(&'a self, catalog: &'a Catalog, now: Instant) -> CommitEnv<'a> {
        CommitEnv {
            catalog,
            now,
            clock: &self.config.clock,
            ended_ttl: self.config.ended_ttl,
        }
    }
}
