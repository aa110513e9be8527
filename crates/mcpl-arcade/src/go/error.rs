//! The engine's one error type: bad input from a player, never a bug in the engine.

use super::coord::{BoardSize, Color, Point};

/// Why the engine refused a size, a point, a move or a setup. Every refusal leaves the game as
/// it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GoError {
    /// The requested board size is not 9, 13 or 19.
    #[error("unsupported board size {0}: use 9, 13 or 19")]
    BadSize(u64),
    /// A move's text is not a point such as `D4`.
    #[error("malformed move `{text}`: {why}")]
    Malformed {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A well-formed point that lies outside this board.
    #[error("`{point}` is off the {size} board")]
    OffBoard {
        /// The point as written.
        point: String,
        /// The board it was checked against.
        size: BoardSize,
    },
    /// The point already holds a stone.
    #[error("{0} is occupied")]
    Occupied(Point),
    /// The stone would have no liberty and would capture nothing.
    #[error("{0} is suicide: the stone would have no liberty and captures nothing")]
    Suicide(Point),
    /// The move retakes a ko at once, recreating the position before the opponent's move.
    #[error("{0} retakes the ko at once; play elsewhere first")]
    Ko(Point),
    /// The move recreates an earlier position (positional superko).
    #[error("{0} would repeat an earlier whole-board position (positional superko)")]
    Superko(Point),
    /// A move was made as the colour whose turn it is not.
    #[error("it is {to_move}'s turn, not {color}'s")]
    NotYourTurn {
        /// The colour that tried to move.
        color: Color,
        /// The colour whose turn it is.
        to_move: Color,
    },
    /// The game has already ended.
    #[error("the game is over: {0}")]
    GameOver(String),
    /// Komi must be a finite multiple of 0.5 within ±150.
    #[error("bad komi {0}: use a multiple of 0.5 between -150 and 150, such as 7.5")]
    BadKomi(String),
    /// A board diagram could not be read.
    #[error("bad diagram: {0}")]
    BadDiagram(String),
}
