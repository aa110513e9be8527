//! The RFC-014 host library.
//!
//! What will live here (issue "Host library"): a sans-IO controller per server connection
//! (hint state, rev order, recovery, presence moves, ended records), a presenter across
//! connections (the model-facing tool list, the four meta-tools, notices and reminders), and a
//! tokio driver. Nothing is built yet.
