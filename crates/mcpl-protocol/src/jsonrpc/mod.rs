//! The JSON-RPC 2.0 envelope: requests, notifications and responses.
//!
//! Every message keeps the members it does not know in `extra`, so a message read and written
//! again is the same message (MCPL §8: unknown fields are tolerated on both sides).
//!
//! Decoding checks the envelope field by field and names the check that failed
//! ("missing `jsonrpc`", "`id` is null in a request"), instead of guessing the kind of message
//! from its shape. [`Message::from_value`] is the one place that does it; the `Deserialize` impl
//! calls it. Byte-level checks (size, nesting depth, surrogates) live in [`crate::frame`].

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

mod error;

pub use error::{DecodeError, ErrorCode, ErrorObject, kind_of};

/// The `jsonrpc` member every message carries.
pub const VERSION: &str = "2.0";

/// A request id: an integer or a string, never null (MCP).
///
/// `Display` quotes string ids, so `7` and `"7"` never print the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a JSON value: an integer that fits `i64`, or a string.
    pub fn from_value(value: &Value) -> Result<RequestId, DecodeError> {
        match value {
            Value::String(s) => Ok(RequestId::String(s.clone())),
            Value::Number(n) => {
                n.as_i64()
                    .map(RequestId::Number)
                    .ok_or_else(|| DecodeError::BadId {
                        found: n.to_string(),
                    })
            }
            other => Err(DecodeError::BadId {
                found: kind_of(other).to_owned(),
            }),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom(format!("request id {v} does not fit in an i64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
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

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

/// A request: a method call that gets exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name, for example `tools/call`.
    pub method: String,
    /// The params, if any (an object or an array; an explicit `null` is kept as `Some(Null)`).
    pub params: Option<Value>,
    /// Members of the envelope this crate does not know, kept for round trips.
    pub extra: Map<String, Value>,
}

impl Request {
    /// A request with no unknown members.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            id: id.into(),
            method: method.into(),
            params,
            extra: Map::new(),
        }
    }
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

impl Notification {
    /// A notification with no unknown members.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            method: method.into(),
            params,
            extra: Map::new(),
        }
    }
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

impl Response {
    /// A successful response carrying `result`.
    pub fn ok(id: RequestId, result: Value) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
            extra: Map::new(),
        }
    }

    /// An error response. `id` is `None` only when the request's id could not be read.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
            extra: Map::new(),
        }
    }

    /// `-32601`: the method is not known here (MCPL §6.6: never leave a request unanswered).
    pub fn method_not_found(id: RequestId, method: &str) -> Self {
        Response::error(
            Some(id),
            ErrorObject::new(
                ErrorCode::MethodNotFound,
                format!("method not found: `{method}`"),
            ),
        )
    }

    /// `-32602`: the params do not fit the method; `detail` says why.
    pub fn invalid_params(id: RequestId, detail: impl fmt::Display) -> Self {
        Response::error(
            Some(id),
            ErrorObject::new(
                ErrorCode::InvalidParams,
                format!("invalid params: {detail}"),
            ),
        )
    }

    /// `-32603`: the request failed inside the answering peer.
    pub fn internal_error(id: RequestId, detail: impl fmt::Display) -> Self {
        Response::error(
            Some(id),
            ErrorObject::new(
                ErrorCode::InternalError,
                format!("internal error: {detail}"),
            ),
        )
    }
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

impl Message {
    /// Reads a message from a JSON value, checking each envelope member and naming the check
    /// that failed. Unknown members go to `extra`.
    pub fn from_value(value: Value) -> Result<Message, DecodeError> {
        let mut map = match value {
            Value::Object(map) => map,
            Value::Array(_) => return Err(DecodeError::Batch),
            other => {
                return Err(DecodeError::NotAnObject {
                    found: kind_of(&other),
                });
            }
        };
        match map.shift_remove("jsonrpc") {
            None => return Err(DecodeError::MissingVersion),
            Some(Value::String(v)) if v == VERSION => {}
            Some(other) => {
                return Err(DecodeError::WrongVersion {
                    found: other.to_string(),
                });
            }
        }
        if let Some(method) = map.shift_remove("method") {
            let Value::String(method) = method else {
                return Err(DecodeError::MethodNotString {
                    found: kind_of(&method),
                });
            };
            for member in ["result", "error"] {
                if map.contains_key(member) {
                    return Err(DecodeError::MethodAndOutcome { member });
                }
            }
            let params = match map.shift_remove("params") {
                None => None,
                Some(p @ (Value::Object(_) | Value::Array(_) | Value::Null)) => Some(p),
                Some(other) => {
                    return Err(DecodeError::BadParams {
                        found: kind_of(&other),
                    });
                }
            };
            return match map.shift_remove("id") {
                None => Ok(Message::Notification(Notification {
                    method,
                    params,
                    extra: map,
                })),
                Some(Value::Null) => Err(DecodeError::NullRequestId),
                Some(id) => Ok(Message::Request(Request {
                    id: RequestId::from_value(&id)?,
                    method,
                    params,
                    extra: map,
                })),
            };
        }
        let outcome = match (map.shift_remove("result"), map.shift_remove("error")) {
            (Some(_), Some(_)) => return Err(DecodeError::ResultAndError),
            (None, None) => return Err(DecodeError::NoMethodOrOutcome),
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(ErrorObject::from_value(error)?),
        };
        let id = match map.shift_remove("id") {
            None => return Err(DecodeError::MissingResponseId),
            Some(Value::Null) if outcome.is_ok() => return Err(DecodeError::NullResultId),
            Some(Value::Null) => None,
            Some(id) => Some(RequestId::from_value(&id)?),
        };
        Ok(Message::Response(Response {
            id,
            outcome,
            extra: map,
        }))
    }

    /// Reads a message from JSON text. No size or depth limits: for bytes off a wire use
    /// [`crate::frame::decode`].
    pub fn from_slice(bytes: &[u8]) -> Result<Message, DecodeError> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| DecodeError::Syntax(e.to_string()))?;
        Message::from_value(value)
    }

    /// The message as JSON text, members in wire order (`jsonrpc`, `id`, `method`, `params`,
    /// `result`/`error`, then unknown members).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a message has string keys and serializes")
    }

    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

/// Recovers the id of a request that failed [`Message::from_value`], so the error reply can
/// carry it. `None` when the value does not look like a request or its id is unreadable.
pub fn salvage_request_id(value: &Value) -> Option<RequestId> {
    let map = value.as_object()?;
    if !map.contains_key("method") {
        return None;
    }
    RequestId::from_value(map.get("id")?).ok()
}

/// Whether a value that failed [`Message::from_value`] looks like a response (it has `result`
/// or `error` and no `method`). Responses are never answered, not even when malformed.
pub fn looks_like_response(value: &Value) -> bool {
    value.as_object().is_some_and(|m| {
        !m.contains_key("method") && (m.contains_key("result") || m.contains_key("error"))
    })
}

/// The id of a value that failed [`Message::from_value`] but looks like a response, so a
/// peer can fail the request it answers at once instead of waiting for its timeout (H76).
/// Never used to reply: responses are never answered.
pub fn salvage_response_id(value: &Value) -> Option<RequestId> {
    if !looks_like_response(value) {
        return None;
    }
    RequestId::from_value(value.as_object()?.get("id")?).ok()
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Message::from_value(value).map_err(de::Error::custom)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Known members first, in wire order; an unknown member never shadows a known one.
        let (known, extra): (&[&str], &Map<String, Value>) = match self {
            Message::Request(r) => (&["jsonrpc", "id", "method", "params"], &r.extra),
            Message::Notification(n) => (&["jsonrpc", "method", "params"], &n.extra),
            Message::Response(r) => (&["jsonrpc", "id", "result", "error"], &r.extra),
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", VERSION)?;
        match self {
            Message::Request(r) => {
                map.serialize_entry("id", &r.id)?;
                map.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                map.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                map.serialize_entry("id", &r.id)?;
                match &r.outcome {
                    Ok(result) => map.serialize_entry("result", result)?,
                    Err(error) => map.serialize_entry("error", error)?,
                }
            }
        }
        for (k, v) in extra {
            if !known.contains(&k.as_str()) {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

macro_rules! serialize_via_message {
    ($($ty:ident),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                Message::from(self.clone()).serialize(serializer)
            }
        }
    )*};
}
serialize_via_message!(Request, Notification, Response);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(text: &str) -> Result<Message, DecodeError> {
        Message::from_slice(text.as_bytes())
    }

    fn round_trip(text: &str) {
        let msg = decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(msg.to_json(), text);
    }

    #[test]
    fn request_wire_text() {
        let req = Request::new(1, "tools/list", Some(json!({})));
        assert_eq!(
            Message::from(req).to_json(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#
        );
    }

    #[test]
    fn missing_params_are_omitted_and_null_params_are_kept() {
        let req = Request::new("a", "ping", None);
        assert_eq!(
            Message::from(req).to_json(),
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#
        );
        round_trip(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
        round_trip(r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":null}"#);
        let Message::Request(r) = decode(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!(r.params, None);
    }

    #[test]
    fn notification_wire_text() {
        let n = Notification::new("notifications/initialized", None);
        assert_eq!(
            Message::from(n).to_json(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        round_trip(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}"#,
        );
    }

    #[test]
    fn ok_and_error_replies_wire_text() {
        let ok = Response::ok(RequestId::Number(7), json!({"tools": []}));
        assert_eq!(
            Message::from(ok).to_json(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#
        );
        let err = Response::method_not_found(RequestId::from("x"), "nope/nope");
        assert_eq!(
            Message::from(err).to_json(),
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found: `nope/nope`"}}"#
        );
        let parse = Response::error(None, ErrorObject::new(ErrorCode::ParseError, "Parse error"));
        assert_eq!(
            Message::from(parse).to_json(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
        round_trip(
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Capability denied","data":{"capability":"pushEvents"}}}"#,
        );
        round_trip(r#"{"jsonrpc":"2.0","id":2,"result":null}"#);
    }

    #[test]
    fn string_and_number_ids_stay_apart() {
        let n = decode(r#"{"jsonrpc":"2.0","id":92,"method":"ping"}"#).unwrap();
        let s = decode(r#"{"jsonrpc":"2.0","id":"92","method":"ping"}"#).unwrap();
        let (Message::Request(n), Message::Request(s)) = (n, s) else {
            panic!("not requests")
        };
        assert_eq!(n.id, RequestId::Number(92));
        assert_eq!(s.id, RequestId::String("92".into()));
        assert_ne!(n.id, s.id);
        assert_eq!(n.id.to_string(), "92");
        assert_eq!(s.id.to_string(), "\"92\"");
        round_trip(r#"{"jsonrpc":"2.0","id":"92","result":{}}"#);
        round_trip(r#"{"jsonrpc":"2.0","id":-5,"result":{}}"#);
    }

    #[test]
    fn unknown_members_are_kept() {
        round_trip(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1],"trace":"abc"}"#);
        round_trip(r#"{"jsonrpc":"2.0","method":"x","vendor":{"a":1}}"#);
        round_trip(r#"{"jsonrpc":"2.0","id":1,"result":{"z":1,"a":2},"extra":true}"#);
        let Message::Request(r) =
            decode(r#"{"jsonrpc":"2.0","trace":"abc","id":1,"method":"x"}"#).unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!(r.extra.get("trace"), Some(&json!("abc")));
        // Canonical order on the way out: known members first.
        assert_eq!(
            Message::Request(r).to_json(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","trace":"abc"}"#
        );
    }

    #[test]
    fn several_unknown_members_keep_their_order() {
        // Removing known members must not reorder the rest (no swap_remove).
        let text = r#"{"jsonrpc":"2.0","a":1,"id":1,"b":2,"method":"x","c":3,"params":{},"d":4}"#;
        let msg = decode(text).unwrap();
        assert_eq!(
            msg.to_json(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"a":1,"b":2,"c":3,"d":4}"#
        );
        let text = r#"{"z":0,"jsonrpc":"2.0","y":1,"id":1,"x":2,"result":{}}"#;
        assert_eq!(
            decode(text).unwrap().to_json(),
            r#"{"jsonrpc":"2.0","id":1,"result":{},"z":0,"y":1,"x":2}"#
        );
    }

    #[test]
    fn extra_never_shadows_known_members() {
        let mut req = Request::new(1, "ping", None);
        req.extra.insert("id".into(), json!(99));
        req.extra.insert("x".into(), json!(1));
        assert_eq!(
            Message::from(req).to_json(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1}"#
        );
    }

    #[test]
    fn each_failed_check_is_named() {
        let cases: &[(&str, &str)] = &[
            (r#"{"id":1,"method":"x"}"#, "missing `jsonrpc`"),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
                "`jsonrpc` is \"1.0\", expected \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
                "`id` is null in a request",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
                "response has both `result` and `error`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
                "`id` must be a string or an integer, found 1.5",
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
                "`id` must be a string or an integer, found a boolean",
            ),
            (
                r#"{"jsonrpc":"2.0","method":7}"#,
                "`method` must be a string, found a number",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"x","params":"p"}"#,
                "`params` must be an object or an array, found a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","result":1}"#,
                "message has both `method` and `result`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1}"#,
                "message has none of `method`, `result` and `error`",
            ),
            (
                r#"{"jsonrpc":"2.0","result":1}"#,
                "missing `id` in a response",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
                "`id` is null in a successful response",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#,
                "bad `error` object: missing `error.code`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
                "bad `error` object: `error.code` must be an integer, found a string",
            ),
            (
                "[]",
                "batch arrays are not supported: send one message per frame",
            ),
            ("\"hi\"", "a message must be a json object, found a string"),
        ];
        for (text, want) in cases {
            let err = decode(text).expect_err(text);
            assert_eq!(err.to_string(), *want, "for {text}");
            assert_eq!(err.code(), ErrorCode::InvalidRequest, "for {text}");
        }
        let err = decode("{nope").unwrap_err();
        assert!(err.to_string().starts_with("malformed json: "), "{err}");
        assert_eq!(err.code(), ErrorCode::ParseError);
    }

    #[test]
    fn serde_deserialize_uses_the_same_checks() {
        let err = serde_json::from_str::<Message>(r#"{"id":1,"method":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing `jsonrpc`"), "{err}");
        let msg: Message = serde_json::from_str(r#"{"jsonrpc":"2.0","method":"x"}"#).unwrap();
        assert_eq!(msg.method(), Some("x"));
    }

    #[test]
    fn id_is_salvaged_from_a_bad_request_only() {
        let bad: Value = serde_json::from_str(r#"{"jsonrpc":"1.0","id":4,"method":"x"}"#).unwrap();
        assert_eq!(salvage_request_id(&bad), Some(RequestId::Number(4)));
        assert!(!looks_like_response(&bad));
        let bad_resp: Value =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":4,"result":1,"error":2}"#).unwrap();
        assert_eq!(salvage_request_id(&bad_resp), None);
        assert!(looks_like_response(&bad_resp));
    }

    #[test]
    fn request_id_deserializes_strictly() {
        assert_eq!(
            serde_json::from_str::<RequestId>("3").unwrap(),
            RequestId::Number(3)
        );
        assert_eq!(
            serde_json::from_str::<RequestId>("\"3\"").unwrap(),
            RequestId::from("3")
        );
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
        assert!(serde_json::from_str::<RequestId>("18446744073709551615").is_err());
    }
}
