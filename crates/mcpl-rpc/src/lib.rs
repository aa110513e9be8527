//! Async JSON-RPC 2.0 peer for MCPL, and the transports it runs on.
//!
//! A [`Peer`] sends and receives requests in both directions at once over any [`Transport`]:
//! newline-delimited stdio (any `AsyncRead`/`AsyncWrite`, the process's own stdin and stdout,
//! or a child process), WebSocket, and MCP Streamable HTTP (client and server).
//!
//! What it does for the code above it:
//!
//! - **Answers are read as the type of the request they answer.** The pending-request table
//!   keeps each request's method by id; an answer is never classified by its shape.
//! - **Read order.** Every frame read takes the next sequence number, responses and bad frames
//!   included ([`Event::seq`], [`Answered::seq`]), so a host applies hints in the order its
//!   reader saw them (RFC-014 §6.1, H13).
//! - **Late answers are kept.** A request that times out is cancelled with
//!   `notifications/cancelled`, and an answer that still arrives is delivered as
//!   [`Event::LateResponse`] with its method: §6.1 applies hints from late results.
//! - **Bad input changes nothing.** Malformed JSON, non-objects, batches, nesting past the
//!   limit, oversized frames and lone surrogates get a `-32700`/`-32600` reply (with the id
//!   when it could be read) and an [`Event::BadFrame`]; the connection goes on.
//!
//! It knows nothing of MCP or RFC-014 state. Host and server drivers take each event in read
//! order, hand [`Event::into_message`] to their sans-IO core, and write what the core returns
//! with [`Peer::send`]; or they use [`Peer::request`] and [`Responder`] directly.
//!
//! - **Bounded queues.** Frames wait in bounded queues each way; a connection whose other side
//!   reads so slowly that [`transport::OUTBOUND_CAPACITY`] messages pile up is closed with a
//!   log line saying so, so memory never grows without bound.
//! - **Hardened servers.** The Streamable HTTP server checks `Origin` (loopback only by
//!   default), binds each session to the credentials that opened it, caps sessions, ends idle
//!   ones and lets a cut GET stream resume with `Last-Event-ID`; TLS (`https://`, `wss://`)
//!   runs on rustls ([`transport::tls`]).
//!
//! - **Writes skip the task when they can.** Answers, notifications and messages built by a
//!   core go from the handle straight to the transport writer's queue; requests the peer
//!   tracks go through the connection's task, which registers them first, and a write made
//!   while such a command is still queued waits behind it, so messages leave in the order
//!   they were made. On WebSocket the connection's task writes to the wire itself, so every
//!   write goes through it.
//!
//! Left out: JSON-RPC batches (refused, as MCP dropped them).
//!
//! # Layout
//!
//! - [`peer`]: the [`Peer`] handle, its settings and [`PendingRequest`].
//! - `driver`: the per-connection task behind a peer.
//! - [`event`]: [`Event`]s in read order, [`Responder`], [`Answered`].
//! - `pending`: the sans-IO table of outgoing requests, deadlines and late records.
//! - [`queue`]: the small unbounded queue a connection keeps its commands and events in.
//! - [`transport`]: [`Transport`] and [`TransportKind`]; newline framing for stdio,
//!   [`transport::child`] processes, [`transport::ws`] (WebSocket) and [`transport::http`]
//!   (Streamable HTTP server and client).
//! - [`error`]: the crate's one error type, [`RpcError`].
//!
//! # Example
//!
//! ```
//! use mcpl_rpc::{Event, Peer, PeerConfig, RequestOptions, Transport};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (a, b) = Transport::memory_pair();
//! let (client, _client_events) = Peer::start(a, PeerConfig::default());
//! let (_server, mut server_events) = Peer::start(b, PeerConfig::default());
//!
//! // The server answers `ping` and refuses anything else with -32601.
//! tokio::spawn(async move {
//!     while let Some(event) = server_events.recv().await {
//!         if let Event::Request { request, responder, .. } = event {
//!             let _ = match request.method.as_str() {
//!                 "ping" => responder.respond(json!({})),
//!                 _ => responder.method_not_found(),
//!             };
//!         }
//!     }
//! });
//!
//! let options = RequestOptions::timeout(Duration::from_secs(5));
//! let pong = client.request_value("ping", None, options.clone()).await.unwrap();
//! assert_eq!(pong.value, json!({}));
//! assert_eq!(pong.seq, 1); // the first frame the client read
//! let err = client.request_value("nope", None, options).await.unwrap_err();
//! assert!(err.to_string().contains("-32601"));
//! client.close().await;
//! # }
//! ```

mod driver;
pub mod error;
pub mod event;
mod link;
pub mod peer;
mod pending;
pub mod queue;
pub mod transport;

pub use error::RpcError;
pub use event::{
    Answered, Event, Events, InlineRequests, Responder, decode_params, into_params,
    into_params_with,
};
pub use mcpl_protocol::frame::Limits;
pub use peer::{Peer, PeerConfig, PendingRequest, RequestOptions};
pub use pending::LateReason;
pub use transport::{
    ClientOptions, Inbound, InboundSender, Outbound, OutboundReceiver, Transport, TransportEnds,
    TransportKind,
};
