//! One game of Go as the arcade keeps it: the options, two seats, the engine's `Game` and
//! when someone last moved (wall-clock, so any replica can judge idleness).
//!
//! `Table` is the clean game-level API the server wraps: it knows who sits where and whose
//! turn it is, and every change returns what changed (`Played`) or a refusal that changed
//! nothing. It knows nothing of MCPL. It holds no bot: the arcade builds one for each of the
//! bot's turns. Its stored form is in `record`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcpl_protocol::mcp::Tool;
use mcpl_server::Principal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;

use crate::error::ArcadeError;
use crate::go::{Color, Game, Move, Outcome, Played};
use crate::options::GoOptions;
use crate::record::TableRecord;
pub use crate::seat::Seat;

// The stored form by hand, as `#[serde(into = "TableRecord", try_from = "TableRecord")]` would
// do it, but without `impl From<Table> for TableRecord`: tools that count an impl's methods as
// part of the module defining the type (cargo-modules) would make that one `record`'s, and
// `record` would depend on `table`, which depends on it.
impl Serialize for Table {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_record().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let record = TableRecord::deserialize(deserializer)?;
        Table::try_from(record).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<TableRecord> for Table {
    type Error = ArcadeError;

    fn try_from(record: TableRecord) -> Result<Self, ArcadeError> {
        let (options, game, seats, last_activity_ms) = record.replay()?;
        Ok(Table::from_parts(options, game, seats, last_activity_ms))
    }
}

/// One game: options, seats and the game.
///
/// Serialized compactly as a record: the options, the seats, the moves as text and the last
/// activity in unix milliseconds; reading one replays the moves.
#[derive(Debug, Clone)]
pub struct Table {
    options: GoOptions,
    game: Game,
    black: Seat,
    white: Seat,
    /// Unix milliseconds: whole milliseconds, so the stored form is exact.
    last_activity: u64,
}

/// `t` in whole unix milliseconds (0 before 1970).
pub(crate) fn unix_millis(t: SystemTime) -> u64 {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// Two tables are equal when they hold the same options, seats, moves and last activity
/// (the rest of a `Game` follows from its moves).
impl PartialEq for Table {
    fn eq(&self, other: &Self) -> bool {
        self.options == other.options
            && self.black == other.black
            && self.white == other.white
            && self.last_activity == other.last_activity
            && self.game.history() == other.game.history()
    }
}

impl Table {
    /// A new game, last active `now`.
    pub fn new(options: GoOptions, black: Seat, white: Seat, now: SystemTime) -> Self {
        Self {
            game: Game::new(options.size, options.komi),
            options,
            black,
            white,
            last_activity: unix_millis(now),
        }
    }

    /// A table from its parts, as `record` rebuilds it.
    pub(crate) fn from_parts(
        options: GoOptions,
        game: Game,
        [black, white]: [Seat; 2],
        last_activity: u64,
    ) -> Self {
        Self {
            options,
            game,
            black,
            white,
            last_activity,
        }
    }

    /// The options the game was opened with.
    pub fn options(&self) -> &GoOptions {
        &self.options
    }

    /// The game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Who plays `color`.
    pub fn seat(&self, color: Color) -> &Seat {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    /// When a player last moved (or the game was opened), to the millisecond.
    pub fn last_activity(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.last_activity)
    }

    /// [`last_activity`](Self::last_activity) in unix milliseconds.
    pub(crate) fn last_activity_millis(&self) -> u64 {
        self.last_activity
    }

    /// The table's stored form: its options, its seats, its moves as text and its last
    /// activity.
    pub(crate) fn to_record(&self) -> TableRecord {
        let moves = self
            .game()
            .history()
            .iter()
            .map(|turn| turn.mv.to_string())
            .collect();
        TableRecord::of(
            self.options(),
            [self.seat(Color::Black), self.seat(Color::White)],
            moves,
            self.last_activity_millis(),
        )
    }

    /// The colour `principal` plays in `instance`, if that is one of its seats.
    pub fn color_of(&self, principal: &Principal, instance: &str) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|&c| self.seat(c).joined() == Some((principal, instance)))
    }

    /// The agents at this table, joined or challenged (none, one or two).
    pub fn agents(&self) -> impl Iterator<Item = &Principal> {
        [&self.black, &self.white]
            .into_iter()
            .filter_map(|seat| seat.principal())
    }

    /// Whether both players are seated.
    pub fn started(&self) -> bool {
        [&self.black, &self.white]
            .iter()
            .all(|s| matches!(s, Seat::Bot) || s.joined().is_some())
    }

    /// Seats the challenged agent, which plays `color`, in `instance`.
    pub fn join(&mut self, color: Color, instance: &str, now: SystemTime) {
        let seat = match color {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        };
        if let Seat::Agent { instance: slot, .. } = seat {
            *slot = Some(instance.to_owned());
        }
        self.last_activity = unix_millis(now);
    }

    /// A challenge nobody accepted yet: the challenger (Black) and the challenged agent.
    pub fn pending_challenge(&self) -> Option<(&Principal, &Principal)> {
        match (&self.black, &self.white) {
            (
                Seat::Agent {
                    principal: from, ..
                },
                Seat::Agent {
                    principal: to,
                    instance: None,
                },
            ) => Some((from, to)),
            _ => None,
        }
    }

    /// Whether the bot is to move in a running game.
    pub fn bot_to_move(&self) -> bool {
        !self.game.is_over() && *self.seat(self.game.to_move()) == Seat::Bot
    }

    /// Plays `mv` for `color`. Refused, with nothing changed, when the game has not started,
    /// when it is the other player's turn (except for resigning) or when the rules forbid it.
    pub fn play(&mut self, color: Color, mv: Move, now: SystemTime) -> Result<Played, ArcadeError> {
        if !self.started() {
            return Err(ArcadeError::NotStarted(self.seat(color.opponent()).name()));
        }
        let to_move = self.game.to_move();
        if color != to_move && mv != Move::Resign && !self.game.is_over() {
            return Err(ArcadeError::NotYourTurn(format!(
                "{} ({to_move})",
                self.seat(to_move).name()
            )));
        }
        let played = self.game.play_as(color, mv)?;
        self.last_activity = unix_millis(now);
        Ok(played)
    }

    /// The definition of `play` for `color` now: the legal points as an enum (§5.5). `None`
    /// when no point is legal (only `pass` is left).
    pub fn play_definition(&self) -> Option<Tool> {
        let moves: Vec<String> = self
            .game
            .legal_moves()
            .iter()
            .map(ToString::to_string)
            .collect();
        if moves.is_empty() {
            return None;
        }
        let mut tool = Tool::new("play");
        tool.description = Some(json!(
            "Play a move. Only legal moves are offered: columns A-T without I, rows from 1 at \
             the bottom."
        ));
        tool.input_schema = json!({
            "type": "object",
            "required": ["move"],
            "properties": {"move": {"type": "string", "enum": moves}},
            "additionalProperties": false
        });
        Some(tool)
    }

    /// How the end reads to the player of `color`.
    pub fn result_for(&self, color: Color, outcome: &Outcome) -> String {
        let verdict = match outcome.winner() {
            None => "It is a draw.".to_owned(),
            Some(w) if w == color => "You win.".to_owned(),
            Some(_) => match self.seat(color.opponent()) {
                Seat::Bot => "The bot wins.".to_owned(),
                agent => format!("{} wins.", agent.name()),
            },
        };
        match outcome {
            Outcome::Scored(score) => format!(
                "Game over: {outcome} (Black {}, White {} + komi {}). {verdict}",
                score.black_area, score.white_area, score.komi
            ),
            Outcome::Resigned { winner } if *winner == color => format!(
                "Your opponent ({}) resigned. {verdict}",
                self.seat(color.opponent()).name()
            ),
            Outcome::Resigned { .. } => format!("You resigned. {verdict}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::{BoardSize, Komi, Point};
    use crate::options::Opponent;

    fn agents(white_joined: bool) -> Table {
        let options = GoOptions {
            size: BoardSize::NINE,
            opponent: Opponent::Agent("bob".into()),
            komi: Komi::DEFAULT,
        };
        let black = Seat::Agent {
            principal: Principal::authenticated("alice"),
            instance: Some("vs-bob".into()),
        };
        let white = Seat::Agent {
            principal: Principal::authenticated("bob"),
            instance: white_joined.then(|| "vs-alice".to_owned()),
        };
        Table::new(options, black, white, UNIX_EPOCH)
    }

    fn d4() -> Move {
        Move::Play(Point::parse("D4", BoardSize::NINE).unwrap())
    }

    #[test]
    fn nobody_moves_before_the_challenged_agent_joins() {
        let mut table = agents(false);
        assert!(!table.started());
        let err = table.play(Color::Black, d4(), UNIX_EPOCH).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the game has not started: waiting for bob to accept"
        );
        assert!(table.game().history().is_empty());
    }

    #[test]
    fn a_move_out_of_turn_is_refused_and_changes_nothing() {
        let mut table = agents(true);
        let err = table.play(Color::White, d4(), UNIX_EPOCH).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is not your turn: alice (Black) is to move"
        );
        table.play(Color::Black, d4(), UNIX_EPOCH).unwrap();
        let before = table.game().render();
        let err = table.play(Color::White, d4(), UNIX_EPOCH).unwrap_err();
        assert_eq!(err.to_string(), "D4 is occupied");
        assert_eq!(table.game().render(), before);
        assert_eq!(table.game().to_move(), Color::White);
    }

    #[test]
    fn resigning_is_allowed_out_of_turn_and_reads_well_for_both() {
        let mut table = agents(true);
        let played = table.play(Color::White, Move::Resign, UNIX_EPOCH).unwrap();
        let outcome = played.outcome.unwrap();
        assert_eq!(
            table.result_for(Color::White, &outcome),
            "You resigned. alice wins."
        );
        assert_eq!(
            table.result_for(Color::Black, &outcome),
            "Your opponent (bob) resigned. You win."
        );
    }

    #[test]
    fn seats_know_their_agents() {
        let table = agents(true);
        let alice = Principal::authenticated("alice");
        assert_eq!(table.color_of(&alice, "vs-bob"), Some(Color::Black));
        assert_eq!(table.color_of(&alice, "vs-alice"), None);
        assert_eq!(table.seat(Color::White).name(), "bob");
        let definition = table.play_definition().unwrap();
        assert_eq!(
            definition.input_schema["properties"]["move"]["enum"]
                .as_array()
                .unwrap()
                .len(),
            81
        );
    }
}

// A table is stored as a `TableRecord`: it must come back as it went.
#[cfg(test)]
mod stored_tests {
    use std::time::UNIX_EPOCH;

    use mcpl_server::{ConnectionId, Principal, PrincipalScope};

    use super::{Seat, Table};
    use crate::go::{BoardSize, Color, Komi};
    use crate::options::{GoOptions, Opponent};

    fn round_trip(table: &Table) -> Table {
        let text = serde_json::to_string(table).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_connections_principal_comes_back_as_that_connections() {
        let options = GoOptions {
            size: BoardSize::NINE,
            opponent: Opponent::Bot,
            komi: Komi::new(6.5).unwrap(),
        };
        let black = Seat::Agent {
            principal: Principal::of_connection(ConnectionId(7)),
            instance: Some("g".to_owned()),
        };
        let table = Table::new(options, black, Seat::Bot, UNIX_EPOCH);
        let back = round_trip(&table);
        assert_eq!(back, table);
        let principal = back.seat(Color::Black).principal().unwrap();
        assert_eq!(principal.scope(), PrincipalScope::Connection);
        assert_eq!(principal.id(), "connection-7");
    }

    #[test]
    fn an_agent_named_bot_stays_an_agent() {
        let options = GoOptions {
            size: BoardSize::THIRTEEN,
            opponent: Opponent::Agent("bot".to_owned()),
            komi: Komi::DEFAULT,
        };
        let black = Seat::Agent {
            principal: Principal::authenticated("ada"),
            instance: Some("vs-bot".to_owned()),
        };
        let white = Seat::Agent {
            principal: Principal::authenticated("bot"),
            instance: None,
        };
        let table = Table::new(options, black, white, UNIX_EPOCH);
        assert_eq!(round_trip(&table), table);
    }
}
