//! The one error type of this crate's boundary.

use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use std::time::Duration;

/// What can go wrong with a request, an answer or the connection.
///
/// Split by fault, as in rustls: the other peer refused ([`RpcError::Remote`]) or misbehaved
/// ([`RpcError::BadResult`]); time or the caller ended a request ([`RpcError::Timeout`],
/// [`RpcError::Cancelled`]); the connection went away ([`RpcError::Closed`],
/// [`RpcError::Transport`]); or this side misused the API ([`RpcError::BadParams`],
/// [`RpcError::UnknownRequest`], [`RpcError::AnswerSuppressed`]). Misuse is never caused by
/// what the other peer sends.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RpcError {
    /// The other peer answered with a JSON-RPC error.
    #[error("`{method}` failed with {}: {}", error.code, error.message)]
    Remote {
        /// The method of the request.
        method: String,
        /// The error object the peer sent (boxed: it is large and rare).
        error: Box<ErrorObject>,
        /// The read-order number of the response.
        seq: u64,
    },
    /// The other peer answered, but the result does not fit the method's result type.
    #[error("result of `{method}` does not fit its type: {detail}")]
    BadResult {
        /// The method of the request.
        method: String,
        /// What serde said.
        detail: String,
    },
    /// The answer could not be read as a JSON-RPC response (too deep, not a character,
    /// malformed envelope); the request fails at once instead of timing out (H76).
    #[error("the answer to `{method}` was refused: {detail}")]
    BadAnswer {
        /// The method of the request.
        method: String,
        /// Why the frame was refused.
        detail: String,
        /// The read-order number of the refused frame.
        seq: u64,
    },
    /// No answer came in time; `notifications/cancelled` was sent. A late answer is still
    /// delivered as [`crate::Event::LateResponse`].
    #[error("`{method}` timed out after {after:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// This side cancelled the request; `notifications/cancelled` was sent.
    #[error("`{method}` was cancelled: {reason}")]
    Cancelled {
        /// The method of the request.
        method: String,
        /// The reason given.
        reason: String,
    },
    /// The connection closed before the request was answered, or was already closed.
    #[error("connection closed{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        /// Why, if known.
        reason: Option<String>,
    },
    /// The transport could not be opened (connect, spawn, handshake).
    #[error("transport: {0}")]
    Transport(String),
    /// Params could not be serialized (caller misuse).
    #[error("params of `{method}` do not serialize: {detail}")]
    BadParams {
        /// The method.
        method: String,
        /// What serde said.
        detail: String,
    },
    /// An answer for an incoming request that is not awaiting one (caller misuse).
    #[error("no incoming request with id {id} awaits an answer")]
    UnknownRequest {
        /// The id given.
        id: RequestId,
    },
    /// The other peer cancelled this request, so no response is sent (MCP). RFC-014 §6.1:
    /// a server sends the call's hint changes as `tools/hints` instead.
    #[error("request {id} was cancelled by the other peer, so its answer was not sent")]
    AnswerSuppressed {
        /// The id of the cancelled request.
        id: RequestId,
    },
}

impl RpcError {
    /// The error object for answering a request that failed with this error, for a peer that
    /// forwards requests (a surface host): a remote error passes through unchanged.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            RpcError::Remote { error, .. } => (**error).clone(),
            other => ErrorObject::new(ErrorCode::InternalError, other.to_string()),
        }
    }
}

impl From<&RpcError> for ErrorObject {
    fn from(error: &RpcError) -> Self {
        error.to_error_object()
    }
}
