//! Frames decoded and dispatched per second: our path against plain `serde_json` parsing of
//! the same frames, measured in the same run.
//!
//! - `decode`: `frame::decode` (size cap, depth and surrogate scan, envelope checks) against
//!   `serde_json::from_slice::<Value>`.
//! - `dispatch`: frames pushed through a whole [`Peer`] (read-order numbering, classification,
//!   events) against parsing them.
//!
//! The ratios are printed at the end (ours / baseline time per frame; lower is better).

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group};
use mcpl_protocol::frame::{self, Limits};
use mcpl_rpc::{Inbound, Peer, PeerConfig, Transport, TransportKind};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A mix of what a host reads: a tool call, a tools/list page, a hinted push, a notification.
fn frames() -> Vec<Vec<u8>> {
    let tools: Vec<Value> = (0..10)
        .map(|i| {
            json!({"name": format!("tool_{i}"), "description": "does a thing with a board",
                   "inputSchema": {"type": "object", "properties": {"move": {"type": "string",
                   "enum": ["A1", "B2", "C3", "D4", "E5"]}}, "required": ["move"]},
                   "_meta": {"mcpl/presence": "dynamic", "mcpl/toolset": "go"}})
        })
        .collect();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "play", "arguments": {"move": "E5"},
                          "_meta": {"mcpl/instance": "g1"}}}),
        json!({"jsonrpc": "2.0", "method": "tools/hints", "params": {"rev": 12,
               "tools": [{"name": "play", "instance": "g1", "visible": true}]}}),
        json!({"jsonrpc": "2.0", "id": "p-3", "method": "push/event",
               "params": {"eventId": "e-9", "toolset": "go", "instance": "g1",
                          "content": [{"type": "text", "text": "White played E5"}],
                          "hints": {"rev": 13, "tools": [{"name": "pass", "visible": true}]}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "info", "data": "ok"}}),
        json!({"jsonrpc": "2.0", "id": "list-1", "result": {"tools": tools,
               "_meta": {"mcpl/rev": 11}}}),
    ];
    messages
        .iter()
        .map(|m| serde_json::to_vec(m).unwrap())
        .collect()
}

fn baseline(frames: &[Vec<u8>]) {
    for f in frames {
        black_box(serde_json::from_slice::<Value>(f).unwrap());
    }
}

fn ours_decode(frames: &[Vec<u8>], limits: &Limits) {
    for f in frames {
        black_box(frame::decode(f, limits).unwrap());
    }
}

/// A peer fed through a custom transport; each round pushes the frames and drains the events.
struct Dispatch {
    runtime: tokio::runtime::Runtime,
    inbound: mcpl_rpc::InboundSender,
    events: mcpl_rpc::Events,
    _peer: Peer,
    frames: Vec<bytes::Bytes>,
}

impl Dispatch {
    fn new(frames: &[Vec<u8>]) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (peer, events, ends) = runtime.block_on(async {
            let (transport, ends) =
                Transport::from_channels(TransportKind::Stdio, Limits::default());
            let (peer, events) = Peer::start(transport, PeerConfig::default());
            (peer, events, ends)
        });
        // Writes (answers to dropped responders) go nowhere.
        let mut outbound = ends.outbound;
        runtime.spawn(async move { while outbound.recv().await.is_some() {} });
        Dispatch {
            runtime,
            inbound: ends.inbound,
            events,
            _peer: peer,
            frames: frames
                .iter()
                .map(|f| bytes::Bytes::from(f.clone()))
                .collect(),
        }
    }

    fn round(&mut self) {
        let Dispatch {
            runtime,
            inbound,
            events,
            frames,
            ..
        } = self;
        runtime.block_on(async {
            for f in frames.iter() {
                inbound.send(Inbound::Frame(f.clone())).await.unwrap();
                black_box(events.recv().await.unwrap());
            }
        });
    }
}

fn bench(c: &mut Criterion) {
    let frames = frames();
    let limits = Limits::default();
    let mut group = c.benchmark_group("frames");
    group.throughput(Throughput::Elements(frames.len() as u64));
    group.bench_function("serde_json_value", |b| b.iter(|| baseline(&frames)));
    group.bench_function("frame_decode", |b| b.iter(|| ours_decode(&frames, &limits)));
    let mut dispatch = Dispatch::new(&frames);
    group.bench_function("peer_dispatch", |b| b.iter(|| dispatch.round()));
    group.finish();
}

/// Time per round of each contender, measured in interleaved batches so that load from other
/// processes falls on all of them alike.
fn interleaved(budget: Duration, contenders: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    const BATCH: u32 = 100;
    let mut totals = vec![Duration::ZERO; contenders.len()];
    let mut rounds = 0u32;
    let start = Instant::now();
    while start.elapsed() < budget {
        for (total, f) in totals.iter_mut().zip(contenders.iter_mut()) {
            let t = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            *total += t.elapsed();
        }
        rounds += BATCH;
    }
    totals
        .iter()
        .map(|t| t.as_secs_f64() / f64::from(rounds))
        .collect()
}

fn ratios() {
    let frames = frames();
    let limits = Limits::default();
    let mut dispatch = Dispatch::new(&frames);
    let times = interleaved(
        Duration::from_secs(2),
        &mut [
            &mut || baseline(&frames),
            &mut || ours_decode(&frames, &limits),
            &mut || dispatch.round(),
        ],
    );
    let (base, decode, peer) = (times[0], times[1], times[2]);
    let per_sec = |t: f64| frames.len() as f64 / t;
    println!(
        "frames/s: serde_json::Value {:.0}, frame::decode {:.0}, peer dispatch {:.0}",
        per_sec(base),
        per_sec(decode),
        per_sec(peer)
    );
    println!(
        "ratio (time per frame vs serde_json::Value): frame::decode {:.2}x, peer dispatch {:.2}x",
        decode / base,
        peer / base
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = bench
}

fn main() {
    benches();
    ratios();
    Criterion::default().configure_from_args().final_summary();
}
