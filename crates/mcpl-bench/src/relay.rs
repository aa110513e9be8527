//! The baselines with no logic: a bare JSON-RPC relay and a null server.
//!
//! - [`relay`]: the baseline of `surface_p50_vs_relay`. It sits where the surface sits, with
//!   the same two hops (client to relay, relay to server, each stdio framing over an
//!   in-memory pipe), and forwards raw frames both ways after reading only each frame's `id`;
//!   it never parses a frame into a value, never rewrites one and keeps no state but counts.
//! - [`null_server`]: the baseline of `server_time_vs_rmcp`. It answers every request with a
//!   fixed result after reading only its `id` and does no work, so a client's rate against it
//!   is the cost of the client, the framing and the pipe alone.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// A frame as the relay reads it: the id and nothing else (the other members are skipped
/// without being kept).
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// The id of a JSON-RPC frame, if it has one and is JSON.
pub fn read_id(frame: &[u8]) -> Option<Value> {
    serde_json::from_slice::<IdOnly>(frame).ok()?.id
}

/// What a relay has forwarded so far.
#[derive(Debug, Default)]
pub struct RelayCounts {
    /// Frames with an id from the client to the server (requests).
    pub requests: AtomicU64,
    /// Frames with an id from the server to the client (responses, and server requests).
    pub answers: AtomicU64,
    /// Frames without an id, either way (notifications).
    pub notifications: AtomicU64,
}

/// Relays raw frames between `client` and `server` until either side closes, each way in
/// its own task. Returns the counts, which grow as frames pass.
pub fn relay<C, S>(client: C, server: S) -> Arc<RelayCounts>
where
    C: AsyncRead + AsyncWrite + Send + 'static,
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let counts = Arc::new(RelayCounts::default());
    let (client_r, client_w) = tokio::io::split(client);
    let (server_r, server_w) = tokio::io::split(server);
    tokio::spawn(pump(client_r, server_w, counts.clone(), Direction::Up));
    tokio::spawn(pump(server_r, client_w, counts.clone(), Direction::Down));
    counts
}

#[derive(Clone, Copy)]
enum Direction {
    Up,
    Down,
}

/// Copies newline-delimited frames from `from` to `to`, reading each one's id.
async fn pump(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    counts: Arc<RelayCounts>,
    direction: Direction,
) {
    let mut reader = BufReader::new(from);
    let mut frame = Vec::with_capacity(4096);
    loop {
        frame.clear();
        match reader.read_until(b'\n', &mut frame).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let counter = match (read_id(&frame).is_some(), direction) {
            (true, Direction::Up) => &counts.requests,
            (true, Direction::Down) => &counts.answers,
            (false, _) => &counts.notifications,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if to.write_all(&frame).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// Serves the null server on `stream` until it closes: every request (a frame with an id and
/// a method) gets `result` with its id; everything else is dropped.
pub async fn null_server(stream: impl AsyncRead + AsyncWrite + Send + 'static, result: Value) {
    let (r, mut w) = tokio::io::split(stream);
    let mut reader = BufReader::new(r);
    let mut frame = Vec::with_capacity(4096);
    let result = result.to_string();
    loop {
        frame.clear();
        match reader.read_until(b'\n', &mut frame).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(IdOnly {
            id: Some(id),
            method: Some(_),
        }) = serde_json::from_slice::<IdOnly>(&frame)
        else {
            continue;
        };
        let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n");
        if w.write_all(answer.as_bytes()).await.is_err() || w.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mcpl_rpc::{Event, Peer, PeerConfig, RequestOptions, Transport};
    use serde_json::json;
    use std::time::Duration;

    /// Stdio framing over one end of an in-memory pipe (the parsing relay's tests use it too).
    pub(crate) fn stdio(stream: tokio::io::DuplexStream) -> Transport {
        let (r, w) = tokio::io::split(stream);
        Transport::stdio(r, w)
    }

    /// The relay forwards requests, answers and notifications both ways, unchanged, and reads
    /// the id of each: a client through it gets the server's answers to its own ids.
    #[tokio::test]
    async fn the_relay_forwards_frames_both_ways_unchanged() {
        let (client_end, relay_client) = tokio::io::duplex(64 * 1024);
        let (relay_server, server_end) = tokio::io::duplex(64 * 1024);
        let counts = relay(relay_client, relay_server);
        // The server: echoes each request's params and sends a notification first.
        let (server, mut server_events) = Peer::start(stdio(server_end), PeerConfig::default());
        tokio::spawn(async move {
            while let Some(event) = server_events.recv().await {
                if let Event::Request {
                    request, responder, ..
                } = event
                {
                    let _ = server.notify_value("notifications/echo", None);
                    let _ = responder.respond(json!({"echo": request.params}));
                }
            }
        });
        let (client, mut client_events) = Peer::start(stdio(client_end), PeerConfig::default());
        for i in 0..5 {
            let answer = client
                .request_value(
                    "echo",
                    Some(json!({"n": i, "text": "a \"quoted\" line"})),
                    RequestOptions::timeout(Duration::from_secs(10)),
                )
                .await
                .expect("an answer through the relay");
            assert_eq!(
                answer.value,
                json!({"echo": {"n": i, "text": "a \"quoted\" line"}})
            );
        }
        let mut notified = 0;
        while notified < 5 {
            match tokio::time::timeout(Duration::from_secs(10), client_events.recv()).await {
                Ok(Some(Event::Notification { notification, .. })) => {
                    assert_eq!(notification.method, "notifications/echo");
                    notified += 1;
                }
                Ok(Some(_)) => {}
                other => panic!("the notifications did not come through: {other:?}"),
            }
        }
        assert_eq!(counts.requests.load(Ordering::Relaxed), 5);
        assert_eq!(counts.answers.load(Ordering::Relaxed), 5);
        assert_eq!(counts.notifications.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn the_id_is_read_and_nothing_else_is_needed() {
        assert_eq!(
            read_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(json!(7))
        );
        assert_eq!(
            read_id(br#"{"id":"a","result":{"deep":[1,2]}}"#),
            Some(json!("a"))
        );
        assert_eq!(read_id(br#"{"jsonrpc":"2.0","method":"note"}"#), None);
        assert_eq!(read_id(b"not json"), None);
    }

    /// The null server answers each request with the fixed result under the request's id and
    /// ignores notifications.
    #[tokio::test]
    async fn the_null_server_answers_every_request_without_work() {
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        tokio::spawn(null_server(server_end, json!({"content": []})));
        let (client, _events) = Peer::start(stdio(client_end), PeerConfig::default());
        client
            .notify_value("notifications/initialized", None)
            .unwrap();
        for method in ["initialize", "tools/call", "tools/call"] {
            let answer = client
                .request_value(
                    method,
                    Some(json!({"name": "add"})),
                    RequestOptions::timeout(Duration::from_secs(10)),
                )
                .await
                .expect("an answer");
            assert_eq!(answer.value, json!({"content": []}));
        }
    }
}
