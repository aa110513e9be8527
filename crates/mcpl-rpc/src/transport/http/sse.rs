//! Server-sent events (sans-IO): a message written as one event, and a parser (bytes in, the
//! `data` of each event out).
//!
//! The parser reads only what MCP uses: `data:` lines joined by newlines, dispatched at a blank line; an `id`
//! field becomes the stream's last event id (for resuming with `Last-Event-ID`) when its event
//! is dispatched; `event` and `retry` fields and `:` comments are skipped. An event over the cap is dropped
//! whole and reported by size and its first bytes (where its id is), so one bad event does not
//! end the stream and the request it answers can fail at once.

use bytes::Bytes;
use mcpl_protocol::jsonrpc::Message;
use mcpl_protocol::sniff::SNIFF_BYTES;

/// One message as one SSE event, with its id when it has one.
pub(super) fn sse_event(id: Option<u64>, message: &Message) -> Bytes {
    match id {
        Some(id) => Bytes::from(format!(
            "id: {id}\nevent: message\ndata: {}\n\n",
            message.to_json()
        )),
        None => Bytes::from(format!("event: message\ndata: {}\n\n", message.to_json())),
    }
}

/// One parsed event.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SseItem {
    /// The event's data: one JSON-RPC message.
    Data(Bytes),
    /// An event whose data passed the cap: `len` bytes were dropped; `head` is the first
    /// [`SNIFF_BYTES`] of its data, for reading its id.
    TooLarge { len: usize, head: Vec<u8> },
}

#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// Set while dropping an oversized event: bytes dropped so far.
    dropped: Option<usize>,
    /// The first bytes of the data of the event being dropped.
    head: Vec<u8>,
    max: usize,
    /// The `id` of the event being read.
    id: Option<String>,
    /// The id of the last event dispatched that had one.
    last_id: Option<String>,
}

impl SseParser {
    /// A parser that refuses events with more than `max` bytes of data.
    pub fn new(max: usize) -> Self {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            dropped: None,
            head: Vec::new(),
            max,
            id: None,
            last_id: None,
        }
    }

    /// The id of the last dispatched event that had one: what `Last-Event-ID` resumes from.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds a chunk of the stream; returns the events it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (part, rest) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..]),
                None => (chunk, &[][..]),
            };
            chunk = rest;
            match self.dropped.as_mut() {
                Some(n) => *n += part.len(),
                None if self.line.len() + part.len() > self.max + 16 => {
                    let len = self.data.len() + self.line.len() + part.len();
                    let mut line = std::mem::take(&mut self.line);
                    line.extend_from_slice(&part[..part.len().min(SNIFF_BYTES + 8)]);
                    self.start_dropping(len, &line);
                }
                None => self.line.extend_from_slice(part),
            }
            if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                if let Some(item) = self.handle_line(&line) {
                    items.push(item);
                }
            }
        }
        items
    }

    fn handle_line(&mut self, line: &[u8]) -> Option<SseItem> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            let has_data = std::mem::take(&mut self.has_data);
            if let Some(id) = self.id.take() {
                self.last_id = Some(id);
            }
            if let Some(len) = self.dropped.take() {
                self.data.clear();
                let head = std::mem::take(&mut self.head);
                return Some(SseItem::TooLarge { len, head });
            }
            let data = std::mem::take(&mut self.data);
            return has_data.then(|| SseItem::Data(Bytes::from(data)));
        }
        if self.dropped.is_some() {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None, // a comment
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        if field == b"id" && !value.contains(&0) && value.len() <= 128 {
            self.id = Some(String::from_utf8_lossy(value).into_owned());
        }
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
            if self.data.len() > self.max {
                self.start_dropping(self.data.len(), &[]);
            }
        }
        None
    }

    /// Starts dropping the current event, `len` bytes so far, keeping the first bytes of its
    /// data: what it had, then the value of `line` when that is a `data` line.
    fn start_dropping(&mut self, len: usize, line: &[u8]) {
        let mut head = self.data[..self.data.len().min(SNIFF_BYTES)].to_vec();
        let value = line
            .strip_prefix(b"data:")
            .map(|v| v.strip_prefix(b" ").unwrap_or(v));
        if let Some(value) = value.filter(|_| head.len() < SNIFF_BYTES) {
            if self.has_data {
                head.push(b'\n');
            }
            head.extend_from_slice(value);
            head.truncate(SNIFF_BYTES);
        }
        self.head = head;
        self.dropped = Some(len);
        self.data.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_are_joined() {
        let mut p = SseParser::new(1024);
        assert!(p.push(b"event: message\nda").is_empty());
        assert!(p.push(b"ta: {\"a\":1}\r\n").is_empty());
        let items = p.push(b"\n: keepalive\n\ndata: x\ndata: y\n\n");
        assert_eq!(
            items,
            [
                SseItem::Data(Bytes::from_static(b"{\"a\":1}")),
                SseItem::Data(Bytes::from_static(b"x\ny")),
            ]
        );
    }

    #[test]
    fn event_ids_become_the_last_id_when_their_event_is_dispatched() {
        let mut p = SseParser::new(1024);
        assert_eq!(p.last_id(), None);
        p.push(b"id: 7\ndata: x\n");
        assert_eq!(p.last_id(), None, "not dispatched yet");
        p.push(b"\n");
        assert_eq!(p.last_id(), Some("7"));
        p.push(b"data: y\n\n");
        assert_eq!(
            p.last_id(),
            Some("7"),
            "an event without id keeps the last one"
        );
    }

    #[test]
    fn an_oversized_event_is_dropped_and_the_stream_goes_on() {
        let mut p = SseParser::new(8);
        let mut items = p.push(b"data: 0123456789abcdef\n\n");
        items.extend(p.push(b"data: ok\n\n"));
        assert_eq!(
            items,
            [
                SseItem::TooLarge {
                    len: 16,
                    head: b"0123456789abcdef".to_vec()
                },
                SseItem::Data(Bytes::from_static(b"ok"))
            ]
        );
    }

    #[test]
    fn an_oversized_line_without_newline_is_not_buffered() {
        let mut p = SseParser::new(8);
        assert!(p.push(&[b'd'; 100]).is_empty());
        assert!(p.line.is_empty());
        let items = p.push(b"\n\ndata: ok\n\n");
        assert_eq!(
            items,
            [
                SseItem::TooLarge {
                    len: 100,
                    head: Vec::new()
                },
                SseItem::Data(Bytes::from_static(b"ok"))
            ]
        );
    }

    #[test]
    fn an_oversized_event_keeps_its_first_bytes_for_its_id() {
        let xs = "x".repeat(200);
        let cases = [
            // One long data line, read in small chunks and in one.
            format!(r#"data: {{"jsonrpc":"2.0","id":7,"result":"{xs}"}}"#),
            // Short data lines whose sum passes the cap.
            format!(
                "data: {{\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\ndata: \"result\":\"{}\"}}",
                &xs[..30]
            ),
            // A short data line, then a long one.
            format!("data: {{\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\"result\":\"{xs}\"}}"),
        ];
        for event in cases {
            for chunk_len in [7, 1000] {
                let mut p = SseParser::new(48);
                let mut items = Vec::new();
                for chunk in format!("{event}\n\n").as_bytes().chunks(chunk_len) {
                    items.extend(p.push(chunk));
                }
                let [SseItem::TooLarge { head, .. }] = &items[..] else {
                    panic!("{event}: {items:?}")
                };
                let sniffed = mcpl_protocol::sniff::sniff(head);
                assert_eq!(
                    sniffed.id,
                    Some(mcpl_protocol::jsonrpc::RequestId::Number(7)),
                    "{event}: {}",
                    String::from_utf8_lossy(head)
                );
                assert!(sniffed.is_response());
            }
        }
    }
}
