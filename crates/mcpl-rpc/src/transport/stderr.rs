//! A child process's captured stderr (a leaf: the transport holds it, `child` fills it).

use tokio::sync::mpsc;

/// The captured stderr of a child process, one line at a time.
#[derive(Debug)]
pub struct StderrLines {
    pub(super) rx: mpsc::UnboundedReceiver<String>,
}

impl StderrLines {
    /// The next line, or `None` once the child closed its stderr.
    pub async fn next_line(&mut self) -> Option<String> {
        self.rx.recv().await
    }
}
