//! Error objects, the one table of error codes, and why a value is not a message (the
//! leaf of `jsonrpc`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`ErrorCode`] for the ones this project uses).
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Further data about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object with a known code and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// The same error carrying `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The code as an [`ErrorCode`], if it is one this crate knows.
    ///
    /// Codes are read by method: MCP's `resources/read` uses `-32002` for "resource not
    /// found", MCPL for "capability denied" (DIGEST D10).
    pub fn known_code(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }

    /// Reads an error object, naming the member that is wrong.
    pub(super) fn from_value(value: Value) -> Result<ErrorObject, DecodeError> {
        let Value::Object(mut map) = value else {
            return Err(DecodeError::BadError {
                detail: format!("`error` must be an object, found {}", kind_of(&value)),
            });
        };
        let code = match map.remove("code") {
            None => return Err(bad_error("missing `error.code`")),
            Some(Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| bad_error(format!("`error.code` must be an integer, found {n}")))?,
            Some(other) => {
                return Err(bad_error(format!(
                    "`error.code` must be an integer, found {}",
                    kind_of(&other)
                )));
            }
        };
        let message = match map.remove("message") {
            None => return Err(bad_error("missing `error.message`")),
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(bad_error(format!(
                    "`error.message` must be a string, found {}",
                    kind_of(&other)
                )));
            }
        };
        Ok(ErrorObject {
            code,
            message,
            data: map.remove("data"),
        })
    }
}

fn bad_error(detail: impl Into<String>) -> DecodeError {
    DecodeError::BadError {
        detail: detail.into(),
    }
}

/// Every JSON-RPC error code this project sends or reads, each listed once.
///
/// JSON-RPC 2.0 defines the first five; MCP and MCPL (DIGEST D10, MCPL App. A) the rest.
/// Convert to the wire number with `i64::from(code)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `-32700`: the bytes are not valid JSON.
    ParseError,
    /// `-32600`: valid JSON that is not a valid JSON-RPC request.
    InvalidRequest,
    /// `-32601`: the method does not exist or is not available.
    MethodNotFound,
    /// `-32602`: invalid method parameters.
    InvalidParams,
    /// `-32603`: an internal error in the answering peer.
    InternalError,
    /// `-32001` (MCPL): the feature set is not enabled; data `{featureSet}`.
    FeatureSetNotEnabled,
    /// `-32002` (MCPL): the capability is denied; data `{capability}`. MCP uses the same
    /// number on `resources/read` for "resource not found": read it by method.
    CapabilityDenied,
    /// `-32003` (MCPL): the feature set was never declared.
    UnknownFeatureSet,
    /// `-32005` (MCPL): the checkpoint does not exist; data `{checkpoint}`.
    CheckpointNotFound,
    /// `-32017` (MCPL): the channel is not granted.
    ChannelNotPermitted,
    /// `-32023` (MCPL): the channel is not registered.
    UnknownChannel,
    /// `-32024` (MCPL): the server could not open the channel.
    ChannelOpenFailed,
    /// `-32042` (MCP 2025-11-25): the request needs a URL-mode elicitation first.
    UrlElicitationRequired,
}

impl ErrorCode {
    /// Every code, in table order.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::ParseError,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::FeatureSetNotEnabled,
        ErrorCode::CapabilityDenied,
        ErrorCode::UnknownFeatureSet,
        ErrorCode::CheckpointNotFound,
        ErrorCode::ChannelNotPermitted,
        ErrorCode::UnknownChannel,
        ErrorCode::ChannelOpenFailed,
        ErrorCode::UrlElicitationRequired,
    ];

    /// The wire number.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::FeatureSetNotEnabled => -32001,
            ErrorCode::CapabilityDenied => -32002,
            ErrorCode::UnknownFeatureSet => -32003,
            ErrorCode::CheckpointNotFound => -32005,
            ErrorCode::ChannelNotPermitted => -32017,
            ErrorCode::UnknownChannel => -32023,
            ErrorCode::ChannelOpenFailed => -32024,
            ErrorCode::UrlElicitationRequired => -32042,
        }
    }

    /// The code for a wire number, if it is one this crate knows.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The standard short message for the code.
    pub const fn message(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "Parse error",
            ErrorCode::InvalidRequest => "Invalid Request",
            ErrorCode::MethodNotFound => "Method not found",
            ErrorCode::InvalidParams => "Invalid params",
            ErrorCode::InternalError => "Internal error",
            ErrorCode::FeatureSetNotEnabled => "Feature set not enabled",
            ErrorCode::CapabilityDenied => "Capability denied",
            ErrorCode::UnknownFeatureSet => "Unknown feature set",
            ErrorCode::CheckpointNotFound => "Checkpoint not found",
            ErrorCode::ChannelNotPermitted => "Channel not permitted",
            ErrorCode::UnknownChannel => "Unknown channel",
            ErrorCode::ChannelOpenFailed => "Channel open failed",
            ErrorCode::UrlElicitationRequired => "URL elicitation required",
        }
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> i64 {
        code.code()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code(), self.message())
    }
}

/// Why a JSON value is not a JSON-RPC 2.0 message. Each variant names the check that failed.
///
/// Every variant is the peer's fault and maps to `-32600 Invalid Request`, except
/// [`DecodeError::Syntax`] (`-32700 Parse error`): see [`DecodeError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not JSON at all.
    #[error("malformed json: {0}")]
    Syntax(String),
    /// A JSON array: a batch, which MCP dropped in 2025-06-18.
    #[error("batch arrays are not supported: send one message per frame")]
    Batch,
    /// The message is JSON but not an object.
    #[error("a message must be a json object, found {found}")]
    NotAnObject {
        /// What was found instead (`a string`, `a number`, ...).
        found: &'static str,
    },
    /// The `jsonrpc` member is missing.
    #[error("missing `jsonrpc`")]
    MissingVersion,
    /// The `jsonrpc` member is not `"2.0"`.
    #[error("`jsonrpc` is {found}, expected \"2.0\"")]
    WrongVersion {
        /// The value found, as JSON text.
        found: String,
    },
    /// `method` is present but not a string.
    #[error("`method` must be a string, found {found}")]
    MethodNotString {
        /// What was found instead.
        found: &'static str,
    },
    /// A request whose `id` is `null`.
    #[error("`id` is null in a request")]
    NullRequestId,
    /// `id` is neither a string nor an integer that fits `i64`.
    #[error("`id` must be a string or an integer, found {found}")]
    BadId {
        /// What was found instead, or the number that did not fit.
        found: String,
    },
    /// `params` is neither an object, an array nor `null`.
    #[error("`params` must be an object or an array, found {found}")]
    BadParams {
        /// What was found instead.
        found: &'static str,
    },
    /// A message with `method` that also has `result` or `error`.
    #[error("message has both `method` and `{member}`")]
    MethodAndOutcome {
        /// `result` or `error`.
        member: &'static str,
    },
    /// A response with both `result` and `error`.
    #[error("response has both `result` and `error`")]
    ResultAndError,
    /// A message with none of `method`, `result` and `error`.
    #[error("message has none of `method`, `result` and `error`")]
    NoMethodOrOutcome,
    /// A response without an `id` member.
    #[error("missing `id` in a response")]
    MissingResponseId,
    /// A successful response with `"id": null`.
    #[error("`id` is null in a successful response")]
    NullResultId,
    /// The `error` member of a response is malformed.
    #[error("bad `error` object: {detail}")]
    BadError {
        /// Which member of the error object is wrong.
        detail: String,
    },
}

impl DecodeError {
    /// The JSON-RPC code for answering a message that failed this check.
    pub fn code(&self) -> ErrorCode {
        match self {
            DecodeError::Syntax(_) => ErrorCode::ParseError,
            _ => ErrorCode::InvalidRequest,
        }
    }
}

/// A short name for the kind of a JSON value, for error messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_listed_once_with_their_numbers() {
        let numbers: Vec<i64> = ErrorCode::ALL.iter().map(|c| i64::from(*c)).collect();
        assert_eq!(
            numbers,
            [
                -32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32005, -32017,
                -32023, -32024, -32042
            ]
        );
        let mut unique = numbers.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), numbers.len());
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.code()), Some(code));
        }
        assert_eq!(ErrorCode::from_code(-1), None);
    }
}
