//! The crate's error type: caller misuse of a core, and transport failures in the driver.
//!
//! A peer's fault never comes back as `Err`: the controller turns it into an effect (a
//! recovery, an error reply) and leaves its state unchanged.

use crate::names::{InstanceName, ToolsetName};

/// `toolset` or `toolset/instance`.
fn place(toolset: &ToolsetName, instance: Option<&InstanceName>) -> String {
    match instance {
        Some(i) => format!("{toolset}/{i}"),
        None => toolset.to_string(),
    }
}

/// What went wrong when the embedding code used the host incorrectly, or the transport failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// H12: the server or this host did not switch toolHints on, so no `toolsets/*` is sent.
    #[error("toolHints is not active on this connection")]
    HintsOff,
    /// §5.4: the toolset is not declared by the server, so the host owns it.
    #[error("toolset `{0}` is not declared by the server")]
    Undeclared(ToolsetName),
    /// The toolset is neither declared nor named by any listed tool.
    #[error("unknown toolset `{0}`")]
    UnknownToolset(ToolsetName),
    /// §4.3 / Appendix B.10: an instanced toolset needs an instance to close or to call.
    #[error("toolset `{0}` has instances: name one")]
    InstanceRequired(ToolsetName),
    /// §4.3: a toolset without instances never takes one.
    #[error("toolset `{0}` has no instances")]
    InstanceNotAllowed(ToolsetName),
    /// §5.2: a policy close is limited to what this host opened.
    #[error("`{}` was not opened by this host, so policy may not close it", place(toolset, instance.as_ref()))]
    NotOpenedHere {
        /// The toolset.
        toolset: ToolsetName,
        /// The instance, for an instanced toolset.
        instance: Option<InstanceName>,
    },
    /// The connection has closed; nothing more can be sent on it.
    #[error("the connection is closed")]
    Closed,
    /// The driver's transport failed.
    #[error("transport failed: {0}")]
    Transport(String),
}
