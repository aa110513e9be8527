//! MCP Streamable HTTP (revision 2025-11-25): a [`server`] mounted in axum and a [`client`]
//! on reqwest, over `http://` or `https://` (rustls, see [`super::tls`]).
//!
//! This wire does not keep order across streams: each POST's SSE stream and the GET stream
//! are separate, so [`crate::TransportKind::StreamableHttp`] reports itself unordered and the
//! client's read order is simply the order in which its streams delivered frames.

pub mod client;
mod replay;
pub mod server;
mod sse;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcpl_protocol::frame::FrameError;
use mcpl_protocol::jsonrpc::{DecodeError, Message};
use mcpl_protocol::sniff::SNIFF_BYTES;

pub use client::{connect, connect_with};
pub use server::{Authorize, HttpServerConfig, HttpSession, Owner, router, serve};

/// The session header (`Mcp-Session-Id`).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol-version header a client sends after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The header a client resumes a GET stream with.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// One message as one SSE event, with its id when it has one.
fn sse_event(id: Option<u64>, message: &Message) -> Bytes {
    match id {
        Some(id) => Bytes::from(format!(
            "id: {id}\nevent: message\ndata: {}\n\n",
            message.to_json()
        )),
        None => Bytes::from(format!("event: message\ndata: {}\n\n", message.to_json())),
    }
}

/// Reads a body of at most `max` bytes. A longer one is refused by its declared length, or by
/// the bytes seen when the cap was passed (the rest is not read); its first bytes are read
/// either way so the refusal can carry the request's id.
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
        let mut prefix = Vec::new();
        while prefix.len() < SNIFF_BYTES {
            match body.next().await {
                Some(Ok(chunk)) => prefix.extend_from_slice(&chunk),
                _ => break,
            }
        }
        prefix.truncate(SNIFF_BYTES);
        return Err(FrameError::too_large(len, max, &prefix));
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
            let prefix = &buf[..buf.len().min(SNIFF_BYTES)];
            return Err(FrameError::too_large(
                declared.unwrap_or(buf.len()),
                max,
                prefix,
            ));
        }
    }
    Ok(Bytes::from(buf))
}
