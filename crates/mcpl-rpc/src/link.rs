//! What a [`Peer`](crate::Peer) handle, its [`Responder`](crate::Responder)s and the
//! connection's task share: the command queue to the task and the table of incoming requests
//! awaiting an answer. Below the peer, the events and the task, so each of them can answer a
//! request without naming the others.

use crate::error::RpcError;
use crate::transport::{Outbound, TransportKind};
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Request, RequestId, Response};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The connection as its handles see it.
#[derive(Debug)]
pub(crate) struct Shared {
    // Boxed: an idle connection's queue then holds pointers, not whole commands.
    pub(crate) commands: mpsc::UnboundedSender<Box<Command>>,
    pub(crate) incoming: Arc<Mutex<Incoming>>,
    pub(crate) next_id: AtomicI64,
    pub(crate) kind: TransportKind,
    pub(crate) default_timeout: Duration,
}

/// Incoming requests not yet answered, by id.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    pub(crate) open: HashMap<RequestId, IncomingState>,
    pub(crate) closed: bool,
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
}

impl Shared {
    /// Queues `command` for the connection's task.
    pub(crate) fn command(&self, command: Command) -> Result<(), RpcError> {
        self.commands
            .send(Box::new(command))
            .map_err(|_| RpcError::Closed { reason: None })
    }

    /// Writes a message that belongs to the incoming request `related`.
    pub(crate) fn send_related(
        &self,
        message: Message,
        related: Option<RequestId>,
    ) -> Result<(), RpcError> {
        if let Message::Response(Response { id: Some(id), .. }) = &message {
            // Whatever answered it, the request is no longer open.
            lock(&self.incoming).open.remove(id);
        }
        self.command(Command::Write(Outbound { message, related }))
    }

    /// Answers an incoming request (see [`Peer::respond`](crate::Peer::respond)).
    pub(crate) fn respond(
        &self,
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> Result<(), RpcError> {
        let state = {
            let mut incoming = lock(&self.incoming);
            if incoming.closed {
                return Err(RpcError::Closed { reason: None });
            }
            incoming.open.remove(&id)
        };
        match state {
            None => Err(RpcError::UnknownRequest { id }),
            Some(IncomingState::Cancelled) => Err(RpcError::AnswerSuppressed { id }),
            Some(IncomingState::Open { .. }) => {
                let response = Response {
                    id: Some(id.clone()),
                    outcome,
                    extra: Default::default(),
                };
                self.command(Command::Write(Outbound {
                    message: Message::Response(response),
                    related: Some(id),
                }))
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
