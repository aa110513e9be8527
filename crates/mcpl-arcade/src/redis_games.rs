//! The arcade on Redis (feature `redis`): [`RedisGames`], the games in Redis with a key per
//! game beside the principal state, and [`start_on_redis`], which runs a replica of the
//! arcade on them.
//!
//! Every replica started with the same Redis and prefix serves one arcade: principals'
//! toolsets live in `mcpl_server_redis::RedisStore`, changes reach the other replicas'
//! connections through `mcpl_server_redis::Fanout` (each connection on its own revs,
//! RFC-014 §5.6, §6.1), and every game lives under a key of its own (`PREFIX:game:N`, with
//! its seats and any pending challenge), written by one Lua script per step that checks the
//! versions of what the step changed; standings are counters. So any replica can serve a
//! game's next move, including after the replica that served the last one is gone, and
//! moves in different games never contend.
//!
//! Not shared: a bot move owed is made by the replica that served the player's move. If that
//! replica dies before making it, the move is lost; the game waits for it and ends by the
//! idle timeout like any idle game.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpl_server_redis::{Fanout, RedisStore};

use crate::arcade::ArcadeConfig;
use crate::error::ArcadeError;
use crate::serve::{ArcadeServer, Backing, start_with};
use crate::store::{GameStore, GameStoreError, Games, Record};
use crate::table::Table;

/// How long to wait for Redis to accept a connection or answer a command.
const TIMEOUT: Duration = Duration::from_secs(2);

/// How many times a step runs before giving up when other writers keep getting in first.
const MAX_ATTEMPTS: usize = 1_000;

/// Reads every game: `KEYS[1]` the meta hash (`v` the version of the set of tables, `next`
/// the last table number), `KEYS[2]` the set of table numbers, `KEYS[3]` the standings hash;
/// `ARGV[1]` the prefix of table keys. Answers `{set version, next, standings as field/value
/// pairs, tables as number/version/JSON triples}`.
const LOAD: &str = r"
local out_tables = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local t = redis.call('HMGET', ARGV[1] .. id, 'v', 's')
  if t[2] then
    table.insert(out_tables, id)
    table.insert(out_tables, t[1])
    table.insert(out_tables, t[2])
  end
end
return {
  redis.call('HGET', KEYS[1], 'v') or '0',
  redis.call('HGET', KEYS[1], 'next') or '0',
  redis.call('HGETALL', KEYS[3]),
  out_tables,
}
";

/// Writes one step's changes if nothing it changed moved meanwhile. Same keys as [`LOAD`];
/// `ARGV`: the table key prefix, the set version read, `1` if the step added or removed
/// tables (then the set version must be unchanged), the new last table number, the number of
/// tables changed followed by number/version read/JSON (empty: removed) triples, then the
/// number of standing increments followed by field/increment pairs. Answers 1 when written,
/// 0 on a conflict.
const WRITE: &str = r"
local i = 2
local set_version = tonumber(ARGV[i]); i = i + 1
local set_changed = ARGV[i] == '1'; i = i + 1
local next_table = ARGV[i]; i = i + 1
local n = tonumber(ARGV[i]); i = i + 1
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if set_changed and current ~= set_version then
  return 0
end
local first = i
for k = 1, n do
  local v = tonumber(redis.call('HGET', ARGV[1] .. ARGV[i], 'v') or '0')
  if v ~= tonumber(ARGV[i + 1]) then
    return 0
  end
  i = i + 3
end
i = first
for k = 1, n do
  local key = ARGV[1] .. ARGV[i]
  if ARGV[i + 2] == '' then
    redis.call('DEL', key)
    redis.call('SREM', KEYS[2], ARGV[i])
  else
    redis.call('HSET', key, 'v', tonumber(ARGV[i + 1]) + 1, 's', ARGV[i + 2])
    redis.call('SADD', KEYS[2], ARGV[i])
  end
  i = i + 3
end
if set_changed then
  redis.call('HSET', KEYS[1], 'v', current + 1, 'next', next_table)
end
local m = tonumber(ARGV[i]); i = i + 1
for k = 1, m do
  redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1])
  i = i + 2
end
return 1
";

/// Every game in Redis, a key per game, shared by every replica on the same Redis and
/// prefix: `PREFIX:game:N` (the table's record and a version), `PREFIX:games` (the set of
/// table numbers), `PREFIX:games:meta` (the set's version and the last table number) and
/// `PREFIX:standings` (wins, losses and draws by player, incremented).
///
/// A step reads every game in one round trip, runs on them, and writes only what it
/// changed in one Lua script that checks the versions of the tables it changed (and of the
/// set of tables when it added or removed one); on a conflict the step runs again on fresh
/// games. So moves in different games never contend. An unreachable Redis fails the step
/// with its error text.
pub struct RedisGames {
    client: redis::Client,
    conn: Mutex<Option<redis::Connection>>,
    prefix: String,
    store: Arc<RedisStore>,
}

impl std::fmt::Debug for RedisGames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisGames")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// The games as read, with what a write must check.
struct Read {
    games: Games,
    set_version: u64,
    versions: BTreeMap<u64, u64>,
    json: BTreeMap<u64, String>,
}

impl RedisGames {
    /// The games kept beside `store`'s principal state, under `prefix` (the store's).
    pub fn new(store: &Arc<RedisStore>, prefix: &str) -> Self {
        RedisGames {
            client: store.client().clone(),
            conn: Mutex::new(None),
            prefix: prefix.to_owned(),
            store: store.clone(),
        }
    }

    fn key(&self, what: &str) -> String {
        format!("{}:{what}", self.prefix)
    }

    fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, GameStoreError> {
        let mut slot = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let opened = self
                .client
                .get_connection_with_timeout(TIMEOUT)
                .and_then(|c| {
                    c.set_read_timeout(Some(TIMEOUT))?;
                    c.set_write_timeout(Some(TIMEOUT))?;
                    Ok(c)
                });
            match opened {
                Ok(c) => *slot = Some(c),
                Err(e) => {
                    self.store.report_reachable(false);
                    return Err(GameStoreError(e.to_string()));
                }
            }
        }
        let result = f(slot.as_mut().expect("connected above"));
        if result.is_err() {
            *slot = None;
        }
        self.store.report_reachable(result.is_ok());
        result.map_err(|e| GameStoreError(e.to_string()))
    }

    fn read(&self) -> Result<Read, GameStoreError> {
        type Loaded = (String, String, Vec<String>, Vec<String>);
        let (set_version, next, standings, tables): Loaded = self.with_conn(|c| {
            redis::cmd("EVAL")
                .arg(LOAD)
                .arg(3)
                .arg(self.key("games:meta"))
                .arg(self.key("games"))
                .arg(self.key("standings"))
                .arg(self.key("game:"))
                .query(c)
        })?;
        let bad = |why: String| GameStoreError(format!("bad stored games: {why}"));
        let mut records: BTreeMap<String, Record> = BTreeMap::new();
        for pair in standings.chunks(2) {
            let [field, value] = pair else { continue };
            let (player, what) = field.rsplit_once(':').ok_or_else(|| bad(field.clone()))?;
            let n: u32 = value.parse().map_err(|_| bad(field.clone()))?;
            let record = records.entry(player.to_owned()).or_default();
            match what {
                "wins" => record.wins = n,
                "losses" => record.losses = n,
                "draws" => record.draws = n,
                _ => return Err(bad(field.clone())),
            }
        }
        let mut all = BTreeMap::new();
        let mut versions = BTreeMap::new();
        let mut json = BTreeMap::new();
        for triple in tables.chunks(3) {
            let [id, version, text] = triple else {
                continue;
            };
            let id: u64 = id.parse().map_err(|_| bad(id.clone()))?;
            let table: Table = serde_json::from_str(text)
                .map_err(|e| bad(format!("{}: {e}", self.key(&format!("game:{id}")))))?;
            all.insert(id, table);
            versions.insert(id, version.parse().unwrap_or(0));
            json.insert(id, text.clone());
        }
        Ok(Read {
            games: Games::from_parts(all, records, next.parse().unwrap_or(0)),
            set_version: set_version.parse().unwrap_or(0),
            versions,
            json,
        })
    }

    /// Writes what `after` changed from `before`; whether it was written.
    fn write(&self, before: &Read, after: &Games) -> Result<bool, GameStoreError> {
        let mut changed: Vec<(u64, u64, String)> = Vec::new();
        let ids: BTreeSet<u64> = before
            .json
            .keys()
            .copied()
            .chain(after.tables().map(|(id, _)| id))
            .collect();
        let mut set_changed = false;
        for id in ids {
            let read = before.versions.get(&id).copied().unwrap_or(0);
            match (before.json.get(&id), after.table(id)) {
                (Some(_), None) => {
                    set_changed = true;
                    changed.push((id, read, String::new()));
                }
                (old, Some(table)) => {
                    let text =
                        serde_json::to_string(table).map_err(|e| GameStoreError(e.to_string()))?;
                    if old != Some(&text) {
                        set_changed |= old.is_none();
                        changed.push((id, read, text));
                    }
                }
                (None, None) => {}
            }
        }
        let mut increments: Vec<(String, i64)> = Vec::new();
        for (player, now) in after.standings() {
            let was = before
                .games
                .standings()
                .get(player)
                .copied()
                .unwrap_or_default();
            for (what, n, m) in [
                ("wins", now.wins, was.wins),
                ("losses", now.losses, was.losses),
                ("draws", now.draws, was.draws),
            ] {
                if n != m {
                    increments.push((format!("{player}:{what}"), i64::from(n) - i64::from(m)));
                }
            }
        }
        if changed.is_empty() && increments.is_empty() {
            return Ok(true);
        }
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(WRITE)
            .arg(3)
            .arg(self.key("games:meta"))
            .arg(self.key("games"))
            .arg(self.key("standings"))
            .arg(self.key("game:"))
            .arg(before.set_version)
            .arg(if set_changed { "1" } else { "0" })
            .arg(after.next_table())
            .arg(changed.len());
        for (id, read, text) in &changed {
            cmd.arg(id).arg(read).arg(text);
        }
        cmd.arg(increments.len());
        for (field, by) in &increments {
            cmd.arg(field).arg(by);
        }
        let written: i64 = self.with_conn(|c| cmd.query(c))?;
        Ok(written == 1)
    }
}

impl GameStore for RedisGames {
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError> {
        for _ in 0..MAX_ATTEMPTS {
            let before = self.read()?;
            let mut games = before.games.clone();
            f(&mut games);
            if self.write(&before, &games)? {
                return Ok(());
            }
        }
        Err(GameStoreError(
            "other replicas kept changing the same games; try again".to_owned(),
        ))
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
        games: Arc::new(RedisGames::new(&store, prefix)),
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
