//! [`RedisStore`]: the [`PrincipalStore`] of every replica, in one Redis, over the `redis`
//! crate's tokio connection.

use crate::codec::{self, Anchor, Keys};
use crate::error::Error;
use mcpl_server::{
    MemoryStore, Principal, PrincipalState, PrincipalStore, StoreError, StoreFuture, Versioned,
    WriteSet, Written,
};
use redis::aio::MultiplexedConnection;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How many times a document update is retried when other writers keep getting in first.
pub(crate) const MAX_ATTEMPTS: usize = 10_000;

/// How long to wait for Redis to accept a connection or answer a command.
const TIMEOUT: Duration = Duration::from_secs(2);

/// One write, atomically in Redis: store the new state only if the principal's version is
/// still the one the writer read. `KEYS[1]` the principal's hash (`v` version, `s` state),
/// `KEYS[2]` the set of principals; `ARGV[1]` the version read, `ARGV[2]` the new state (empty
/// to forget the principal), `ARGV[3]` the principal's id. Answers `{1, new version, ''}`, or
/// `{0, current version, current state}` on a conflict.
const WRITE: &str = r"
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then
  return {0, v, redis.call('HGET', KEYS[1], 's') or ''}
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], ARGV[3])
  return {1, 0, ''}
end
redis.call('HSET', KEYS[1], 'v', v + 1, 's', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return {1, v + 1, ''}
";

/// Writes a principal's state back where Redis has none (after a restart without
/// persistence), keeping its version. Same keys and arguments as [`WRITE`], with `ARGV[1]`
/// the version to keep. Answers 1 when it wrote.
const RESTORE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 's', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
";

/// Principal state in Redis, shared by every replica that opens the same URL and prefix.
///
/// Each authenticated principal is one hash, `PREFIX:principal:ID`, holding its state as
/// JSON and a version; a write is one `EVAL` of a Lua script that stores the new state only
/// if the version is still the one read, else answers the current state (one round trip
/// either way). Per-connection principals (which never outlive one connection on one
/// replica, §5.6) stay in an in-process [`MemoryStore`].
///
/// The replica keeps its last copy of each principal (read, written, or refused by an
/// unreachable Redis): reads are served from it while Redis is away, and
/// [`restore`](Self::restore) writes the copies back to a Redis that lost them.
pub struct RedisStore {
    client: redis::Client,
    conn: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    keys: Keys,
    anchor: Anchor,
    local: MemoryStore,
    copies: Mutex<HashMap<Principal, Versioned>>,
    available: AtomicBool,
    writes: AtomicU64,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("keys", &self.keys)
            .field("available", &self.is_available())
            .finish_non_exhaustive()
    }
}

/// A command's reply, or why there is none.
type Reply<T> = Result<T, redis::RedisError>;

impl RedisStore {
    /// A store in the Redis at `url` (`redis://HOST:PORT`), with its keys under `prefix`
    /// (one prefix per deployment; every replica of it must use the same). Connects and
    /// checks the server answers.
    pub async fn open(url: &str, prefix: &str) -> Result<Self, Error> {
        let client = redis::Client::open(url).map_err(|e| Error::Url {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        let store = RedisStore {
            client,
            conn: tokio::sync::Mutex::new(None),
            keys: Keys::new(prefix),
            anchor: Anchor::new(Instant::now(), SystemTime::now()),
            local: MemoryStore::new(),
            copies: Mutex::new(HashMap::new()),
            available: AtomicBool::new(false),
            writes: AtomicU64::new(0),
        };
        store.ping().await?;
        Ok(store)
    }

    /// The Redis client (for the pub/sub side, [`crate::Fanout`]).
    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    pub(crate) fn anchor(&self) -> Anchor {
        self.anchor
    }

    /// Whether the last command reached Redis.
    pub fn is_available(&self) -> bool {
        self.available.load(Ordering::Relaxed)
    }

    /// How many writes Redis took (each one round trip).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// Checks Redis answers, reconnecting if needed, and records the result.
    pub async fn ping(&self) -> Result<(), Error> {
        let result: Reply<String> = self.query(&redis::cmd("PING")).await;
        result.map(drop).map_err(Error::from)
    }

    /// After an outage: writes this replica's copy of every principal it has served back to
    /// Redis where Redis no longer has it (a restarted Redis without persistence), keeping
    /// its version, so nothing open is lost and sessions' next writes go through. A
    /// principal Redis still has keeps Redis's copy. Returns the principals written back.
    pub async fn restore(&self) -> Result<Vec<Principal>, Error> {
        let copies: Vec<(Principal, Versioned)> = {
            let copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
            copies.iter().map(|(p, v)| (p.clone(), v.clone())).collect()
        };
        let mut restored = Vec::new();
        for (principal, copy) in copies {
            if self.restore_one(&principal, &copy).await? {
                restored.push(principal);
            }
        }
        restored.sort();
        Ok(restored)
    }

    /// Writes `copy` back if Redis has nothing for `principal`; whether it did.
    async fn restore_one(&self, principal: &Principal, copy: &Versioned) -> Reply<bool> {
        let id = principal.id();
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(RESTORE)
            .arg(2)
            .arg(self.keys.principal(id))
            .arg(self.keys.principals())
            .arg(copy.version)
            .arg(codec::encode(&copy.state, self.anchor))
            .arg(id);
        let wrote: i64 = self.query(&cmd).await?;
        if wrote == 1 {
            tracing::warn!(%principal, "redis had lost this principal; wrote this replica's copy back");
        }
        Ok(wrote == 1)
    }

    /// This replica's last copy of `principal`'s state: what it last read or wrote.
    pub fn cached(&self, principal: &Principal) -> Option<PrincipalState> {
        let copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
        copies
            .get(principal)
            .map(|v| PrincipalState::clone(&v.state))
    }

    fn copy(&self, principal: &Principal) -> Option<Versioned> {
        let copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
        copies.get(principal).cloned()
    }

    /// Keeps `stored` as this replica's copy of `principal` unless the copy is newer.
    pub(crate) fn remember(&self, principal: &Principal, stored: Versioned) {
        let mut copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
        match copies.get(principal) {
            Some(copy) if copy.version > stored.version => {}
            _ => {
                copies.insert(principal.clone(), stored);
            }
        }
    }

    /// Records whether a command of an app's own (on a connection of its own) reached
    /// Redis, so [`is_available`](Self::is_available) covers it too: one Redis, one answer.
    pub fn report_reachable(&self, reachable: bool) {
        let result: Reply<()> = if reachable {
            Ok(())
        } else {
            Err(timed_out("an app's command"))
        };
        self.note(&result);
    }

    /// Records whether a command reached Redis ([`is_available`](Self::is_available)).
    /// Documents note theirs here too: one Redis, one answer.
    pub(crate) fn note<T>(&self, result: &Reply<T>) {
        let ok = result.is_ok();
        let was = self.available.swap(ok, Ordering::Relaxed);
        if was && !ok {
            tracing::warn!("redis unreachable; serving principal state from this replica's copy");
        }
    }

    /// Runs `cmd` on the shared connection (connecting first if needed), with a timeout; a
    /// failed command drops the connection so the next one starts afresh.
    pub(crate) async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Reply<T> {
        let result = match self.try_query(cmd).await {
            // A connection left from before a Redis restart fails on first use: run the
            // command once more on a fresh one (each is a whole read or an atomic script).
            Err((e, true)) if e.is_io_error() || e.is_connection_dropped() => {
                self.try_query(cmd).await.map_err(|(e, _)| e)
            }
            other => other.map_err(|(e, _)| e),
        };
        self.note(&result);
        result
    }

    /// Runs `cmd` once; an error says whether the connection was an old one.
    async fn try_query<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, (redis::RedisError, bool)> {
        let mut reused = true;
        let mut conn = {
            let mut slot = self.conn.lock().await;
            match slot.as_ref() {
                Some(c) => c.clone(),
                None => {
                    reused = false;
                    let connecting = self.client.get_multiplexed_async_connection();
                    let c = tokio::time::timeout(TIMEOUT, connecting)
                        .await
                        .map_err(|_| (timed_out("connecting"), false))?
                        .map_err(|e| (e, false))?;
                    *slot = Some(c.clone());
                    c
                }
            }
        };
        let result = match tokio::time::timeout(TIMEOUT, cmd.query_async(&mut conn)).await {
            Ok(r) => r,
            Err(_) => Err(timed_out("a command")),
        };
        if result.is_err() {
            *self.conn.lock().await = None;
        }
        result.map_err(|e| (e, reused))
    }

    async fn load_remote(&self, principal: &Principal) -> Reply<Versioned> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(self.keys.principal(principal.id()))
            .arg("v")
            .arg("s");
        let (version, text): (Option<u64>, Option<String>) = self.query(&cmd).await?;
        let state = match text {
            Some(text) => codec::decode(&text, self.anchor).map_err(|e| {
                redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "bad principal state",
                    format!("{}: {e}", self.keys.principal(principal.id())),
                ))
            })?,
            None => PrincipalState::default(),
        };
        Ok(Versioned {
            state: Arc::new(state),
            version: version.unwrap_or(0),
        })
    }

    async fn write_remote(&self, write: &WriteSet) -> Reply<Written> {
        let id = write.principal.id();
        let text = write
            .state
            .as_ref()
            .map(|s| codec::encode(s, self.anchor))
            .unwrap_or_default();
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(WRITE)
            .arg(2)
            .arg(self.keys.principal(id))
            .arg(self.keys.principals())
            .arg(write.read)
            .arg(text)
            .arg(id);
        let (done, version, current): (i64, u64, String) = self.query(&cmd).await?;
        if done == 1 {
            self.writes.fetch_add(1, Ordering::Relaxed);
            return Ok(Written::Done { version });
        }
        let state = if current.is_empty() {
            PrincipalState::default()
        } else {
            codec::decode(&current, self.anchor).map_err(|e| {
                redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "bad principal state",
                    e.to_string(),
                ))
            })?
        };
        Ok(Written::Conflict(Versioned {
            state: Arc::new(state),
            version,
        }))
    }
}

fn timed_out(what: &str) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::Io,
        "timed out",
        format!("{what} took longer than {TIMEOUT:?}"),
    ))
}

fn unreachable(e: redis::RedisError) -> StoreError {
    StoreError(e.to_string())
}

impl PrincipalStore for RedisStore {
    fn load<'a>(&'a self, principal: &'a Principal) -> StoreFuture<'a, Versioned> {
        Box::pin(async move {
            if principal.ends_at_disconnect() {
                return self.local.load(principal).await;
            }
            match self.load_remote(principal).await {
                // Redis lost the principal (restarted empty) but this replica has a copy:
                // serve the copy; `restore` writes it back.
                Ok(v) if v.version == 0 => match self.copy(principal) {
                    Some(copy) if copy.version > 0 => Ok(copy),
                    _ => Ok(v),
                },
                Ok(v) => {
                    self.remember(principal, v.clone());
                    Ok(v)
                }
                Err(e) => match self.copy(principal) {
                    Some(copy) => Ok(copy),
                    None => Err(unreachable(e)),
                },
            }
        })
    }

    fn write<'a>(&'a self, write: &'a WriteSet) -> StoreFuture<'a, Written> {
        Box::pin(async move {
            let principal = &write.principal;
            if principal.ends_at_disconnect() {
                return self.local.write(write).await;
            }
            match self.write_remote(write).await {
                Ok(Written::Done { version }) => {
                    match &write.state {
                        Some(state) => self.remember(
                            principal,
                            Versioned {
                                state: state.clone(),
                                version,
                            },
                        ),
                        None => {
                            let mut copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
                            copies.remove(principal);
                        }
                    }
                    Ok(Written::Done { version })
                }
                Ok(Written::Conflict(now)) => {
                    if now.version == 0
                        && let Some(copy) = self.copy(principal).filter(|c| c.version > 0)
                    {
                        // Redis lost the principal (restarted empty): put this replica's copy
                        // back, then let the session run again on it.
                        self.restore_one(principal, &copy)
                            .await
                            .map_err(unreachable)?;
                        return Ok(Written::Conflict(copy));
                    }
                    self.remember(principal, now.clone());
                    Ok(Written::Conflict(now))
                }
                Err(e) => {
                    // Nothing is remembered of a write that did not happen: the session runs
                    // its step again without it (an open it started must not come back).
                    Err(unreachable(e))
                }
            }
        })
    }

    fn principals(&self) -> StoreFuture<'_, Vec<Principal>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("SMEMBERS");
            cmd.arg(self.keys.principals());
            let ids: Reply<Vec<String>> = self.query(&cmd).await;
            let mut all: Vec<Principal> = match ids {
                Ok(ids) => ids.iter().map(Principal::authenticated).collect(),
                Err(_) => {
                    let copies = self.copies.lock().unwrap_or_else(|p| p.into_inner());
                    copies.keys().cloned().collect()
                }
            };
            all.extend(self.local.principals_now());
            all.sort();
            all.dedup();
            Ok(all)
        })
    }
}
