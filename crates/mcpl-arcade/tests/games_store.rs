//! The games behind a `GameStore`: every handler is a re-runnable step (a store that runs
//! each step twice tells exactly what the memory store tells), `Games` survives JSON, and a
//! store out of reach is a clear error that changes nothing.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{Flaky, Rerunning, World, move_enum, pushes, quick_config, text_of, tool_entry};
use mcpl_arcade::go::{BoardSize, Color, Point};
use mcpl_arcade::{Arcade, GameStore, Games, MemoryGames, with_games};
use serde_json::{Value, json};

/// Alice plays the bot to the end: a few moves, then passes until the game is over (she
/// resigns if the bot never passes).
fn game_vs_bot(w: &mut World) {
    let a = w.connect("alice");
    let opened = w.open(a, "vs-bot", json!({"size": 9})).unwrap();
    let mut moves = move_enum(tool_entry(&opened["_meta"]["mcpl/hints"], "play", None).unwrap());
    for turn in 0..60 {
        let result = if turn < 4 {
            let mv = moves.first().cloned().expect("a legal point");
            w.call(a, "play", json!({"move": mv}), Some("vs-bot"))
        } else {
            w.call(a, "pass", json!({}), Some("vs-bot"))
        };
        assert_ne!(result["isError"], true, "{result}");
        if text_of(&result).contains("Game over") {
            return;
        }
        assert_eq!(w.run_bots(), 1, "the bot answers every move");
        let written = w.take(a);
        let push = pushes(&written).pop().expect("the bot's move arrives");
        if text_of(&push).contains("Game over") {
            return;
        }
        if let Some(play) = tool_entry(&push["hints"], "play", Some("vs-bot")) {
            moves = move_enum(play);
        }
    }
    let resigned = w.call(a, "resign", json!({}), Some("vs-bot"));
    assert!(text_of(&resigned).contains("You resigned."), "{resigned}");
}

/// Carol challenges dave with the tool, dave accepts, each moves once, carol resigns.
fn game_between_agents(w: &mut World) {
    let c = w.connect("carol");
    let d = w.connect("dave");
    let sent = w.call(c, "challenge", json!({"who": "dave", "size": 9}), None);
    assert!(text_of(&sent).contains("open as `vs-dave`"), "{sent}");
    w.open(d, "vs-carol", json!({"size": 9, "opponent": "carol"}))
        .unwrap();
    let played = w.call(c, "play", json!({"move": "E5"}), Some("vs-dave"));
    assert!(text_of(&played).contains("Waiting for dave."), "{played}");
    let answered = w.call(d, "play", json!({"move": "C3"}), Some("vs-carol"));
    assert!(
        text_of(&answered).contains("Waiting for carol."),
        "{answered}"
    );
    let resigned = w.call(c, "resign", json!({}), Some("vs-dave"));
    assert!(text_of(&resigned).contains("You resigned. dave wins."));
}

/// Erin opens a game against the bot and never moves: it times out.
fn idle_game(w: &mut World) {
    let e = w.connect("erin");
    w.open(e, "idle", json!({"size": 13})).unwrap();
    w.advance(Duration::from_secs(31 * 60));
    let written = w.take(e);
    let push = pushes(&written).pop().expect("erin is told");
    assert!(
        text_of(&push).contains("timed out after 30 minutes"),
        "{push}"
    );
}

fn everything(games: Arc<dyn GameStore>) -> World {
    let mut w = World::with_games(quick_config(), games);
    game_vs_bot(&mut w);
    game_between_agents(&mut w);
    idle_game(&mut w);
    w
}

#[test]
fn every_step_is_rerunnable_a_store_that_runs_each_twice_tells_the_same() {
    let memory = everything(Arc::new(MemoryGames::default()));
    let rerunning_store = Arc::new(Rerunning::default());
    let rerunning = everything(rerunning_store.clone());
    assert!(rerunning_store.runs.load(Ordering::Relaxed) > 20);
    assert_eq!(memory.conns.len(), rerunning.conns.len());
    for (m, r) in memory.conns.iter().zip(&rerunning.conns) {
        assert_eq!(m.written.len(), r.written.len(), "{}", m.principal);
        for (a, b) in m.written.iter().zip(&r.written) {
            assert_eq!(a, b, "what {} was told differs", m.principal);
        }
    }
    // Each game was counted once, not once per run.
    let standings = rerunning.arcade.standings().unwrap();
    assert_eq!(standings, memory.arcade.standings().unwrap());
    assert_eq!(standings["carol"].losses, 1);
    assert_eq!(standings["dave"].wins, 1);
    let bot = &standings["the bot"];
    assert_eq!(bot.wins + bot.losses + bot.draws, 1);
    assert!(!standings.contains_key("erin"), "a timeout has no result");
    assert_eq!(rerunning.arcade.games().unwrap(), 0);
}

/// Alice (Black) and bob (White) play to a ko: white's D4 was just taken by black's E4, so
/// white may not retake at once.
fn ko_position() -> (World, Arc<MemoryGames>) {
    let games = Arc::new(MemoryGames::default());
    let mut w = World::with_games(quick_config(), games.clone());
    let (a, b) = w.alice_vs_bob("g", "g");
    let moves = ["C4", "F4", "D5", "E5", "D3", "E3", "H8", "D4", "E4"];
    for (n, mv) in moves.iter().enumerate() {
        let c = if n % 2 == 0 { a } else { b };
        let result = w.call(c, "play", json!({"move": mv}), Some("g"));
        assert_ne!(result["isError"], true, "{mv}: {result}");
    }
    (w, games)
}

#[test]
fn games_round_trip_through_json_with_captures_and_ko_history() {
    let (_w, store) = ko_position();
    let games = with_games(&*store, |g| g.clone()).unwrap();
    let text = serde_json::to_string(&games).unwrap();
    let back: Games = serde_json::from_str(&text).unwrap();
    assert_eq!(back, games);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);

    let (id, table) = games.tables().next().expect("one game");
    let rebuilt = back.table(id).unwrap();
    let (was, now) = (table.game(), rebuilt.game());
    assert_eq!(now.render(), was.render());
    assert_eq!(now.legal_moves(), was.legal_moves());
    assert_eq!(now.captures(Color::Black), 1);
    assert_eq!(now.history(), was.history());
    assert_eq!(rebuilt.last_activity(), table.last_activity());
    // Superko: the retake is refused in the rebuilt game as in the original.
    let d4 = Point::parse("D4", BoardSize::NINE).unwrap();
    assert!(was.check(d4).is_err());
    assert_eq!(now.check(d4), was.check(d4));
    assert!(!now.legal_moves().contains(&d4));
    assert_eq!(rebuilt.play_definition(), table.play_definition());
}

#[test]
fn a_stored_move_list_that_does_not_replay_is_an_error_naming_the_move() {
    let (_w, store) = ko_position();
    let games = with_games(&*store, |g| g.clone()).unwrap();
    let mut doc: Value = serde_json::to_value(&games).unwrap();
    let table = doc["tables"].as_object_mut().unwrap().values_mut().next();
    let moves = &mut table.unwrap()["moves"];
    assert_eq!(moves[2], "D5");

    moves[2] = json!("C4"); // occupied
    let err = serde_json::from_value::<Games>(doc.clone()).unwrap_err();
    assert!(
        err.to_string()
            .contains("bad stored game: move 3 `C4` does not replay: C4 is occupied"),
        "{err}"
    );
    doc["tables"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap()["moves"][2] = json!("Z99");
    let err = serde_json::from_value::<Games>(doc).unwrap_err();
    assert!(
        err.to_string().contains("move 3 `Z99` does not replay"),
        "{err}"
    );
}

#[test]
fn an_unreachable_store_makes_play_a_tool_error_and_open_a_refusal_changing_nothing() {
    let store = Arc::new(Flaky::default());
    let mut w = World::with_games(quick_config(), store.clone());
    let a = w.connect("alice");
    w.open(a, "vs-bot", json!({"size": 9})).unwrap();
    w.take(a);
    let before = with_games(&*store, |g| g.clone()).unwrap();

    store.down.store(true, Ordering::Relaxed);
    let played = w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    assert_eq!(played["isError"], true);
    assert_eq!(
        text_of(&played),
        "the games store is unreachable: connection refused"
    );
    assert!(played["_meta"]["mcpl/hints"].is_null(), "{played}");
    assert!(w.bot_turns.is_empty(), "no bot move is owed");
    let refused = w.open(a, "second", json!({"size": 9})).unwrap_err();
    assert!(
        refused
            .message
            .contains("the games store is unreachable: connection refused"),
        "{}",
        refused.message
    );
    let standings = w.call(a, "standings", json!({}), None);
    assert_eq!(standings["isError"], true);
    assert!(w.arcade.games().is_err());

    store.down.store(false, Ordering::Relaxed);
    assert_eq!(with_games(&*store, |g| g.clone()).unwrap(), before);
    // Once it is back, the game goes on where it was.
    let played = w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    assert!(text_of(&played).starts_with("You played E5."), "{played}");
}

#[test]
fn a_second_arcade_on_the_same_store_makes_the_bot_move_the_first_owed() {
    let store = Arc::new(MemoryGames::default());
    let mut w = World::with_games(quick_config(), store.clone());
    let a = w.connect("alice");
    w.open(a, "vs-bot", json!({"size": 9})).unwrap();
    w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    w.take(a);
    let turn = w.bot_turns.pop().expect("a bot move is owed");
    let replica = Arcade::with_store(quick_config(), store);
    let (principal, update) = replica.bot_turn(&turn, w.now).unwrap().expect("not stale");
    let again = replica.bot_turn(&turn, w.now).unwrap();
    assert!(again.is_none(), "the move is made once");
    w.apply(&principal, update);
    let written = w.take(a);
    let push = pushes(&written).pop().expect("alice hears the bot");
    assert!(text_of(&push).contains("Your move."), "{push}");
    let moves = move_enum(tool_entry(&push["hints"], "play", Some("vs-bot")).unwrap());
    let played = w.call(a, "play", json!({"move": moves[0]}), Some("vs-bot"));
    assert!(
        text_of(&played).contains("The bot is thinking."),
        "{played}"
    );
    let board = replica.board(&principal, "vs-bot").unwrap().unwrap();
    assert_eq!(Some(board), w.arcade.board(&principal, "vs-bot").unwrap());
}

#[test]
fn s5_3_the_next_deadline_is_the_last_activity_plus_the_idle_timeout() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    assert_eq!(w.arcade.next_deadline(w.now).unwrap(), None);
    w.open(a, "vs-bot", json!({"size": 9})).unwrap();
    let opened = w.now;
    w.now += Duration::from_secs(60);
    assert_eq!(
        w.arcade.next_deadline(w.now).unwrap(),
        Some(opened + Duration::from_secs(30 * 60))
    );
}
