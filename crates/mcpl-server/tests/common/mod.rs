//! A harness that wires server sessions to scripted hosts in memory, with a virtual clock,
//! and a small Go-like app: `fixture::arcade()`.

#![allow(dead_code)]

use mcpl_protocol::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Call, CallKind, CloseReply, ConnectionId, Declarations, Effect, Event, MemoryStore, OpenReply,
    Outcome, Principal, PrincipalChange, PrincipalState, Reply, Server, ServerConfig, Session,
    ToolDef, ToolsetDef, Update, Versioned, WallClock, WriteSet, Written,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// The test world's declarations: a Go-like instanced toolset `game`, a default-open `tips`,
/// a plain `notes` toolset, an options-requiring `quiz`, an undeclared group `extras`, a free
/// dynamic tool `hint` and static tools.
pub fn arcade() -> Declarations {
    Declarations::new("arcade", "0.1.0")
        .surface("Arcade", Some("Games"))
        .tool(
            ToolDef::new("challenge", "Challenge another agent to a game of Go.")
                .input_schema(json!({"type": "object", "required": ["who"],
                       "properties": {"who": {"type": "string"}}})),
        )
        .tool(
            ToolDef::new("flip", "Show or hide the hint tool.").input_schema(
                json!({"type": "object", "properties": {"show": {"type": "boolean"}}}),
            ),
        )
        .tool(ToolDef::new("hint", "Get a hint.").dynamic())
        .tool(ToolDef::new("fortune", "Tell a fortune.").group("extras"))
        .toolset(
            ToolsetDef::new("game", "Go")
                .summary("A game of Go against the bot or another agent")
                .instances()
                .options_schema(json!({"type": "object",
                    "properties": {"size": {"enum": [9, 13, 19]}}}))
                .tool(ToolDef::new("board", "Show the board."))
                .tool(
                    ToolDef::new("play", "Play a move.")
                        .input_schema(json!({"type": "object", "required": ["move"],
                               "properties": {"move": {"type": "string"}}})),
                )
                .tool(ToolDef::new("pass", "Pass your turn.")),
        )
        .toolset(
            ToolsetDef::new("tips", "Tips")
                .default_open()
                .tool(ToolDef::new("tip", "Read a tip.")),
        )
        .toolset(ToolsetDef::new("notes", "Notes").tool(ToolDef::new("note", "Write a note.")))
        .toolset(
            ToolsetDef::new("quiz", "Quiz")
                .options_schema(json!({"type": "object", "required": ["topic"],
                    "properties": {"topic": {"type": "string"}}}))
                .tool(ToolDef::new("answer", "Answer the question.")),
        )
}

/// The definition of `play` listing `moves` as its legal moves.
pub fn play_def(moves: &[&str]) -> Tool {
    let mut t = Tool::new("play");
    t.description = Some(json!("Play a move. Only legal moves are offered."));
    t.input_schema = json!({"type": "object", "required": ["move"],
        "properties": {"move": {"enum": moves}}});
    t
}

/// The app: what each tool, open and close does.
pub fn run_app(call: &mut Call) -> Reply {
    let ctx = &mut call.context;
    match &call.kind {
        CallKind::Open => {
            if ctx.instance().is_some_and(|i| i.as_str() == "forbidden") {
                return Reply::Open(OpenReply::refuse("that name is reserved"));
            }
            if ctx.toolset().is_some_and(|t| t.as_str() == "game") {
                let size = ctx
                    .options()
                    .get("size")
                    .and_then(Value::as_u64)
                    .unwrap_or(9);
                let title = format!("Go vs bot ({size}x{size})");
                ctx.here().show("board").show("play").show("pass");
                ctx.here().define(play_def(&["A1", "B2", "C3"]));
                Reply::Open(
                    OpenReply::text(format!("New {size}x{size} game. You are Black; your move."))
                        .title(title),
                )
            } else {
                Reply::Open(OpenReply::text("opened"))
            }
        }
        CallKind::Close { .. } => Reply::Close(CloseReply::text("You resigned; White wins.")),
        CallKind::Tool { tool, args } => {
            let text = match tool.as_str() {
                "play" => {
                    ctx.here().hide("play").hide("pass");
                    let at = ctx
                        .instance()
                        .map(|i| format!(" in {i}"))
                        .unwrap_or_default();
                    format!("You played {}{at}.", args["move"].as_str().unwrap_or("?"))
                }
                "challenge" => {
                    let who = Principal::authenticated(args["who"].as_str().unwrap_or(""));
                    let me = ctx.principal().id().to_owned();
                    let u = ctx.update_for(&who);
                    u.suggest_open(
                        "game",
                        Some(&format!("vs-{me}")),
                        Some(json!({"size": 13})),
                        format!("{me} challenged you"),
                    );
                    u.event(Event::text(format!("{me} challenges you to 13x13")));
                    format!("Challenged {}.", who.id())
                }
                "flip" => {
                    let show = args.get("show").and_then(Value::as_bool).unwrap_or(false);
                    ctx.update().tools().set_visible("hint", show);
                    format!("hint visible: {show}")
                }
                other => format!("{other} done"),
            };
            Reply::Tool(CallToolResult::text(text))
        }
        _ => Reply::Tool(CallToolResult::error("unexpected call")),
    }
}

/// One scripted host connection.
pub struct Conn {
    pub session: Session,
    pub label: String,
    /// Everything the server wrote to this host, in order.
    pub written: Vec<Message>,
    /// How much of `written` the test has taken.
    pub taken: usize,
}

/// Sessions, a virtual clock, the principal states (read and written synchronously, as a
/// driver would through a store), and the fan-out between sessions.
pub struct World {
    pub server: Server,
    pub store: Arc<MemoryStore>,
    pub t0: Instant,
    pub now: Instant,
    pub conns: Vec<Conn>,
    /// When true, app calls wait in `held` instead of running at once.
    pub hold_calls: bool,
    pub held: Vec<(usize, Call)>,
    pub transcript: Vec<String>,
    next_id: i64,
    next_conn: u64,
}

impl World {
    pub fn new(decls: Declarations) -> Self {
        let t0 = Instant::now();
        let clock = WallClock::new(t0, UNIX_EPOCH + Duration::from_secs(1_769_164_200));
        let store = Arc::new(MemoryStore::new());
        let server = Server::with_store(
            decls.build().expect("fixture declarations are valid"),
            ServerConfig::new(clock),
            store.clone(),
        );
        World::with_server(server, store, t0)
    }

    pub fn with_server(server: Server, store: Arc<MemoryStore>, t0: Instant) -> Self {
        World {
            server,
            store,
            t0,
            now: t0,
            conns: Vec::new(),
            hold_calls: false,
            held: Vec::new(),
            transcript: Vec::new(),
            next_id: 1,
            next_conn: 1,
        }
    }

    pub fn arcade() -> Self {
        World::new(arcade())
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        for c in &mut self.conns {
            c.session.handle_timeout(self.now);
        }
        self.drive();
    }

    fn log(&mut self, label: &str, dir: &str, msg: &Message) {
        let ms = (self.now - self.t0).as_millis();
        self.transcript
            .push(format!("+{ms}ms {label} {dir} {}", msg.to_json()));
    }

    /// Connects a host acting for `principal`: `initialize` (advertising `toolHints` if
    /// `hints`, `pushEvents` if `push`), `initialized`, and a policy granting `pushEvents` if
    /// `push`. The handshake is not kept in `written`.
    pub fn connect(&mut self, principal: Principal, hints: bool, push: bool) -> usize {
        let id = ConnectionId(self.next_conn);
        self.next_conn += 1;
        let nth = self
            .conns
            .iter()
            .filter(|c| c.session.principal() == &principal)
            .count();
        let label = format!("{}#{}", principal.id(), nth + 1);
        let session = self.server.session(principal, id, self.now);
        self.conns.push(Conn {
            session,
            label,
            written: Vec::new(),
            taken: 0,
        });
        let c = self.conns.len() - 1;
        let mut mcpl = json!({"version": "0.5", "featureSets": true});
        if hints {
            mcpl["toolHints"] = json!(true);
        }
        if push {
            mcpl["pushEvents"] = json!(true);
        }
        self.request(
            c,
            "initialize",
            json!({"protocolVersion": "2025-06-18",
            "capabilities": {"experimental": {"mcpl": mcpl}},
            "clientInfo": {"name": "test-host", "version": "1"}}),
        )
        .expect("initialize succeeds");
        self.notify(c, "notifications/initialized", None);
        let grant = if push {
            json!(["pushEvents"])
        } else {
            json!([])
        };
        self.request(
            c,
            "featureSets/update",
            json!({"effectiveCapabilities": grant}),
        )
        .expect("policy accepted");
        self.take(c);
        c
    }

    /// Sends a request without driving; returns its id.
    pub fn send_request(&mut self, c: usize, method: &str, params: Value) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let msg = Message::Request(Request::new(id.clone(), method, Some(params)));
        let label = self.conns[c].label.clone();
        self.log(&label, "host>", &msg);
        let now = self.now;
        self.conns[c].session.handle_message(now, msg);
        id
    }

    pub fn notify(&mut self, c: usize, method: &str, params: Option<Value>) {
        let msg = Message::Notification(Notification::new(method, params));
        let label = self.conns[c].label.clone();
        self.log(&label, "host>", &msg);
        let now = self.now;
        self.conns[c].session.handle_message(now, msg);
        self.drive();
    }

    /// Sends a request, drives everything, and returns its answer.
    pub fn request(&mut self, c: usize, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let id = self.send_request(c, method, params);
        self.drive();
        self.response(c, &id).expect("the request was answered")
    }

    /// The answer to `id` written to connection `c`, if any.
    pub fn response(&self, c: usize, id: &RequestId) -> Option<Result<Value, ErrorObject>> {
        self.conns[c].written.iter().find_map(|m| match m {
            Message::Response(r) if r.id.as_ref() == Some(id) => Some(r.outcome.clone()),
            _ => None,
        })
    }

    /// Calls a tool, optionally naming an instance.
    pub fn call(&mut self, c: usize, tool: &str, args: Value, instance: Option<&str>) -> Value {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(i) = instance {
            params["_meta"] = json!({"mcpl/instance": i});
        }
        self.request(c, "tools/call", params)
            .expect("tools/call answers with a result")
    }

    /// What the server wrote to `c` since the last take.
    pub fn take(&mut self, c: usize) -> Vec<Message> {
        let conn = &mut self.conns[c];
        let out = conn.written[conn.taken..].to_vec();
        conn.taken = conn.written.len();
        out
    }

    /// Commits a server-side update for `principal` and fans it out.
    pub fn apply(&mut self, principal: &Principal, update: Update) {
        let change = self.commit(principal, &update).expect("valid update");
        self.deliver(&change);
        self.drive();
    }

    /// `principal`'s stored state as its first connection sees it.
    pub fn state(&self, principal: &Principal) -> PrincipalState {
        self.server
            .seeded(Arc::unwrap_or_clone(self.store.load_now(principal).state))
    }

    /// Reads, commits and writes `update` for `principal`, as the driver's committer does.
    pub fn commit(
        &mut self,
        principal: &Principal,
        update: &Update,
    ) -> Result<PrincipalChange, mcpl_server::Error> {
        edit_stored(&self.store, principal, |state| {
            self.server.apply_to(self.now, principal, state, update)
        })
    }

    /// Replaces the declarations and ends removed toolsets in every stored state, as the
    /// driver's committer does; returns the changes (not delivered yet).
    pub fn replace_catalog(&mut self, catalog: mcpl_server::Catalog) -> Vec<PrincipalChange> {
        let removed = self.server.replace_catalog(catalog);
        let mut changes = Vec::new();
        for principal in self.store.principals_now() {
            let stored = self.store.load_now(&principal);
            let mut state = stored.state;
            let Some(change) =
                self.server
                    .end_removed(self.now, &removed, &principal, Arc::make_mut(&mut state))
            else {
                continue;
            };
            let write = WriteSet {
                principal: principal.clone(),
                read: stored.version,
                state: Some(state.clone()),
            };
            let Written::Done { version } = self.store.write_now(&write) else {
                panic!("nothing else writes in the test world");
            };
            changes.push(change.with_state(Versioned { state, version }));
        }
        changes
    }

    /// Hands `change` to every session.
    pub fn deliver(&mut self, change: &PrincipalChange) {
        for c in &mut self.conns {
            c.session.handle_principal_change(self.now, change);
        }
    }

    /// Runs every session's effects until all are idle (held calls stay held).
    pub fn drive(&mut self) {
        loop {
            let mut progressed = false;
            for i in 0..self.conns.len() {
                while let Some(effect) = self.conns[i].session.poll_effect() {
                    progressed = true;
                    match effect {
                        Effect::Load(principal) => {
                            let stored = self.store.load_now(&principal);
                            self.conns[i].session.handle_state(self.now, stored);
                        }
                        Effect::Write(write) => self.write(i, &write),
                        Effect::Apply(principal, update) => {
                            let change = self.commit(&principal, &update).expect("valid update");
                            self.deliver(&change);
                        }
                        Effect::Send(msg) => {
                            let label = self.conns[i].label.clone();
                            self.log(&label, "server>", &msg);
                            self.conns[i].written.push(msg);
                        }
                        Effect::Call(call) if self.hold_calls => self.held.push((i, *call)),
                        Effect::Call(call) => self.complete(i, *call),
                        Effect::Publish(change) => {
                            for c in &mut self.conns {
                                c.session.handle_principal_change(self.now, &change);
                            }
                        }
                        Effect::Committed { hooks, .. } => hooks.run(),
                        Effect::Close => {}
                        _ => {}
                    }
                }
            }
            if !progressed {
                break;
            }
        }
    }

    /// Runs connection `i`'s write against the store, as the driver does.
    pub fn write(&mut self, i: usize, write: &WriteSet) {
        let now = self.now;
        match self.store.write_now(write) {
            Written::Done { version } => self.conns[i].session.handle_written(now, version),
            Written::Conflict(stored) => self.conns[i].session.handle_conflict(now, stored),
        }
    }

    /// Runs app code for `call` and hands the outcome back.
    pub fn complete(&mut self, i: usize, mut call: Call) {
        let reply = run_app(&mut call);
        let outcome = Outcome {
            context: call.context,
            reply,
        };
        let now = self.now;
        self.conns[i]
            .session
            .handle_call_done(now, call.id, outcome)
            .expect("the app's updates fit the declarations");
    }

    /// Opens game `instance` on connection `c` with no options; the answer must be a result.
    pub fn open_game(&mut self, c: usize, instance: &str) -> Value {
        self.request(
            c,
            "toolsets/open",
            json!({"toolset": "game", "instance": instance}),
        )
        .expect("the open succeeds")
    }

    /// Sends an open of game `instance` on connection `c` and drives it until its app call
    /// is held (calls are held from now on); returns the request's id and the call.
    pub fn open_held(&mut self, c: usize, instance: &str) -> (RequestId, Call) {
        self.hold_calls = true;
        let id = self.send_request(
            c,
            "toolsets/open",
            json!({"toolset": "game", "instance": instance}),
        );
        self.drive();
        let at = self
            .held
            .iter()
            .position(|(i, _)| *i == c)
            .expect("the open's app call is held");
        (id, self.held.remove(at).1)
    }

    /// The instances `toolsets/list` names as open on connection `c`.
    pub fn open_instances(&mut self, c: usize) -> Vec<String> {
        let list = self.request(c, "toolsets/list", json!({})).unwrap();
        list["open"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["instance"].as_str().map(str::to_owned))
            .collect()
    }

    /// Completes the held call at `index`.
    pub fn complete_held(&mut self, index: usize) {
        let (i, call) = self.held.remove(index);
        self.complete(i, call);
        self.drive();
    }
}

/// The hint changes a message carries, wherever they ride.
pub fn hints_of(msg: &Message) -> Option<Value> {
    match msg {
        Message::Response(r) => r
            .outcome
            .as_ref()
            .ok()?
            .get("_meta")?
            .get("mcpl/hints")
            .cloned(),
        Message::Notification(n) if n.method == "tools/hints" => n.params.clone(),
        Message::Request(r) if r.method == "push/event" => r.params.as_ref()?.get("hints").cloned(),
        _ => None,
    }
}

/// The revs carried by `msgs`, in order.
pub fn revs(msgs: &[Message]) -> Vec<u64> {
    msgs.iter()
        .filter_map(hints_of)
        .filter_map(|h| h["rev"].as_u64())
        .collect()
}

/// The revs carried by everything the server wrote to `c`.
pub fn all_revs(w: &World, c: usize) -> Vec<u64> {
    revs(&w.conns[c].written)
}

/// Methods of server-to-host messages (`response` for answers).
pub fn methods(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| match m {
            Message::Request(r) => r.method.clone(),
            Message::Notification(n) => n.method.clone(),
            Message::Response(_) => "response".to_owned(),
        })
        .collect()
}

/// The text of a tool result.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// The entry for `tool` (in `instance`) in a hint change.
pub fn tool_entry<'a>(hints: &'a Value, tool: &str, instance: Option<&str>) -> Option<&'a Value> {
    hints["tools"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == json!(tool) && e.get("instance").and_then(Value::as_str) == instance)
}

/// The listed tool `name` from a `tools/list` result.
pub fn listed<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == json!(name))
}

pub fn ada() -> Principal {
    Principal::authenticated("ada")
}

pub fn bob() -> Principal {
    Principal::authenticated("bob")
}

/// Runs `edit` on `principal`'s stored state and writes it back (once: the world is single
/// threaded, so nothing else writes in between); the change carries the stored state.
pub fn edit_stored(
    store: &MemoryStore,
    principal: &Principal,
    edit: impl FnOnce(&mut PrincipalState) -> Result<PrincipalChange, mcpl_server::Error>,
) -> Result<PrincipalChange, mcpl_server::Error> {
    let stored = store.load_now(principal);
    let mut state = stored.state;
    let change = edit(Arc::make_mut(&mut state))?;
    let write = WriteSet {
        principal: principal.clone(),
        read: stored.version,
        state: Some(state.clone()),
    };
    match store.write_now(&write) {
        Written::Done { version } => Ok(change.with_state(Versioned { state, version })),
        Written::Conflict(_) => panic!("nothing else writes in the test world"),
    }
}
