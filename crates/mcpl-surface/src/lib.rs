//! The surface host (RFC-014 §8.6): an MCP server for plain MCP clients that is itself an
//! MCPL host, with `toolHints`, for each server behind it.
//!
//! Clients such as Claude Code or Cursor ignore `tools/list_changed` or rebuild their prompt
//! cache on it. The surface gives them toolsets anyway: its tool list is the servers' static
//! tools plus four constant meta-tools (`toolsets_open`, `toolsets_look`, `toolsets_act`,
//! `toolsets_close`), and it never changes because toolsets opened, closed or changed.
//! Dynamic tools are reached through the meta-tools; what changed, and every event pushed
//! since the last call, rides as text at the end of each result, in the order it happened.
//! Pushes also go to the client as `notifications/message`, or as `push/event` to a client
//! that advertises MCPL with `pushEvents` and grants it by `featureSets/update`: such a
//! client is told each event once, as the surface's own push (never also as news).
//!
//! The surface is a thin front over the host library (`mcpl_host`): its driver runs one
//! controller per backend connection and keeps each server's picture across reconnects; its
//! presenter owns the tool list, the meta-tools' routing, and the one telling of changes,
//! notices and ended records. Each client session is one presenter agent whose window is its
//! results, within the inline cap. This crate adds the links (connect, handshake, backoff,
//! credentials from [`ServerSpec`]), the MCP server side, and the cache meter.
//!
//! It knows no particular server: an embedding binary serves one in process through a
//! [`Connector`] (the CLI does so for the arcade).
//!
//! # Layout (each module uses only those above it)
//!
//! - `error`: [`Error`].
//! - [`spec`]: [`ServerSpec`] and [`Target`], parsed from `--server` values.
//! - [`config`]: [`FileConfig`], backends from an `mcpServers` file with `${VAR}` expansion.
//! - [`connector`]: [`Connector`] and [`StandardConnector`] (programs, command lines,
//!   `ws://`, `http://`, with headers on every connect).
//! - [`meter`]: the cache report and its two baselines ([`CacheReport`]).
//! - [`link`]: one task per backing server: handshake, hand-over to the driver, backoff;
//!   [`LinkStatus`], [`LinkTiming`].
//! - [`relay`]: a backend's push in the surface's own name ([`EventIds`], `origin`).
//! - `front`: one client session (`initialize`, `tools/list`, `tools/call`).
//! - `surface`: [`Surface`] and [`SurfaceConfig`].
//! - [`listen`]: serving sessions over Streamable HTTP.

pub mod config;
pub mod connector;
mod error;
mod front;
pub mod link;
pub mod listen;
pub mod meter;
pub mod relay;
pub mod spec;
mod surface;
#[cfg(test)]
mod testing;

pub use config::{ConfigProblem, EntryProblem, ExpandProblem, FileConfig};
pub use connector::{BoxFuture, ConnectError, Connector, StandardConnector};
pub use error::Error;
pub use link::{LinkStatus, LinkTiming};
pub use mcpl_host::driver::DEFAULT_INLINE_CAP;
pub use mcpl_host::grouping::{DEFAULT_STATIC_LIMIT, Grouping};
pub use mcpl_host::presenter::{
    META_ACT as ACT, META_CLOSE as CLOSE, META_LOOK as LOOK, META_OPEN as OPEN,
};
pub use meter::{BaselineTally, CacheReport};
pub use relay::EventIds;
pub use spec::{ServerSpec, Target};
pub use surface::{Surface, SurfaceConfig};
