//! Recovery (§6.1, H23-H28): read `tools/list` whole, then `toolsets/list`, one run at a time,
//! with one further run for any trigger during a run, and back-off after a failed read.
//!
//! The connect path is the same run, started with [`RecoveryReason::Connect`] (H28).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use mcpl_protocol::methods;
use serde_json::{Value, json};

use super::catalog::{ListFailure, ListRead, PageStep};
use super::{Controller, Effect, RecoveryReason, ReqKind};

#[derive(Debug, Default)]
enum Phase {
    #[default]
    Idle,
    List(ListRead),
    Statement,
    Backoff(Instant),
}

/// One connection's recovery state.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    phase: Phase,
    run: u64,
    /// H24: a trigger during a run schedules exactly one more run.
    again: bool,
    /// This run's list or statement failed (H25, H26).
    failed: bool,
    /// Consecutive failed runs, for the back-off.
    failures: u32,
    /// This run is the connect read: vanished instances were ended while away (H28).
    connect: bool,
    /// When the runs of the last minute started, oldest first (the rate limit).
    starts: VecDeque<Instant>,
}

/// The window of `max_recoveries_per_minute`.
const MINUTE: Duration = Duration::from_secs(60);

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

/// One connection's recovery, as [`Controller::recovery`] reports it.
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

impl Controller {
    /// Where this connection's recovery stands: idle, reading, or waiting to retry.
    pub fn recovery(&self) -> RecoveryStatus {
        self.recovery.status()
    }

    /// Starts a recovery run, or marks one more run if a run is out (H24).
    pub(super) fn trigger(&mut self, now: Instant, reason: RecoveryReason) {
        if self.closed {
            return;
        }
        match self.recovery.phase {
            Phase::Idle => self.start_run(now, reason),
            Phase::List(_) | Phase::Statement => self.recovery.again = true,
            Phase::Backoff(_) => {} // a run is scheduled already
        }
    }

    pub(super) fn start_run(&mut self, now: Instant, reason: RecoveryReason) {
        // The rate limit: a run past it waits, as a back-off, for the window to admit it.
        let starts = &mut self.recovery.starts;
        while starts
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= MINUTE)
        {
            starts.pop_front();
        }
        let limit = self.cfg.max_recoveries_per_minute.max(1) as usize;
        if starts.len() >= limit {
            let until = starts[0] + MINUTE;
            tracing::warn!(
                server = %self.cfg.server,
                ?reason,
                limit,
                "recovery deferred: {limit} runs started in the last minute \
                 (`max_recoveries_per_minute`)"
            );
            self.recovery.phase = Phase::Backoff(until);
            self.effects
                .push_back(Effect::RecoveryLimited { reason, until });
            return;
        }
        starts.push_back(now);
        self.recovery.run += 1;
        self.recovery.again = false;
        self.recovery.failed = false;
        self.recovery.connect = reason == RecoveryReason::Connect
            || (self.recovery.connect && reason == RecoveryReason::Retry);
        self.recovery.phase = Phase::List(ListRead::default());
        self.effects.push_back(Effect::Recovering(reason));
        let run = self.recovery.run;
        self.request(
            now,
            methods::TOOLS_LIST,
            Some(json!({})),
            ReqKind::ListPage { run },
        );
    }

    /// One `tools/list` page arrived for `run`.
    pub(super) fn list_page(&mut self, now: Instant, run: u64, result: &Value) {
        if run != self.recovery.run {
            return;
        }
        let Phase::List(read) = &mut self.recovery.phase else {
            return;
        };
        match read.page(result, self.cfg.max_pages) {
            Ok(PageStep::Next(cursor)) => {
                let params = json!({ "cursor": cursor });
                self.request(
                    now,
                    methods::TOOLS_LIST,
                    Some(params),
                    ReqKind::ListPage { run },
                );
            }
            Ok(PageStep::Done { tools, rev }) => {
                self.place_list(now, tools, rev);
                self.after_list(now);
            }
            Err(failure) => self.list_failed_because(now, run, failure),
        }
    }

    /// The run's list read failed (an error answer or a timeout).
    pub(super) fn list_failed(&mut self, now: Instant, run: u64) {
        self.list_failed_because(now, run, ListFailure::Timeout);
    }

    pub(super) fn list_error(&mut self, now: Instant, run: u64) {
        self.list_failed_because(now, run, ListFailure::Error);
    }

    fn list_failed_because(&mut self, now: Instant, run: u64, failure: ListFailure) {
        if run != self.recovery.run || !matches!(self.recovery.phase, Phase::List(_)) {
            return;
        }
        // H03, H81: log the failure, never the server's values.
        tracing::warn!(server = %self.cfg.server, ?failure, "tools/list read failed; nothing applied");
        self.recovery.failed = true;
        // H25: a failed list still goes on to toolsets/list.
        self.after_list(now);
    }

    fn after_list(&mut self, now: Instant) {
        if self.snap.hinted {
            self.recovery.phase = Phase::Statement;
            let run = Some(self.recovery.run);
            let kind = ReqKind::Statement { run, pending: None };
            self.request(now, methods::TOOLSETS_LIST, Some(json!({})), kind);
        } else {
            self.run_done(now);
        }
    }

    /// The run's statement was read (`ok`) or failed.
    pub(super) fn statement_done(&mut self, now: Instant, run: u64, ok: bool) {
        if run != self.recovery.run || !matches!(self.recovery.phase, Phase::Statement) {
            return;
        }
        if ok {
            self.recovery.connect = false;
        } else {
            self.recovery.failed = true;
        }
        self.run_done(now);
    }

    /// True when the statement read for `run` is the connect read (H28).
    pub(super) fn run_is_connect(&self, run: u64) -> bool {
        run == self.recovery.run && self.recovery.connect
    }

    fn run_done(&mut self, now: Instant) {
        if self.recovery.failed {
            // H25, H26: retry with bounded, doubling back-off until a whole read succeeds.
            let shift = self.recovery.failures.min(16);
            let delay = self
                .cfg
                .backoff_initial
                .saturating_mul(1u32 << shift)
                .min(self.cfg.backoff_max);
            self.recovery.failures += 1;
            self.recovery.phase = Phase::Backoff(now + delay);
        } else if self.recovery.again {
            self.recovery.failures = 0;
            self.recovery.phase = Phase::Idle;
            self.start_run(now, RecoveryReason::Retry);
        } else {
            self.recovery.failures = 0;
            self.recovery.connect = false;
            self.recovery.phase = Phase::Idle;
        }
    }
}
