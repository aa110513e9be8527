//! The RFC-014 host: a sans-IO [`controller`] per server connection, a [`presenter`] across
//! them, and a tokio `driver`.
//!
//! Controller and presenter never read a clock, spawn a task or open a socket: time comes in
//! as `now`, messages leave as [`Effect::Send`]. They use `mcpl-protocol` and `jsonschema`;
//! only the driver (feature `tokio`, on by default) adds `mcpl-rpc` and tokio, so
//! `cargo check -p mcpl-host --no-default-features` proves the cores need neither.
//!
//! # Embedding
//!
//! The driver does all of this; an embedder that runs its own loop does the same:
//!
//! 1. Per server connection (after `initialize`), make a [`Controller`] with the server's
//!    `experimental.mcpl` in [`ControllerConfig::manifest`]. It queues the connect reads
//!    (`tools/list`, then `toolsets/list`).
//! 2. Feed every frame to [`Controller::handle_message`] in read order, call
//!    [`Controller::handle_timeout`] at [`Controller::poll_timeout`], and drain
//!    [`Controller::poll_effect`]: write each `Send`; hand each `Changed`, `Event` and
//!    `Notice` to the [`Presenter`] (`handle_change`, `handle_event`, `handle_notice`) as it
//!    is polled, so a change's taker is decided at read time; then call
//!    [`Presenter::update`] with the snapshot.
//! 3. Offer the model [`Presenter::tool_list`]; call [`Presenter::rebuild`] when it suits
//!    you (a presence move never needs one, [`Presenter::needs_rebuild`] says when something
//!    else does). [`Presenter::digest`] and [`Presenter::list_changes`] are the cache report.
//! 4. For a model's tool call: [`Presenter::plan`] checks it and says what to do; run the
//!    [`Plan`] on the controller, [`Presenter::register_taker`] its handle, and when the
//!    answer comes, answer the model with [`Presenter::answer_text`] plus
//!    [`Presenter::take`]'s change; report [`Presenter::stored`] or
//!    [`Presenter::not_stored`].
//! 5. Write [`Presenter::poll_window`]'s notices into the agent's window, reporting each as
//!    stored or not, and [`Presenter::reminder`] at an agent's start or compile.
//!
//! # Layout
//!
//! - [`config`]: per-connection settings ([`ControllerConfig`], [`Transport`]), the
//!   operator's [`ToolPolicy`] and [`mask_capabilities`].
//! - [`controller`]: one [`Controller`] per server connection. It reads `tools/list` whole,
//!   applies hint changes in rev order, holds early revs on Streamable HTTP, recovers, and
//!   hands out [`Effect`]s and a [`Snapshot`].
//! - [`presenter`]: one [`Presenter`] across connections: the model-facing tool list (static
//!   tools plus the four meta-tools, optional §8.4 projection) with its digest, each agent's
//!   window queue of notices, the meta-tools' resolution and text, bounded rendering and the
//!   argument check.
//! - `driver` (feature `tokio`): the async host task over `mcpl-rpc` peers, with a small
//!   `Agent` trait for the embedding agents and a `Host` handle. It keeps a server's picture
//!   across connections (a reconnect resumes from it), serves several agents (one whose
//!   results are its window gets its news with its next answer, within the inline cap), and
//!   shows each connection's reported state. The surface host (`mcpl-surface`) runs on it.
//! - [`names`]: the typed ids: [`ServerName`] (the host's id for a backing server), and
//!   [`ToolsetName`], [`InstanceName`] and [`Rev`] from `mcpl-protocol`. Every toolset and
//!   instance name in a [`Snapshot`], a change, a [`Plan`] or the driver's status is one of
//!   them. A name the server sends outside the grammar (§5.1) is not a name: the controller
//!   skips the declaration, tool membership, open entry, ended record or hint entry carrying
//!   it and applies the rest. A name the model sends outside it is refused by the presenter
//!   ([`presenter::Refusal::BadToolsetName`], [`presenter::Refusal::BadInstanceName`]).
//! - [`grouping`]: host-side toolsets for plain servers ([`Grouping`], fixed into rules at
//!   a server's first list), their names and descriptions.
//! - `text`: bounded text both of them use (a cut on a character boundary, a first
//!   sentence); the presenter's `render` re-exports it.
//! - [`error`]: the crate's [`Error`] (caller misuse and transport failures only).

pub mod config;
pub mod controller;
#[cfg(feature = "tokio")]
pub mod driver;
pub mod error;
mod glob;
pub mod grouping;
pub mod names;
pub mod presenter;
mod text;

pub use config::{ControllerConfig, ToolPolicy, Transport, mask_capabilities};
pub use controller::{Controller, Effect, Snapshot};
pub use error::Error;
pub use grouping::{Grouping, GroupingError};
pub use names::{BadServerName, InstanceName, Rev, ServerName, ToolsetName};
pub use presenter::{AgentId, Plan, Presenter, PresenterConfig};
