//! The RFC-014 server SDK.
//!
//! What will live here (issue "Server SDK"): a sans-IO session core per connection (principal
//! state behind a `PrincipalStore`, a consecutive rev counter per connection, carrier choice)
//! and its tokio driver over `mcpl-rpc`. Nothing is built yet.
