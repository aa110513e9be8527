//! Rows 1 and 3, through the surface host (`mcpl-surface`) in front of an in-process arcade.
//!
//! Every hop is stdio framing over an in-memory pipe: the client (an `mcpl-rpc` peer) to the
//! surface, and the surface to the arcade; row 3's baselines are the same client through a
//! bare relay with the same two hops ([`crate::relay`]) and straight to the same arcade.
//!
//! - **Row 1, cache stability.** A scripted session of 200 steps on two games at once: opens,
//!   moves (each answered by the bot's push, which changes the legal moves), closes and
//!   re-opens. The surface's [`CacheReport`] counts the changes of its model-facing tool
//!   list and the bytes re-sent, against a plain re-listing host and a dynamic-toolsets host
//!   measured from the same states.
//! - **Row 3, surface overhead.** `toolsets_act {tool: "board"}` round trips through the
//!   surface against `tools/call board` (with `mcpl/instance`) through the relay
//!   (`surface_p50_vs_relay`) and on the arcade directly (`surface_p50_vs_direct`); and,
//!   reported, through a parsing relay ([`crate::parsing_relay`]), which splits the gap
//!   into the cost of reading and writing messages with the surface's task layout and the
//!   cost of the host's own work.

use crate::chart::{Bar, bar_chart};
use crate::error::BenchError;
use crate::report::{Figure, Unit};
use crate::stats::percentile;
use mcpl_arcade::{ArcadeConfig, ArcadeServer};
use mcpl_rpc::{Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::Principal;
use mcpl_surface::{
    BoxFuture, CacheReport, ConnectError, Connector, ServerSpec, StandardConnector, Surface,
    SurfaceConfig, Target,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);
/// The principal the arcade serves.
const LOCAL: &str = "local";

/// A cheap bot, so the session measures the protocol rather than the bot's search.
fn arcade_config() -> ArcadeConfig {
    let mut config = ArcadeConfig::default();
    config.bot.playouts = 8;
    config.bot.resign_below = None;
    config
}

/// A stdio-framed pipe: one end for the caller, the other served by the arcade.
fn arcade_pipe(arcade: &ArcadeServer) -> Transport {
    let (r, w) = tokio::io::split(arcade_stream(arcade));
    Transport::stdio(r, w)
}

/// The caller's end of a raw byte pipe whose other end the arcade serves with stdio framing.
fn arcade_stream(arcade: &ArcadeServer) -> tokio::io::DuplexStream {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (r, w) = tokio::io::split(theirs);
    let runtime = arcade.runtime().clone();
    let connection = runtime.handle().next_connection();
    tokio::spawn(async move {
        let _ = runtime
            .serve(
                Transport::stdio(r, w),
                Principal::authenticated(LOCAL),
                connection,
            )
            .await;
    });
    ours
}

/// A client whose frames pass through a bare relay (two hops, like the surface) to the
/// arcade.
async fn relay_client(arcade: &ArcadeServer) -> Result<Client, BenchError> {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    crate::relay::relay(theirs, arcade_stream(arcade));
    let (r, w) = tokio::io::split(ours);
    Client::start(Transport::stdio(r, w)).await
}

/// A client whose frames pass through the parsing relay ([`crate::parsing_relay`]): the
/// surface's hops and decoding without its host logic.
async fn parsing_relay_client(arcade: &ArcadeServer) -> Result<Client, BenchError> {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (r, w) = tokio::io::split(theirs);
    crate::parsing_relay::parsing_relay(Transport::stdio(r, w), arcade_pipe(arcade));
    let (r, w) = tokio::io::split(ours);
    Client::start(Transport::stdio(r, w)).await
}

/// Reaches the embedded arcade over a stdio pipe; anything else the standard way.
struct PipeConnector {
    arcade: Arc<ArcadeServer>,
}

impl Connector for PipeConnector {
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
        if spec.target != Target::Embedded {
            return StandardConnector.connect(spec);
        }
        Box::pin(async move { Ok(arcade_pipe(&self.arcade)) })
    }
}

/// A client: an `mcpl-rpc` peer that has done the MCP handshake.
pub(crate) struct Client {
    peer: Peer,
}

impl Client {
    pub(crate) async fn start(transport: Transport) -> Result<Client, BenchError> {
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        // Answer whatever the other side asks (pings, pushes) so it never waits on us.
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let mcpl_rpc::Event::Request { responder, .. } = event {
                    let _ = responder.respond(json!({}));
                }
            }
        });
        let client = Client { peer };
        client
            .request(
                "initialize",
                json!({"protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                       "capabilities": {},
                       "clientInfo": {"name": "mcpl-bench", "version": "0"}}),
            )
            .await?;
        client
            .peer
            .notify_value("notifications/initialized", None)
            .map_err(|e| BenchError::transport("notifications/initialized", e))?;
        Ok(client)
    }

    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, BenchError> {
        self.peer
            .request_value(method, Some(params), RequestOptions::timeout(TIMEOUT))
            .await
            .map(|a| a.value)
            .map_err(|e| BenchError::transport(format!("`{method}`"), e))
    }

    /// Calls a tool; `Ok(true)` when the result is not a tool error.
    async fn call(&self, name: &str, args: Value) -> Result<bool, BenchError> {
        let result = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await?;
        Ok(result["isError"] != json!(true))
    }
}

/// A surface in front of `arcade`, and a client connected to it (its first `tools/list`
/// done, which waits for the arcade to be read).
async fn surface_client(arcade: Arc<ArcadeServer>) -> Result<(Arc<Surface>, Client), BenchError> {
    let mut config = SurfaceConfig::new(vec![ServerSpec::embedded()]);
    config.principal = LOCAL.to_owned();
    let surface = Surface::start(config, Arc::new(PipeConnector { arcade }))
        .map_err(|e| BenchError::setup("the surface host", e))?;
    let surface = Arc::new(surface);
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (r, w) = tokio::io::split(theirs);
    let serving = surface.clone();
    tokio::spawn(async move {
        let _ = serving.serve(Transport::stdio(r, w)).await;
    });
    let (r, w) = tokio::io::split(ours);
    let client = Client::start(Transport::stdio(r, w)).await?;
    client.request("tools/list", json!({})).await?;
    Ok((surface, client))
}

fn start_arcade() -> Result<Arc<ArcadeServer>, BenchError> {
    mcpl_arcade::start(arcade_config())
        .map(Arc::new)
        .map_err(|e| BenchError::setup("the arcade", e))
}

/// Every point of a 9x9 board, in the order the scripted agent tries them.
fn points() -> Vec<String> {
    let mut out = Vec::new();
    for r in [5, 3, 7, 4, 6, 2, 8, 1, 9] {
        for c in "EGCDFBHAJ".chars() {
            out.push(format!("{c}{r}"));
        }
    }
    out
}

/// One game of the scripted session.
struct Game {
    name: String,
    open: bool,
    next_point: usize,
    moves: usize,
}

/// Row 1: runs the scripted session of `steps` steps and returns the surface's cache report.
pub async fn session(steps: usize, budget: Duration) -> Result<CacheReport, BenchError> {
    let arcade = start_arcade()?;
    let (surface, client) = surface_client(arcade).await?;
    let points = points();
    let mut games = [
        Game {
            name: "a1".into(),
            open: false,
            next_point: 0,
            moves: 0,
        },
        Game {
            name: "b1".into(),
            open: false,
            next_point: 0,
            moves: 0,
        },
    ];
    let mut generation = 1;
    let started = Instant::now();
    for step in 0..steps {
        if started.elapsed() > budget {
            break;
        }
        let game = &mut games[step % 2];
        if !game.open {
            let opened = client
                .call(
                    "toolsets_open",
                    json!({"toolset": "go", "instance": game.name,
                    "options": {"size": 9}}),
                )
                .await?;
            if !opened {
                return Err(BenchError::Invalid(format!(
                    "could not open game `{}`",
                    game.name
                )));
            }
            game.open = true;
            continue;
        }
        // Every sixth move in a game, close it; the next step opens a fresh one.
        if game.moves >= 6 {
            client
                .call(
                    "toolsets_close",
                    json!({"toolset": "go", "instance": game.name}),
                )
                .await?;
            generation += 1;
            let prefix = if step % 2 == 0 { "a" } else { "b" };
            *game = Game {
                name: format!("{prefix}{generation}"),
                open: false,
                next_point: 0,
                moves: 0,
            };
            continue;
        }
        // A move: the next point that is legal now. Until the bot has answered the last
        // move, `play` is not usable and the call fails; try again shortly.
        let mut played = false;
        for _ in 0..400 {
            let point = &points[game.next_point % points.len()];
            let ok = client
                .call(
                    "toolsets_act",
                    json!({"tool": "play", "instance": game.name,
                    "args": {"move": point}}),
                )
                .await?;
            if ok {
                played = true;
                break;
            }
            game.next_point += 1;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if !played {
            return Err(BenchError::Invalid(format!(
                "no legal move found in game `{}`",
                game.name
            )));
        }
        game.moves += 1;
    }
    let report = surface.cache_report();
    drop(client);
    Ok(report)
}

/// Row 1's figures from a session's report.
pub fn cache_figures(report: &CacheReport, steps: usize) -> Vec<Figure> {
    let mut figures = Vec::new();
    for (name, tally, id) in [
        (
            "plain re-listing host",
            &report.plain,
            Some("cache_list_changes"),
        ),
        ("dynamic-toolsets host", &report.groups, None),
    ] {
        figures.push(Figure {
            id,
            measure: format!("model-facing tool-list changes ({steps} steps, 2 games at once)"),
            ours: report.surface_changes as f64,
            baseline_name: name.into(),
            baseline: tally.changes as f64,
            unit: Unit::Count,
            ..Default::default()
        });
        figures.push(Figure {
            measure: format!("tool-list bytes re-sent ({steps} steps)"),
            ours: report.surface_resent_bytes as f64,
            baseline_name: name.into(),
            baseline: tally.resent_bytes as f64,
            unit: Unit::Bytes,
            ..Default::default()
        });
    }
    figures
}

/// Row 3: p50 and p99 of `calls` round trips through the surface, through a bare relay with
/// the same two hops, through a parsing relay (the surface's hops and decoding with no host
/// logic, reported to split the gap) and directly; the paths take turns call by call.
pub async fn overhead(calls: usize, budget: Duration) -> Result<Vec<Figure>, BenchError> {
    let arcade = start_arcade()?;
    let direct = Client::start(arcade_pipe(&arcade)).await?;
    let relayed = relay_client(&arcade).await?;
    let parsed = parsing_relay_client(&arcade).await?;
    let (_surface, through) = surface_client(arcade.clone()).await?;
    // One game, opened through the surface; the direct and relayed clients act for the same
    // principal, so they reach the same instance.
    let opened = through
        .call(
            "toolsets_open",
            json!({"toolset": "go", "instance": "bench",
            "options": {"size": 9}}),
        )
        .await?;
    if !opened {
        return Err(BenchError::Invalid("could not open the game".into()));
    }
    let board = || {
        json!({"name": "board", "arguments": {},
        "_meta": {"mcpl/instance": "bench"}})
    };
    let mut via_surface = Vec::with_capacity(calls);
    let mut via_relay = Vec::with_capacity(calls);
    let mut via_direct = Vec::with_capacity(calls);
    let mut via_parsing = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        if started.elapsed() > budget {
            break;
        }
        let t0 = Instant::now();
        let ok = through
            .call(
                "toolsets_act",
                json!({"tool": "board", "instance": "bench", "args": {}}),
            )
            .await?;
        via_surface.push(t0.elapsed());
        let t0 = Instant::now();
        let relayed_result = relayed.request("tools/call", board()).await?;
        via_relay.push(t0.elapsed());
        let t0 = Instant::now();
        let result = direct.request("tools/call", board()).await?;
        via_direct.push(t0.elapsed());
        let t0 = Instant::now();
        let parsed_result = parsed.request("tools/call", board()).await?;
        via_parsing.push(t0.elapsed());
        for r in [&result, &relayed_result, &parsed_result] {
            if !ok || r["isError"] == json!(true) {
                return Err(BenchError::Invalid(format!("`board` failed: {r}")));
            }
        }
    }
    let micros = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e6).unwrap_or(0.0);
    let n = via_surface.len();
    let mut figures = Vec::new();
    for (p, id) in [(50.0, Some("surface_p50_vs_relay")), (99.0, None)] {
        figures.push(Figure {
            id,
            measure: format!("p{p:.0} `toolsets_act` round trip through the surface ({n} calls)"),
            ours: micros(percentile(&via_surface, p)),
            baseline_name: format!("p{p:.0} `tools/call` through a bare relay, same two hops"),
            baseline: micros(percentile(&via_relay, p)),
            unit: Unit::Micros,
            ..Default::default()
        });
    }
    for (p, id) in [(50.0, Some("surface_p50_vs_direct")), (99.0, None)] {
        figures.push(Figure {
            id,
            measure: format!("p{p:.0} `toolsets_act` round trip through the surface ({n} calls)"),
            ours: micros(percentile(&via_surface, p)),
            baseline_name: format!("p{p:.0} `tools/call` on the arcade directly"),
            baseline: micros(percentile(&via_direct, p)),
            unit: Unit::Micros,
            ..Default::default()
        });
    }
    // The split of the gap: the surface against the parsing relay (its host logic), and the
    // parsing relay against the bare one (decoding, encoding and the surface's task layout).
    figures.push(Figure {
        measure: format!("p50 `toolsets_act` round trip through the surface ({n} calls)"),
        ours: micros(percentile(&via_surface, 50.0)),
        baseline_name: "p50 `tools/call` through a parsing relay (the surface's hops and decoding, no host logic)".into(),
        baseline: micros(percentile(&via_parsing, 50.0)),
        unit: Unit::Micros,
        ..Default::default()
    });
    figures.push(Figure {
        measure: format!("p50 `tools/call` through the parsing relay ({n} calls)"),
        ours: micros(percentile(&via_parsing, 50.0)),
        baseline_name: "p50 `tools/call` through a bare relay, same two hops".into(),
        baseline: micros(percentile(&via_relay, 50.0)),
        unit: Unit::Micros,
        ..Default::default()
    });
    Ok(figures)
}

/// Row 1 as an SVG bar chart: bytes of tool list re-sent by each kind of host.
pub fn cache_chart(report: &CacheReport, steps: usize) -> String {
    let bar = |label: &str, bytes: u64, changes: u64| Bar {
        label: label.to_owned(),
        value: bytes as f64,
        note: format!("{}, {changes} changes", Unit::Bytes.show(bytes as f64)),
    };
    bar_chart(
        &format!("Tool-list bytes re-sent to the model over a {steps}-step session"),
        &[
            bar(
                "surface host (ours)",
                report.surface_resent_bytes,
                report.surface_changes,
            ),
            bar(
                "plain re-listing host",
                report.plain.resent_bytes,
                report.plain.changes,
            ),
            bar(
                "dynamic-toolsets host",
                report.groups.resent_bytes,
                report.groups.changes,
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache contract the row measures: through opens, moves, closes and two games at
    /// once, the surface's tool list never changes, while the plain host's does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_surface_list_stays_put_while_the_baselines_move() {
        let report = session(40, Duration::from_secs(60))
            .await
            .expect("a clean session");
        assert_eq!(report.surface_changes, 0, "{report:?}");
        assert_eq!(report.surface_resent_bytes, 0, "{report:?}");
        assert!(report.plain.changes > 10, "{report:?}");
        assert!(report.groups.changes >= 1, "{report:?}");
        let figures = cache_figures(&report, 40);
        assert_eq!(figures.len(), 4);
        assert!(figures.iter().all(|f| f.ratio() == 0.0), "{figures:?}");
        assert!(cache_chart(&report, 40).contains("surface host (ours)"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn overhead_measures_every_path() {
        let figures = overhead(10, Duration::from_secs(60))
            .await
            .expect("a clean run");
        assert_eq!(figures.len(), 6);
        assert_eq!(figures[0].id, Some("surface_p50_vs_relay"));
        assert_eq!(figures[2].id, Some("surface_p50_vs_direct"));
        // The split of the gap: surface / parsing relay, then parsing relay / bare relay.
        assert!(figures[4].baseline_name.contains("parsing relay"));
        assert_eq!(figures[4].ours, figures[0].ours);
        assert_eq!(figures[5].ours, figures[4].baseline);
        assert_eq!(figures[5].baseline, figures[0].baseline);
        assert!(
            figures.iter().all(|f| f.ours > 0.0 && f.baseline > 0.0),
            "{figures:?}"
        );
    }
}
