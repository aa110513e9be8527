//! WebSocket: one JSON-RPC message per text frame, in order each way (DIGEST D2), over plain
//! TCP (`ws://`) or TLS (`wss://`, see [`super::tls`]).

use super::backlog::Backlog;
use super::{ClientOptions, Guard, Inbound, Io, Outbound, Transport, TransportKind, Wire};
use crate::error::RpcError;
use bytes::Bytes;
use futures_util::{Sink, Stream};
use mcpl_protocol::frame::{FrameError, Limits};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data as OpData, OpCode};
use tokio_tungstenite::tungstenite::{self, Message as WsMessage};

/// The HTTP request that opened a WebSocket, for a server that maps credentials to principals
/// (`Authorization: Bearer TOKEN`).
#[derive(Debug, Clone)]
pub struct Handshake {
    /// The request URI.
    pub uri: Uri,
    /// The request headers.
    pub headers: HeaderMap,
}

/// A refused WebSocket handshake: the HTTP status and a short body.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// The status, for example 401.
    pub status: StatusCode,
    /// The body text.
    pub message: String,
}

impl Handshake {
    /// Whether the handshake's `Origin` (if any) is one `allowed` permits; a server refuses
    /// the others with 403 (see [`Rejection::forbidden_origin`]).
    pub fn origin_permitted(&self, allowed: &super::origin::AllowedOrigins) -> bool {
        let origin = self
            .headers
            .get("origin")
            .map(|v| v.to_str().unwrap_or("?"));
        allowed.permits(origin)
    }

    /// Whether the handshake's `Host` is one `allowed` permits (against DNS rebinding); a
    /// server refuses the others with 403 (see [`Rejection::forbidden_host`]).
    pub fn host_permitted(&self, allowed: &super::origin::AllowedHosts) -> bool {
        let host = self.headers.get("host").map(|v| v.to_str().unwrap_or("?"));
        allowed.permits(host)
    }
}

impl Rejection {
    /// The 403 for a handshake from an origin that is not allowed; logged.
    pub fn forbidden_origin(handshake: &Handshake) -> Rejection {
        let origin = handshake
            .headers
            .get("origin")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let origin = mcpl_protocol::clip::clip(&origin).into_owned();
        tracing::warn!(%origin, "refused a websocket from a foreign origin");
        Rejection {
            status: StatusCode::FORBIDDEN,
            message: format!("origin `{origin}` is not allowed"),
        }
    }

    /// The 403 for a handshake whose `Host` is not allowed; logged.
    pub fn forbidden_host(handshake: &Handshake) -> Rejection {
        let host = handshake
            .headers
            .get("host")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let why = super::origin::host_refusal(host.as_deref());
        tracing::warn!("refused a websocket: {why}");
        Rejection {
            status: StatusCode::FORBIDDEN,
            message: why,
        }
    }
}

/// The WebSocket read buffer per connection, and the most one read takes off the socket.
/// tungstenite keeps it for the connection's life, so it is small: a frame larger than it is
/// read in several reads into a buffer reserved for that frame's length.
const READ_BUFFER: usize = 1024;

/// tungstenite's own cap: frames between our cap and this are read whole and refused with an
/// error (the connection survives); beyond it tungstenite ends the connection.
fn ws_config(limits: &Limits) -> WebSocketConfig {
    let hard = limits
        .max_frame_bytes
        .saturating_mul(4)
        .max(16 * 1024 * 1024);
    // Small buffers: tungstenite's defaults (128 KiB each way) made every idle connection
    // cost a quarter megabyte, and the allocator kept it after the connection closed.
    WebSocketConfig::default()
        .max_message_size(Some(hard))
        .max_frame_size(Some(hard))
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0)
        .max_write_buffer_size(limits.max_frame_bytes.saturating_mul(4).max(hard))
}

/// Opens a WebSocket to `url` (`ws://` or `wss://`), sending `headers` with the handshake.
pub async fn connect(
    url: &str,
    headers: &[(&str, &str)],
    limits: Limits,
) -> Result<Transport, RpcError> {
    let mut options = ClientOptions::new().limits(limits);
    for (name, value) in headers {
        options = options.header(name, value);
    }
    connect_with(url, &options).await
}

/// Opens a WebSocket to `url` (`ws://`, or `wss://` trusting the web roots and
/// [`ClientOptions::tls`]) with `options`.
pub async fn connect_with(url: &str, options: &ClientOptions) -> Result<Transport, RpcError> {
    let limits = options.limits;
    let mut request = url
        .into_client_request()
        .map_err(|e| RpcError::Transport(format!("bad websocket url `{url}`: {e}")))?;
    for (name, value) in options.header_pairs() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| RpcError::Transport(format!("bad header name `{name}`: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| RpcError::Transport(format!("bad value for header `{name}`: {e}")))?;
        request.headers_mut().insert(name, value);
    }
    if request.uri().scheme_str() != Some("wss") {
        // `true`: Nagle's algorithm off, as `super::tcp::ready_tcp` does for the other connections.
        let (stream, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(ws_config(&limits)), true)
                .await
                .map_err(|e| RpcError::Transport(format!("websocket connect to `{url}`: {e}")))?;
        return Ok(spawn(stream, limits));
    }
    let host = request
        .uri()
        .host()
        .ok_or_else(|| RpcError::Transport(format!("no host in `{url}`")))?
        .to_owned();
    let port = request.uri().port_u16().unwrap_or(443);
    let tls = options.tls.clone().unwrap_or_default();
    let stream = tls.connect(&host, port).await?;
    let (stream, _) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(ws_config(&limits)))
            .await
            .map_err(|e| RpcError::Transport(format!("websocket connect to `{url}`: {e}")))?;
    Ok(spawn(stream, limits))
}

/// Waits for the next TCP connection on `listener` and accepts a WebSocket on it.
pub async fn accept_next(
    listener: &TcpListener,
    limits: Limits,
) -> Result<(Transport, Handshake), RpcError> {
    let (stream, _) = listener
        .accept()
        .await
        .map_err(|e| RpcError::Transport(format!("tcp accept: {e}")))?;
    super::tcp::ready_tcp(&stream);
    accept(stream, limits).await
}

/// Accepts a WebSocket on a freshly accepted TCP connection and returns its handshake.
pub async fn accept(stream: TcpStream, limits: Limits) -> Result<(Transport, Handshake), RpcError> {
    accept_with(stream, limits, |handshake| Ok(handshake.clone())).await
}

// tungstenite's callback signature returns its large `ErrorResponse` by value.
#[allow(clippy::result_large_err)]
/// Accepts a WebSocket if `check` approves its handshake; `check` returns what the server
/// wants to keep (a principal), or a rejection sent back as an HTTP error.
pub async fn accept_with<S, T, F>(
    stream: S,
    limits: Limits,
    check: F,
) -> Result<(Transport, T), RpcError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&Handshake) -> Result<T, Rejection>,
{
    let mut kept = None;
    let mut check = Some(check);
    // The callback must be `Unpin`: it captures only references.
    let (kept_ref, check_ref) = (&mut kept, &mut check);
    let callback =
        move |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
            let handshake = Handshake {
                uri: request.uri().clone(),
                headers: request.headers().clone(),
            };
            let Some(check) = check_ref.take() else {
                return Err(ErrorResponse::new(Some("handshake checked twice".into())));
            };
            match check(&handshake) {
                Ok(value) => {
                    *kept_ref = Some(value);
                    Ok(response)
                }
                Err(rejection) => {
                    let mut refusal = ErrorResponse::new(Some(rejection.message));
                    *refusal.status_mut() = rejection.status;
                    Err(refusal)
                }
            }
        };
    let ws =
        tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(ws_config(&limits)))
            .await
            .map_err(|e| RpcError::Transport(format!("websocket handshake: {e}")))?;
    let kept = kept.ok_or_else(|| RpcError::Transport("websocket handshake refused".into()))?;
    Ok((spawn(ws, limits), kept))
}

fn spawn<S>(ws: WebSocketStream<S>, limits: Limits) -> Transport
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // No task and no queue of its own: the peer's task moves the frames (a task cell and
    // two channels would cost every idle connection about 3 KiB).
    let wire = WsWire {
        ws,
        limits,
        backlog: Backlog::new(super::OUTBOUND_CAPACITY),
        flushing: false,
        rest: None,
        reading: true,
        writing: true,
        end: None,
    };
    Transport {
        kind: TransportKind::WebSocket,
        limits,
        io: Io::Inline(std::sync::Arc::new(std::sync::Mutex::new(Box::new(wire)))),
        guard: Guard::default(),
        stderr: None,
    }
}

/// What one frame read off the wire becomes for the peer.
fn inbound_of(message: WsMessage, limits: &Limits) -> Option<Inbound> {
    let bytes: Bytes = match message {
        // Text is the norm; a binary frame holding JSON is read the same way.
        WsMessage::Text(text) => text.into(),
        WsMessage::Binary(bytes) => bytes,
        WsMessage::Close(_) => return Some(Inbound::Closed { reason: None }),
        _ => return None, // ping and pong are tungstenite's business
    };
    Some(if bytes.len() > limits.max_frame_bytes {
        let prefix = &bytes[..bytes.len().min(mcpl_protocol::sniff::SNIFF_BYTES)];
        Inbound::Refused {
            error: FrameError::too_large(bytes.len(), limits.max_frame_bytes, prefix),
            answered: false,
        }
    } else {
        Inbound::Frame(bytes)
    })
}

/// The largest frame written. A longer message goes as a first frame and continuation
/// frames (RFC 6455 §5.4): tungstenite keeps a write buffer as large as the largest frame it
/// ever wrote for the connection's life, so without a bound one large answer (a tool list,
/// a 1 MiB result) would cost the connection that much for as long as it lives.
const MAX_WRITE_FRAME: usize = 1024;

/// A WebSocket whose frames the peer's task moves (see [`Wire`]). Reading goes on while a
/// message is being written, so two peers writing large messages to each other never wait
/// on each other; messages are written one at a time, frame by frame, each frame flushed
/// before the next starts.
struct WsWire<S> {
    ws: WebSocketStream<S>,
    limits: Limits,
    /// Messages waiting while another is being written; empty (and unallocated) at rest.
    backlog: Backlog,
    /// A frame was handed to tungstenite and is not flushed yet.
    flushing: bool,
    /// The rest of the message being written, past the frames handed over.
    rest: Option<Bytes>,
    reading: bool,
    /// False after a write failed: nothing more is written.
    writing: bool,
    /// The end of the read side, found by a failed write, not reported yet.
    end: Option<Option<String>>,
}

impl<S> std::fmt::Debug for WsWire<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsWire")
            .field("waiting", &self.backlog.len())
            .field("flushing", &self.flushing)
            .field("reading", &self.reading)
            .field("writing", &self.writing)
            .finish_non_exhaustive()
    }
}

impl<S> WsWire<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    /// Whether a message is being written.
    fn busy(&self) -> bool {
        self.flushing || self.rest.is_some()
    }

    /// Starts writing `out`: whole when it fits in one frame, else its first frame.
    fn start(&mut self, out: Outbound) {
        let text = out.message.to_json();
        if text.len() <= MAX_WRITE_FRAME {
            return self.hand_over(WsMessage::text(text));
        }
        let mut rest = Bytes::from(text);
        let first = rest.split_to(MAX_WRITE_FRAME);
        self.rest = Some(rest);
        let frame = Frame::message(first, OpCode::Data(OpData::Text), false);
        self.hand_over(WsMessage::Frame(frame));
    }

    /// Hands the next continuation frame of the message being written over.
    fn continue_message(&mut self) {
        let Some(mut rest) = self.rest.take() else {
            return;
        };
        let frame = rest.split_to(rest.len().min(MAX_WRITE_FRAME));
        let last = rest.is_empty();
        if !last {
            self.rest = Some(rest);
        }
        let frame = Frame::message(frame, OpCode::Data(OpData::Continue), last);
        self.hand_over(WsMessage::Frame(frame));
    }

    /// Hands one frame to tungstenite, which writes what the socket takes at once; the rest
    /// is flushed by [`WsWire::poll_writes`].
    fn hand_over(&mut self, frame: WsMessage) {
        match Pin::new(&mut self.ws).start_send(frame) {
            Ok(()) => self.flushing = true,
            Err(e) => self.write_failed(e),
        }
    }

    /// Flushes the message being written and starts the next, until the socket is full or
    /// nothing waits.
    fn poll_writes(&mut self, cx: &mut Context<'_>) {
        loop {
            if self.flushing {
                let Poll::Ready(flushed) = Pin::new(&mut self.ws).poll_flush(cx) else {
                    return;
                };
                self.flushing = false;
                if let Err(e) = flushed {
                    self.write_failed(e);
                }
            }
            if !self.writing {
                self.backlog.clear();
                self.rest = None;
                return;
            }
            if self.rest.is_some() {
                self.continue_message();
                continue;
            }
            let Some(out) = self.backlog.pop_front() else {
                // A burst's room is given back: an idle connection keeps none.
                self.backlog.clear();
                return;
            };
            self.start(out);
        }
    }

    /// A write failed: nothing more is written, and unless the other side simply closed,
    /// the read side ends too, with the reason.
    fn write_failed(&mut self, error: tungstenite::Error) {
        self.writing = false;
        if !matches!(error, tungstenite::Error::ConnectionClosed) && self.reading {
            self.reading = false;
            self.end = Some(Some(format!("websocket write failed: {error}")));
        }
    }
}

impl<S> Wire for WsWire<S>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    fn poll_io(&mut self, cx: &mut Context<'_>) -> Poll<Inbound> {
        loop {
            self.poll_writes(cx);
            if let Some(reason) = self.end.take() {
                return Poll::Ready(Inbound::Closed { reason });
            }
            if !self.reading {
                return Poll::Pending;
            }
            let read = match Pin::new(&mut self.ws).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(read) => read,
            };
            let inbound = match read {
                None => Inbound::Closed { reason: None },
                Some(Err(e)) => Inbound::Closed {
                    reason: Some(format!("websocket read failed: {e}")),
                },
                Some(Ok(message)) => match inbound_of(message, &self.limits) {
                    Some(inbound) => inbound,
                    // A ping or a pong: tungstenite's business; read on.
                    None => continue,
                },
            };
            if matches!(inbound, Inbound::Closed { .. }) {
                self.reading = false;
            }
            return Poll::Ready(inbound);
        }
    }

    fn write(&mut self, out: Outbound) {
        if !self.writing || self.backlog.overflowed() {
            // After a failed write the rest is dropped: the wire is gone.
            return;
        }
        if !self.busy() && self.backlog.is_empty() {
            return self.start(out);
        }
        self.backlog.push(out);
    }

    fn overflowed(&self) -> bool {
        self.backlog.overflowed()
    }

    fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.backlog.overflowed() {
            // The other side does not read: what is queued would never be written.
            return Poll::Ready(());
        }
        self.poll_writes(cx);
        if self.busy() || !self.backlog.is_empty() {
            return Poll::Pending;
        }
        if self.writing {
            // The sink's close (not `WebSocketStream::close`): it also flushes the reply to
            // a closing handshake the other side started.
            if Pin::new(&mut self.ws).poll_close(cx).is_pending() {
                return Poll::Pending;
            }
            self.writing = false;
        }
        Poll::Ready(())
    }
}
