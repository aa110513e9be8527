//! Where the answer to a call goes: a caller waiting on a channel, or a callback the host
//! task runs itself.

use serde_json::Value;
use tokio::sync::oneshot;

use super::answer::Answer;

/// What became of a call made with [`Host::ask_if`](super::Host::ask_if) or
/// [`Host::ask_then`](super::Host::ask_then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The call was made and answered.
    Answered(Answer),
    /// The gate did not hold when the host task took the call: nothing was sent; the
    /// arguments come back.
    Declined(Value),
    /// The host task stopped before it answered.
    Stopped,
}

/// A callback that takes a call's fate inside the host task; it returns whether an answer
/// reached the caller (what rode with it is then told, H44, H45).
pub(super) type Then = Box<dyn FnOnce(Asked) -> bool + Send>;

/// Where a call's answer goes: a waiting caller, or a callback run in the host task (no
/// trip through another task). One that is dropped unanswered (the host task stopped)
/// tells its callback [`Asked::Stopped`].
pub(crate) struct Replier(Option<ReplyTo>);

enum ReplyTo {
    Channel(oneshot::Sender<Asked>),
    Then(Then),
}

impl Replier {
    /// A replier for a caller that waits on the returned receiver.
    pub(super) fn channel() -> (Replier, oneshot::Receiver<Asked>) {
        let (tx, rx) = oneshot::channel();
        (Replier(Some(ReplyTo::Channel(tx))), rx)
    }

    /// A replier that runs `f` in the host task.
    pub(super) fn then(f: Then) -> Replier {
        Replier(Some(ReplyTo::Then(f)))
    }

    /// Hands `asked` over; true when an answer reached its caller.
    pub(crate) fn send(mut self, asked: Asked) -> bool {
        match self.0.take() {
            Some(ReplyTo::Channel(tx)) => tx.send(asked).is_ok(),
            Some(ReplyTo::Then(f)) => f(asked),
            None => false,
        }
    }
}

impl Drop for Replier {
    fn drop(&mut self) {
        if let Some(ReplyTo::Then(f)) = self.0.take() {
            f(Asked::Stopped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A call's callback always hears once: a replier the host task drops unanswered (the
    /// task ended) tells it the host stopped, and one that answered does not tell it again.
    #[test]
    fn a_replier_tells_its_callback_once_and_stopped_when_dropped_unanswered() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let then = |heard: Arc<Mutex<Vec<Asked>>>| {
            Box::new(move |asked| {
                heard.lock().expect("lock").push(asked);
                true
            }) as Then
        };
        drop(Replier::then(then(heard.clone())));
        assert!(Replier::then(then(heard.clone())).send(Asked::Declined(Value::Null)));
        let (channel, rx) = Replier::channel();
        drop(channel);
        assert!(
            rx.blocking_recv().is_err(),
            "a waiting caller just sees the end"
        );
        assert_eq!(
            *heard.lock().expect("lock"),
            [Asked::Stopped, Asked::Declined(Value::Null)]
        );
    }
}
