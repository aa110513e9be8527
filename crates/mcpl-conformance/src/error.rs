//! The one error type of this crate's boundary: why a suite could not run at all.
//!
//! A check that fails is not an error: it is a [`crate::Outcome::Fail`] in the report. These
//! errors are for a suite that cannot start (a bad target, a port that cannot be bound).

/// Why a suite could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The target was given in a form the suite cannot use.
    #[error("bad target `{target}`: {reason}")]
    BadTarget {
        /// The target as given.
        target: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A local resource the suite needs (a listening socket) could not be set up.
    #[error("cannot set up the suite: {0}")]
    Setup(String),
}
