//! The crate's error type: bad configuration and failures to reach a backing server.
//!
//! What a backing server or the client does wrong never comes back as `Err`: a meta-tool
//! answers it with a tool error (`isError: true`) naming the problem, and the surface goes on.

use std::path::PathBuf;

/// What went wrong setting up or running the surface host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `--server` value could not be read.
    #[error("bad server spec `{spec}`: {why}")]
    BadSpec {
        /// The value as given.
        spec: String,
        /// Why it was refused.
        why: String,
    },
    /// A config file could not be read or is wrong.
    #[error("config file {}: {why}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the server and key.
        why: String,
    },
    /// A backing server could not be reached or refused the handshake.
    #[error("server \"{server}\": {why}")]
    Connect {
        /// The server's name.
        server: mcpl_host::ServerName,
        /// What failed.
        why: String,
    },
    /// The client-facing transport failed.
    #[error("client transport failed: {0}")]
    Transport(String),
}
