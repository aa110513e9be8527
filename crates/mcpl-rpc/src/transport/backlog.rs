//! The messages an inline wire holds while another is being written.

use super::Outbound;
use std::collections::VecDeque;

/// Messages waiting for an inline wire, bounded: past its capacity the other side counts as
/// reading too slowly, the wire overflows (the peer closes the connection) and what waited
/// is dropped.
#[derive(Debug)]
pub(super) struct Backlog {
    queue: VecDeque<Outbound>,
    /// How many may wait before the other side counts as reading too slowly.
    capacity: usize,
    overflowed: bool,
}

impl Backlog {
    /// An empty backlog holding at most `capacity` messages.
    pub(super) fn new(capacity: usize) -> Backlog {
        Backlog {
            queue: VecDeque::new(),
            capacity,
            overflowed: false,
        }
    }

    /// Queues `out`, or overflows when `capacity` wait already. After an overflow nothing
    /// is queued again.
    pub(super) fn push(&mut self, out: Outbound) {
        if self.overflowed {
            return;
        }
        if self.queue.len() >= self.capacity {
            self.overflowed = true;
            self.clear();
            tracing::warn!(
                "closing the connection: the other side reads too slowly ({} messages \
                 queued for it)",
                self.capacity
            );
            return;
        }
        self.queue.push_back(out);
    }

    /// The next message to write.
    pub(super) fn pop_front(&mut self) -> Option<Outbound> {
        self.queue.pop_front()
    }

    /// Whether nothing waits.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many wait.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Drops what waits and gives its room back (an idle connection keeps none).
    pub(super) fn clear(&mut self) {
        self.queue = VecDeque::new();
    }

    /// Whether the other side read too slowly.
    pub(super) fn overflowed(&self) -> bool {
        self.overflowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::{Message, Notification};

    fn out() -> Outbound {
        Outbound {
            message: Message::Notification(Notification::new("x", None)),
            related: None,
        }
    }

    #[test]
    fn a_full_backlog_overflows_drops_what_waited_and_takes_nothing_more() {
        let mut b = Backlog::new(2);
        b.push(out());
        b.push(out());
        assert_eq!(b.len(), 2);
        assert!(!b.overflowed());
        b.push(out());
        assert!(b.overflowed());
        assert!(b.is_empty());
        b.push(out());
        assert!(b.is_empty() && b.pop_front().is_none());
    }
}
