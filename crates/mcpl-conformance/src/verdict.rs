//! How a check stops early: it failed, or it cannot run here; and how a whole check came out.

use crate::report::Outcome;
use crate::transcript::Transcript;
use std::time::Duration;

/// Why a check stopped before its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The implementation broke the rule; the text names what it did.
    Fail(String),
    /// The rule needs what the target declares it lacks; the text says what.
    NotApplicable(String),
}

/// The result of one step of a check.
pub(crate) type Step<T = ()> = Result<T, Verdict>;

/// Runs a whole check, allowing it `limit`, and says how it came out; a failure carries the
/// check's `transcript`.
pub(crate) async fn run_within(
    limit: Duration,
    check: impl Future<Output = Step>,
    transcript: &Transcript,
) -> Outcome {
    match tokio::time::timeout(limit, check).await {
        Ok(Ok(())) => Outcome::Pass,
        Ok(Err(Verdict::NotApplicable(reason))) => Outcome::NotApplicable { reason },
        Ok(Err(Verdict::Fail(reason))) => Outcome::Fail {
            reason,
            transcript: transcript.entries(),
        },
        Err(_) => Outcome::Fail {
            reason: format!("the check did not finish within {limit:?}"),
            transcript: transcript.entries(),
        },
    }
}

/// Stops the check as failed.
macro_rules! fail {
    ($($t:tt)*) => {
        return Err($crate::verdict::Verdict::Fail(format!($($t)*)))
    };
}

/// Stops the check as failed unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($t:tt)*) => {
        if !$cond {
            fail!($($t)*);
        }
    };
}

/// Stops the check as not applicable: only for what the target declares it lacks.
macro_rules! not_applicable {
    ($($t:tt)*) => {
        return Err($crate::verdict::Verdict::NotApplicable(format!($($t)*)))
    };
}

pub(crate) use {ensure, fail, not_applicable};
