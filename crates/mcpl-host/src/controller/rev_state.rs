//! The rev-order bookkeeping (§6.1): held messages and jumped revs, the data `rev` runs on
//! (a leaf).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::HintChanges;

use super::change::{Carrier, ReadSeq};

/// A hinted message waiting for the revs before it (Streamable HTTP only, H16).
#[derive(Debug)]
pub(super) struct Held {
    pub(super) seq: ReadSeq,
    pub(super) carrier: Carrier,
    pub(super) hints: HintChanges,
}

/// Most ranges of revs a full statement jumped past that are remembered.
pub(super) const JUMPED_CAP: usize = 64;

/// The rev-order bookkeeping beside `applied` (which lives in the snapshot).
#[derive(Debug, Default)]
pub(crate) struct RevOrder {
    pub(super) held: BTreeMap<u64, Held>,
    pub(super) held_list: Option<(u64, Vec<Tool>)>,
    pub(super) deadline: Option<Instant>,
    /// Revs a full statement jumped past: arriving later they are only ignored (H16, H21).
    pub(super) jumped: Vec<(u64, u64)>,
    /// Revs counted as passed without being applied (duplicate event ids, H17).
    pub(super) passed: BTreeSet<u64>,
}

impl RevOrder {
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub(crate) fn clear_deadline(&mut self) {
        self.deadline = None;
    }

    pub(super) fn is_jumped(&self, rev: u64) -> bool {
        self.jumped
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&rev))
    }

    pub(super) fn hold_until(&mut self, at: Instant) {
        // Appendix B.3: the first held message sets the limit; later ones do not extend it.
        if self.deadline.is_none() {
            self.deadline = Some(at);
        }
    }

    /// True when nothing waits any more.
    pub(super) fn idle(&self) -> bool {
        self.held.is_empty() && self.held_list.is_none()
    }
}
