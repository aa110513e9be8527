//! The GET stream's events of one session, kept so that a client whose stream was cut can
//! resume with `Last-Event-ID` (sans-IO: time comes in as an argument).
//!
//! Every event gets the next id. An event stays until it has been handed to a stream and
//! [`Replay::prune`] finds it older than the window; at most `cap` are kept, the oldest
//! dropped first. The buffer is allocated on demand and released when it empties, so an idle
//! session holds nothing.

use super::sse_event;
use bytes::Bytes;
use mcpl_protocol::jsonrpc::Message;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

struct Kept {
    id: u64,
    event: Bytes,
    /// When it was first handed to a stream.
    delivered: Option<Instant>,
}

/// One session's GET-stream events.
pub(crate) struct Replay {
    events: VecDeque<Kept>,
    next: u64,
    cap: usize,
    window: Duration,
}

impl Replay {
    /// Keeps at most `cap` events, each for `window` after delivery.
    pub fn new(cap: usize, window: Duration) -> Self {
        Replay {
            events: VecDeque::new(),
            next: 1,
            cap: cap.max(1),
            window,
        }
    }

    /// Numbers `message` and keeps it; returns its id and its SSE event.
    pub fn push(&mut self, now: Instant, message: Message) -> (u64, Bytes) {
        self.prune(now);
        if self.events.len() >= self.cap
            && let Some(dropped) = self.events.pop_front()
            && dropped.delivered.is_none()
        {
            tracing::warn!(
                "dropped GET-stream event {} before any stream took it: {} events are kept",
                dropped.id,
                self.cap
            );
        }
        let id = self.next;
        self.next += 1;
        let event = sse_event(Some(id), &message);
        self.events.push_back(Kept {
            id,
            event: event.clone(),
            delivered: None,
        });
        (id, event)
    }

    /// Marks every event up to `id` as handed to a stream at `now`.
    pub fn delivered(&mut self, now: Instant, id: u64) {
        for kept in self.events.iter_mut().take_while(|k| k.id <= id) {
            kept.delivered.get_or_insert(now);
        }
    }

    /// The events a new stream starts with: those after `last` (the client's
    /// `Last-Event-ID`), or, without one, those never handed to a stream.
    pub fn since(&self, last: Option<u64>) -> Vec<(u64, Bytes)> {
        if let Some(last) = last
            && let Some(first) = self.events.front()
            && first.id > last + 1
            && last + 1 < self.next
        {
            tracing::warn!(
                "a client resumed after event {last}, but events from {} on are kept only",
                first.id
            );
        }
        self.events
            .iter()
            .filter(|k| match last {
                Some(last) => k.id > last,
                None => k.delivered.is_none(),
            })
            .map(|k| (k.id, k.event.clone()))
            .collect()
    }

    /// Drops delivered events older than the window; frees the buffer when it empties.
    pub fn prune(&mut self, now: Instant) {
        while let Some(front) = self.events.front() {
            match front.delivered {
                Some(at) if now.saturating_duration_since(at) >= self.window => {
                    self.events.pop_front();
                }
                _ => break,
            }
        }
        if self.events.is_empty() && self.events.capacity() > 0 {
            self.events = VecDeque::new();
        }
    }

    /// How many events are kept (for tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.events.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpl_protocol::jsonrpc::Notification;

    fn note(n: u64) -> Message {
        Message::Notification(Notification::new("n", Some(serde_json::json!({ "n": n }))))
    }

    fn ids(events: &[(u64, Bytes)]) -> Vec<u64> {
        events.iter().map(|(id, _)| *id).collect()
    }

    #[test]
    fn events_carry_increasing_ids() {
        let t = Instant::now();
        let mut r = Replay::new(8, Duration::from_secs(60));
        let (a, event) = r.push(t, note(1));
        let (b, _) = r.push(t, note(2));
        assert_eq!((a, b), (1, 2));
        assert!(String::from_utf8_lossy(&event).starts_with("id: 1\n"));
    }

    #[test]
    fn resuming_after_an_id_replays_exactly_what_follows_it() {
        let t = Instant::now();
        let mut r = Replay::new(8, Duration::from_secs(60));
        for n in 1..=5 {
            r.push(t, note(n));
        }
        r.delivered(t, 5);
        assert_eq!(ids(&r.since(Some(3))), [4, 5]);
        assert_eq!(ids(&r.since(Some(5))), Vec::<u64>::new());
        // Without an id, only what no stream took yet.
        r.push(t, note(6));
        assert_eq!(ids(&r.since(None)), [6]);
    }

    #[test]
    fn delivered_events_expire_and_the_buffer_is_released() {
        let t = Instant::now();
        let mut r = Replay::new(8, Duration::from_secs(60));
        r.push(t, note(1));
        r.push(t, note(2));
        r.delivered(t, 1);
        r.prune(t + Duration::from_secs(61));
        assert_eq!(r.len(), 1, "the undelivered event stays");
        r.delivered(t + Duration::from_secs(61), 2);
        r.prune(t + Duration::from_secs(122));
        assert_eq!(r.len(), 0);
        assert_eq!(r.events.capacity(), 0);
    }

    #[test]
    fn the_buffer_is_bounded() {
        let t = Instant::now();
        let mut r = Replay::new(3, Duration::from_secs(60));
        for n in 1..=10 {
            r.push(t, note(n));
        }
        assert_eq!(r.len(), 3);
        assert_eq!(ids(&r.since(Some(0))), [8, 9, 10]);
    }
}
