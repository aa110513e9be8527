//! `--inspect ADDR`: a live, read-only web page of what an MCPL server is doing (principals,
//! their connections and revs, open toolsets and instances with their tools, ended records,
//! and the stream of hint changes with a timeline), or of what a surface host is doing
//! (backends with their link, rev and recovery, the model-facing tool list with its digest
//! and change count, the news waiting to be told).
//!
//! Kept out of the SDK's core: the server driver only offers a bounded observer hook
//! ([`mcpl_server::driver::Handle::observe`]) and the host driver a read-only status
//! ([`mcpl_host::driver::Host::status`]) with a turn counter; this crate turns them into a JSON
//! snapshot ([`model`], [`host`]), serves it to the page over server-sent events ([`serve`])
//! and guards every request ([`access`], on `mcpl-rpc`'s `Host`/`Origin` rules). The page builds its DOM from JSON with `textContent` only, so
//! nothing the server reports is ever read as markup; every asset is embedded.

pub mod access;
pub mod host;
pub mod model;
pub mod serve;

pub use access::{Access, AccessError};
pub use serve::{Inspector, inspect_host, inspect_server};
