//! Row 6, replicas on Redis: the time from a change on one connection to the last of the
//! principal's other connections receiving its hints, with the connections spread over two
//! server replicas sharing state through `mcpl-server-redis`, against the same three
//! connections on one replica with the in-memory store.
//!
//! Everything runs in this process: the replicas are two `mcpl-server` runtimes, the hosts
//! are `mcpl-rpc` peers over in-memory transports, and Redis is a `redis-server` child on a
//! free 127.0.0.1 port, killed at the end. Without `redis-server` installed the row is
//! skipped, saying so.

use crate::error::BenchError;
use crate::report::{Figure, RowOutcome, Unit};
use crate::stats::percentile;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_rpc::{Event, Events, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{Context, Declarations, Principal, Server, ServerConfig, ToolDef, WallClock};
use mcpl_server_redis::{Fanout, LocalRedis, LocalRedisError, RedisStore};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// How long one request or delivery may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What to measure.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Changes to time in each setup.
    pub changes: usize,
    /// Stop early once this has passed (per setup).
    pub budget: Duration,
}

/// Times both setups and returns the row: p50 and p99 of change-to-last-delivery, two
/// replicas on Redis against one replica in memory. Skipped without `redis-server`.
pub async fn measure(settings: &Settings) -> RowOutcome {
    let redis = match LocalRedis::start() {
        Ok(redis) => redis,
        Err(LocalRedisError::NotInstalled) => {
            return RowOutcome::Skipped(
                "needs `redis-server` (scripts/test installs the Debian package)".into(),
            );
        }
        Err(e) => return RowOutcome::Failed(e.to_string()),
    };
    let figures = async {
        let memory = latencies(World::memory()?, settings).await?;
        let replicas = latencies(World::redis(&redis.url()).await?, settings).await?;
        let figure = |p: f64| Figure {
            id: (p == 50.0).then_some("redis_p50_vs_memory"),
            measure: format!("change to last delivery, p{p:.0}, two replicas on Redis"),
            ours: micros(percentile(&replicas, p)),
            baseline_name: "one replica, in-memory store".to_owned(),
            baseline: micros(percentile(&memory, p)),
            unit: Unit::Micros,
            ..Default::default()
        };
        Ok::<_, BenchError>(vec![figure(50.0), figure(99.0)])
    }
    .await;
    drop(redis);
    match figures {
        Ok(figures) => RowOutcome::Measured(figures),
        Err(e) => RowOutcome::Failed(e.to_string()),
    }
}

fn micros(d: Option<Duration>) -> f64 {
    d.map_or(0.0, |d| d.as_secs_f64() * 1e6)
}

/// The replicas' declarations: `flip` shows or hides the dynamic tool `lamp`.
fn declarations() -> Declarations {
    Declarations::new("bench-replicas", "0.1.0")
        .tool(
            ToolDef::new("flip", "Show or hide the lamp.").input_schema(
                json!({"type": "object", "properties": {"show": {"type": "boolean"}}}),
            ),
        )
        .tool(ToolDef::new("lamp", "A lamp.").dynamic())
}

struct Flip;

impl App for Flip {
    async fn call_tool(
        &self,
        ctx: &mut Context,
        _: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        match args.get("show").and_then(Value::as_bool) {
            Some(true) => ctx.show("lamp"),
            _ => ctx.hide("lamp"),
        };
        CallToolResult::text("flipped")
    }
}

/// One setup: the runtimes (one or two) and what keeps their fan-out alive.
struct World {
    runtimes: Vec<Runtime<Flip>>,
    _fanouts: Vec<Fanout>,
}

impl World {
    fn memory() -> Result<World, BenchError> {
        let server = Server::new(build()?, ServerConfig::new(clock()));
        Ok(World {
            runtimes: vec![Runtime::from_server(server, Flip)],
            _fanouts: Vec::new(),
        })
    }

    async fn redis(url: &str) -> Result<World, BenchError> {
        let mut runtimes = Vec::new();
        let mut fanouts = Vec::new();
        for _ in 0..2 {
            let store = RedisStore::open(url, "bench")
                .await
                .map_err(|e| BenchError::setup("redis store", e))?;
            let store = Arc::new(store);
            let server = Server::with_store(build()?, ServerConfig::new(clock()), store.clone());
            let handle = Handle::new(server);
            let fanout = Fanout::start(&handle, store)
                .await
                .map_err(|e| BenchError::setup("redis fan-out", e))?;
            runtimes.push(Runtime::new(handle, Flip));
            fanouts.push(fanout);
        }
        Ok(World {
            runtimes,
            _fanouts: fanouts,
        })
    }
}

fn build() -> Result<mcpl_server::Catalog, BenchError> {
    declarations()
        .build()
        .map_err(|e| BenchError::setup("declarations", e))
}

fn clock() -> WallClock {
    WallClock::new(Instant::now(), SystemTime::now())
}

/// A host of principal `bench` connected to `runtime`, initialized with `toolHints`.
async fn connect(runtime: &Runtime<Flip>) -> Result<(Peer, Events), BenchError> {
    let (host_side, server_side) = Transport::memory_pair();
    let runtime = runtime.clone();
    tokio::spawn(async move {
        let connection = runtime.next_connection();
        let principal = Principal::authenticated("bench");
        runtime.serve(server_side, principal, connection).await
    });
    let (peer, events) = Peer::start(host_side, PeerConfig::default());
    let init = json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
        "clientInfo": {"name": "bench", "version": "1"}});
    peer.request_value("initialize", Some(init), RequestOptions::timeout(TIMEOUT))
        .await
        .map_err(|e| BenchError::transport("initialize", e))?;
    Ok((peer, events))
}

/// Waits for the next `tools/hints` notification.
async fn next_hints(events: &mut Events) -> Result<(), BenchError> {
    loop {
        let event = tokio::time::timeout(TIMEOUT, events.recv())
            .await
            .map_err(|_| BenchError::transport("waiting for hints", "timed out"))?
            .ok_or_else(|| BenchError::transport("waiting for hints", "connection closed"))?;
        if let Event::Notification { notification, .. } = event
            && notification.method == "tools/hints"
        {
            return Ok(());
        }
    }
}

/// Connection A on the first runtime changes state; B (first runtime) and C (last runtime)
/// receive it. Each sample is from sending the change to the later of B and C getting it.
async fn latencies(world: World, settings: &Settings) -> Result<Vec<Duration>, BenchError> {
    let first = &world.runtimes[0];
    let last = &world.runtimes[world.runtimes.len() - 1];
    let (changer, _changer_events) = connect(first).await?;
    let (_b, mut b) = connect(first).await?;
    let (_c, mut c) = connect(last).await?;
    let started = Instant::now();
    let mut samples = Vec::with_capacity(settings.changes);
    for i in 0..settings.changes {
        let args = json!({"name": "flip", "arguments": {"show": i % 2 == 1}});
        let t0 = Instant::now();
        let call =
            changer.request_value("tools/call", Some(args), RequestOptions::timeout(TIMEOUT));
        let (answer, at_b, at_c) = tokio::join!(call, next_hints(&mut b), next_hints(&mut c));
        // The later delivery ends the sample; the call's own answer is not part of it.
        samples.push(t0.elapsed());
        answer.map_err(|e| BenchError::transport("tools/call flip", e))?;
        at_b?;
        at_c?;
        if started.elapsed() > settings.budget {
            break;
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row measures both setups (it needs `redis-server`, which scripts/test installs):
    /// two figures, each a time against the in-memory baseline. No time is asserted.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn row6_times_two_replicas_against_one_in_memory() {
        let settings = Settings {
            changes: 20,
            budget: Duration::from_secs(10),
        };
        let RowOutcome::Measured(figures) = measure(&settings).await else {
            panic!("row 6 not measured: is redis-server installed (scripts/test)?");
        };
        assert_eq!(figures.len(), 2);
        for figure in &figures {
            assert_eq!(figure.unit, Unit::Micros);
            assert!(figure.ours > 0.0 && figure.baseline > 0.0, "{figure:?}");
        }
    }
}
