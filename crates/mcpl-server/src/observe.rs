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
