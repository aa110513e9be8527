//! Reading a frame's id from its first bytes, for frames too large to decode: the error reply
//! then carries the id, so the sender's request fails at once instead of waiting for its
//! timeout (and an oversized answer fails the request it answers, H76).
//!
//! A small scan of the top-level object's keys, skipping values it does not need; it stops
//! at the end of the prefix or at anything that is not JSON. Pure: bytes in, facts out.

use crate::jsonrpc::RequestId;

/// How many leading bytes of an oversized frame are kept for [`sniff`].
pub const SNIFF_BYTES: usize = 4096;

/// What the start of a frame says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sniffed {
    /// The top-level `id`, when it was read whole (an integer fitting `i64`, or a string).
    pub id: Option<RequestId>,
    /// Whether a top-level `method` key was seen.
    pub method: bool,
    /// Whether a top-level `result` or `error` key was seen.
    pub outcome: bool,
}

impl Sniffed {
    /// Whether the frame looks like a response (never answered).
    pub fn is_response(&self) -> bool {
        self.outcome && !self.method
    }

    /// The id an error reply may carry: a request's, once its `method` was seen.
    pub fn request_id(&self) -> Option<RequestId> {
        self.method.then(|| self.id.clone()).flatten()
    }
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn skip_ws(&mut self) {
        while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        self.skip_ws();
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// A string starting at `"`; its raw contents (escapes kept) and whether it had any.
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        self.eat(b'"')?;
        let start = self.at;
        let mut escaped = false;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.at += 2;
                }
                _ => self.at += 1,
            }
        }
        let bytes: &'a [u8] = self.bytes;
        let raw = &bytes[start..self.at];
        self.at += 1;
        Some((raw, escaped))
    }

    /// Skips one value; `None` when the prefix ends inside it.
    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                let start = self.at;
                while !matches!(self.peek()?, b',' | b'}' | b']')
                    && !self.peek()?.is_ascii_whitespace()
                {
                    self.at += 1;
                }
                (self.at > start).then_some(())
            }
        }
    }

    /// An id value: an integer or a string without escapes, read whole.
    fn id(&mut self) -> Option<RequestId> {
        self.skip_ws();
        if self.peek()? == b'"' {
            let (raw, escaped) = self.string()?;
            return (!escaped)
                .then(|| {
                    std::str::from_utf8(raw)
                        .ok()
                        .map(|s| RequestId::String(s.to_owned()))
                })
                .flatten();
        }
        let start = self.at;
        while matches!(self.peek()?, b'-' | b'0'..=b'9') {
            self.at += 1;
        }
        // The number must end here (not go on past the prefix, nor be a fraction).
        let next = self.peek()?;
        if !(next == b',' || next == b'}' || next.is_ascii_whitespace()) {
            return None;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        text.parse().ok().map(RequestId::Number)
    }
}

/// Reads what it can of a frame's top-level keys from its first bytes.
pub fn sniff(prefix: &[u8]) -> Sniffed {
    let mut found = Sniffed::default();
    let mut scan = Scan {
        bytes: prefix,
        at: 0,
    };
    let _ = (|| -> Option<()> {
        scan.eat(b'{')?;
        loop {
            scan.skip_ws();
            let (key, _) = scan.string()?;
            scan.eat(b':')?;
            match key {
                b"id" => match scan.id() {
                    Some(id) => found.id = Some(id),
                    None => scan.skip_value()?,
                },
                b"method" => {
                    found.method = true;
                    scan.skip_value()?;
                }
                b"result" | b"error" => {
                    found.outcome = true;
                    scan.skip_value()?;
                }
                _ => scan.skip_value()?,
            }
            scan.eat(b',')?;
        }
    })();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_request_is_read_from_its_start() {
        let frame = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"xxxxxxxx"#;
        let s = sniff(frame);
        assert_eq!(s.request_id(), Some(RequestId::Number(42)));
        assert!(!s.is_response());
        let frame = br#" { "method" : "x", "params": {"a": [1, {"b": "}"}]}, "id": "r-1", "#;
        assert_eq!(
            sniff(frame).request_id(),
            Some(RequestId::String("r-1".into()))
        );
    }

    #[test]
    fn an_id_cut_by_the_prefix_or_a_strange_one_is_not_guessed() {
        assert_eq!(sniff(br#"{"method":"m","id":12"#).request_id(), None);
        assert_eq!(sniff(br#"{"method":"m","id":"ab"#).request_id(), None);
        assert_eq!(sniff(br#"{"method":"m","id":"a\"b","#).request_id(), None);
        assert_eq!(sniff(br#"{"method":"m","id":1.5,"#).request_id(), None);
        assert_eq!(sniff(b"not json").request_id(), None);
        assert_eq!(sniff(b"").request_id(), None);
    }

    #[test]
    fn a_request_id_needs_its_method_and_responses_are_told_apart() {
        let s = sniff(br#"{"jsonrpc":"2.0","id":7,"params":{"#);
        assert_eq!(s.id, Some(RequestId::Number(7)));
        assert_eq!(s.request_id(), None, "no method seen yet");
        let s = sniff(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"aaaa"#);
        assert!(s.is_response());
        assert_eq!(s.id, Some(RequestId::Number(7)));
    }
}
