//! The scripted-server fixture: an in-process RFC-014 server model and a `Pair` harness that
//! wires it to a host controller with a virtual clock.
//!
//! Deterministic by construction: requests are answered when the host's `Send` is drained,
//! unless the test holds that method; nothing is delivered until the test (or `run`) delivers
//! it, so a test can drop, reorder, duplicate or delay any message, or feed a raw line.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mcpl_host::controller::{Change, ChangeItem, Effect, Pending};
use mcpl_host::{Controller, ControllerConfig, ServerName, Transport};
use mcpl_protocol::jsonrpc::{
    ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response,
};
use serde_json::{Value, json};

/// Key of an open toolset or instance on the server.
pub type Key = (String, Option<String>);

/// One open toolset or instance, as the server holds it for the principal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SInst {
    pub title: String,
    pub vis: BTreeMap<String, bool>,
    pub defs: BTreeMap<String, Value>,
}

/// Per-connection server state: the rev counter and unsolicited messages not yet sent.
#[derive(Debug, Default)]
pub struct SConn {
    pub rev: u64,
    pub outbox: VecDeque<Message>,
}

/// A scripted RFC-014 server with one principal and any number of connections.
#[derive(Debug)]
pub struct Server {
    /// The listed tools (with their `_meta`), in list order.
    pub tools: Vec<Value>,
    /// `experimental.mcpl` of the manifest.
    pub manifest: Value,
    /// Open toolsets and instances of the principal.
    pub open: BTreeMap<Key, SInst>,
    /// Visibility of dynamic tools outside declared toolsets.
    pub loose: BTreeMap<String, bool>,
    /// Ended records still reported.
    pub ended: Vec<Value>,
    pub next_ended: u64,
    pub conns: Vec<SConn>,
    /// Page size for tools/list (0: one page).
    pub page_size: usize,
    /// Send something else's consequences as `push/event` (else `tools/hints`).
    pub push: bool,
    pub next_event: u64,
    /// Hints the next `tools/call` result carries (besides its text).
    pub call_hints: Option<Value>,
    /// The result every `tools/call` answers with (its hints added), while set; else the text
    /// `ok`.
    pub call_result: Option<Value>,
    /// Answer every `tools/list` with this error instead, while set.
    pub fail_list: bool,
}

pub fn tool(name: &str, meta: Value) -> Value {
    json!({"name": name, "description": format!("{name} does a thing. More detail."),
           "inputSchema": {"type": "object"}, "_meta": meta})
}

/// The arcade-like world: `game` (instanced), `cards` (declared, no instances), an undeclared
/// group `lab`, a toolset-less dynamic tool `hint` and a static tool `challenge`.
pub fn arcade() -> Server {
    let play = json!({"name": "play", "description": "Play a move. Only legal moves.",
        "inputSchema": {"type": "object", "required": ["move"],
                        "properties": {"move": {"type": "string"}}},
        "_meta": {"mcpl/toolset": "game", "mcpl/visible": false}});
    Server {
        tools: vec![
            tool("challenge", json!({})),
            play,
            tool(
                "pass",
                json!({"mcpl/toolset": "game", "mcpl/visible": false}),
            ),
            tool(
                "board",
                json!({"mcpl/toolset": "game", "mcpl/visible": false}),
            ),
            tool(
                "draw",
                json!({"mcpl/toolset": "cards", "mcpl/visible": false}),
            ),
            tool("probe", json!({"mcpl/toolset": "lab"})),
            tool(
                "hint",
                json!({"mcpl/presence": "dynamic", "mcpl/visible": false}),
            ),
        ],
        manifest: json!({"version": "0.5", "pushEvents": true, "toolHints": true,
            "toolsets": {
                "game": {"title": "Go", "summary": "A game of Go", "default": "closed", "instances": true},
                "cards": {"title": "Cards", "default": "closed"}}}),
        open: BTreeMap::new(),
        loose: BTreeMap::new(),
        ended: Vec::new(),
        next_ended: 1,
        conns: Vec::new(),
        page_size: 0,
        push: false,
        next_event: 1,
        call_hints: None,
        call_result: None,
        fail_list: false,
    }
}

/// A server that advertises no toolHints.
pub fn server_without_tool_hints() -> Server {
    let mut s = arcade();
    s.manifest = json!({"version": "0.5", "pushEvents": true});
    s
}

impl Server {
    pub fn toolset_of(&self, name: &str) -> Option<String> {
        self.tools
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["_meta"]["mcpl/toolset"].as_str())
            .map(str::to_owned)
    }

    pub fn declared(&self, ts: &str) -> bool {
        self.manifest["toolsets"].get(ts).is_some()
    }

    pub fn instanced(&self, ts: &str) -> bool {
        self.manifest["toolsets"][ts]["instances"] == true
    }

    fn tools_of(&self, ts: &str) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| t["_meta"]["mcpl/toolset"] == ts)
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    pub fn add_conn(&mut self) -> usize {
        self.conns.push(SConn::default());
        self.conns.len() - 1
    }

    fn next_rev(&mut self, conn: usize) -> u64 {
        self.conns[conn].rev += 1;
        self.conns[conn].rev
    }

    /// The per-instance tool entries describing `key` (every tool, visible or not).
    fn entries(&self, key: &Key) -> Vec<Value> {
        let Some(inst) = self.open.get(key) else {
            return vec![];
        };
        inst.vis
            .iter()
            .map(|(t, v)| {
                let mut e = json!({"name": t, "visible": v});
                if let Some(i) = &key.1 {
                    e["instance"] = json!(i);
                }
                if let Some(d) = inst.defs.get(t) {
                    e["definition"] = d.clone();
                }
                e
            })
            .collect()
    }

    fn key_entry(key: &Key, state: &str) -> Value {
        let mut e = json!({"toolset": key.0, "state": state});
        if let Some(i) = &key.1 {
            e["instance"] = json!(i);
        }
        e
    }

    /// Sends `body` as hints to every connection except `skip`, each on its own rev (§5.6).
    pub fn fan_out(&mut self, skip: Option<usize>, body: Value) {
        for c in 0..self.conns.len() {
            if Some(c) == skip {
                continue;
            }
            let msg = self.hinted(c, body.clone());
            self.conns[c].outbox.push_back(msg);
        }
    }

    /// A hinted message (push or tools/hints) for `conn` with the next rev.
    pub fn hinted(&mut self, conn: usize, body: Value) -> Message {
        let rev = self.next_rev(conn);
        let mut hints = body;
        hints["rev"] = json!(rev);
        if self.push {
            let id = self.next_event;
            self.next_event += 1;
            Message::Request(Request::new(
                RequestId::String(format!("ev{id}")),
                "push/event",
                Some(
                    json!({"eventId": format!("e{id}"), "text": "something happened", "hints": hints}),
                ),
            ))
        } else {
            Message::Notification(Notification::new("tools/hints", Some(hints)))
        }
    }

    /// Something else's consequence: a tool's visibility in one place.
    pub fn set_visible(&mut self, tool: &str, instance: Option<&str>, visible: bool) {
        let mut e = json!({"name": tool, "visible": visible});
        match self.toolset_of(tool) {
            Some(ts) if self.declared(&ts) => {
                let key = (ts, instance.map(str::to_owned));
                let Some(inst) = self.open.get_mut(&key) else {
                    return;
                };
                inst.vis.insert(tool.to_owned(), visible);
                if let Some(i) = instance {
                    e["instance"] = json!(i);
                }
            }
            _ => {
                self.loose.insert(tool.to_owned(), visible);
            }
        }
        self.fan_out(None, json!({"tools": [e]}));
    }

    /// Something else's consequence: a per-instance definition.
    pub fn redefine(&mut self, tool: &str, instance: Option<&str>, def: Value) {
        let ts = self.toolset_of(tool).unwrap_or_default();
        let key = (ts, instance.map(str::to_owned));
        let Some(inst) = self.open.get_mut(&key) else {
            return;
        };
        inst.defs.insert(tool.to_owned(), def.clone());
        let vis = inst.vis.get(tool).copied().unwrap_or(false);
        let mut e = json!({"name": tool, "visible": vis, "definition": def});
        if let Some(i) = instance {
            e["instance"] = json!(i);
        }
        self.fan_out(None, json!({"tools": [e]}));
    }

    /// Something else ends an instance (a game finished): an ended record and hints.
    pub fn end(&mut self, key: &Key, reason: &str) {
        if self.open.remove(key).is_none() {
            return;
        }
        let id = self.record_end(key, Some(reason));
        let mut e = Self::key_entry(key, "closed");
        e["ended"] = json!(id);
        e["reason"] = json!(reason);
        self.fan_out(None, json!({"toolsets": [e]}));
    }

    fn record_end(&mut self, key: &Key, reason: Option<&str>) -> String {
        let id = format!("end-{}", self.next_ended);
        self.next_ended += 1;
        let mut r = json!({"id": id, "toolset": key.0});
        if let Some(i) = &key.1 {
            r["instance"] = json!(i);
        }
        if let Some(reason) = reason {
            r["reason"] = json!(reason);
        }
        self.ended.push(r);
        id
    }

    /// The coarse listing (§4.1) with the connection's current rev.
    pub fn list_page(&self, conn: usize, cursor: Option<&str>) -> Value {
        let mut tools: Vec<Value> = self.tools.clone();
        for t in &mut tools {
            let name = t["name"].as_str().unwrap_or_default().to_owned();
            if let Some(ts) = t["_meta"]["mcpl/toolset"].as_str().map(str::to_owned) {
                if self.declared(&ts) {
                    let any = self
                        .open
                        .iter()
                        .any(|((s, _), i)| *s == ts && i.vis.get(&name) == Some(&true));
                    t["_meta"]["mcpl/visible"] = json!(any);
                } else if let Some(v) = self.loose.get(&name) {
                    t["_meta"]["mcpl/visible"] = json!(v);
                }
            } else if let Some(v) = self.loose.get(&name) {
                t["_meta"]["mcpl/visible"] = json!(v);
            }
        }
        let rev = json!({"mcpl/rev": self.conns[conn].rev});
        if self.page_size == 0 {
            return json!({"tools": tools, "_meta": rev});
        }
        let start: usize = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        let end = (start + self.page_size).min(tools.len());
        let mut page = json!({"tools": tools[start..end], "_meta": rev});
        if end < tools.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        page
    }

    /// A full statement for `conn`, taking the next rev (§5.3).
    pub fn statement(&mut self, conn: usize) -> Value {
        let rev = self.next_rev(conn);
        let mut open = Vec::new();
        let mut tools = Vec::new();
        let keys: Vec<Key> = self.open.keys().cloned().collect();
        for key in &keys {
            let inst = &self.open[key];
            let mut e = json!({"toolset": key.0, "title": inst.title});
            if let Some(i) = &key.1 {
                e["instance"] = json!(i);
            }
            open.push(e);
            tools.extend(
                self.entries(key)
                    .into_iter()
                    .filter(|e| e["visible"] == true),
            );
        }
        // Every visible dynamic tool outside declared toolsets (§5.3).
        for t in &self.tools {
            let name = t["name"].as_str().unwrap_or_default();
            let meta = &t["_meta"];
            let dynamic = meta["mcpl/presence"] == "dynamic" || meta["mcpl/toolset"].is_string();
            let declared = meta["mcpl/toolset"]
                .as_str()
                .is_some_and(|ts| self.declared(ts));
            if !dynamic || declared {
                continue;
            }
            let listed = meta["mcpl/visible"] != false;
            if *self.loose.get(name).unwrap_or(&listed) {
                tools.push(json!({"name": name, "visible": true}));
            }
        }
        json!({"open": open, "ended": self.ended,
               "_meta": {"mcpl/hints": {"rev": rev, "tools": tools}}})
    }

    /// Answers a host request on `conn`.
    pub fn answer(&mut self, conn: usize, req: &Request) -> Response {
        let p = req.params.clone().unwrap_or(json!({}));
        let id = req.id.clone();
        let bad = |m: &str| {
            Response::error(
                Some(id.clone()),
                ErrorObject::new(ErrorCode::InvalidParams, m),
            )
        };
        match req.method.as_str() {
            "tools/list" if self.fail_list => Response::error(
                Some(id),
                ErrorObject::new(ErrorCode::InternalError, "list failed"),
            ),
            "tools/list" => Response::ok(id, self.list_page(conn, p["cursor"].as_str())),
            "toolsets/list" => Response::ok(id, self.statement(conn)),
            "toolsets/open" => {
                let ts = p["toolset"].as_str().unwrap_or_default().to_owned();
                if !self.declared(&ts) {
                    return bad("unknown toolset");
                }
                let inst = p["instance"].as_str().map(str::to_owned);
                let inst = if self.instanced(&ts) {
                    Some(inst.unwrap_or_else(|| format!("i{}", self.next_ended + 100)))
                } else {
                    None
                };
                let key = (ts.clone(), inst.clone());
                if self.open.contains_key(&key) {
                    let mut r = json!({"adopted": true});
                    if let Some(i) = &inst {
                        r["instance"] = json!(i);
                    }
                    return Response::ok(id, r);
                }
                let title = format!("{ts} {}", inst.clone().unwrap_or_default());
                let vis = self.tools_of(&ts).into_iter().map(|t| (t, true)).collect();
                self.open.insert(
                    key.clone(),
                    SInst {
                        title: title.clone(),
                        vis,
                        defs: BTreeMap::new(),
                    },
                );
                let mut ts_entry = Self::key_entry(&key, "open");
                ts_entry["title"] = json!(title);
                let body = json!({"toolsets": [ts_entry], "tools": self.entries(&key)});
                self.fan_out(Some(conn), body.clone());
                let rev = self.next_rev(conn);
                let mut hints = body;
                hints["rev"] = json!(rev);
                let mut r = json!({"title": title, "content": [{"type": "text", "text": "opened"}],
                                   "_meta": {"mcpl/hints": hints}});
                if let Some(i) = &inst {
                    r["instance"] = json!(i);
                }
                Response::ok(id, r)
            }
            "toolsets/close" => {
                let ts = p["toolset"].as_str().unwrap_or_default().to_owned();
                let key = (ts, p["instance"].as_str().map(str::to_owned));
                if self.open.remove(&key).is_none() {
                    return Response::ok(
                        id,
                        json!({"content": [{"type": "text", "text": "not open"}]}),
                    );
                }
                let eid = self.record_end(&key, None);
                let mut e = Self::key_entry(&key, "closed");
                e["ended"] = json!(eid);
                self.fan_out(Some(conn), json!({"toolsets": [e.clone()]}));
                let rev = self.next_rev(conn);
                Response::ok(
                    id,
                    json!({"content": [{"type": "text", "text": "closed"}],
                    "_meta": {"mcpl/hints": {"rev": rev, "toolsets": [e]}}}),
                )
            }
            "tools/call" => {
                let mut r = self
                    .call_result
                    .clone()
                    .unwrap_or_else(|| json!({"content": [{"type": "text", "text": "ok"}]}));
                if let Some(mut h) = self.call_hints.take() {
                    h["rev"] = json!(self.next_rev(conn));
                    r["_meta"] = json!({"mcpl/hints": h});
                }
                Response::ok(id, r)
            }
            "mcpl/manifest" => Response::ok(id, self.manifest.clone()),
            _ => Response::method_not_found(id, &req.method),
        }
    }
}

/// One host controller wired to one connection of a shared scripted server.
pub struct Pair {
    pub host: Controller,
    pub server: Rc<RefCell<Server>>,
    pub conn: usize,
    pub start: Instant,
    pub now: Instant,
    /// Messages on their way to the host, in wire order.
    pub to_host: VecDeque<Message>,
    /// Methods whose requests are held, not answered, until released.
    pub hold: BTreeSet<String>,
    pub held: Vec<Request>,
    /// Every request the host sent, in order.
    pub sent: Vec<Request>,
    /// Every response the host sent (replies to pushes).
    pub replies: Vec<Response>,
    /// Every effect other than `Send`, in order.
    pub effects: Vec<Effect>,
    pub transcript: Vec<String>,
    /// Whether the host grants this server `pushEvents` (what the presenter is told).
    pub granted: bool,
    /// Effects not yet forwarded to a presenter (kept apart from `effects`, which tests clear).
    pub unforwarded: Vec<Effect>,
}

pub fn config(server: &Server) -> ControllerConfig {
    let mut cfg = ControllerConfig::new(sn("arcade"), "alice");
    cfg.manifest = Some(server.manifest.clone());
    cfg
}

impl Pair {
    /// Connects a host to `server` and runs the connect reads.
    pub fn new(server: Server) -> Pair {
        let cfg = config(&server);
        Pair::with_config(server, cfg)
    }

    pub fn with_config(server: Server, cfg: ControllerConfig) -> Pair {
        Pair::attach(Rc::new(RefCell::new(server)), cfg)
    }

    pub fn http(server: Server) -> Pair {
        let mut cfg = config(&server);
        cfg.transport = Transport::StreamableHttp;
        Pair::with_config(server, cfg)
    }

    /// Opens the instance `inst` of the arcade's `game` and runs until nothing moves.
    pub fn open_game(&mut self, inst: &str) {
        let req = mcpl_host::controller::OpenRequest {
            toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
            instance: Some(inst.parse().unwrap()),
            options: None,
        };
        self.host.open(self.now, req).expect("open");
        self.run();
    }

    /// A Streamable HTTP connection in a requested recovery run whose `tools/list` and
    /// `toolsets/list` are held (answer them with `answer_held` or `release`).
    pub fn http_rereading(server: Server) -> Pair {
        let mut p = Pair::http(server);
        p.clear();
        p.hold.insert("tools/list".into());
        p.hold.insert("toolsets/list".into());
        p.host.resync(p.now);
        p.flush();
        p
    }

    /// A further connection of the same principal to the same server.
    pub fn attach(server: Rc<RefCell<Server>>, cfg: ControllerConfig) -> Pair {
        let granted = cfg.push_events;
        let start = Instant::now();
        let conn = server.borrow_mut().add_conn();
        let host = Controller::new(cfg, start);
        let mut p = Pair {
            host,
            server,
            conn,
            start,
            now: start,
            to_host: VecDeque::new(),
            hold: BTreeSet::new(),
            held: Vec::new(),
            sent: Vec::new(),
            replies: Vec::new(),
            effects: Vec::new(),
            transcript: Vec::new(),
            granted,
            unforwarded: Vec::new(),
        };
        p.run();
        p
    }

    fn stamp(&self) -> u128 {
        self.now.duration_since(self.start).as_millis()
    }

    /// Drains the host's effects: requests are answered (or held), others are recorded.
    pub fn flush(&mut self) {
        while let Some(e) = self.host.poll_effect() {
            match e {
                Effect::Send(Message::Request(r)) => {
                    self.transcript.push(format!(
                        "+{}ms host> {} {}",
                        self.stamp(),
                        r.method,
                        r.params.clone().unwrap_or_default()
                    ));
                    self.sent.push(r.clone());
                    if self.hold.contains(&r.method) {
                        self.held.push(r);
                    } else {
                        let resp = self.server.borrow_mut().answer(self.conn, &r);
                        self.to_host.push_back(Message::Response(resp));
                    }
                }
                Effect::Send(Message::Response(r)) => self.replies.push(r),
                Effect::Send(_) => {}
                other => {
                    self.unforwarded.push(other.clone());
                    self.effects.push(other);
                }
            }
        }
    }

    /// Moves the server's unsolicited messages for this connection onto the wire.
    pub fn pull(&mut self) {
        let mut s = self.server.borrow_mut();
        while let Some(m) = s.conns[self.conn].outbox.pop_front() {
            self.to_host.push_back(m);
        }
    }

    /// Delivers one message to the host now.
    pub fn feed(&mut self, msg: Message) {
        self.transcript
            .push(format!("+{}ms server> {}", self.stamp(), short(&msg)));
        self.host.handle_message(self.now, None, msg);
        self.flush();
    }

    /// Feeds a raw line as the driver would: decoded, or reported as undecodable.
    pub fn raw(&mut self, line: &str) {
        match mcpl_protocol::frame::decode(line.as_bytes(), &Default::default()) {
            Ok(m) => self.feed(m),
            Err(e) => {
                self.host.handle_undecodable(self.now, e.id().cloned());
                self.flush();
            }
        }
    }

    /// Flushes, pulls and delivers until nothing moves.
    pub fn run(&mut self) {
        loop {
            self.flush();
            self.pull();
            let Some(m) = self.to_host.pop_front() else {
                break;
            };
            self.feed(m);
        }
    }

    /// Takes what is on the wire without delivering it (to drop or reorder it).
    pub fn take_wire(&mut self) -> Vec<Message> {
        self.flush();
        self.pull();
        self.to_host.drain(..).collect()
    }

    /// Answers the held requests of `method` and runs.
    pub fn release(&mut self, method: &str) {
        self.hold.remove(method);
        let held: Vec<Request> = std::mem::take(&mut self.held);
        for r in held {
            if r.method == method {
                let resp = self.server.borrow_mut().answer(self.conn, &r);
                self.to_host.push_back(Message::Response(resp));
            } else {
                self.held.push(r);
            }
        }
        self.run();
    }

    /// Answers held requests of `method` but returns the answers instead of delivering them.
    pub fn answer_held(&mut self, method: &str) -> Vec<Message> {
        let held: Vec<Request> = std::mem::take(&mut self.held);
        let mut out = Vec::new();
        for r in held {
            if r.method == method {
                out.push(Message::Response(
                    self.server.borrow_mut().answer(self.conn, &r),
                ));
            } else {
                self.held.push(r);
            }
        }
        out
    }

    /// Moves the virtual clock and fires timers, then runs.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.host.handle_timeout(self.now);
        self.run();
    }

    /// Runs timers until the host has no deadline within `limit`.
    pub fn settle(&mut self, limit: Duration) {
        let end = self.now + limit;
        self.run();
        while let Some(t) = self.host.poll_timeout() {
            if t > end {
                break;
            }
            self.now = self.now.max(t);
            self.host.handle_timeout(self.now);
            self.run();
        }
    }

    pub fn changes(&self) -> Vec<&Change> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Changed(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    pub fn items(&self) -> Vec<&ChangeItem> {
        self.changes()
            .into_iter()
            .flat_map(|c| c.items.iter())
            .collect()
    }

    /// The `Visibility` items among [`items`](Self::items), in order.
    pub fn visibility_items(&self) -> Vec<&ChangeItem> {
        self.items()
            .into_iter()
            .filter(|i| matches!(i, ChangeItem::Visibility { .. }))
            .collect()
    }

    pub fn clear(&mut self) {
        self.effects.clear();
        self.sent.clear();
        self.replies.clear();
    }

    pub fn sent_methods(&self) -> Vec<&str> {
        self.sent.iter().map(|r| r.method.as_str()).collect()
    }

    pub fn recoveries(&self) -> usize {
        self.effects
            .iter()
            .filter(|e| matches!(e, Effect::Recovering(_)))
            .count()
    }

    pub fn answer_of(&self, p: Pending) -> Option<&mcpl_host::controller::Outcome> {
        self.effects.iter().find_map(|e| match e {
            Effect::Answered(a) if a.pending == p => Some(&a.outcome),
            _ => None,
        })
    }

    /// The host's picture of open toolsets and visible tools, comparable with `truth`.
    pub fn picture(&self) -> BTreeMap<Key, BTreeMap<String, (bool, Option<Value>)>> {
        let snap = self.host.snapshot();
        snap.open()
            .iter()
            .map(|(k, inst)| {
                let tools = inst
                    .tools
                    .iter()
                    .filter(|(_, l)| l.visible)
                    .map(|(t, l)| {
                        (
                            t.clone(),
                            (
                                l.visible,
                                l.definition.as_ref().map(|d| d.input_schema.clone()),
                            ),
                        )
                    })
                    .collect();
                // Keyed as the server keys it, for comparison with `truth`.
                let key = (k.0.to_string(), k.1.as_ref().map(ToString::to_string));
                (key, tools)
            })
            .collect()
    }
}

/// The server's picture in the same shape as [`Pair::picture`].
pub fn truth(s: &Server) -> BTreeMap<Key, BTreeMap<String, (bool, Option<Value>)>> {
    s.open
        .iter()
        .map(|(k, inst)| {
            let tools = inst
                .vis
                .iter()
                .filter(|(_, v)| **v)
                .map(|(t, v)| {
                    (
                        t.clone(),
                        (*v, inst.defs.get(t).map(|d| d["inputSchema"].clone())),
                    )
                })
                .collect();
            (k.clone(), tools)
        })
        .collect()
}

pub fn short(m: &Message) -> String {
    match m {
        Message::Request(r) => format!("{} {}", r.method, r.params.clone().unwrap_or_default()),
        Message::Notification(n) => {
            format!("{} {}", n.method, n.params.clone().unwrap_or_default())
        }
        Message::Response(r) => match &r.outcome {
            Ok(v) => format!("result {v}"),
            Err(e) => format!("error {}", e.message),
        },
    }
}

pub fn hints_note(body: Value) -> Message {
    Message::Notification(Notification::new("tools/hints", Some(body)))
}

/// `mcpl/manifestChanged` for the `toolsets` domain, at manifest `revision`.
pub fn toolsets_changed(revision: &str) -> Message {
    Message::Notification(Notification::new(
        "mcpl/manifestChanged",
        Some(json!({"revision": revision, "domains": ["toolsets"]})),
    ))
}

/// `tools/hints` at `rev` with one change: the loose dynamic tool `hint` made `visible`.
pub fn hint_note(rev: u64, visible: bool) -> Message {
    hints_note(json!({"rev": rev, "tools": [{"name": "hint", "visible": visible}]}))
}

pub fn push(event_id: &str, body: Value) -> Message {
    Message::Request(Request::new(
        RequestId::String(format!("p-{event_id}")),
        "push/event",
        Some(json!({"eventId": event_id, "hints": body})),
    ))
}

pub fn ok(id: RequestId, v: Value) -> Message {
    Message::Response(Response::ok(id, v))
}

pub const MS: Duration = Duration::from_millis(1);

use mcpl_host::presenter::{AgentId, Plan, Presenter, PresenterConfig, WindowItem};

/// A whole host: controllers over scripted servers, one presenter and one agent window.
/// It plays the embedder's part as a driver would: forwards effects in order, and runs the
/// model's calls through `plan`, the controllers and `take`/`stored`.
pub struct Host {
    pub pairs: Vec<(String, Pair)>,
    pub pres: Presenter,
    pub agent: AgentId,
    /// Everything stored in the agent's window, in order.
    pub window: Vec<String>,
    /// Tokens of stored rows (the compile, for reminders).
    pub rows: BTreeSet<u64>,
    /// When false, storing fails (turn stopped, storage down).
    pub store_ok: bool,
    /// The inline cap for a result and its change (H84).
    pub cap: Option<usize>,
}

/// An instance name the tests know is in the grammar.
pub fn inst(name: &str) -> mcpl_host::InstanceName {
    mcpl_host::InstanceName::parse(name).expect("a test instance name fits the grammar")
}

/// An open key from names the tests know are in the grammar.
pub fn open_key(toolset: &str, instance: Option<&str>) -> mcpl_host::controller::OpenKey {
    let toolset = mcpl_host::ToolsetName::parse(toolset).expect("a test toolset name fits");
    (toolset, instance.map(inst))
}

/// A server name the tests know is in the grammar.
pub fn sn(name: &str) -> ServerName {
    ServerName::parse(name).expect("a test server name fits the grammar")
}

pub fn named_config(name: &str, s: &Server) -> ControllerConfig {
    let mut cfg = ControllerConfig::new(sn(name), "alice");
    cfg.manifest = Some(s.manifest.clone());
    cfg
}

impl Host {
    pub fn new(servers: Vec<(&str, Server)>) -> Host {
        Host::with(servers, PresenterConfig::default())
    }

    pub fn with(servers: Vec<(&str, Server)>, cfg: PresenterConfig) -> Host {
        let agent = AgentId::new("agent");
        let mut pres = Presenter::new(cfg);
        pres.add_agent(agent.clone());
        let pairs = servers
            .into_iter()
            .map(|(n, s)| {
                let c = named_config(n, &s);
                (n.to_owned(), Pair::with_config(s, c))
            })
            .collect::<Vec<_>>();
        let mut h = Host {
            pairs,
            pres,
            agent,
            window: Vec::new(),
            rows: BTreeSet::new(),
            store_ok: true,
            cap: None,
        };
        h.sync();
        h.pres.rebuild();
        h
    }

    pub fn pair(&mut self, name: &str) -> &mut Pair {
        &mut self
            .pairs
            .iter_mut()
            .find(|(n, _)| n == name)
            .expect("server")
            .1
    }

    /// Forwards every new effect to the presenter in order, then the snapshots.
    pub fn sync(&mut self) {
        for (name, p) in self.pairs.iter_mut() {
            p.run();
            for e in std::mem::take(&mut p.unforwarded).iter() {
                match e {
                    Effect::Changed(c) => self.pres.handle_change(&sn(name), c),
                    Effect::Event(ev) => self.pres.handle_event(&sn(name), ev),
                    Effect::Notice(n) => self.pres.handle_notice(&sn(name), n),
                    _ => {}
                }
            }
            let grant = p.server.borrow().manifest["pushEvents"] == true && p.granted;
            self.pres.update(p.host.snapshot(), grant);
        }
    }

    fn store(&mut self, item: WindowItem) -> bool {
        if self.store_ok {
            self.window.push(item.text);
            self.rows.insert(item.token);
            self.pres.stored(&self.agent, item.token);
            true
        } else {
            self.pres.not_stored(&self.agent, item.token);
            false
        }
    }

    /// Writes every owed notice into the window (stops if storing fails).
    pub fn notices(&mut self) -> Vec<String> {
        self.sync();
        let mut out = Vec::new();
        while let Some(item) = self.pres.poll_window(&self.agent) {
            let text = item.text.clone();
            if !self.store(item) {
                break;
            }
            out.push(text);
        }
        out
    }

    /// The model calls `tool` with `args`; returns the text the model reads (stored).
    pub fn call(&mut self, tool: &str, args: Value) -> String {
        self.sync();
        let plan = match self.pres.plan(tool, args) {
            Ok(p) => p,
            Err(refusal) => return refusal.to_string(),
        };
        let now = self.pairs[0].1.now;
        let (server, sent) = match &plan {
            Plan::Look { servers, query } => {
                let mut unreachable = Vec::new();
                for s in servers.clone() {
                    let p = self.pair(&s);
                    match p.host.refresh(p.now) {
                        Ok(pending) => {
                            p.run();
                            if !matches!(
                                p.answer_of(pending),
                                Some(mcpl_host::controller::Outcome::Result(_))
                            ) {
                                unreachable.push(s.clone());
                            }
                        }
                        Err(_) => unreachable.push(s.clone()),
                    }
                }
                self.sync();
                let item = self.pres.look(&self.agent, query, &unreachable);
                let text = item.text.clone();
                self.store(item);
                return text;
            }
            Plan::OpenGroup { server, group } | Plan::CloseGroup { server, group } => {
                let open = matches!(plan, Plan::OpenGroup { .. });
                let (server, group) = (server.clone(), group.clone());
                let done = self.pair(&server).host.set_group(&group, open);
                self.sync();
                return match done {
                    Ok(()) => self.pres.answer_text(
                        &plan,
                        Ok(&mcpl_host::controller::Outcome::Result(json!({}))),
                    ),
                    Err(e) => self.pres.answer_text(&plan, Err(&e)),
                };
            }
            Plan::Open { server, req } => {
                let s = server.clone();
                (s.clone(), self.pair(&s).host.open(now, req.clone()))
            }
            Plan::Close { server, req } => {
                let s = server.clone();
                (s.clone(), self.pair(&s).host.close(now, req.clone()))
            }
            Plan::Act { server, req } | Plan::Call { server, req } => {
                let s = server.clone();
                (s.clone(), self.pair(&s).host.call(now, req.clone()))
            }
            _ => return String::new(),
        };
        let pending = match sent {
            Ok(p) => p,
            Err(e) => return self.pres.answer_text(&plan, Err(&e)),
        };
        let agent = self.agent.clone();
        self.pres.register_taker(&agent, &server, pending);
        self.sync();
        let outcome = self.pair(&server).answer_of(pending).cloned();
        let Some(outcome) = outcome else {
            // Still out: the caller stops waiting (a test holds it); release the taker.
            self.pres.release(&agent, &server, pending);
            return "(no answer yet)".into();
        };
        let mut text = self.pres.answer_text(&plan, Ok(&outcome));
        let carries = match &outcome {
            mcpl_host::controller::Outcome::Result(v) => {
                !matches!(plan, Plan::Act { .. } | Plan::Call { .. })
                    || mcpl_host::presenter::can_carry(v)
            }
            _ => true,
        };
        let room = self.cap.map(|c| c.saturating_sub(text.len() + 1));
        if !carries {
            self.pres.release(&agent, &server, pending);
            if self.store_ok {
                self.window.push(text.clone());
            }
            return text;
        }
        if let Some(item) = self.pres.take(&agent, &server, pending, room) {
            text = format!("{text}\n{}", item.text);
            if self.store_ok {
                self.window.push(text.clone());
                self.rows.insert(item.token);
                self.pres.stored(&agent, item.token);
            } else {
                self.pres.not_stored(&agent, item.token);
            }
        } else if self.store_ok {
            self.window.push(text.clone());
        }
        text
    }

    pub fn rebuild(&mut self) -> bool {
        self.sync();
        self.pres.rebuild()
    }

    pub fn names(&self) -> Vec<String> {
        self.pres
            .tool_list()
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }
}
