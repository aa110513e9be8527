//! The surface host.
//!
//! What will live here (issue "Surface host and demo"): an MCP server on stdio for plain MCP
//! clients that is an MCPL host with `toolHints` for each server behind it, exposing the four
//! meta-tools and a tool list that never changes. Nothing is built yet.
