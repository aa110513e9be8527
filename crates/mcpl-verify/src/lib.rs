//! Verification of the real cores.
//!
//! - [`schedule`]: seeded random fault schedules of real [`mcpl_host`] controllers and a
//!   presenter paired in process with a real [`mcpl_server`] server (drops, reorders,
//!   duplicates, late and lost answers, disconnects, server restarts, racing opens, closes,
//!   moves and news), each checked for convergence and for the telling and ordering rules.
//! - [`model`]: a [`stateright`] model of the rev and recovery rules, checked exhaustively
//!   within bounds.
//!
//! `scripts/verify` runs both through the `mcpl-verify` binary.

pub mod app;
pub mod model;
pub mod schedule;
pub mod world;
