//! The observer hook: small records of what the driver does (connections coming and going,
//! hint changes leaving on their carriers) for a watcher such as `mcpl-inspect`.
//!
//! Bounded and lossy on purpose: records go through a [`tokio::sync::broadcast`] channel, so
//! a slow watcher misses records (it sees `Lagged`) and never holds up a connection. Without
//! a watcher ([`crate::driver::Handle::observe`] never called) nothing is built or sent.

use crate::principal::{ConnectionId, Principal};
use mcpl_protocol::jsonrpc::Message;
use mcpl_protocol::methods;
use mcpl_protocol::rfc014::HINTS_KEY;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many records wait for a slow watcher before the oldest are dropped.
pub const OBSERVER_CAPACITY: usize = 1024;

/// One thing the driver did, as a watcher sees it.
#[derive(Debug, Clone)]
pub enum Observation {
    /// A connection started serving `principal`.
    Connected {
        /// The connection.
        connection: ConnectionId,
        /// Whom it acts for.
        principal: Principal,
        /// When it last received a message; the driver touches it on every inbound message.
        seen: Arc<LastSeen>,
    },
    /// A connection ended.
    Disconnected {
        /// The connection.
        connection: ConnectionId,
        /// Whom it acted for.
        principal: Principal,
    },
    /// A hint change left on `connection`.
    Hints {
        /// The connection.
        connection: ConnectionId,
        /// Whom it acts for.
        principal: Principal,
        /// What carried it: `result`, `push/event` or `tools/hints`.
        carrier: &'static str,
        /// The hint changes as sent (`rev`, `tools`, `toolsets`, `suggest`).
        hints: Value,
    },
}

/// When a connection last received a message: one relaxed atomic store per inbound message,
/// made only for connections that started while a watcher was attached. A watcher reads it
/// when it draws, so a busy connection sends no records for it.
#[derive(Debug)]
pub struct LastSeen {
    since: Instant,
    /// Milliseconds after `since`.
    ms: AtomicU64,
}

impl LastSeen {
    /// A connection that started (and was last seen) at `now`.
    pub fn new(now: Instant) -> Self {
        LastSeen {
            since: now,
            ms: AtomicU64::new(0),
        }
    }

    /// A message arrived at `now`.
    pub fn touch(&self, now: Instant) {
        let ms = u64::try_from(now.saturating_duration_since(self.since).as_millis())
            .unwrap_or(u64::MAX);
        self.ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// When the last message arrived (the start, before any).
    pub fn at(&self) -> Instant {
        self.since + Duration::from_millis(self.ms.load(Ordering::Relaxed))
    }
}

/// The hint changes `message` carries, with their carrier, if any.
pub fn hints_of(message: &Message) -> Option<(&'static str, Value)> {
    match message {
        Message::Notification(n) if n.method == methods::TOOLS_HINTS => {
            Some(("tools/hints", n.params.clone()?))
        }
        Message::Request(r) if r.method == methods::PUSH_EVENT => {
            let hints = r.params.as_ref()?.get("hints")?;
            Some(("push/event", hints.clone()))
        }
        Message::Response(_) => {
            let value = serde_json::to_value(message).ok()?;
            let hints = value.get("result")?.get("_meta")?.get(HINTS_KEY)?;
            Some(("result", hints.clone()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_seen_moves_forward_only() {
        let start = Instant::now();
        let seen = LastSeen::new(start);
        assert_eq!(seen.at(), start);
        seen.touch(start + Duration::from_millis(1500));
        assert_eq!(seen.at(), start + Duration::from_millis(1500));
        // A late writer with an older time does not move it back.
        seen.touch(start + Duration::from_millis(200));
        assert_eq!(seen.at(), start + Duration::from_millis(1500));
    }
}
