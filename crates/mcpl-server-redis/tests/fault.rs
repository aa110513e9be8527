//! Redis stopped and restarted under two replicas in mid-session: opens are refused while it
//! is away, what is open survives, and the hosts converge (RFC-014 §5.6, §6.1).

mod common;

use common::{Host, RedisServer, Replica};
use mcpl_rpc::RequestOptions;
use serde_json::{Value, json};
use std::time::Duration;

/// `toolsets/list`'s open set and full statement, without the rev.
async fn listing(host: &Host) -> (Value, Value, Value) {
    let list = host.ask("toolsets/list", json!({})).await;
    let hints = &list["_meta"]["mcpl/hints"];
    (
        list["open"].clone(),
        hints["tools"].clone(),
        hints["rev"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_redis_restart_mid_session_keeps_what_is_open_and_hosts_converge() {
    let mut redis = RedisServer::start();
    let a = Replica::start(&redis.url(), "t").await;
    let b = Replica::start(&redis.url(), "t").await;
    let mut on_a = a.connect("ada").await;
    let mut on_b = b.connect("ada").await;
    on_a.ask(
        "toolsets/open",
        json!({"toolset": "game", "instance": "g1"}),
    )
    .await;
    assert_eq!(on_b.next_hints().await["rev"], json!(1));

    redis.stop();
    // Opens are refused with a clear error while the store is away ...
    let refused = on_a
        .peer
        .request_value(
            "toolsets/open",
            Some(json!({"toolset": "game", "instance": "g2"})),
            RequestOptions::timeout(Duration::from_secs(10)),
        )
        .await
        .expect_err("an open without the store is refused");
    assert!(
        refused.to_string().contains("store is unreachable"),
        "{refused}"
    );
    // ... and what is open keeps being served: a move through B (B's rev 2).
    let played = on_b
        .ask(
            "tools/call",
            json!({"name": "play", "arguments": {"move": "E5"},
            "_meta": {"mcpl/instance": "g1"}}),
        )
        .await;
    assert_eq!(played["content"][0]["text"], json!("play done"), "{played}");
    assert_eq!(played["_meta"]["mcpl/hints"]["rev"], json!(2));

    redis.restart();
    // Each replica resubscribes and restates the principal's state to its hosts on their
    // next revs, with nothing open lost.
    let caught_up = on_a.next_hints().await;
    assert_eq!(caught_up["rev"], json!(2), "{caught_up}");
    assert_eq!(caught_up["toolsets"][0]["instance"], json!("g1"));
    assert_eq!(caught_up["toolsets"][0]["state"], json!("open"));
    let caught_up = on_b.next_hints().await;
    assert_eq!(caught_up["rev"], json!(3), "{caught_up}");

    // The hosts converge: both list the same open instances and the same tools.
    let (open_a, tools_a, rev_a) = listing(&on_a).await;
    let (open_b, tools_b, rev_b) = listing(&on_b).await;
    assert_eq!(open_a, open_b);
    assert_eq!(open_a[0]["instance"], json!("g1"), "{open_a}");
    assert_eq!(tools_a, tools_b);
    assert_eq!((rev_a, rev_b), (json!(3), json!(4)));
    assert!(a.store.is_available() && b.store.is_available());
    // Opens work again.
    let open = on_a
        .ask(
            "toolsets/open",
            json!({"toolset": "game", "instance": "g2"}),
        )
        .await;
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(4), "{open}");
}
