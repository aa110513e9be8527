//! One connection's recovery state (§6.1): the data `recovery` runs on (a leaf).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::catalog::ListRead;

#[derive(Debug, Default)]
pub(super) enum Phase {
    #[default]
    Idle,
    List(ListRead),
    Statement,
    Backoff(Instant),
}

/// One connection's recovery state.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    pub(super) phase: Phase,
    pub(super) run: u64,
    /// H24: a trigger during a run schedules exactly one more run.
    pub(super) again: bool,
    /// This run's list or statement failed (H25, H26).
    pub(super) failed: bool,
    /// Consecutive failed runs, for the back-off.
    pub(super) failures: u32,
    /// This run is the connect read: vanished instances were ended while away (H28).
    pub(super) connect: bool,
    /// When the runs of the last minute started, oldest first (the rate limit).
    pub(super) starts: VecDeque<Instant>,
}

/// The window of `max_recoveries_per_minute`.
pub(super) const MINUTE: Duration = Duration::from_secs(60);

impl Recovery {
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Backoff(at) => Some(at),
            _ => None,
        }
    }

    /// Where recovery stands, for a reader (an inspector page, a log).
    pub(crate) fn status(&self) -> RecoveryStatus {
        let phase = match self.phase {
            Phase::Idle => RecoveryPhase::Idle,
            Phase::List(_) => RecoveryPhase::ReadingList,
            Phase::Statement => RecoveryPhase::ReadingStatement,
            Phase::Backoff(at) => RecoveryPhase::Waiting { until: at },
        };
        RecoveryStatus {
            phase,
            runs: self.run,
            failures: self.failures,
            again: self.again,
        }
    }
}

/// What a recovery run is doing now (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryPhase {
    /// No run out: the applied state is current as far as the host knows.
    Idle,
    /// Reading `tools/list` (every page).
    ReadingList,
    /// Reading `toolsets/list` after the list.
    ReadingStatement,
    /// A failed run's back-off, or the rate limit, holds the next run until `until`.
    Waiting {
        /// When the next run may start.
        until: Instant,
    },
}

/// One connection's recovery, as [`Controller::recovery`](super::Controller::recovery) reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveryStatus {
    /// What the current run is doing.
    pub phase: RecoveryPhase,
    /// Runs started on this connection (the connect read is the first).
    pub runs: u64,
    /// Failed runs in a row (0 after a whole read).
    pub failures: u32,
    /// A trigger arrived during the run: exactly one more run follows it (H24).
    pub again: bool,
}

impl std::fmt::Display for RecoveryStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.phase {
            RecoveryPhase::Idle => write!(f, "idle")?,
            RecoveryPhase::ReadingList => write!(f, "reading tools/list")?,
            RecoveryPhase::ReadingStatement => write!(f, "reading toolsets/list")?,
            RecoveryPhase::Waiting { .. } => write!(f, "waiting to retry")?,
        }
        if self.failures > 0 {
            write!(f, " ({} failed in a row)", self.failures)?;
        }
        if self.again {
            write!(f, "; one more run queued")?;
        }
        Ok(())
    }
}
