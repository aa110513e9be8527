//! The §9 walkthrough as a recorded transcript: open, call, push with hints, suggestion,
//! second instance, reconnect with `toolsets/list`, close; two connections of one principal,
//! each on its own consecutive revs.

mod common;

use common::*;
use mcpl_server::{Event, Update};
use serde_json::json;
use std::time::Duration;

#[test]
fn s9_walkthrough_transcript() {
    let mut w = World::arcade();
    let h1 = w.connect(ada(), true, true);
    let bob_conn = w.connect(bob(), true, true);
    w.transcript.clear();
    let step = |w: &mut World| w.advance(Duration::from_millis(100));

    // 1. Listing: every tool, then the full statement (rev 1).
    w.request(h1, "tools/list", json!({})).unwrap();
    w.request(h1, "toolsets/list", json!({})).unwrap();
    step(&mut w);
    // A second connection of the same principal starts its own counter.
    let h2 = w.connect(ada(), true, true);
    w.request(h2, "toolsets/list", json!({})).unwrap();
    step(&mut w);
    // 2. Open (rev 2 on h1; h2 hears of it under its own next rev).
    w.request(
        h1,
        "toolsets/open",
        json!({"toolset": "game", "instance": "vs-bot",
        "options": {"size": 9}}),
    )
    .unwrap();
    step(&mut w);
    // 3. A call's consequences ride in its result.
    w.call(h1, "play", json!({"move": "C3"}), Some("vs-bot"));
    step(&mut w);
    // 4. The bot moves: a push carries the hints it explains.
    let mut bot = Update::new();
    bot.instance("game", "vs-bot")
        .show("play")
        .show("pass")
        .define(play_def(&["D4", "E5"]));
    bot.event(Event::text("White played E5.").about("game", Some("vs-bot")));
    w.apply(&ada(), bot);
    step(&mut w);
    // 5. Bob challenges Ada: a push with a suggestion.
    w.call(bob_conn, "challenge", json!({"who": "ada"}), None);
    step(&mut w);
    // The host accepts: a second instance, and a call without `mcpl/instance` now fails.
    w.request(
        h1,
        "toolsets/open",
        json!({"toolset": "game", "instance": "vs-bob",
        "options": {"size": 13}}),
    )
    .unwrap();
    let r = w.call(h1, "board", json!({}), None);
    assert!(is_error(&r));
    step(&mut w);
    // Bob resigns while h1 is away: an ended record.
    let now = w.now;
    w.conns[h1].session.handle_disconnect(now);
    let mut resign = Update::new();
    resign
        .instance("game", "vs-bob")
        .end("Bob resigned; you won.");
    w.apply(&ada(), resign);
    step(&mut w);
    // 6. Reconnect: toolsets/list (rev 1 on the new connection) is the truth.
    let h3 = w.connect(ada(), true, true);
    let list = w.request(h3, "toolsets/list", json!({})).unwrap();
    assert_eq!(list["ended"][0]["id"], json!("e-0"));
    assert_eq!(list["_meta"]["mcpl/hints"]["rev"], json!(1));
    step(&mut w);
    // 7. Close: the result carries the ended id; h2 gets the same under its own rev.
    let r = w
        .request(
            h3,
            "toolsets/close",
            json!({"toolset": "game", "instance": "vs-bot"}),
        )
        .unwrap();
    assert_eq!(
        r["_meta"]["mcpl/hints"]["toolsets"][0]["ended"],
        json!("e-1")
    );

    assert_eq!(all_revs(&w, h1), [1, 2, 3, 4, 5, 6]);
    assert_eq!(all_revs(&w, h2), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(all_revs(&w, h3), [1, 2]);
    insta::assert_snapshot!(w.transcript.join("\n"));
}
