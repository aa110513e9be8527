//! A small unbounded queue between tasks, for the queues every connection keeps for its
//! whole life (a peer's commands and events, a server session's inbox).
//!
//! tokio's `mpsc` channel costs about 0.8 KiB before the first message (a cache-padded shared
//! block and a first block of 32 slots); this one is a locked `VecDeque` and a waker, about
//! a hundred bytes, and it gives back its room once a burst has been taken. It has one
//! receiver and any number of senders: the receiver sees `None` once every sender is gone,
//! and a send fails once the receiver is gone.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Room kept after the queue empties; a queue that grew past it gives the rest back.
const KEPT_SLOTS: usize = 8;

/// The sending end of an [`unbounded`] queue. Cheap to clone.
#[derive(Debug)]
pub struct QueueSender<T> {
    shared: Arc<Mutex<State<T>>>,
}

/// The receiving end of an [`unbounded`] queue.
#[derive(Debug)]
pub struct QueueReceiver<T> {
    shared: Arc<Mutex<State<T>>>,
}

#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
    senders: usize,
    receiver: bool,
    waker: Option<Waker>,
}

/// An unbounded queue: a sender (clone it for more) and the one receiver.
pub fn unbounded<T>() -> (QueueSender<T>, QueueReceiver<T>) {
    let shared = Arc::new(Mutex::new(State {
        items: VecDeque::new(),
        senders: 1,
        receiver: true,
        waker: None,
    }));
    (
        QueueSender {
            shared: shared.clone(),
        },
        QueueReceiver { shared },
    )
}

fn lock<T>(shared: &Mutex<State<T>>) -> MutexGuard<'_, State<T>> {
    // Pushes and pops cannot leave the queue half-changed.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T> QueueSender<T> {
    /// Queues `item`; gives it back when the receiver is gone.
    pub fn send(&self, item: T) -> Result<(), T> {
        let waker = {
            let mut state = lock(&self.shared);
            if !state.receiver {
                return Err(item);
            }
            state.items.push_back(item);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone (a send would fail).
    pub fn is_closed(&self) -> bool {
        !lock(&self.shared).receiver
    }
}

impl<T> Clone for QueueSender<T> {
    fn clone(&self) -> Self {
        lock(&self.shared).senders += 1;
        QueueSender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for QueueSender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.shared);
            state.senders -= 1;
            if state.senders > 0 {
                return;
            }
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> QueueReceiver<T> {
    /// The next item, or `None` once the queue is empty and every sender is gone.
    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next item (`Ready(None)` as [`recv`](Self::recv)'s `None`).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.shared);
        if let Some(item) = take(&mut state) {
            return Poll::Ready(Some(item));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next item if one is queued now.
    pub fn try_recv(&mut self) -> Option<T> {
        take(&mut lock(&self.shared))
    }
}

/// Pops the first item; a queue left empty gives back room past [`KEPT_SLOTS`].
fn take<T>(state: &mut State<T>) -> Option<T> {
    let item = state.items.pop_front()?;
    if state.items.is_empty() && state.items.capacity() > KEPT_SLOTS {
        state.items.shrink_to(KEPT_SLOTS);
    }
    Some(item)
}

impl<T> Drop for QueueReceiver<T> {
    fn drop(&mut self) {
        let left = {
            let mut state = lock(&self.shared);
            state.receiver = false;
            state.waker = None;
            std::mem::take(&mut state.items)
        };
        // Dropped unlocked: an item's own drop may send on another queue (a responder
        // dropped unanswered tells its connection's task).
        drop(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn items_come_out_in_the_order_they_went_in() {
        let (tx, mut rx) = unbounded();
        for i in 0..100 {
            tx.send(i).unwrap();
        }
        for i in 0..100 {
            assert_eq!(rx.recv().await, Some(i));
        }
        assert_eq!(rx.try_recv(), None);
    }

    #[tokio::test]
    async fn the_receiver_ends_once_every_sender_is_gone_and_the_queue_is_empty() {
        let (tx, mut rx) = unbounded();
        let other = tx.clone();
        tx.send(1).unwrap();
        drop(tx);
        other.send(2).unwrap();
        drop(other);
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_a_send_from_another_task() {
        let (tx, mut rx) = unbounded();
        let sender = tokio::spawn(async move {
            tokio::task::yield_now().await;
            tx.send("hello").unwrap();
            tx
        });
        assert_eq!(rx.recv().await, Some("hello"));
        drop(sender.await.unwrap());
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_when_the_last_sender_goes() {
        let (tx, mut rx) = unbounded::<u8>();
        let dropper = tokio::spawn(async move {
            tokio::task::yield_now().await;
            drop(tx);
        });
        assert_eq!(rx.recv().await, None);
        dropper.await.unwrap();
    }

    #[test]
    fn a_send_after_the_receiver_is_gone_gives_the_item_back_and_queued_items_are_dropped() {
        let (tx, rx) = unbounded();
        let queued = Arc::new(());
        tx.send(queued.clone()).unwrap();
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
        assert_eq!(Arc::strong_count(&queued), 1, "the queued item was dropped");
        assert!(tx.send(queued).is_err());
    }

    #[test]
    fn a_queue_that_emptied_after_a_burst_gives_back_its_room() {
        let (tx, mut rx) = unbounded();
        for i in 0..1000 {
            tx.send(i).unwrap();
        }
        while rx.try_recv().is_some() {}
        let capacity = lock(&rx.shared).items.capacity();
        assert!(capacity <= KEPT_SLOTS, "{capacity} slots kept");
    }
}
