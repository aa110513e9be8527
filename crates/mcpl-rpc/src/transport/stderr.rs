//! A child process's stderr: what becomes of it ([`StderrMode`]) and, when captured, the lines
//! (a leaf: the transport holds them, `child` fills them).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// What happens to the child's stderr (MCP: logging, never an error signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Passed through to this process's stderr.
    #[default]
    Inherit,
    /// Captured line by line; read it with
    /// [`Transport::take_stderr`](super::Transport::take_stderr).
    Capture,
    /// Discarded.
    Discard,
}

/// How many captured stderr lines wait for their reader at most. Past that, new lines are
/// dropped (and counted, with a warning) so a chatty child cannot grow this process's memory;
/// the child's stderr is still read, so the child never blocks on it.
pub const STDERR_BACKLOG: usize = 256;

/// The longest captured stderr line, in bytes. A longer line keeps its first bytes and ends
/// with `… [cut N bytes]`; the rest is read and discarded as it comes, never held, so a child
/// that writes megabytes without a newline cannot grow this process's memory.
pub const STDERR_LINE_MAX: usize = 8 * 1024;

/// The captured stderr of a child process, one line at a time. At most [`STDERR_BACKLOG`]
/// lines wait to be read, each at most [`STDERR_LINE_MAX`] bytes (plus the cut mark); lines
/// that come while the backlog is full are dropped and counted.
#[derive(Debug)]
pub struct StderrLines {
    pub(super) rx: mpsc::Receiver<String>,
    pub(super) dropped: Arc<AtomicU64>,
}

impl StderrLines {
    /// The next line, or `None` once the child closed its stderr.
    pub async fn next_line(&mut self) -> Option<String> {
        self.rx.recv().await
    }

    /// How many lines were dropped so far because [`STDERR_BACKLOG`] lines were waiting.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Splits a byte stream into lines of at most `max` bytes, chunk by chunk (sans-IO: the pump
/// feeds it what it reads). A line's bytes past `max` are counted, not kept.
#[derive(Debug)]
pub(super) struct LineSplitter {
    max: usize,
    /// The current line's first bytes (at most `max`).
    head: Vec<u8>,
    /// How many bytes of the current line were past `max`.
    cut: u64,
    /// Whether the current line has any byte yet (an empty line is still a line).
    started: bool,
}

impl LineSplitter {
    /// A splitter keeping at most `max` bytes of a line.
    pub(super) fn new(max: usize) -> Self {
        LineSplitter {
            max,
            head: Vec::new(),
            cut: 0,
            started: false,
        }
    }

    /// Takes the next `chunk` of the stream; returns the lines it completes, without their
    /// `\n` (nor a `\r` before it).
    pub(super) fn push(&mut self, mut chunk: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        while !chunk.is_empty() {
            let (part, rest, ended) = match chunk.iter().position(|&b| b == b'\n') {
                Some(at) => (&chunk[..at], &chunk[at + 1..], true),
                None => (chunk, &chunk[chunk.len()..], false),
            };
            self.started = true;
            let room = self.max.saturating_sub(self.head.len()).min(part.len());
            self.head.extend_from_slice(&part[..room]);
            self.cut += (part.len() - room) as u64;
            if ended {
                lines.push(self.take());
            }
            chunk = rest;
        }
        lines
    }

    /// The stream ended: the last line, when it had bytes but no `\n`.
    pub(super) fn finish(&mut self) -> Option<String> {
        self.started.then(|| self.take())
    }

    /// The current line as text (invalid UTF-8 replaced), with the cut mark; starts the next.
    fn take(&mut self) -> String {
        let mut head = std::mem::take(&mut self.head);
        let mut cut = std::mem::take(&mut self.cut);
        self.started = false;
        if cut == 0 && head.last() == Some(&b'\r') {
            head.pop();
        }
        if cut > 0
            && let Err(e) = std::str::from_utf8(&head)
            && e.error_len().is_none()
        {
            // The cut fell inside a character: cut before it.
            cut += (head.len() - e.valid_up_to()) as u64;
            head.truncate(e.valid_up_to());
        }
        let mut line = String::from_utf8_lossy(&head).into_owned();
        if cut > 0 {
            line.push_str(&format!("… [cut {cut} bytes]"));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_keep_empty_lines_and_drop_crlf() {
        let mut s = LineSplitter::new(100);
        assert!(s.push(b"one").is_empty());
        assert_eq!(s.push(b" two\r\n\nthree\nfo"), ["one two", "", "three"]);
        assert_eq!(s.finish().as_deref(), Some("fo"));
        assert_eq!(s.finish(), None, "nothing after the last line");
    }

    #[test]
    fn a_long_line_keeps_its_head_and_counts_what_was_cut_across_chunks() {
        let mut s = LineSplitter::new(4);
        assert!(s.push(b"abcdef").is_empty());
        assert!(s.push(b"ghij").is_empty());
        assert_eq!(s.push(b"k\nnext\n"), ["abcd… [cut 7 bytes]", "next"]);
        assert!(s.push(b"xxxxxxxxxx").is_empty());
        assert_eq!(s.finish().as_deref(), Some("xxxx… [cut 6 bytes]"));
    }

    #[test]
    fn a_cut_inside_a_character_cuts_before_it() {
        let mut s = LineSplitter::new(4);
        // `é` is two bytes: the fourth and fifth.
        assert_eq!(s.push("abcé!\n".as_bytes()), ["abc… [cut 3 bytes]"]);
        assert_eq!(s.push(b"a\xffb\n"), ["a\u{fffd}b"]);
    }
}
