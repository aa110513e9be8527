//! The tokio driver: runs one [`Controller`](crate::controller::Controller) per server
//! connection over `mcpl-rpc` peers, feeds a [`Presenter`](crate::presenter::Presenter), and
//! hands its output to the embedding agents.
//!
//! One task owns the presenter and every controller. It `select!`s over frames from all
//! connections (in each connection's read order, with the peer's sequence numbers), commands
//! from [`Host`] handles, and the earliest controller deadline; it reads the clock, calls
//! `handle_*`, and drains `poll_*`. Every RFC decision is in the cores.
//!
//! A connection that ends keeps its server's picture: pending commands settle as unconfirmed
//! (H82), look shows the last state known with the state the embedder reported
//! ([`Host::set_link`]), and the next [`Host::add_server`] for that server resumes from it
//! (H28). Agents come in two kinds: one with a window of its own gets notices as they come
//! ([`Agent::notice`]); one whose only window is its results (a plain MCP client) gets what
//! it is owed with its next answer, in read order, within the inline cap.

mod agent;
mod answer;
mod answers;
mod command;
mod connection;
mod host;
mod policy;
mod reply;
mod status;
mod status_read;
mod task;

pub use agent::Agent;
pub use answer::Answer;
pub use connection::Connection;
pub use host::Host;
pub use policy::{DEFAULT_INLINE_CAP, HostPolicy};
pub use reply::Asked;
pub use status::{AgentStatus, HostStatus, OpenStatus, ServerStatus};
