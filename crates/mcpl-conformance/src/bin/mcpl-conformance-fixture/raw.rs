//! Faults that only raw frames can show: mcpl-rpc writes well-formed JSON-RPC whatever the
//! fixture asks, so these faults sit between the fixture and stdout and rewrite lines.
//!
//! The reference fixture serves one end of an in-memory pipe; this module copies the host's
//! lines from stdin into it unchanged and the fixture's lines out to stdout, rewriting the
//! frame its fault names.

use mcpl_conformance::reference::{Faults, Principal, serve};
use mcpl_rpc::Transport;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The raw-frame faults, by name (`--fault NAME`).
pub const NAMES: [&str; 1] = [NO_OUTCOME];

/// The answer to the first `tools/call` has neither `result` nor `error`.
const NO_OUTCOME: &str = "response_without_outcome";

/// Serves the fixture on stdio with the raw fault `name` (one of [`NAMES`]).
pub async fn serve_with(name: &str, faults: Faults) {
    debug_assert!(NAMES.contains(&name));
    let (fixture_end, relay_end) = tokio::io::duplex(256 * 1024);
    let (fixture_read, fixture_write) = tokio::io::split(fixture_end);
    let (relay_read, mut relay_write) = tokio::io::split(relay_end);
    tokio::spawn(serve(
        Transport::stdio(fixture_read, fixture_write),
        Principal::new(),
        faults,
    ));
    // The ids of the `tools/call` requests the host sent, so the relay knows their answers.
    let calls: Arc<Mutex<HashSet<String>>> = Arc::default();
    let inbound_calls = calls.clone();
    let inbound = tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(msg) = serde_json::from_str::<Value>(&line)
                && msg.get("method").and_then(Value::as_str) == Some("tools/call")
                && let Some(id) = msg.get("id")
                && let Ok(mut ids) = inbound_calls.lock()
            {
                ids.insert(id.to_string());
            }
            if relay_write.write_all(line.as_bytes()).await.is_err()
                || relay_write.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
    });
    let mut out = tokio::io::stdout();
    let mut lines = BufReader::new(relay_read).lines();
    let mut broken = false;
    while let Ok(Some(line)) = lines.next_line().await {
        let mut frame = line;
        if !broken
            && let Ok(mut msg) = serde_json::from_str::<Value>(&frame)
            && msg.get("method").is_none()
            && let Some(id) = msg.get("id").map(Value::to_string)
            && calls.lock().is_ok_and(|ids| ids.contains(&id))
            && let Some(obj) = msg.as_object_mut()
        {
            obj.remove("result");
            obj.remove("error");
            frame = msg.to_string();
            broken = true;
        }
        if out.write_all(frame.as_bytes()).await.is_err()
            || out.write_all(b"\n").await.is_err()
            || out.flush().await.is_err()
        {
            break;
        }
    }
    inbound.abort();
}
