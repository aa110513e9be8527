//! A game between two principals over real WebSocket connections: a challenge, the suggestion
//! it pushes, the accepting open, and moves that reach the other side as pushes with hints.
//! Every hint-carrying message on each connection takes the next rev (RFC-014 §6.1), whatever
//! carried it: results, pushes or `tools/hints`.

mod ws_agent;

use mcpl_arcade::{ArcadeConfig, start};
use mcpl_server::{Identity, TokenMap};
use serde_json::json;
use ws_agent::{Agent, play_moves};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_principals_play_over_websocket_with_consecutive_revs() {
    let arcade = start(ArcadeConfig::default()).expect("the arcade builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/", listener.local_addr().unwrap());
    let identity = Identity::Tokens(TokenMap::new().with("t-ada", "ada").with("t-bob", "bob"));
    let runtime = arcade.runtime().clone();
    tokio::spawn(async move { runtime.serve_ws(listener, identity).await });

    let mut ada = Agent::connect(&url, "t-ada").await;
    let mut bob = Agent::connect(&url, "t-bob").await;

    // Ada challenges Bob: her side opens in the call's own result (§6.2).
    let ada_game = ada.challenge("bob").await;

    // Bob is pushed a suggestion; it opens nothing by itself (§7).
    let invitation = bob.push_where(|p| p["hints"]["suggest"].is_array()).await;
    let suggest = &invitation["hints"]["suggest"][0];
    assert_eq!(suggest["action"], "open");
    assert_eq!(suggest["toolset"], "go");
    let bob_game = suggest["instance"].as_str().unwrap().to_owned();
    let listed = bob.request("toolsets/list", json!({})).await;
    assert!(
        listed["open"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["toolset"] != "go"),
        "a suggestion opened something: {listed}"
    );

    // Bob accepts by opening the suggested instance with the suggested options.
    let opened = bob
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": bob_game, "options": suggest["options"]}),
        )
        .await;
    assert_eq!(opened["instance"], bob_game.as_str());

    // Ada (Black) is told by a push that carries the hints showing `play` with its enum.
    let mut mover_moves = loop {
        let push = ada.push_where(|p| p["hints"].is_object()).await;
        if let Some(moves) = play_moves(&push["hints"], &ada_game) {
            break moves;
        }
    };
    assert_eq!(mover_moves.len(), 81, "an empty 9x9 board");

    // Three moves, alternating; each reaches the other side as a push with hints.
    for turn in 0..3 {
        let (mover, other, mover_game, other_game) = if turn % 2 == 0 {
            (&mut ada, &mut bob, ada_game.as_str(), bob_game.as_str())
        } else {
            (&mut bob, &mut ada, bob_game.as_str(), ada_game.as_str())
        };
        let mv = mover_moves[turn * 7 % mover_moves.len()].clone();
        // The result accepts the move and hides `play` (§6.2).
        mover.play(mover_game, &mv).await;
        mover_moves = loop {
            let push = other.push_where(|p| p["hints"].is_object()).await;
            if let Some(moves) = play_moves(&push["hints"], other_game) {
                break moves;
            }
        };
        assert!(
            !mover_moves.contains(&mv),
            "{mv} is taken, so it is no longer a legal move"
        );
    }

    ada.assert_revs_consecutive("ada");
    bob.assert_revs_consecutive("bob");
    ada.peer.close().await;
    bob.peer.close().await;
}
