//! A throwaway `redis-server` on a free loopback port, and two replicas of a small server.

#![allow(dead_code)]

use mcpl_protocol::mcp::CallToolResult;
use mcpl_rpc::{Event as RpcEvent, Events, Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{
    Context, Declarations, OpenReply, Principal, Server, ServerConfig, ToolDef, ToolsetDef,
    WallClock,
};
use mcpl_server_redis::{Fanout, LocalRedis, RedisStore};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// A throwaway `redis-server` of this test's own; panics, naming the fix, when it cannot
/// start: these tests must not pass without it.
pub struct RedisServer(LocalRedis);

impl RedisServer {
    pub fn start() -> Self {
        RedisServer(
            LocalRedis::start()
                .unwrap_or_else(|e| panic!("{e}; run scripts/test, which installs redis-server")),
        )
    }

    pub fn url(&self) -> String {
        self.0.url()
    }

    pub fn stop(&mut self) {
        self.0.stop();
    }

    pub fn restart(&mut self) {
        self.0
            .restart()
            .expect("redis-server starts again on its port");
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
