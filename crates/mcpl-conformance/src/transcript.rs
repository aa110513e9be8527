//! The messages a check exchanged, kept so that a failure shows what was said.

use serde::Serialize;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The suite wrote it (as host, server or agent).
    Suite,
    /// The implementation under test wrote it.
    Peer,
}

/// One message, as written, with the connection it travelled on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Milliseconds since the check started.
    pub at_ms: u64,
    /// The connection's label within the check (`"A"`, `"B"`, `"agent"`).
    pub conn: String,
    /// Who wrote it.
    pub from: Direction,
    /// The JSON-RPC message.
    pub message: Value,
}

impl Entry {
    /// One line: `+12ms A suite> {...}`.
    pub fn line(&self) -> String {
        let arrow = match self.from {
            Direction::Suite => "suite>",
            Direction::Peer => "peer> ",
        };
        format!("+{}ms {} {arrow} {}", self.at_ms, self.conn, self.message)
    }
}

/// A shared, append-only record of one check's messages. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Transcript {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    start: Instant,
    entries: Vec<Entry>,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript::new()
    }
}

impl Transcript {
    /// An empty transcript whose clock starts now.
    pub fn new() -> Self {
        Transcript {
            inner: Arc::new(Mutex::new(Inner {
                start: Instant::now(),
                entries: Vec::new(),
            })),
        }
    }

    /// Records a message.
    pub fn record(&self, conn: &str, from: Direction, message: Value) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let at_ms = u64::try_from(inner.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        inner.entries.push(Entry {
            at_ms,
            conn: conn.to_owned(),
            from,
            message,
        });
    }

    /// Every message so far, in the order recorded.
    pub fn entries(&self) -> Vec<Entry> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .clone()
    }
}
