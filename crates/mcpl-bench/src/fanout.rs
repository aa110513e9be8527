//! Row 4, server fan-out: principals with three loopback WebSocket connections each.
//!
//! For each principal, connection A opens a game (`toolsets/open go`); the server shares the
//! principal's state with B and C as `tools/hints` on their own revs (§5.6). The latency is
//! from sending the open to the later of B and C receiving its hints, against a `ping` round
//! trip on A just before. Memory is the server process's resident set growth per connection
//! and per open instance, against a bare `mcpl-rpc` WebSocket peer that answers `initialize`
//! and `ping` only.
//!
//! Both servers run as child processes, the `mcpl` binary started with [`CHILD_ENV`] set, so
//! their memory is theirs alone. They listen on 127.0.0.1 and end when their stdin closes.

use crate::error::BenchError;
use crate::progress::Progress;
use crate::report::{Figure, Unit};
use crate::stats::percentile;
use mcpl_rpc::transport::ws;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions};
use mcpl_server::{Identity, TokenMap};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::mpsc;

/// The environment variable that makes `mcpl bench` serve as a child server instead:
/// `arcade:N` (the arcade with bearer tokens `t0..tN` for principals `p0..pN`) or `bare`.
pub const CHILD_ENV: &str = "MCPL_BENCH_CHILD";

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Connections set up at once.
const CONNECT_BATCH: usize = 64;
/// Connections per principal.
const PER_PRINCIPAL: usize = 3;

/// The server a child process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildRole {
    /// The arcade over WebSocket, with tokens `t0..tN` for principals `p0..pN`.
    Arcade {
        /// How many principals the token map holds.
        principals: usize,
    },
    /// A bare `mcpl-rpc` WebSocket peer answering `initialize` and `ping`: the baseline.
    Bare,
}

impl ChildRole {
    /// The role [`CHILD_ENV`] asks for, if it is set.
    pub fn from_env() -> Option<Result<ChildRole, BenchError>> {
        let value = std::env::var(CHILD_ENV).ok()?;
        Some(Self::parse(&value))
    }

    /// Reads a role from its [`CHILD_ENV`] form.
    pub fn parse(value: &str) -> Result<ChildRole, BenchError> {
        if value == "bare" {
            return Ok(ChildRole::Bare);
        }
        value
            .strip_prefix("arcade:")
            .and_then(|n| n.parse().ok())
            .map(|principals| ChildRole::Arcade { principals })
            .ok_or_else(|| {
                BenchError::Child(format!(
                    "`{CHILD_ENV}={value}`: expected `arcade:N` or `bare`"
                ))
            })
    }

    fn env_value(self) -> String {
        match self {
            ChildRole::Arcade { principals } => format!("arcade:{principals}"),
            ChildRole::Bare => "bare".to_owned(),
        }
    }
}

/// Serves `role` on 127.0.0.1 (a free port), prints `listening ADDR` on stdout, and returns
/// when stdin closes.
pub fn serve_child(role: ChildRole) -> Result<(), BenchError> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| BenchError::setup("tokio", e))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| BenchError::setup("a loopback listener", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| BenchError::setup("a loopback listener", e))?;
        println!("listening {addr}");
        let stdin_closed = async {
            let mut sink = Vec::new();
            let _ = tokio::io::stdin().read_to_end(&mut sink).await;
        };
        match role {
            ChildRole::Arcade { principals } => {
                let server = mcpl_arcade::start(mcpl_arcade::ArcadeConfig::default())
                    .map_err(|e| BenchError::setup("the arcade", e))?;
                let tokens = (0..principals).fold(TokenMap::new(), |map, i| {
                    map.with(format!("t{i}"), format!("p{i}"))
                });
                tokio::select! {
                    served = server.runtime().serve_ws(listener, Identity::Tokens(tokens)) => {
                        served.map_err(|e| BenchError::Child(e.to_string()))
                    }
                    () = stdin_closed => Ok(()),
                }
            }
            ChildRole::Bare => tokio::select! {
                served = serve_bare(listener) => served,
                () = stdin_closed => Ok(()),
            },
        }
    })
}

/// The baseline server: a WebSocket `mcpl-rpc` peer per connection, no session behind it.
async fn serve_bare(listener: tokio::net::TcpListener) -> Result<(), BenchError> {
    loop {
        let (transport, _) = ws::accept_next(&listener, Limits::default())
            .await
            .map_err(|e| BenchError::Child(e.to_string()))?;
        tokio::spawn(async move {
            let (_peer, mut events) = Peer::start(transport, PeerConfig::default());
            while let Some(event) = events.recv().await {
                if let Event::Request {
                    request, responder, ..
                } = event
                {
                    let _ = match request.method.as_str() {
                        "initialize" => responder.respond(json!({
                            "protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                            "capabilities": {},
                            "serverInfo": {"name": "bare", "version": "0"}})),
                        "ping" => responder.respond(json!({})),
                        _ => responder.method_not_found(),
                    };
                }
            }
        });
    }
}

/// A running child server.
struct Child {
    process: tokio::process::Child,
    addr: String,
}

impl Child {
    async fn start(exe: &PathBuf, role: ChildRole) -> Result<Child, BenchError> {
        let mut process = tokio::process::Command::new(exe)
            .arg("bench")
            .env(CHILD_ENV, role.env_value())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| BenchError::Child(format!("starting `{}`: {e}", exe.display())))?;
        let stdout = process
            .stdout
            .take()
            .ok_or_else(|| BenchError::Child("no stdout".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(TIMEOUT, lines.next_line())
            .await
            .map_err(|_| BenchError::Child("no `listening` line within 10 s".into()))?
            .map_err(|e| BenchError::Child(e.to_string()))?
            .unwrap_or_default();
        let addr = line
            .strip_prefix("listening ")
            .ok_or_else(|| BenchError::Child(format!("expected `listening ADDR`, got `{line}`")))?
            .to_owned();
        Ok(Child { process, addr })
    }

    /// The child's resident set in bytes (Linux `/proc`), if it can be read.
    fn rss(&self) -> Option<f64> {
        let pid = self.process.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024.0)
    }

    async fn stop(mut self) {
        drop(self.process.stdin.take());
        if tokio::time::timeout(Duration::from_secs(5), self.process.wait())
            .await
            .is_err()
        {
            let _ = self.process.kill().await;
        }
    }
}

/// One client connection and the times its hints arrived.
struct Conn {
    peer: Peer,
    hints: mpsc::UnboundedReceiver<Instant>,
}

impl Conn {
    async fn open(addr: &str, token: Option<String>, list: bool) -> Result<Conn, BenchError> {
        let url = format!("ws://{addr}");
        let bearer = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = bearer
            .as_deref()
            .map(|b| vec![("authorization", b)])
            .unwrap_or_default();
        let transport = ws::connect(&url, &headers, Limits::default())
            .await
            .map_err(|e| BenchError::transport("websocket connect", e))?;
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        let (tx, hints) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Notification { notification, .. }
                        if notification.method == "tools/hints" =>
                    {
                        let _ = tx.send(Instant::now());
                    }
                    Event::Request {
                        request, responder, ..
                    } => {
                        let _ = match request.method.as_str() {
                            "push/event" => {
                                let _ = tx.send(Instant::now());
                                responder.respond(json!({}))
                            }
                            "ping" => responder.respond(json!({})),
                            _ => responder.method_not_found(),
                        };
                    }
                    _ => {}
                }
            }
        });
        request(
            &peer,
            "initialize",
            json!({"protocolVersion": mcpl_protocol::mcp::LATEST_PROTOCOL_VERSION,
                   "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
                   "clientInfo": {"name": "mcpl-bench", "version": env!("CARGO_PKG_VERSION")}}),
        )
        .await?;
        peer.notify_value("notifications/initialized", None)
            .map_err(|e| BenchError::transport("notifications/initialized", e))?;
        if list {
            request(&peer, "tools/list", json!({})).await?;
        }
        Ok(Conn { peer, hints })
    }

    fn drain(&mut self) {
        while self.hints.try_recv().is_ok() {}
    }

    async fn next_hints(&mut self) -> Result<Instant, BenchError> {
        tokio::time::timeout(TIMEOUT, self.hints.recv())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| BenchError::Invalid("a connection never received its hints".into()))
    }
}

async fn request(peer: &Peer, method: &str, params: Value) -> Result<Value, BenchError> {
    peer.request_value(method, Some(params), RequestOptions::timeout(TIMEOUT))
        .await
        .map(|a| a.value)
        .map_err(|e| BenchError::transport(format!("`{method}`"), e))
}

/// Opens `count` connections; connection `i` acts for principal `i / 3` when `tokens`.
async fn connect_all(
    addr: &str,
    count: usize,
    tokens: bool,
    progress: &Progress,
    what: &str,
) -> Result<Vec<Conn>, BenchError> {
    let mut conns = Vec::with_capacity(count);
    while conns.len() < count {
        let start = conns.len();
        let end = (start + CONNECT_BATCH).min(count);
        let mut batch = tokio::task::JoinSet::new();
        for i in start..end {
            let addr = addr.to_owned();
            let token = tokens.then(|| format!("t{}", i / PER_PRINCIPAL));
            batch.spawn(async move { (i, Conn::open(&addr, token, tokens).await) });
        }
        let mut opened: Vec<(usize, Conn)> = Vec::new();
        while let Some(joined) = batch.join_next().await {
            let (i, conn) = joined.map_err(|e| BenchError::transport("a connect task", e))?;
            opened.push((i, conn?));
        }
        opened.sort_by_key(|(i, _)| *i);
        conns.extend(opened.into_iter().map(|(_, c)| c));
        progress.status(&format!("{what}: {}/{count} connections", conns.len()));
    }
    Ok(conns)
}

/// Settings for row 4.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The `mcpl` binary, started as the child servers.
    pub exe: PathBuf,
    /// Principals, each with three connections.
    pub principals: usize,
    /// The most the open-and-measure loop may take; principals not reached are left out.
    pub budget: Duration,
}

/// Measures row 4.
pub async fn measure(settings: &Settings, progress: &Progress) -> Result<Vec<Figure>, BenchError> {
    let n = settings.principals.max(1);
    let conns_total = n * PER_PRINCIPAL;

    // The baseline's memory per connection.
    let bare = Child::start(&settings.exe, ChildRole::Bare).await?;
    let bare_idle = bare.rss();
    let bare_conns = connect_all(&bare.addr, conns_total, false, progress, "bare peers").await?;
    settle().await;
    let bare_per_conn = bare_idle
        .zip(bare.rss())
        .map(|(idle, busy)| (busy - idle) / conns_total as f64);
    for conn in &bare_conns {
        conn.peer.close().await;
    }
    drop(bare_conns);
    bare.stop().await;

    // The arcade.
    let arcade = Child::start(&settings.exe, ChildRole::Arcade { principals: n }).await?;
    let idle = arcade.rss();
    let mut conns = connect_all(&arcade.addr, conns_total, true, progress, "arcade").await?;
    settle().await;
    let connected = arcade.rss();
    let per_conn = idle
        .zip(connected)
        .map(|(idle, busy)| (busy - idle) / conns_total as f64);

    let mut pings = Vec::with_capacity(n);
    let mut fanouts = Vec::with_capacity(n);
    let started = Instant::now();
    for (p, trio) in conns.chunks_mut(PER_PRINCIPAL).enumerate() {
        if started.elapsed() > settings.budget {
            break;
        }
        let [a, b, c] = trio else {
            return Err(BenchError::Invalid("connections come in threes".into()));
        };
        b.drain();
        c.drain();
        let t0 = Instant::now();
        request(&a.peer, "ping", json!({})).await?;
        pings.push(t0.elapsed());

        let t0 = Instant::now();
        let open = request(
            &a.peer,
            "toolsets/open",
            json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
        );
        let (opened, at_b, at_c) = tokio::join!(open, b.next_hints(), c.next_hints());
        opened?;
        fanouts.push(at_b?.max(at_c?) - t0);
        if p % 50 == 0 {
            progress.status(&format!("fan-out: principal {p}/{n}"));
        }
    }
    settle().await;
    let opened = fanouts.len();
    let per_instance = connected
        .zip(arcade.rss())
        .filter(|_| opened > 0)
        .map(|(before, after)| (after - before) / opened as f64);
    for conn in &conns {
        conn.peer.close().await;
    }
    drop(conns);
    arcade.stop().await;

    let micros = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e6).unwrap_or(0.0);
    let mut figures = Vec::new();
    for p in [50.0, 99.0] {
        figures.push(Figure {
            measure: format!(
                "p{p:.0} open on 1 connection → hints on the other 2 ({opened} principals x 3)"
            ),
            ours: micros(percentile(&fanouts, p)),
            baseline_name: format!("p{p:.0} `ping` round trip, same connection"),
            baseline: micros(percentile(&pings, p)),
            unit: Unit::Micros,
        });
    }
    if let (Some(ours), Some(bare)) = (per_conn, bare_per_conn) {
        figures.push(Figure {
            measure: format!("server memory per connection ({conns_total} connections)"),
            ours,
            baseline_name: "bare mcpl-rpc WebSocket peer, per connection".into(),
            baseline: bare,
            unit: Unit::Bytes,
        });
        if let Some(inst) = per_instance {
            figures.push(Figure {
                measure: format!("server memory per open instance ({opened} games)"),
                ours: inst,
                baseline_name: "bare mcpl-rpc WebSocket peer, per connection".into(),
                baseline: bare,
                unit: Unit::Bytes,
            });
        }
    }
    Ok(figures)
}

/// Lets the child finish what the last replies started before its memory is read.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_roles_round_trip_through_their_env_form() {
        for role in [ChildRole::Bare, ChildRole::Arcade { principals: 1000 }] {
            assert_eq!(ChildRole::parse(&role.env_value()).unwrap(), role);
        }
        let err = ChildRole::parse("arcade:many").unwrap_err().to_string();
        assert!(err.contains("arcade:many"), "{err}");
    }
}
