//! One principal's world: a real server over a [`MemoryStore`], two host connections (each a
//! real [`Controller`] and a real server [`Session`] joined by a faulty wire) and one
//! [`Presenter`] telling both to one agent. Everything runs on a virtual clock.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use mcpl_host::controller::{CloseRequest, Effect as HostEffect, OpenRequest, Outcome};
use mcpl_host::names::{InstanceName, ServerName, ToolsetName};
use mcpl_host::presenter::{AgentId, META_ACT, Plan, Presenter, PresenterConfig, Refusal};
use mcpl_host::{Controller, ControllerConfig, Snapshot, Transport};
use mcpl_protocol::jsonrpc::{Message, Notification, Request, RequestId};
use mcpl_server::{
    Call, ConnectionId, Effect as ServerEffect, MemoryStore, Outcome as AppOutcome, Principal,
    Server, ServerConfig, Session, Update, WallClock,
};
use serde_json::{Value, json};

use crate::app;

/// A picture of the dynamic-tool state: per open key, the visible tools and their input
/// schemas; the tools outside toolsets under the key `None`, each with its listed presence
/// and whether it is visible in place of a schema.
pub type Picture = BTreeMap<Option<OpenKey>, BTreeMap<String, Option<Value>>>;

/// A toolset and, for instanced toolsets, the instance (the host's key).
pub use mcpl_host::controller::OpenKey;

/// One host connection: its controller, its server session and the wire between them.
pub struct Link {
    /// The host side.
    pub host: Controller,
    /// The server side.
    pub session: Session,
    /// The host's configuration (kept to reconnect).
    pub cfg: ControllerConfig,
    /// Messages on their way to the host.
    pub to_host: VecDeque<Message>,
    /// Messages on their way to the server.
    pub to_server: VecDeque<Message>,
    /// The highest rev this controller applied so far (reset on reconnect).
    pub applied: u64,
    /// Set when the server asked to close the connection.
    pub closing: bool,
}

/// A rule the run broke, with what showed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation(pub String);

/// The whole world of one schedule.
pub struct World {
    /// The server (replaced on a restart).
    pub server: Server,
    /// The store that outlives restarts.
    pub store: Arc<MemoryStore>,
    /// The principal both connections act for.
    pub principal: Principal,
    /// The virtual clock.
    pub now: Instant,
    t0: Instant,
    next_conn: u64,
    /// The two connections.
    pub links: Vec<Link>,
    /// App calls held back (late answers): connection, call.
    pub held: Vec<(usize, Call)>,
    /// The presenter telling both connections to one agent.
    pub presenter: Presenter,
    agent: AgentId,
    /// Everything told to the agent: (server name, text).
    pub told: Vec<(String, String)>,
    /// Per connection, every ended record (id and reason) a `toolsets/list` it read reported:
    /// each must be told exactly once through that connection (§5.3, H48).
    pub listed: Vec<BTreeMap<String, Option<String>>>,
    /// Numbers the app's replies (see [`app::run`]).
    pub serial: u64,
    /// Rules broken so far.
    pub violations: Vec<Violation>,
    /// What happened, for a failing seed's report.
    pub log: Vec<String>,
}

fn new_server(store: &Arc<MemoryStore>, t0: Instant) -> Server {
    let clock = WallClock::new(t0, UNIX_EPOCH + Duration::from_secs(1_769_164_200));
    Server::with_store(
        app::declarations()
            .build()
            .expect("the verification app's declarations are valid"),
        ServerConfig::new(clock),
        store.clone(),
    )
}

/// The server names the two connections carry in the presenter.
pub const NAMES: [&str; 2] = ["v0", "v1"];

impl World {
    /// A fresh world: connection 0 on an ordered transport, connection 1 on Streamable HTTP
    /// (which may reorder and duplicate).
    pub fn new() -> World {
        let t0 = Instant::now();
        let store = Arc::new(MemoryStore::new());
        let server = new_server(&store, t0);
        let agent = AgentId::new("agent");
        let mut presenter = Presenter::new(PresenterConfig::default());
        presenter.add_agent(agent.clone());
        let mut w = World {
            server,
            store,
            principal: Principal::authenticated("alice"),
            now: t0,
            t0,
            next_conn: 1,
            links: Vec::new(),
            held: Vec::new(),
            presenter,
            agent,
            told: Vec::new(),
            listed: vec![BTreeMap::new(); NAMES.len()],
            serial: 0,
            violations: Vec::new(),
            log: Vec::new(),
        };
        for (i, name) in NAMES.iter().enumerate() {
            let mut cfg = ControllerConfig::new(ServerName::sanitized(name), "alice");
            if i == 1 {
                cfg.transport = Transport::StreamableHttp;
            }
            let link = w.connect(cfg, None);
            w.links.push(link);
        }
        w.drive();
        w
    }

    fn note(&mut self, what: String) {
        let ms = (self.now - self.t0).as_millis();
        self.log.push(format!("+{ms}ms {what}"));
    }

    /// Opens a server session and runs the handshake on it (not on the faulty wire), then
    /// starts a controller, resuming from `previous` if given.
    fn connect(&mut self, mut cfg: ControllerConfig, previous: Option<Snapshot>) -> Link {
        let id = ConnectionId(self.next_conn);
        self.next_conn += 1;
        let mut session = self.server.session(self.principal.clone(), id, self.now);
        let init = Request::new(
            RequestId::Number(0),
            "initialize",
            Some(json!({"protocolVersion": "2025-06-18",
                "capabilities": {"experimental": {"mcpl": {"version": "0.5", "featureSets": true,
                    "toolHints": true, "pushEvents": true}}},
                "clientInfo": {"name": "mcpl-verify", "version": "1"}})),
        );
        session.handle_message(self.now, Message::Request(init));
        let mut manifest = None;
        let mut sent = Vec::new();
        self.drain_session(&mut session, &mut sent);
        for m in &sent {
            if let Message::Response(r) = m
                && let Ok(v) = &r.outcome
            {
                manifest = v["capabilities"]["experimental"]["mcpl"]
                    .as_object()
                    .map(|o| Value::Object(o.clone()));
            }
        }
        session.handle_message(
            self.now,
            Message::Notification(Notification::new("notifications/initialized", None)),
        );
        let grant = Request::new(
            RequestId::Number(1),
            "featureSets/update",
            Some(json!({"effectiveCapabilities": ["pushEvents"]})),
        );
        session.handle_message(self.now, Message::Request(grant));
        let mut rest = Vec::new();
        self.drain_session(&mut session, &mut rest);
        cfg.push_events = manifest
            .as_ref()
            .and_then(|m| m.get("pushEvents"))
            .and_then(Value::as_bool)
            == Some(true);
        cfg.manifest = manifest;
        let host = Controller::resume(cfg.clone(), self.now, previous);
        Link {
            host,
            session,
            cfg,
            to_host: VecDeque::new(),
            to_server: VecDeque::new(),
            applied: 0,
            closing: false,
        }
    }

    /// Runs a session not yet in `links` (the handshake) until idle; what it writes lands in
    /// `out`.
    fn drain_session(&mut self, session: &mut Session, out: &mut Vec<Message>) {
        while let Some(e) = session.poll_effect() {
            match session.answer_from(&self.store, self.now, e) {
                None => {}
                Some(ServerEffect::Send(m)) => out.push(m),
                Some(ServerEffect::Committed { hooks, .. }) => hooks.run(),
                Some(_) => {}
            }
        }
    }

    /// Runs every controller's and session's effects until all are idle. Messages stay on
    /// the wire; app calls run unless `hold` says to keep them back.
    pub fn drive(&mut self) {
        self.drive_holding(false);
    }

    /// [`World::drive`], keeping app calls back when `hold`.
    pub fn drive_holding(&mut self, hold: bool) {
        loop {
            let mut progressed = false;
            for i in 0..self.links.len() {
                progressed |= self.drain_host(i);
                while let Some(e) = self.links[i].session.poll_effect() {
                    progressed = true;
                    let now = self.now;
                    let Some(e) = self.links[i].session.answer_from(&self.store, now, e) else {
                        continue;
                    };
                    match e {
                        ServerEffect::Apply(principal, update) => {
                            self.commit(&principal, &update);
                        }
                        ServerEffect::Send(m) => self.links[i].to_host.push_back(m),
                        ServerEffect::Call(call) if hold => self.held.push((i, *call)),
                        ServerEffect::Call(call) => self.complete(i, *call),
                        ServerEffect::Publish(change) => {
                            for l in &mut self.links {
                                l.session.handle_principal_change(now, &change);
                            }
                        }
                        ServerEffect::Committed { hooks, .. } => hooks.run(),
                        ServerEffect::Close => self.links[i].closing = true,
                        _ => {}
                    }
                }
            }
            if !progressed {
                break;
            }
        }
    }

    /// Drains controller `i`'s effects; returns whether there were any.
    fn drain_host(&mut self, i: usize) -> bool {
        let mut any = false;
        while let Some(e) = self.links[i].host.poll_effect() {
            any = true;
            match e {
                HostEffect::Send(m) => {
                    if let Message::Request(r) = &m
                        && r.method == "tools/call"
                    {
                        self.check_call_visible(i, r);
                    }
                    self.links[i].to_server.push_back(m);
                }
                // The truth connection (a third, fresh one) tells nobody.
                HostEffect::Changed(_) | HostEffect::Event(_) if i >= NAMES.len() => {}
                HostEffect::Changed(ch) => {
                    self.presenter
                        .handle_change(&ServerName::sanitized(NAMES[i]), &ch);
                    self.tell(i);
                }
                HostEffect::Event(ev) => {
                    self.presenter
                        .handle_event(&ServerName::sanitized(NAMES[i]), &ev);
                    self.tell(i);
                }
                // H60/H61: an unconfirmed command points the agent to look, which re-reads
                // `toolsets/list` (H62); the agent here always follows that pointer.
                HostEffect::Answered(a) if matches!(a.outcome, Outcome::Unconfirmed(_)) => {
                    let now = self.now;
                    let looked = self.links[i].host.refresh(now).is_ok();
                    self.note(format!(
                        "c{i} unconfirmed answer: the agent looks ({looked})"
                    ));
                }
                _ => {}
            }
        }
        if any && i < NAMES.len() {
            let records = self.links[i].host.snapshot().ended();
            let records: Vec<_> = records
                .iter()
                .map(|e| (e.id.clone(), e.reason.clone()))
                .collect();
            self.listed[i].extend(records);
            let push = self.links[i].cfg.push_events;
            self.presenter.update(self.links[i].host.snapshot(), push);
        }
        any
    }

    /// No call goes out for a tool the controller's own picture holds invisible (or does not
    /// hold at all).
    fn check_call_visible(&mut self, i: usize, r: &Request) {
        let p = r.params.clone().unwrap_or_default();
        let tool = p["name"].as_str().unwrap_or_default().to_owned();
        let raw = p["_meta"]["mcpl/instance"].as_str();
        // An instance outside the grammar can name nothing the picture holds.
        let instance = raw.map(InstanceName::parse).transpose().ok();
        let snap = self.links[i].host.snapshot();
        if !instance.is_some_and(|inst| snap.visible(&tool, inst.as_ref())) {
            self.violations.push(Violation(format!(
                "connection {i} sent tools/call {tool} {raw:?} while its picture held it invisible"
            )));
        }
    }

    /// Hands the presenter connection `i`'s picture and takes what it tells the agent.
    fn tell(&mut self, i: usize) {
        let push = self.links[i].cfg.push_events;
        self.presenter.update(self.links[i].host.snapshot(), push);
        self.take_window();
    }

    /// Stores everything the presenter has for the agent's window.
    fn take_window(&mut self) {
        while let Some(item) = self.presenter.poll_window(&self.agent) {
            let server = item
                .server
                .as_ref()
                .map(|s| s.as_str().to_owned())
                .unwrap_or_default();
            self.note(format!(
                "told ({server}): {}",
                item.text.replace('\n', " | ")
            ));
            self.told.push((server, item.text.clone()));
            self.presenter.stored(&self.agent, item.token);
        }
    }

    /// The agent's turn ends: the presenter rebuilds the tool list it offers, publishing
    /// and telling the presence moves the new list reflects (H33 to H35).
    pub fn rebuild(&mut self) {
        let changed = self.presenter.rebuild();
        self.note(format!("presenter rebuild (list changed: {changed})"));
        self.take_window();
    }

    /// Runs app code for `call` on connection `i` and hands the outcome back.
    pub fn complete(&mut self, i: usize, mut call: Call) {
        self.serial += 1;
        let reply = app::run(&mut call, self.serial);
        let outcome = AppOutcome {
            context: call.context,
            reply,
        };
        let now = self.now;
        // A call of a session that has since gone is a lost answer.
        let _ = self.links[i]
            .session
            .handle_call_done(now, call.id, outcome);
    }

    /// Commits a server-side update for the principal and hands the change to every session.
    pub fn commit(&mut self, principal: &Principal, update: &Update) {
        let now = self.now;
        match self.server.apply_now(&self.store, now, principal, update) {
            Ok(change) => {
                for l in &mut self.links {
                    l.session.handle_principal_change(now, &change);
                }
            }
            Err(e) => self.note(format!("update refused: {e}")),
        }
    }

    /// An app-side update outside any call (a timer, another user's move).
    pub fn server_update(&mut self, update: Update) {
        let p = self.principal.clone();
        self.note(format!("server update {update:?}"));
        self.commit(&p, &update);
        self.drive();
    }

    /// Delivers the message at `index` of connection `i`'s host-bound queue.
    pub fn deliver_to_host(&mut self, i: usize, index: usize) {
        let Some(m) = self.links[i].to_host.remove(index) else {
            return;
        };
        self.note(format!("c{i} server> {}", brief(&m)));
        let now = self.now;
        self.links[i].host.handle_message(now, None, m);
        let applied = self.links[i].host.snapshot().applied().0;
        if applied < self.links[i].applied {
            self.violations.push(Violation(format!(
                "connection {i} applied rev {applied} after rev {}",
                self.links[i].applied
            )));
        }
        self.links[i].applied = applied;
        self.drive();
    }

    /// Loses the message at `index` of connection `i`'s host-bound queue.
    pub fn lose_to_host(&mut self, i: usize, index: usize) {
        if let Some(m) = self.links[i].to_host.remove(index) {
            self.note(format!("c{i} LOST server> {}", brief(&m)));
        }
    }

    /// Sends the first host-bound message of connection `i` again, behind the others.
    pub fn duplicate_to_host(&mut self, i: usize) {
        if let Some(m) = self.links[i].to_host.front().cloned() {
            self.note(format!("c{i} DUPLICATED server> {}", brief(&m)));
            self.links[i].to_host.push_back(m);
        }
    }

    /// Loses the message at `index` of connection `i`'s server-bound queue (a request that
    /// never arrives: the host's request timer notices).
    pub fn lose_to_server(&mut self, i: usize, index: usize) {
        if let Some(m) = self.links[i].to_server.remove(index) {
            self.note(format!("c{i} LOST host> {}", brief(&m)));
        }
    }

    /// Delivers the message at `index` of connection `i`'s server-bound queue.
    pub fn deliver_to_server(&mut self, i: usize, index: usize, hold: bool) {
        let Some(m) = self.links[i].to_server.remove(index) else {
            return;
        };
        self.note(format!("c{i} host> {}", brief(&m)));
        let now = self.now;
        self.links[i].session.handle_message(now, m);
        self.drive_holding(hold);
    }

    /// Host operations: open, close, call.
    pub fn open(&mut self, i: usize, toolset: &str, instance: Option<&str>) {
        let now = self.now;
        let req = OpenRequest {
            toolset: ToolsetName::parse(toolset).expect("the schedule's toolsets fit the grammar"),
            instance: instance
                .map(|i| InstanceName::parse(i).expect("the schedule's instances fit the grammar")),
            options: None,
        };
        let r = self.links[i].host.open(now, req);
        self.note(format!("c{i} open {toolset} {instance:?}: {}", r.is_ok()));
        self.drive();
    }

    /// Closes a toolset or instance through connection `i`.
    pub fn close(&mut self, i: usize, toolset: &str, instance: Option<&str>) {
        let now = self.now;
        let req = CloseRequest {
            toolset: ToolsetName::parse(toolset).expect("the schedule's toolsets fit the grammar"),
            instance: instance
                .map(|i| InstanceName::parse(i).expect("the schedule's instances fit the grammar")),
        };
        let r = self.links[i].host.close(now, req);
        self.note(format!("c{i} close {toolset} {instance:?}: {}", r.is_ok()));
        self.drive();
    }

    /// Calls a tool through connection `i` as the agent would, with the presenter's act: the
    /// presenter refuses what the picture holds invisible, the rest goes to the controller.
    pub fn call(&mut self, i: usize, tool: &str, instance: Option<&str>) {
        let now = self.now;
        let push = self.links[i].cfg.push_events;
        self.presenter.update(self.links[i].host.snapshot(), push);
        let args = json!({"server": NAMES[i], "tool": tool, "instance": instance});
        // A static tool is called by its model-facing name, as the agent reads it in the list.
        let plan = match self.presenter.plan(META_ACT, args) {
            Err(Refusal::NotDynamic { model, .. }) => self.presenter.plan(&model, json!({})),
            plan => plan,
        };
        match plan {
            Ok(Plan::Act { req, .. } | Plan::Call { req, .. }) => {
                let r = self.links[i].host.call(now, req);
                self.note(format!("c{i} act {tool} {instance:?}: sent {}", r.is_ok()));
            }
            Ok(other) => self.note(format!("c{i} act {tool} {instance:?}: planned {other:?}")),
            Err(refusal) => self.note(format!("c{i} act {tool} {instance:?}: refused {refusal:?}")),
        }
        self.drive();
    }

    /// Moves the clock by `d` and fires every timer that is due.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.note(format!("clock +{}s", d.as_secs()));
        let now = self.now;
        for l in &mut self.links {
            l.host.handle_timeout(now);
            l.session.handle_timeout(now);
        }
        self.drive();
    }

    /// Connection `i` breaks: both ends see it go; the host reconnects at once, resuming
    /// from its last picture.
    pub fn disconnect(&mut self, i: usize) {
        self.note(format!("c{i} disconnect"));
        let now = self.now;
        self.links[i].session.handle_disconnect(now);
        self.links[i].host.handle_close(now);
        self.drive();
        self.held.retain(|(c, _)| *c != i);
        let cfg = self.links[i].cfg.clone();
        let previous = self.links[i].host.snapshot().clone();
        let link = self.connect(cfg, Some(previous));
        self.links[i] = link;
        self.drive();
    }

    /// The server process restarts: every connection breaks, the store survives.
    pub fn restart(&mut self) {
        self.note("server restart".into());
        let now = self.now;
        for l in &mut self.links {
            l.host.handle_close(now);
        }
        self.drive();
        self.held.clear();
        self.server = new_server(&self.store, self.t0);
        for i in 0..self.links.len() {
            let cfg = self.links[i].cfg.clone();
            let previous = self.links[i].host.snapshot().clone();
            let link = self.connect(cfg, Some(previous));
            self.links[i] = link;
        }
        self.drive();
    }

    /// Delivers everything, completes held calls and runs timers until nothing moves. No
    /// recovery is forced.
    pub fn quiesce(&mut self) {
        for _ in 0..200 {
            self.drive();
            let mut moved = false;
            for i in 0..self.links.len() {
                if self.links[i].closing {
                    self.disconnect(i);
                    moved = true;
                }
                while !self.links[i].to_server.is_empty() {
                    self.deliver_to_server(i, 0, false);
                    moved = true;
                }
                while !self.links[i].to_host.is_empty() {
                    self.deliver_to_host(i, 0);
                    moved = true;
                }
            }
            while let Some((i, call)) = self.held.pop() {
                self.complete(i, call);
                self.drive();
                moved = true;
            }
            if moved {
                continue;
            }
            let next = self
                .links
                .iter()
                .filter_map(|l| {
                    [l.host.poll_timeout(), l.session.poll_timeout()]
                        .into_iter()
                        .flatten()
                        .min()
                })
                .min();
            match next {
                Some(t) if t <= self.now + Duration::from_secs(600) => {
                    self.now = self.now.max(t);
                    let now = self.now;
                    for l in &mut self.links {
                        l.host.handle_timeout(now);
                        l.session.handle_timeout(now);
                    }
                }
                _ => return,
            }
        }
        self.violations
            .push(Violation("the world did not quiesce in 200 rounds".into()));
    }

    /// The server's full statement as a fresh connection reads it over a perfect wire, and
    /// the reasons of the ended records it still holds.
    pub fn truth(&mut self) -> (Picture, Vec<(String, OpenKey)>) {
        let cfg = ControllerConfig::new(ServerName::sanitized("truth"), "alice");
        let link = self.connect(cfg, None);
        self.links.push(link);
        let i = self.links.len() - 1;
        for _ in 0..50 {
            self.drive();
            if self.links[i].to_server.is_empty() && self.links[i].to_host.is_empty() {
                break;
            }
            while !self.links[i].to_server.is_empty() {
                self.deliver_to_server(i, 0, false);
            }
            while !self.links[i].to_host.is_empty() {
                self.deliver_to_host(i, 0);
            }
        }
        let link = self.links.pop().expect("the truth link was pushed");
        let held = link
            .host
            .snapshot()
            .ended()
            .iter()
            .filter_map(|e| {
                // The host keeps only ended records whose names fit the grammar.
                let toolset = ToolsetName::parse(&e.toolset).ok()?;
                let instance = e
                    .instance
                    .as_deref()
                    .map(InstanceName::parse)
                    .transpose()
                    .ok()?;
                e.reason.clone().map(|r| (r, (toolset, instance)))
            })
            .collect();
        (picture(link.host.snapshot()), held)
    }
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

/// A controller's picture: open keys with their visible tools and input schemas, and the
/// tools outside toolsets with their presence and visibility.
pub fn picture(snap: &Snapshot) -> Picture {
    let free: BTreeMap<String, Option<Value>> = snap
        .tools()
        .iter()
        .filter(|t| t.toolset.is_none())
        .map(|t| {
            let state =
                json!({"presence": t.presence, "visible": snap.visible(&t.tool.name, None)});
            (t.tool.name.clone(), Some(state))
        })
        .collect();
    let mut pic: Picture = snap
        .open()
        .iter()
        .map(|(k, inst)| {
            let tools = inst
                .tools
                .iter()
                .filter(|(_, l)| l.visible)
                .map(|(t, l)| {
                    (
                        t.clone(),
                        l.definition.as_ref().map(|d| d.input_schema.clone()),
                    )
                })
                .collect();
            (Some(k.clone()), tools)
        })
        .collect();
    pic.insert(None, free);
    pic
}

/// A short form of a message for the log.
pub fn brief(m: &Message) -> String {
    let s = m.to_json().to_string();
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

/// Leaves out of both pictures each tool outside toolsets whose presence differs between
/// them. A move takes effect for a host only when a `tools/list` states it (§4.2, H31), and
/// the host re-lists at a time it chooses: without a forced re-read the presence need not
/// match, and a tool's visibility is compared once the host's list has its current presence.
pub fn comparable(host: &mut Picture, truth: &mut Picture) {
    let (Some(h), Some(t)) = (host.get_mut(&None), truth.get_mut(&None)) else {
        return;
    };
    let presence = |v: &Option<Value>| v.as_ref().map(|v| v["presence"].clone());
    let moved: Vec<String> = h
        .iter()
        .filter(|(name, v)| t.get(*name).map(presence) != Some(presence(v)))
        .map(|(name, _)| name.clone())
        .collect();
    for name in moved {
        h.remove(&name);
        t.remove(&name);
    }
}
