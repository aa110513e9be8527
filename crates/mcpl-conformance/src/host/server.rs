//! The suite as a scripted server for the host under test: it listens on WebSocket, answers
//! the host's requests from a small world, records every request, and sends the hint changes
//! a check asks for (gaps, reversals, duplicates, unknown tools) with exactly the revs given.

use crate::fixture::{ECHO, FINISH, FLAT, FLAT_TOOL, GROUP, GROUPED, INSTANCED, REVEAL, REVEALED};
use crate::transcript::{Direction, Transcript};
use mcpl_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, Notification, Request, Response};
use mcpl_protocol::methods;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, Transport};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// The world the scripted server states, shared by its connections.
#[derive(Debug, Clone)]
pub(crate) struct World {
    /// Advertise `toolHints` (and the toolsets).
    pub tool_hints: bool,
    /// Open instances of the instanced toolset.
    pub instances: Vec<String>,
    /// Whether the flat toolset is open.
    pub flat_open: bool,
    /// Whether the toolset-less dynamic tool is visible.
    pub revealed: bool,
    /// Ended records every `toolsets/list` carries.
    pub ended: Vec<Value>,
    /// Serve `tools/list` in pages of this many tools.
    pub page_size: Option<usize>,
    /// Answer this many coming `tools/list` requests with an error.
    pub fail_tools_list: u32,
    /// A definition to put in the open's hints for the echo tool (vector 20).
    pub echo_definition: Option<Value>,
    /// The counter behind server-chosen instance names (`srv-N`).
    pub next_auto: u64,
    /// Whether the manifest still declares the flat toolset (vector 31).
    pub flat_declared: bool,
    /// Hold `toolsets/open` answers until [`Command::Release`] (vectors 24, 35, 36).
    pub hold_opens: bool,
    /// Give a held answer's hints their rev when it is released, not when it was asked
    /// (vector 24: a push's rev comes between).
    pub stamp_on_release: bool,
    /// Serve Streamable HTTP instead of WebSocket (vector 36).
    pub http: bool,
    /// Hints sent as `tools/hints` just before the next `toolsets/list` answer: a change in
    /// flight during a recovery (vector 25).
    pub in_flight: Option<Value>,
}

impl World {
    pub fn new() -> Self {
        World {
            tool_hints: true,
            instances: Vec::new(),
            flat_open: false,
            revealed: false,
            ended: Vec::new(),
            page_size: None,
            fail_tools_list: 0,
            echo_definition: None,
            next_auto: 1,
            flat_declared: true,
            hold_opens: false,
            stamp_on_release: false,
            http: false,
            in_flight: None,
        }
    }
}

/// A request the host sent, with the connection number it came on (1, 2, ...).
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub conn: usize,
    pub method: String,
    pub params: Value,
}

/// What a check can tell one connection's task to do.
#[derive(Debug)]
pub(crate) enum Command {
    /// Send `tools/hints` with exactly this rev.
    Hints { rev: u64, body: Value },
    /// Send a `push/event` with this `eventId` carrying hints with exactly this rev.
    Push {
        rev: u64,
        event_id: String,
        body: Value,
    },
    /// Send a notification as it is.
    Notify { method: &'static str, params: Value },
    /// Send the held `toolsets/open` answers now, even to requests the host cancelled.
    Release,
    /// Close the connection.
    Close,
}

/// The scripted server: its URL, its world, what the host sent, and its connections.
pub(crate) struct ScriptedServer {
    pub url: String,
    pub world: Arc<Mutex<World>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    revs: Arc<Mutex<Vec<u64>>>,
    conns: mpsc::UnboundedReceiver<mpsc::UnboundedSender<Command>>,
    current: Option<mpsc::UnboundedSender<Command>>,
    accepted: usize,
}

impl ScriptedServer {
    /// Binds `127.0.0.1:0` and starts accepting connections: WebSocket, or Streamable HTTP at
    /// `/mcp` when the world says so.
    pub async fn start(world: World, transcript: &Transcript) -> Result<ScriptedServer, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot bind a local port: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("no local address: {e}"))?;
        let http = world.http;
        let world = Arc::new(Mutex::new(world));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let revs = Arc::new(Mutex::new(Vec::new()));
        let (conn_tx, conns) = mpsc::unbounded_channel();
        let (w, s, r, t) = (
            world.clone(),
            seen.clone(),
            revs.clone(),
            transcript.clone(),
        );
        let (transports_tx, mut transports) = mpsc::unbounded_channel::<Transport>();
        if http {
            let (router, mut sessions) = mcpl_rpc::transport::http::router(
                "/mcp",
                mcpl_rpc::transport::http::HttpServerConfig::default(),
            );
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            });
            let tx = transports_tx.clone();
            tokio::spawn(async move {
                while let Some(session) = sessions.recv().await {
                    if tx.send(session.transport).is_err() {
                        break;
                    }
                }
            });
        } else {
            let tx = transports_tx.clone();
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    mcpl_rpc::transport::tcp::ready_tcp(&stream);
                    let Ok((transport, _)) =
                        mcpl_rpc::transport::ws::accept(stream, Limits::default()).await
                    else {
                        continue;
                    };
                    if tx.send(transport).is_err() {
                        break;
                    }
                }
            });
        }
        drop(transports_tx);
        tokio::spawn(async move {
            let mut n = 0;
            while let Some(transport) = transports.recv().await {
                n += 1;
                let (tx, rx) = mpsc::unbounded_channel();
                if conn_tx.send(tx).is_err() {
                    break;
                }
                tokio::spawn(serve(
                    transport,
                    n,
                    w.clone(),
                    s.clone(),
                    r.clone(),
                    t.clone(),
                    rx,
                ));
            }
        });
        let url = if http {
            format!("http://{addr}/mcp")
        } else {
            format!("ws://{addr}")
        };
        Ok(ScriptedServer {
            url,
            world,
            seen,
            revs,
            conns,
            current: None,
            accepted: 0,
        })
    }

    /// Waits up to `dur` for the host's next connection; returns its number.
    pub async fn next_conn(&mut self, dur: Duration) -> Option<usize> {
        let tx = tokio::time::timeout(dur, self.conns.recv()).await.ok()??;
        self.current = Some(tx);
        self.accepted += 1;
        Some(self.accepted)
    }

    /// Tells the current connection's task to do something.
    pub fn command(&self, command: Command) {
        if let Some(tx) = &self.current {
            let _ = tx.send(command);
        }
    }

    /// The last rev this server used on connection `conn` (1-based).
    pub fn rev(&self, conn: usize) -> u64 {
        self.revs
            .lock()
            .map(|r| r.get(conn - 1).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Every request the host sent so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits up to `dur` until the host has sent `method` on `conn` at least `count` times.
    pub async fn wait_count(&self, conn: usize, method: &str, count: usize, dur: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + dur;
        loop {
            if self.count(conn, method) >= count {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// How many times the host sent `method` on `conn`.
    pub fn count(&self, conn: usize, method: &str) -> usize {
        self.seen()
            .iter()
            .filter(|s| s.conn == conn && s.method == method)
            .count()
    }

    /// The requests with `method` on any connection.
    pub fn requests(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == method)
            .collect()
    }
}

fn tool(name: &str, meta: Value) -> Value {
    let mut t = json!({"name": name, "description": format!("Scripted tool {name}."),
        "inputSchema": {"type": "object"}});
    if meta.as_object().is_some_and(|m| !m.is_empty()) {
        t["_meta"] = meta;
    }
    t
}

fn tools_of(world: &World) -> Vec<Value> {
    let any = !world.instances.is_empty();
    if !world.tool_hints {
        return [ECHO, FLAT_TOOL, REVEAL]
            .iter()
            .map(|n| tool(n, json!({})))
            .collect();
    }
    vec![
        tool(
            ECHO,
            json!({"mcpl/toolset": INSTANCED, "mcpl/visible": any, "mcpl/presence": "static"}),
        ),
        tool(
            FINISH,
            json!({"mcpl/toolset": INSTANCED, "mcpl/visible": any}),
        ),
        tool(
            FLAT_TOOL,
            json!({"mcpl/toolset": FLAT, "mcpl/visible": world.flat_open}),
        ),
        tool(GROUPED, json!({"mcpl/toolset": GROUP})),
        tool(
            REVEALED,
            json!({"mcpl/presence": "dynamic", "mcpl/visible": world.revealed}),
        ),
        tool(REVEAL, json!({})),
    ]
}

fn instance_entries(instance: &str, visible: bool, def: Option<&Value>) -> Vec<Value> {
    let mut echo = json!({"name": ECHO, "instance": instance, "visible": visible});
    if let (true, Some(d)) = (visible, def) {
        echo["definition"] = d.clone();
    }
    vec![
        echo,
        json!({"name": FINISH, "instance": instance, "visible": visible}),
    ]
}

fn statement(world: &World) -> Value {
    let mut tools = Vec::new();
    for i in &world.instances {
        tools.extend(instance_entries(i, true, world.echo_definition.as_ref()));
    }
    if world.flat_open {
        tools.push(json!({"name": FLAT_TOOL, "visible": true}));
    }
    tools.push(json!({"name": GROUPED, "visible": true}));
    if world.revealed {
        tools.push(json!({"name": REVEALED, "visible": true}));
    }
    json!({"tools": tools})
}

fn manifest(world: &World) -> Value {
    let mut m = json!({"version": "0.5", "pushEvents": true,
        "featureSets": {"cf": {"description": "conformance suite", "uses": ["pushEvents"]}}});
    if world.tool_hints {
        m["toolHints"] = json!(true);
        m["toolsets"] = json!({
            INSTANCED: {"title": "Game", "default": "closed", "instances": true}});
        if world.flat_declared {
            m["toolsets"][FLAT] = json!({"title": "Flat", "default": "closed"});
        }
    }
    m
}

fn record(t: &Transcript, conn: usize, from: Direction, message: Message) {
    let value = serde_json::from_str(&message.to_json()).unwrap_or(Value::Null);
    t.record(&format!("S{conn}"), from, value);
}

async fn serve(
    transport: Transport,
    n: usize,
    world: Arc<Mutex<World>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    revs: Arc<Mutex<Vec<u64>>>,
    t: Transcript,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let (peer, mut events) = Peer::start(transport, PeerConfig::default());
    let mut rev = 0u64;
    let mut held: Vec<Response> = Vec::new();
    let set_rev = |rev: u64| {
        if let Ok(mut r) = revs.lock() {
            while r.len() < n {
                r.push(0);
            }
            r[n - 1] = rev;
        }
    };
    loop {
        tokio::select! {
            command = commands.recv() => match command {
                None | Some(Command::Close) => {
                    peer.close().await;
                    break;
                }
                Some(Command::Hints { rev: r, mut body }) => {
                    body["rev"] = json!(r);
                    rev = rev.max(r);
                    set_rev(rev);
                    record(&t, n, Direction::Suite, Message::Notification(Notification::new(methods::TOOLS_HINTS, Some(body.clone()))));
                    let _ = peer.notify_value(methods::TOOLS_HINTS, Some(body));
                }
                Some(Command::Release) => {
                    let restamp = world.lock().map(|w| w.stamp_on_release).unwrap_or(false);
                    for mut response in held.drain(..) {
                        if let (true, Ok(v)) = (restamp, &mut response.outcome)
                            && let Some(h) = v.pointer_mut("/_meta/mcpl~1hints")
                        {
                            rev += 1;
                            h["rev"] = json!(rev);
                            set_rev(rev);
                        }
                        record(&t, n, Direction::Suite, Message::Response(response.clone()));
                        let _ = peer.send(Message::Response(response));
                    }
                }
                Some(Command::Notify { method, params }) => {
                    record(&t, n, Direction::Suite, Message::Notification(Notification::new(method, Some(params.clone()))));
                    let _ = peer.notify_value(method, Some(params));
                }
                Some(Command::Push { rev: r, event_id, mut body }) => {
                    body["rev"] = json!(r);
                    rev = rev.max(r);
                    set_rev(rev);
                    let params = json!({"featureSet": "cf", "eventId": event_id,
                        "timestamp": "2026-01-01T00:00:00Z",
                        "payload": {"content": [{"type": "text", "text": "something happened"}]},
                        "hints": body});
                    if let Ok(pending) = peer.start_request(methods::PUSH_EVENT, Some(params.clone()), RequestOptions::default()) {
                        record(&t, n, Direction::Suite, Message::Request(Request::new(pending.id().clone(), methods::PUSH_EVENT, Some(params))));
                        let t = t.clone();
                        tokio::spawn(async move {
                            let id = pending.id().clone();
                            let answer = pending.wait().await;
                            let response = match answer {
                                Ok(a) => Response::ok(id, a.value),
                                Err(mcpl_rpc::RpcError::Remote { error, .. }) => Response::error(Some(id), *error),
                                Err(e) => Response::error(Some(id), ErrorObject::new(ErrorCode::InternalError, e.to_string())),
                            };
                            record(&t, n, Direction::Peer, Message::Response(response));
                        });
                    }
                }
            },
            event = events.recv() => match event {
                None | Some(Event::Closed { .. }) => break,
                Some(Event::Request { request, responder, .. }) => {
                    record(&t, n, Direction::Peer, Message::Request(request.clone()));
                    let params = request.params.clone().unwrap_or(json!({}));
                    if let Ok(mut s) = seen.lock() {
                        s.push(Seen { conn: n, method: request.method.clone(), params: params.clone() });
                    }
                    let in_flight = if request.method == methods::TOOLSETS_LIST {
                        world.lock().ok().and_then(|mut w| w.in_flight.take())
                    } else {
                        None
                    };
                    if let Some(mut body) = in_flight {
                        // A change in flight: sent before the list's answer, on its own rev.
                        rev += 1;
                        body["rev"] = json!(rev);
                        record(&t, n, Direction::Suite, Message::Notification(Notification::new(methods::TOOLS_HINTS, Some(body.clone()))));
                        let _ = peer.notify_value(methods::TOOLS_HINTS, Some(body));
                    }
                    let outcome = {
                        let mut w = match world.lock() {
                            Ok(w) => w,
                            Err(p) => p.into_inner(),
                        };
                        answer(&request.method, &params, &mut w, &mut rev)
                    };
                    let id = request.id.clone();
                    let (hold, restamp) = world
                        .lock()
                        .map(|w| (w.hold_opens, w.stamp_on_release))
                        .unwrap_or((false, false));
                    let hold = hold && request.method == methods::TOOLSETS_OPEN;
                    if let (true, true, Some(Ok(v))) = (hold, restamp, &outcome)
                        && v.pointer("/_meta/mcpl~1hints").is_some()
                    {
                        // The rev is given at release instead.
                        rev -= 1;
                    }
                    set_rev(rev);
                    if let (true, Some(Ok(v))) = (hold, &outcome) {
                        // Answered later, whatever the host does meanwhile (§6.1: late results).
                        held.push(Response::ok(responder.disarm(), v.clone()));
                        continue;
                    }
                    match outcome {
                        Some(Ok(v)) => {
                            record(&t, n, Direction::Suite, Message::Response(Response::ok(id, v.clone())));
                            let _ = responder.respond(v);
                        }
                        Some(Err(e)) => {
                            record(&t, n, Direction::Suite, Message::Response(Response::error(Some(id), e.clone())));
                            let _ = responder.error(e);
                        }
                        None => {
                            record(&t, n, Direction::Suite, Message::Response(Response::method_not_found(id, &request.method)));
                            let _ = responder.method_not_found();
                        }
                    }
                }
                Some(Event::Notification { notification, .. }) => {
                    record(&t, n, Direction::Peer, Message::Notification(notification));
                }
                Some(_) => {}
            },
        }
    }
}

/// Answers one host request from the world; `None` for an unknown method.
fn answer(
    method: &str,
    p: &Value,
    w: &mut World,
    rev: &mut u64,
) -> Option<Result<Value, ErrorObject>> {
    let mut next = || {
        *rev += 1;
        *rev
    };
    let invalid = |m: String| Err(ErrorObject::new(ErrorCode::InvalidParams, m));
    Some(match method {
        methods::INITIALIZE => Ok(json!({
            "protocolVersion": p.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": {"tools": {"listChanged": true}, "experimental": {"mcpl": manifest(w)}},
            "serverInfo": {"name": "mcpl-conformance-scripted-server", "version": env!("CARGO_PKG_VERSION")}})),
        methods::FEATURE_SETS_UPDATE => Ok(json!({"accepted": true})),
        methods::MANIFEST => Ok(manifest(w)),
        methods::PING => Ok(json!({})),
        methods::TOOLS_LIST => {
            if w.fail_tools_list > 0 {
                w.fail_tools_list -= 1;
                return Some(Err(ErrorObject::new(
                    ErrorCode::InternalError,
                    "tools/list failed (scripted)",
                )));
            }
            let tools = tools_of(w);
            let start = p
                .get("cursor")
                .and_then(Value::as_str)
                .and_then(|c| c.parse::<usize>().ok())
                .unwrap_or(0);
            let size = w.page_size.unwrap_or(tools.len().max(1));
            let page: Vec<Value> = tools.iter().skip(start).take(size).cloned().collect();
            let mut r = json!({"tools": page});
            if start + size < tools.len() {
                r["nextCursor"] = json!((start + size).to_string());
            }
            if w.tool_hints {
                r["_meta"] = json!({"mcpl/rev": *rev});
            }
            Ok(r)
        }
        methods::TOOLSETS_LIST if w.tool_hints => {
            let open: Vec<Value> = w
                .instances
                .iter()
                .map(|i| json!({"toolset": INSTANCED, "instance": i}))
                .chain(w.flat_open.then(|| json!({"toolset": FLAT})))
                .collect();
            let mut h = statement(w);
            h["rev"] = json!(next());
            let mut r = json!({"open": open, "_meta": {"mcpl/hints": h}});
            if !w.ended.is_empty() {
                r["ended"] = json!(w.ended);
            }
            Ok(r)
        }
        methods::TOOLSETS_OPEN if w.tool_hints => {
            let toolset = p.get("toolset").and_then(Value::as_str).unwrap_or("");
            match toolset {
                INSTANCED => {
                    let name = match p.get("instance").and_then(Value::as_str) {
                        Some(i) => i.to_owned(),
                        None => {
                            w.next_auto += 1;
                            format!("srv-{}", w.next_auto - 1)
                        }
                    };
                    if w.instances.contains(&name) {
                        return Some(Ok(json!({"instance": name, "adopted": true})));
                    }
                    w.instances.push(name.clone());
                    let h = json!({"rev": next(),
                        "toolsets": [{"toolset": INSTANCED, "instance": name, "state": "open"}],
                        "tools": instance_entries(&name, true, w.echo_definition.as_ref())});
                    Ok(
                        json!({"instance": name, "content": [{"type": "text", "text": "opened"}],
                              "_meta": {"mcpl/hints": h}}),
                    )
                }
                FLAT => {
                    if w.flat_open {
                        return Some(Ok(json!({"adopted": true})));
                    }
                    w.flat_open = true;
                    let h = json!({"rev": next(), "toolsets": [{"toolset": FLAT, "state": "open"}],
                        "tools": [{"name": FLAT_TOOL, "visible": true}]});
                    Ok(
                        json!({"content": [{"type": "text", "text": "opened"}], "_meta": {"mcpl/hints": h}}),
                    )
                }
                other => invalid(format!("unknown toolset `{other}`")),
            }
        }
        methods::TOOLSETS_CLOSE if w.tool_hints => {
            let instance = p
                .get("instance")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let h = if w.instances.contains(&instance) {
                w.instances.retain(|i| *i != instance);
                Some(json!({"rev": next(),
                    "toolsets": [{"toolset": INSTANCED, "instance": instance, "state": "closed"}],
                    "tools": instance_entries(&instance, false, None)}))
            } else if p.get("toolset") == Some(&json!(FLAT)) && w.flat_open {
                w.flat_open = false;
                Some(
                    json!({"rev": next(), "toolsets": [{"toolset": FLAT, "state": "closed"}],
                    "tools": [{"name": FLAT_TOOL, "visible": false}]}),
                )
            } else {
                None
            };
            let mut r = json!({"content": [{"type": "text", "text": "closed"}]});
            if let Some(h) = h {
                r["_meta"] = json!({"mcpl/hints": h});
            }
            Ok(r)
        }
        methods::TOOLS_CALL => {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            Ok(json!({"content": [{"type": "text", "text": format!("called {name}")}]}))
        }
        _ => return None,
    })
}
