//! The RFC-014 conformance suite.
//!
//! What will live here (issue "Executable conformance suite"): the 38 vectors of RFC-014 §13
//! and the wire-observable host requirements as named checks against any server or host.
//! Nothing is built yet.
