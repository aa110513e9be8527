//! Transports: how frames get on and off a wire.
//!
//! Every transport is the same small thing, a [`Transport`]: a channel of [`Inbound`] frames in
//! the order its reader took them off the wire, a channel of [`Outbound`] messages to write,
//! and the tasks (or child process) behind them. The [`crate::Peer`] never knows which wire it
//! runs on, except through [`TransportKind`], which tells a host whether the wire keeps order
//! (RFC-014 §6.1: stdio and WebSocket do; Streamable HTTP does not).
//!
//! A custom transport is built with [`Transport::from_channels`]: push frames into
//! [`TransportEnds::inbound`] and write what comes out of [`TransportEnds::outbound`].

pub mod child;
pub mod http;
mod lines;
pub mod ws;

use bytes::Bytes;
use mcpl_protocol::frame::{FrameError, Limits};
use mcpl_protocol::jsonrpc::{Message, RequestId};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Which wire a transport runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// Newline-delimited JSON over a byte stream (MCP stdio), including in-memory pipes.
    Stdio,
    /// Newline-delimited JSON over a child process's stdin and stdout.
    ChildProcess,
    /// One message per WebSocket text frame.
    WebSocket,
    /// MCP Streamable HTTP: POSTs, their SSE streams and the GET stream.
    StreamableHttp,
}

impl TransportKind {
    /// Whether messages arrive in the order the other peer wrote them. Streamable HTTP orders
    /// only within one SSE stream, so RFC-014 §6.1 lets a host hold an early rev there, while
    /// on an ordered wire a gap means recovery at once (H16).
    pub fn is_ordered(self) -> bool {
        !matches!(self, TransportKind::StreamableHttp)
    }
}

/// What a transport's reader hands the peer, in read order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound {
    /// The bytes of one frame, not yet decoded.
    Frame(Bytes),
    /// A frame the transport decoded already (Streamable HTTP routes by message kind).
    Message(Message),
    /// A frame the transport refused itself (over the size cap, or a bad HTTP body).
    /// `answered` is true when the transport already sent the error reply.
    Refused {
        /// Why.
        error: FrameError,
        /// Whether the error reply was sent already.
        answered: bool,
    },
    /// The wire closed; nothing more will be read.
    Closed {
        /// Why, if it was not an orderly end.
        reason: Option<String>,
    },
}

/// A message for the transport's writer.
#[derive(Debug, Clone)]
pub struct Outbound {
    /// The message to write.
    pub message: Message,
    /// The incoming request this message belongs to, if any. Streamable HTTP sends it on
    /// that request's SSE stream; other wires ignore it.
    pub related: Option<RequestId>,
}

/// The far ends of a transport's channels, for whoever moves bytes (see
/// [`Transport::from_channels`]).
#[derive(Debug)]
pub struct TransportEnds {
    /// Where frames read off the wire go, in read order.
    pub inbound: mpsc::Sender<Inbound>,
    /// The messages to write, in order.
    pub outbound: mpsc::UnboundedReceiver<Outbound>,
}

/// A connection's wire: frames in, messages out. Hand it to [`crate::Peer::start`].
///
/// Dropping it stops its tasks and kills its child process, if any.
#[derive(Debug)]
pub struct Transport {
    pub(crate) kind: TransportKind,
    pub(crate) limits: Limits,
    pub(crate) inbound: mpsc::Receiver<Inbound>,
    pub(crate) outbound: mpsc::UnboundedSender<Outbound>,
    pub(crate) guard: Guard,
    pub(crate) stderr: Option<child::StderrLines>,
}

/// Tasks and processes that live as long as the transport.
#[derive(Debug, Default)]
pub(crate) struct Guard {
    /// The writer: awaited on shutdown so queued messages are written.
    pub writer: Option<JoinHandle<()>>,
    /// Readers and helpers: aborted on shutdown.
    pub tasks: Vec<JoinHandle<()>>,
    /// A child process: stdin closed by the writer, then waited for briefly, then killed.
    pub child: Option<tokio::process::Child>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        // `kill_on_drop` on the child does the rest.
    }
}

/// How long a child process gets to exit after its stdin closes before it is killed.
const CHILD_EXIT_GRACE: Duration = Duration::from_secs(2);

/// Capacity of the inbound channel: the reader waits when the peer falls this far behind.
const INBOUND_CAPACITY: usize = 64;

impl Transport {
    /// A transport whose frames are moved by the caller: the returned ends take frames read
    /// and give messages to write.
    pub fn from_channels(kind: TransportKind, limits: Limits) -> (Transport, TransportEnds) {
        let (in_tx, in_rx) = mpsc::channel(INBOUND_CAPACITY);
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let transport = Transport {
            kind,
            limits,
            inbound: in_rx,
            outbound: out_tx,
            guard: Guard::default(),
            stderr: None,
        };
        let ends = TransportEnds {
            inbound: in_tx,
            outbound: out_rx,
        };
        (transport, ends)
    }

    /// Newline-delimited JSON (MCP stdio) over any reader and writer, with default limits.
    pub fn stdio<R, W>(reader: R, writer: W) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Transport::stdio_with(reader, writer, Limits::default())
    }

    /// Newline-delimited JSON over any reader and writer. A line over the size cap is skipped
    /// to the next newline and reported; the connection goes on.
    pub fn stdio_with<R, W>(reader: R, writer: W, limits: Limits) -> Transport
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        lines::spawn(TransportKind::Stdio, reader, writer, limits)
    }

    /// This process's own stdin and stdout, as an MCP server launched by a host.
    pub fn process_stdio() -> Transport {
        Transport::stdio(tokio::io::stdin(), tokio::io::stdout())
    }

    /// Two connected stdio transports over an in-memory pipe, for tests and examples.
    pub fn memory_pair() -> (Transport, Transport) {
        let (a, b) = tokio::io::duplex(64 * 1024);
        let (a_read, a_write) = tokio::io::split(a);
        let (b_read, b_write) = tokio::io::split(b);
        (
            Transport::stdio(a_read, a_write),
            Transport::stdio(b_read, b_write),
        )
    }

    /// Which wire this is.
    pub fn kind(&self) -> TransportKind {
        self.kind
    }

    /// The limits frames are decoded under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Stops the transport: queued messages are written, the writer closes its side, then
    /// readers stop and a child process gets a short grace period before it is killed.
    pub(crate) async fn shutdown(self) {
        let Transport {
            outbound,
            mut guard,
            inbound,
            ..
        } = self;
        drop(outbound);
        if let Some(writer) = guard.writer.take() {
            let _ = writer.await;
        }
        drop(inbound);
        if let Some(mut child) = guard.child.take() {
            match tokio::time::timeout(CHILD_EXIT_GRACE, child.wait()).await {
                Ok(_) => {}
                Err(_) => {
                    let _ = child.kill().await;
                }
            }
        }
    }
}
