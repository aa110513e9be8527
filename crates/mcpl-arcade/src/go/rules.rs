//! A game of Go under area rules: turns, captures, suicide refused, positional superko,
//! passes, resignation and the final count.
//!
//! `Game` is the whole state of one game and the only thing a server needs to wrap: every
//! method that changes it returns what changed (`Played`), and every refusal (`GoError`) leaves
//! it as it was.

use std::collections::HashSet;
use std::fmt;

use super::board::{Board, Refusal};
use super::coord::{BoardSize, Color, Point};
use super::error::GoError;
use super::score::{Komi, Score};

/// One player's action on their turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A stone on a point.
    Play(Point),
    /// No stone; two passes in a row end the game.
    Pass,
    /// Concede the game.
    Resign,
}

impl Move {
    /// Reads `pass`, `resign` (any case) or a point such as `D4` on a board of `size`.
    pub fn parse(text: &str, size: BoardSize) -> Result<Self, GoError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pass" => Ok(Self::Pass),
            "resign" => Ok(Self::Resign),
            _ => Point::parse(text, size).map(Self::Play),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Play(point) => point.fmt(f),
            Self::Pass => f.write_str("pass"),
            Self::Resign => f.write_str("resign"),
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Two passes in a row; the board was counted.
    Scored(Score),
    /// A player resigned.
    Resigned {
        /// The player who did not resign.
        winner: Color,
    },
}

impl Outcome {
    /// The winner, or `None` for a drawn count.
    pub fn winner(&self) -> Option<Color> {
        match self {
            Self::Scored(score) => score.winner(),
            Self::Resigned { winner } => Some(*winner),
        }
    }
}

impl fmt::Display for Outcome {
    /// `B+1.5`, `W+R` (resignation) or `Draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scored(score) => score.fmt(f),
            Self::Resigned {
                winner: Color::Black,
            } => f.write_str("B+R"),
            Self::Resigned {
                winner: Color::White,
            } => f.write_str("W+R"),
        }
    }
}

/// One entry of the move history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Who moved.
    pub color: Color,
    /// What they did.
    pub mv: Move,
    /// The stones the move took off the board (empty for passes and resignations).
    pub captured: Vec<Point>,
}

/// What one accepted move changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    /// The move as recorded in the history.
    pub turn: Turn,
    /// `Some` when this move ended the game.
    pub outcome: Option<Outcome>,
}

/// One game: the board, whose turn it is, the history and the result.
#[derive(Debug, Clone)]
pub struct Game {
    board: Board,
    komi: Komi,
    to_move: Color,
    history: Vec<Turn>,
    /// The position after each turn, `positions[0]` being the start: tells a ko retake
    /// (the position before the opponent's move) from a longer cycle.
    positions: Vec<u64>,
    /// Every position seen so far, for positional superko.
    seen: HashSet<u64>,
    captures: [u32; 2],
    passes: u8,
    outcome: Option<Outcome>,
}

impl Game {
    /// A new game on an empty board, Black to move.
    pub fn new(size: BoardSize, komi: Komi) -> Self {
        Self::from_board(Board::new(size), Color::Black, komi)
    }

    /// A game that starts from a drawn position (see `Board::from_diagram`) with `to_move` to
    /// play. The start position counts as seen for superko.
    pub fn from_diagram(diagram: &str, to_move: Color, komi: Komi) -> Result<Self, GoError> {
        Ok(Self::from_board(
            Board::from_diagram(diagram)?,
            to_move,
            komi,
        ))
    }

    fn from_board(board: Board, to_move: Color, komi: Komi) -> Self {
        let start = board.hash();
        Self {
            board,
            komi,
            to_move,
            history: Vec::new(),
            positions: vec![start],
            seen: HashSet::from([start]),
            captures: [0, 0],
            passes: 0,
            outcome: None,
        }
    }

    /// The board's size.
    pub fn size(&self) -> BoardSize {
        self.board.size()
    }

    /// The komi White receives.
    pub fn komi(&self) -> Komi {
        self.komi
    }

    /// The current position.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// Whose turn it is (after the end: who would have moved next).
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Every move so far, oldest first.
    pub fn history(&self) -> &[Turn] {
        &self.history
    }

    /// The most recent move.
    pub fn last_move(&self) -> Option<&Turn> {
        self.history.last()
    }

    /// How many stones `color` has captured.
    pub fn captures(&self, color: Color) -> u32 {
        self.captures[color.index()]
    }

    /// How many passes in a row ended the history (0, 1, or 2 once the game is over).
    pub fn consecutive_passes(&self) -> u8 {
        self.passes
    }

    /// How the game ended, or `None` while it runs.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Whether the game has ended.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// The count if the game ended now (area scoring with komi, all stones alive).
    pub fn score(&self) -> Score {
        Score::count(&self.board, self.komi)
    }

    /// Whether the player to move may put a stone on `point`, and if not, why.
    pub fn check(&self, point: Point) -> Result<(), GoError> {
        if let Some(outcome) = self.outcome {
            return Err(GoError::GameOver(outcome.to_string()));
        }
        if point.col() >= self.size().lines() || point.row() >= self.size().lines() {
            return Err(GoError::OffBoard {
                point: point.to_string(),
                size: self.size(),
            });
        }
        let p = self.board.index(point);
        match self.board.check(p, self.to_move) {
            Err(Refusal::Occupied) => return Err(GoError::Occupied(point)),
            Err(Refusal::Suicide) => return Err(GoError::Suicide(point)),
            Ok(()) => {}
        }
        let after = self.board.hash_after(p, self.to_move);
        if self.seen.contains(&after) {
            let before_last = self
                .positions
                .len()
                .checked_sub(2)
                .map(|i| self.positions[i]);
            return Err(if before_last == Some(after) {
                GoError::Ko(point)
            } else {
                GoError::Superko(point)
            });
        }
        Ok(())
    }

    /// Exactly the points the player to move may play, column by column (`A1`, `A2`, ...).
    /// Passing and resigning are always allowed while the game runs and are not listed. Empty
    /// once the game is over.
    pub fn legal_moves(&self) -> Vec<Point> {
        if self.is_over() {
            return Vec::new();
        }
        let color = self.to_move;
        let mut moves: Vec<Point> = self
            .board
            .empties()
            .iter()
            .map(|&p| usize::from(p))
            .filter(|&p| {
                self.board.check(p, color).is_ok()
                    && !self.seen.contains(&self.board.hash_after(p, color))
            })
            .map(|p| self.board.point(p))
            .collect();
        moves.sort_unstable();
        moves
    }

    /// Plays `mv` for the player to move.
    pub fn play(&mut self, mv: Move) -> Result<Played, GoError> {
        self.play_as(self.to_move, mv)
    }

    /// Plays `mv` for `color`. A stone or a pass must be on `color`'s turn; a resignation may
    /// come at any time.
    pub fn play_as(&mut self, color: Color, mv: Move) -> Result<Played, GoError> {
        if let Some(outcome) = self.outcome {
            return Err(GoError::GameOver(outcome.to_string()));
        }
        if color != self.to_move && mv != Move::Resign {
            return Err(GoError::NotYourTurn {
                color,
                to_move: self.to_move,
            });
        }
        let mut captured = Vec::new();
        let mut outcome = None;
        match mv {
            Move::Play(point) => {
                self.check(point)?;
                let p = self.board.index(point);
                let (heads, n) = self.board.captured_heads(p, color);
                for &h in &heads[..n] {
                    captured.extend(self.board.group_stones(h).map(|s| self.board.point(s)));
                }
                captured.sort_unstable();
                let taken = self.board.play(p, color);
                debug_assert_eq!(taken as usize, captured.len());
                self.captures[color.index()] += taken;
                self.passes = 0;
                self.seen.insert(self.board.hash());
            }
            Move::Pass => {
                self.board.pass();
                self.passes += 1;
                if self.passes >= 2 {
                    outcome = Some(Outcome::Scored(self.score()));
                }
            }
            Move::Resign => {
                outcome = Some(Outcome::Resigned {
                    winner: color.opponent(),
                });
            }
        }
        self.positions.push(self.board.hash());
        let turn = Turn {
            color,
            mv,
            captured,
        };
        self.history.push(turn.clone());
        if mv != Move::Resign {
            self.to_move = color.opponent();
        }
        self.outcome = outcome;
        Ok(Played { turn, outcome })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(game: &Game, text: &str) -> Point {
        Point::parse(text, game.size()).unwrap()
    }

    #[test]
    fn moves_alternate_and_are_recorded() {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        let d4 = pt(&game, "D4");
        game.play(Move::Play(d4)).unwrap();
        assert_eq!(game.to_move(), Color::White);
        assert_eq!(game.board().get(d4), Some(Color::Black));
        assert_eq!(
            game.play_as(Color::Black, Move::Pass)
                .unwrap_err()
                .to_string(),
            "it is White's turn, not Black's"
        );
        assert_eq!(
            game.play(Move::Play(d4)).unwrap_err().to_string(),
            "D4 is occupied"
        );
        assert_eq!(game.history().len(), 1);
        assert_eq!(game.last_move().unwrap().mv, Move::Play(d4));
    }

    #[test]
    fn two_passes_end_the_game_and_then_nothing_is_accepted() {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        assert!(game.play(Move::Pass).unwrap().outcome.is_none());
        let ended = game.play(Move::Pass).unwrap();
        assert_eq!(ended.outcome.unwrap().to_string(), "W+7.5");
        assert!(game.legal_moves().is_empty());
        assert_eq!(
            game.play(Move::Pass).unwrap_err().to_string(),
            "the game is over: W+7.5"
        );
    }

    #[test]
    fn a_pass_between_plays_resets_the_count() {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        game.play(Move::Pass).unwrap();
        game.play(Move::Play(pt(&game, "E5"))).unwrap();
        game.play(Move::Pass).unwrap();
        assert!(!game.is_over());
        assert_eq!(game.consecutive_passes(), 1);
    }

    #[test]
    fn resignation_may_come_out_of_turn() {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        let played = game.play_as(Color::White, Move::Resign).unwrap();
        assert_eq!(
            played.outcome,
            Some(Outcome::Resigned {
                winner: Color::Black
            })
        );
        assert_eq!(game.outcome().unwrap().to_string(), "B+R");
    }

    #[test]
    fn move_text_reads_pass_resign_and_points() {
        let nine = BoardSize::NINE;
        assert_eq!(Move::parse("Pass", nine).unwrap(), Move::Pass);
        assert_eq!(Move::parse("RESIGN", nine).unwrap(), Move::Resign);
        assert_eq!(Move::parse("c3", nine).unwrap().to_string(), "C3");
        assert!(Move::parse("passs", nine).is_err());
    }
}
