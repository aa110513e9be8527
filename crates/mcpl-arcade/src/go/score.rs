//! Area scoring with komi: each side's stones plus the empty regions only it touches.
//!
//! This is Tromp-Taylor counting: every stone on the board is taken as alive. Players settle
//! dead stones by capturing them before passing; the bot does, and a game that ends by two
//! passes with dead stones left counts them where they stand.

use std::fmt;

use super::board::{BLACK, Board, EMPTY, WHITE};
use super::coord::Color;
use super::error::GoError;

/// Komi, the points White receives for moving second, kept in half points so that scores
/// compare exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Komi(i16);

impl Komi {
    /// The default komi for area scoring: 7.5, so no game is drawn.
    pub const DEFAULT: Self = Self(15);

    /// Checks a requested komi: finite, a multiple of 0.5, within ±150.
    pub fn new(points: f64) -> Result<Self, GoError> {
        let halves = points * 2.0;
        if !halves.is_finite() || halves.fract() != 0.0 || halves.abs() > 300.0 {
            return Err(GoError::BadKomi(points.to_string()));
        }
        Ok(Self(halves as i16))
    }

    /// Komi in half points (7.5 is 15).
    pub fn halves(self) -> i16 {
        self.0
    }

    /// Komi in points.
    pub fn points(self) -> f64 {
        f64::from(self.0) / 2.0
    }
}

impl Default for Komi {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for Komi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.points())
    }
}

/// The count of a finished (or hypothetically finished) game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    /// Black's stones plus the empty points only Black reaches.
    pub black_area: u32,
    /// White's stones plus the empty points only White reaches.
    pub white_area: u32,
    /// The komi added to White.
    pub komi: Komi,
}

impl Score {
    /// Counts `board` with `komi`.
    pub fn count(board: &Board, komi: Komi) -> Self {
        let [black_area, white_area] = area(board);
        Self {
            black_area,
            white_area,
            komi,
        }
    }

    /// Black's lead over White after komi, in half points (negative when White leads).
    pub fn black_lead_halves(&self) -> i32 {
        2 * (self.black_area as i32 - self.white_area as i32) - i32::from(self.komi.halves())
    }

    /// The winner, or `None` for a draw (only possible with a whole-number komi).
    pub fn winner(&self) -> Option<Color> {
        match self.black_lead_halves() {
            0 => None,
            lead if lead > 0 => Some(Color::Black),
            _ => Some(Color::White),
        }
    }
}

impl fmt::Display for Score {
    /// The usual short form: `B+1.5`, `W+0.5` or `Draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lead = self.black_lead_halves();
        let margin = f64::from(lead.unsigned_abs()) / 2.0;
        match self.winner() {
            None => f.write_str("Draw"),
            Some(Color::Black) => write!(f, "B+{margin}"),
            Some(Color::White) => write!(f, "W+{margin}"),
        }
    }
}

/// Each side's area on `board`: `[black, white]`.
pub(crate) fn area(board: &Board) -> [u32; 2] {
    let lines = usize::from(board.size().lines());
    let stride = lines + 2;
    let mut area = [0u32; 2];
    let mut seen = vec![false; stride * stride];
    let mut stack = Vec::new();
    for row in 1..=lines {
        for col in 1..=lines {
            let p = row * stride + col;
            match board.cell(p) {
                BLACK => area[0] += 1,
                WHITE => area[1] += 1,
                EMPTY if !seen[p] => {
                    // Flood the empty region and note which colours border it.
                    let mut touches = [false; 2];
                    let mut region = 0u32;
                    seen[p] = true;
                    stack.push(p);
                    while let Some(e) = stack.pop() {
                        region += 1;
                        for q in board.neighbors(e) {
                            match board.cell(q) {
                                BLACK => touches[0] = true,
                                WHITE => touches[1] = true,
                                EMPTY if !seen[q] => {
                                    seen[q] = true;
                                    stack.push(q);
                                }
                                _ => {}
                            }
                        }
                    }
                    match touches {
                        [true, false] => area[0] += region,
                        [false, true] => area[1] += region,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
    area
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn komi_is_kept_in_half_points() {
        assert_eq!(Komi::new(7.5).unwrap().halves(), 15);
        assert_eq!(Komi::new(-3.0).unwrap().to_string(), "-3");
        assert!(Komi::new(7.25).is_err());
        assert!(Komi::new(f64::NAN).is_err());
        assert_eq!(
            Komi::new(151.0).unwrap_err().to_string(),
            "bad komi 151: use a multiple of 0.5 between -150 and 150, such as 7.5"
        );
    }

    #[test]
    fn shared_regions_count_for_nobody() {
        let board = Board::from_diagram(
            "
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . X . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . O .",
        )
        .unwrap();
        assert_eq!(area(&board), [1, 1]);
    }

    #[test]
    fn an_empty_board_is_a_win_for_white_by_komi() {
        let score = Score::count(
            &Board::new(super::super::coord::BoardSize::NINE),
            Komi::DEFAULT,
        );
        assert_eq!((score.black_area, score.white_area), (0, 0));
        assert_eq!(score.to_string(), "W+7.5");
        let even = Score::count(
            &Board::new(super::super::coord::BoardSize::NINE),
            Komi::new(0.0).unwrap(),
        );
        assert_eq!(even.winner(), None);
        assert_eq!(even.to_string(), "Draw");
    }
}
