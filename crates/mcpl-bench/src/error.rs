//! The crate's one error type.

/// Why a benchmark could not produce its figures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A setup step failed (a server would not build, a runtime would not start).
    #[error("setting up {what}: {detail}")]
    Setup {
        /// What was being set up.
        what: &'static str,
        /// The underlying failure.
        detail: String,
    },
    /// A request or a transport failed during a measurement.
    #[error("{what}: {detail}")]
    Transport {
        /// The step that failed.
        what: String,
        /// The underlying failure.
        detail: String,
    },
    /// Something under measurement did not behave as the benchmark requires, so its numbers
    /// would mean nothing (a controller fell into recovery, hints never arrived).
    #[error("invalid run: {0}")]
    Invalid(String),
    /// A child server process failed.
    #[error("child server: {0}")]
    Child(String),
}

impl BenchError {
    /// A transport failure during `what`.
    pub fn transport(what: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        BenchError::Transport {
            what: what.into(),
            detail: detail.to_string(),
        }
    }

    /// A setup failure of `what`.
    pub fn setup(what: &'static str, detail: impl std::fmt::Display) -> Self {
        BenchError::Setup {
            what,
            detail: detail.to_string(),
        }
    }
}
