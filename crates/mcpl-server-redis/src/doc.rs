//! [`Document`]: one JSON value of an app's own, shared by every replica, kept beside the
//! principal state and edited with optimistic transactions on the store's async connection.

use crate::error::Error;
use crate::store::{MAX_ATTEMPTS, RedisStore};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// Stores `ARGV[3]` at `KEYS[1]` only if the key still holds what was read: no value when
/// `ARGV[1]` is `0`, else exactly `ARGV[2]`. Answers 1 when it wrote, 0 when another writer
/// got in first. One round trip, atomic in Redis.
const COMPARE_AND_SET: &str = r"
local cur = redis.call('GET', KEYS[1])
local same
if ARGV[1] == '0' then same = (cur == false) else same = (cur == ARGV[2]) end
if same then
  redis.call('SET', KEYS[1], ARGV[3])
  return 1
end
return 0
";

/// A JSON document at `PREFIX:doc:NAME` in a [`RedisStore`]'s Redis: state an app keeps
/// itself (the arcade's games) that every replica must see.
///
/// [`update`](Self::update) is an optimistic transaction like the store's, on the store's
/// async connection: read the value (absent: `T::default()`), run the closure on it, and
/// when its JSON changed write it with one `EVAL` that stores it only if the key still holds
/// what was read; when another writer got in between, the closure runs again on the newer
/// value. So the closure must be a pure edit of the value it is given: it may run several
/// times, and only the last run's edits and return value are kept.
///
/// Every command notes reachability in the store, whose
/// [`is_available`](RedisStore::is_available) covers documents too. Unlike principal state,
/// the document is not served from this replica while Redis is away: every call is then an
/// error. This replica does keep the last value it read or wrote, and when Redis comes back
/// without the key (restarted without persistence), the next update starts from that copy
/// and writes it back, so what was there is not lost; the first replica to write wins.
pub struct Document<T> {
    store: Arc<RedisStore>,
    key: String,
    /// The JSON this replica last read or wrote.
    last: Mutex<Option<String>>,
    value: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Document<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl<T> Document<T> {
    /// The shared document `name` under `store`'s prefix (`PREFIX:doc:NAME`). Opening it
    /// reads nothing; every replica that opens the same name shares one value.
    pub fn open(store: &Arc<RedisStore>, name: &str) -> Self {
        Document {
            store: store.clone(),
            key: store.keys().doc(name),
            last: Mutex::new(None),
            value: PhantomData,
        }
    }
}

impl<T: Serialize + DeserializeOwned + Default> Document<T> {
    /// The document's Redis key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The current value (`T::default()` when there is none yet, or this replica's last
    /// copy when Redis lost the key; reading writes nothing back).
    pub async fn get(&self) -> Result<T, Error> {
        let stored: Option<String> = self.read().await?;
        match stored.or_else(|| self.last()) {
            Some(text) => self.parse(&text),
            None => Ok(T::default()),
        }
    }

    fn last(&self) -> Option<String> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn remember(&self, text: String) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(text);
    }

    async fn read(&self) -> Result<Option<String>, Error> {
        let mut get = redis::cmd("GET");
        get.arg(&self.key);
        Ok(self.store.query(&get).await?)
    }

    /// Runs `f` on the current value and stores the result, atomically across replicas; `f`
    /// may run more than once (see the type's doc). Returns `f`'s value from the run whose
    /// edits were kept. A value that did not change is not written.
    pub async fn update<R>(&self, mut f: impl FnMut(&mut T) -> R) -> Result<R, Error> {
        for _ in 0..MAX_ATTEMPTS {
            let stored = self.read().await?;
            // Redis without the key after this replica saw a value: it lost it (a restart
            // without persistence). Start from the copy here, and write it back even
            // unchanged.
            let lost = match &stored {
                Some(_) => None,
                None => self.last(),
            };
            let mut value = match stored.as_ref().or(lost.as_ref()) {
                Some(text) => self.parse(text)?,
                None => T::default(),
            };
            let before = match (&stored, &lost) {
                (Some(text), _) => text.clone(),
                (None, Some(_)) => String::new(),
                (None, None) => self.serialize(&value)?,
            };
            let out = f(&mut value);
            let after = self.serialize(&value)?;
            if after == before {
                self.remember(after);
                return Ok(out);
            }
            let mut cas = redis::cmd("EVAL");
            cas.arg(COMPARE_AND_SET)
                .arg(1)
                .arg(&self.key)
                .arg(if stored.is_some() { "1" } else { "0" })
                .arg(stored.as_deref().unwrap_or(""))
                .arg(&after);
            let wrote: i64 = self.store.query(&cas).await?;
            if wrote == 1 {
                if lost.is_some() {
                    tracing::warn!(key = %self.key, "redis had lost this document; wrote this replica's copy back");
                }
                self.remember(after);
                return Ok(out);
            }
        }
        Err(self.error("too many conflicting writers; try again"))
    }

    fn parse(&self, text: &str) -> Result<T, Error> {
        serde_json::from_str(text)
            .map_err(|e| self.error(format!("the stored value does not parse: {e}")))
    }

    fn serialize(&self, value: &T) -> Result<String, Error> {
        serde_json::to_string(value)
            .map_err(|e| self.error(format!("the value does not serialize: {e}")))
    }

    fn error(&self, reason: impl Into<String>) -> Error {
        Error::Document {
            key: self.key.clone(),
            reason: reason.into(),
        }
    }
}
