//! `ping`, `notifications/initialized`, `notifications/cancelled`,
//! `notifications/tools/list_changed` and `notifications/message` (MCP lifecycle, utilities
//! and logging).

use crate::jsonrpc::RequestId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Params or result with nothing but an optional `_meta`: `ping` params and result,
/// `notifications/initialized` and `notifications/tools/list_changed` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyObject {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/cancelled` params: the sender no longer wants the answer to a request.
///
/// Under MCP the receiver then sends no response. RFC-014 §6.1: a server whose cancelled call
/// changed hint state sends those changes as `tools/hints`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelledParams {
    /// The id of the request being cancelled.
    #[serde(rename = "requestId")]
    pub request_id: RequestId,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CancelledParams {
    /// Cancels `request_id`, saying `reason` if given.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        CancelledParams {
            request_id,
            reason,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// The severity of a log message (RFC 5424 levels, as MCP uses them), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// `notifications/message` params: one log message from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// The severity.
    pub level: LoggingLevel,
    /// The logger that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Members this crate does not know, kept for round trips.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl LoggingMessageParams {
    /// A message at `level` holding `data`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageParams {
            level,
            logger: None,
            data: data.into(),
            meta: None,
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::round_trip;
    use serde_json::json;

    #[test]
    fn empty_objects_round_trip() {
        let e: EmptyObject = round_trip(json!({}));
        assert_eq!(e, EmptyObject::default());
        round_trip::<EmptyObject>(json!({"_meta": {"progressToken": 1}, "x": true}));
    }

    #[test]
    fn cancelled_round_trips_with_either_id_kind() {
        let c: CancelledParams = round_trip(json!({"requestId": 7, "reason": "user"}));
        assert_eq!(c.request_id, RequestId::Number(7));
        let c: CancelledParams = round_trip(json!({"requestId": "a-1", "vendor": 1}));
        assert_eq!(c.request_id, RequestId::String("a-1".into()));
        assert!(serde_json::from_value::<CancelledParams>(json!({"reason": "x"})).is_err());
    }

    #[test]
    fn logging_message_round_trips_and_levels_order() {
        let m: LoggingMessageParams = round_trip(json!({"level": "warning", "logger": "arcade",
            "data": {"msg": "slow"}, "extra": 1}));
        assert_eq!(m.level, LoggingLevel::Warning);
        assert!(LoggingLevel::Debug < LoggingLevel::Emergency);
        assert!(
            serde_json::from_value::<LoggingMessageParams>(json!({"level": "loud", "data": 1}))
                .is_err()
        );
    }
}
