//! Frames: the bytes of one message as a transport hands them over, decoded under limits.
//!
//! [`decode`] checks, in order: the frame size, then nesting depth and lone surrogate escapes
//! (by a cheap byte scan, so the error says what is wrong instead of serde's "recursion limit
//! exceeded"), then JSON syntax, then the envelope ([`Message::from_value`]). With the default
//! depth limit the scan runs only on frames serde refuses, so a good frame costs one parse.
//! Every failure is a [`FrameError`]; [`FrameError::reply`] gives the JSON-RPC error a peer
//! should send back, carrying the request's id when it could be read.
//!
//! Pure: no I/O. Splitting a byte stream into frames (newlines on stdio, one text frame per
//! message on WebSocket) is the transport's job.

use crate::jsonrpc::{self, DecodeError, ErrorCode, ErrorObject, Message, RequestId, Response};
use serde::Deserialize;
use serde_json::Value;

/// Limits applied to every incoming frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest frame accepted, in bytes (default 4 MiB).
    pub max_frame_bytes: usize,
    /// The deepest nesting of arrays and objects accepted; the message object itself is
    /// depth 1 (default 128). Keep it modest: values are dropped recursively.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 4 * 1024 * 1024,
            max_depth: 128,
        }
    }
}

/// Why a frame is not a message. Every variant is the sender's fault; none ends a connection
/// by itself (the transport decides whether it can find the next frame).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame is larger than [`Limits::max_frame_bytes`].
    #[error("frame of {len} bytes exceeds the cap of {max} bytes")]
    TooLarge {
        /// The frame's length in bytes (as far as it was read).
        len: usize,
        /// The cap.
        max: usize,
        /// The request's id (or the answer's, when `response`), when the frame's first bytes
        /// held it ([`crate::sniff`]).
        id: Option<RequestId>,
        /// Whether the frame looks like a response (which is never answered).
        response: bool,
    },
    /// Arrays and objects nest deeper than [`Limits::max_depth`].
    #[error("nesting depth {depth} exceeds the limit of {max}")]
    TooDeep {
        /// The first depth past the limit.
        depth: usize,
        /// The limit.
        max: usize,
        /// The request's id (or the answer's, when `response`), when the top level could be
        /// read.
        id: Option<RequestId>,
        /// Whether the frame looks like a response (which is never answered).
        response: bool,
    },
    /// A `\uD800`–`\uDFFF` escape that is not half of a surrogate pair: not a character.
    #[error("lone surrogate escape `{escape}` at byte {offset}")]
    LoneSurrogate {
        /// The escape as written, for example `\ud800`.
        escape: String,
        /// Its byte offset in the frame.
        offset: usize,
        /// The request's id (or the answer's, when `response`), when the top level could be
        /// read.
        id: Option<RequestId>,
        /// Whether the frame looks like a response (which is never answered).
        response: bool,
    },
    /// The bytes are not JSON, or the JSON is not a JSON-RPC message.
    #[error("{error}")]
    Decode {
        /// The failed check.
        error: DecodeError,
        /// The request's id (or the answer's, when `response`), when it could be read (never
        /// for a syntax error).
        id: Option<RequestId>,
        /// Whether the frame looks like a response (which is never answered).
        response: bool,
    },
}

impl FrameError {
    /// A frame of `len` bytes over the cap `max`, whose first bytes were `prefix`: the id is
    /// read from them when it can be ([`crate::sniff`]).
    pub fn too_large(len: usize, max: usize, prefix: &[u8]) -> Self {
        let sniffed = crate::sniff::sniff(prefix);
        let response = sniffed.is_response();
        let id = if response {
            sniffed.id
        } else {
            sniffed.request_id()
        };
        FrameError::TooLarge {
            len,
            max,
            id,
            response,
        }
    }

    /// The id of the bad request, or of the answer when the frame looks like a response (so
    /// the request it answers can fail at once, H76), if it could be read.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            FrameError::TooLarge { id, .. }
            | FrameError::TooDeep { id, .. }
            | FrameError::LoneSurrogate { id, .. }
            | FrameError::Decode { id, .. } => id.as_ref(),
        }
    }

    /// The JSON-RPC code for this failure: `-32700` when the bytes are not JSON (a lone
    /// surrogate is not a character), `-32600` otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            FrameError::LoneSurrogate { .. } => ErrorCode::ParseError,
            FrameError::Decode { error, .. } => error.code(),
            FrameError::TooLarge { .. } | FrameError::TooDeep { .. } => ErrorCode::InvalidRequest,
        }
    }

    /// The error object to send back; its message is this error's text.
    pub fn error_object(&self) -> ErrorObject {
        ErrorObject::new(self.code(), self.to_string())
    }

    /// The error response to send back, or `None` when the frame looks like a response:
    /// a response is never answered, or two peers could trade errors forever.
    pub fn reply(&self) -> Option<Response> {
        let response = match self {
            FrameError::TooLarge { response, .. }
            | FrameError::TooDeep { response, .. }
            | FrameError::LoneSurrogate { response, .. }
            | FrameError::Decode { response, .. } => *response,
        };
        (!response).then(|| Response::error(self.id().cloned(), self.error_object()))
    }
}

/// Decodes one frame into a message under `limits`.
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Message, FrameError> {
    if bytes.len() > limits.max_frame_bytes {
        return Err(FrameError::too_large(
            bytes.len(),
            limits.max_frame_bytes,
            &bytes[..bytes.len().min(crate::sniff::SNIFF_BYTES)],
        ));
    }
    // Fast path: serde's own recursion limit (127 levels) already bounds the stack, so when
    // the configured limit is at least that, parse first and scan only a frame serde refuses.
    let value = if limits.max_depth >= SERDE_DEPTH_LIMIT {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => value,
            Err(_) => checked_parse(bytes, limits)?,
        }
    } else {
        checked_parse(bytes, limits)?
    };
    let response = jsonrpc::looks_like_response(&value);
    let id = if response {
        jsonrpc::salvage_response_id(&value)
    } else {
        jsonrpc::salvage_request_id(&value)
    };
    Message::from_value(value).map_err(|error| FrameError::Decode {
        error,
        id,
        response,
    })
}

/// The deepest nesting serde_json parses with its recursion limit on.
const SERDE_DEPTH_LIMIT: usize = 127;

/// Scans the frame for nesting depth and lone surrogates, then parses it with serde's
/// recursion limit off (the scan bounded the depth), so that depth exactly at the limit passes
/// and everything refused is refused with a message naming the problem.
fn checked_parse(bytes: &[u8], limits: &Limits) -> Result<Value, FrameError> {
    let scan = Scan::run(bytes, limits.max_depth);
    if let Some(depth) = scan.too_deep {
        return Err(FrameError::TooDeep {
            depth,
            max: limits.max_depth,
            id: scan.id(bytes),
            response: scan.looks_like_response(),
        });
    }
    if let Some(offset) = scan.lone_surrogate {
        return Err(FrameError::LoneSurrogate {
            escape: String::from_utf8_lossy(&bytes[offset..offset + 6]).into_owned(),
            offset,
            id: scan.id(bytes),
            response: scan.looks_like_response(),
        });
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    Value::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| FrameError::Decode {
            error: DecodeError::Syntax(e.to_string()),
            id: None,
            response: false,
        })
}

/// Encodes a message as one frame (no trailing newline; stdio adds it).
pub fn encode(message: &Message) -> Vec<u8> {
    serde_json::to_vec(message).expect("a message has string keys and serializes")
}

/// One pass over the bytes: nesting depth, lone surrogates, and where the top-level `id`,
/// `method`, `result` and `error` members are, so a refused frame can still be answered
/// with its id. Tolerant of malformed JSON: serde reports that afterwards.
#[derive(Default)]
struct Scan {
    too_deep: Option<usize>,
    lone_surrogate: Option<usize>,
    id_span: Option<(usize, usize)>,
    has_method: bool,
    has_outcome: bool,
}

impl Scan {
    fn run(bytes: &[u8], max_depth: usize) -> Scan {
        let mut scan = Scan::default();
        let mut depth = 0usize;
        let mut top_is_object = false;
        let mut expect_key = false;
        let mut key_is_id = false;
        let mut value_is_id = false;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    let end = scan.string_end(bytes, i + 1);
                    if depth == 1 && top_is_object {
                        if expect_key {
                            let key = &bytes[i + 1..end.saturating_sub(1).max(i + 1)];
                            key_is_id = key == b"id";
                            scan.has_method |= key == b"method";
                            scan.has_outcome |= key == b"result" || key == b"error";
                            expect_key = false;
                        } else if value_is_id {
                            scan.id_span = Some((i, end));
                        }
                    }
                    value_is_id = false;
                    i = end;
                    continue;
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth == 1 {
                        top_is_object = bytes[i] == b'{';
                        expect_key = top_is_object;
                    }
                    if depth > max_depth && scan.too_deep.is_none() {
                        scan.too_deep = Some(depth);
                    }
                    value_is_id = false;
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b':' if depth == 1 => {
                    value_is_id = key_is_id;
                    key_is_id = false;
                }
                b',' if depth == 1 => {
                    expect_key = top_is_object;
                    value_is_id = false;
                }
                b'-' | b'0'..=b'9' if depth == 1 && value_is_id => {
                    let len = bytes[i..]
                        .iter()
                        .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .unwrap_or(bytes.len() - i);
                    scan.id_span = Some((i, i + len));
                    value_is_id = false;
                    i += len;
                    continue;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {}
                _ => value_is_id = false,
            }
            i += 1;
        }
        scan
    }

    /// Skips a string whose body starts at `i`; returns the index after its closing quote.
    /// Records the first lone surrogate escape.
    fn string_end(&mut self, bytes: &[u8], mut i: usize) -> usize {
        while i < bytes.len() {
            match bytes[i] {
                b'"' => return i + 1,
                b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                    match hex4(bytes, i + 2) {
                        Some(0xD800..=0xDBFF) => {
                            let paired = bytes.get(i + 6) == Some(&b'\\')
                                && bytes.get(i + 7) == Some(&b'u')
                                && matches!(hex4(bytes, i + 8), Some(0xDC00..=0xDFFF));
                            if paired {
                                i += 12;
                                continue;
                            }
                            self.lone_surrogate.get_or_insert(i);
                        }
                        Some(0xDC00..=0xDFFF) => {
                            self.lone_surrogate.get_or_insert(i);
                        }
                        _ => {}
                    }
                    i += 6;
                }
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        bytes.len()
    }

    /// The id of a request, or of an answer when the frame looks like a response; `None`
    /// for anything else, so a reply never carries an id the other side did not send as a
    /// request.
    fn id(&self, bytes: &[u8]) -> Option<RequestId> {
        if !self.has_method && !self.looks_like_response() {
            return None;
        }
        let (start, end) = self.id_span?;
        let value: Value = serde_json::from_slice(bytes.get(start..end)?).ok()?;
        RequestId::from_value(&value).ok()
    }

    fn looks_like_response(&self) -> bool {
        !self.has_method && self.has_outcome
    }
}

/// The value of four hex digits at `i`, if there are four.
fn hex4(bytes: &[u8], i: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(i..i + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::Request;

    fn nested(depth: usize) -> String {
        // The message object is depth 1; params adds one per bracket.
        format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"x","params":{}{}}}"#,
            "[".repeat(depth - 1),
            "]".repeat(depth - 1)
        )
    }

    #[test]
    fn a_good_frame_decodes() {
        let msg = decode(
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(msg, Message::Request(Request::new(1, "ping", None)));
    }

    #[test]
    fn depth_128_passes_and_129_is_refused_with_the_id() {
        let limits = Limits::default();
        assert!(decode(nested(128).as_bytes(), &limits).is_ok());
        let err = decode(nested(129).as_bytes(), &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nesting depth 129 exceeds the limit of 128"
        );
        assert_eq!(err.id(), Some(&RequestId::Number(9)));
        assert_eq!(
            Message::from(err.reply().unwrap()).to_json(),
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"nesting depth 129 exceeds the limit of 128"}}"#
        );
    }

    #[test]
    fn a_small_depth_limit_is_checked_before_parsing() {
        let limits = Limits {
            max_depth: 3,
            ..Limits::default()
        };
        assert!(decode(nested(3).as_bytes(), &limits).is_ok());
        let err = decode(nested(4).as_bytes(), &limits).unwrap_err();
        assert_eq!(err.to_string(), "nesting depth 4 exceeds the limit of 3");
        assert_eq!(err.id(), Some(&RequestId::Number(9)));
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        let text = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"s":"{}"}}}}"#,
            "[".repeat(500)
        );
        assert!(decode(text.as_bytes(), &Limits::default()).is_ok());
    }

    #[test]
    fn oversized_frames_are_refused_before_parsing() {
        let limits = Limits {
            max_frame_bytes: 16,
            ..Limits::default()
        };
        let err = decode(br#"{"jsonrpc":"2.0","method":"long"}"#, &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "frame of 33 bytes exceeds the cap of 16 bytes"
        );
        assert_eq!(err.reply().unwrap().id, None);
    }

    #[test]
    fn lone_surrogates_are_named() {
        let limits = Limits::default();
        let err = decode(
            br#"{"jsonrpc":"2.0","id":"q","method":"x","params":{"s":"a\ud800b"}}"#,
            &limits,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            r"lone surrogate escape `\ud800` at byte 55"
        );
        assert_eq!(err.code(), ErrorCode::ParseError);
        assert_eq!(err.id(), Some(&RequestId::from("q")));
        let low = decode(
            br#"{"jsonrpc":"2.0","method":"x","params":["\uDC00"]}"#,
            &limits,
        );
        assert!(matches!(low, Err(FrameError::LoneSurrogate { .. })));
        // A proper pair is a character.
        let pair = decode(
            br#"{"jsonrpc":"2.0","method":"x","params":["\ud83d\ude00"]}"#,
            &limits,
        )
        .unwrap();
        let Message::Notification(n) = pair else {
            panic!("not a notification")
        };
        assert_eq!(n.params.unwrap()[0], "😀");
    }

    #[test]
    fn malformed_json_gets_a_parse_error_with_null_id() {
        let err = decode(
            br#"{"jsonrpc":"2.0","id":1,"method":"x""#,
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ParseError);
        assert!(err.to_string().starts_with("malformed json: "), "{err}");
        let reply = Message::from(err.reply().unwrap()).to_json();
        assert!(
            reply.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"#),
            "{reply}"
        );
    }

    #[test]
    fn trailing_garbage_is_malformed() {
        let err = decode(br#"{"jsonrpc":"2.0","method":"x"} {}"#, &Limits::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ParseError);
    }

    #[test]
    fn envelope_errors_keep_the_id_and_responses_get_no_reply() {
        let limits = Limits::default();
        let err = decode(br#"{"jsonrpc":"2.0","id":5,"method":1}"#, &limits).unwrap_err();
        assert_eq!(err.to_string(), "`method` must be a string, found a number");
        // It has `method`, so it was meant as a request: the reply carries its id.
        assert_eq!(err.reply().unwrap().id, Some(RequestId::Number(5)));
        let err = decode(br#"[{"jsonrpc":"2.0","method":"x"}]"#, &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "batch arrays are not supported: send one message per frame"
        );
        assert_eq!(err.reply().unwrap().id, None);
        let err = decode(br#"7"#, &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a message must be a json object, found a number"
        );
        let err = decode(
            br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
            &limits,
        )
        .unwrap_err();
        assert_eq!(err.reply(), None);
    }

    #[test]
    fn h76_a_bad_answer_keeps_its_id_but_gets_no_reply() {
        let limits = Limits::default();
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"host-7","result":{}{}}}"#,
            "[".repeat(limits.max_depth),
            "]".repeat(limits.max_depth)
        );
        let both = br#"{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"x"}}"#;
        for bytes in [deep.as_bytes(), &both[..]] {
            let err = decode(bytes, &limits).unwrap_err();
            assert!(err.id().is_some(), "{err}");
            assert!(err.reply().is_none(), "a response is never answered: {err}");
        }
        // Neither a request nor a response: its id is never echoed in a reply.
        let err = decode(br#"{"jsonrpc":"2.0","id":3}"#, &limits).unwrap_err();
        assert_eq!(err.reply().unwrap().id, None);
    }

    #[test]
    fn encode_round_trips() {
        let msg = Message::from(Request::new("r", "tools/list", Some(serde_json::json!({}))));
        assert_eq!(decode(&encode(&msg), &Limits::default()).unwrap(), msg);
    }
}
