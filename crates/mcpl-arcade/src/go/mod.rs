//! A Go engine and bot, with no knowledge of MCPL.
//!
//! - `coord`: board sizes, colours, points and their text form (`D4`; no `I`; row 1 at the
//!   bottom); `checked`: their constructors that refuse bad sizes and points.
//! - `board`: stones and groups with incremental pseudo-liberties, a Zobrist hash and the
//!   simple-ko point.
//! - `rules`: `Game`, one game under area rules with positional superko, passes, resignation
//!   and history; `legal_moves()` lists exactly what `play` accepts.
//! - `score`: Tromp-Taylor area counting and `Komi`.
//! - `render`: the text board.
//! - `bot`: the MCTS bot (`Bot`, budgeted in playouts, deterministic per seed) and the
//!   `RandomPlayer` baseline.
//! - `rng`: SplitMix64, for the Zobrist keys and the playouts.
//! - `error`: `GoError`, every refusal.

mod board;
mod bot;
mod checked;
mod coord;
mod error;
mod render;
mod rng;
mod rules;
mod score;

pub use board::Board;
pub use bot::{Bot, BotConfig, Decision, RandomPlayer};
pub use coord::{BoardSize, Color, Point};
pub use error::GoError;
pub use rules::{Game, Move, Outcome, Played, Turn};
pub use score::{Komi, Score};
