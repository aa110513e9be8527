//! The per-connection task behind a [`Peer`](crate::Peer): it numbers frames in read order, matches
//! answers to the requests they answer, expires requests, and writes what the handles send.

use crate::error::RpcError;
use crate::event::{Event, Responder};
use crate::link::{Command, Incoming, IncomingState, Reply, Shared, Waiter, lock};
use crate::pending::{Completion, LateReason, Outgoing};
use crate::queue::{QueueReceiver, QueueSender};
use crate::transport::{Inbound, Outbound, Transport};
use mcpl_protocol::frame;
use mcpl_protocol::jsonrpc::{
    ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response,
};
use mcpl_protocol::methods;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// How long a peer whose read side ended keeps writing answers to the requests it read.
const ANSWER_GRACE: Duration = Duration::from_secs(30);

/// The connection's task: reads frames, handles commands and deadlines, until the wire or
/// every handle goes away.
pub(crate) struct Driver {
    pub(crate) transport: Transport,
    pub(crate) limits: frame::Limits,
    // Boxed, like events: an idle connection's queues hold pointers.
    pub(crate) commands: QueueReceiver<Box<Command>>,
    pub(crate) events: QueueSender<Box<Event>>,
    pub(crate) incoming: Arc<Mutex<Incoming>>,
    pub(crate) outgoing: Outgoing<Waiter>,
    pub(crate) seq: u64,
    pub(crate) peer: Weak<Shared>,
    /// Takes requests on this task before they become events.
    pub(crate) inline_requests: Option<crate::event::InlineRequests>,
}

impl Driver {
    pub(crate) async fn run(mut self) {
        let mut closer = None;
        let mut read_ended = false;
        let reason = loop {
            if self.transport.overflowed() {
                break Some("closed: the other side reads too slowly (outbound queue full)".into());
            }
            let deadline = self.outgoing.poll_timeout().map(Instant::from_std);
            let far = Instant::now() + Duration::from_secs(86_400 * 365);
            tokio::select! {
                inbound = std::future::poll_fn(|cx| self.transport.poll_inbound(cx)) => match inbound {
                    None => {
                        read_ended = true;
                        break None;
                    }
                    Some(Inbound::Closed { reason }) => {
                        read_ended = true;
                        break reason;
                    }
                    Some(inbound) => self.handle_inbound(inbound),
                },
                command = self.commands.recv() => match command.map(|c| *c) {
                    None => break None,
                    Some(Command::Close { done }) => {
                        closer = Some(done);
                        break None;
                    }
                    Some(command) => {
                        self.handle_command(command);
                        self.handled();
                    }
                },
                () = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                    self.handle_timeout();
                }
            }
        };
        // Nothing more will be read, so nothing this side asked will be answered.
        for (_, waiter) in self.outgoing.drain() {
            let _ = waiter.send(Err(RpcError::Closed {
                reason: reason.clone(),
            }));
        }
        if read_ended {
            // From here on answers go through this task, which waits for the last of them.
            lock(&self.incoming).writer = None;
            // The other side stopped sending (stdin closed, say) but may still read: answer
            // what it asked before the end, as a stdio server piped a file of requests must.
            let _ = self.events.send(Box::new(Event::Closed {
                reason: reason.clone(),
            }));
            // Boxed, as is the shutdown below: rare paths whose futures would otherwise size
            // every connection's task for its whole life.
            closer = Box::pin(self.finish_answers()).await;
        }
        {
            let mut incoming = lock(&self.incoming);
            incoming.closed = true;
            // The writer ends once every sender is gone: the handles' one goes first.
            incoming.writer = None;
        }
        if !read_ended {
            let _ = self.events.send(Box::new(Event::Closed { reason }));
        }
        Box::pin(self.transport.shutdown()).await;
        if let Some(done) = closer {
            let _ = done.send(());
        }
    }

    /// After the read side ended: keep writing until every request read has been answered,
    /// the application closes the peer or drops every handle, or [`ANSWER_GRACE`] passes.
    /// Returns the closer to notify, if the application closed the peer.
    async fn finish_answers(&mut self) -> Option<oneshot::Sender<()>> {
        let give_up = tokio::time::sleep(ANSWER_GRACE);
        tokio::pin!(give_up);
        loop {
            // An answer leaves the open set when it is queued, before this task writes it:
            // take every queued command before deciding that nothing is owed.
            while let Some(command) = self.commands.try_recv().map(|c| *c) {
                if let Some(done) = self.after_end(command) {
                    return Some(done);
                }
            }
            if lock(&self.incoming).open.is_empty() {
                return None;
            }
            tokio::select! {
                command = self.commands.recv() => match command.map(|c| *c) {
                    None => return None,
                    Some(command) => {
                        if let Some(done) = self.after_end(command) {
                            return Some(done);
                        }
                    }
                },
                () = &mut give_up => return None,
                // A wire the task moves itself still has answers to write.
                () = std::future::poll_fn(|cx| self.transport.poll_writes(cx)) => {}
            }
        }
    }

    /// A command taken off the queue was handled: what it wrote is in the writer's queue, so
    /// handles may write straight again once nothing else is queued.
    fn handled(&self) {
        let mut incoming = lock(&self.incoming);
        incoming.queued = incoming.queued.saturating_sub(1);
    }

    /// One command after the read side ended; `Some` when it closes the peer.
    fn after_end(&mut self, command: Command) -> Option<oneshot::Sender<()>> {
        self.handled();
        match command {
            Command::Close { done } => Some(done),
            Command::Request {
                request, waiter, ..
            } => {
                // Nothing can answer it any more.
                let _ = waiter.send(Err(RpcError::Closed {
                    reason: Some(format!(
                        "`{}` sent after the other side stopped sending",
                        request.method
                    )),
                }));
                None
            }
            command => {
                self.handle_command(command);
                None
            }
        }
    }

    fn write(&mut self, message: Message, related: Option<RequestId>) {
        self.transport.write(Outbound { message, related });
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(Box::new(event));
    }

    fn handle_command(&mut self, command: Command) {
        match command {
            Command::Request {
                request,
                timeout,
                related,
                waiter,
            } => {
                let now = Instant::now().into_std();
                self.outgoing.register(
                    now,
                    request.id.clone(),
                    request.method.clone(),
                    timeout,
                    waiter,
                );
                self.write(Message::Request(request), related);
            }
            Command::Cancel { id, reason } => {
                if let Some((method, waiter)) = self.outgoing.give_up(&id, LateReason::Cancelled) {
                    self.send_cancelled(&id, &reason);
                    let _ = waiter.send(Err(RpcError::Cancelled { method, reason }));
                }
            }
            Command::Write(outbound) => self.write(outbound.message, outbound.related),
            Command::Abandoned { id } => {
                let state = lock(&self.incoming).take_open(&id);
                if let Some(IncomingState::Open { method }) = state {
                    let error = ErrorObject::new(
                        ErrorCode::InternalError,
                        format!("request `{method}` was dropped without an answer"),
                    );
                    self.write(
                        Message::Response(Response::error(Some(id.clone()), error)),
                        Some(id),
                    );
                }
            }
            Command::Wake => {}
            Command::Close { .. } => unreachable!("handled by the loop"),
        }
    }

    fn handle_timeout(&mut self) {
        let now = Instant::now().into_std();
        for expired in self.outgoing.handle_timeout(now) {
            let reason = format!("timed out after {:?}", expired.after);
            self.send_cancelled(&expired.id, &reason);
            let _ = expired.waiter.send(Err(RpcError::Timeout {
                method: expired.method,
                after: expired.after,
            }));
        }
    }

    fn send_cancelled(&mut self, id: &RequestId, reason: &str) {
        let params = json!({ "requestId": id, "reason": reason });
        self.write(
            Message::Notification(Notification::new(methods::CANCELLED, Some(params))),
            None,
        );
    }

    fn handle_inbound(&mut self, inbound: Inbound) {
        self.seq += 1;
        let seq = self.seq;
        match inbound {
            Inbound::Frame(bytes) => match frame::decode(&bytes, &self.limits) {
                Ok(message) => self.handle_message(seq, message),
                Err(error) => self.refuse(seq, error, false),
            },
            Inbound::Message(message) => self.handle_message(seq, message),
            Inbound::Refused { error, answered } => self.refuse(seq, error, answered),
            Inbound::Closed { .. } => unreachable!("handled by the loop"),
        }
    }

    /// A bad frame: answer it unless it looked like a response (or the transport answered),
    /// tell the application, and carry on.
    fn refuse(&mut self, seq: u64, error: frame::FrameError, answered: bool) {
        let reply = if answered { None } else { error.reply() };
        let replied = answered || reply.is_some();
        if let Some(reply) = reply {
            let related = reply.id.clone();
            self.write(Message::Response(reply), related);
        }
        tracing::debug!(%error, seq, "refused a frame");
        // H76: a malformed answer to a request this peer awaits fails that request now,
        // rather than leaving it to time out.
        if error.reply().is_none() && !answered {
            if let Some(id) = error.id() {
                if let Completion::Awaited { method, waiter } = self.outgoing.complete(id) {
                    let _ = waiter.send(Err(RpcError::BadAnswer {
                        method,
                        detail: error.to_string(),
                        seq,
                    }));
                }
            }
        }
        self.emit(Event::BadFrame {
            seq,
            error,
            replied,
        });
    }

    fn handle_message(&mut self, seq: u64, message: Message) {
        match message {
            Message::Request(request) => self.handle_request(seq, request),
            Message::Notification(notification) if notification.method == methods::CANCELLED => {
                self.handle_cancelled(seq, notification);
            }
            Message::Notification(notification) => {
                self.emit(Event::Notification { seq, notification });
            }
            Message::Response(response) => self.handle_response(seq, response),
        }
    }

    fn handle_request(&mut self, seq: u64, request: Request) {
        let Some(shared) = self.peer.upgrade() else {
            return; // every handle is gone; the loop ends on the next turn
        };
        let duplicate = {
            let mut incoming = lock(&self.incoming);
            let duplicate = incoming.open.contains_key(&request.id);
            if !duplicate {
                incoming.open.insert(
                    request.id.clone(),
                    IncomingState::Open {
                        method: request.method.clone(),
                    },
                );
            }
            duplicate
        };
        if duplicate {
            let error = ErrorObject::new(
                ErrorCode::InvalidRequest,
                format!("request id {} is already in use", request.id),
            );
            let id = request.id.clone();
            self.write(
                Message::Response(Response::error(Some(id.clone()), error)),
                Some(id),
            );
            return;
        }
        let mut responder = Responder {
            id: request.id.clone(),
            method: request.method.clone(),
            link: shared,
            armed: true,
        };
        let mut request = request;
        if let Some(inline) = &self.inline_requests {
            match inline.handle(request, responder) {
                None => return,
                Some(back) => (request, responder) = back,
            }
        }
        self.emit(Event::Request {
            seq,
            request,
            responder,
        });
    }

    fn handle_cancelled(&mut self, seq: u64, notification: Notification) {
        let params = notification.params.as_ref();
        let id = params
            .and_then(|p| p.get("requestId"))
            .and_then(|id| RequestId::from_value(id).ok());
        let Some(id) = id else {
            // Not a cancellation this peer can act on; the application may still look.
            self.emit(Event::Notification { seq, notification });
            return;
        };
        let reason = params
            .and_then(|p| p.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(state) = lock(&self.incoming).open.get_mut(&id) {
            *state = IncomingState::Cancelled;
        }
        self.emit(Event::Cancelled { seq, id, reason });
    }

    fn handle_response(&mut self, seq: u64, response: Response) {
        let Some(id) = response.id.clone() else {
            self.emit(Event::Response { seq, response });
            return;
        };
        match self.outgoing.complete(&id) {
            Completion::Awaited { method, waiter } => {
                let reply = Reply {
                    seq,
                    outcome: response.outcome,
                };
                if let Err(Ok(reply)) = waiter.send(Ok(reply)) {
                    // The caller stopped waiting; §6.1 still wants the result read.
                    self.emit(Event::LateResponse {
                        seq,
                        id,
                        method,
                        outcome: reply.outcome,
                        reason: LateReason::Abandoned,
                    });
                }
            }
            Completion::Late(record) => self.emit(Event::LateResponse {
                seq,
                id,
                method: record.method,
                outcome: response.outcome,
                reason: record.reason,
            }),
            Completion::Unknown => self.emit(Event::Response { seq, response }),
        }
    }
}
