//! [`Document`]: one JSON value of an app's own, shared by every replica, kept beside the
//! principal state and edited with the same optimistic transactions.

use crate::error::Error;
use crate::link::Link;
use crate::store::{MAX_ATTEMPTS, RedisStore};
use redis::{Commands, Connection, Value as RedisValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// A JSON document at `PREFIX:doc:NAME` in a [`RedisStore`]'s Redis: state an app keeps
/// itself (the arcade's games) that every replica must see.
///
/// [`update`](Self::update) is an optimistic transaction like the store's: `WATCH` the key,
/// read and parse the value (absent: `T::default()`), run the closure on it, and when its
/// JSON changed write it in `MULTI`/`EXEC`; when another writer got in between, `EXEC`
/// aborts and the closure runs again on the newer value. So the closure must be a pure edit
/// of the value it is given: it may run several times, and only the last run's edits and
/// return value are kept.
///
/// The document has a connection of its own (a closure may use the principal store; it
/// never waits on this one), and reports reachability to the store, whose
/// [`is_available`](RedisStore::is_available) covers both. Unlike principal state, the
/// document is not served from this replica while Redis is away: every call is then an
/// error. This replica does keep the last value it read or wrote, and when Redis comes back
/// without the key (restarted without persistence), the next update starts from that copy
/// and writes it back, so what was there is not lost; the first replica to write wins.
pub struct Document<T> {
    store: Arc<RedisStore>,
    link: Link,
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

impl RedisStore {
    /// The shared document `name` under this store's prefix (`PREFIX:doc:NAME`). Opening it
    /// reads nothing; every replica that opens the same name shares one value.
    pub fn document<T>(self: &Arc<Self>, name: &str) -> Document<T> {
        Document {
            store: self.clone(),
            link: Link::new(self.client().clone()),
            key: self.keys().doc(name),
            last: Mutex::new(None),
            value: PhantomData,
        }
    }
}

/// What one attempt of a transaction came to.
enum Attempt<R> {
    Done(R),
    /// Another writer got in first: run again.
    Raced,
}

impl<T: Serialize + DeserializeOwned + Default> Document<T> {
    /// The document's Redis key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The current value (`T::default()` when there is none yet, or this replica's last
    /// copy when Redis lost the key; reading writes nothing back).
    pub fn get(&self) -> Result<T, Error> {
        let result = self
            .link
            .with_conn(|c| c.get::<_, Option<String>>(&self.key));
        self.store.note(&result);
        match result?.or_else(|| self.last()) {
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

    /// Runs `f` on the current value and stores the result, atomically across replicas; `f`
    /// may run more than once (see the type's doc). Returns `f`'s value from the run whose
    /// edits were kept. A value that did not change is not written.
    pub fn update<R>(&self, mut f: impl FnMut(&mut T) -> R) -> Result<R, Error> {
        let result = self.link.with_conn(|c| {
            for _ in 0..MAX_ATTEMPTS {
                match self.attempt(c, &mut f)? {
                    Ok(Attempt::Done(out)) => return Ok(Ok(out)),
                    Ok(Attempt::Raced) => continue,
                    Err(e) => {
                        redis::cmd("UNWATCH").query::<()>(c)?;
                        return Ok(Err(e));
                    }
                }
            }
            Ok(Err(self.error("too many conflicting writers; try again")))
        });
        self.store.note(&result);
        result?
    }

    /// One `WATCH`, read, edit and `EXEC`. The outer error is Redis's; the inner one is the
    /// document's own (a bad stored value), after which the key is still watched.
    fn attempt<R>(
        &self,
        c: &mut Connection,
        f: &mut impl FnMut(&mut T) -> R,
    ) -> redis::RedisResult<Result<Attempt<R>, Error>> {
        redis::cmd("WATCH").arg(&self.key).query::<()>(c)?;
        let stored: Option<String> = c.get(&self.key)?;
        // Redis without the key after this replica saw a value: it lost it (a restart
        // without persistence). Start from the copy here, and write it back even unchanged.
        let lost = match &stored {
            Some(_) => None,
            None => self.last(),
        };
        let mut value = match stored.as_ref().or(lost.as_ref()) {
            Some(text) => match self.parse(text) {
                Ok(value) => value,
                Err(e) => return Ok(Err(e)),
            },
            None => T::default(),
        };
        let before = match (stored, &lost) {
            (Some(text), _) => text,
            (None, Some(_)) => String::new(),
            (None, None) => match self.serialize(&value) {
                Ok(text) => text,
                Err(e) => return Ok(Err(e)),
            },
        };
        let out = f(&mut value);
        let after = match self.serialize(&value) {
            Ok(text) => text,
            Err(e) => return Ok(Err(e)),
        };
        if after == before {
            redis::cmd("UNWATCH").query::<()>(c)?;
            self.remember(after);
            return Ok(Ok(Attempt::Done(out)));
        }
        let mut pipe = redis::pipe();
        pipe.atomic().set(&self.key, &after).ignore();
        let done: RedisValue = pipe.query(c)?;
        // An aborted `EXEC` (the key changed since `WATCH`) answers nil.
        Ok(Ok(if matches!(done, RedisValue::Nil) {
            Attempt::Raced
        } else {
            if lost.is_some() {
                tracing::warn!(key = %self.key, "redis had lost this document; wrote this replica's copy back");
            }
            self.remember(after);
            Attempt::Done(out)
        }))
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
