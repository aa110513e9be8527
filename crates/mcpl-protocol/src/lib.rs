//! MCPL wire types: the JSON-RPC 2.0 envelope, the MCP subset this project speaks, the MCPL
//! base (capabilities, grants, `push/event`, the manifest and its digest) and RFC-014's types.
//!
//! No async, no I/O: values in, values out. Unknown members are kept on every type that a peer
//! may extend, so a message read and written again is the same message.
//!
//! # Layout
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, request ids and the error-code table.
//! - [`method`]: typed request and notification methods.
//! - [`methods`]: every wire method name as a constant.
//! - [`mcp`]: the MCP subset (`initialize`, `tools/list`, `tools/call`, ...).

pub mod jsonrpc;
pub mod mcp;
pub mod method;
pub mod methods;
