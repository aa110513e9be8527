//! The settings of a network listener ([`ListenOptions`]), apart from the listeners in
//! `listen` so the driver can name them without depending on the listeners.

use mcpl_rpc::transport::origin::{AllowedHosts, AllowedOrigins};
use mcpl_rpc::transport::tls::ServerTls;
use std::time::Duration;

/// How long a connection gets to finish TLS, the WebSocket upgrade and `initialize` by
/// default.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The defences of a listener. The defaults are roomy: several connections per principal (an
/// agent and its tools), thousands in all.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    /// Browser origins allowed besides none (default: loopback origins only).
    pub origins: AllowedOrigins,
    /// `Host` names allowed besides loopback ones (default: none). The listener adds its
    /// address ([`AllowedHosts::bound_at`]); on loopback a foreign `Host` gets 403.
    pub hosts: AllowedHosts,
    /// Serve `wss://` / `https://` with this certificate (default: plain).
    pub tls: Option<ServerTls>,
    /// Time to finish TLS, the upgrade and `initialize` (default 10 s); then the connection
    /// is closed.
    pub handshake_timeout: Duration,
    /// Connections (HTTP: sessions) open at once, in all (default 10,000).
    pub max_connections: usize,
    /// Connections (HTTP: sessions) open at once per principal (default 64).
    pub max_connections_per_principal: usize,
    /// An HTTP session without traffic for this long ends (default 30 minutes).
    pub idle_timeout: Option<Duration>,
}

impl Default for ListenOptions {
    fn default() -> Self {
        ListenOptions {
            origins: AllowedOrigins::default(),
            hosts: AllowedHosts::default(),
            tls: None,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            max_connections: 10_000,
            max_connections_per_principal: 64,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
        }
    }
}
