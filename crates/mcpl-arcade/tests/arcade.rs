//! The arcade served by the SDK's session core: games as instances, per-instance legal moves,
//! visibility that follows the turn, challenges, ends without a close, and bad input.

mod common;

use std::time::Duration;

use common::{World, move_enum, pushes, quick_config, text_of, tool_entry};
use mcpl_arcade::{GO, LOBBY, TUTOR, declarations};
use serde_json::{Value, json};

fn result_hints(result: &Value) -> Value {
    result["_meta"]["mcpl/hints"].clone()
}

fn list(w: &mut World, c: usize) -> Value {
    w.request(c, "toolsets/list", json!({}))
        .expect("toolsets/list answers")
}

fn ended_reasons(w: &mut World, c: usize) -> Vec<String> {
    list(w, c)["ended"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["reason"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn open_instances(w: &mut World, c: usize) -> Vec<String> {
    list(w, c)["open"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["instance"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Alice opens `vs-bot` (9x9) and gets its result.
fn alice_vs_bot(config: mcpl_arcade::ArcadeConfig) -> (World, usize, Value) {
    let mut w = World::new(config);
    let a = w.connect("alice");
    let opened = w
        .open(a, "vs-bot", json!({"size": 9}))
        .expect("the open succeeds");
    (w, a, opened)
}

#[test]
fn s9_open_states_play_with_every_legal_move_as_an_enum() {
    let (_, _, opened) = alice_vs_bot(quick_config());
    assert_eq!(opened["instance"], "vs-bot");
    assert_eq!(opened["title"], "Go vs bot (9x9)");
    assert!(text_of(&opened).contains("You are Black (X); your move."));
    let hints = result_hints(&opened);
    let play = tool_entry(&hints, "play", Some("vs-bot")).expect("play is stated");
    assert_eq!(play["visible"], true);
    let moves = move_enum(play);
    assert_eq!(moves.len(), 81);
    assert!(moves.contains(&"A1".to_owned()) && moves.contains(&"J9".to_owned()));
    assert!(!moves.iter().any(|m| m.starts_with('I')));
    for tool in ["pass", "board", "resign"] {
        assert_eq!(
            tool_entry(&hints, tool, Some("vs-bot")).unwrap()["visible"],
            true
        );
    }
}

#[test]
fn s9_play_hides_play_until_the_bot_push_shows_it_again_with_new_moves() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    let played = w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    assert_ne!(played["isError"], true, "{played}");
    assert!(text_of(&played).starts_with("You played E5. The bot is thinking."));
    let hints = result_hints(&played);
    assert_eq!(
        tool_entry(&hints, "play", Some("vs-bot")).unwrap()["visible"],
        false
    );
    assert_eq!(
        tool_entry(&hints, "pass", Some("vs-bot")).unwrap()["visible"],
        false
    );
    let call_rev = hints["rev"].as_u64().unwrap();
    // §6.2: the call's own consequences ride in its result; nothing is pushed for them.
    let written = w.take(a);
    assert!(pushes(&written).is_empty());

    assert_eq!(w.run_bots(), 1);
    let written = w.take(a);
    let push = pushes(&written)
        .pop()
        .expect("the bot's move arrives as a push");
    assert_eq!(push["toolset"], GO);
    assert_eq!(push["instance"], "vs-bot");
    assert!(text_of(&push).contains("The bot played"), "{push}");
    let hints = &push["hints"];
    assert_eq!(
        hints["rev"].as_u64().unwrap(),
        call_rev + 1,
        "§6.1: consecutive revs"
    );
    let play = tool_entry(hints, "play", Some("vs-bot")).unwrap();
    assert_eq!(play["visible"], true);
    assert_eq!(
        tool_entry(hints, "pass", Some("vs-bot")).unwrap()["visible"],
        true
    );
    let moves = move_enum(play);
    assert_eq!(moves.len(), 79, "two stones are on the board");
    assert!(!moves.contains(&"E5".to_owned()));
}

#[test]
fn s5_5_each_game_has_its_own_legal_moves() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    w.open(a, "second", json!({"size": 13}))
        .expect("a second game opens");
    w.call(a, "play", json!({"move": "A1"}), Some("vs-bot"));
    w.run_bots();
    let written = w.take(a);
    let push = pushes(&written).pop().unwrap();
    let hints = &push["hints"];
    assert!(
        tool_entry(hints, "play", Some("second")).is_none(),
        "the other game is untouched"
    );
    // The 13x13 game still offers all 169 points, and the 9x9 one does not know K10.
    let state = list(&mut w, a);
    let statement = &state["_meta"]["mcpl/hints"];
    let second = move_enum(tool_entry(statement, "play", Some("second")).unwrap());
    assert_eq!(second.len(), 169);
    let first = move_enum(tool_entry(statement, "play", Some("vs-bot")).unwrap());
    assert_eq!(first.len(), 79);
    assert!(!first.contains(&"K10".to_owned()) && second.contains(&"K10".to_owned()));
}

#[test]
fn s4_3_a_play_without_an_instance_names_the_open_games() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    w.open(a, "second", json!({"size": 9})).unwrap();
    let result = w.call(a, "play", json!({"move": "E5"}), None);
    assert_eq!(result["isError"], true);
    let text = text_of(&result);
    assert!(text.contains("vs-bot") && text.contains("second"), "{text}");
    assert!(
        w.arcade
            .board(&common_alice(), "vs-bot")
            .unwrap()
            .unwrap()
            .contains("No moves yet.")
    );
}

fn common_alice() -> mcpl_server::Principal {
    mcpl_server::Principal::authenticated("alice")
}

#[test]
fn bad_input_illegal_or_malformed_moves_are_tool_errors_that_change_nothing() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    w.run_bots();
    w.take(a);
    let before = w.arcade.board(&common_alice(), "vs-bot").unwrap().unwrap();
    for bad in [
        json!({"move": "E5"}),
        json!({"move": "Z99"}),
        json!({"move": 5}),
        json!({}),
    ] {
        let result = w.call(a, "play", bad.clone(), Some("vs-bot"));
        assert_eq!(result["isError"], true, "{bad} is refused");
        assert!(
            result_hints(&result).is_null(),
            "a refusal carries no hints"
        );
    }
    assert_eq!(
        w.arcade.board(&common_alice(), "vs-bot").unwrap().unwrap(),
        before
    );
    assert!(w.bot_turns.is_empty());
}

#[test]
fn s11_a_host_without_tool_hints_plays_through_the_compatibility_tools() {
    let mut w = World::new(quick_config());
    let a = w.connect_with("alice", false);
    let opened = w.call(
        a,
        "toolset_open",
        json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
        None,
    );
    assert_ne!(opened["isError"], true, "{opened}");
    let played = w.call(a, "play", json!({"move": "E5"}), None);
    assert!(text_of(&played).starts_with("You played E5."), "{played}");
    assert!(
        result_hints(&played).is_null(),
        "§6.3: no hints for a host without toolHints"
    );
    w.run_bots();
    let board = w.arcade.board(&common_alice(), "g").unwrap().unwrap();
    let again = w.call(a, "play", json!({"move": "E5"}), None);
    assert_eq!(
        again["isError"], true,
        "the game's own legal moves still apply"
    );
    assert_eq!(
        w.arcade.board(&common_alice(), "g").unwrap().unwrap(),
        board
    );
}

#[test]
fn bad_input_size_10_is_refused_by_open_and_by_challenge() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let err = w.open(a, "big", json!({"size": 10})).unwrap_err();
    assert!(
        err.message.contains("size") || err.message.contains("10"),
        "{}",
        err.message
    );
    let result = w.call(a, "challenge", json!({"who": "bob", "size": 10}), None);
    assert_eq!(result["isError"], true);
    assert!(open_instances(&mut w, a).is_empty());
    assert_eq!(w.arcade.games().unwrap(), 0);
}

#[test]
fn bad_input_a_move_into_another_principals_game_is_refused() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    let b = w.connect("bob");
    w.take(a);
    let result = w.call(b, "play", json!({"move": "E5"}), Some("vs-bot"));
    assert_eq!(result["isError"], true);
    let board = w.arcade.board(&common_alice(), "vs-bot").unwrap().unwrap();
    assert!(board.contains("No moves yet."));
    assert!(w.take(a).is_empty(), "alice hears nothing");
}

#[test]
fn s9_challenge_suggests_an_open_and_the_game_runs_between_two_agents() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let b = w.connect("bob");
    let sent = w.call(a, "challenge", json!({"who": "bob", "size": 13}), None);
    assert_ne!(sent["isError"], true, "{sent}");
    let hints = result_hints(&sent);
    let state = &hints["toolsets"][0];
    assert_eq!(
        (state["toolset"].as_str(), state["instance"].as_str()),
        (Some(GO), Some("vs-bob"))
    );
    assert_eq!(state["state"], "open");
    assert_eq!(
        tool_entry(&hints, "play", Some("vs-bob")).unwrap()["visible"],
        false
    );

    // §7: bob is told, with a suggestion that opens nothing by itself.
    let written = w.take(b);
    let push = pushes(&written).pop().expect("bob gets a push");
    let suggest = &push["hints"]["suggest"][0];
    assert_eq!(suggest["action"], "open");
    assert_eq!(suggest["toolset"], GO);
    assert_eq!(suggest["instance"], "vs-alice");
    assert_eq!(suggest["options"], json!({"size": 13, "opponent": "alice"}));
    assert!(open_instances(&mut w, b).is_empty());

    // Bob accepts by opening what was suggested; alice (Black) gets her move.
    let accepted = w.open(b, "vs-alice", suggest["options"].clone()).unwrap();
    assert!(text_of(&accepted).contains("You are White (O)"));
    assert_eq!(
        tool_entry(&result_hints(&accepted), "play", Some("vs-alice")).unwrap()["visible"],
        false
    );
    let written = w.take(a);
    let push = pushes(&written).pop().expect("alice hears bob accepted");
    assert!(text_of(&push).contains("bob accepted"));
    assert_eq!(
        move_enum(tool_entry(&push["hints"], "play", Some("vs-bob")).unwrap()).len(),
        169
    );

    // Out of turn: bob's play is invisible, so the SDK refuses it.
    let early = w.call(b, "play", json!({"move": "D4"}), Some("vs-alice"));
    assert_eq!(early["isError"], true);

    w.call(a, "play", json!({"move": "D4"}), Some("vs-bob"));
    let written = w.take(b);
    let push = pushes(&written).pop().expect("bob hears alice's move");
    assert!(text_of(&push).contains("alice played D4. Your move."));
    let play = tool_entry(&push["hints"], "play", Some("vs-alice")).unwrap();
    assert_eq!(play["visible"], true);
    assert_eq!(move_enum(play).len(), 168);

    // Bob resigns: his instance ends with the call; alice's ends on a push with a record.
    let resigned = w.call(b, "resign", json!({}), Some("vs-alice"));
    assert!(text_of(&resigned).contains("You resigned."));
    let reasons = ended_reasons(&mut w, a);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("Your opponent (bob) resigned. You win.")),
        "{reasons:?}"
    );
    assert!(open_instances(&mut w, a).is_empty());
    assert!(open_instances(&mut w, b).is_empty());
    assert_eq!(w.arcade.standings().unwrap()["alice"].wins, 1);
    assert_eq!(w.arcade.standings().unwrap()["bob"].losses, 1);
}

#[test]
fn s5_3_the_bot_resigning_ends_the_game_with_a_record() {
    let mut config = quick_config();
    config.bot.resign_below = Some(1.1); // always below: resigns at its first turn
    let (mut w, a, _) = alice_vs_bot(config);
    w.call(a, "play", json!({"move": "E5"}), Some("vs-bot"));
    w.run_bots();
    let written = w.take(a);
    let push = pushes(&written).pop().unwrap();
    assert!(text_of(&push).contains("The bot resigned."));
    let toolsets = &push["hints"]["toolsets"][0];
    assert_eq!(toolsets["state"], "closed");
    let reasons = ended_reasons(&mut w, a);
    assert_eq!(reasons, ["Your opponent (the bot) resigned. You win."]);
    assert_eq!(w.arcade.games().unwrap(), 0);
}

#[test]
fn s5_3_an_opponent_leaving_ends_the_other_side_with_a_record() {
    let mut w = World::new(quick_config());
    let (a, b) = w.alice_vs_bob("vs-bob", "vs-alice");
    w.call(a, "play", json!({"move": "C3"}), Some("vs-bob"));
    let closed = w
        .request(
            b,
            "toolsets/close",
            json!({"toolset": "go", "instance": "vs-alice"}),
        )
        .unwrap();
    assert!(text_of(&closed).contains("You left and forfeit the game; alice wins."));
    assert_eq!(ended_reasons(&mut w, a), ["bob left the game; you win."]);
    assert_eq!(w.arcade.standings().unwrap()["alice"].wins, 1);
}

#[test]
fn s5_3_an_idle_game_times_out_with_a_record_for_each_side() {
    let mut w = World::new(quick_config());
    let (a, b) = w.alice_vs_bob("vs-bob", "vs-alice");
    w.advance(Duration::from_secs(29 * 60));
    assert_eq!(w.arcade.games().unwrap(), 1, "not yet");
    w.advance(Duration::from_secs(60));
    assert_eq!(w.arcade.games().unwrap(), 0);
    for c in [a, b] {
        let reasons = ended_reasons(&mut w, c);
        assert_eq!(reasons.len(), 1);
        assert!(reasons[0].contains("timed out after 30 minutes"));
    }
}

#[test]
fn s9_two_passes_count_the_board_and_update_the_standings() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    w.call(a, "pass", json!({}), Some("vs-bot"));
    // The bot (White) is ahead by komi on an empty board, so it passes back.
    w.run_bots();
    let written = w.take(a);
    let push = pushes(&written).pop().unwrap();
    assert!(
        text_of(&push).contains(
            "The bot passed. Game over: W+7.5 (Black 0, White 0 + komi 7.5). The bot wins."
        ),
        "{push}"
    );
    let standings = w.call(a, "standings", json!({}), None);
    let text = text_of(&standings);
    assert!(
        text.contains("the bot: 1-0-0") && text.contains("alice: 0-1-0"),
        "{text}"
    );
}

#[test]
fn s5_1_the_lobby_is_open_from_the_start_and_the_tutor_is_undeclared() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let state = list(&mut w, a);
    let open: Vec<&str> = state["open"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["toolset"].as_str())
        .collect();
    assert_eq!(open, [LOBBY]);
    let games = w.call(a, "games", json!({}), None);
    assert_eq!(text_of(&games), "You have no games and no challenges.");

    let manifest = declarations().build().unwrap().manifest(true);
    let text = manifest.to_string();
    assert!(text.contains("\"go\"") && text.contains("\"lobby\""));
    assert!(!text.contains(TUTOR), "the tutor group is not declared");
    let tools = w.request(a, "tools/list", json!({})).unwrap();
    let rules = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "rules")
        .unwrap();
    assert_eq!(rules["_meta"]["mcpl/toolset"], TUTOR);
    let answer = w.call(a, "rules", json!({}), None);
    assert!(text_of(&answer).contains("Positional superko"));
}

#[test]
fn the_hint_tool_names_a_legal_move_in_your_game() {
    let (mut w, a, _) = alice_vs_bot(quick_config());
    let hint = w.call(a, "hint", json!({"game": "vs-bot"}), None);
    assert_ne!(hint["isError"], true, "{hint}");
    assert!(text_of(&hint).starts_with("The bot would play "), "{hint}");
    let missing = w.call(a, "hint", json!({"game": "nope"}), None);
    assert_eq!(missing["isError"], true);
    assert_eq!(text_of(&missing), "no game `nope` is open for you");
}

#[test]
fn s6_1_a_move_cancelled_before_it_runs_is_not_played_and_sends_nothing() {
    use mcpl_protocol::jsonrpc::{Message, Notification, Request, RequestId};
    use mcpl_server::{CallKind, Effect, Outcome, Reply};

    let (mut w, a, _) = alice_vs_bot(quick_config());
    w.take(a);
    let alice = w.conns[a].principal.clone();
    let before = w.arcade.board(&alice, "vs-bot").unwrap();
    let id = RequestId::Number(9_001);
    let now = w.now;
    let play = json!({"name": "play", "arguments": {"move": "E5"},
                      "_meta": {"mcpl/instance": "vs-bot"}});
    let session = &mut w.conns[a].session;
    session.handle_message(
        now,
        Message::Request(Request::new(id.clone(), "tools/call", Some(play))),
    );
    let Some(Effect::Call(mut call)) = session.poll_effect() else {
        panic!("the play goes to app code");
    };
    session.handle_message(
        now,
        Message::Notification(Notification::new(
            "notifications/cancelled",
            Some(json!({"requestId": id})),
        )),
    );
    let CallKind::Tool { tool, args } = call.kind.clone() else {
        panic!("a tool call");
    };
    let (result, turn) = w.arcade.call(&mut call.context, &tool, &args, now);
    assert_eq!(result.is_error, Some(true));
    assert!(turn.is_none(), "no bot move is owed");
    assert_eq!(
        w.arcade.board(&alice, "vs-bot").unwrap(),
        before,
        "nothing was played"
    );
    let outcome = Outcome {
        context: call.context,
        reply: Reply::Tool(result),
    };
    w.conns[a]
        .session
        .handle_call_done(now, call.id, outcome)
        .expect("the outcome fits");
    w.drive();
    assert!(
        w.take(a).is_empty(),
        "no result for a cancelled call, and no tools/hints with nothing changed"
    );
}
