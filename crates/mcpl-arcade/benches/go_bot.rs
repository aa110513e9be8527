//! Bot strength and speed on 9x9, against a uniformly random legal player measured in the
//! same run.
//!
//! `cargo bench -p mcpl-arcade --bench go_bot` plays 100 games (the bot takes Black in half of
//! them) and prints the bot's win rate, its moves and playouts per second, and the random
//! player's moves per second as the baseline. `ARCADE_BENCH_QUICK=1` plays 10 games with a
//! smaller budget, for CI. `ARCADE_BENCH_PLAYOUTS=N` sets the bot's playouts per move.

use std::time::{Duration, Instant};

use mcpl_arcade::go::{BoardSize, Bot, BotConfig, Color, Game, Komi, Move, RandomPlayer};

struct Tally {
    bot_wins: u32,
    bot_resignations: u32,
    bot_time: Duration,
    bot_moves: u64,
    playouts: u64,
    random_time: Duration,
    random_moves: u64,
    plies: u64,
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs the binary without it, so
    // keep that run tiny.
    let benching = std::env::args().any(|a| a == "--bench");
    let quick = std::env::var_os("ARCADE_BENCH_QUICK").is_some() || !benching;
    let games = if quick { 10 } else { 100 };
    let playouts =
        env_number("ARCADE_BENCH_PLAYOUTS").unwrap_or(if quick { 300 } else { 1000 }) as u32;
    let size = BoardSize::NINE;
    let cap = 3 * size.points();

    let mut tally = Tally {
        bot_wins: 0,
        bot_resignations: 0,
        bot_time: Duration::ZERO,
        bot_moves: 0,
        playouts: 0,
        random_time: Duration::ZERO,
        random_moves: 0,
        plies: 0,
    };
    for g in 0..games {
        let bot_color = if g % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let mut bot = Bot::new(BotConfig {
            playouts,
            seed: 1000 + g,
            ..BotConfig::default()
        });
        let mut random = RandomPlayer::new(2000 + g);
        let mut game = Game::new(size, Komi::DEFAULT);
        while !game.is_over() && game.history().len() < cap {
            let mv = if game.to_move() == bot_color {
                let start = Instant::now();
                let decision = bot.choose(&game);
                tally.bot_time += start.elapsed();
                tally.bot_moves += 1;
                tally.playouts += u64::from(decision.playouts);
                decision.mv
            } else {
                let start = Instant::now();
                let mv = random.choose(&game);
                tally.random_time += start.elapsed();
                tally.random_moves += 1;
                mv
            };
            game.play(mv).expect("both players choose legal moves");
        }
        tally.plies += game.history().len() as u64;
        // A game stopped at the cap is counted as it stands.
        let winner = match game.outcome() {
            Some(outcome) => outcome.winner(),
            None => game.score().winner(),
        };
        if winner == Some(bot_color) {
            tally.bot_wins += 1;
        }
        if game
            .last_move()
            .is_some_and(|t| t.mv == Move::Resign && t.color == bot_color)
        {
            tally.bot_resignations += 1;
        }
    }

    let per_sec = |n: u64, t: Duration| n as f64 / t.as_secs_f64().max(1e-9);
    let bot_mps = per_sec(tally.bot_moves, tally.bot_time);
    let random_mps = per_sec(tally.random_moves, tally.random_time);
    println!("go_bot: 9x9, {games} games, bot {playouts} playouts/move, komi 7.5");
    println!(
        "  bot win rate vs uniform random: {}/{} = {:.1}% (bot resigned {} times)",
        tally.bot_wins,
        games,
        100.0 * f64::from(tally.bot_wins) / games as f64,
        tally.bot_resignations
    );
    println!(
        "  average game length: {:.1} moves",
        tally.plies as f64 / games as f64
    );
    println!(
        "  bot: {bot_mps:.1} moves/s, {:.0} playouts/s",
        per_sec(tally.playouts, tally.bot_time)
    );
    println!("  random baseline: {random_mps:.0} moves/s (legal_moves + pick)");
    println!(
        "  bot move costs {:.0}x a random move",
        random_mps / bot_mps.max(1e-9)
    );
    legal_moves_against_trying_every_point(if quick { 5 } else { 40 });
    playouts_by_size(if quick { 200 } else { 2000 });
}

/// The bot's playout rate from an empty board on each size.
fn playouts_by_size(playouts: u32) {
    for size in BoardSize::ALL {
        let game = Game::new(size, Komi::DEFAULT);
        let mut bot = Bot::new(BotConfig {
            playouts,
            resign_below: None,
            ..BotConfig::default()
        });
        let start = Instant::now();
        let decision = std::hint::black_box(bot.choose(&game));
        let elapsed = start.elapsed();
        println!(
            "  {size}: {:.0} playouts/s from the empty board ({} playouts in {:.1} ms)",
            f64::from(decision.playouts) / elapsed.as_secs_f64().max(1e-9),
            decision.playouts,
            elapsed.as_secs_f64() * 1e3
        );
    }
}

/// `legal_moves()` (incremental liberties and a predicted hash) against the obvious way:
/// clone the game and try `play` on every point. Both must agree; the ratio is the speed-up.
fn legal_moves_against_trying_every_point(games: u64) {
    let mut positions = Vec::new();
    for seed in 0..games {
        let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
        let mut random = RandomPlayer::new(seed);
        for _ in 0..120 {
            if game.is_over() {
                break;
            }
            positions.push(game.clone());
            game.play(random.choose(&game)).expect("legal");
        }
    }
    let start = Instant::now();
    let mut fast = 0;
    for game in &positions {
        fast += std::hint::black_box(game.legal_moves()).len();
    }
    let fast_time = start.elapsed();
    let start = Instant::now();
    let mut slow = 0;
    for game in &positions {
        let size = game.size();
        for col in 0..size.lines() {
            for row in 0..size.lines() {
                let point = mcpl_arcade::go::Point::new(col, row, size).expect("on the board");
                if game.clone().play(Move::Play(point)).is_ok() {
                    slow += 1;
                }
            }
        }
    }
    let slow_time = start.elapsed();
    assert_eq!(fast, slow, "both ways find the same legal moves");
    println!(
        "  legal_moves over {} positions: {:.1} us each; trying every point: {:.1} us ({:.0}x slower)",
        positions.len(),
        fast_time.as_secs_f64() * 1e6 / positions.len() as f64,
        slow_time.as_secs_f64() * 1e6 / positions.len() as f64,
        slow_time.as_secs_f64() / fast_time.as_secs_f64().max(1e-9)
    );
}
