//! The text board: coordinates on all four sides, star points, the last move in brackets,
//! captures and whose turn it is.
//!
//! ```text
//!    A B C D E F G H J
//!  9 . . . . . . . . .  9
//!  ...
//!  5 . . . .(X). . . .  5
//!  ...
//! ```

use std::fmt::Write;

use super::coord::{Color, Point, column_letter};
use super::rules::{Game, Move};

impl Game {
    /// The board as text for a player or a model to read.
    pub fn render(&self) -> String {
        let size = self.size();
        let lines = size.lines();
        let last = self.last_move().and_then(|turn| match turn.mv {
            Move::Play(point) => Some(point),
            _ => None,
        });
        let letters: String = (0..lines)
            .map(|c| format!(" {}", column_letter(c)))
            .collect();
        let mut out = String::new();
        let _ = writeln!(out, "  {letters}");
        for row in (0..lines).rev() {
            let _ = write!(out, "{:>2}", row + 1);
            for col in 0..lines {
                let point = Point::new(col, row, size).expect("in range by construction");
                let before_last =
                    col > 0 && last.is_some_and(|l| l.row() == row && l.col() == col - 1);
                out.push(if last == Some(point) {
                    '('
                } else if before_last {
                    ')'
                } else {
                    ' '
                });
                out.push(match self.board().get(point) {
                    Some(color) => color.stone_char(),
                    None if is_star(lines, col, row) => '+',
                    None => '.',
                });
            }
            let closes = last.is_some_and(|l| l.row() == row && l.col() == lines - 1);
            out.push(if closes { ')' } else { ' ' });
            let _ = writeln!(out, "{:>2}", row + 1);
        }
        let _ = writeln!(out, "  {letters}");
        let _ = writeln!(
            out,
            "Captured: {} by Black (X), {} by White (O). Komi {}.",
            self.captures(Color::Black),
            self.captures(Color::White),
            self.komi()
        );
        match self.last_move() {
            Some(turn) => {
                let _ = write!(out, "Move {}: {} ", self.history().len(), turn.color);
                let _ = match turn.mv {
                    Move::Play(point) => write!(out, "played {point}"),
                    Move::Pass => write!(out, "passed"),
                    Move::Resign => write!(out, "resigned"),
                };
                if !turn.captured.is_empty() {
                    let _ = write!(out, ", capturing {}", turn.captured.len());
                }
                out.push_str(".\n");
            }
            None => out.push_str("No moves yet.\n"),
        }
        match self.outcome() {
            Some(outcome) => {
                let _ = writeln!(out, "Game over: {outcome}.");
            }
            None => {
                let color = self.to_move();
                let _ = writeln!(out, "{color} ({}) to move.", color.stone_char());
            }
        }
        out
    }
}

/// The traditional star points: the 3-3 (9x9) or 4-4 points and the centre, plus the side
/// stars on 19x19.
fn is_star(lines: u8, col: u8, row: u8) -> bool {
    let edge = if lines == 9 { 2 } else { 3 };
    let mid = lines / 2;
    let far = lines - 1 - edge;
    let on = |v: u8| v == edge || v == far || (lines == 19 && v == mid);
    (on(col) && on(row)) || (col == mid && row == mid)
}

#[cfg(test)]
mod tests {
    use super::super::{BoardSize, Komi};
    use super::*;

    #[test]
    fn the_last_move_is_bracketed_and_captures_are_shown() {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        for text in ["E5", "J9", "pass", "J1"] {
            game.play(Move::parse(text, game.size()).unwrap()).unwrap();
        }
        let board = game.render();
        let expected = "   A B C D E F G H J
 9 . . . . . . . . O  9
 8 . . . . . . . . .  8
 7 . . + . . . + . .  7
 6 . . . . . . . . .  6
 5 . . . . X . . . .  5
 4 . . . . . . . . .  4
 3 . . + . . . + . .  3
 2 . . . . . . . . .  2
 1 . . . . . . . .(O) 1
   A B C D E F G H J
Captured: 0 by Black (X), 0 by White (O). Komi 7.5.
Move 4: White played J1.
Black (X) to move.
";
        assert_eq!(board, expected);
    }

    #[test]
    fn a_mid_board_last_move_closes_its_bracket_on_the_next_cell() {
        let mut game = Game::new(BoardSize::THIRTEEN, Komi::DEFAULT);
        game.play(Move::parse("D4", game.size()).unwrap()).unwrap();
        let board = game.render();
        assert!(
            board.contains(" 4 . . .(X). . . . . + . . .  4\n"),
            "{board}"
        );
        assert!(board.contains("White (O) to move."));
    }
}
