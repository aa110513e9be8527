//! Newline-delimited JSON over a byte stream (MCP stdio): one message per line.
//!
//! The peer's own task moves the lines (a [`Wire`]): no reader or writer task sits between
//! the pipe and the peer, so a frame read is handled on the task that read it, and a call
//! through a chain of stdio hops (a surface host, say) costs no task switch per hop for it.

use super::backlog::Backlog;
use super::{Guard, Inbound, Io, Outbound, Transport, TransportKind, Wire};
use bytes::Bytes;
use mcpl_protocol::frame::{self, FrameError, Limits};
use mcpl_protocol::sniff::SNIFF_BYTES;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

impl Transport {
    /// Newline-delimited JSON over any reader and writer. A line over the size cap is skipped
    /// to the next newline and reported; the connection goes on.
    pub fn stdio_with<R, W>(reader: R, writer: W, limits: Limits) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        line_transport(TransportKind::Stdio, reader, writer, limits)
    }
}

/// A line transport whose frames the peer's task moves.
pub(super) fn line_transport<R, W>(
    kind: TransportKind,
    reader: R,
    writer: W,
    limits: Limits,
) -> Transport
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let wire = LinesWire {
        reader,
        writer,
        read_buf: Vec::new(),
        read_pos: 0,
        read_end: 0,
        framer: LineFramer::new(limits),
        reading: true,
        at_eof: false,
        writing: Writing::default(),
        backlog: Backlog::new(super::OUTBOUND_CAPACITY),
        end: None,
    };
    Transport {
        kind,
        limits,
        io: Io::Inline(std::sync::Arc::new(std::sync::Mutex::new(Box::new(wire)))),
        guard: Guard::default(),
        stderr: None,
    }
}

/// The most one read takes off the pipe (and the read buffer's size while reading).
const READ_CHUNK: usize = 8 * 1024;

/// Splits a byte stream into lines. A line longer than the cap is not buffered: it is
/// skipped to the next newline and reported with its length and first bytes, so one bad
/// line costs one error and the connection goes on.
#[derive(Debug)]
struct LineFramer {
    limits: Limits,
    /// The line read so far.
    line: Vec<u8>,
    /// While skipping an oversized line: how many bytes it has had so far.
    skipped: Option<usize>,
    /// The first bytes of the line being skipped, for the id of the error reply.
    prefix: Vec<u8>,
}

impl LineFramer {
    fn new(limits: Limits) -> LineFramer {
        LineFramer {
            limits,
            line: Vec::new(),
            skipped: None,
            prefix: Vec::new(),
        }
    }

    /// Takes bytes from the front of `buf` up to and including the first newline. Returns
    /// how many it took, and what a completed line gives the peer (nothing for a blank one
    /// or while the line goes on).
    fn feed(&mut self, buf: &[u8]) -> (usize, Option<Inbound>) {
        let newline = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        match self.skipped.as_mut() {
            Some(n) => *n += chunk.len(),
            None if self.line.len() + chunk.len() > self.limits.max_frame_bytes => {
                self.skipped = Some(self.line.len() + chunk.len());
                let mut prefix = std::mem::take(&mut self.line);
                prefix.extend_from_slice(&chunk[..chunk.len().min(SNIFF_BYTES)]);
                prefix.truncate(SNIFF_BYTES);
                self.prefix = prefix;
            }
            None => self.line.extend_from_slice(chunk),
        }
        let used = chunk.len() + usize::from(newline.is_some());
        if newline.is_none() {
            return (used, None);
        }
        (used, self.finish_line())
    }

    /// The line ended (a newline, or the end of the stream after some bytes).
    fn finish_line(&mut self) -> Option<Inbound> {
        if let Some(len) = self.skipped.take() {
            let prefix = std::mem::take(&mut self.prefix);
            return Some(Inbound::Refused {
                error: FrameError::too_large(len, self.limits.max_frame_bytes, &prefix),
                answered: false,
            });
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        if is_blank(&self.line) {
            self.line.clear();
            return None;
        }
        Some(Inbound::Frame(Bytes::from(std::mem::take(&mut self.line))))
    }

    /// At the end of the stream: a last line without its newline still counts (unless it
    /// was being skipped).
    fn finish_stream(&mut self) -> Option<Inbound> {
        if self.skipped.is_some() {
            return None;
        }
        self.finish_line()
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Where the writing side stands.
#[derive(Debug, Default)]
enum Writing {
    /// Nothing is being written.
    #[default]
    Idle,
    /// A message's bytes (its newline included), written up to the offset.
    Line(Vec<u8>, usize),
    /// Every waiting message was written; the writer is being flushed, so the other side
    /// sees them at once.
    Flushing,
    /// A write failed, or the side was shut down: nothing more is written.
    Done,
}

/// Lines over a reader and a writer, moved by the peer's task (see [`Wire`]). Reading goes on
/// while a message is being written, so two peers writing long lines to each other never wait
/// on each other. Messages are written in order, one line each; a burst is flushed once, after
/// its last message.
struct LinesWire<R, W> {
    reader: R,
    writer: W,
    /// Room for one read (allocated at the first read, then kept).
    read_buf: Vec<u8>,
    /// How far into `read_buf` the framer has taken.
    read_pos: usize,
    /// How far into `read_buf` the last read filled.
    read_end: usize,
    framer: LineFramer,
    reading: bool,
    /// The reader reported the end; what it had is framed, and the close comes next.
    at_eof: bool,
    writing: Writing,
    /// Messages waiting while another is being written.
    backlog: Backlog,
    /// The end of the read side, found by a failed write, not reported yet.
    end: Option<Option<String>>,
}

impl<R, W> std::fmt::Debug for LinesWire<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinesWire")
            .field("waiting", &self.backlog.len())
            .field("writing", &self.writing)
            .field("reading", &self.reading)
            .finish_non_exhaustive()
    }
}

impl<R, W> LinesWire<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    /// Starts writing `out` as one line. Compact JSON escapes newlines inside strings, so a
    /// message is always one line.
    fn start(&mut self, out: &Outbound) {
        let mut bytes = frame::encode(&out.message);
        bytes.push(b'\n');
        self.writing = Writing::Line(bytes, 0);
    }

    /// Writes what waits, until the writer is full or nothing waits.
    fn poll_writes(&mut self, cx: &mut Context<'_>) {
        loop {
            match &mut self.writing {
                Writing::Done => {
                    self.backlog.clear();
                    return;
                }
                Writing::Line(bytes, written) => {
                    while *written < bytes.len() {
                        match Pin::new(&mut self.writer).poll_write(cx, &bytes[*written..]) {
                            Poll::Pending => return,
                            Poll::Ready(Ok(0)) => {
                                return self.write_failed("the pipe took no bytes".into());
                            }
                            Poll::Ready(Ok(n)) => *written += n,
                            Poll::Ready(Err(e)) => return self.write_failed(e.to_string()),
                        }
                    }
                    match self.backlog.pop_front() {
                        Some(next) => self.start(&next),
                        None => self.writing = Writing::Flushing,
                    }
                }
                Writing::Flushing => match Pin::new(&mut self.writer).poll_flush(cx) {
                    Poll::Pending => return,
                    Poll::Ready(Err(e)) => return self.write_failed(e.to_string()),
                    Poll::Ready(Ok(())) => self.writing = Writing::Idle,
                },
                Writing::Idle => match self.backlog.pop_front() {
                    Some(next) => self.start(&next),
                    None => {
                        // A burst's room is given back: an idle connection keeps none.
                        self.backlog.clear();
                        return;
                    }
                },
            }
        }
    }

    /// A write failed: nothing more is written, and the read side ends too, with the reason
    /// (the connection is gone for this side's purposes).
    fn write_failed(&mut self, error: String) {
        self.writing = Writing::Done;
        self.backlog.clear();
        if self.reading {
            self.reading = false;
            self.end = Some(Some(format!("write failed: {error}")));
        }
    }

    /// The next frame read, framing what is buffered before reading more.
    fn poll_read_frame(&mut self, cx: &mut Context<'_>) -> Poll<Inbound> {
        loop {
            while self.read_pos < self.read_end {
                let (used, inbound) = self
                    .framer
                    .feed(&self.read_buf[self.read_pos..self.read_end]);
                self.read_pos += used;
                if let Some(inbound) = inbound {
                    return Poll::Ready(inbound);
                }
            }
            if self.at_eof {
                self.reading = false;
                return Poll::Ready(Inbound::Closed { reason: None });
            }
            // Everything buffered is framed: read the next chunk into the same room.
            if self.read_buf.is_empty() {
                self.read_buf = vec![0; READ_CHUNK];
            }
            let mut buf = ReadBuf::new(&mut self.read_buf);
            let read = Pin::new(&mut self.reader).poll_read(cx, &mut buf);
            let filled = buf.filled().len();
            (self.read_pos, self.read_end) = (0, filled);
            match read {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    self.reading = false;
                    self.read_buf = Vec::new();
                    return Poll::Ready(Inbound::Closed {
                        reason: Some(format!("read failed: {e}")),
                    });
                }
                Poll::Ready(Ok(())) if filled == 0 => {
                    self.at_eof = true;
                    self.read_buf = Vec::new();
                    if let Some(last) = self.framer.finish_stream() {
                        return Poll::Ready(last);
                    }
                }
                Poll::Ready(Ok(())) => {}
            }
        }
    }
}

impl<R, W> Wire for LinesWire<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    fn poll_io(&mut self, cx: &mut Context<'_>) -> Poll<Inbound> {
        self.poll_writes(cx);
        if let Some(reason) = self.end.take() {
            return Poll::Ready(Inbound::Closed { reason });
        }
        if !self.reading {
            return Poll::Pending;
        }
        self.poll_read_frame(cx)
    }

    fn write(&mut self, out: Outbound) {
        if matches!(self.writing, Writing::Done) || self.backlog.overflowed() {
            // After a failed write the rest is dropped: the wire is gone.
            return;
        }
        if matches!(self.writing, Writing::Idle) && self.backlog.is_empty() {
            return self.start(&out);
        }
        self.backlog.push(out);
    }

    fn overflowed(&self) -> bool {
        self.backlog.overflowed()
    }

    /// A line written from the handle's task reaches the pipe without waking the peer's.
    fn writes_through(&self) -> bool {
        true
    }

    fn flush_now(&mut self) -> bool {
        self.poll_writes(&mut Context::from_waker(std::task::Waker::noop()));
        matches!(self.writing, Writing::Idle)
            && self.backlog.is_empty()
            && self.end.is_none()
            && !self.backlog.overflowed()
    }

    fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.backlog.overflowed() {
            // The other side does not read: what is queued would never be written.
            return Poll::Ready(());
        }
        self.poll_writes(cx);
        match self.writing {
            Writing::Done => Poll::Ready(()),
            Writing::Idle if self.backlog.is_empty() => {
                match Pin::new(&mut self.writer).poll_shutdown(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(_) => {
                        self.writing = Writing::Done;
                        Poll::Ready(())
                    }
                }
            }
            _ => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(limits: Limits, input: &[u8]) -> Vec<String> {
        let mut framer = LineFramer::new(limits);
        let mut out = Vec::new();
        let mut at = 0;
        while at < input.len() {
            let (used, inbound) = framer.feed(&input[at..]);
            at += used;
            out.extend(inbound.map(describe));
        }
        out.extend(framer.finish_stream().map(describe));
        out
    }

    fn describe(inbound: Inbound) -> String {
        match inbound {
            Inbound::Frame(b) => String::from_utf8_lossy(&b).into_owned(),
            Inbound::Refused { error, .. } => format!("refused: {error}"),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn lines_are_split_at_newlines_with_crlf_and_blank_lines_taken_out() {
        let got = frames(
            Limits::default(),
            b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}",
        );
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[test]
    fn a_line_over_the_cap_is_refused_once_and_the_next_line_is_read() {
        let limits = Limits {
            max_frame_bytes: 8,
            ..Limits::default()
        };
        let got = frames(limits, b"{\"id\":7,\"x\":\"long\"}\n{}\n");
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("refused"), "{got:?}");
        assert_eq!(got[1], "{}");
    }

    #[test]
    fn a_skipped_line_that_ends_the_stream_gives_nothing_more() {
        let limits = Limits {
            max_frame_bytes: 4,
            ..Limits::default()
        };
        assert!(frames(limits, b"0123456789").is_empty());
    }
}
