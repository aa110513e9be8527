//! A server connection's state as the embedder reports it (a leaf: the presenter keeps one
//! per server, `link` tells its changes).

use std::time::Duration;

/// A server connection's state, reported by the embedder's connect loop.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkState {
    /// Connecting for the first time, or again (`attempt` counts since the last good link).
    Connecting {
        /// Attempts since the last good connection, from 1.
        attempt: u32,
    },
    /// Connected and initialized; its controller is running.
    Up,
    /// Down; the next attempt is due after `retry_in`.
    Down {
        /// Failed attempts since the last good connection.
        attempt: u32,
        /// Why the last connection ended or the last attempt failed.
        error: String,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
}

impl std::fmt::Display for LinkState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkState::Connecting { attempt: 1 } => write!(f, "connecting"),
            LinkState::Connecting { attempt } => write!(f, "reconnecting (attempt {attempt})"),
            LinkState::Up => write!(f, "connected"),
            // No wait (the connection just ended): the next attempt is under way, and a
            // "retry in 0 ms" would read as a promise already broken.
            LinkState::Down {
                error, retry_in, ..
            } if retry_in.is_zero() => write!(f, "down ({error}); reconnecting now"),
            // The wait is told as the state was reported: it may have partly passed since.
            LinkState::Down {
                attempt,
                error,
                retry_in,
            } => write!(
                f,
                "down ({error}); retry {} within {} ms",
                attempt + 1,
                retry_in.as_millis()
            ),
        }
    }
}
