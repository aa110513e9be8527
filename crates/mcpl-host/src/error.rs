//! The crate's error type: caller misuse of a core, and transport failures in the driver.
//!
//! A peer's fault never comes back as `Err`: the controller turns it into an effect (a
//! recovery, an error reply) and leaves its state unchanged.

/// What went wrong when the embedding code used the host incorrectly, or the transport failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// H12: the server or this host did not switch toolHints on, so no `toolsets/*` is sent.
    #[error("toolHints is not active on this connection")]
    HintsOff,
    /// §5.4: the toolset is not declared by the server, so the host owns it.
    #[error("toolset `{0}` is not declared by the server")]
    Undeclared(String),
    /// The toolset is neither declared nor named by any listed tool.
    #[error("unknown toolset `{0}`")]
    UnknownToolset(String),
    /// A name breaks the RFC-014 grammar `^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`.
    #[error("`{0}` is not a valid toolset or instance name")]
    BadName(String),
    /// §4.3 / Appendix B.10: an instanced toolset needs an instance to close or to call.
    #[error("toolset `{0}` has instances: name one")]
    InstanceRequired(String),
    /// §4.3: a toolset without instances never takes one.
    #[error("toolset `{0}` has no instances")]
    InstanceNotAllowed(String),
    /// §5.2: a policy close is limited to what this host opened.
    #[error("`{0}` was not opened by this host, so policy may not close it")]
    NotOpenedHere(String),
    /// The connection has closed; nothing more can be sent on it.
    #[error("the connection is closed")]
    Closed,
    /// The driver's transport failed.
    #[error("transport failed: {0}")]
    Transport(String),
}
