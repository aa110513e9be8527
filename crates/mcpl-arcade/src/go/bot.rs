//! The bot: Monte-Carlo tree search (UCT) over light random playouts, and a uniformly random
//! player to measure it against.
//!
//! The budget is a number of playouts, not a time, so a given seed gives the same moves on any
//! machine. Each playout copies the root board into a scratch board, walks down the tree
//! choosing children by UCB1 (untried children first, in an order shuffled once per node),
//! adds the first untried child, plays random moves to the end (never into its own eye, never
//! the ko point), counts the board and credits the result back up the path.
//!
//! Inside the tree and the playouts only simple ko is checked; positional superko is checked
//! for the moves at the root, which are `Game::legal_moves()`.
//!
//! The bot passes when its opponent has just passed and the count already favours it, or when
//! every legal move would fill its own eye. It resigns when its best move's estimated win rate
//! falls below `BotConfig::resign_below`.

use super::board::Board;
use super::coord::{Color, Point};
use super::rng::SplitMix64;
use super::rules::{Game, Move};
use super::score::{Komi, Score};

/// The tree's "pass" move: index 0 is in the board's padding, so no stone can be there.
const PASS: u16 = 0;

/// How strong the bot plays and when it gives up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BotConfig {
    /// Playouts per move. More is stronger and slower; 1000 beats a random player on 9x9
    /// essentially always.
    pub playouts: u32,
    /// The seed of the bot's random stream: the same seed and the same game give the same
    /// moves.
    pub seed: u64,
    /// Resign when the best move's estimated win rate is below this (0.0..1.0); `None` never
    /// resigns.
    pub resign_below: Option<f64>,
    /// The UCB1 exploration constant.
    pub exploration: f64,
}

impl Default for BotConfig {
    fn default() -> Self {
        Self {
            playouts: 2000,
            seed: 0x5eed,
            resign_below: Some(0.05),
            exploration: 0.7,
        }
    }
}

/// The bot's choice for one move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The move to play (a point, a pass or a resignation).
    pub mv: Move,
    /// The estimated chance that the bot wins after this move, from its own playouts.
    pub win_rate: f64,
    /// The playouts spent on this decision (0 when the choice needed no search).
    pub playouts: u32,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    mv: u16,
    expanded: bool,
    children: u16,
    first_child: u32,
    visits: u32,
    /// Wins of the player who made `mv` (draws count a half).
    wins: f32,
}

impl Node {
    fn leaf(mv: u16) -> Self {
        Self {
            mv,
            expanded: false,
            children: 0,
            first_child: 0,
            visits: 0,
            wins: 0.0,
        }
    }
}

/// An MCTS player. Keep one per game so its random stream runs on from move to move.
#[derive(Debug, Clone)]
pub struct Bot {
    config: BotConfig,
    rng: SplitMix64,
    nodes: Vec<Node>,
    path: Vec<u32>,
    moves: Vec<u16>,
}

impl Bot {
    /// A bot with `config`.
    pub fn new(config: BotConfig) -> Self {
        Self {
            config,
            rng: SplitMix64::new(config.seed),
            nodes: Vec::new(),
            path: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// The bot's settings.
    pub fn config(&self) -> &BotConfig {
        &self.config
    }

    /// Chooses a move for the player to move in `game`. For a finished game it answers a pass,
    /// which `Game::play` then refuses.
    pub fn choose(&mut self, game: &Game) -> Decision {
        let color = game.to_move();
        let quick = |mv, win_rate| Decision {
            mv,
            win_rate,
            playouts: 0,
        };
        if game.is_over() {
            return quick(Move::Pass, 0.0);
        }
        let opponent_passed = game
            .last_move()
            .is_some_and(|turn| turn.mv == Move::Pass && turn.color != color);
        if opponent_passed && game.score().winner() == Some(color) {
            // Passing back ends the game with a win.
            return quick(Move::Pass, 1.0);
        }
        let board = game.board();
        let candidates: Vec<u16> = game
            .legal_moves()
            .into_iter()
            .map(|point| board.index(point))
            .filter(|&p| !board.is_eye(p, color))
            .map(|p| p as u16)
            .collect();
        if candidates.is_empty() {
            return quick(Move::Pass, 0.5);
        }

        let (best, win_rate) = self.search(game, &candidates);
        if self.config.resign_below.is_some_and(|t| win_rate < t) {
            return Decision {
                mv: Move::Resign,
                win_rate,
                playouts: self.config.playouts,
            };
        }
        let mv = if best == PASS {
            Move::Pass
        } else {
            Move::Play(board.point(usize::from(best)))
        };
        Decision {
            mv,
            win_rate,
            playouts: self.config.playouts,
        }
    }

    /// Runs the playouts from `game`'s position over the root moves `candidates`; returns the
    /// most visited move and its win rate for the player to move.
    fn search(&mut self, game: &Game, candidates: &[u16]) -> (u16, f64) {
        let root_color = game.to_move();
        let komi = game.komi();
        let root_passes = game.consecutive_passes();
        self.nodes.clear();
        self.nodes.push(Node::leaf(PASS));
        self.moves.clear();
        self.moves.extend_from_slice(candidates);
        self.attach_children(0);

        let mut board = game.board().clone();
        for _ in 0..self.config.playouts.max(1) {
            board.clone_from(game.board());
            let mut color = root_color;
            let mut passes = root_passes;
            let mut node = 0u32;
            self.path.clear();
            self.path.push(0);
            loop {
                if !self.nodes[node as usize].expanded {
                    self.expand(node, &board, color);
                }
                let child = self.select(node);
                let mv = self.nodes[child as usize].mv;
                if mv == PASS {
                    board.pass();
                    passes += 1;
                } else {
                    board.play(usize::from(mv), color);
                    passes = 0;
                }
                color = color.opponent();
                self.path.push(child);
                if self.nodes[child as usize].visits == 0 || passes >= 2 {
                    break;
                }
                node = child;
            }
            let winner = if passes >= 2 {
                Score::count(&board, komi).winner()
            } else {
                playout(&mut board, color, komi, &mut self.rng)
            };
            // `path[i]`'s move was made by the colour to move at `path[i - 1]`.
            let mut mover = root_color;
            for &n in &self.path[1..] {
                let node = &mut self.nodes[n as usize];
                node.visits += 1;
                node.wins += match winner {
                    Some(w) if w == mover => 1.0,
                    Some(_) => 0.0,
                    None => 0.5,
                };
                mover = mover.opponent();
            }
            self.nodes[0].visits += 1;
        }

        let root = self.nodes[0];
        let children = &self.nodes[root.first_child as usize..][..usize::from(root.children)];
        let best = children
            .iter()
            .max_by(|a, b| a.visits.cmp(&b.visits).then(a.wins.total_cmp(&b.wins)))
            .expect("the root has at least one candidate");
        let rate = f64::from(best.wins) / f64::from(best.visits.max(1));
        (best.mv, rate)
    }

    /// Gives `node` one child per playout-legal move of `color` on `board` (a pass if none).
    fn expand(&mut self, node: u32, board: &Board, color: Color) {
        self.moves.clear();
        let ko = board.ko();
        for &p in board.empties() {
            let p = usize::from(p);
            if Some(p) != ko && !board.is_eye(p, color) && board.check(p, color).is_ok() {
                self.moves.push(p as u16);
            }
        }
        if self.moves.is_empty() {
            self.moves.push(PASS);
        }
        self.attach_children(node);
    }

    /// Appends `self.moves`, shuffled, as the children of `node`.
    fn attach_children(&mut self, node: u32) {
        for i in (1..self.moves.len()).rev() {
            let j = self.rng.below(i + 1);
            self.moves.swap(i, j);
        }
        let first = self.nodes.len() as u32;
        self.nodes
            .extend(self.moves.iter().map(|&mv| Node::leaf(mv)));
        let parent = &mut self.nodes[node as usize];
        parent.expanded = true;
        parent.first_child = first;
        parent.children = self.moves.len() as u16;
    }

    /// The child of `node` to descend into: the first untried one, else the best by UCB1.
    fn select(&self, node: u32) -> u32 {
        let parent = self.nodes[node as usize];
        let first = parent.first_child;
        let children = &self.nodes[first as usize..][..usize::from(parent.children)];
        if let Some(untried) = children.iter().position(|c| c.visits == 0) {
            return first + untried as u32;
        }
        let log_n = f64::from(parent.visits.max(1)).ln();
        let c = self.config.exploration;
        let ucb = |n: &Node| {
            let visits = f64::from(n.visits);
            f64::from(n.wins) / visits + c * (log_n / visits).sqrt()
        };
        let best = children
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| ucb(a).total_cmp(&ucb(b)))
            .map(|(i, _)| i)
            .expect("an expanded node has at least one child");
        first + best as u32
    }
}

/// Plays random moves on `board` from `color` to move until both sides pass (or a cap far
/// beyond any real game), then counts. Returns the winner (`None`: a draw).
pub(crate) fn playout(
    board: &mut Board,
    mut color: Color,
    komi: Komi,
    rng: &mut SplitMix64,
) -> Option<Color> {
    let cap = 3 * board.size().points();
    let mut passes = 0;
    for _ in 0..cap {
        match board.random_move(color, rng) {
            Some(p) => {
                board.play(p, color);
                passes = 0;
            }
            None => {
                board.pass();
                passes += 1;
                if passes >= 2 {
                    break;
                }
            }
        }
        color = color.opponent();
    }
    Score::count(board, komi).winner()
}

/// A player that picks uniformly among the legal points and passes only when there are none:
/// the baseline the bot is measured against.
#[derive(Debug, Clone)]
pub struct RandomPlayer {
    rng: SplitMix64,
}

impl RandomPlayer {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: SplitMix64::new(seed),
        }
    }

    /// A uniformly random legal point, or a pass when none is left.
    pub fn choose(&mut self, game: &Game) -> Move {
        let moves: Vec<Point> = game.legal_moves();
        if moves.is_empty() {
            Move::Pass
        } else {
            Move::Play(moves[self.rng.below(moves.len())])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::coord::BoardSize;
    use super::*;

    fn config(playouts: u32, seed: u64) -> BotConfig {
        BotConfig {
            playouts,
            seed,
            ..BotConfig::default()
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_moves() {
        let run = |seed| {
            let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
            let mut bot = Bot::new(config(200, seed));
            (0..6)
                .map(|_| {
                    let decision = bot.choose(&game);
                    game.play(decision.mv).unwrap();
                    decision.mv
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2), "different seeds explore differently");
    }

    #[test]
    fn the_search_prefers_saving_a_big_group_to_quiet_moves() {
        let game = Game::from_diagram(
            "
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            X X X X X . . . .
            O O O O O . . . .
            X X X X X . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .",
            Color::White,
            Komi::DEFAULT,
        )
        .unwrap();
        // White's five stones on row 5 have one liberty left, F5. White to move must save them
        // there; the quiet moves lose them. (With every move at the root the search spreads
        // too thin to test in a debug build; three candidates keep it sharp.)
        let at = |t: &str| game.board().index(Point::parse(t, game.size()).unwrap()) as u16;
        let mut bot = Bot::new(config(600, 3));
        let (best, rate) = bot.search(&game, &[at("J1"), at("F5"), at("J9")]);
        assert_eq!(best, at("F5"), "win rate {rate}");
    }

    #[test]
    fn the_bot_resigns_a_hopeless_game_and_not_a_fresh_one() {
        let lost = Game::from_diagram(
            "
            . X . X . X . X .
            X X X X X X X X X
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            . . . . . . . . .
            O O O O O O O O O
            . O . O . O . O .",
            Color::White,
            Komi::new(-60.0).unwrap(),
        )
        .unwrap();
        let decision = Bot::new(config(300, 5)).choose(&lost);
        assert_eq!(decision.mv, Move::Resign, "win rate {}", decision.win_rate);

        let fresh = Game::new(BoardSize::NINE, Komi::DEFAULT);
        assert_ne!(Bot::new(config(300, 5)).choose(&fresh).mv, Move::Resign);
        let never = BotConfig {
            resign_below: None,
            ..config(300, 5)
        };
        assert_ne!(Bot::new(never).choose(&lost).mv, Move::Resign);
    }

    #[test]
    fn the_bot_passes_back_when_the_count_favours_it() {
        let mut game = Game::from_diagram(
            "
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .
            . . . . X O . . .",
            Color::White,
            Komi::DEFAULT,
        )
        .unwrap();
        game.play(Move::Pass).unwrap();
        let decision = Bot::new(config(100, 1)).choose(&game);
        assert_eq!(decision.mv, Move::Pass);
        assert_eq!(decision.playouts, 0);
        game.play(decision.mv).unwrap();
        assert_eq!(game.outcome().unwrap().to_string(), "B+1.5");
    }
}
