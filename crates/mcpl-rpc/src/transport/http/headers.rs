//! The Streamable HTTP headers both ends name.

/// The session header (`Mcp-Session-Id`).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol-version header a client sends after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The header a client resumes a GET stream with.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";
