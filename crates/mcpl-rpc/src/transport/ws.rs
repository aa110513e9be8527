//! WebSocket: one JSON-RPC message per text frame, in order each way (DIGEST D2), over plain
//! TCP (`ws://`) or TLS (`wss://`, see [`super::tls`]).

use super::{ClientOptions, Guard, Inbound, Transport, TransportKind};
use crate::error::RpcError;
use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream};
use mcpl_protocol::frame::{FrameError, Limits};
use std::pin::Pin;
use std::task::Poll;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
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
        let (stream, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(ws_config(&limits)), false)
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
    let (in_tx, in_rx) = crate::transport::inbound_queue();
    let (out_tx, out_rx) = super::outbound_queue(super::OUTBOUND_CAPACITY);
    // One task reads and writes: a second task (and the lock a split stream shares between
    // two) would cost every idle connection its own task cell.
    let io = tokio::spawn(move_frames(ws, limits, in_tx, out_rx));
    Transport {
        kind: TransportKind::WebSocket,
        limits,
        inbound: in_rx,
        outbound: out_tx,
        guard: Guard {
            writer: Some(io),
            tasks: Vec::new(),
            child: None,
        },
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

/// What the WebSocket itself did while [`move_frames`] waited on it.
enum Wire {
    /// A frame was read (or the read side ended).
    Read(Option<Result<WsMessage, tungstenite::Error>>),
    /// The message being written is on the wire.
    Flushed(Result<(), tungstenite::Error>),
}

/// Moves frames both ways on one task until the peer lets go of the transport: messages
/// from `rx` are written in order; frames read go to `tx` in read order, ending with
/// [`Inbound::Closed`]. Reading goes on while a message is being written (two peers writing
/// large messages to each other never wait on each other), and a frame read waits here while
/// the peer's inbound queue is full without holding up writes: the peer never waits for this
/// task.
async fn move_frames<S>(
    mut ws: WebSocketStream<S>,
    limits: Limits,
    tx: crate::transport::InboundSender,
    mut rx: crate::transport::OutboundReceiver,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // A frame read and not yet queued for the peer; then the end of the read side.
    let mut pending: Option<Inbound> = None;
    let mut end: Option<Option<String>> = None;
    let mut reading = true;
    let mut writing = true;
    // A message handed to tungstenite and not yet flushed: the next waits for it.
    let mut flushing = false;
    loop {
        let can_read = reading && pending.is_none();
        // One future polls both directions of the one stream.
        let wire = std::future::poll_fn(|cx| {
            if flushing && let Poll::Ready(flushed) = Pin::new(&mut ws).poll_flush(cx) {
                return Poll::Ready(Wire::Flushed(flushed));
            }
            if can_read && let Poll::Ready(read) = Pin::new(&mut ws).poll_next(cx) {
                return Poll::Ready(Wire::Read(read));
            }
            Poll::Pending
        });
        tokio::select! {
            out = rx.recv(), if !flushing => match out {
                None => break,
                // After a failed write the rest is dropped: the wire is gone.
                Some(_) if !writing => {}
                Some(out) => {
                    let text = out.message.to_json();
                    match Pin::new(&mut ws).start_send(WsMessage::text(text)) {
                        Ok(()) => flushing = true,
                        Err(e) => write_failed(e, &mut writing, &mut reading, &mut end),
                    }
                }
            },
            wire = wire, if flushing || can_read => match wire {
                Wire::Flushed(flushed) => {
                    flushing = false;
                    if let Err(e) = flushed {
                        write_failed(e, &mut writing, &mut reading, &mut end);
                    }
                }
                Wire::Read(None) => {
                    reading = false;
                    end = Some(None);
                }
                Wire::Read(Some(Err(e))) => {
                    reading = false;
                    end = Some(Some(format!("websocket read failed: {e}")));
                }
                Wire::Read(Some(Ok(message))) => match inbound_of(message, &limits) {
                    Some(Inbound::Closed { reason }) => {
                        reading = false;
                        end = Some(reason);
                    }
                    other => pending = other,
                },
            },
            permit = tx.reserve(), if pending.is_some() || end.is_some() => {
                let Ok(permit) = permit else {
                    break; // the peer is gone
                };
                match pending.take() {
                    Some(inbound) => permit.send(inbound),
                    None => permit.send(Inbound::Closed { reason: end.take().flatten() }),
                }
            }
        }
    }
    if writing {
        // The sink's close (not `WebSocketStream::close`): it also flushes what is queued
        // and the reply to a closing handshake the other side started.
        let _ = SinkExt::close(&mut ws).await;
    }
}

/// A write failed: nothing more is written, and unless the other side simply closed, the
/// read side ends too, with the reason.
fn write_failed(
    error: tungstenite::Error,
    writing: &mut bool,
    reading: &mut bool,
    end: &mut Option<Option<String>>,
) {
    *writing = false;
    if !matches!(error, tungstenite::Error::ConnectionClosed) && *reading {
        *reading = false;
        *end = Some(Some(format!("websocket write failed: {error}")));
    }
}
