//! MCPL wire types: the JSON-RPC 2.0 envelope, the MCP subset this project speaks, the MCPL
//! base (capabilities, grants, `push/event`, the manifest and its digest) and RFC-014's types.
//!
//! No async, no I/O: values in, values out. Unknown members are kept on every type that a peer
//! may extend, so a message read and written again is the same message.
//!
//! # Layout
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, request ids and the error-code table.
//! - [`frame`]: decoding one frame under size and depth limits, and the error reply for a bad one.
//! - [`method`]: typed request and notification methods.
//! - [`methods`]: every wire method name as a constant.
//! - [`mcp`]: the MCP subset (`initialize`, `tools/list`, `tools/call`, ...).
//! - [`mcpl`]: the MCPL base: `experimental.mcpl` capabilities, grants, `featureSets/update`,
//!   `push/event`, event tags, the manifest and its §17.2 digest.
//! - [`rfc014`]: RFC-014 toolsets: the name grammar, hint keys, declarations, `toolsets/*`
//!   params and results, hint changes and ended records.

pub mod clip;
pub mod frame;
pub mod jsonrpc;
pub mod mcp;
pub mod mcpl;
pub mod method;
pub mod methods;
mod owned;
pub mod rfc014;
pub mod sniff;
#[cfg(test)]
mod test_util;
