//! MCP Streamable HTTP (revision 2025-11-25): a [`server`] mounted in axum and a [`client`]
//! on reqwest, over `http://` or `https://` (rustls, see [`super::tls`]).
//!
//! This wire does not keep order across streams: each POST's SSE stream and the GET stream
//! are separate, so [`crate::TransportKind::StreamableHttp`] reports itself unordered and the
//! client's read order is simply the order in which its streams delivered frames.

mod body;
pub mod client;
mod headers;
mod replay;
pub mod server;
mod sse;

pub use client::{connect, connect_with};
pub use headers::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
pub use server::{Authorize, HttpServerConfig, HttpSession, Owner, router, serve, serve_tcp};
