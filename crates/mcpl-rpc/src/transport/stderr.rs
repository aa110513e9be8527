//! A child process's captured stderr (a leaf: the transport holds it, `child` fills it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// How many captured stderr lines wait for their reader at most. Past that, new lines are
/// dropped (and counted, with a warning) so a chatty child cannot grow this process's memory;
/// the child's stderr is still read, so the child never blocks on it.
pub const STDERR_BACKLOG: usize = 256;

/// The captured stderr of a child process, one line at a time. At most [`STDERR_BACKLOG`]
/// lines wait to be read; lines that come while it is full are dropped and counted.
#[derive(Debug)]
pub struct StderrLines {
    pub(super) rx: mpsc::Receiver<String>,
    pub(super) dropped: Arc<AtomicU64>,
}

impl StderrLines {
    /// The next line, or `None` once the child closed its stderr.
    pub async fn next_line(&mut self) -> Option<String> {
        self.rx.recv().await
    }

    /// How many lines were dropped so far because [`STDERR_BACKLOG`] lines were waiting.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
