//! The JSON-RPC 2.0 envelope: requests, notifications and responses.
//!
//! Every message keeps the members it does not know in `extra`, so a message read and written
//! again is the same message (MCPL §8: unknown fields are tolerated on both sides).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The `jsonrpc` member every message carries.
pub const VERSION: &str = "2.0";

/// A request id: an integer or a string, never null (MCP).
///
/// `Display` quotes string ids, so `7` and `"7"` never print the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// A request: a method call that gets exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, for example `tools/call`.
    pub method: String,
    /// The params, if any (an object or an array).
    pub params: Option<Value>,
    /// Members of the envelope this crate does not know, kept for round trips.
    pub extra: Map<String, Value>,
}

/// A notification: a method call without an id, which gets no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, for example `notifications/cancelled`.
    pub method: String,
    /// The params, if any.
    pub params: Option<Value>,
    /// Members of the envelope this crate does not know, kept for round trips.
    pub extra: Map<String, Value>,
}

/// A response to a request: its result, or an error object.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered. `None` only for an error about a request whose id
    /// could not be read (JSON-RPC writes `"id": null` then).
    pub id: Option<RequestId>,
    /// The result or the error.
    pub outcome: Result<Value, ErrorObject>,
    /// Members of the envelope this crate does not know, kept for round trips.
    pub extra: Map<String, Value>,
}

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

/// Any JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}
