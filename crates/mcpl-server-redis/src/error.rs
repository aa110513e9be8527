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
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        Error::Unavailable(e.to_string())
    }
}
