//! A throwaway `redis-server` on a free loopback port, and two replicas of a small server.

#![allow(dead_code)]

use mcpl_protocol::mcp::CallToolResult;
use mcpl_rpc::{Event as RpcEvent, Events, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{
    Context, Declarations, OpenReply, Principal, Server, ServerConfig, ToolDef, ToolsetDef,
    WallClock,
};
use mcpl_server_redis::{Fanout, RedisStore};
use serde_json::{Map, Value, json};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// A `redis-server` child process on 127.0.0.1, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
}

impl RedisServer {
    /// Starts one on a free port. Panics, naming the fix, when `redis-server` is missing:
    /// these tests must not pass without it.
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut server = RedisServer { child: None, port };
        server.launch();
        server
    }

    fn launch(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("redis-server did not start ({e}); run scripts/test, which installs it")
            });
        self.child = Some(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not listen on port {}", self.port);
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stops it (its data is gone: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Declarations: an instanced `game` with `play`.
pub fn decls() -> Declarations {
    Declarations::new("arcade", "0.1.0").toolset(ToolsetDef::new("game", "Go").instances().tool(
        ToolDef::new("play", "Play a move.").input_schema(json!({"type": "object",
                "properties": {"move": {"type": "string"}}})),
    ))
}

/// A game whose `play` hides itself (a state change to fan out).
pub struct Game;

impl App for Game {
    async fn open(&self, _ctx: &mut Context) -> OpenReply {
        OpenReply::text("New game.").title("Go vs bot")
    }

    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        _: Map<String, Value>,
    ) -> CallToolResult {
        ctx.hide("play");
        CallToolResult::text(format!("{tool} done"))
    }
}

/// One replica: its store, runtime and fan-out.
pub struct Replica {
    pub store: Arc<RedisStore>,
    pub runtime: Runtime<Game>,
    pub fanout: Fanout,
}

impl Replica {
    /// A replica on `url` under `prefix`.
    pub async fn start(url: &str, prefix: &str) -> Replica {
        let store = Arc::new(
            RedisStore::open(url, prefix)
                .await
                .expect("redis reachable"),
        );
        let clock = WallClock::new(Instant::now(), UNIX_EPOCH);
        let server = Server::with_store(
            decls().build().unwrap(),
            ServerConfig::new(clock),
            store.clone(),
        );
        let handle = Handle::new(server);
        let fanout = Fanout::start(&handle, store.clone())
            .await
            .expect("subscribed");
        Replica {
            store,
            runtime: Runtime::new(handle, Game),
            fanout,
        }
    }

    /// A host connected to this replica as `principal`, initialized with `toolHints`.
    pub async fn connect(&self, principal: &str) -> Host {
        connect(&self.runtime, principal).await
    }
}

/// A host connected to `runtime` as `principal` over an in-memory transport, initialized with
/// `toolHints`.
pub async fn connect<A: App>(runtime: &Runtime<A>, principal: &str) -> Host {
    let (host_side, server_side) = Transport::memory_pair();
    let runtime = runtime.clone();
    let principal = Principal::authenticated(principal);
    tokio::spawn(async move {
        let connection = runtime.next_connection();
        runtime.serve(server_side, principal, connection).await
    });
    let (peer, events) = Peer::start(host_side, PeerConfig::default());
    let host = Host { peer, events };
    host.ask(
        "initialize",
        json!({"protocolVersion": "2025-06-18",
        "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true}}},
        "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    host
}

/// A scripted host.
pub struct Host {
    pub peer: Peer,
    pub events: Events,
}

impl Host {
    /// Sends a request and returns its result.
    pub async fn ask(&self, method: &str, params: Value) -> Value {
        let options = RequestOptions::timeout(Duration::from_secs(10));
        self.peer
            .request_value(method, Some(params), options)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"))
            .value
    }

    /// The next `tools/hints` notification's params.
    pub async fn next_hints(&mut self) -> Value {
        loop {
            let event = tokio::time::timeout(Duration::from_secs(10), self.events.recv())
                .await
                .expect("hints within 10 s")
                .expect("connection open");
            if let RpcEvent::Notification { notification, .. } = event
                && notification.method == "tools/hints"
            {
                return notification.params.unwrap_or(Value::Null);
            }
        }
    }
}
