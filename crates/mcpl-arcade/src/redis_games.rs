//! The arcade on Redis (feature `redis`): [`RedisGames`], the games in one shared document
//! beside the principal state, and [`start_on_redis`], which runs a replica of the arcade
//! on them.
//!
//! Every replica started with the same Redis and prefix serves one arcade: principals'
//! toolsets live in `mcpl_server_redis::RedisStore`, changes reach the other replicas'
//! connections through `mcpl_server_redis::Fanout` (each connection on its own revs,
//! RFC-014 §5.6, §6.1), and every game, seat, challenge and standing lives in one document
//! (`PREFIX:doc:games`), edited by one optimistic transaction per step. So any replica can
//! serve a game's next move, including after the replica that served the last one is gone.
//!
//! Not shared: a bot move owed is made by the replica that served the player's move. If that
//! replica dies before making it, the move is lost; the game waits for it and ends by the
//! idle timeout like any idle game.

use std::sync::Arc;

use mcpl_server_redis::{Document, Fanout, RedisStore};

use crate::arcade::ArcadeConfig;
use crate::error::ArcadeError;
use crate::serve::{ArcadeServer, Backing, start_with};
use crate::store::{GameStore, GameStoreError, Games};

/// The name of the games' document under the store's prefix (`PREFIX:doc:games`).
pub const GAMES_DOCUMENT: &str = "games";

/// Every game in one Redis document, shared by every replica on the same Redis and prefix.
/// Each step is one optimistic transaction (a step may run again on a fresher copy when
/// another replica wrote first); an unreachable Redis fails the step with its error text.
#[derive(Debug)]
pub struct RedisGames {
    doc: Document<Games>,
}

impl RedisGames {
    /// The games kept beside `store`'s principal state, under its prefix.
    pub fn new(store: &Arc<RedisStore>) -> Self {
        RedisGames {
            doc: store.document(GAMES_DOCUMENT),
        }
    }

    /// The document behind it (to read every game at once, or for its key).
    pub fn document(&self) -> &Document<Games> {
        &self.doc
    }
}

impl GameStore for RedisGames {
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError> {
        self.doc
            .update(|games| f(games))
            .map_err(|e| GameStoreError(e.to_string()))
    }
}

/// One replica of the arcade on Redis: the server and its fan-out, which live and stop
/// together (dropping it stops both).
pub struct RedisArcade {
    // Declared first so it stops relaying before the server goes.
    fanout: Fanout,
    server: ArcadeServer,
    store: Arc<RedisStore>,
}

impl std::fmt::Debug for RedisArcade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisArcade")
            .field("store", &self.store)
            .field("fanout", &self.fanout)
            .finish_non_exhaustive()
    }
}

impl RedisArcade {
    /// The arcade server: serve connections with its `runtime()`.
    pub fn server(&self) -> &ArcadeServer {
        &self.server
    }

    /// The principal store this replica shares with the others.
    pub fn store(&self) -> &Arc<RedisStore> {
        &self.store
    }
}

/// Starts one replica of the arcade on the Redis at `url` (`redis://HOST:PORT`) with its
/// keys under `prefix` (the same for every replica of one deployment): opens the store
/// (checking Redis answers), builds the arcade on it ([`start_with`]), and subscribes to
/// the other replicas' changes. Call inside a tokio runtime. A bad URL or an unreachable
/// Redis is an [`ArcadeError::Store`] saying so.
pub async fn start_on_redis(
    config: ArcadeConfig,
    url: &str,
    prefix: &str,
    conformance: bool,
) -> Result<RedisArcade, ArcadeError> {
    let opened = RedisStore::open(url, prefix).await;
    let store = Arc::new(opened.map_err(|e| GameStoreError(e.to_string()))?);
    let backing = Backing {
        principals: store.clone(),
        games: Arc::new(RedisGames::new(&store)),
    };
    let server = start_with(config, backing, conformance)?;
    let fanout = Fanout::start(server.handle(), store.clone())
        .await
        .map_err(|e| GameStoreError(e.to_string()))?;
    Ok(RedisArcade {
        fanout,
        server,
        store,
    })
}
