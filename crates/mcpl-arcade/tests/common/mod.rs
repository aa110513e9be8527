//! An in-memory world for the arcade: the SDK's sans-IO sessions, scripted hosts, the
//! arcade's handlers run in place of the tokio driver, and a virtual clock.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use mcpl_arcade::{
    Arcade, ArcadeConfig, BotTurn, GameStore, GameStoreError, Games, MemoryGames, declarations,
};
use mcpl_protocol::jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use mcpl_server::{
    Call, CallKind, ConnectionId, Effect, MemoryStore, Outcome, Principal, Reply, Server,
    ServerConfig, Session, Update, WallClock,
};
use serde_json::{Value, json};

/// One scripted host connection.
pub struct Conn {
    pub principal: Principal,
    pub session: Session,
    pub written: Vec<Message>,
    pub taken: usize,
}

/// The server, the arcade, the hosts and the clock.
pub struct World {
    pub server: Server,
    pub store: Arc<MemoryStore>,
    pub arcade: Arcade,
    pub now: Instant,
    pub conns: Vec<Conn>,
    /// Bot moves owed, run by `run_bots` (the driver runs them once the call is committed).
    pub bot_turns: Vec<BotTurn>,
    next_id: i64,
}

/// A bot that plays quickly and never resigns, so tests stay fast and predictable.
pub fn quick_config() -> ArcadeConfig {
    let mut config = ArcadeConfig::default();
    config.bot.playouts = 64;
    config.bot.resign_below = None;
    config.hint_playouts = 32;
    config
}

/// A games store that behaves as an optimistic store on a conflict, every time: it runs each
/// step first on a throwaway copy, then again on the real games, and keeps the second run.
#[derive(Debug, Default)]
pub struct Rerunning {
    games: Mutex<Games>,
    /// How many times steps ran (twice per step).
    pub runs: AtomicUsize,
}

impl GameStore for Rerunning {
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError> {
        let mut games = self.games.lock().unwrap();
        let mut throwaway = games.clone();
        f(&mut throwaway);
        f(&mut games);
        self.runs.fetch_add(2, Ordering::Relaxed);
        Ok(())
    }
}

/// A games store that can be cut off: while `down`, every step fails without running.
#[derive(Debug, Default)]
pub struct Flaky {
    games: MemoryGames,
    pub down: AtomicBool,
}

impl GameStore for Flaky {
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError> {
        if self.down.load(Ordering::Relaxed) {
            return Err(GameStoreError("connection refused".to_owned()));
        }
        self.games.update(f)
    }
}

impl World {
    pub fn new(config: ArcadeConfig) -> Self {
        Self::with_games(config, Arc::new(MemoryGames::default()))
    }

    /// A world whose arcade keeps its games in `games`.
    pub fn with_games(config: ArcadeConfig, games: Arc<dyn GameStore>) -> Self {
        let now = Instant::now();
        let clock = WallClock::new(now, UNIX_EPOCH + Duration::from_secs(1_780_000_000));
        let catalog = declarations()
            .build()
            .expect("the arcade's declarations are valid");
        let store = Arc::new(MemoryStore::new());
        World {
            server: Server::with_store(catalog, ServerConfig::new(clock), store.clone()),
            store,
            arcade: Arcade::with_store(config, games).with_clock(clock),
            now,
            conns: Vec::new(),
            bot_turns: Vec::new(),
            next_id: 1,
        }
    }

    /// Connects a host for principal `id` with `toolHints` and a `pushEvents` grant.
    pub fn connect(&mut self, id: &str) -> usize {
        self.connect_with(id, true)
    }

    pub fn connect_with(&mut self, id: &str, hints: bool) -> usize {
        let principal = Principal::authenticated(id);
        let connection = ConnectionId(self.conns.len() as u64 + 1);
        let session = self.server.session(principal.clone(), connection, self.now);
        self.conns.push(Conn {
            principal,
            session,
            written: Vec::new(),
            taken: 0,
        });
        let c = self.conns.len() - 1;
        let mut mcpl = json!({"version": "0.5", "featureSets": true, "pushEvents": true});
        if hints {
            mcpl["toolHints"] = json!(true);
        }
        self.request(
            c,
            "initialize",
            json!({"protocolVersion": "2025-06-18",
                   "capabilities": {"experimental": {"mcpl": mcpl}},
                   "clientInfo": {"name": "arcade-test", "version": "1"}}),
        )
        .expect("initialize succeeds");
        self.notify(c, "notifications/initialized");
        self.request(
            c,
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"]}),
        )
        .expect("the grant is accepted");
        self.take(c);
        c
    }

    /// Connects alice and bob and opens a 9x9 game between them: alice's side as
    /// `alice_game`, bob's as `bob_game`. Returns their connections.
    pub fn alice_vs_bob(&mut self, alice_game: &str, bob_game: &str) -> (usize, usize) {
        let a = self.connect("alice");
        let b = self.connect("bob");
        self.open(a, alice_game, json!({"size": 9, "opponent": "bob"}))
            .expect("alice's side opens");
        self.open(b, bob_game, json!({"size": 9, "opponent": "alice"}))
            .expect("bob's side opens");
        (a, b)
    }

    pub fn notify(&mut self, c: usize, method: &str) {
        let msg = Message::Notification(Notification::new(method, None));
        self.conns[c].session.handle_message(self.now, msg);
        self.drive();
    }

    /// Sends a request, drives everything, and returns its answer.
    pub fn request(&mut self, c: usize, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let msg = Message::Request(Request::new(id.clone(), method, Some(params)));
        self.conns[c].session.handle_message(self.now, msg);
        self.drive();
        self.conns[c]
            .written
            .iter()
            .find_map(|m| match m {
                Message::Response(r) if r.id.as_ref() == Some(&id) => Some(r.outcome.clone()),
                _ => None,
            })
            .expect("the request was answered")
    }

    /// Calls a tool in `instance` (if given) and returns the result.
    pub fn call(&mut self, c: usize, tool: &str, args: Value, instance: Option<&str>) -> Value {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(i) = instance {
            params["_meta"] = json!({"mcpl/instance": i});
        }
        self.request(c, "tools/call", params)
            .expect("tools/call answers with a result")
    }

    pub fn open(&mut self, c: usize, instance: &str, options: Value) -> Result<Value, ErrorObject> {
        self.request(
            c,
            "toolsets/open",
            json!({"toolset": "go", "instance": instance, "options": options}),
        )
    }

    /// What the server wrote to `c` since the last take.
    pub fn take(&mut self, c: usize) -> Vec<Message> {
        let conn = &mut self.conns[c];
        let out = conn.written[conn.taken..].to_vec();
        conn.taken = conn.written.len();
        out
    }

    /// Commits an update for `principal` on the server's initiative and fans it out.
    pub fn apply(&mut self, principal: &Principal, update: Update) {
        let change = self
            .server
            .apply_now(&self.store, self.now, principal, &update)
            .expect("the arcade's updates fit its declarations");
        for c in &mut self.conns {
            c.session.handle_principal_change(self.now, &change);
        }
        self.drive();
    }

    /// Makes every bot move owed, as the driver's worker does.
    pub fn run_bots(&mut self) -> usize {
        let turns = std::mem::take(&mut self.bot_turns);
        let mut moved = 0;
        for turn in turns {
            let made = self.arcade.bot_turn(&turn, self.now);
            if let Some((principal, update)) = made.expect("the games store answers") {
                self.apply(&principal, update);
                moved += 1;
            }
        }
        moved
    }

    /// Moves the clock and ends idle games, as the driver's worker does.
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        let ends = self.arcade.expire_idle(self.now);
        for (principal, update) in ends.expect("the games store answers") {
            self.apply(&principal, update);
        }
    }

    /// Runs every session's effects until all are idle, running app calls in place.
    pub fn drive(&mut self) {
        loop {
            let mut progressed = false;
            for i in 0..self.conns.len() {
                while let Some(effect) = self.conns[i].session.poll_effect() {
                    progressed = true;
                    let Some(effect) =
                        self.conns[i]
                            .session
                            .answer_from(&self.store, self.now, effect)
                    else {
                        continue;
                    };
                    match effect {
                        Effect::Apply(principal, update) => {
                            let change = self
                                .server
                                .apply_now(&self.store, self.now, &principal, &update)
                                .expect("the arcade's updates fit its declarations");
                            for c in &mut self.conns {
                                c.session.handle_principal_change(self.now, &change);
                            }
                        }
                        Effect::Send(msg) => self.conns[i].written.push(msg),
                        Effect::Call(call) => self.complete(i, *call),
                        Effect::Publish(change) => {
                            for c in &mut self.conns {
                                c.session.handle_principal_change(self.now, &change);
                            }
                        }
                        _ => {}
                    }
                }
            }
            if !progressed {
                break;
            }
        }
    }

    fn complete(&mut self, i: usize, mut call: Call) {
        let ctx = &mut call.context;
        let reply = match &call.kind {
            CallKind::Tool { tool, args } => {
                let (result, turn) = self.arcade.call(ctx, tool, args, self.now);
                self.bot_turns.extend(turn);
                Reply::Tool(result)
            }
            CallKind::Open => Reply::Open(self.arcade.open(ctx, self.now)),
            CallKind::Close { disconnect } => Reply::Close(self.arcade.close(ctx, *disconnect)),
            other => panic!("unexpected call {other:?}"),
        };
        let outcome = Outcome {
            context: call.context,
            reply,
        };
        self.conns[i]
            .session
            .handle_call_done(self.now, call.id, outcome)
            .expect("the arcade's changes fit its declarations");
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

/// The pushes among `msgs`, as their params.
pub fn pushes(msgs: &[Message]) -> Vec<Value> {
    msgs.iter()
        .filter_map(|m| match m {
            Message::Request(r) if r.method == "push/event" => r.params.clone(),
            _ => None,
        })
        .collect()
}

/// The entry for `tool` in hint changes `hints` (in `instance`, if given).
pub fn tool_entry<'a>(hints: &'a Value, tool: &str, instance: Option<&str>) -> Option<&'a Value> {
    hints["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == tool && instance.is_none_or(|i| t["instance"] == i))
}

/// The legal-move enum a `play` entry's definition carries.
pub fn move_enum(entry: &Value) -> Vec<String> {
    entry["definition"]["inputSchema"]["properties"]["move"]["enum"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a result's content, or of a push's payload.
pub fn text_of(value: &Value) -> String {
    let content = if value["payload"].is_object() {
        &value["payload"]["content"]
    } else {
        &value["content"]
    };
    content
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}
