//! The surface host (RFC-014 §8.6): an MCP server for plain MCP clients that is itself an
//! MCPL host, with `toolHints`, for each server behind it.
//!
//! Clients such as Claude Code or Cursor ignore `tools/list_changed` or rebuild their prompt
//! cache on it. The surface gives them toolsets anyway: its tool list is the servers' static
//! tools plus four constant meta-tools (`toolsets_open`, `toolsets_look`, `toolsets_act`,
//! `toolsets_close`), and it never changes because toolsets opened, closed or changed.
//! Dynamic tools are reached through the meta-tools; what changed, and every event pushed
//! since the last call, rides as concise text at the end of each meta-tool result. Pushes
//! also go to the client as `notifications/message`, or as `push/event` to a client that
//! advertises MCPL with `pushEvents` and grants it by `featureSets/update`.
//!
//! Each backing server gets an `mcpl_host` controller (the sans-IO core) driven by a link
//! task that reconnects with backoff when the server crashes or disconnects. After a
//! reconnect the controller re-reads `tools/list` and `toolsets/list` and re-opens nothing;
//! games that ended meanwhile are told once; calls in between get an error naming the
//! server's state.
//!
//! The model-facing tool list and the meta-tools' routing (selector checks, ambiguity
//! refusals, instance choice, the argument check) are `mcpl_host::Presenter`'s; this crate
//! runs its plans on the controllers and words the results.
//!
//! This crate uses `mcpl-host` for protocol state, `mcpl-rpc` for transports, and tokio.
//! It knows no particular server: an embedding binary serves one in process through a
//! [`Connector`] (the CLI does so for the arcade).
//!
//! # Layout
//!
//! - [`spec`]: [`ServerSpec`] and [`Target`], parsed from `--server` values.
//! - [`connector`]: [`Connector`] and [`StandardConnector`] (command lines, `ws://`,
//!   `http://`).
//! - [`link`]: one task per backing server: handshake, controller driver, backoff;
//!   [`LinkStatus`], [`LinkTiming`].
//! - `hub`: the controllers under one lock, effects drained in order.
//! - `meta`: running the host library's plans for the four meta-tools and static tools.
//! - `news`: what the agent is owed between results, rendered as text.
//! - `render`: the catalog, tool details, the argument check.
//! - `front`: the MCP server side (`initialize`, `tools/list`, `tools/call`).
//! - [`meter`]: the cache report and its two baselines ([`CacheReport`]).
//! - `surface`: [`Surface`] and [`SurfaceConfig`].
//! - `error`: [`Error`].

pub mod connector;
mod error;
mod front;
mod hub;
pub mod link;
mod meta;
pub mod meter;
mod news;
mod render;
pub mod spec;
mod surface;

pub use connector::{BoxFuture, Connector, StandardConnector};
pub use error::Error;
pub use link::{LinkStatus, LinkTiming};
pub use meta::{ACT, CLOSE, LOOK, OPEN};
pub use meter::{BaselineTally, CacheReport};
pub use spec::{ServerSpec, Target};
pub use surface::{Surface, SurfaceConfig};
