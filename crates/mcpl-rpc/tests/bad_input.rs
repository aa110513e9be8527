//! Bad input over stdio: each gets a clear JSON-RPC error, changes nothing, and the
//! connection keeps working afterwards.

mod common;

use common::{RawEnd, raw_pair, serve_echo};
use mcpl_rpc::{Event, Limits, PeerConfig};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

/// The connection still answers a request after the bad input.
async fn still_works(raw: &mut RawEnd) {
    raw.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":"after","result":{}}"#
    );
}

async fn bad_frame(seen: &mut UnboundedReceiver<Event>) -> String {
    match seen.recv().await {
        Some(Event::BadFrame { error, .. }) => error.to_string(),
        other => panic!("expected a bad frame, got {other:?}"),
    }
}

fn setup(limits: Limits) -> (RawEnd, UnboundedReceiver<Event>, mcpl_rpc::Peer) {
    let (peer, events, raw) = raw_pair(limits, PeerConfig::default());
    (raw, serve_echo(events), peer)
}

#[tokio::test]
async fn malformed_json_gets_a_parse_error() {
    let (mut raw, mut seen, _peer) = setup(Limits::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"#).await;
    let reply = raw.recv_json().await;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32700);
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("malformed json: "),
        "{reply}"
    );
    assert!(bad_frame(&mut seen).await.starts_with("malformed json"));
    still_works(&mut raw).await;
}

#[tokio::test]
async fn a_non_object_message_is_an_invalid_request() {
    let (mut raw, mut seen, _peer) = setup(Limits::default());
    raw.send(r#""just a string""#).await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a message must be a json object, found a string"}}"#
    );
    bad_frame(&mut seen).await;
    raw.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch arrays are not supported: send one message per frame"}}"#
    );
    still_works(&mut raw).await;
}

#[tokio::test]
async fn nesting_past_128_is_refused_with_the_request_id() {
    let (mut raw, mut seen, _peer) = setup(Limits::default());
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":12,"method":"echo","params":{{"text":{}1{}}}}}"#,
        "[".repeat(128),
        "]".repeat(128)
    );
    raw.send(&deep).await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32600,"message":"nesting depth 129 exceeds the limit of 128"}}"#
    );
    assert_eq!(
        bad_frame(&mut seen).await,
        "nesting depth 129 exceeds the limit of 128"
    );
    still_works(&mut raw).await;
}

#[tokio::test]
async fn a_frame_over_the_cap_is_skipped_to_the_next_newline_and_its_error_carries_the_id() {
    let limits = Limits {
        max_frame_bytes: 1024,
        ..Limits::default()
    };
    let (mut raw, mut seen, _peer) = setup(limits);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"text":"{}"}}}}"#,
        "x".repeat(5000)
    );
    // Sent in pieces, so the reader meets the cap mid-line.
    raw.send_bytes(&big.as_bytes()[..3000]).await;
    raw.send_bytes(&big.as_bytes()[3000..]).await;
    raw.send_bytes(b"\n").await;
    let reply = raw.recv_json().await;
    assert_eq!(
        reply,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32600,
            "message": format!("frame of {} bytes exceeds the cap of 1024 bytes", big.len())}})
    );
    bad_frame(&mut seen).await;
    still_works(&mut raw).await;
}

#[tokio::test]
async fn an_oversized_frame_whose_id_cannot_be_read_is_answered_with_a_null_id() {
    let limits = Limits {
        max_frame_bytes: 1024,
        ..Limits::default()
    };
    let (mut raw, mut seen, _peer) = setup(limits);
    // The id comes after the big params: past what is read of the frame's start.
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"echo","params":{{"text":"{}"}},"id":9}}"#,
        "x".repeat(9000)
    );
    raw.send(&big).await;
    let reply = raw.recv_json().await;
    assert_eq!(reply["id"], json!(null));
    bad_frame(&mut seen).await;
    still_works(&mut raw).await;
}

#[tokio::test]
async fn a_lone_surrogate_escape_is_refused() {
    let (mut raw, mut seen, _peer) = setup(Limits::default());
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"text":"\ud800"}}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32700,"message":"lone surrogate escape `\\ud800` at byte 58"}}"#
    );
    bad_frame(&mut seen).await;
    still_works(&mut raw).await;
}

#[tokio::test]
async fn an_unknown_method_gets_method_not_found() {
    let (mut raw, _seen, _peer) = setup(Limits::default());
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: `no/such`"}}"#
    );
    still_works(&mut raw).await;
}

#[tokio::test]
async fn wrong_params_get_invalid_params() {
    let (mut raw, _seen, _peer) = setup(Limits::default());
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":42}}"#)
        .await;
    let reply = raw.recv_json().await;
    assert_eq!(reply["id"], 3);
    assert_eq!(reply["error"]["code"], -32602);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid params for `echo` (an object): invalid type: integer `42`"),
        "{message}"
    );
    still_works(&mut raw).await;
}

#[tokio::test]
async fn an_envelope_error_names_the_check_and_keeps_the_id() {
    let (mut raw, _seen, _peer) = setup(Limits::default());
    raw.send(r#"{"id":4,"method":"ping"}"#).await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"missing `jsonrpc`"}}"#
    );
    raw.send(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`id` is null in a request"}}"#
    );
    still_works(&mut raw).await;
}

#[tokio::test]
async fn a_malformed_response_is_reported_but_never_answered() {
    let (mut raw, mut seen, _peer) = setup(Limits::default());
    raw.send(r#"{"jsonrpc":"2.0","id":9,"result":1,"error":{"code":1,"message":"m"}}"#)
        .await;
    match seen.recv().await {
        Some(Event::BadFrame { error, replied, .. }) => {
            assert_eq!(error.to_string(), "response has both `result` and `error`");
            assert!(!replied);
        }
        other => panic!("expected a bad frame, got {other:?}"),
    }
    // The next line on the wire is the answer to this ping, not an error about the response.
    still_works(&mut raw).await;
}

#[tokio::test]
async fn blank_lines_and_crlf_are_tolerated() {
    let (mut raw, _seen, _peer) = setup(Limits::default());
    raw.send_bytes(b"\n  \r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n")
        .await;
    assert_eq!(
        raw.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
}

/// H76: an answer nested past the limit is refused without a reply, and the request it
/// answers fails at once with a clear error instead of waiting for its timeout.
#[tokio::test(start_paused = true)]
async fn h76_a_too_deep_answer_fails_its_request_at_once() {
    let (mut raw, _seen, peer) = setup(Limits::default());
    let options = mcpl_rpc::RequestOptions::timeout(std::time::Duration::from_secs(3600));
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request_value("tools/list", None, options).await }
    });
    let request = raw.recv_json().await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":{}{}}}}}"#,
        request["id"],
        "[".repeat(128),
        "]".repeat(128)
    );
    raw.send(&deep).await;
    let err = call.await.unwrap().unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("answer to `tools/list` was refused")
            && text.contains("nesting depth 129 exceeds the limit of 128"),
        "{text}"
    );
    still_works(&mut raw).await;
}
