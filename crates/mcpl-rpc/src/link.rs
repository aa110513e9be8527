//! What a [`Peer`](crate::Peer) handle, its [`Responder`](crate::Responder)s and the
//! connection's task share: the command queue to the task and the table of incoming requests
//! awaiting an answer. Below the peer, the events and the task, so each of them can answer a
//! request without naming the others.

use crate::error::RpcError;
use crate::queue::QueueSender;
use crate::transport::{Direct, DirectWriter, Outbound, TransportKind};
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// The connection as its handles see it.
#[derive(Debug)]
pub(crate) struct Shared {
    // Boxed: an idle connection's queue then holds pointers, not whole commands.
    pub(crate) commands: QueueSender<Box<Command>>,
    pub(crate) incoming: Arc<Mutex<Incoming>>,
    pub(crate) next_id: AtomicI64,
    pub(crate) kind: TransportKind,
    pub(crate) default_timeout: Duration,
}

/// Incoming requests not yet answered, by id, and the way to the writer.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    pub(crate) open: HashMap<RequestId, IncomingState>,
    pub(crate) closed: bool,
    /// The writer's queue or a wire that writes through, for handles to write to straight,
    /// without a trip through the connection's task. `None` once the read side ended (the
    /// task then waits for the last answers, so they go through it) and when the connection
    /// closed.
    pub(crate) writer: Option<DirectWriter>,
    /// Commands queued for the task and not yet handled. While any is, a handle's write goes
    /// through the task too, behind them, so messages leave in the order they were sent.
    pub(crate) queued: usize,
}

impl Incoming {
    /// Takes request `id` out of the open set. An empty set gives back its room: most
    /// connections are idle between requests, and thousands of them are.
    pub(crate) fn take_open(&mut self, id: &RequestId) -> Option<IncomingState> {
        let state = self.open.remove(id);
        if self.open.is_empty() {
            self.open.shrink_to_fit();
        }
        state
    }
}

#[derive(Debug)]
pub(crate) enum IncomingState {
    Open { method: String },
    Cancelled,
}

/// What the driver task hands a waiting caller.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) seq: u64,
    pub(crate) outcome: Result<Value, ErrorObject>,
}

pub(crate) type Waiter = oneshot::Sender<Result<Reply, RpcError>>;

#[derive(Debug)]
pub(crate) enum Command {
    Request {
        request: Request,
        timeout: Duration,
        related: Option<RequestId>,
        waiter: Waiter,
    },
    Cancel {
        id: RequestId,
        reason: String,
    },
    Write(Outbound),
    Abandoned {
        id: RequestId,
    },
    Close {
        done: oneshot::Sender<()>,
    },
    /// Nothing to do but look again: a handle's straight write found the writer's queue
    /// full (the task then closes the connection) or gone.
    Wake,
}

impl Shared {
    /// Queues `command` for the connection's task.
    pub(crate) fn command(&self, command: Command) -> Result<(), RpcError> {
        let mut incoming = lock(&self.incoming);
        self.queue(&mut incoming, command)
    }

    /// Queues `command` with the table locked, counting it as queued.
    fn queue(&self, incoming: &mut Incoming, command: Command) -> Result<(), RpcError> {
        self.commands
            .send(Box::new(command))
            .map_err(|_| RpcError::Closed { reason: None })?;
        incoming.queued += 1;
        Ok(())
    }

    /// Writes `out`: straight to the writer's queue or the wire when nothing is queued for
    /// the task ahead of it, through the task otherwise. The table stays locked throughout,
    /// so writes from several handles keep the order they were made in.
    fn write(&self, incoming: &mut Incoming, out: Outbound) -> Result<(), RpcError> {
        let direct = match &incoming.writer {
            // A wire outlives its task when the runtime shuts down: write only while the
            // task is there to finish what the pipe does not take at once.
            Some(_) if self.commands.is_closed() => {
                incoming.writer = None;
                return Err(RpcError::Closed { reason: None });
            }
            Some(writer) if incoming.queued == 0 => writer.write(out),
            _ => return self.queue(incoming, Command::Write(out)),
        };
        match direct {
            Direct::Done => Ok(()),
            // The wire holds the rest; the task writes it with its own waker (or closes the
            // connection after an overflow or a failed write).
            Direct::WakeTask => self.queue(incoming, Command::Wake),
            Direct::Dropped => {
                // Full (the task closes the connection) or the writer is gone (its reader
                // reports the close): either way the task must look, and the message is
                // dropped, as the task's own write would have dropped it. When the task is
                // gone too (its runtime shut down), the connection is closed.
                incoming.writer = None;
                self.queue(incoming, Command::Wake)
            }
        }
    }

    /// Writes a message that belongs to the incoming request `related`.
    pub(crate) fn send_related(
        &self,
        message: Message,
        related: Option<RequestId>,
    ) -> Result<(), RpcError> {
        let mut incoming = lock(&self.incoming);
        if let Message::Response(Response { id: Some(id), .. }) = &message {
            // Whatever answered it, the request is no longer open.
            incoming.take_open(id);
        }
        self.write(&mut incoming, Outbound { message, related })
    }

    /// Answers an incoming request (see [`Peer::respond`](crate::Peer::respond)).
    pub(crate) fn respond(
        &self,
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> Result<(), RpcError> {
        let mut incoming = lock(&self.incoming);
        if incoming.closed {
            return Err(RpcError::Closed { reason: None });
        }
        match incoming.take_open(&id) {
            None => Err(RpcError::UnknownRequest { id }),
            Some(IncomingState::Cancelled) => Err(RpcError::AnswerSuppressed { id }),
            Some(IncomingState::Open { .. }) => {
                let response = Response {
                    id: Some(id.clone()),
                    outcome,
                    extra: Default::default(),
                };
                let out = Outbound {
                    message: Message::Response(response),
                    related: Some(id),
                };
                self.write(&mut incoming, out)
            }
        }
    }

    /// Tells the task an incoming request will get no answer from its responder.
    pub(crate) fn abandon(&self, id: RequestId) {
        let _ = self.command(Command::Abandoned { id });
    }
}

pub(crate) fn lock(incoming: &Mutex<Incoming>) -> std::sync::MutexGuard<'_, Incoming> {
    // The map holds plain data; a panic elsewhere cannot leave it half-changed.
    incoming
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_set_gives_back_its_room_once_every_request_is_answered() {
        let mut incoming = Incoming::default();
        for n in 1..=3 {
            let method = "tools/list".to_owned();
            incoming
                .open
                .insert(RequestId::Number(n), IncomingState::Open { method });
        }
        assert!(incoming.take_open(&RequestId::Number(1)).is_some());
        assert!(incoming.open.capacity() > 0, "two still open");
        incoming.take_open(&RequestId::Number(2));
        incoming.take_open(&RequestId::Number(3));
        assert_eq!(incoming.open.capacity(), 0);
    }
}
