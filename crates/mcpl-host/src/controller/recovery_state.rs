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
}
