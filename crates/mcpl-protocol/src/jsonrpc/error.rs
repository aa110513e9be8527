//! Error objects and the one table of error codes.

use super::{DecodeError, kind_of};
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
