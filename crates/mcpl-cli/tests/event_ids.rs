//! Issue 22: `push/event` ids are unique across server processes (and so across restarts):
//! two `mcpl arcade` processes serving the same script never hand out the same id.

use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Limits, Peer, PeerConfig, Transport};

#[path = "../../mcpl-arcade/tests/bot_game/mod.rs"]
mod bot_game;

/// Plays one move against the bot in a fresh `mcpl arcade` and returns the id of the push
/// that carries the bot's answer.
async fn first_event_id() -> String {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl"));
    command.arg("arcade");
    let transport = Transport::child(command, StderrMode::Discard, Limits::default())
        .expect("mcpl arcade starts");
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    bot_game::play_first_move(&peer, "event-ids").await;
    let push = bot_game::next_push(&mut events).await;
    let id = push["eventId"].as_str().unwrap_or_default().to_owned();
    peer.close().await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue22_two_server_processes_never_share_an_event_id() {
    let first = first_event_id().await;
    let second = first_event_id().await;
    // The same script in each: same connection number, same counter; only the process's own
    // random prefix tells them apart.
    assert!(first.ends_with("-c1-ev-0"), "{first}");
    assert!(second.ends_with("-c1-ev-0"), "{second}");
    assert_ne!(first, second, "two processes handed out the same event id");
}
