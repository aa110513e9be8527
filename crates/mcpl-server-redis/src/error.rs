//! The crate's error type.

/// What can go wrong talking to Redis.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The Redis URL does not parse.
    #[error("bad redis url `{url}`: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// Redis could not be reached or refused a command.
    #[error("redis unavailable: {0}")]
    Unavailable(String),
    /// A shared document could not be read or written: its stored value does not parse as
    /// the expected type (it is left as it is), the new value does not serialize, or other
    /// writers kept getting in first.
    #[error("document `{key}`: {reason}")]
    Document {
        /// The document's Redis key.
        key: String,
        /// What went wrong.
        reason: String,
    },
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        Error::Unavailable(e.to_string())
    }
}
