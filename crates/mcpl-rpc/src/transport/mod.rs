//! Transports: how frames get on and off a wire.
//!
//! Every transport is the same small thing, a [`Transport`]: a channel of [`Inbound`] frames in
//! the order its reader took them off the wire, a channel of [`Outbound`] messages to write,
//! and the tasks (or child process) behind them; except WebSocket and newline-delimited stdio,
//! whose frames the peer's own task moves (no task and no channel of their own: a server keeps
//! thousands of idle WebSockets, and a stdio message then costs no task switch on the way in).
//! A stdio wire also lets handles write straight onto it from their own tasks. The
//! [`crate::Peer`] never knows which wire it runs on, except through [`TransportKind`], which
//! tells a host whether the wire keeps order (RFC-014 §6.1: stdio and WebSocket do; Streamable
//! HTTP does not).
//!
//! A custom transport is built with [`Transport::from_channels`]: push frames into
//! [`TransportEnds::inbound`] and write what comes out of [`TransportEnds::outbound`].

mod backlog;
pub mod child;
pub mod http;
mod lines;
pub mod origin;
mod stderr;
pub mod tcp;
pub mod tls;
pub mod ws;

use bytes::Bytes;
use mcpl_protocol::frame::{FrameError, Limits};
use mcpl_protocol::jsonrpc::{Message, RequestId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
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
    pub inbound: InboundSender,
    /// The messages to write, in order. At most the transport's outbound capacity wait here;
    /// a peer that would queue more closes the connection (see [`OUTBOUND_CAPACITY`]).
    pub outbound: OutboundReceiver,
}

/// The sending end of a transport's inbound queue: frames read off the wire, in read order.
/// Bounded: a reader waits while the peer is 64 frames behind. Each entry
/// is boxed, so an idle connection's queue costs a few hundred bytes, not kilobytes.
#[derive(Debug, Clone)]
pub struct InboundSender(mpsc::Sender<Box<Inbound>>);

impl InboundSender {
    /// Queues `inbound`, waiting for room; gives it back when the peer is gone.
    pub async fn send(&self, inbound: Inbound) -> Result<(), Inbound> {
        self.0.send(Box::new(inbound)).await.map_err(|e| *e.0)
    }
}

/// The receiving end of a transport's inbound queue.
#[derive(Debug)]
pub(crate) struct InboundReceiver(mpsc::Receiver<Box<Inbound>>);

impl InboundReceiver {
    /// Polls for the next frame read; `Ready(None)` once every sender is gone.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| *b))
    }
}

/// A bounded inbound queue of [`INBOUND_CAPACITY`] frames.
pub(crate) fn inbound_queue() -> (InboundSender, InboundReceiver) {
    let (tx, rx) = mpsc::channel(INBOUND_CAPACITY);
    (InboundSender(tx), InboundReceiver(rx))
}

/// The receiving end of a transport's outbound queue, for whoever writes to the wire.
#[derive(Debug)]
pub struct OutboundReceiver(mpsc::Receiver<Box<Outbound>>);

impl OutboundReceiver {
    /// The next message to write, or `None` when the peer closed.
    pub async fn recv(&mut self) -> Option<Outbound> {
        self.0.recv().await.map(|b| *b)
    }
}

/// How a client transport ([`http::connect_with`], [`ws::connect_with`]) connects: headers
/// sent with every request or the handshake, frame limits, and whom it trusts for
/// `https://` and `wss://`.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// Headers for every request (`Authorization: Bearer TOKEN`, say).
    pub headers: Vec<(String, String)>,
    /// Limits on frames read.
    pub limits: Limits,
    /// Trust for TLS; `None`: the web roots only.
    pub tls: Option<tls::ClientTls>,
}

impl ClientOptions {
    /// No headers, default limits, the web roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds `Authorization: Bearer TOKEN`.
    pub fn bearer(self, token: &str) -> Self {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    /// Sets the frame limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Trusts the CA certificates in the PEM file `ca` besides the web roots (`--ca FILE`).
    pub fn ca_file(mut self, ca: &std::path::Path) -> Result<Self, crate::error::RpcError> {
        self.tls = Some(tls::ClientTls::with_ca_file(ca)?);
        Ok(self)
    }

    /// Sets whom TLS trusts.
    pub fn tls(mut self, tls: tls::ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The headers as `(name, value)` pairs of `&str`.
    fn header_pairs(&self) -> Vec<(&str, &str)> {
        self.headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }
}

/// How many messages may wait for a transport's writer by default. A connection whose other
/// side reads so slowly that more pile up is closed, with a log line saying so, instead of
/// growing without bound.
pub const OUTBOUND_CAPACITY: usize = 4096;

/// The sending end of a transport's bounded outbound queue.
#[derive(Debug, Clone)]
pub(crate) struct OutboundQueue {
    tx: mpsc::Sender<Box<Outbound>>,
    overflowed: Arc<AtomicBool>,
}

/// A bounded outbound queue of `capacity` messages.
pub(crate) fn outbound_queue(capacity: usize) -> (OutboundQueue, OutboundReceiver) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    let queue = OutboundQueue {
        tx,
        overflowed: Arc::new(AtomicBool::new(false)),
    };
    (queue, OutboundReceiver(rx))
}

impl OutboundQueue {
    /// Queues `out` for the writer. When the queue is full the other side is too slow: the
    /// queue is marked overflowed (the peer then closes the connection) and `out` is dropped.
    pub fn send(&self, out: Outbound) -> Result<(), Box<Outbound>> {
        match self.tx.try_send(Box::new(out)) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(out)) => {
                if !self.overflowed.swap(true, Ordering::SeqCst) {
                    tracing::warn!(
                        "closing the connection: the other side reads too slowly ({} messages \
                         queued for it)",
                        self.tx.max_capacity()
                    );
                }
                Err(out)
            }
            Err(mpsc::error::TrySendError::Closed(out)) => Err(out),
        }
    }

    /// Whether a message was refused because the queue was full.
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::SeqCst)
    }
}

/// A connection's wire: frames in, messages out. Hand it to [`crate::Peer::start`].
///
/// Dropping it stops its tasks and kills its child process, if any.
#[derive(Debug)]
pub struct Transport {
    pub(crate) kind: TransportKind,
    pub(crate) limits: Limits,
    pub(crate) io: Io,
    pub(crate) guard: Guard,
    pub(crate) stderr: Option<stderr::StderrLines>,
}

/// How frames get between the wire and the peer's task.
#[derive(Debug)]
pub(crate) enum Io {
    /// Tasks of the transport's own (or the caller of [`Transport::from_channels`]) move
    /// frames through two bounded queues.
    Queues {
        /// Frames read, in read order.
        inbound: InboundReceiver,
        /// Messages to write.
        outbound: OutboundQueue,
    },
    /// The peer's own task moves the frames: no task and no queue of the transport's own
    /// (WebSocket, whose servers keep many idle connections, and stdio lines). Shared with
    /// the handles when the wire [writes through](Wire::writes_through).
    Inline(SharedWire),
}

/// An inline wire, shared by the peer's task and (for a wire that writes through) the
/// handles. The lock is only ever held for one non-blocking step of the wire.
pub(crate) type SharedWire = Arc<Mutex<Box<dyn Wire>>>;

/// Locks an inline wire; a wire is never left half-changed by a panic in a step of its own.
pub(crate) fn lock_wire(wire: &Mutex<Box<dyn Wire>>) -> MutexGuard<'_, Box<dyn Wire>> {
    wire.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How a handle writes without a trip through the peer's task.
#[derive(Debug, Clone)]
pub(crate) enum DirectWriter {
    /// Into the queue of the transport's writer task.
    Queue(OutboundQueue),
    /// Straight onto an inline wire that writes through: what the pipe takes at once is
    /// written by the handle's own task.
    Wire(SharedWire),
}

/// What came of a [`DirectWriter::write`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Direct {
    /// Written, or queued for a writer that will write it.
    Done,
    /// Taken, but the peer's task must look: the wire has more to write than the pipe took
    /// at once, or overflowed.
    WakeTask,
    /// Dropped: the queue is full or its writer gone. The task must look, and handles must
    /// write through it from now on.
    Dropped,
}

impl DirectWriter {
    /// Writes `out` from the caller's task.
    pub(crate) fn write(&self, out: Outbound) -> Direct {
        match self {
            DirectWriter::Queue(queue) => match queue.send(out) {
                Ok(()) => Direct::Done,
                Err(_) => Direct::Dropped,
            },
            DirectWriter::Wire(wire) => {
                let mut wire = lock_wire(wire);
                wire.write(out);
                // Some writers need a runtime to write (the process's own stdout hands its
                // bytes to a blocking thread): from outside one, the task writes.
                if tokio::runtime::Handle::try_current().is_ok() && wire.flush_now() {
                    Direct::Done
                } else {
                    Direct::WakeTask
                }
            }
        }
    }
}

/// A wire whose frames the peer's task moves itself (see [`Io::Inline`]).
pub(crate) trait Wire: Send + std::fmt::Debug {
    /// Moves frames both ways: writes what is queued, and reads. Ready with each frame read,
    /// then once with [`Inbound::Closed`] when the read side ends; after that it only
    /// writes, and is never ready again.
    fn poll_io(&mut self, cx: &mut Context<'_>) -> Poll<Inbound>;

    /// Queues `out` to be written (by later calls of [`Wire::poll_io`]). When too many
    /// messages wait, the other side reads too slowly: `out` is dropped and the wire is
    /// [overflowed](Wire::overflowed).
    fn write(&mut self, out: Outbound);

    /// Whether a message was dropped because too many waited (the peer then closes).
    fn overflowed(&self) -> bool;

    /// Writes what is queued (unless overflowed) and closes the wire.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<()>;

    /// Whether handles may write straight onto this wire from their own tasks
    /// ([`DirectWriter::Wire`]), each write then taking what the pipe takes at once.
    fn writes_through(&self) -> bool {
        false
    }

    /// Writes what is queued as far as the pipe takes it now, with no task to wake later.
    /// True when nothing is left to write and nothing needs the peer's task (a failed write
    /// or an overflow does); false tells the caller to wake the task, which goes on with
    /// its own waker.
    fn flush_now(&mut self) -> bool {
        false
    }
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
        Transport::from_channels_with(kind, limits, OUTBOUND_CAPACITY)
    }

    /// [`Transport::from_channels`] with room for `outbound_capacity` messages waiting to be
    /// written; a peer that would queue more closes the connection.
    pub fn from_channels_with(
        kind: TransportKind,
        limits: Limits,
        outbound_capacity: usize,
    ) -> (Transport, TransportEnds) {
        let (in_tx, in_rx) = inbound_queue();
        let (out_tx, out_rx) = outbound_queue(outbound_capacity);
        let transport = Transport {
            kind,
            limits,
            io: Io::Queues {
                inbound: in_rx,
                outbound: out_tx,
            },
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

    /// Whether the other side read so slowly that the outbound queue overflowed (the peer
    /// then closes the connection).
    pub(crate) fn overflowed(&self) -> bool {
        match &self.io {
            Io::Queues { outbound, .. } => outbound.overflowed(),
            Io::Inline(wire) => lock_wire(wire).overflowed(),
        }
    }

    /// How handles write without a trip through the peer's task: the writer's queue, or an
    /// inline wire that writes through; `None` when that task writes itself.
    pub(crate) fn direct_writer(&self) -> Option<DirectWriter> {
        match &self.io {
            Io::Queues { outbound, .. } => Some(DirectWriter::Queue(outbound.clone())),
            Io::Inline(wire) if lock_wire(wire).writes_through() => {
                Some(DirectWriter::Wire(wire.clone()))
            }
            Io::Inline(_) => None,
        }
    }

    /// Queues `out` to be written. A write that cannot be queued is dropped: the writer is
    /// gone (its reader reports the close) or the queue overflowed (the peer then closes).
    pub(crate) fn write(&mut self, out: Outbound) {
        match &mut self.io {
            Io::Queues { outbound, .. } => {
                let _ = outbound.send(out);
            }
            Io::Inline(wire) => lock_wire(wire).write(out),
        }
    }

    /// Polls for the next frame read; `Ready(None)` or [`Inbound::Closed`] when the read side
    /// ended. An inline wire writes meanwhile.
    pub(crate) fn poll_inbound(&mut self, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        match &mut self.io {
            Io::Queues { inbound, .. } => inbound.poll_recv(cx),
            Io::Inline(wire) => lock_wire(wire).poll_io(cx).map(Some),
        }
    }

    /// After the read side ended: moves what an inline wire has to write. Never ready for a
    /// transport whose own task writes.
    pub(crate) fn poll_writes(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.io {
            Io::Queues { .. } => Poll::Pending,
            Io::Inline(wire) => lock_wire(wire).poll_io(cx).map(|_| ()),
        }
    }

    /// Stops the transport: queued messages are written, the writer closes its side, then
    /// readers stop and a child process gets a short grace period before it is killed.
    pub(crate) async fn shutdown(self) {
        let Transport { io, mut guard, .. } = self;
        match io {
            Io::Queues { inbound, outbound } => {
                let overflowed = outbound.overflowed();
                drop(outbound);
                if let Some(writer) = guard.writer.take() {
                    if overflowed {
                        // The other side does not read: what is queued would never be
                        // written.
                        writer.abort();
                    } else {
                        let _ = writer.await;
                    }
                }
                drop(inbound);
            }
            Io::Inline(wire) => {
                // Writes what is queued and closes the writing side (a child's stdin).
                std::future::poll_fn(|cx| lock_wire(&wire).poll_shutdown(cx)).await;
            }
        }
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
