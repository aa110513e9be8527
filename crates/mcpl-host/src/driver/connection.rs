//! A live connection's handle: what [`Host::add_server`](super::Host::add_server) returns.

use tokio::sync::oneshot;

/// A live connection added with [`Host::add_server`](super::Host::add_server).
#[derive(Debug)]
pub struct Connection {
    pub(super) closed: oneshot::Receiver<String>,
}

impl Connection {
    /// Waits until the connection ends (the peer closed, or the host task stopped); returns
    /// why.
    pub async fn closed(self) -> String {
        self.closed
            .await
            .unwrap_or_else(|_| "the host stopped".to_owned())
    }
}
