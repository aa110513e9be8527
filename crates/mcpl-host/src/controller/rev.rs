//! Rev order (§6.1): which hinted messages apply now, which wait, and which start a recovery.

use std::sync::Arc;
use std::time::Instant;

use mcpl_protocol::mcp::Tool;
use mcpl_protocol::rfc014::{HintChanges, ListResult, Presence};

use super::rev_state::{Held, JUMPED_CAP};
use super::state;
use super::{Carrier, Controller, Effect, Notice, ReadSeq, RecoveryReason};
use crate::config::Transport;

impl Controller {
    /// Places a hinted message's changes in rev order (H13, H15, H16).
    pub(super) fn place(
        &mut self,
        now: Instant,
        seq: ReadSeq,
        carrier: Carrier,
        hints: HintChanges,
    ) {
        let rev = hints.rev.get();
        // The server picks revs: after a rev of u64::MAX none can follow, and none may overflow.
        let next = self.snap.applied.checked_add(1);
        if Some(rev) == next {
            self.apply_at(now, seq, carrier, rev, hints);
            self.drain(now);
        } else if next.is_some_and(|n| rev > n) {
            match self.cfg.transport {
                Transport::StreamableHttp => {
                    self.order.held.insert(
                        rev,
                        Held {
                            seq,
                            carrier,
                            hints,
                        },
                    );
                    self.order.hold_until(now + self.cfg.hold_limit);
                }
                // H16: on an ordered transport a gap means a loss; recover at once.
                Transport::Ordered => self.trigger(now, RecoveryReason::Gap),
            }
        } else if self.order.is_jumped(rev) {
            // A full statement already covered it (H21), unless it changed what statements
            // do not state.
            if self.unstated(&hints) {
                self.trigger(now, RecoveryReason::Unstated);
            }
        } else if self.order.passed.contains(&rev) {
            // A duplicate spent it (H17).
        } else if self.cfg.transport == Transport::Ordered {
            self.trigger(now, RecoveryReason::Reversal);
        }
    }

    fn apply_at(
        &mut self,
        now: Instant,
        seq: ReadSeq,
        carrier: Carrier,
        rev: u64,
        hints: HintChanges,
    ) {
        let out = state::apply_hints(Arc::make_mut(&mut self.snap), rev, hints, &self.cfg.policy);
        self.emit_at(seq, carrier, out.items);
        for entry in out.suggestions {
            // §7: a suggestion opens nothing; it is shown, attributed to the server.
            self.effects
                .push_back(Effect::Notice(Notice::Suggestion { seq, entry }));
        }
        if out.unknown_tool {
            self.trigger(now, RecoveryReason::UnknownTool);
        }
    }

    /// Applies held messages that now follow, and a held list whose rev has been reached.
    pub(super) fn drain(&mut self, now: Instant) {
        // After a rev of u64::MAX nothing can follow.
        while let Some(next) = self.snap.applied.checked_add(1) {
            if let Some(h) = self.order.held.remove(&next) {
                self.apply_at(now, h.seq, h.carrier, next, h.hints);
            } else if self.order.passed.remove(&next) {
                Arc::make_mut(&mut self.snap).applied = next;
            } else {
                break;
            }
        }
        if let Some((rev, _)) = &self.order.held_list {
            if *rev <= self.snap.applied {
                if let Some((rev, tools)) = self.order.held_list.take() {
                    self.apply_list_now(tools, rev);
                }
            }
        }
        if self.order.idle() {
            self.order.deadline = None;
        }
    }

    /// H17: a duplicate event id's rev counts as passed; if it was never applied, recover.
    pub(super) fn pass_duplicate(&mut self, now: Instant, rev: Option<u64>) {
        let Some(rev) = rev else { return };
        if rev > self.snap.applied {
            self.order.passed.insert(rev);
            self.order.held.remove(&rev);
            self.trigger(now, RecoveryReason::DuplicateEvent);
            self.drain(now);
        }
    }

    /// Places a full statement (H21): applied when its rev is above `applied`, even if early.
    /// Returns false when it was stale and so applied nothing.
    pub(super) fn place_statement(
        &mut self,
        now: Instant,
        seq: ReadSeq,
        carrier: Carrier,
        result: &ListResult,
        rev: u64,
        away: bool,
    ) -> bool {
        let applied = self.snap.applied;
        if rev <= applied {
            if self.cfg.transport == Transport::Ordered && !self.order.is_jumped(rev) {
                self.trigger(now, RecoveryReason::Reversal);
            }
            return false;
        }
        // Appendix B.4: held hints at or below the statement's rev are dropped (it states them),
        // except what statements do not state: then the list is read again.
        let unstated = self
            .order
            .held
            .range(..=rev)
            .any(|(_, h)| self.unstated(&h.hints));
        self.order.held.retain(|r, _| *r > rev);
        self.order.passed.retain(|r| *r > rev);
        if rev > applied + 1 {
            if self.order.jumped.len() >= JUMPED_CAP {
                self.order.jumped.remove(0);
            }
            self.order.jumped.push((applied + 1, rev - 1));
        }
        // A held list at or below the statement's rev takes effect at its place, before the
        // statement (§6.1): presence and coarse visibility as of its rev, which the
        // statement then overrides for the dynamic tools it states.
        if self
            .order
            .held_list
            .as_ref()
            .is_some_and(|(r, _)| *r <= rev)
        {
            if let Some((r, tools)) = self.order.held_list.take() {
                self.apply_list_now(tools, r);
            }
        }
        let out = state::apply_statement(
            Arc::make_mut(&mut self.snap),
            rev,
            result,
            &self.cfg.policy,
            away,
        );
        self.emit_at(seq, carrier, out.items);
        if out.unknown_tool {
            self.trigger(now, RecoveryReason::UnknownTool);
        }
        if unstated {
            self.trigger(now, RecoveryReason::Unstated);
        }
        self.drain(now);
        true
    }

    /// True when `hints` change something a full statement does not state, so that dropping
    /// them for a statement would lose it: the visibility of a tool outside toolsets that the
    /// latest list holds static (§4.1: it may be hidden), or a move (§4.2).
    fn unstated(&self, hints: &HintChanges) -> bool {
        hints.tools.iter().flatten().any(|e| {
            e.presence.is_some()
                || self
                    .snap
                    .tool(&e.name)
                    .is_some_and(|t| t.toolset.is_none() && t.presence == Presence::Static)
        })
    }

    /// Applies a whole list at its place (H02, H11).
    pub(super) fn place_list(&mut self, now: Instant, tools: Vec<Tool>, rev: Option<u64>) {
        let applied = self.snap.applied;
        match (self.cfg.transport, rev) {
            (_, None) => self.apply_list_now(tools, applied),
            (Transport::Ordered, Some(r)) => {
                self.apply_list_now(tools, r);
                // H11: a list behind what was applied is out of step. A list ahead is read
                // by a recovery run, whose toolsets/list follows and resyncs.
                if r < applied {
                    self.trigger(now, RecoveryReason::ListOutOfStep);
                }
            }
            (Transport::StreamableHttp, Some(r)) if r > applied => {
                // H11: wait for the missing revs as for any early message.
                self.order.held_list = Some((r, tools));
                self.order.hold_until(now + self.cfg.hold_limit);
            }
            (Transport::StreamableHttp, Some(r)) => self.apply_list_now(tools, r),
        }
    }

    fn apply_list_now(&mut self, tools: Vec<Tool>, rev: u64) {
        let items = state::apply_list(
            Arc::make_mut(&mut self.snap),
            tools,
            rev,
            &self.cfg.policy,
            self.cfg.grouping.as_ref(),
        );
        self.emit_at(self.read_seq, Carrier::List, items);
    }

    pub(super) fn emit_at(
        &mut self,
        seq: ReadSeq,
        carrier: Carrier,
        items: Vec<super::ChangeItem>,
    ) {
        if !items.is_empty() {
            self.effects.push_back(Effect::Changed(super::Change {
                seq,
                carrier,
                items,
            }));
        }
    }
}
