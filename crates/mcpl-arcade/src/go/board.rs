//! The board: stones, groups with liberties kept up to date move by move, and a Zobrist hash.
//!
//! Points are indices into a padded array one line wider on every side, so every point on the
//! board has four neighbours and the padding reads as `BORDER`. Each stone knows its group's
//! head, and the stones of a group form a ring through `next`, so a capture walks exactly the
//! stones it removes and a merge relabels only the smaller group.
//!
//! Liberties are **pseudo-liberties**: a group counts each (stone, empty neighbour) pair, so
//! one empty point next to two of its stones counts twice. That count is zero exactly when the
//! group has no liberty, and adding and removing is O(1). To tell atari (one real liberty) we
//! also keep the sum and the sum of squares of the counted points: all counted points are the
//! same point exactly when `sum² = count · sum_of_squares` (Cauchy-Schwarz), and that point is
//! `sum / count`.
//!
//! The board knows nothing of turns, history or superko; `rules::Game` does. Its simple-ko
//! point serves the bot's playouts, where a full history would be too slow.

use super::coord::{BoardSize, Color, Point};
use super::error::GoError;
use super::rng::{self, SplitMix64};

/// An empty point.
pub(crate) const EMPTY: u8 = 0;
/// A black stone.
pub(crate) const BLACK: u8 = 1;
/// A white stone.
pub(crate) const WHITE: u8 = 2;
/// The padding around the board.
const BORDER: u8 = 3;

/// The fixed seed of the Zobrist keys ("MCPL_GO!"): hashes are stable across runs.
const ZOBRIST_SEED: u64 = 0x4d43_504c_5f47_4f21;

/// The cell value of a colour's stones.
pub(crate) fn cell_of(color: Color) -> u8 {
    match color {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

/// The Zobrist key of a stone of cell value `cell` on point index `p`: the matching output of
/// a SplitMix64 stream with a fixed seed, computed on demand instead of stored in a table.
fn zkey(p: usize, cell: u8) -> u64 {
    rng::nth(ZOBRIST_SEED, (p as u64) * 2 + u64::from(cell - 1))
}

/// Liberty bookkeeping of one group, stored at its head.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Group {
    stones: u16,
    libs: u16,
    lib_sum: u32,
    lib_sumsq: u32,
}

impl Group {
    fn add_lib(&mut self, p: usize) {
        self.libs += 1;
        self.lib_sum += p as u32;
        self.lib_sumsq += (p * p) as u32;
    }

    fn remove_lib(&mut self, p: usize) {
        self.libs -= 1;
        self.lib_sum -= p as u32;
        self.lib_sumsq -= (p * p) as u32;
    }

    /// Exactly one real liberty (see the module doc for why the sums tell).
    fn in_atari(&self) -> bool {
        let sum = u64::from(self.lib_sum);
        self.libs > 0 && sum * sum == u64::from(self.libs) * u64::from(self.lib_sumsq)
    }
}

/// Why a point cannot take a stone, before history is considered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A stone is already there.
    Occupied,
    /// The stone would have no liberty and capture nothing.
    Suicide,
}

/// A Go position: the stones, nothing about whose turn it is.
#[derive(Debug)]
pub struct Board {
    size: BoardSize,
    stride: usize,
    cells: Vec<u8>,
    head: Vec<u16>,
    next: Vec<u16>,
    groups: Vec<Group>,
    empties: Vec<u16>,
    empty_at: Vec<u16>,
    hash: u64,
    ko: Option<u16>,
}

impl Clone for Board {
    fn clone(&self) -> Self {
        Self {
            size: self.size,
            stride: self.stride,
            cells: self.cells.clone(),
            head: self.head.clone(),
            next: self.next.clone(),
            groups: self.groups.clone(),
            empties: self.empties.clone(),
            empty_at: self.empty_at.clone(),
            hash: self.hash,
            ko: self.ko,
        }
    }

    // The bot resets a scratch board once per playout; reusing the buffers avoids allocating.
    fn clone_from(&mut self, source: &Self) {
        self.size = source.size;
        self.stride = source.stride;
        self.cells.clone_from(&source.cells);
        self.head.clone_from(&source.head);
        self.next.clone_from(&source.next);
        self.groups.clone_from(&source.groups);
        self.empties.clone_from(&source.empties);
        self.empty_at.clone_from(&source.empty_at);
        self.hash = source.hash;
        self.ko = source.ko;
    }
}

impl Board {
    /// An empty board.
    pub fn new(size: BoardSize) -> Self {
        let lines = usize::from(size.lines());
        let stride = lines + 2;
        let total = stride * stride;
        let mut board = Self {
            size,
            stride,
            cells: vec![BORDER; total],
            head: vec![0; total],
            next: vec![0; total],
            groups: vec![Group::default(); total],
            empties: Vec::with_capacity(size.points()),
            empty_at: vec![0; total],
            hash: 0,
            ko: None,
        };
        for row in 0..lines {
            for col in 0..lines {
                let p = (row + 1) * stride + col + 1;
                board.cells[p] = EMPTY;
                board.add_empty(p);
            }
        }
        board
    }

    /// Reads a position drawn as text, top row first: `X` black, `O` white, `.` or `+` empty
    /// (either case; spaces ignored; blank lines skipped). The size is the number of rows,
    /// which must be 9, 13 or 19, each with as many points. A group without a liberty is
    /// refused.
    pub fn from_diagram(diagram: &str) -> Result<Self, GoError> {
        let rows: Vec<Vec<char>> = diagram
            .lines()
            .map(|line| {
                line.chars()
                    .filter(|c| !c.is_whitespace())
                    .collect::<Vec<_>>()
            })
            .filter(|row| !row.is_empty())
            .collect();
        let size = BoardSize::new(rows.len() as u64)
            .map_err(|_| GoError::BadDiagram(format!("{} rows; use 9, 13 or 19", rows.len())))?;
        let mut board = Self::new(size);
        let lines = size.lines();
        for (from_top, row) in rows.iter().enumerate() {
            let row_no = lines as usize - from_top;
            if row.len() != usize::from(lines) {
                return Err(GoError::BadDiagram(format!(
                    "row {row_no} has {} points, not {lines}",
                    row.len()
                )));
            }
            for (col, ch) in row.iter().enumerate() {
                let color = match ch.to_ascii_uppercase() {
                    'X' => Color::Black,
                    'O' => Color::White,
                    '.' | '+' => continue,
                    other => {
                        return Err(GoError::BadDiagram(format!(
                            "unknown character `{other}` in row {row_no}"
                        )));
                    }
                };
                let point = Point::new(col as u8, (row_no - 1) as u8, size)?;
                let p = board.index(point);
                // In a position where every group has a liberty, stones can be placed in any
                // order without one ever capturing or being suicide; so either means the
                // diagram has a dead group.
                if board.check(p, color).is_err() || board.play(p, color) > 0 {
                    return Err(GoError::BadDiagram(format!(
                        "a group next to {point} has no liberty"
                    )));
                }
            }
        }
        board.ko = None;
        Ok(board)
    }

    /// The board's size.
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// The stone on `point`, if any. `point` must be on this board's size.
    pub fn get(&self, point: Point) -> Option<Color> {
        match self.cells[self.index(point)] {
            BLACK => Some(Color::Black),
            WHITE => Some(Color::White),
            _ => None,
        }
    }

    /// The Zobrist hash of the stones (not of whose turn it is): equal positions hash equal.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The number of liberties of the group on `point`, counted from scratch; `None` when the
    /// point is empty. For tests and analysis; play uses the incremental counts.
    pub fn liberties(&self, point: Point) -> Option<usize> {
        let p = self.index(point);
        let color = self.cells[p];
        if color != BLACK && color != WHITE {
            return None;
        }
        let mut libs: Vec<usize> = self
            .group_stones(p)
            .flat_map(|s| self.neighbors(s))
            .filter(|&q| self.cells[q] == EMPTY)
            .collect();
        libs.sort_unstable();
        libs.dedup();
        Some(libs.len())
    }

    /// The padded index of `point`.
    pub(crate) fn index(&self, point: Point) -> usize {
        (usize::from(point.row()) + 1) * self.stride + usize::from(point.col()) + 1
    }

    /// The point of padded index `p`, which must be on the board.
    pub(crate) fn point(&self, p: usize) -> Point {
        let row = p / self.stride - 1;
        let col = p % self.stride - 1;
        Point::new(col as u8, row as u8, self.size).expect("an index on the board maps back")
    }

    /// The cell value at index `p`.
    pub(crate) fn cell(&self, p: usize) -> u8 {
        self.cells[p]
    }

    /// The empty points, in no particular order.
    pub(crate) fn empties(&self) -> &[u16] {
        &self.empties
    }

    /// The point a simple ko forbids to the player to move, after the last `play` or `pass`.
    pub(crate) fn ko(&self) -> Option<usize> {
        self.ko.map(usize::from)
    }

    /// The four neighbours of `p` (some may be `BORDER`).
    pub(crate) fn neighbors(&self, p: usize) -> [usize; 4] {
        [p - self.stride, p - 1, p + 1, p + self.stride]
    }

    /// The stones of the group whose head or member is `p`.
    pub(crate) fn group_stones(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        let start = p;
        let mut at = Some(p);
        std::iter::from_fn(move || {
            let current = at?;
            let following = usize::from(self.next[current]);
            at = (following != start).then_some(following);
            Some(current)
        })
    }

    /// Whether `color` may put a stone on `p`, ignoring ko and history.
    pub(crate) fn check(&self, p: usize, color: Color) -> Result<(), Refusal> {
        if self.cells[p] != EMPTY {
            return Err(Refusal::Occupied);
        }
        let me = cell_of(color);
        for q in self.neighbors(p) {
            let c = self.cells[q];
            if c == EMPTY {
                return Ok(());
            }
            if c == BORDER {
                continue;
            }
            let in_atari = self.groups[usize::from(self.head[q])].in_atari();
            // A friend with a second liberty lends it; an enemy whose last liberty is `p` dies.
            if (c == me) != in_atari {
                return Ok(());
            }
        }
        Err(Refusal::Suicide)
    }

    /// The heads of the enemy groups a stone of `color` on `p` would capture (at most four).
    pub(crate) fn captured_heads(&self, p: usize, color: Color) -> ([usize; 4], usize) {
        let opp = cell_of(color.opponent());
        let mut heads = [0; 4];
        let mut n = 0;
        for q in self.neighbors(p) {
            if self.cells[q] == opp {
                let h = usize::from(self.head[q]);
                if self.groups[h].in_atari() && !heads[..n].contains(&h) {
                    heads[n] = h;
                    n += 1;
                }
            }
        }
        (heads, n)
    }

    /// The hash the position would have after a (checked) stone of `color` on `p`.
    pub(crate) fn hash_after(&self, p: usize, color: Color) -> u64 {
        let opp = cell_of(color.opponent());
        let mut hash = self.hash ^ zkey(p, cell_of(color));
        let (heads, n) = self.captured_heads(p, color);
        for &h in &heads[..n] {
            for s in self.group_stones(h) {
                hash ^= zkey(s, opp);
            }
        }
        hash
    }

    /// Puts a stone of `color` on `p`, which `check` must have accepted, and removes what it
    /// captures. Returns the number of stones captured.
    pub(crate) fn play(&mut self, p: usize, color: Color) -> u32 {
        let me = cell_of(color);
        let opp = cell_of(color.opponent());
        self.remove_empty(p);
        self.cells[p] = me;
        self.hash ^= zkey(p, me);
        self.head[p] = p as u16;
        self.next[p] = p as u16;
        let mut fresh = Group {
            stones: 1,
            ..Group::default()
        };
        for q in self.neighbors(p) {
            if self.cells[q] == EMPTY {
                fresh.add_lib(q);
            }
        }
        self.groups[p] = fresh;

        let mut captured = 0;
        let mut last_captured = 0;
        for q in self.neighbors(p) {
            let c = self.cells[q];
            if c == me {
                // Each adjacent stone counted `p` once; take it away, then join the groups.
                let h = usize::from(self.head[q]);
                self.groups[h].remove_lib(p);
                let mine = usize::from(self.head[p]);
                if h != mine {
                    self.merge(mine, h);
                }
            } else if c == opp {
                let h = usize::from(self.head[q]);
                self.groups[h].remove_lib(p);
                if self.groups[h].libs == 0 {
                    captured += self.remove_group(h);
                    last_captured = q;
                }
            }
        }

        // A lone stone that took exactly one stone and now has one liberty: retaking at once
        // would only restore the previous position.
        let mine = self.groups[usize::from(self.head[p])];
        self.ko =
            (captured == 1 && mine.stones == 1 && mine.libs == 1).then_some(last_captured as u16);
        captured
    }

    /// A pass: nothing moves, and the ko point lapses.
    pub(crate) fn pass(&mut self) {
        self.ko = None;
    }

    /// Whether `p` is an eye of `color` for the playout policy: all four neighbours are its
    /// stones or the edge, and the enemy holds at most one diagonal (none on the edge).
    pub(crate) fn is_eye(&self, p: usize, color: Color) -> bool {
        let me = cell_of(color);
        if self
            .neighbors(p)
            .iter()
            .any(|&q| self.cells[q] != me && self.cells[q] != BORDER)
        {
            return false;
        }
        let opp = cell_of(color.opponent());
        let s = self.stride;
        let mut enemy = 0;
        let mut edge = false;
        for d in [p - s - 1, p - s + 1, p + s - 1, p + s + 1] {
            match self.cells[d] {
                BORDER => edge = true,
                c if c == opp => enemy += 1,
                _ => {}
            }
        }
        if edge { enemy == 0 } else { enemy < 2 }
    }

    /// A random move for `color` under the playout policy: legal, not the ko point, not
    /// filling its own eye. `None` means pass.
    pub(crate) fn random_move(&self, color: Color, rng: &mut SplitMix64) -> Option<usize> {
        let n = self.empties.len();
        if n == 0 {
            return None;
        }
        let start = rng.below(n);
        let ko = self.ko();
        (0..n)
            .map(|k| usize::from(self.empties[(start + k) % n]))
            .find(|&p| Some(p) != ko && !self.is_eye(p, color) && self.check(p, color).is_ok())
    }

    fn merge(&mut self, a: usize, b: usize) {
        let (keep, gone) = if self.groups[a].stones >= self.groups[b].stones {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = gone;
        loop {
            self.head[s] = keep as u16;
            s = usize::from(self.next[s]);
            if s == gone {
                break;
            }
        }
        // Splicing two rings is one swap of their successors.
        self.next.swap(keep, gone);
        let g = self.groups[gone];
        let k = &mut self.groups[keep];
        k.stones += g.stones;
        k.libs += g.libs;
        k.lib_sum += g.lib_sum;
        k.lib_sumsq += g.lib_sumsq;
    }

    /// Removes the group headed by `h` and gives its points back as liberties.
    fn remove_group(&mut self, h: usize) -> u32 {
        let color = self.cells[h];
        let mut removed = 0;
        let mut s = h;
        loop {
            self.cells[s] = EMPTY;
            self.hash ^= zkey(s, color);
            self.add_empty(s);
            removed += 1;
            s = usize::from(self.next[s]);
            if s == h {
                break;
            }
        }
        // Only now are all the stones gone, so the stones next to them are all the capturer's.
        let mut s = h;
        loop {
            for q in self.neighbors(s) {
                let c = self.cells[q];
                if c == BLACK || c == WHITE {
                    let g = usize::from(self.head[q]);
                    self.groups[g].add_lib(s);
                }
            }
            s = usize::from(self.next[s]);
            if s == h {
                break;
            }
        }
        removed
    }

    fn add_empty(&mut self, p: usize) {
        self.empty_at[p] = self.empties.len() as u16;
        self.empties.push(p as u16);
    }

    fn remove_empty(&mut self, p: usize) {
        let at = usize::from(self.empty_at[p]);
        self.empties.swap_remove(at);
        if let Some(&moved) = self.empties.get(at) {
            self.empty_at[usize::from(moved)] = at as u16;
        }
    }

    /// Recomputes every group's bookkeeping from scratch and panics on any difference from the
    /// incremental state. For tests.
    #[cfg(test)]
    pub(crate) fn assert_consistent(&self) {
        let mut empties = 0;
        let mut hash = 0;
        for p in 0..self.cells.len() {
            match self.cells[p] {
                EMPTY => {
                    empties += 1;
                    assert_eq!(usize::from(self.empties[usize::from(self.empty_at[p])]), p);
                }
                c @ (BLACK | WHITE) => {
                    hash ^= zkey(p, c);
                    let h = usize::from(self.head[p]);
                    if h != p {
                        continue;
                    }
                    let mut expect = Group::default();
                    for s in self.group_stones(p) {
                        assert_eq!(usize::from(self.head[s]), h, "ring and heads agree");
                        assert_eq!(self.cells[s], c);
                        expect.stones += 1;
                        for q in self.neighbors(s) {
                            if self.cells[q] == EMPTY {
                                expect.add_lib(q);
                            }
                            if self.cells[q] == c {
                                assert_eq!(
                                    usize::from(self.head[q]),
                                    h,
                                    "neighbours share a group"
                                );
                            }
                        }
                    }
                    assert_eq!(self.groups[h], expect, "group at {}", self.point(p));
                    assert!(expect.libs > 0, "a group on the board has a liberty");
                    let real = self.liberties(self.point(p)).expect("a stone");
                    assert_eq!(expect.in_atari(), real == 1, "atari test agrees");
                }
                _ => {}
            }
        }
        assert_eq!(empties, self.empties.len());
        assert_eq!(hash, self.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random games (with and without eye filling, which makes big captures) checked against
    /// a from-scratch recount after every move.
    #[test]
    fn incremental_groups_match_a_recount_through_random_games() {
        for size in BoardSize::ALL {
            for seed in 0..6u64 {
                let mut board = Board::new(size);
                let mut rng = SplitMix64::new(seed);
                let mut color = Color::Black;
                let fill_eyes = seed % 2 == 1;
                let mut passes = 0;
                for _ in 0..4 * size.points() {
                    let pick = if fill_eyes {
                        let n = board.empties().len();
                        let ko = board.ko();
                        let start = rng.below(n.max(1));
                        (0..n)
                            .map(|k| usize::from(board.empties()[(start + k) % n]))
                            .find(|&p| Some(p) != ko && board.check(p, color).is_ok())
                    } else {
                        board.random_move(color, &mut rng)
                    };
                    match pick {
                        Some(p) => {
                            let expected = board.hash_after(p, color);
                            board.play(p, color);
                            assert_eq!(board.hash(), expected, "hash_after predicts play");
                            passes = 0;
                        }
                        None => {
                            board.pass();
                            passes += 1;
                        }
                    }
                    board.assert_consistent();
                    if passes == 2 {
                        break;
                    }
                    color = color.opponent();
                }
            }
        }
    }

    #[test]
    fn a_lone_stone_taking_one_stone_sets_the_ko_point() {
        let mut board = Board::from_diagram(
            "
            . X O . . . . . .
            X O . O . . . . .
            . X O . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .",
        )
        .unwrap();
        let size = board.size();
        let c8 = board.index(Point::parse("C8", size).unwrap());
        let b8 = board.index(Point::parse("B8", size).unwrap());
        assert_eq!(board.play(c8, Color::Black), 1);
        assert_eq!(board.ko(), Some(b8));
        board.pass();
        assert_eq!(board.ko(), None);
    }

    #[test]
    fn eyes_need_friendly_neighbours_and_diagonals() {
        let board = Board::from_diagram(
            "
            . X . . . . . . .
            X X . . . . . . .
            . . . . . . . . .
            . . . X . . . . .
            . . X . X . . . .
            . . . X O . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .",
        )
        .unwrap();
        let at = |t: &str| board.index(Point::parse(t, board.size()).unwrap());
        assert!(board.is_eye(at("A9"), Color::Black));
        assert!(!board.is_eye(at("A9"), Color::White));
        // One enemy diagonal is fine in the middle of the board.
        assert!(board.is_eye(at("D5"), Color::Black));
        assert!(!board.is_eye(at("E9"), Color::Black));
    }
}
