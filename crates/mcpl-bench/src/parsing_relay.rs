//! Row 3's floor: a relay built the way the surface is built, with no host logic in it.
//!
//! The bare [`relay`](crate::relay::relay) copies bytes and reads only ids, so the gap
//! between it and the surface mixes two costs: reading and writing JSON-RPC messages through
//! `mcpl-rpc` with the surface's task layout, and the host's own work (planning, checking,
//! answering). This relay has the first and none of the second, so it splits the gap:
//!
//! - its client side is an `mcpl-rpc` [`Peer`] whose requests are taken on the connection's
//!   own task ([`InlineRequests`], as the surface's front takes `tools/call`) and handed to
//!   one forwarding task over a channel (as the front hands calls to the host task);
//! - the forwarding task sends each request to the server under an id of its own with
//!   [`Peer::send`] and reads the answer as an [`Event::Response`] (as the host's
//!   controller does), then answers the client through the request's [`Responder`].
//!
//! Every frame is decoded into a message and encoded again on each hop, and every call takes
//! the surface's four task hand-offs; nothing is planned, checked or rewritten.

use std::collections::HashMap;

use mcpl_protocol::jsonrpc::{Message, Request, RequestId};
use mcpl_rpc::{Event, Events, InlineRequests, Peer, PeerConfig, Responder, Transport};
use serde_json::Map;
use tokio::sync::mpsc;

/// Serves `client` by forwarding every request to `server` and each answer back, until
/// either side closes. Notifications are not forwarded (row 3 sends none after the
/// handshake).
pub fn parsing_relay(client: Transport, server: Transport) {
    let (calls_tx, calls) = mpsc::unbounded_channel();
    let config = PeerConfig {
        inline_requests: Some(InlineRequests::new(move |request, responder| {
            match calls_tx.send((request, responder)) {
                Ok(()) => None,
                // The forwarding task is gone: let the peer queue it (and so answer it).
                Err(mpsc::error::SendError(back)) => Some(back),
            }
        })),
        ..PeerConfig::default()
    };
    let (client, mut client_events) = Peer::start(client, config);
    let (server, server_events) = Peer::start(server, PeerConfig::default());
    // The client side's own events are only what the inline handler gave back: drop them.
    // The handle lives as long as this task, and so the connection.
    tokio::spawn(async move {
        while client_events.recv().await.is_some() {}
        drop(client);
    });
    tokio::spawn(forward(calls, server, server_events));
}

/// The forwarding task: the surface's host task with nothing but the id bookkeeping.
async fn forward(
    mut calls: mpsc::UnboundedReceiver<(Request, Responder)>,
    server: Peer,
    mut events: Events,
) {
    let mut waiting: HashMap<i64, Responder> = HashMap::new();
    let mut next_id = 0_i64;
    loop {
        tokio::select! {
            call = calls.recv() => {
                let Some((request, responder)) = call else { break };
                next_id += 1;
                let sent = server.send(Message::Request(Request {
                    id: RequestId::Number(next_id),
                    method: request.method,
                    params: request.params,
                    extra: Map::new(),
                }));
                if sent.is_err() {
                    break;
                }
                waiting.insert(next_id, responder);
            }
            event = events.recv() => {
                let Some(event) = event else { break };
                let Event::Response { response, .. } = event else { continue };
                let Some(RequestId::Number(id)) = response.id else { continue };
                let Some(responder) = waiting.remove(&id) else { continue };
                let _ = match response.outcome {
                    Ok(result) => responder.respond(result),
                    Err(error) => responder.error(error),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::tests::stdio;
    use mcpl_rpc::RequestOptions;
    use serde_json::json;
    use std::time::Duration;

    /// Requests reach the server with the relay's own ids and the client gets each answer
    /// (results and errors) under its own id.
    #[tokio::test]
    async fn the_parsing_relay_forwards_requests_and_their_answers() {
        let (client_end, relay_client) = tokio::io::duplex(64 * 1024);
        let (relay_server, server_end) = tokio::io::duplex(64 * 1024);
        parsing_relay(stdio(relay_client), stdio(relay_server));
        let (_server, mut server_events) = Peer::start(stdio(server_end), PeerConfig::default());
        tokio::spawn(async move {
            while let Some(event) = server_events.recv().await {
                if let Event::Request {
                    request, responder, ..
                } = event
                {
                    if request.method == "fail" {
                        let _ = responder.method_not_found();
                    } else {
                        let _ = responder.respond(json!({"echo": request.params}));
                    }
                }
            }
        });
        let (client, _events) = Peer::start(stdio(client_end), PeerConfig::default());
        let options = || RequestOptions::timeout(Duration::from_secs(5));
        for n in 0..3 {
            let answer = client
                .request_value("echo", Some(json!({"n": n})), options())
                .await
                .expect("the relay answers");
            assert_eq!(answer.value, json!({"echo": {"n": n}}));
        }
        let refused = client.request_value("fail", None, options()).await;
        assert!(
            matches!(refused, Err(mcpl_rpc::RpcError::Remote { ref error, .. }) if error.code == -32601),
            "the server's error passes back: {refused:?}"
        );
    }
}
