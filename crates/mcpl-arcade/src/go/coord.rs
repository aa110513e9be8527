//! Board sizes, colours and points, and the text form of a point ("D4").
//!
//! Columns are lettered from the left, `A` to `T` without `I` (so it is never read as `J` or
//! `1`); rows are numbered from 1 at the bottom. `Point` itself carries no board size: parsing
//! (in `checked`) checks the point against the size it is given.

use std::fmt;

/// Column letters in order; `I` is skipped by convention.
pub(super) const COLUMNS: &[u8; 19] = b"ABCDEFGHJKLMNOPQRST";

/// A board size the engine plays on: 9, 13 or 19.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoardSize(pub(super) u8);

impl BoardSize {
    /// The 9x9 board.
    pub const NINE: Self = Self(9);
    /// The 13x13 board.
    pub const THIRTEEN: Self = Self(13);
    /// The 19x19 board.
    pub const NINETEEN: Self = Self(19);
    /// Every supported size, smallest first.
    pub const ALL: [Self; 3] = [Self::NINE, Self::THIRTEEN, Self::NINETEEN];

    /// The number of lines each way.
    pub fn lines(self) -> u8 {
        self.0
    }

    /// The number of points on the board.
    pub fn points(self) -> usize {
        usize::from(self.0) * usize::from(self.0)
    }
}

impl fmt::Display for BoardSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{0}x{0}", self.0)
    }
}

/// A player's colour. Black moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// The first player, drawn as `X`.
    Black,
    /// The second player, drawn as `O`; komi is added to White's score.
    White,
}

impl Color {
    /// The other colour.
    pub fn opponent(self) -> Self {
        match self {
            Self::Black => Self::White,
            Self::White => Self::Black,
        }
    }

    /// The character the text board draws for this colour's stones.
    pub fn stone_char(self) -> char {
        match self {
            Self::Black => 'X',
            Self::White => 'O',
        }
    }

    /// 0 for Black, 1 for White: an index into per-colour arrays.
    pub fn index(self) -> usize {
        match self {
            Self::Black => 0,
            Self::White => 1,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Black => "Black",
            Self::White => "White",
        })
    }
}

/// An intersection: `col` 0 is column `A`, `row` 0 is row `1` (the bottom line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    pub(super) col: u8,
    pub(super) row: u8,
}

impl Point {
    /// Zero-based column, 0 being `A`.
    pub fn col(self) -> u8 {
        self.col
    }

    /// Zero-based row, 0 being the bottom line (`1`).
    pub fn row(self) -> u8 {
        self.row
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            char::from(COLUMNS[usize::from(self.col)]),
            u16::from(self.row) + 1
        )
    }
}

/// The letter of column `col` (0 is `A`), for drawing the board's edges.
pub(crate) fn column_letter(col: u8) -> char {
    char::from(COLUMNS[usize::from(col)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_round_trip_on_every_size() {
        for size in BoardSize::ALL {
            for col in 0..size.lines() {
                for row in 0..size.lines() {
                    let p = Point::new(col, row, size).unwrap();
                    assert_eq!(Point::parse(&p.to_string(), size).unwrap(), p);
                }
            }
        }
    }

    #[test]
    fn columns_skip_i_and_rows_count_from_the_bottom() {
        let nine = BoardSize::NINE;
        let j1 = Point::parse("J1", nine).unwrap();
        assert_eq!((j1.col(), j1.row()), (8, 0));
        let d4 = Point::parse(" d4 ", nine).unwrap();
        assert_eq!((d4.col(), d4.row()), (3, 3));
        assert_eq!(
            Point::parse("T19", BoardSize::NINETEEN)
                .unwrap()
                .to_string(),
            "T19"
        );
    }

    #[test]
    fn malformed_points_say_what_is_wrong() {
        let nine = BoardSize::NINE;
        let msg = |s: &str| Point::parse(s, nine).unwrap_err().to_string();
        assert!(msg("").contains("empty"));
        assert!(msg("I5").contains("column I is not used"));
        assert!(msg("5D").contains("column letter"));
        assert!(msg("D").contains("missing the row"));
        assert!(msg("D4x").contains("must be a number"));
        assert!(msg("D04").contains("leading zero"));
        assert!(msg("D0").contains("leading zero"));
        assert!(msg("D99999999999").contains("too large"));
        assert_eq!(msg("K1"), "`K1` is off the 9x9 board");
        assert_eq!(msg("A10"), "`A10` is off the 9x9 board");
    }

    #[test]
    fn only_three_sizes_are_supported() {
        assert!(BoardSize::new(9).is_ok());
        assert!(BoardSize::new(13).is_ok());
        assert!(BoardSize::new(19).is_ok());
        assert_eq!(
            BoardSize::new(10).unwrap_err().to_string(),
            "unsupported board size 10: use 9, 13 or 19"
        );
    }
}
