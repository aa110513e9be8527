//! What the peer hands the application: events in read order, and handles to answer requests.

use crate::error::RpcError;
use crate::link::Shared;
use crate::pending::LateReason;
use mcpl_protocol::frame::FrameError;
use mcpl_protocol::jsonrpc::{
    ErrorObject, Message, Notification, Request, RequestId, Response, kind_of,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Something read off the wire (or the end of it), numbered in read order.
///
/// Every frame read takes the next `seq`, responses and bad frames included, so a host can
/// apply hints in the order the reader saw them (RFC-014 §6.1, H13) even when some frames end
/// up as awaited answers ([`Answered::seq`]) and others as events.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A request from the other peer. Answer it through `responder` (or disarm the responder
    /// and answer with [`Peer::respond`](crate::Peer::respond) / [`Peer::send`](crate::Peer::send)); MCPL §6.6 says never leave one
    /// unanswered, so a responder dropped unanswered sends `-32603`.
    Request {
        /// Read-order number.
        seq: u64,
        /// The request.
        request: Request,
        /// The handle that answers it.
        responder: Responder,
    },
    /// A notification from the other peer (except `notifications/cancelled`).
    Notification {
        /// Read-order number.
        seq: u64,
        /// The notification.
        notification: Notification,
    },
    /// The other peer cancelled one of its requests (`notifications/cancelled`): stop the work.
    /// An answer given afterwards is not sent (MCP).
    Cancelled {
        /// Read-order number.
        seq: u64,
        /// The id of the cancelled request.
        id: RequestId,
        /// The reason given, if any.
        reason: Option<String>,
    },
    /// A response to no request this peer is tracking: an id this peer did not allocate
    /// (a sans-IO core that sent its own request with [`Peer::send`](crate::Peer::send)) or an error with
    /// `"id": null` about a frame of ours the other peer could not read.
    Response {
        /// Read-order number.
        seq: u64,
        /// The response.
        response: Response,
    },
    /// The answer to a request nobody awaits any more: it timed out, was cancelled, or its
    /// caller went away. RFC-014 §6.1: a host still applies the hints of such a result.
    LateResponse {
        /// Read-order number.
        seq: u64,
        /// The request's id.
        id: RequestId,
        /// The request's method: read the outcome as that method's result.
        method: String,
        /// The raw result or error.
        outcome: Result<Value, ErrorObject>,
        /// Why nobody awaited it.
        reason: LateReason,
    },
    /// A frame that is not a message. The connection goes on; `replied` says whether an
    /// error reply was sent (never for something that looked like a response).
    BadFrame {
        /// Read-order number.
        seq: u64,
        /// What was wrong with it.
        error: FrameError,
        /// Whether an error reply was sent.
        replied: bool,
    },
    /// The connection closed; this is the last event.
    Closed {
        /// Why, if it was not an orderly end.
        reason: Option<String>,
    },
}

impl Event {
    /// The message this event was read from, for a driver that feeds a sans-IO core: a
    /// late response becomes its response again, a cancellation its notification. A request's
    /// responder is [disarmed](Responder::disarm), so the core answers with [`Peer::send`](crate::Peer::send).
    /// `None` for [`Event::BadFrame`] and [`Event::Closed`].
    pub fn into_message(self) -> Option<Message> {
        match self {
            Event::Request {
                request, responder, ..
            } => {
                responder.disarm();
                Some(Message::Request(request))
            }
            Event::Notification { notification, .. } => Some(Message::Notification(notification)),
            Event::Cancelled { id, reason, .. } => {
                let mut params = serde_json::Map::new();
                params.insert("requestId".into(), serde_json::json!(id));
                if let Some(reason) = reason {
                    params.insert("reason".into(), Value::String(reason));
                }
                Some(Message::Notification(Notification::new(
                    mcpl_protocol::methods::CANCELLED,
                    Some(Value::Object(params)),
                )))
            }
            Event::Response { response, .. } => Some(Message::Response(response)),
            Event::LateResponse { id, outcome, .. } => Some(Message::Response(Response {
                id: Some(id),
                outcome,
                extra: Default::default(),
            })),
            Event::BadFrame { .. } | Event::Closed { .. } => None,
        }
    }

    /// The read-order number, for every event but [`Event::Closed`].
    pub fn seq(&self) -> Option<u64> {
        match self {
            Event::Request { seq, .. }
            | Event::Notification { seq, .. }
            | Event::Cancelled { seq, .. }
            | Event::Response { seq, .. }
            | Event::LateResponse { seq, .. }
            | Event::BadFrame { seq, .. } => Some(*seq),
            Event::Closed { .. } => None,
        }
    }
}

/// The stream of [`Event`]s of one peer, in read order. It ends after [`Event::Closed`].
///
/// Unbounded, so a caller awaiting an answer never deadlocks with a reader waiting for room:
/// keep draining it.
#[derive(Debug)]
pub struct Events {
    // Boxed: an idle connection's queue then holds pointers, not 264-byte events.
    pub(crate) rx: crate::queue::QueueReceiver<Box<Event>>,
}

impl Events {
    /// The next event, or `None` once the connection closed and every event was taken.
    pub async fn recv(&mut self) -> Option<Event> {
        self.rx.recv().await.map(|e| *e)
    }

    /// Polls for the next event, for a task that waits on several peers' events at once
    /// (`Ready(None)` as [`recv`](Self::recv)'s `None`).
    pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Event>> {
        self.rx.poll_recv(cx).map(|e| e.map(|e| *e))
    }

    /// The next event if one is ready.
    pub fn try_recv(&mut self) -> Option<Event> {
        self.rx.try_recv().map(|e| *e)
    }
}

/// A successful answer and its place in read order.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered<T> {
    /// The result, read as the type of the request it answers.
    pub value: T,
    /// The read-order number of the response frame.
    pub seq: u64,
}

/// Answers one incoming request. Dropping it unanswered sends `-32603` (MCPL §6.6), unless
/// it was [disarmed](Responder::disarm).
#[derive(Debug)]
pub struct Responder {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) link: std::sync::Arc<Shared>,
    pub(crate) armed: bool,
}

impl Responder {
    /// The id of the request.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The method of the request.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Answers with `result`. Fails with [`RpcError::AnswerSuppressed`] when the other peer
    /// cancelled the request (nothing is sent then).
    pub fn respond(mut self, result: Value) -> Result<(), RpcError> {
        self.armed = false;
        self.link.respond(self.id.clone(), Ok(result))
    }

    /// Answers with `result` serialized.
    pub fn respond_with<T: Serialize>(self, result: &T) -> Result<(), RpcError> {
        match serde_json::to_value(result) {
            Ok(value) => self.respond(value),
            Err(e) => {
                let detail = format!("result does not serialize: {e}");
                self.error(ErrorObject::new(
                    mcpl_protocol::jsonrpc::ErrorCode::InternalError,
                    detail,
                ))
            }
        }
    }

    /// Answers with an error object.
    pub fn error(mut self, error: ErrorObject) -> Result<(), RpcError> {
        self.armed = false;
        self.link.respond(self.id.clone(), Err(error))
    }

    /// Answers `-32601` naming the method.
    pub fn method_not_found(self) -> Result<(), RpcError> {
        let Response { outcome, .. } = Response::method_not_found(self.id.clone(), &self.method);
        self.error(outcome.expect_err("method_not_found builds an error"))
    }

    /// Answers `-32602` with `detail`.
    pub fn invalid_params(self, detail: impl std::fmt::Display) -> Result<(), RpcError> {
        let Response { outcome, .. } = Response::invalid_params(self.id.clone(), detail);
        self.error(outcome.expect_err("invalid_params builds an error"))
    }

    /// Sends a notification that belongs to this request (on Streamable HTTP it travels on
    /// the request's own SSE stream when that is open).
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        self.link.send_related(
            Message::Notification(Notification::new(method, params)),
            Some(self.id.clone()),
        )
    }

    /// Gives up the drop guard: the caller promises to answer with [`Peer::respond`](crate::Peer::respond) or
    /// [`Peer::send`](crate::Peer::send) (a sans-IO core that writes its own responses).
    pub fn disarm(mut self) -> RequestId {
        self.armed = false;
        self.id.clone()
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if self.armed {
            self.link.abandon(self.id.clone());
        }
    }
}

/// Reads a request's params as `T`; missing params read as `{}`. The error is the `-32602`
/// object to answer with.
pub fn decode_params<T: DeserializeOwned>(request: &Request) -> Result<T, ErrorObject> {
    params_as(&request.method, request.params.clone())
}

/// [`decode_params`] for a request read for the last time: its params move into `T`
/// instead of being copied (a tool call's arguments, on the surface's call path).
pub fn into_params<T: DeserializeOwned>(request: Request) -> Result<T, ErrorObject> {
    params_as(&request.method, request.params)
}

/// [`into_params`] with a decoder of its own, for a type that decodes an owned value
/// without rebuilding it (`CallToolParams::from_value`); the error is worded the same way.
pub fn into_params_with<T>(
    request: Request,
    decode: impl FnOnce(Value) -> Result<T, serde_json::Error>,
) -> Result<T, ErrorObject> {
    decode_as(&request.method, request.params, decode)
}

fn params_as<T: DeserializeOwned>(method: &str, params: Option<Value>) -> Result<T, ErrorObject> {
    decode_as(method, params, serde_json::from_value)
}

fn decode_as<T>(
    method: &str,
    params: Option<Value>,
    decode: impl FnOnce(Value) -> Result<T, serde_json::Error>,
) -> Result<T, ErrorObject> {
    let params = params.unwrap_or_else(|| Value::Object(Default::default()));
    let found = kind_of(&params);
    decode(params).map_err(|e| {
        ErrorObject::new(
            mcpl_protocol::jsonrpc::ErrorCode::InvalidParams,
            format!("invalid params for `{method}` ({found}): {e}"),
        )
    })
}

/// A handler run on the connection's own task for every request read, before the request
/// becomes an [`Event::Request`]. It answers the request or hands it
/// on (to another task, with its [`Responder`]) and returns `None`, or
/// gives both back to be queued as an event as usual. The request is then handled without
/// a trip through the application's event loop, a task switch per request saved on a busy
/// path. The handler must not block: the connection reads nothing while it runs. A request
/// it takes may overtake requests queued as events before it.
#[derive(Clone)]
pub struct InlineRequests(
    #[allow(clippy::type_complexity)]
    std::sync::Arc<dyn Fn(Request, Responder) -> Option<(Request, Responder)> + Send + Sync>,
);

impl InlineRequests {
    /// A handler from a function (see [`InlineRequests`]).
    pub fn new(
        handler: impl Fn(Request, Responder) -> Option<(Request, Responder)> + Send + Sync + 'static,
    ) -> Self {
        InlineRequests(std::sync::Arc::new(handler))
    }

    /// Runs the handler.
    pub(crate) fn handle(
        &self,
        request: Request,
        responder: Responder,
    ) -> Option<(Request, Responder)> {
        (self.0)(request, responder)
    }
}

impl std::fmt::Debug for InlineRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InlineRequests(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Echo {
        #[serde(default)]
        text: String,
    }

    /// Params read by reference and params moved out read the same: missing params as `{}`,
    /// and a mismatch as `-32602` naming the method and what was found.
    #[test]
    fn params_read_or_moved_decode_alike() {
        let good = Request::new(1, "echo", Some(json!({"text": "hi"})));
        let echo = Echo { text: "hi".into() };
        assert_eq!(decode_params::<Echo>(&good), Ok(echo));
        assert_eq!(into_params::<Echo>(good), Ok(Echo { text: "hi".into() }));
        let bare = Request::new(2, "echo", None);
        assert_eq!(
            into_params::<Echo>(bare),
            Ok(Echo {
                text: String::new()
            })
        );
        let bad = Request::new(3, "echo", Some(json!([1])));
        let by_ref = decode_params::<Echo>(&bad).unwrap_err();
        let moved = into_params::<Echo>(bad).unwrap_err();
        assert_eq!(by_ref, moved);
        assert_eq!(
            moved.code,
            mcpl_protocol::jsonrpc::ErrorCode::InvalidParams.code()
        );
        assert!(
            moved.message.starts_with("invalid params for `echo`"),
            "{}",
            moved.message
        );
        // A decoder of the caller's own gets the same error, and missing params as `{}`.
        let bad = Request::new(4, "echo", Some(json!([1])));
        let own = into_params_with(bad, serde_json::from_value::<Echo>).unwrap_err();
        assert_eq!(own, moved);
        let bare = Request::new(5, "echo", None);
        assert_eq!(
            into_params_with(bare, Ok::<Value, serde_json::Error>),
            Ok(json!({})),
            "missing params read as an empty object"
        );
    }
}
