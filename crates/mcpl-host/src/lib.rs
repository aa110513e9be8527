//! The RFC-014 host: a sans-IO [`controller`] per server connection, a [`presenter`] across
//! them, and a tokio `driver`.
//!
//! Controller and presenter never read a clock, spawn a task or open a socket: time comes in
//! as `now`, messages leave as [`Effect::Send`]. They use `mcpl-protocol` and `jsonschema`;
//! only the driver (feature `tokio`, on by default) adds `mcpl-rpc` and tokio.
//!
//! # Layout
//!
//! - [`config`]: per-connection settings ([`ControllerConfig`], [`Transport`]) and the
//!   operator's [`ToolPolicy`].
//! - [`controller`]: one [`Controller`] per server connection. It reads `tools/list` whole,
//!   applies hint changes in rev order, holds early revs on Streamable HTTP, recovers, and
//!   hands out [`Effect`]s and a [`Snapshot`].
//! - `driver` (feature `tokio`): the async host task over `mcpl-rpc` peers, with a small
//!   `Agent` trait for the embedding agent and a `Host` handle.
//! - [`error`]: the crate's [`Error`] (caller misuse and transport failures only).
//! - [`presenter`]: one [`Presenter`] across connections: the model-facing tool list (static
//!   tools plus the four meta-tools) with its digest, each agent's window queue of notices,
//!   the meta-tools' resolution and text, bounded rendering and the argument check.

pub mod config;
pub mod controller;
#[cfg(feature = "tokio")]
pub mod driver;
pub mod error;
pub mod presenter;

pub use config::{ControllerConfig, ToolPolicy, Transport, mask_capabilities};
pub use controller::{Controller, Effect, Snapshot};
pub use error::Error;
pub use presenter::{AgentId, Plan, Presenter, PresenterConfig};
