//! The table of requests this side sent and has not seen answered (sans-IO).
//!
//! Each entry keeps the request's method, so an answer is read as the type of the request it
//! answers, never guessed from its shape (lsp-server's `ReqQueue`). A request that timed out,
//! was cancelled or lost its caller moves to a bounded table of late records: RFC-014 §6.1
//! and H14 make a host apply hints from a result that arrives after its timeout, so the answer
//! must still be recognised. Time comes in as `now`; nothing here reads a clock.

use mcpl_protocol::jsonrpc::RequestId;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// A deadline far enough away to mean "never" (30 years).
const FOREVER: Duration = Duration::from_secs(30 * 365 * 86_400);

/// Why an answer arrived for a request nobody awaits any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LateReason {
    /// The request timed out (and was cancelled).
    TimedOut,
    /// This side cancelled the request.
    Cancelled,
    /// The caller stopped waiting (its future was dropped).
    Abandoned,
}

/// The minimal record kept for a request nobody awaits (H14: the method and nothing chosen by
/// the other peer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LateRecord {
    pub method: String,
    pub reason: LateReason,
}

/// What an answer with a given id completes.
#[derive(Debug)]
pub(crate) enum Completion<W> {
    /// A request someone still awaits.
    Awaited { method: String, waiter: W },
    /// A request that timed out, was cancelled or abandoned.
    Late(LateRecord),
    /// No request this side sent, or one answered already.
    Unknown,
}

/// A request whose time ran out, handed back by [`Outgoing::handle_timeout`].
#[derive(Debug)]
pub(crate) struct Expired<W> {
    pub id: RequestId,
    pub method: String,
    pub after: Duration,
    pub waiter: W,
}

#[derive(Debug)]
struct Awaiting<W> {
    method: String,
    deadline: Instant,
    timeout: Duration,
    waiter: W,
}

/// Outgoing requests by id, with their deadlines; `W` is whatever the driver needs to hand
/// the answer over (a oneshot sender).
#[derive(Debug)]
pub(crate) struct Outgoing<W> {
    awaiting: HashMap<RequestId, Awaiting<W>>,
    deadlines: BTreeSet<(Instant, RequestId)>,
    late: HashMap<RequestId, LateRecord>,
    late_order: VecDeque<RequestId>,
    max_late: usize,
}

impl<W> Outgoing<W> {
    /// An empty table keeping at most `max_late` late records (oldest forgotten first).
    pub fn new(max_late: usize) -> Self {
        Outgoing {
            awaiting: HashMap::new(),
            deadlines: BTreeSet::new(),
            late: HashMap::new(),
            late_order: VecDeque::new(),
            max_late,
        }
    }

    /// Records a request sent at `now` that times out after `timeout`.
    pub fn register(
        &mut self,
        now: Instant,
        id: RequestId,
        method: String,
        timeout: Duration,
        waiter: W,
    ) {
        // A timeout longer than `Instant` can hold is as good as none.
        let deadline = now
            .checked_add(timeout)
            .or_else(|| now.checked_add(FOREVER))
            .unwrap_or(now);
        self.deadlines.insert((deadline, id.clone()));
        self.awaiting.insert(
            id,
            Awaiting {
                method,
                deadline,
                timeout,
                waiter,
            },
        );
    }

    /// An answer with `id` was read.
    pub fn complete(&mut self, id: &RequestId) -> Completion<W> {
        if let Some(entry) = self.awaiting.remove(id) {
            self.deadlines.remove(&(entry.deadline, id.clone()));
            return Completion::Awaited {
                method: entry.method,
                waiter: entry.waiter,
            };
        }
        match self.late.remove(id) {
            Some(record) => {
                self.late_order.retain(|x| x != id);
                Completion::Late(record)
            }
            None => Completion::Unknown,
        }
    }

    /// Stops awaiting `id` and keeps a late record; returns the method and waiter, or `None`
    /// when `id` is not awaited.
    pub fn give_up(&mut self, id: &RequestId, reason: LateReason) -> Option<(String, W)> {
        let entry = self.awaiting.remove(id)?;
        self.deadlines.remove(&(entry.deadline, id.clone()));
        self.remember_late(id.clone(), entry.method.clone(), reason);
        Some((entry.method, entry.waiter))
    }

    /// The earliest deadline, if any request is awaited.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.first().map(|(deadline, _)| *deadline)
    }

    /// Expires every request whose deadline is at or before `now`; harmless when none is.
    pub fn handle_timeout(&mut self, now: Instant) -> Vec<Expired<W>> {
        let mut expired = Vec::new();
        while let Some((deadline, id)) = self.deadlines.first().cloned() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_first();
            if let Some(entry) = self.awaiting.remove(&id) {
                self.remember_late(id.clone(), entry.method.clone(), LateReason::TimedOut);
                expired.push(Expired {
                    id,
                    method: entry.method,
                    after: entry.timeout,
                    waiter: entry.waiter,
                });
            }
        }
        expired
    }

    /// Empties the table (the connection closed): every awaited method and waiter.
    pub fn drain(&mut self) -> Vec<(String, W)> {
        self.deadlines.clear();
        self.late.clear();
        self.late_order.clear();
        self.awaiting
            .drain()
            .map(|(_, entry)| (entry.method, entry.waiter))
            .collect()
    }

    fn remember_late(&mut self, id: RequestId, method: String, reason: LateReason) {
        if self.max_late == 0 {
            return;
        }
        while self.late_order.len() >= self.max_late {
            if let Some(oldest) = self.late_order.pop_front() {
                self.late.remove(&oldest);
            }
        }
        self.late_order.push_back(id.clone());
        self.late.insert(id, LateRecord { method, reason });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn an_answer_completes_its_request_with_its_method() {
        let now = Instant::now();
        let mut table = Outgoing::new(8);
        table.register(now, 1.into(), "toolsets/open".into(), secs(5), "w1");
        let Completion::Awaited { method, waiter } = table.complete(&1.into()) else {
            panic!("not awaited")
        };
        assert_eq!((method.as_str(), waiter), ("toolsets/open", "w1"));
        assert!(matches!(table.complete(&1.into()), Completion::Unknown));
        assert_eq!(table.poll_timeout(), None);
    }

    #[test]
    fn s6_1_a_timed_out_request_is_still_recognised_when_answered() {
        let now = Instant::now();
        let mut table = Outgoing::new(8);
        table.register(now, 1.into(), "toolsets/close".into(), secs(5), ());
        table.register(now, 2.into(), "ping".into(), secs(10), ());
        assert_eq!(table.poll_timeout(), Some(now + secs(5)));
        assert!(table.handle_timeout(now + secs(4)).is_empty());
        let expired = table.handle_timeout(now + secs(5));
        assert_eq!(expired.len(), 1);
        assert_eq!(expired[0].id, RequestId::Number(1));
        assert_eq!(expired[0].after, secs(5));
        assert_eq!(table.poll_timeout(), Some(now + secs(10)));
        let Completion::Late(record) = table.complete(&1.into()) else {
            panic!("not late")
        };
        assert_eq!(
            record,
            LateRecord {
                method: "toolsets/close".into(),
                reason: LateReason::TimedOut
            }
        );
    }

    #[test]
    fn late_records_are_bounded_oldest_first() {
        let now = Instant::now();
        let mut table = Outgoing::new(2);
        for id in 1..=3 {
            table.register(now, RequestId::Number(id), "m".into(), secs(1), ());
            table.give_up(&RequestId::Number(id), LateReason::Cancelled);
        }
        assert!(matches!(table.complete(&1.into()), Completion::Unknown));
        assert!(matches!(table.complete(&2.into()), Completion::Late(_)));
        assert!(matches!(table.complete(&3.into()), Completion::Late(_)));
    }

    #[test]
    fn a_huge_timeout_does_not_overflow() {
        let now = Instant::now();
        let mut table = Outgoing::new(2);
        table.register(now, 1.into(), "m".into(), Duration::MAX, ());
        assert!(table.poll_timeout().unwrap() > now);
        assert!(table.handle_timeout(now + secs(3600)).is_empty());
    }

    #[test]
    fn drain_hands_back_every_waiter() {
        let now = Instant::now();
        let mut table = Outgoing::new(2);
        table.register(now, 1.into(), "a".into(), secs(1), 'a');
        table.register(now, "x".into(), "b".into(), secs(1), 'b');
        let mut waiters: Vec<char> = table.drain().into_iter().map(|(_, w)| w).collect();
        waiters.sort_unstable();
        assert_eq!(waiters, ['a', 'b']);
        assert_eq!(table.poll_timeout(), None);
    }

    #[test]
    fn a_timeout_too_long_for_instant_never_expires_within_a_decade() {
        let now = Instant::now();
        let mut table = Outgoing::new(2);
        table.register(now, 1.into(), "m".into(), Duration::MAX, ());
        let decade = secs(10 * 365 * 86_400);
        assert!(table.poll_timeout().unwrap() > now + decade);
        assert!(table.handle_timeout(now + decade).is_empty());
    }

    #[test]
    fn a_late_answer_frees_its_record_and_the_bound_still_forgets_the_oldest() {
        let now = Instant::now();
        let mut table = Outgoing::new(2);
        for id in 1..=4 {
            table.register(now, id.into(), format!("m{id}"), secs(5), ());
        }
        table.give_up(&1.into(), LateReason::Cancelled);
        table.give_up(&2.into(), LateReason::Cancelled);
        assert!(matches!(table.complete(&1.into()), Completion::Late(_)));
        // Records 2, 3 and 4 with room for two: 2, the oldest left, is forgotten.
        table.give_up(&3.into(), LateReason::Cancelled);
        table.give_up(&4.into(), LateReason::Cancelled);
        assert!(matches!(table.complete(&2.into()), Completion::Unknown));
        assert!(matches!(table.complete(&3.into()), Completion::Late(_)));
        assert!(matches!(table.complete(&4.into()), Completion::Late(_)));
    }
}
