//! The arcade as two replicas on one real Redis (feature `redis`): one principal connected
//! to both over WebSocket sees every change on each connection's own consecutive revs
//! (RFC-014 §5.6, §6.1), a game opened on one replica is played through the other, and the
//! game goes on after the replica that opened it is gone. Two agents on different replicas
//! play each other.

// The throwaway `redis-server` of mcpl-server-redis's tests, reused as it is.
#[path = "../../mcpl-server-redis/tests/common/mod.rs"]
mod redis_common;
mod ws_agent;

use mcpl_arcade::{ArcadeConfig, RedisArcade, start_on_redis};
use mcpl_server::{Identity, TokenMap};
use redis_common::RedisServer;
use serde_json::json;
use tokio::task::JoinHandle;
use ws_agent::Agent;

const PREFIX: &str = "arcade-test";

/// A bot that plays quickly and never resigns.
fn quick_config() -> ArcadeConfig {
    let mut config = ArcadeConfig::default();
    config.bot.playouts = 32;
    config.bot.resign_below = None;
    config.hint_playouts = 16;
    config
}

/// One replica serving WebSocket on a loopback port.
struct Replica {
    arcade: RedisArcade,
    url: String,
    serving: JoinHandle<()>,
}

impl Replica {
    async fn start(redis: &RedisServer) -> Replica {
        let arcade = start_on_redis(quick_config(), &redis.url(), PREFIX, false)
            .await
            .expect("the replica starts on redis");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/", listener.local_addr().unwrap());
        let identity = Identity::Tokens(
            TokenMap::new()
                .with("t-alice", "alice")
                .with("t-bob", "bob"),
        );
        let runtime = arcade.server().runtime().clone();
        let serving = tokio::spawn(async move {
            let _ = runtime.serve_ws(listener, identity).await;
        });
        Replica {
            arcade,
            url,
            serving,
        }
    }

    /// Stops listening and drops the whole replica: server, bot worker and fan-out.
    fn kill(self) {
        self.serving.abort();
        drop(self.arcade);
    }
}

/// Black and white stones on a text board (rows only: they start with their number).
fn stones(board: &str) -> (usize, usize) {
    let rows = board.lines().filter(|l| {
        l.trim_start()
            .split(' ')
            .next()
            .is_some_and(|n| n.parse::<u8>().is_ok())
    });
    rows.fold((0, 0), |(x, o), row| {
        (x + row.matches('X').count(), o + row.matches('O').count())
    })
}

/// A legal move from `moves`, preferring `wanted` (away from the edges, so nothing is
/// captured in a few moves).
fn pick(moves: &[String], wanted: &[&str]) -> String {
    wanted
        .iter()
        .find(|w| moves.iter().any(|m| m == *w))
        .map(|w| (*w).to_owned())
        .unwrap_or_else(|| moves[moves.len() / 2].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_a_game_opened_on_one_replica_is_played_on_the_other_and_outlives_it() {
    let redis = RedisServer::start();
    let a = Replica::start(&redis).await;
    let b = Replica::start(&redis).await;
    let mut on_a = Agent::connect(&a.url, "t-alice").await;
    let mut on_b = Agent::connect(&b.url, "t-alice").await;

    // Alice opens a game against the bot through A; her connection to B hears of it.
    let opened = on_a
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": "g1", "options": {"size": 9}}),
        )
        .await;
    assert_eq!(opened["instance"], json!("g1"), "{opened}");
    assert_eq!(on_a.next_turn("g1").await.len(), 81, "an empty 9x9 board");
    let moves = on_b.next_turn("g1").await;
    assert_eq!(moves.len(), 81, "B states the same game");

    // She plays through B, which has never seen the game in memory: it reads it from Redis.
    on_b.play("g1", "E5").await;
    // The bot answers (on B, which served the move); both connections get it as hints.
    let after_bot_b = on_b.next_turn("g1").await;
    let after_bot_a = on_a.next_turn("g1").await;
    assert_eq!(after_bot_b.len(), 79, "two stones down");
    assert_eq!(
        after_bot_a, after_bot_b,
        "both connections state the same moves"
    );
    assert!(!after_bot_b.contains(&"E5".to_owned()));
    on_a.assert_revs_consecutive("alice on A");
    on_b.assert_revs_consecutive("alice on B");

    // A goes away entirely; the game goes on through B.
    on_a.peer.close().await;
    a.kill();
    on_b.play("g1", &pick(&after_bot_b, &["C3", "G7", "C7", "G3"]))
        .await;
    let after = on_b.next_turn("g1").await;
    assert_eq!(after.len(), 77, "four stones down");
    let board = on_b.board("g1").await;
    assert_eq!(
        stones(&board),
        (2, 2),
        "every move is on the board:\n{board}"
    );
    on_b.assert_revs_consecutive("alice on B");
    on_b.peer.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_two_agents_on_different_replicas_play_each_other() {
    let redis = RedisServer::start();
    let a = Replica::start(&redis).await;
    let b = Replica::start(&redis).await;
    let mut alice = Agent::connect(&a.url, "t-alice").await;
    let mut bob = Agent::connect(&b.url, "t-bob").await;

    // Alice challenges Bob on A: her side opens in the call's own result (§6.2).
    let alice_game = alice.challenge("bob").await;

    // Bob, on B, is pushed the suggestion to open his side (§7) and accepts it there.
    let invitation = bob.push_where(|p| p["hints"]["suggest"].is_array()).await;
    let suggest = &invitation["hints"]["suggest"][0];
    assert_eq!(suggest["toolset"], "go");
    let bob_game = suggest["instance"].as_str().unwrap().to_owned();
    let opened = bob
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": bob_game, "options": suggest["options"]}),
        )
        .await;
    assert_eq!(opened["instance"], bob_game.as_str(), "{opened}");

    // Alice (Black) hears on A that the game started; then three moves across replicas.
    let mut moves = alice.next_turn(&alice_game).await;
    assert_eq!(moves.len(), 81);
    let wanted = [["E5", "C3"], ["E3", "G5"], ["C5", "G3"]];
    for (turn, wanted) in wanted.iter().enumerate() {
        let (mover, other, mover_game, other_game) = if turn % 2 == 0 {
            (&mut alice, &mut bob, &alice_game, &bob_game)
        } else {
            (&mut bob, &mut alice, &bob_game, &alice_game)
        };
        let mv = pick(&moves, wanted);
        mover.play(mover_game, &mv).await;
        moves = other.next_turn(other_game).await;
        assert!(!moves.contains(&mv), "{mv} is taken on the other replica");
        assert_eq!(moves.len(), 80 - turn);
    }

    // Both replicas show the same board from the one stored game.
    let (on_a, on_b) = (alice.board(&alice_game).await, bob.board(&bob_game).await);
    assert_eq!(stones(&on_a), (2, 1), "{on_a}");
    // After each player's own first line ("You are Black ..."), the boards are one.
    let board = |text: &str| text.split_once("\n\n").map(|(_, b)| b.to_owned());
    assert_eq!(board(&on_a), board(&on_b), "{on_a}\n{on_b}");
    assert!(board(&on_a).is_some(), "{on_a}");
    alice.assert_revs_consecutive("alice");
    bob.assert_revs_consecutive("bob");
    alice.peer.close().await;
    bob.peer.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_a_move_while_redis_is_away_is_refused_saying_so_and_changes_nothing() {
    let mut redis = RedisServer::start();
    let a = Replica::start(&redis).await;
    let mut alice = Agent::connect(&a.url, "t-alice").await;
    alice
        .request(
            "toolsets/open",
            json!({"toolset": "go", "instance": "g1", "options": {"size": 9}}),
        )
        .await;
    let moves = alice.next_turn("g1").await;

    redis.stop();
    let refused = alice
        .request(
            "tools/call",
            json!({"name": "play", "arguments": {"move": pick(&moves, &["E5"])},
                   "_meta": {"mcpl/instance": "g1"}}),
        )
        .await;
    assert_eq!(refused["isError"], json!(true), "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("games store is unreachable"), "{text}");
    // Nothing changed: `play` was not hidden (the move was not made).
    let hidden = refused["_meta"]["mcpl/hints"]["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "play"));
    assert!(!hidden, "a refused move changes no tool: {refused}");
    assert!(!a.arcade.store().is_available());
    alice.peer.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_each_game_has_a_key_of_its_own_and_no_document_holds_them_all() {
    let redis = RedisServer::start();
    let a = Replica::start(&redis).await;
    let b = Replica::start(&redis).await;
    let mut alice = Agent::connect(&a.url, "t-alice").await;
    let mut bob = Agent::connect(&b.url, "t-bob").await;
    let mut turns = Vec::new();
    for (agent, game) in [(&mut alice, "g1"), (&mut bob, "g2")] {
        agent
            .request(
                "toolsets/open",
                json!({"toolset": "go", "instance": game, "options": {"size": 9}}),
            )
            .await;
        turns.push(agent.next_turn(game).await);
    }
    let mut c = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{PREFIX}:game*"))
        .query(&mut c)
        .unwrap();
    keys.sort();
    assert_eq!(
        keys,
        [
            format!("{PREFIX}:game:1"),
            format!("{PREFIX}:game:2"),
            format!("{PREFIX}:games"),
            format!("{PREFIX}:games:meta"),
        ],
        "a key per game, the set of games and its version"
    );
    let docs: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{PREFIX}:doc:*"))
        .query(&mut c)
        .unwrap();
    assert!(docs.is_empty(), "no single document of all games: {docs:?}");
    // A move writes its own game's key only: the other game's version stays.
    let version = |c: &mut redis::Connection, id: u8| -> u64 {
        redis::cmd("HGET")
            .arg(format!("{PREFIX}:game:{id}"))
            .arg("v")
            .query(c)
            .unwrap()
    };
    let before = (version(&mut c, 1), version(&mut c, 2));
    let moves = &turns[0];
    let played = alice
        .request(
            "tools/call",
            json!({"name": "play", "arguments": {"move": pick(moves, &["E5"])},
                   "_meta": {"mcpl/instance": "g1"}}),
        )
        .await;
    assert_ne!(played["isError"], json!(true), "{played}");
    let after = (version(&mut c, 1), version(&mut c, 2));
    assert!(after.0 > before.0, "g1's key was written");
    assert_eq!(after.1, before.1, "g2's key was not touched");
    alice.peer.close().await;
    bob.peer.close().await;
}
