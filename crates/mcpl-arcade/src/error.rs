//! The arcade's one error type. Every variant is a player's or host's mistake, or a games
//! store out of reach: it becomes a tool error (or a refused open) that says what was wrong,
//! and changes nothing.

use crate::go::GoError;

/// The games store could not be reached; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the games store is unreachable: {0}")]
pub struct GameStoreError(pub String);

/// Why the arcade refused a call, an open or a challenge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArcadeError {
    /// The Go engine refused a size, a point or a move.
    #[error(transparent)]
    Go(#[from] GoError),
    /// Options or arguments that do not fit their schema.
    #[error("bad {what}: {why}")]
    BadInput {
        /// Which input (`options`, `move`, `who`, ...).
        what: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The caller has no game under this instance name.
    #[error("no game `{0}` is open for you")]
    NoSuchGame(String),
    /// The game has not started: the challenged agent has not joined yet.
    #[error("the game has not started: waiting for {0} to accept")]
    NotStarted(String),
    /// A player tried to move while the opponent is to move.
    #[error("it is not your turn: {0} is to move")]
    NotYourTurn(String),
    /// An agent challenged itself.
    #[error("you cannot challenge yourself")]
    SelfChallenge,
    /// A challenge exists, but for another board size.
    #[error("{who} challenged you to {size}; open with size {lines} to accept")]
    SizeMismatch {
        /// The challenger.
        who: String,
        /// The challenge's board, such as `13x13`.
        size: String,
        /// The challenge's number of lines.
        lines: u8,
    },
    /// The caller already has a game under this instance name.
    #[error("you already have a game named `{0}`")]
    GameExists(String),
    /// The games store could not be reached.
    #[error(transparent)]
    Store(#[from] GameStoreError),
    /// A stored game that cannot be read back (a move that does not replay, a bad seat).
    #[error("bad stored game: {0}")]
    BadRecord(String),
    /// The server SDK refused the declarations or lost the transport.
    #[error("server: {0}")]
    Server(#[from] mcpl_server::Error),
    /// The tool is not one of the arcade's.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
}
