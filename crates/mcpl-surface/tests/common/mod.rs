//! Test harness: a small toolset server built on the server SDK, served in process, a
//! connector that can cut its connections, and a plain MCP client over the stdio framing.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_rpc::{Peer, PeerConfig, RequestOptions, Transport};
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{
    Context, Declarations, Event, OpenReply, Principal, Server, ServerConfig, ToolDef, ToolsetDef,
    Update, WallClock,
};
use mcpl_surface::{
    BoxFuture, ConnectError, Connector, LinkTiming, ServerSpec, Surface, SurfaceConfig, Target,
};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

/// A tiny game: take cells until none is left; a rival takes one after each of yours.
pub struct Cells {
    handle: Handle,
    games: Mutex<HashMap<String, Vec<String>>>,
    /// How many `toolsets/open` reached the app.
    pub opens: AtomicUsize,
    /// How many calls of `stall` (a static tool that never answers) reached the app.
    pub stalls: AtomicUsize,
    /// Games in which the rival has moved.
    rival: Arc<Mutex<std::collections::HashSet<String>>>,
}

fn play_def(cells: &[String]) -> Tool {
    let mut t = Tool::new("play");
    t.description = Some(json!("Take a free cell. Only free cells are offered."));
    t.input_schema = json!({"type": "object", "required": ["cell"],
        "properties": {"cell": {"enum": cells}}});
    t
}

impl App for Cells {
    async fn open(&self, ctx: &mut Context) -> OpenReply {
        self.opens.fetch_add(1, Ordering::SeqCst);
        let size = ctx
            .options()
            .get("size")
            .and_then(Value::as_u64)
            .unwrap_or(4) as usize;
        let cells: Vec<String> = (0..size).map(|i| format!("c{i}")).collect();
        let name = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
        ctx.here().define(play_def(&cells));
        self.games.lock().unwrap().insert(name.clone(), cells);
        OpenReply::text(format!("New game with {size} cells; your turn."))
            .title(format!("Cells {name}"))
    }

    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        match tool {
            "hello" => CallToolResult::text("hello from the cells server"),
            "wave" => CallToolResult::text("a wave from the cells server"),
            "picture" => {
                let image = serde_json::from_value(
                    json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
                )
                .expect("an image block");
                let mut r = CallToolResult::text("a picture of the board");
                r.content.push(image);
                r.structured_content = Some(json!({"cells": 4}));
                r
            }
            "stall" => {
                self.stalls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                CallToolResult::text("too late")
            }
            "board" => {
                let name = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
                let games = self.games.lock().unwrap();
                CallToolResult::text(format!("free: {:?}", games.get(&name)))
            }
            "play" => {
                let name = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
                let cell = args
                    .get("cell")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let mut games = self.games.lock().unwrap();
                let Some(free) = games.get_mut(&name) else {
                    return CallToolResult::error("no such game");
                };
                free.retain(|c| *c != cell);
                if free.is_empty() {
                    ctx.here().end("Board full: a draw.");
                    return CallToolResult::text(format!("You took {cell}. The board is full."));
                }
                ctx.hide("play");
                let rival = free.remove(0);
                let left = free.clone();
                {
                    let rt = self.handle.clone();
                    let moved = self.rival.clone();
                    let principal = ctx.principal().clone();
                    tokio::spawn(async move {
                        // The rival moves after the player's move is committed.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let mut u = Update::new();
                        {
                            let mut here = u.instance("game", name.clone());
                            if left.is_empty() {
                                here.end("Board full: a draw.");
                            } else {
                                here.show("play");
                                here.define(play_def(&left));
                            }
                        }
                        u.event(
                            Event::text(format!("Rival took {rival}.")).about("game", Some(&name)),
                        );
                        if let Err(e) = rt.apply(&principal, u) {
                            eprintln!("apply failed: {e}");
                        }
                        moved.lock().unwrap().insert(name);
                    });
                }
                CallToolResult::text(format!("You took {cell}."))
            }
            other => CallToolResult::error(format!("unknown tool {other}")),
        }
    }
}

impl Cells {
    /// Whether the rival has answered a move in game `name`.
    pub fn rival_moved(&self, name: &str) -> bool {
        self.rival.lock().unwrap().contains(name)
    }
}

/// The cells server's declarations, with extra static tools.
pub fn cells_catalog(extra: &[&str]) -> mcpl_server::Catalog {
    let mut decls = Declarations::new("cells", "0.1.0")
        .surface("Cells", Some("A game of free cells"))
        .tool(ToolDef::new("hello", "Say hello."));
    for name in extra {
        decls = decls.tool(ToolDef::new(*name, "An extra static tool."));
    }
    decls
        .toolset(
            ToolsetDef::new("game", "Cells")
                .summary("Take cells until the board is full")
                .instances()
                .options_schema(json!({"type": "object", "properties": {"size": {"enum": [2, 4, 6]}}}))
                .tool(ToolDef::new("play", "Take a free cell.").input_schema(json!({
                    "type": "object", "required": ["cell"], "properties": {"cell": {"type": "string"}}})))
                .tool(ToolDef::new("board", "Show the free cells.")),
        )
        .build()
        .expect("declarations are valid")
}

/// A cells server and its app.
pub fn cells_runtime() -> (Runtime<Cells>, Arc<Cells>) {
    let decls = cells_catalog(&[]);
    let clock = WallClock::new(Instant::now(), SystemTime::now());
    let handle = Handle::new(Server::new(decls, ServerConfig::new(clock)));
    let cells = Cells {
        handle: handle.clone(),
        games: Mutex::default(),
        opens: AtomicUsize::new(0),
        stalls: AtomicUsize::new(0),
        rival: Arc::default(),
    };
    let runtime = Runtime::new(handle, cells);
    let app = runtime.app().clone();
    (runtime, app)
}

/// A served cells server and its app.
type Served = (Runtime<Cells>, Arc<Cells>);

/// Serves named in-process cells servers; `cut` drops a server's connection, `replace`
/// swaps in a fresh server (its games lost, as after a crash).
#[derive(Default, Clone)]
pub struct Cutter {
    servers: Arc<Mutex<HashMap<String, Served>>>,
    conns: Arc<Mutex<HashMap<String, Vec<JoinHandle<()>>>>>,
    /// Connects per server.
    pub connects: Arc<Mutex<HashMap<String, usize>>>,
    refuse: Arc<Mutex<HashMap<String, bool>>>,
}

impl Cutter {
    pub fn with(names: &[&str]) -> Self {
        let c = Cutter::default();
        for n in names {
            c.servers
                .lock()
                .unwrap()
                .insert((*n).to_owned(), cells_runtime());
        }
        c
    }

    pub fn app(&self, name: &str) -> Arc<Cells> {
        self.servers.lock().unwrap()[name].1.clone()
    }

    /// Gives `name` an extra static tool (announced as a manifest change).
    pub fn add_static(&self, name: &str, tool: &str) {
        self.set_statics(name, &[tool]);
    }

    /// Replaces `name`'s catalog with the cells catalog plus the static `tools`.
    pub fn set_statics(&self, name: &str, tools: &[&str]) {
        let rt = self.servers.lock().unwrap()[name].0.clone();
        rt.handle().replace_catalog(cells_catalog(tools));
    }

    /// Drops every connection to `name` (the server keeps its state).
    pub fn cut(&self, name: &str) {
        for h in self.conns.lock().unwrap().remove(name).unwrap_or_default() {
            h.abort();
        }
    }

    /// Refuses (or again accepts) new connections to `name`.
    pub fn refuse(&self, name: &str, refuse: bool) {
        self.refuse.lock().unwrap().insert(name.to_owned(), refuse);
    }

    /// Replaces `name` with a fresh server: a crash that lost every game.
    pub fn crash(&self, name: &str) {
        self.servers
            .lock()
            .unwrap()
            .insert(name.to_owned(), cells_runtime());
        self.cut(name);
    }

    pub fn specs(names: &[&str]) -> Vec<ServerSpec> {
        names
            .iter()
            .map(|n| ServerSpec::new(mcpl_host::ServerName::parse(n).unwrap(), Target::Embedded))
            .collect()
    }
}

impl Connector for Cutter {
    fn connect<'a>(
        &'a self,
        spec: &'a ServerSpec,
    ) -> BoxFuture<'a, Result<Transport, ConnectError>> {
        Box::pin(async move {
            if self
                .refuse
                .lock()
                .unwrap()
                .get(spec.name.as_str())
                .copied()
                .unwrap_or(false)
            {
                return Err(ConnectError::Transport("connection refused".to_owned()));
            }
            let (rt, _) = self
                .servers
                .lock()
                .unwrap()
                .get(spec.name.as_str())
                .cloned()
                .ok_or_else(|| ConnectError::Unsupported("no such server".to_owned()))?;
            *self
                .connects
                .lock()
                .unwrap()
                .entry(spec.name.to_string())
                .or_default() += 1;
            let (a, b) = Transport::memory_pair();
            let conn = rt.handle().next_connection();
            let h = tokio::spawn(async move {
                let _ = rt.serve(b, Principal::authenticated("agent"), conn).await;
            });
            self.conns
                .lock()
                .unwrap()
                .entry(spec.name.to_string())
                .or_default()
                .push(h);
            Ok(a)
        })
    }
}

/// A surface over `cutter`'s servers with fast test timing, and a client connected to it
/// through the stdio framing.
pub async fn surface(cutter: &Cutter, names: &[&str]) -> (Arc<Surface>, Client) {
    surface_for(cutter, names, json!({})).await
}

/// [`surface`] with a client advertising `capabilities`.
pub async fn surface_for(
    cutter: &Cutter,
    names: &[&str],
    capabilities: Value,
) -> (Arc<Surface>, Client) {
    let mut cfg = SurfaceConfig::new(Cutter::specs(names));
    cfg.timing = fast_timing();
    cfg.event_ids = mcpl_surface::EventIds::seeded("t");
    let surface = Arc::new(Surface::start(cfg, Arc::new(cutter.clone())).expect("surface starts"));
    let client = client_of(&surface, capabilities).await;
    (surface, client)
}

/// Link timings short enough for a test: 5 s requests and calls, 5-40 ms back-off.
pub fn fast_timing() -> LinkTiming {
    LinkTiming {
        request_timeout: Duration::from_secs(5),
        call_timeout: Duration::from_secs(5),
        backoff_initial: Duration::from_millis(5),
        backoff_max: Duration::from_millis(40),
    }
}

/// A client connected to `surface` over an in-memory stdio pair, advertising `capabilities`.
pub async fn client_of(surface: &Arc<Surface>, capabilities: Value) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_io);
    let s = surface.clone();
    tokio::spawn(async move { s.serve(Transport::stdio(sr, sw)).await });
    let (cr, cw) = tokio::io::split(client_io);
    Client::start(Transport::stdio(cr, cw), capabilities).await
}

/// A plain MCP client.
pub struct Client {
    pub peer: Peer,
    pub events: mcpl_rpc::Events,
    /// The surface's answer to `initialize`.
    pub init: Value,
}

impl Client {
    pub async fn start(t: Transport, capabilities: Value) -> Client {
        let (peer, events) = Peer::start(t, PeerConfig::default());
        let mut c = Client {
            peer,
            events,
            init: Value::Null,
        };
        let init = c
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "test", "version": "0"}}),
            )
            .await;
        assert_eq!(init["protocolVersion"], "2025-11-25");
        c.peer
            .notify_value("notifications/initialized", None)
            .unwrap();
        c.init = init;
        c
    }

    pub async fn request(&self, method: &str, params: Value) -> Value {
        self.peer
            .request_value(
                method,
                Some(params),
                RequestOptions::timeout(Duration::from_secs(20)),
            )
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"))
            .value
    }

    pub async fn tools(&self) -> Value {
        self.request("tools/list", json!({})).await["tools"].clone()
    }

    /// Calls a tool; returns its text and whether it is an error.
    pub async fn call(&self, name: &str, args: Value) -> (String, bool) {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await;
        let text: Vec<&str> = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect();
        (text.join("\n"), r["isError"] == json!(true))
    }
}
