//! The stored form of a [`Table`](crate::Table): compact JSON that replays into the live
//! game.
//!
//! ```json
//! {"options": {"size": 9, "komi": 7.5}, "black": {"agent": {"id": "ada", "instance": "g"}},
//!  "white": "bot", "moves": ["D4", "pass", "E5"], "last_activity_ms": 1780000000000}
//! ```
//!
//! Only the moves are kept of a game: reading a record replays them, so captures, the ko
//! point and the superko history come back as they were. A move that does not replay is an
//! error naming it. A running game has no resignation in it (a table leaves the games when its
//! game ends), so every move replays for the player to move.

use mcpl_server::{ConnectionId, Principal, PrincipalScope};
use serde::{Deserialize, Serialize};

use crate::error::ArcadeError;
use crate::go::{BoardSize, Game, Komi, Move};
use crate::options::{GoOptions, Opponent};
use crate::seat::Seat;

/// A table as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TableRecord {
    options: OptionsRecord,
    black: SeatRecord,
    white: SeatRecord,
    /// The moves in order, as text: `D4`, `pass`.
    moves: Vec<String>,
    last_activity_ms: u64,
}

/// The game's options. `opponent` is absent for the bot (an agent may be named `bot`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OptionsRecord {
    size: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    opponent: Option<String>,
    komi: f64,
}

/// A seat: `"bot"`, or an agent's id with its instance once joined. `connection` marks a
/// principal of one connection (its id is `connection-N`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SeatRecord {
    Bot,
    Agent {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instance: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        connection: bool,
    },
}

impl TableRecord {
    /// The record of a table: its options, its seats (Black, White), its moves as text and
    /// its last activity in unix milliseconds.
    pub(crate) fn of(
        options: &GoOptions,
        seats: [&Seat; 2],
        moves: Vec<String>,
        last_activity_ms: u64,
    ) -> Self {
        TableRecord {
            options: OptionsRecord {
                size: options.size.lines(),
                opponent: match &options.opponent {
                    Opponent::Bot => None,
                    Opponent::Agent(id) => Some(id.clone()),
                },
                komi: options.komi.points(),
            },
            black: SeatRecord::from(seats[0]),
            white: SeatRecord::from(seats[1]),
            moves,
            last_activity_ms,
        }
    }

    /// Replays the record: the options, the game with every move played again, the seats
    /// (Black, White) and the last activity. A move that does not replay is an error naming
    /// it.
    pub(crate) fn replay(self) -> Result<(GoOptions, Game, [Seat; 2], u64), ArcadeError> {
        let record = self;
        let bad = |why: String| ArcadeError::BadRecord(why);
        let size = BoardSize::new(record.options.size.into())?;
        let options = GoOptions {
            size,
            opponent: match record.options.opponent {
                None => Opponent::Bot,
                Some(id) => Opponent::Agent(id),
            },
            komi: Komi::new(record.options.komi)?,
        };
        let mut game = Game::new(size, options.komi);
        for (n, text) in record.moves.iter().enumerate() {
            let replayed = Move::parse(text, size).and_then(|mv| game.play(mv));
            if let Err(e) = replayed {
                return Err(bad(format!("move {} `{text}` does not replay: {e}", n + 1)));
            }
        }
        let seats = [record.black.into_seat()?, record.white.into_seat()?];
        Ok((options, game, seats, record.last_activity_ms))
    }
}

impl From<&Seat> for SeatRecord {
    fn from(seat: &Seat) -> Self {
        match seat {
            Seat::Bot => SeatRecord::Bot,
            Seat::Agent {
                principal,
                instance,
            } => SeatRecord::Agent {
                id: principal.id().to_owned(),
                instance: instance.clone(),
                connection: principal.scope() == PrincipalScope::Connection,
            },
        }
    }
}

impl SeatRecord {
    /// The seat this record stores. A connection's principal whose id is not that
    /// connection's is an error.
    fn into_seat(self) -> Result<Seat, ArcadeError> {
        let SeatRecord::Agent {
            id,
            instance,
            connection,
        } = self
        else {
            return Ok(Seat::Bot);
        };
        let principal = if connection {
            // A per-connection principal is named after its connection: rebuild that one.
            let rebuilt = id
                .strip_prefix("connection-")
                .and_then(|n| n.parse().ok())
                .map(|n| Principal::of_connection(ConnectionId(n)))
                .filter(|p| p.id() == id);
            rebuilt.ok_or_else(|| {
                ArcadeError::BadRecord(format!("`{id}` is not a connection's principal"))
            })?
        } else {
            Principal::authenticated(id)
        };
        Ok(Seat::Agent {
            principal,
            instance,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_seat_with_a_foreign_id_is_refused() {
        let seat = SeatRecord::Agent {
            id: "ada".to_owned(),
            instance: None,
            connection: true,
        };
        let err = seat.into_seat().unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad stored game: `ada` is not a connection's principal"
        );
    }
}
