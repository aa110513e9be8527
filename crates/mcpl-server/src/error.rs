//! The crate's error type, and the one mapping of refusals to JSON-RPC error objects.

use crate::principal::CallId;
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject};

/// What can go wrong at the SDK's boundary. A peer's fault never comes back as `Err`: it
/// becomes an error reply or a tool error, and changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The declarations are inconsistent (a bad name, a duplicate tool, an invalid schema).
    #[error("invalid declarations: {0}")]
    Declaration(String),
    /// App code recorded a change that does not fit the declarations; nothing was applied.
    #[error("invalid update: {0}")]
    Update(String),
    /// `handle_call_done` named a call the session is not waiting for.
    #[error("no call {0:?} is pending on this session")]
    UnknownCall(CallId),
    /// The reply does not match the kind of call (a close answered with an open reply).
    #[error("call {call:?} needs a {expected} reply")]
    WrongReply {
        /// The call.
        call: CallId,
        /// The reply kind it needs.
        expected: &'static str,
    },
    /// The principal store could not be reached (driver only).
    #[error("store: {0}")]
    Store(String),
    /// A transport failed (driver only).
    #[error("transport: {0}")]
    Transport(String),
}

/// A request the session refuses, with the JSON-RPC code it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
}

impl Refusal {
    /// `-32602`: bad params (Appendix B.12 for failed opens).
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Refusal {
            code: ErrorCode::InvalidParams,
            message: message.into(),
        }
    }

    /// `-32603`: the server failed (app code answered a call with the wrong kind of reply).
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Refusal {
            code: ErrorCode::InternalError,
            message: message.into(),
        }
    }

    /// `-32601`: the method is not offered.
    pub(crate) fn method_not_found(message: impl Into<String>) -> Self {
        Refusal {
            code: ErrorCode::MethodNotFound,
            message: message.into(),
        }
    }
}

impl From<&Refusal> for ErrorObject {
    fn from(r: &Refusal) -> Self {
        ErrorObject::new(r.code, r.message.clone())
    }
}
