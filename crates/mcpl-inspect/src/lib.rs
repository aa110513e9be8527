//! `--inspect ADDR`: a live, read-only web page of what an MCPL server is doing: principals,
//! their connections and revs, open toolsets and instances with their tools, ended records,
//! and the stream of hint changes with a timeline.
//!
//! Kept out of the SDK's core: the server driver only offers a bounded observer hook
//! ([`mcpl_server::driver::Handle::observe`]); this crate turns its records into a JSON
//! snapshot ([`model`]), serves it to the page over server-sent events ([`serve`]) and guards
//! every request ([`access`]). The page builds its DOM from JSON with `textContent` only, so
//! nothing the server reports is ever read as markup; every asset is embedded.

pub mod access;
pub mod model;
pub mod serve;

pub use access::{Access, AccessError};
pub use serve::{Inspector, inspect_server};
