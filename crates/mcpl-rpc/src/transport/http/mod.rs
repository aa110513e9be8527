//! MCP Streamable HTTP (revision 2025-11-25): a [`server`] mounted in axum and a [`client`]
//! on reqwest. Plain `http://` only; TLS is left to a proxy in front.
//!
//! This wire does not keep order across streams: each POST's SSE stream and the GET stream
//! are separate, so [`crate::TransportKind::StreamableHttp`] reports itself unordered and the
//! client's read order is simply the order in which its streams delivered frames.

pub mod client;
pub mod server;
mod sse;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcpl_protocol::frame::FrameError;
use mcpl_protocol::jsonrpc::{DecodeError, Message};

pub use client::connect;
pub use server::{Authorize, HttpServerConfig, HttpSession, router};

/// The session header (`Mcp-Session-Id`).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol-version header a client sends after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// One message as one SSE event.
fn sse_event(message: &Message) -> Bytes {
    Bytes::from(format!("event: message\ndata: {}\n\n", message.to_json()))
}

/// Reads a body of at most `max` bytes. A longer one is refused by its declared length, or by
/// the bytes seen when the cap was passed (the rest is not read).
async fn read_capped<S, E>(
    mut body: S,
    max: usize,
    declared: Option<usize>,
) -> Result<Bytes, FrameError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    if let Some(len) = declared.filter(|&len| len > max) {
        return Err(FrameError::TooLarge { len, max });
    }
    let mut buf = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| FrameError::Decode {
            error: DecodeError::Syntax(format!("body could not be read: {e}")),
            id: None,
            response: false,
        })?;
        buf.extend_from_slice(&chunk);
        if buf.len() > max {
            return Err(FrameError::TooLarge {
                len: declared.unwrap_or(buf.len()),
                max,
            });
        }
    }
    Ok(Bytes::from(buf))
}
