//! The peer: one task per connection that numbers frames in read order, matches answers to
//! the requests they answer, expires requests, and writes what the application sends.

use crate::error::RpcError;
use crate::event::{Answered, Events};
use crate::link::{Command, Incoming, Reply, Shared, lock};
use crate::pending::Outgoing;
use crate::transport::{Transport, TransportKind};
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use mcpl_protocol::method::{NotificationMethod, RequestMethod};
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Settings of a [`Peer`].
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// The timeout of a request that does not name one (default 60 s).
    pub default_timeout: Duration,
    /// How many requests nobody awaits are remembered so their late answers are recognised
    /// (default 1024; the oldest is forgotten first).
    pub max_late_records: usize,
    /// Takes incoming requests on the connection's own task (default: none, every request
    /// is an [`Event`](crate::Event)).
    pub inline_requests: Option<crate::event::InlineRequests>,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            default_timeout: Duration::from_secs(60),
            max_late_records: 1024,
            inline_requests: None,
        }
    }
}

/// Options of one request.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// How long to wait for the answer; `None` takes [`PeerConfig::default_timeout`].
    pub timeout: Option<Duration>,
    /// The incoming request this one belongs to (Streamable HTTP sends it on that request's
    /// SSE stream).
    pub related: Option<RequestId>,
}

impl RequestOptions {
    /// Options with a timeout.
    pub fn timeout(timeout: Duration) -> Self {
        RequestOptions {
            timeout: Some(timeout),
            related: None,
        }
    }
}

/// A handle to a JSON-RPC connection. Cheap to clone; the connection stays up while a handle
/// (or a [`Responder`](crate::Responder)) exists and the wire is open.
///
/// Requests go both ways at once: send with [`Peer::request`] or [`Peer::request_value`],
/// receive through the [`Events`] returned by [`Peer::start`].
#[derive(Debug, Clone)]
pub struct Peer {
    pub(crate) shared: Arc<Shared>,
}

/// A request sent and not yet answered: its id (for [`Peer::cancel`]) and its answer.
#[derive(Debug)]
pub struct PendingRequest {
    id: RequestId,
    method: String,
    rx: oneshot::Receiver<Result<Reply, RpcError>>,
    peer: Peer,
}

impl PendingRequest {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Cancels the request: sends `notifications/cancelled` and ends [`PendingRequest::wait`]
    /// with [`RpcError::Cancelled`]. An answer that still arrives is an
    /// [`Event::LateResponse`](crate::Event::LateResponse).
    pub fn cancel(&self, reason: &str) {
        self.peer.cancel(&self.id, reason);
    }

    /// Waits for the answer. Dropping this future does not cancel the request: its answer is
    /// then delivered as an [`Event::LateResponse`](crate::Event::LateResponse).
    pub async fn wait(self) -> Result<Answered<Value>, RpcError> {
        match self.rx.await {
            Err(_) => Err(RpcError::Closed { reason: None }),
            Ok(Err(e)) => Err(e),
            Ok(Ok(Reply {
                seq,
                outcome: Ok(value),
            })) => Ok(Answered { value, seq }),
            Ok(Ok(Reply {
                seq,
                outcome: Err(error),
            })) => Err(RpcError::Remote {
                method: self.method,
                error: Box::new(error),
                seq,
            }),
        }
    }
}

impl Peer {
    /// Starts the connection's task on the current tokio runtime and returns a handle and the
    /// stream of incoming events.
    pub fn start(transport: Transport, config: PeerConfig) -> (Peer, Events) {
        let (commands, command_rx) = crate::queue::unbounded();
        let (event_tx, event_rx) = crate::queue::unbounded();
        let incoming = Arc::new(Mutex::new(Incoming {
            writer: transport.direct_writer(),
            ..Incoming::default()
        }));
        let shared = Arc::new(Shared {
            commands,
            incoming: incoming.clone(),
            next_id: AtomicI64::new(1),
            kind: transport.kind(),
            default_timeout: config.default_timeout,
        });
        let driver = crate::driver::Driver {
            limits: transport.limits(),
            transport,
            commands: command_rx,
            events: event_tx,
            incoming,
            outgoing: Outgoing::new(config.max_late_records),
            seq: 0,
            peer: Arc::downgrade(&shared),
            inline_requests: config.inline_requests,
        };
        tokio::spawn(driver.run());
        (Peer { shared }, Events { rx: event_rx })
    }

    /// Which wire the connection runs on (RFC-014 treats Streamable HTTP as unordered).
    pub fn kind(&self) -> TransportKind {
        self.shared.kind
    }

    /// Sends a typed request and reads its answer as `M::Result`.
    pub async fn request<M: RequestMethod>(
        &self,
        params: M::Params,
        timeout: Duration,
    ) -> Result<Answered<M::Result>, RpcError> {
        let params = to_params(M::METHOD, &params)?;
        let answered = self
            .request_value(M::METHOD, params, RequestOptions::timeout(timeout))
            .await?;
        let value = serde_json::from_value(answered.value).map_err(|e| RpcError::BadResult {
            method: M::METHOD.to_owned(),
            detail: e.to_string(),
        })?;
        Ok(Answered {
            value,
            seq: answered.seq,
        })
    }

    /// Sends a request and waits for its raw answer.
    pub async fn request_value(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Answered<Value>, RpcError> {
        self.start_request(method, params, options)?.wait().await
    }

    /// Sends a request and returns at once with its id, for callers that may cancel it.
    pub fn start_request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<PendingRequest, RpcError> {
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (waiter, rx) = oneshot::channel();
        self.command(Command::Request {
            request: Request::new(id.clone(), method, params),
            timeout: options.timeout.unwrap_or(self.shared.default_timeout),
            related: options.related,
            waiter,
        })?;
        Ok(PendingRequest {
            id,
            method: method.to_owned(),
            rx,
            peer: self.clone(),
        })
    }

    /// Cancels a request this side sent: sends `notifications/cancelled {requestId, reason}`.
    /// Does nothing if the request is not awaited any more.
    pub fn cancel(&self, id: &RequestId, reason: &str) {
        let _ = self.command(Command::Cancel {
            id: id.clone(),
            reason: reason.to_owned(),
        });
    }

    /// Sends a typed notification.
    pub fn notify<N: NotificationMethod>(&self, params: N::Params) -> Result<(), RpcError> {
        let params = to_params(N::METHOD, &params)?;
        self.notify_value(N::METHOD, params)
    }

    /// Sends a notification.
    pub fn notify_value(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        self.send(Message::Notification(Notification::new(method, params)))
    }

    /// Writes any message as it is. For sans-IO cores that build their own messages: a
    /// response answers the incoming request with its id, and a request's answer comes back
    /// as [`Event::Response`](crate::Event::Response) (the peer only tracks ids it allocated itself, which are
    /// integers counting from 1; give core-built requests string ids).
    pub fn send(&self, message: Message) -> Result<(), RpcError> {
        self.send_related(message, None)
    }

    /// Writes a message that belongs to the incoming request `related` (see
    /// [`crate::Outbound::related`]).
    pub fn send_related(
        &self,
        message: Message,
        related: Option<RequestId>,
    ) -> Result<(), RpcError> {
        self.shared.send_related(message, related)
    }

    /// Answers an incoming request. Fails with [`RpcError::UnknownRequest`] for an id that
    /// awaits no answer, and with [`RpcError::AnswerSuppressed`] (sending nothing) when the
    /// other peer cancelled it.
    pub fn respond(
        &self,
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    ) -> Result<(), RpcError> {
        self.shared.respond(id, outcome)
    }

    /// Closes the connection: pending requests fail with [`RpcError::Closed`], queued
    /// messages are written, the wire is shut, and the events end with [`Event::Closed`](crate::Event::Closed).
    pub async fn close(&self) {
        let (done, wait) = oneshot::channel();
        if self.command(Command::Close { done }).is_ok() {
            let _ = wait.await;
        }
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.lock_incoming().closed || self.shared.commands.is_closed()
    }

    fn command(&self, command: Command) -> Result<(), RpcError> {
        self.shared.command(command)
    }

    fn lock_incoming(&self) -> std::sync::MutexGuard<'_, Incoming> {
        lock(&self.shared.incoming)
    }
}

/// Params as JSON; a unit type (`()`, JSON `null`) means no params.
fn to_params<T: Serialize>(method: &str, params: &T) -> Result<Option<Value>, RpcError> {
    match serde_json::to_value(params) {
        Ok(Value::Null) => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(e) => Err(RpcError::BadParams {
            method: method.to_owned(),
            detail: e.to_string(),
        }),
    }
}
