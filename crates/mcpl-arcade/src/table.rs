//! One game of Go as the arcade keeps it: the options, two seats, the engine's `Game`, the
//! bot (when one plays) and when someone last moved.
//!
//! `Table` is the clean game-level API the server wraps: it knows who sits where and whose
//! turn it is, and every change returns what changed (`Played`) or a refusal that changed
//! nothing. It knows nothing of MCPL.

use std::time::Instant;

use mcpl_protocol::mcp::Tool;
use mcpl_server::Principal;
use serde_json::json;

use crate::error::ArcadeError;
use crate::go::{Bot, BotConfig, Color, Game, Move, Outcome, Played};
use crate::options::GoOptions;

/// Who sits on one side of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seat {
    /// The arcade's bot.
    Bot,
    /// An agent, with the instance name it plays in; `None` until it accepts a challenge.
    Agent {
        /// The agent.
        principal: Principal,
        /// Its instance of the `go` toolset, once it has joined.
        instance: Option<String>,
    },
}

impl Seat {
    /// The seat's agent, if an agent sits there.
    pub fn principal(&self) -> Option<&Principal> {
        match self {
            Self::Bot => None,
            Self::Agent { principal, .. } => Some(principal),
        }
    }

    /// The agent and its instance, once joined.
    pub fn joined(&self) -> Option<(&Principal, &str)> {
        match self {
            Self::Agent {
                principal,
                instance: Some(instance),
            } => Some((principal, instance)),
            _ => None,
        }
    }

    /// How the other player is named in messages.
    pub fn name(&self) -> String {
        match self {
            Self::Bot => "the bot".to_owned(),
            Self::Agent { principal, .. } => principal.id().to_owned(),
        }
    }
}

/// One game: options, seats, the game and its bot.
#[derive(Debug, Clone)]
pub struct Table {
    options: GoOptions,
    game: Game,
    black: Seat,
    white: Seat,
    bot: Option<Bot>,
    last_activity: Instant,
}

impl Table {
    /// A new game; a bot seat gets a bot with `bot`.
    pub fn new(options: GoOptions, black: Seat, white: Seat, bot: BotConfig, now: Instant) -> Self {
        let has_bot = black == Seat::Bot || white == Seat::Bot;
        Self {
            game: Game::new(options.size, options.komi),
            options,
            black,
            white,
            bot: has_bot.then(|| Bot::new(bot)),
            last_activity: now,
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

    /// When a player last moved (or the game was opened).
    pub fn last_activity(&self) -> Instant {
        self.last_activity
    }

    /// The colour `principal` plays in `instance`, if that is one of its seats.
    pub fn color_of(&self, principal: &Principal, instance: &str) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|&c| self.seat(c).joined() == Some((principal, instance)))
    }

    /// Whether both players are seated.
    pub fn started(&self) -> bool {
        [&self.black, &self.white]
            .iter()
            .all(|s| matches!(s, Seat::Bot) || s.joined().is_some())
    }

    /// Seats the challenged agent, which plays `color`, in `instance`.
    pub fn join(&mut self, color: Color, instance: &str, now: Instant) {
        let seat = match color {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        };
        if let Seat::Agent { instance: slot, .. } = seat {
            *slot = Some(instance.to_owned());
        }
        self.last_activity = now;
    }

    /// Whether the bot is to move in a running game.
    pub fn bot_to_move(&self) -> bool {
        !self.game.is_over() && *self.seat(self.game.to_move()) == Seat::Bot
    }

    /// Plays `mv` for `color`. Refused, with nothing changed, when the game has not started,
    /// when it is the other player's turn (except for resigning) or when the rules forbid it.
    pub fn play(&mut self, color: Color, mv: Move, now: Instant) -> Result<Played, ArcadeError> {
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
        self.last_activity = now;
        Ok(played)
    }

    /// Lets the bot choose a move without holding the table: the bot and a copy of the game.
    pub fn take_bot(&mut self) -> Option<(Bot, Game)> {
        self.bot.take().map(|bot| (bot, self.game.clone()))
    }

    /// Gives the bot back after it thought.
    pub fn return_bot(&mut self, bot: Bot) {
        self.bot = Some(bot);
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
        Table::new(options, black, white, BotConfig::default(), Instant::now())
    }

    fn d4() -> Move {
        Move::Play(Point::parse("D4", BoardSize::NINE).unwrap())
    }

    #[test]
    fn nobody_moves_before_the_challenged_agent_joins() {
        let mut table = agents(false);
        assert!(!table.started());
        let err = table.play(Color::Black, d4(), Instant::now()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the game has not started: waiting for bob to accept"
        );
        assert!(table.game().history().is_empty());
    }

    #[test]
    fn a_move_out_of_turn_is_refused_and_changes_nothing() {
        let mut table = agents(true);
        let err = table.play(Color::White, d4(), Instant::now()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is not your turn: alice (Black) is to move"
        );
        table.play(Color::Black, d4(), Instant::now()).unwrap();
        let before = table.game().render();
        let err = table.play(Color::White, d4(), Instant::now()).unwrap_err();
        assert_eq!(err.to_string(), "D4 is occupied");
        assert_eq!(table.game().render(), before);
        assert_eq!(table.game().to_move(), Color::White);
    }

    #[test]
    fn resigning_is_allowed_out_of_turn_and_reads_well_for_both() {
        let mut table = agents(true);
        let played = table
            .play(Color::White, Move::Resign, Instant::now())
            .unwrap();
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
