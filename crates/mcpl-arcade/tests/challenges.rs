//! Challenges between agents: refusals, withdrawal, and what the challenged agent sees.

mod common;

use common::{World, pushes, quick_config, text_of};
use serde_json::json;

#[test]
fn a_self_challenge_is_a_tool_error() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let result = w.call(a, "challenge", json!({"who": "alice", "size": 9}), None);
    assert_eq!(result["isError"], true);
    assert_eq!(text_of(&result), "you cannot challenge yourself");
    let opened = w.open(a, "me", json!({"size": 9, "opponent": "alice"}));
    assert!(
        opened
            .unwrap_err()
            .message
            .contains("you cannot challenge yourself")
    );
    assert_eq!(w.arcade.games().unwrap(), 0);
}

#[test]
fn the_challenged_agent_sees_the_challenge_in_the_lobby() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let b = w.connect("bob");
    w.call(a, "challenge", json!({"who": "bob", "size": 19}), None);
    let games = w.call(b, "games", json!({}), None);
    let text = text_of(&games);
    assert!(text.contains("challenge from alice: 19x19"), "{text}");
    assert!(text.contains("\"opponent\": \"alice\""), "{text}");
    let mine = w.call(a, "games", json!({}), None);
    assert!(
        text_of(&mine)
            .contains("`vs-bob`: 19x19 vs bob, you are Black, move 1, waiting for them to accept")
    );
}

#[test]
fn accepting_at_another_size_is_refused_and_changes_nothing() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let b = w.connect("bob");
    w.call(a, "challenge", json!({"who": "bob", "size": 13}), None);
    let err = w
        .open(b, "vs-alice", json!({"size": 9, "opponent": "alice"}))
        .unwrap_err();
    assert!(
        err.message
            .contains("alice challenged you to 13x13; open with size 13 to accept"),
        "{}",
        err.message
    );
    assert_eq!(w.arcade.games().unwrap(), 1);
    // Challenging back instead of accepting is refused with the way to accept.
    let back = w.call(b, "challenge", json!({"who": "alice", "size": 13}), None);
    assert_eq!(back["isError"], true);
    assert!(text_of(&back).contains("alice already challenged you"));
    assert_eq!(w.arcade.games().unwrap(), 1);
}

#[test]
fn closing_before_the_answer_withdraws_the_challenge() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    let b = w.connect("bob");
    w.call(a, "challenge", json!({"who": "bob", "size": 9}), None);
    w.take(b);
    let closed = w
        .request(
            a,
            "toolsets/close",
            json!({"toolset": "go", "instance": "vs-bob"}),
        )
        .unwrap();
    assert_eq!(text_of(&closed), "Challenge to bob withdrawn.");
    let written = w.take(b);
    let push = pushes(&written).pop().expect("bob is told");
    assert_eq!(text_of(&push), "alice withdrew the challenge.");
    assert_eq!(w.arcade.games().unwrap(), 0);
    // Accepting now starts a new challenge the other way instead.
    let opened = w
        .open(b, "vs-alice", json!({"size": 9, "opponent": "alice"}))
        .unwrap();
    assert!(text_of(&opened).starts_with("Challenge sent to alice."));
}

#[test]
fn a_second_challenge_to_the_same_agent_gets_its_own_instance() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    w.connect("bob");
    w.call(a, "challenge", json!({"who": "bob", "size": 9}), None);
    let second = w.call(a, "challenge", json!({"who": "bob", "size": 13}), None);
    assert!(text_of(&second).contains("open as `vs-bob-2`"), "{second}");
    assert_eq!(w.arcade.games().unwrap(), 2);
}

#[test]
fn a_challenge_to_an_agent_that_does_not_exist_is_refused_and_changes_nothing() {
    let config = mcpl_arcade::ArcadeConfig {
        agents: Some(["alice".to_owned(), "bob".to_owned()].into()),
        ..quick_config()
    };
    let mut w = World::new(config);
    let a = w.connect("alice");
    let result = w.call(a, "challenge", json!({"who": "zed", "size": 9}), None);
    assert_eq!(result["isError"], true);
    assert_eq!(
        text_of(&result),
        "bad who: no agent `zed` plays here; challenge an agent by its id"
    );
    let long = "z".repeat(10_000);
    let result = w.call(a, "challenge", json!({"who": long, "size": 9}), None);
    assert!(text_of(&result).len() < 300, "quoted whole");
    assert_eq!(w.arcade.games().unwrap(), 0);
    let ok = w.call(a, "challenge", json!({"who": "bob", "size": 9}), None);
    assert_eq!(ok.get("isError"), None, "{ok}");
    assert_eq!(w.arcade.games().unwrap(), 1);
}

#[test]
fn a_resignation_is_told_once_to_each_side() {
    let mut w = World::new(quick_config());
    let a = w.connect("alice");
    w.open(a, "vs-bot", json!({"size": 9})).unwrap();
    let resigned = w.call(a, "resign", json!({}), Some("vs-bot"));
    let text = text_of(&resigned);
    // Told once; the board below it records the move as usual.
    assert_eq!(
        text.split("\n\n").next(),
        Some("You resigned. The bot wins."),
        "{text}"
    );
}
