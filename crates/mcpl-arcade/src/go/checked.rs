//! The constructors that check their input against the rules (sizes, points on a board),
//! refusing with a [`GoError`]. Kept apart from `coord`'s plain values so that the error type,
//! which names points and colours, sits above them.

use super::coord::{BoardSize, COLUMNS, Point};
use super::error::GoError;

impl BoardSize {
    /// Checks a requested size; anything but 9, 13 or 19 is refused.
    pub fn new(lines: u64) -> Result<Self, GoError> {
        match lines {
            9 | 13 | 19 => Ok(Self(lines as u8)),
            other => Err(GoError::BadSize(other)),
        }
    }
}

impl Point {
    /// A point from zero-based column and row, checked against `size`.
    pub fn new(col: u8, row: u8, size: BoardSize) -> Result<Self, GoError> {
        if col < size.lines() && row < size.lines() {
            Ok(Self { col, row })
        } else {
            Err(GoError::OffBoard {
                point: format!("({col}, {row})"),
                size,
            })
        }
    }

    /// Reads a point such as `D4` or `t19` (letters in either case) on a board of `size`.
    ///
    /// Surrounding whitespace is ignored; anything else that is not a column letter followed by
    /// a row number without leading zeros is refused with a message saying what is wrong.
    pub fn parse(text: &str, size: BoardSize) -> Result<Self, GoError> {
        let malformed = |why: &'static str| GoError::Malformed {
            text: text.to_owned(),
            why,
        };
        let trimmed = text.trim();
        let mut chars = trimmed.chars();
        let letter = chars
            .next()
            .ok_or_else(|| malformed("empty: expected a column letter and a row number"))?
            .to_ascii_uppercase();
        if letter == 'I' {
            return Err(malformed("column I is not used; the column after H is J"));
        }
        let col = COLUMNS
            .iter()
            .position(|&c| char::from(c) == letter)
            .ok_or_else(|| malformed("the first character must be a column letter A-T"))?;
        let digits = chars.as_str();
        if digits.is_empty() {
            return Err(malformed("missing the row number after the column letter"));
        }
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed("the row must be a number such as 4 in D4"));
        }
        if digits.starts_with('0') {
            return Err(malformed("rows start at 1 and have no leading zero"));
        }
        let row: u32 = digits
            .parse()
            .map_err(|_| malformed("the row number is too large"))?;
        let lines = u32::from(size.lines());
        if col as u32 >= lines || row > lines {
            return Err(GoError::OffBoard {
                point: trimmed.to_ascii_uppercase(),
                size,
            });
        }
        Ok(Self {
            col: col as u8,
            row: (row - 1) as u8,
        })
    }
}
