//! Configurable frame limits (`Limits`): frame size and nesting depth. A frame past either
//! gets a clear error naming the limit; the frames around it and the requests in flight are
//! untouched.

mod common;

use common::{RawEnd, raw_pair, serve_echo};
use mcpl_rpc::{Event, Limits, PeerConfig, RequestOptions};
use serde_json::{Value, json};
use std::time::Duration;

/// Starts a request from the peer to the raw end and returns its task and the request's id.
async fn outstanding(
    peer: &mcpl_rpc::Peer,
    raw: &mut RawEnd,
) -> (tokio::task::JoinHandle<Result<Value, String>>, Value) {
    let p = peer.clone();
    let task = tokio::spawn(async move {
        p.request_value(
            "ping",
            None,
            RequestOptions::timeout(Duration::from_secs(10)),
        )
        .await
        .map(|a| a.value)
        .map_err(|e| e.to_string())
    });
    let sent = raw.recv_json().await;
    assert_eq!(sent["method"], "ping");
    (task, sent["id"].clone())
}

#[tokio::test]
async fn limits_frame_size_refuses_only_the_big_frame_and_keeps_everything_else() {
    let limits = Limits {
        max_frame_bytes: 256,
        ..Limits::default()
    };
    let (peer, events, mut raw) = raw_pair(limits, PeerConfig::default());
    let mut seen = serve_echo(events);
    let (pending, id) = outstanding(&peer, &mut raw).await;

    // A good frame, one over the cap and another good one, in one write.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"echo","params":{{"text":"{}"}}}}"#,
        "x".repeat(300)
    );
    let batch = format!(
        "{}\n{big}\n{}\n",
        r#"{"jsonrpc":"2.0","id":"a","method":"echo","params":{"text":"before"}}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"echo","params":{"text":"after"}}"#
    );
    raw.send_bytes(batch.as_bytes()).await;
    // Replies may come in any order: the refusal is written by the reader, answers by the
    // app. Each frame gets exactly one.
    let mut replies = Vec::new();
    for _ in 0..3 {
        replies.push(raw.recv_json().await);
    }
    let by_id = |id: Value| replies.iter().find(|r| r["id"] == id).cloned();
    assert_eq!(
        by_id(json!("a")),
        Some(json!({"jsonrpc": "2.0", "id": "a", "result": {"text": "before"}}))
    );
    assert_eq!(
        by_id(json!("b")),
        Some(json!({"jsonrpc": "2.0", "id": "b", "result": {"text": "after"}}))
    );
    // Over the cap the frame is never parsed, but its id is read from its first bytes, so
    // the sender's request fails at once.
    let refusal = by_id(json!("big")).expect("the big frame is refused with its id");
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert_eq!(
        refusal["error"]["message"],
        format!("frame of {} bytes exceeds the cap of 256 bytes", big.len())
    );
    match seen.recv().await {
        Some(Event::BadFrame { error, .. }) => {
            assert!(error.to_string().contains("cap of 256 bytes"), "{error}")
        }
        other => panic!("expected a bad frame, got {other:?}"),
    }

    // The request in flight before the big frame is still answered.
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}});
    raw.send(&answer.to_string()).await;
    assert_eq!(pending.await.unwrap().unwrap(), json!({"ok": true}));
}

#[tokio::test]
async fn limits_nesting_depth_refuses_only_the_deep_frame_with_its_id() {
    let limits = Limits {
        max_depth: 4,
        ..Limits::default()
    };
    let (peer, events, mut raw) = raw_pair(limits, PeerConfig::default());
    let mut seen = serve_echo(events);
    let (pending, id) = outstanding(&peer, &mut raw).await;

    // Depth 4 exactly (message, params, array, array) passes.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"ok","deep":[[1]]}}"#)
        .await;
    assert_eq!(
        raw.recv_json().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "ok"}})
    );

    // Depth 5 is refused, answered with its id.
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"no","deep":[[[1]]]}}"#)
        .await;
    assert_eq!(
        raw.recv_json().await,
        json!({"jsonrpc": "2.0", "id": 2,
               "error": {"code": -32600, "message": "nesting depth 5 exceeds the limit of 4"}})
    );
    assert!(matches!(seen.recv().await, Some(Event::BadFrame { .. })));

    // Everything else goes on.
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv_json().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {}});
    raw.send(&answer.to_string()).await;
    assert_eq!(pending.await.unwrap().unwrap(), json!({}));
}
