//! WebSocket frames (RFC 6455 §5) on the server side of a connection, after tungstenite has
//! done the opening handshake, with buffers sized on demand.
//!
//! tungstenite keeps a read buffer and a write buffer per connection for as long as it lives
//! (the write buffer as large as the largest frame ever written); with thousands of idle
//! connections that was most of a server's memory per connection. Here a connection at rest
//! holds a small read-ahead buffer ([`READ_AHEAD`]) and nothing else: a message's buffer is
//! allocated at its size when it arrives and handed on, and each outgoing frame is built,
//! written and dropped. A message over the frame cap is never buffered: its first bytes are
//! kept for the error reply's id and the rest is skipped, so the connection survives any size.
//!
//! Clients must wait for the server's handshake response before sending frames (RFC 6455
//! §4.1), so nothing is lost when the connection leaves tungstenite after the handshake.

use super::Inbound;
use bytes::Bytes;
use mcpl_protocol::frame::{FrameError, Limits};
use mcpl_protocol::sniff::SNIFF_BYTES;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// Bytes read ahead per connection: a frame header and a small message arrive in one read.
pub(super) const READ_AHEAD: usize = 512;

const CONTINUATION: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// Close status: normal closure.
const CLOSE_NORMAL: u16 = 1000;
/// Close status: protocol error.
const CLOSE_PROTOCOL: u16 = 1002;

/// A frame header as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub fin: bool,
    pub opcode: u8,
    pub len: u64,
    pub mask: Option<[u8; 4]>,
}

/// The write half of a connection, shared by its writer and its reader (which answers pings
/// and closes).
pub(super) type SharedWriter<W> = Arc<Mutex<Wire<W>>>;

/// The write half, and whether the closing frame went out (nothing may follow it, §5.5.1).
#[derive(Debug)]
pub(super) struct Wire<W> {
    io: W,
    closed: bool,
}

impl<W: AsyncWrite + Unpin> Wire<W> {
    /// A write half on which nothing was sent yet.
    pub(super) fn new(io: W) -> SharedWriter<W> {
        Arc::new(Mutex::new(Wire { io, closed: false }))
    }

    /// Writes `frame` (of `opcode`) and flushes, unless the closing frame went out already.
    async fn send(&mut self, opcode: u8, frame: &[u8]) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = opcode == CLOSE;
        self.io.write_all(frame).await?;
        self.io.flush().await
    }
}

/// An unmasked server frame: header and payload in one buffer.
pub(super) fn server_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 10);
    push_header(&mut out, opcode, payload.len());
    out.extend_from_slice(payload);
    out
}

/// A text frame of `json`, built in place: `json` was written after [`TEXT_HEADROOM`] zero
/// bytes, and the header goes into the end of that headroom. Returns the bytes to write.
pub(super) fn text_frame_in_place(buf: &mut [u8]) -> &[u8] {
    let len = buf.len() - TEXT_HEADROOM;
    let mut header = Vec::with_capacity(10);
    push_header(&mut header, TEXT, len);
    let start = TEXT_HEADROOM - header.len();
    buf[start..TEXT_HEADROOM].copy_from_slice(&header);
    &buf[start..]
}

/// Room left before a message's JSON for the longest frame header.
pub(super) const TEXT_HEADROOM: usize = 10;

fn push_header(out: &mut Vec<u8>, opcode: u8, len: usize) {
    out.push(0x80 | opcode);
    match len {
        0..=125 => out.push(len as u8),
        126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
}

/// Reads one frame header; `Ok(None)` when the stream ends cleanly before it.
pub(super) async fn read_header<R: AsyncRead + Unpin>(r: &mut R) -> io::Result<Option<Header>> {
    let mut two = [0u8; 2];
    match r.read(&mut two[..1]).await? {
        0 => return Ok(None),
        _ => r.read_exact(&mut two[1..]).await?,
    };
    let (b0, b1) = (two[0], two[1]);
    if b0 & 0x70 != 0 {
        return Err(protocol("reserved bits set (no extension was agreed)"));
    }
    let len = match b1 & 0x7F {
        126 => u64::from(r.read_u16().await?),
        127 => {
            let len = r.read_u64().await?;
            if len >> 63 != 0 {
                return Err(protocol("frame length with its high bit set"));
            }
            len
        }
        n => u64::from(n),
    };
    let mask = if b1 & 0x80 != 0 {
        let mut key = [0u8; 4];
        r.read_exact(&mut key).await?;
        Some(key)
    } else {
        None
    };
    Ok(Some(Header {
        fin: b0 & 0x80 != 0,
        opcode: b0 & 0x0F,
        len,
        mask,
    }))
}

/// XORs `data` with `mask`, `offset` bytes into the frame's payload.
pub(super) fn unmask(data: &mut [u8], mask: [u8; 4], offset: usize) {
    for (i, b) in data.iter_mut().enumerate() {
        *b ^= mask[(offset + i) & 3];
    }
}

fn protocol(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("websocket protocol error: {what}"),
    )
}

/// A message being read: assembled from its frames, or skipped past the cap.
enum Assembling {
    Idle,
    Reading(Vec<u8>),
    /// Over the cap: its length so far and its first bytes.
    Skipping {
        len: usize,
        prefix: Vec<u8>,
    },
}

/// Reads messages until the connection ends, handing each to `tx` in order; answers pings and
/// the closing handshake through `writer`.
pub(super) async fn read_messages<R, W>(
    reader: R,
    writer: SharedWriter<W>,
    limits: Limits,
    tx: super::InboundSender,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(READ_AHEAD, reader);
    let reason = match read_loop(&mut reader, &writer, limits, &tx).await {
        Ok(Flow::Closed) => None,
        Ok(Flow::PeerGone) => return,
        Err(e) => {
            if e.kind() == io::ErrorKind::InvalidData {
                let close = close_payload(CLOSE_PROTOCOL);
                let _ = write_frame(&writer, CLOSE, &close).await;
            }
            Some(format!("websocket read failed: {e}"))
        }
    };
    let _ = tx.send(Inbound::Closed { reason }).await;
}

enum Flow {
    /// The other side closed (a close frame, or the end of the stream).
    Closed,
    /// Nobody takes frames any more.
    PeerGone,
}

async fn read_loop<R, W>(
    reader: &mut R,
    writer: &SharedWriter<W>,
    limits: Limits,
    tx: &super::InboundSender,
) -> io::Result<Flow>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut message = Assembling::Idle;
    loop {
        let Some(header) = read_header(reader).await? else {
            return Ok(Flow::Closed);
        };
        let Some(mask) = header.mask else {
            return Err(protocol("an unmasked frame from the client"));
        };
        if header.opcode >= CLOSE {
            if !header.fin || header.len > 125 {
                return Err(protocol("a fragmented or long control frame"));
            }
            let mut payload = vec![0u8; header.len as usize];
            reader.read_exact(&mut payload).await?;
            unmask(&mut payload, mask, 0);
            match header.opcode {
                PING => write_frame(writer, PONG, &payload).await?,
                PONG => {}
                CLOSE => {
                    // Echo the status code, as the closing handshake asks (§5.5.1).
                    let reply = payload.get(..2).unwrap_or_default();
                    let _ = write_frame(writer, CLOSE, reply).await;
                    return Ok(Flow::Closed);
                }
                _ => return Err(protocol("an unknown control opcode")),
            }
            continue;
        }
        match (header.opcode, &message) {
            (TEXT | BINARY, Assembling::Idle) | (CONTINUATION, Assembling::Reading(_)) => {}
            (CONTINUATION, Assembling::Skipping { .. }) => {}
            (CONTINUATION, Assembling::Idle) => {
                return Err(protocol("a continuation frame with no message to continue"));
            }
            (TEXT | BINARY, _) => return Err(protocol("a new message inside a fragmented one")),
            _ => return Err(protocol("an unknown data opcode")),
        }
        let so_far = match &message {
            Assembling::Idle => 0,
            Assembling::Reading(buf) => buf.len(),
            Assembling::Skipping { len, .. } => *len,
        };
        let len = usize::try_from(header.len).unwrap_or(usize::MAX);
        let total = so_far.saturating_add(len);
        if total > limits.max_frame_bytes && !matches!(message, Assembling::Skipping { .. }) {
            let prefix = match std::mem::replace(&mut message, Assembling::Idle) {
                Assembling::Reading(buf) => buf,
                _ => Vec::new(),
            };
            message = Assembling::Skipping {
                len: so_far,
                prefix,
            };
        }
        message = match message {
            Assembling::Skipping {
                len: skipped,
                mut prefix,
            } => {
                let keep = SNIFF_BYTES.saturating_sub(prefix.len()).min(len);
                let start = prefix.len();
                prefix.resize(start + keep, 0);
                reader.read_exact(&mut prefix[start..]).await?;
                unmask(&mut prefix[start..], mask, 0);
                let rest = header.len - keep as u64;
                let copied =
                    tokio::io::copy(&mut (&mut *reader).take(rest), &mut tokio::io::sink()).await?;
                if copied < rest {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                Assembling::Skipping {
                    len: skipped.saturating_add(len),
                    prefix,
                }
            }
            Assembling::Reading(mut buf) => {
                read_payload(reader, &mut buf, len, mask).await?;
                Assembling::Reading(buf)
            }
            Assembling::Idle => {
                let mut buf = Vec::new();
                read_payload(reader, &mut buf, len, mask).await?;
                Assembling::Reading(buf)
            }
        };
        if !header.fin {
            continue;
        }
        let inbound = match std::mem::replace(&mut message, Assembling::Idle) {
            Assembling::Reading(buf) => Inbound::Frame(Bytes::from(buf)),
            Assembling::Skipping { len, prefix } => Inbound::Refused {
                error: FrameError::too_large(len, limits.max_frame_bytes, &prefix),
                answered: false,
            },
            Assembling::Idle => unreachable!("a frame was just read"),
        };
        if tx.send(inbound).await.is_err() {
            return Ok(Flow::PeerGone);
        }
    }
}

/// Appends `len` unmasked payload bytes to `buf`, growing it exactly.
async fn read_payload<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    len: usize,
    mask: [u8; 4],
) -> io::Result<()> {
    let start = buf.len();
    buf.reserve_exact(len);
    buf.resize(start + len, 0);
    reader.read_exact(&mut buf[start..]).await?;
    unmask(&mut buf[start..], mask, 0);
    Ok(())
}

fn close_payload(code: u16) -> [u8; 2] {
    code.to_be_bytes()
}

/// Writes one unmasked frame and flushes it.
pub(super) async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &SharedWriter<W>,
    opcode: u8,
    payload: &[u8],
) -> io::Result<()> {
    let frame = server_frame(opcode, payload);
    writer.lock().await.send(opcode, &frame).await
}

/// Writes each message as one text frame; when the peer closes, sends the closing frame and
/// shuts the write side. A write failure is reported as the connection closing.
pub(super) async fn write_messages<W: AsyncWrite + Unpin>(
    writer: SharedWriter<W>,
    mut rx: super::OutboundReceiver,
    tx: super::InboundSender,
) {
    while let Some(out) = rx.recv().await {
        let mut buf = vec![0u8; TEXT_HEADROOM];
        serde_json::to_writer(&mut buf, &out.message)
            .expect("a message has string keys and serializes");
        let frame = text_frame_in_place(&mut buf);
        if let Err(e) = writer.lock().await.send(TEXT, frame).await {
            let _ = tx
                .send(Inbound::Closed {
                    reason: Some(format!("websocket write failed: {e}")),
                })
                .await;
            return;
        }
    }
    let close = close_payload(CLOSE_NORMAL);
    let _ = write_frame(&writer, CLOSE, &close).await;
    let _ = writer.lock().await.io.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame, as a browser would send it.
    fn client_frame(fin: bool, opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        push_header(&mut out, opcode, payload.len());
        if !fin {
            out[0] &= 0x7F;
        }
        out[1] |= 0x80;
        out.extend_from_slice(&mask);
        let mut body = payload.to_vec();
        unmask(&mut body, mask, 0);
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn headers_use_the_shortest_length_form() {
        assert_eq!(server_frame(TEXT, b"hi"), [0x81, 2, b'h', b'i']);
        let mid = server_frame(TEXT, &[0; 200]);
        assert_eq!(&mid[..4], &[0x81, 126, 0, 200]);
        let big = server_frame(BINARY, &vec![0; 70_000]);
        assert_eq!(&big[..10], &[0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
        assert_eq!(big.len(), 70_010);
    }

    #[test]
    fn a_text_frame_is_built_in_the_headroom() {
        let mut buf = vec![0u8; TEXT_HEADROOM];
        buf.extend_from_slice(b"{}");
        assert_eq!(text_frame_in_place(&mut buf), [0x81, 2, b'{', b'}']);
    }

    #[tokio::test]
    async fn masked_frames_are_read_and_unmasked() {
        let frame = client_frame(true, TEXT, &[7; 300], [1, 2, 3, 4]);
        let mut r = &frame[..];
        let header = read_header(&mut r).await.unwrap().unwrap();
        assert_eq!(
            header,
            Header {
                fin: true,
                opcode: TEXT,
                len: 300,
                mask: Some([1, 2, 3, 4])
            }
        );
        let mut payload = r.to_vec();
        unmask(&mut payload, [1, 2, 3, 4], 0);
        assert_eq!(payload, [7; 300]);
        let mut empty: &[u8] = &[];
        assert!(read_header(&mut empty).await.unwrap().is_none());
    }

    /// Runs the reader over `bytes`; returns what it handed on and what it wrote back.
    async fn read_all(bytes: Vec<u8>, max: usize) -> (Vec<Inbound>, Vec<u8>) {
        let (tx, mut rx) = crate::transport::inbound_queue();
        let writer = Wire::new(Vec::<u8>::new());
        let limits = Limits {
            max_frame_bytes: max,
            ..Limits::default()
        };
        read_messages(&bytes[..], writer.clone(), limits, tx).await;
        let mut seen = Vec::new();
        while let Some(inbound) = rx.recv().await {
            seen.push(inbound);
        }
        let written = writer.lock().await.io.clone();
        (seen, written)
    }

    #[tokio::test]
    async fn fragments_are_joined_and_pings_answered_between_them() {
        let mut bytes = client_frame(false, TEXT, b"{\"a\":", [9, 8, 7, 6]);
        bytes.extend(client_frame(true, PING, b"p", [1, 1, 1, 1]));
        bytes.extend(client_frame(true, CONTINUATION, b"1}", [5, 5, 5, 5]));
        bytes.extend(client_frame(
            true,
            CLOSE,
            &1000u16.to_be_bytes(),
            [0, 0, 0, 0],
        ));
        let (seen, written) = read_all(bytes, 1024).await;
        assert!(
            matches!(&seen[0], Inbound::Frame(b) if &b[..] == b"{\"a\":1}"),
            "{seen:?}"
        );
        assert!(
            matches!(&seen[1], Inbound::Closed { reason: None }),
            "{seen:?}"
        );
        let mut expected = server_frame(PONG, b"p");
        expected.extend(server_frame(CLOSE, &1000u16.to_be_bytes()));
        assert_eq!(written, expected, "a pong, then the close echoed");
    }

    #[tokio::test]
    async fn an_oversized_message_is_skipped_with_its_prefix_and_the_next_one_read() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":\"{}\"}}",
            "y".repeat(5000)
        );
        let mut bytes = client_frame(false, TEXT, &big.as_bytes()[..3000], [3, 1, 4, 1]);
        bytes.extend(client_frame(
            true,
            CONTINUATION,
            &big.as_bytes()[3000..],
            [5, 9, 2, 6],
        ));
        bytes.extend(client_frame(true, TEXT, b"{}", [2, 7, 1, 8]));
        let (seen, _) = read_all(bytes, 1024).await;
        match &seen[0] {
            Inbound::Refused { error, answered } => {
                assert!(!answered);
                assert_eq!(
                    error.to_string(),
                    format!("frame of {} bytes exceeds the cap of 1024 bytes", big.len())
                );
                assert_eq!(error.id().map(ToString::to_string).as_deref(), Some("7"));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(
            matches!(&seen[1], Inbound::Frame(b) if &b[..] == b"{}"),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn nothing_is_written_after_the_closing_frame() {
        let writer = Wire::new(Vec::<u8>::new());
        write_frame(&writer, CLOSE, &[]).await.unwrap();
        write_frame(&writer, CLOSE, &[]).await.unwrap();
        write_frame(&writer, TEXT, b"late").await.unwrap();
        assert_eq!(writer.lock().await.io, server_frame(CLOSE, &[]));
    }

    #[tokio::test]
    async fn an_unmasked_client_frame_ends_the_connection_with_a_protocol_error() {
        let bytes = server_frame(TEXT, b"{}");
        let (seen, written) = read_all(bytes, 1024).await;
        assert!(
            matches!(&seen[0], Inbound::Closed { reason: Some(r) } if r.contains("unmasked")),
            "{seen:?}"
        );
        assert_eq!(written, server_frame(CLOSE, &1002u16.to_be_bytes()));
    }
}
