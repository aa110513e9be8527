//! Principals, connections and calls: who a connection acts for (§5.6, Appendix B.23), and
//! the ids the rest of the crate names things by.
//!
//! A principal is never taken from anything the client merely claims. It comes from an
//! operator-configured [`Identity`]: a token-to-principal map for WebSocket and HTTP, one
//! principal per process for stdio, or a fresh principal per connection.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// One connection (one MCP session) to the server. Allocated by the driver, opaque to peers.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ConnectionId(pub u64);

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// Identifies one piece of app work a session asked for ([`crate::Effect::Call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallId(pub(crate) u64);

/// Whether a principal's toolsets outlive a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrincipalScope {
    /// An operator-configured, authenticated identity: shared by all of its connections and
    /// kept across reconnects (§5.6).
    Authenticated,
    /// A principal of one connection only: its toolsets end when the connection closes
    /// (§5.6, Appendix B.23).
    Connection,
}

/// The identity a connection acts for. Toolsets, instances and ended records belong to it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Principal {
    id: Arc<str>,
    scope: PrincipalScope,
}

impl Principal {
    /// An authenticated principal named `id`, shared by every connection that authenticated
    /// as it.
    pub fn authenticated(id: impl AsRef<str>) -> Self {
        Principal {
            id: Arc::from(id.as_ref()),
            scope: PrincipalScope::Authenticated,
        }
    }

    /// The private principal of one connection; its toolsets end at disconnect.
    pub fn of_connection(connection: ConnectionId) -> Self {
        Principal {
            id: Arc::from(format!("connection-{}", connection.0)),
            scope: PrincipalScope::Connection,
        }
    }

    /// The principal's id, as the operator configured it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether its state outlives a connection.
    pub fn scope(&self) -> PrincipalScope {
        self.scope
    }

    /// Whether its toolsets end when its connection closes.
    pub fn ends_at_disconnect(&self) -> bool {
        self.scope == PrincipalScope::Connection
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// How the server derives a connection's principal; configured by the operator.
#[derive(Debug, Clone)]
pub enum Identity {
    /// Every connection acts for this one principal (the stdio default: one process, one
    /// principal).
    Process(Principal),
    /// A bearer token presented by the transport (WebSocket, HTTP) names the principal;
    /// connections without a known token are refused.
    Tokens(TokenMap),
    /// Each connection is its own principal (no identity at all, or a token shared by several
    /// agents); toolsets end at disconnect.
    PerConnection,
}

impl Identity {
    /// The stdio default: one authenticated principal named `id` for the whole process.
    pub fn process(id: impl AsRef<str>) -> Self {
        Identity::Process(Principal::authenticated(id))
    }

    /// The principal of `connection`, given the token its transport presented. `None` means
    /// the connection must be refused (an unknown or missing token under [`Identity::Tokens`]).
    pub fn resolve(&self, connection: ConnectionId, token: Option<&str>) -> Option<Principal> {
        match self {
            Identity::Process(p) => Some(p.clone()),
            Identity::Tokens(map) => token.and_then(|t| map.resolve(t)),
            Identity::PerConnection => Some(Principal::of_connection(connection)),
        }
    }
}

/// An operator-configured map from bearer tokens to principals.
#[derive(Debug, Clone, Default)]
pub struct TokenMap {
    tokens: HashMap<String, Principal>,
}

impl TokenMap {
    /// An empty map (refuses every token).
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps `token` to the authenticated principal `id`.
    pub fn with(mut self, token: impl Into<String>, id: impl AsRef<str>) -> Self {
        self.tokens
            .insert(token.into(), Principal::authenticated(id));
        self
    }

    /// The principal of `token`, if the operator configured it.
    pub fn resolve(&self, token: &str) -> Option<Principal> {
        self.tokens.get(token).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s5_6_tokens_name_principals_and_unknown_tokens_are_refused() {
        let id = Identity::Tokens(TokenMap::new().with("t-ada", "ada").with("t-bob", "bob"));
        let c = ConnectionId(1);
        assert_eq!(
            id.resolve(c, Some("t-ada")),
            Some(Principal::authenticated("ada"))
        );
        assert_eq!(id.resolve(c, Some("nope")), None);
        assert_eq!(id.resolve(c, None), None);
    }

    #[test]
    fn a_principal_displays_as_its_id() {
        // Stores key principal state by this text (`mcpl-server-redis`), so it must be the id
        // itself, and distinct principals must read differently.
        assert_eq!(Principal::authenticated("ada").to_string(), "ada");
        assert_eq!(
            format!("state of {}", Principal::of_connection(ConnectionId(7))),
            "state of connection-7"
        );
    }

    #[test]
    fn appendix_b23_per_connection_principals_are_distinct_and_end_at_disconnect() {
        let id = Identity::PerConnection;
        let a = id.resolve(ConnectionId(1), Some("whatever")).unwrap();
        let b = id.resolve(ConnectionId(2), None).unwrap();
        assert_ne!(a, b);
        assert!(a.ends_at_disconnect());
        let p = Identity::process("me")
            .resolve(ConnectionId(3), None)
            .unwrap();
        assert!(!p.ends_at_disconnect());
        assert_eq!(p.id(), "me");
    }
}
