//! Shared test harness: a peer wired to a raw line end that the test drives byte by byte,
//! and a small application that answers `ping` and `echo`; a Streamable HTTP server and its
//! sessions ([`streamable`]); a raw HTTP client ([`raw_http`]); a throwaway PKI ([`pki`]).
#![allow(dead_code)]

pub mod pki;
pub mod raw_http;
pub mod streamable;

use mcpl_rpc::{Event, Events, Limits, Peer, PeerConfig, Transport, decode_params};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// The far end of a stdio transport, spoken to in raw lines.
pub struct RawEnd {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl RawEnd {
    /// Closes the write side only, as a client does that pipes a file of requests to a
    /// stdio server: the peer reads end-of-file but can still be read from.
    pub async fn close_write(&mut self) {
        self.writer.shutdown().await.unwrap();
    }

    /// Writes one line (a newline is added).
    pub async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Writes raw bytes as they are.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Reads one line, without its newline; `None` at end of stream.
    pub async fn recv(&mut self) -> Option<String> {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).await.unwrap();
        (n > 0).then(|| line.trim_end_matches('\n').to_owned())
    }

    /// Reads one line as JSON.
    pub async fn recv_json(&mut self) -> Value {
        let line = self.recv().await.expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    /// Closes the raw end's writing side (the peer reads end of stream).
    pub async fn close(&mut self) {
        self.writer.shutdown().await.unwrap();
    }
}

/// A peer over an in-memory pipe whose other end is raw.
pub fn raw_pair(limits: Limits, config: PeerConfig) -> (Peer, Events, RawEnd) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(ours);
    let (peer, events) = Peer::start(Transport::stdio_with(r, w, limits), config);
    let (tr, tw) = tokio::io::split(theirs);
    let raw = RawEnd {
        reader: BufReader::new(tr),
        writer: tw,
    };
    (peer, events, raw)
}

#[derive(Deserialize)]
struct EchoParams {
    text: String,
}

/// Answers `ping` with `{}`, `echo {text}` with `{text}`, anything else with -32601, and
/// forwards every other event to the returned channel.
pub fn serve_echo(mut events: Events) -> tokio::sync::mpsc::UnboundedReceiver<Event> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            match event {
                Event::Request {
                    request, responder, ..
                } => {
                    let _ = match request.method.as_str() {
                        "ping" => responder.respond(json!({})),
                        "echo" => match decode_params::<EchoParams>(&request) {
                            Ok(p) => responder.respond(json!({ "text": p.text })),
                            Err(error) => responder.error(error),
                        },
                        _ => responder.method_not_found(),
                    };
                }
                other => {
                    let _ = tx.send(other);
                }
            }
        }
    });
    rx
}
