//! `mcpl arcade --store`: a store that is not a Redis URL, or a Redis nobody answers at, stops
//! the arcade at start with status 2 and a message naming the store.

use std::process::{Command, Output, Stdio};

fn arcade(args: &[&str]) -> Output {
    // `timeout`: an arcade that wrongly starts serving must not hang the suite.
    Command::new("timeout")
        .args(["60", env!("CARGO_BIN_EXE_mcpl"), "arcade"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("mcpl runs")
}

#[test]
fn an_unreachable_redis_store_stops_the_arcade_at_start_naming_it() {
    // Port 1 on loopback: nothing listens there.
    let out = arcade(&[
        "--listen",
        "ws://127.0.0.1:0",
        "--store",
        "redis://127.0.0.1:1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mcpl arcade: cannot start on the store redis://127.0.0.1:1"),
        "{err}"
    );
    assert!(err.contains("unreachable"), "{err}");
    assert!(!err.contains("serving"), "it must not serve: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_store_that_is_not_a_redis_url_is_refused_naming_it() {
    let out = arcade(&["--listen", "ws://127.0.0.1:0", "--store", "http://x:1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`--store http://x:1`: expected redis://HOST:PORT"),
        "{err}"
    );
}
