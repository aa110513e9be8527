//! [`Link`]: one blocking connection to Redis, opened on first use and reopened after a
//! failure, with timeouts so an unreachable Redis is an error, not a hang.

use redis::Connection;
use std::sync::Mutex;
use std::time::Duration;

/// How long to wait for Redis to accept a connection or answer a command.
const TIMEOUT: Duration = Duration::from_secs(2);

/// A lazily opened blocking connection. Each user that runs transactions of its own has its
/// own link: `WATCH` belongs to a connection, and a closure run inside one transaction may
/// start another (a document edit never waits on the principal store's connection).
pub(crate) struct Link {
    client: redis::Client,
    conn: Mutex<Option<Connection>>,
}

impl Link {
    pub(crate) fn new(client: redis::Client) -> Self {
        Link {
            client,
            conn: Mutex::new(None),
        }
    }

    /// Runs `f` on the connection, connecting first if needed. A connection left from before
    /// a Redis restart fails on first use: then `f` runs once more on a fresh one (every `f`
    /// here is a whole read or an optimistic transaction, so it may).
    pub(crate) fn with_conn<T>(
        &self,
        mut f: impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let mut slot = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let reused = slot.is_some();
        let result = self.on_conn(&mut slot, &mut f);
        match result {
            Err(e) if reused && (e.is_io_error() || e.is_connection_dropped()) => {
                self.on_conn(&mut slot, &mut f)
            }
            other => other,
        }
    }

    fn on_conn<T>(
        &self,
        slot: &mut Option<Connection>,
        f: &mut impl FnMut(&mut Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        if slot.is_none() {
            let conn = self.client.get_connection_with_timeout(TIMEOUT)?;
            conn.set_read_timeout(Some(TIMEOUT))?;
            conn.set_write_timeout(Some(TIMEOUT))?;
            *slot = Some(conn);
        }
        let conn = slot.as_mut().expect("connected above");
        let result = f(conn);
        if result.is_err() {
            // A failed command may leave a reply unread or a WATCH behind: start afresh.
            *slot = None;
        }
        result
    }
}
