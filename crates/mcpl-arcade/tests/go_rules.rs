//! The Go rules on known positions: capture, snapback, ko, positional superko, suicide, the
//! count with komi, and `legal_moves()` agreeing with `play` on random games.

use mcpl_arcade::go::{BoardSize, Color, Game, GoError, Komi, Move, Outcome, Point, RandomPlayer};
use proptest::prelude::*;

fn pt(game: &Game, text: &str) -> Point {
    Point::parse(text, game.size()).unwrap()
}

/// Plays space-separated moves (`D4`, `pass`) for whoever is to move; panics on a refusal.
fn play_all(game: &mut Game, moves: &str) {
    for text in moves.split_whitespace() {
        let mv = Move::parse(text, game.size()).unwrap();
        game.play(mv)
            .unwrap_or_else(|e| panic!("{text} refused: {e}\n{}", game.render()));
    }
}

fn refusal(game: &mut Game, text: &str) -> GoError {
    let before = game.render();
    let history = game.history().len();
    let err = game
        .play(Move::parse(text, game.size()).unwrap())
        .expect_err("the move is refused");
    // A refusal changes nothing.
    assert_eq!(game.render(), before);
    assert_eq!(game.history().len(), history);
    err
}

#[test]
fn capture_removes_a_stone_without_liberties() {
    let mut game = Game::new(BoardSize::NINE, Komi::DEFAULT);
    play_all(&mut game, "E5 E6 D6 J9 F6 J8");
    let e7 = pt(&game, "E7");
    let played = game.play(Move::Play(e7)).unwrap();
    assert_eq!(played.turn.captured, vec![pt(&game, "E6")]);
    assert_eq!(game.board().get(pt(&game, "E6")), None);
    assert_eq!(game.captures(Color::Black), 1);
    assert_eq!(game.captures(Color::White), 0);
    assert!(
        game.render()
            .contains("Captured: 1 by Black (X), 0 by White (O).")
    );
}

#[test]
fn snapback_lets_the_throw_in_be_taken_and_then_takes_seven() {
    let mut game = Game::from_diagram(
        "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        X X X X X X . . .
        X O O O O X . . .
        X O . . O X . . .",
        Color::Black,
        Komi::DEFAULT,
    )
    .unwrap();
    // The throw-in: Black's stone has one liberty and puts White in atari.
    play_all(&mut game, "C1");
    assert_eq!(game.board().liberties(pt(&game, "C1")), Some(1));
    assert_eq!(game.board().liberties(pt(&game, "B2")), Some(1));
    // White takes it, which is not a ko: the white group is left with that one liberty.
    let taken = game.play(Move::Play(pt(&game, "D1"))).unwrap();
    assert_eq!(taken.turn.captured, vec![pt(&game, "C1")]);
    let snap = game.play(Move::Play(pt(&game, "C1"))).unwrap();
    let mut expected: Vec<Point> = ["B1", "B2", "C2", "D1", "D2", "E1", "E2"]
        .iter()
        .map(|t| pt(&game, t))
        .collect();
    expected.sort();
    assert_eq!(snap.turn.captured, expected);
    assert_eq!(game.captures(Color::Black), 7);
    assert_eq!(game.captures(Color::White), 1);
}

const KO: &str = "
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .";

#[test]
fn ko_cannot_be_retaken_at_once_but_can_after_a_move_elsewhere() {
    let mut game = Game::from_diagram(KO, Color::Black, Komi::DEFAULT).unwrap();
    play_all(&mut game, "C8");
    assert_eq!(game.last_move().unwrap().captured, vec![pt(&game, "B8")]);
    let b8 = pt(&game, "B8");
    assert!(!game.legal_moves().contains(&b8));
    assert_eq!(refusal(&mut game, "B8"), GoError::Ko(b8));
    assert_eq!(
        GoError::Ko(b8).to_string(),
        "B8 retakes the ko at once; play elsewhere first"
    );
    // A ko threat and its answer change the board, so the retake is a new position.
    play_all(&mut game, "E5 J1");
    assert!(game.legal_moves().contains(&b8));
    play_all(&mut game, "B8");
    assert_eq!(game.last_move().unwrap().captured, vec![pt(&game, "C8")]);
}

#[test]
fn positional_superko_refuses_a_cycle_that_simple_ko_allows() {
    // Two kos: White holds the top one, Black the bottom one. Taking them in turn with one pass
    // between brings the whole board back after four moves, which no single ko rule sees.
    let mut game = Game::from_diagram(
        "
        . X O . . . . . .
        X O . O . . . . .
        . X O . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . X O . . . . . .
        X . X O . . . . .
        . X O . . . . . .",
        Color::Black,
        Komi::DEFAULT,
    )
    .unwrap();
    let start = game.board().hash();
    play_all(&mut game, "C8 B2 pass B8");
    for (turn, taken) in game.history().iter().zip(["B8", "C2", "", "C8"]) {
        let expected: Vec<Point> = (!taken.is_empty())
            .then(|| pt(&game, taken))
            .into_iter()
            .collect();
        assert_eq!(turn.captured, expected);
    }
    let c2 = pt(&game, "C2");
    // Not the ko just taken (that was C8), yet it would recreate the start position.
    assert_eq!(refusal(&mut game, "C2"), GoError::Superko(c2));
    assert!(!game.legal_moves().contains(&c2));
    assert!(game.legal_moves().contains(&pt(&game, "E5")));
    assert_ne!(game.board().hash(), start);
}

#[test]
fn suicide_is_refused_for_one_stone_and_for_a_group() {
    let mut game = Game::from_diagram(
        "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        O O . . . . . . O
        X . O . . . . O .",
        Color::Black,
        Komi::DEFAULT,
    )
    .unwrap();
    // B1 fills the last liberty of Black's own A1 stone.
    let b1 = pt(&game, "B1");
    assert_eq!(refusal(&mut game, "B1"), GoError::Suicide(b1));
    // J1 is White's eye in the corner.
    let j1 = pt(&game, "J1");
    assert_eq!(refusal(&mut game, "J1"), GoError::Suicide(j1));
    assert_eq!(
        GoError::Suicide(j1).to_string(),
        "J1 is suicide: the stone would have no liberty and captures nothing"
    );
    let legal = game.legal_moves();
    assert!(!legal.contains(&b1) && !legal.contains(&j1));
    assert!(legal.contains(&pt(&game, "G1")));
}

#[test]
fn a_move_without_liberties_that_captures_is_legal() {
    let mut game = Game::from_diagram(
        "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        X . . . . . . . .
        O X . . . . . . .
        . O X . . . . . .",
        Color::Black,
        Komi::DEFAULT,
    )
    .unwrap();
    let a1 = pt(&game, "A1");
    assert!(game.legal_moves().contains(&a1));
    let played = game.play(Move::Play(a1)).unwrap();
    assert_eq!(played.turn.captured, vec![pt(&game, "A2"), pt(&game, "B1")]);
    assert_eq!(game.board().liberties(a1), Some(2));
}

#[test]
fn a_finished_game_is_counted_by_area_with_komi() {
    // Black walls column E, White column F: 45 points against 36.
    let wall: Vec<String> = (1..=9)
        .flat_map(|r| [format!("E{r}"), format!("F{r}")])
        .collect();
    let moves = format!("{} pass pass", wall.join(" "));
    for (komi, result) in [(7.5, "B+1.5"), (9.5, "W+0.5"), (9.0, "Draw")] {
        let mut game = Game::new(BoardSize::NINE, Komi::new(komi).unwrap());
        play_all(&mut game, &moves);
        let Some(Outcome::Scored(score)) = game.outcome() else {
            panic!("two passes end the game by count");
        };
        assert_eq!((score.black_area, score.white_area), (45, 36));
        assert_eq!(score.to_string(), result);
        assert!(game.render().contains(&format!("Game over: {result}.")));
    }
}

#[test]
fn diagrams_with_dead_groups_or_wrong_shapes_are_refused() {
    let dead = "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        O . . . . . . . .
        X O . . . . . . .";
    let err = Game::from_diagram(dead, Color::Black, Komi::DEFAULT).unwrap_err();
    assert!(err.to_string().contains("has no liberty"), "{err}");
    let short = ". . .\n. . .";
    assert!(Game::from_diagram(short, Color::Black, Komi::DEFAULT).is_err());
}

/// A random game of up to `moves` moves on `size`, with a pass now and then.
fn random_game(size: BoardSize, seed: u64, moves: usize) -> Vec<Game> {
    let mut game = Game::new(size, Komi::DEFAULT);
    let mut player = RandomPlayer::new(seed);
    let mut states = vec![game.clone()];
    for i in 0..moves {
        if game.is_over() {
            break;
        }
        let mv = if (seed as usize + i) % 37 == 0 {
            Move::Pass
        } else {
            player.choose(&game)
        };
        game.play(mv).expect("the random player picks legal moves");
        states.push(game.clone());
    }
    states
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn legal_moves_are_exactly_the_points_play_accepts(
        seed in any::<u64>(),
        size in prop::sample::select(vec![9u64, 9, 9, 13, 19]),
        moves in 0usize..220,
    ) {
        let size = BoardSize::new(size).unwrap();
        let states = random_game(size, seed, moves);
        // Checking every tenth state keeps 19x19 cheap while still meeting kos and captures.
        for game in states.iter().step_by(10).chain(states.last()) {
            let legal = game.legal_moves();
            for col in 0..size.lines() {
                for row in 0..size.lines() {
                    let point = Point::new(col, row, size).unwrap();
                    let accepted = game.clone().play(Move::Play(point)).is_ok();
                    prop_assert_eq!(accepted, legal.contains(&point), "at {} after {} moves", point, game.history().len());
                    prop_assert_eq!(accepted, game.check(point).is_ok());
                }
            }
        }
    }
}
