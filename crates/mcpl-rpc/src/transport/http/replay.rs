//! The GET stream's events of one session, kept so that a client whose stream was cut can
//! resume with `Last-Event-ID` (sans-IO: time comes in as an argument).
//!
//! Every event gets the next id. A stream is a cursor: it sends the event after the last id it
//! sent ([`Replay::next_after`]), so a slow client lags in this buffer instead of in a queue of
//! its own. An event stays until it has been handed to a stream and [`Replay::prune`] finds it
//! older than the window; at most `cap` are kept, the oldest dropped first (a stream that
//! falls that far behind is closed). The buffer is allocated on demand and released when it empties, so an idle
//! session holds nothing.

use super::sse::sse_event;
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
    /// Every event up to this id has been handed to a stream.
    delivered_upto: u64,
    cap: usize,
    window: Duration,
}

impl Replay {
    /// Keeps at most `cap` events, each for `window` after delivery.
    pub fn new(cap: usize, window: Duration) -> Self {
        Replay {
            events: VecDeque::new(),
            next: 1,
            delivered_upto: 0,
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
        self.delivered_upto = self.delivered_upto.max(id);
    }

    /// Where a new stream starts without `Last-Event-ID`: after the last event handed out.
    pub fn delivered_upto(&self) -> u64 {
        self.delivered_upto
    }

    /// The event after `cursor` (the last id a stream sent), if one is kept. `Err` with the
    /// first kept id when events after `cursor` were dropped before the stream took them.
    pub fn next_after(&self, cursor: u64) -> Result<Option<(u64, Bytes)>, u64> {
        let Some(front) = self.events.front() else {
            return Ok(None);
        };
        if front.id > cursor + 1 && cursor + 1 < self.next {
            return Err(front.id);
        }
        let skip = cursor.saturating_sub(front.id - 1) as usize;
        Ok(self.events.get(skip).map(|k| (k.id, k.event.clone())))
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

    /// Every id a stream starting after `cursor` would send.
    fn ids_after(r: &Replay, mut cursor: u64) -> Vec<u64> {
        let mut ids = Vec::new();
        while let Ok(Some((id, _))) = r.next_after(cursor) {
            ids.push(id);
            cursor = id;
        }
        ids
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
        assert_eq!(ids_after(&r, 3), [4, 5]);
        assert_eq!(ids_after(&r, 5), Vec::<u64>::new());
        // Without an id, a stream starts after what was handed out.
        r.push(t, note(6));
        assert_eq!(ids_after(&r, r.delivered_upto()), [6]);
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
        assert_eq!(
            r.next_after(0).unwrap_err(),
            8,
            "a stream after 0 missed 1 to 7"
        );
        assert_eq!(ids_after(&r, 7), [8, 9, 10]);
    }
}
