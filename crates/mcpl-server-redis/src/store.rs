//! [`RedisStore`]: the [`PrincipalStore`] of every replica, in one Redis.

use crate::codec::{self, Anchor, Blob, EndRow, Keys};
use crate::error::Error;
use crate::link::Link;
use mcpl_server::{MemoryStore, Principal, PrincipalState, PrincipalStore};
use redis::{Commands, Connection, Value as RedisValue};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

/// How many times an update is retried when other writers keep getting in first.
pub(crate) const MAX_ATTEMPTS: usize = 10_000;

/// Principal state in Redis, shared by every replica that opens the same URL and prefix.
///
/// Authenticated principals live in Redis; per-connection principals (which never outlive
/// one connection on one replica, §5.6) stay in an in-process [`MemoryStore`]. Every
/// [`update`](PrincipalStore::update) is one optimistic transaction: `WATCH` the principal's
/// blob, read it and its ended records, run the closure on that fresh copy, and write the
/// result in `MULTI`/`EXEC`; when another replica wrote in between, `EXEC` aborts and the
/// closure runs again on the newer copy. A closure that changed nothing writes nothing.
///
/// While Redis is unreachable, updates run on this replica's last copy of the principal,
/// are kept only here, and [`is_available`](Self::is_available) is false (the session core
/// then refuses new opens); [`restore`](Self::restore) writes those copies back for
/// principals Redis has lost.
pub struct RedisStore {
    link: Link,
    keys: Keys,
    anchor: Anchor,
    local: MemoryStore,
    cache: Mutex<HashMap<Principal, PrincipalState>>,
    available: AtomicBool,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("keys", &self.keys)
            .field("available", &self.is_available())
            .finish_non_exhaustive()
    }
}

/// What one transaction read.
struct Loaded {
    state: PrincipalState,
    blob: Option<String>,
    /// Ended ids in the index, whether or not their record has expired.
    indexed: BTreeSet<String>,
    /// Ended ids whose record is still there.
    live: HashSet<String>,
}

impl RedisStore {
    /// A store in the Redis at `url` (`redis://HOST:PORT`), with its keys under `prefix`
    /// (one prefix per deployment; every replica of it must use the same). Connects and
    /// checks the server answers.
    pub fn open(url: &str, prefix: &str) -> Result<Self, Error> {
        let client = redis::Client::open(url).map_err(|e| Error::Url {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        let store = RedisStore {
            link: Link::new(client),
            keys: Keys::new(prefix),
            anchor: Anchor::new(Instant::now(), SystemTime::now()),
            local: MemoryStore::new(),
            cache: Mutex::new(HashMap::new()),
            available: AtomicBool::new(false),
        };
        store.ping()?;
        Ok(store)
    }

    /// The Redis client (for the pub/sub side, [`crate::Fanout`]).
    pub fn client(&self) -> &redis::Client {
        self.link.client()
    }

    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Whether the last command reached Redis.
    pub fn is_available(&self) -> bool {
        self.available.load(Ordering::Relaxed)
    }

    /// Checks Redis answers, reconnecting if needed, and records the result.
    pub fn ping(&self) -> Result<(), Error> {
        let result = self.with_conn(|c| redis::cmd("PING").query::<String>(c).map(drop));
        self.note(&result);
        result.map_err(Error::from)
    }

    /// After an outage: writes this replica's copy of every principal it has served back to
    /// Redis where Redis no longer has it (a restarted Redis without persistence), so nothing
    /// open is lost. A principal Redis still has keeps Redis's copy. Returns the principals
    /// written back. (Any update of such a principal does the same for it.)
    pub fn restore(&self) -> Result<Vec<Principal>, Error> {
        let principals: Vec<Principal> = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache.keys().cloned().collect()
        };
        let mut restored = Vec::new();
        for principal in principals {
            let result = self.transaction(&principal, &mut |_| {});
            self.note(&result);
            if result? {
                restored.push(principal);
            }
        }
        restored.sort();
        Ok(restored)
    }

    /// This replica's last copy of `principal`'s state: what it last read or wrote.
    pub fn cached(&self, principal: &Principal) -> Option<PrincipalState> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(principal).cloned()
    }

    /// Records whether a command reached Redis ([`is_available`](Self::is_available)).
    /// Documents note theirs here too: one Redis, one answer.
    pub(crate) fn note<T>(&self, result: &Result<T, redis::RedisError>) {
        let ok = result.is_ok();
        let was = self.available.swap(ok, Ordering::Relaxed);
        if was && !ok {
            tracing::warn!("redis unreachable; serving principal state from this replica's copy");
        }
    }

    fn with_conn<T>(
        &self,
        f: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        self.link.with_conn(f)
    }

    fn load(&self, c: &mut Connection, principal: &str) -> redis::RedisResult<Loaded> {
        let blob: Option<String> = c.get(self.keys.state(principal))?;
        let indexed: BTreeSet<String> = c.smembers(self.keys.ends(principal))?;
        let mut rows = Vec::new();
        let mut live = HashSet::new();
        if !indexed.is_empty() {
            let keys: Vec<String> = indexed
                .iter()
                .map(|id| self.keys.end(principal, id))
                .collect();
            let values: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query(c)?;
            for (id, value) in indexed.iter().zip(values) {
                // A missing record expired (its key's TTL); a bad one is dropped with a warning.
                let Some(value) = value else { continue };
                match serde_json::from_str::<EndRow>(&value) {
                    Ok(row) => {
                        live.insert(id.clone());
                        rows.push(row);
                    }
                    Err(e) => tracing::warn!(error = %e, id, principal, "bad ended record dropped"),
                }
            }
        }
        let parsed = match &blob {
            Some(text) => serde_json::from_str::<Blob>(text).map_err(|e| {
                redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "bad principal state",
                    format!("{}: {e}", self.keys.state(principal)),
                ))
            })?,
            None => Blob::default(),
        };
        Ok(Loaded {
            state: codec::join(parsed, rows, self.anchor),
            blob,
            indexed,
            live,
        })
    }

    /// One optimistic transaction on `principal`'s state; `f` may run several times.
    /// Returns whether it wrote. Where Redis has no state for the principal but this replica
    /// has a copy (Redis restarted empty), the copy is the starting point.
    fn transaction(
        &self,
        principal: &Principal,
        f: &mut dyn FnMut(&mut PrincipalState),
    ) -> redis::RedisResult<bool> {
        let id = principal.id();
        let state_key = self.keys.state(id);
        self.with_conn(|c| {
            for _ in 0..MAX_ATTEMPTS {
                redis::cmd("WATCH").arg(&state_key).query::<()>(c)?;
                let loaded = self.load(c, id)?;
                let mut state = match (&loaded.blob, self.cached(principal)) {
                    (None, Some(copy)) => copy,
                    _ => loaded.state,
                };
                f(&mut state);
                let (blob, rows) = codec::split(&state, self.anchor);
                let text = serde_json::to_string(&blob).expect("principal state serializes");
                let kept: HashSet<&str> = rows.iter().map(|r| r.record.id.as_str()).collect();
                let gone: Vec<&String> = loaded
                    .indexed
                    .iter()
                    .filter(|i| !kept.contains(i.as_str()))
                    .collect();
                let added: Vec<&EndRow> = rows
                    .iter()
                    .filter(|r| !loaded.live.contains(&r.record.id))
                    .collect();
                if loaded.blob.as_deref() == Some(text.as_str())
                    && gone.is_empty()
                    && added.is_empty()
                {
                    redis::cmd("UNWATCH").query::<()>(c)?;
                    self.remember(principal, state);
                    return Ok(false);
                }
                let mut pipe = redis::pipe();
                pipe.atomic();
                pipe.set(&state_key, &text).ignore();
                pipe.sadd(self.keys.principals(), id).ignore();
                for row in added {
                    // §5.3: the record's expiry is its key's; Redis drops it, not us.
                    let json = serde_json::to_string(row).expect("ended record serializes");
                    pipe.cmd("SET")
                        .arg(self.keys.end(id, &row.record.id))
                        .arg(json)
                        .arg("PXAT")
                        .arg(row.expires_ms.max(1))
                        .ignore();
                    pipe.sadd(self.keys.ends(id), &row.record.id).ignore();
                }
                for old in gone {
                    pipe.del(self.keys.end(id, old)).ignore();
                    pipe.srem(self.keys.ends(id), old).ignore();
                }
                let done: RedisValue = pipe.query(c)?;
                if !matches!(done, RedisValue::Nil) {
                    self.remember(principal, state);
                    return Ok(true);
                }
            }
            Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "too many conflicting writers",
            )))
        })
    }

    fn remember(&self, principal: &Principal, state: PrincipalState) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.insert(principal.clone(), state);
    }
}

impl PrincipalStore for RedisStore {
    fn update(&self, principal: &Principal, f: &mut dyn FnMut(&mut PrincipalState)) {
        if principal.ends_at_disconnect() {
            return self.local.update(principal, f);
        }
        let result = self.transaction(principal, f);
        self.note(&result);
        if let Err(e) = result {
            tracing::debug!(error = %e, %principal, "update kept on this replica only");
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            f(cache.entry(principal.clone()).or_default());
        }
    }

    fn remove(&self, principal: &Principal) {
        if principal.ends_at_disconnect() {
            return self.local.remove(principal);
        }
        let id = principal.id();
        let result = self.with_conn(|c| {
            let ids: Vec<String> = c.smembers(self.keys.ends(id))?;
            let mut pipe = redis::pipe();
            pipe.atomic();
            pipe.del(self.keys.state(id)).ignore();
            pipe.del(self.keys.ends(id)).ignore();
            for i in &ids {
                pipe.del(self.keys.end(id, i)).ignore();
            }
            pipe.srem(self.keys.principals(), id).ignore();
            pipe.query::<()>(c)
        });
        self.note(&result);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.remove(principal);
    }

    fn get(&self, principal: &Principal) -> Option<PrincipalState> {
        if principal.ends_at_disconnect() {
            return self.local.get(principal);
        }
        let result = self.with_conn(|c| self.load(c, principal.id()));
        self.note(&result);
        match result {
            Ok(loaded) => loaded.blob.is_some().then_some(loaded.state),
            Err(_) => {
                let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
                cache.get(principal).cloned()
            }
        }
    }

    fn refuse_opens(&self) -> Option<String> {
        // Ask Redis now: an open kept on this replica only would be invisible to the
        // principal's other replicas and lost to theirs.
        self.ping().err().map(|e| {
            format!(
                "cannot open now: the shared principal store is unreachable ({e}); try again later"
            )
        })
    }

    fn principals(&self) -> Vec<Principal> {
        let result = self.with_conn(|c| c.smembers::<_, Vec<String>>(self.keys.principals()));
        self.note(&result);
        let mut all: Vec<Principal> = match result {
            Ok(ids) => ids.iter().map(Principal::authenticated).collect(),
            Err(_) => {
                let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
                cache.keys().cloned().collect()
            }
        };
        all.extend(self.local.principals());
        all.sort();
        all.dedup();
        all
    }
}
