//! The arcade on the SDK's tokio driver: the [`App`] that runs the handlers, and the worker
//! that makes the bot's moves and ends idle games.
//!
//! Ordering (§6.1, §6.2): a player's `play` result hides `play` and `pass` under rev n, and
//! the bot's reply shows them again on a push, which is "something else's" consequence and
//! must take rev n+1. So the bot's turn is handed to the worker from
//! [`Context::after_commit`]: the SDK runs that hook only once the call's result is queued
//! for the transport and its changes are committed, and everything the worker applies later
//! is queued after it.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcpl_conformance_fixture::{self as conformance_fixture, Fixture};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{
    CloseReply, Context, MemoryStore, OpenReply, Principal, PrincipalStore, Server, ServerConfig,
    WallClock,
};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::arcade::{Arcade, ArcadeConfig, BotTurn};
use crate::catalog;
use crate::error::ArcadeError;
use crate::store::{GameStore, MemoryGames};

fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// The arcade as an SDK app: handlers run on the [`Arcade`]; a bot move owed goes to the
/// worker from the call's [`Context::after_commit`] hook; `hint` thinks on a blocking
/// thread. Started with [`start_conformance`], the conformance fixture's tools and toolsets
/// go to the SDK's [`Fixture`] instead.
#[derive(Debug)]
pub struct ArcadeApp {
    arcade: Arc<Arcade>,
    bot_turns: mpsc::UnboundedSender<BotTurn>,
    fixture: Option<Fixture>,
}

impl ArcadeApp {
    /// The games behind the app.
    pub fn arcade(&self) -> &Arc<Arcade> {
        &self.arcade
    }

    /// The conformance fixture, when `toolset` (or, without one, `tool`) is its own.
    fn fixture_for(&self, toolset: Option<&str>, tool: Option<&str>) -> Option<&Fixture> {
        let owned = match (toolset, tool) {
            (Some(toolset), _) => conformance_fixture::owns_toolset(toolset),
            (None, Some(tool)) => conformance_fixture::owns_tool(tool),
            (None, None) => false,
        };
        self.fixture.as_ref().filter(|_| owned)
    }
}

impl App for ArcadeApp {
    async fn call_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: Map<String, Value>,
    ) -> CallToolResult {
        if let Some(fixture) = self.fixture_for(None, Some(tool)) {
            return fixture.call_tool(ctx, tool, args).await;
        }
        if tool == "hint" {
            // The hint thinks for a while: off the connection's task.
            let (arcade, who) = (self.arcade.clone(), ctx.principal().clone());
            let thinking = tokio::task::spawn_blocking(move || arcade.hint(&who, &args));
            return thinking.await.unwrap_or_else(|e| {
                tracing::error!(error = %e, "hint failed");
                CallToolResult::error("the hint failed inside the server")
            });
        }
        let (result, turn) = self.arcade.call(ctx, tool, &args, now());
        if let Some(turn) = turn {
            let worker = self.bot_turns.clone();
            // §6.1: the bot starts thinking only once this result has its rev and is queued.
            // The worker stops only with the runtime, so a failed send means nobody waits.
            ctx.after_commit(move || {
                let _ = worker.send(turn);
            });
        }
        result
    }

    async fn open(&self, ctx: &mut Context) -> OpenReply {
        let toolset = ctx.toolset().map(|t| t.as_str().to_owned());
        match self.fixture_for(toolset.as_deref(), None) {
            Some(fixture) => fixture.open(ctx),
            None => self.arcade.open(ctx, now()),
        }
    }

    async fn close(&self, ctx: &mut Context, disconnect: bool) -> CloseReply {
        let toolset = ctx.toolset().map(|t| t.as_str().to_owned());
        match self.fixture_for(toolset.as_deref(), None) {
            Some(_) => CloseReply::default(),
            None => self.arcade.close(ctx, disconnect),
        }
    }
}

/// A running arcade: the SDK runtime (serve connections with it: `serve`, `serve_stdio`,
/// `serve_ws`) and the worker task, which stops when this is dropped.
pub struct ArcadeServer {
    runtime: Runtime<ArcadeApp>,
    worker: JoinHandle<()>,
}

impl std::fmt::Debug for ArcadeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArcadeServer").finish_non_exhaustive()
    }
}

impl Drop for ArcadeServer {
    fn drop(&mut self) {
        self.worker.abort();
    }
}

/// Where an arcade keeps its state: the SDK's principal state and the games.
pub struct Backing {
    /// Every principal's toolsets, instances and ended records.
    pub principals: Arc<dyn PrincipalStore>,
    /// Every game, seat, challenge and standing.
    pub games: Arc<dyn GameStore>,
}

impl Default for Backing {
    /// Both in this process.
    fn default() -> Self {
        Self {
            principals: Arc::new(MemoryStore::new()),
            games: Arc::new(MemoryGames::default()),
        }
    }
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backing").finish_non_exhaustive()
    }
}

/// Builds the arcade and starts its worker; call inside a tokio runtime. Serve connections
/// with [`ArcadeServer::runtime`] (`serve`, `serve_stdio`) or [`ArcadeServer::serve_stdio`].
pub fn start(config: ArcadeConfig) -> Result<ArcadeServer, ArcadeError> {
    start_with(config, Backing::default(), false)
}

/// [`start`], with the conformance suite's fixture contract
/// ([`mcpl_conformance_fixture`]) declared beside the games, so that
/// `mcpl conformance server -- mcpl arcade --conformance` can drive every server vector.
/// The games are unchanged; the `cf-*` toolsets and `cf_*` tools are the fixture's.
pub fn start_conformance(config: ArcadeConfig) -> Result<ArcadeServer, ArcadeError> {
    start_with(config, Backing::default(), true)
}

/// [`start`] (or, with `conformance`, [`start_conformance`]) on `backing`: several replicas
/// whose backings share one engine serve one arcade, and any of them can serve a game's
/// next move.
pub fn start_with(
    config: ArcadeConfig,
    backing: Backing,
    conformance: bool,
) -> Result<ArcadeServer, ArcadeError> {
    let base = catalog::declarations();
    let catalog = if conformance {
        Fixture::catalog(&base, true)?
    } else {
        base.clone().build()?
    };
    let clock = WallClock::new(now(), SystemTime::now());
    let server = Server::with_store(catalog, ServerConfig::new(clock), backing.principals);
    let handle = Handle::new(server);
    let (tx, rx) = mpsc::unbounded_channel();
    let arcade = Arcade::with_store(config, backing.games).with_clock(clock);
    let app = ArcadeApp {
        arcade: Arc::new(arcade),
        bot_turns: tx,
        fixture: conformance.then(|| Fixture::new(base, handle.clone())),
    };
    let worker = tokio::spawn(work(handle.clone(), app.arcade.clone(), rx));
    let runtime = Runtime::new(handle, app);
    Ok(ArcadeServer { runtime, worker })
}

impl ArcadeServer {
    /// The SDK runtime: `serve` a transport per connection, `apply` updates.
    pub fn runtime(&self) -> &Runtime<ArcadeApp> {
        &self.runtime
    }

    /// The SDK handle behind the runtime (for a fan-out between replicas, say).
    pub fn handle(&self) -> &Handle {
        self.runtime.handle()
    }

    /// The games.
    pub fn arcade(&self) -> &Arc<Arcade> {
        self.runtime.app().arcade()
    }

    /// Serves stdin and stdout for one local principal (`mcpl arcade` without `--listen`).
    pub async fn serve_stdio(&self, principal: Principal) -> Result<(), ArcadeError> {
        Ok(self.runtime.serve_stdio(principal).await?)
    }
}

/// Builds the arcade with default settings and serves stdio for the principal `local`: what
/// `mcpl arcade` runs by default.
pub async fn serve_stdio() -> Result<(), ArcadeError> {
    let server = start(ArcadeConfig::default())?;
    server.serve_stdio(Principal::authenticated("local")).await
}

/// The worker: bot moves as they are owed, idle games as they time out.
async fn work(handle: Handle, arcade: Arc<Arcade>, mut turns: mpsc::UnboundedReceiver<BotTurn>) {
    let mut idle_check = tokio::time::interval(Duration::from_secs(30));
    loop {
        tokio::select! {
            turn = turns.recv() => match turn {
                Some(turn) => {
                    tokio::spawn(bot_move(handle.clone(), arcade.clone(), turn));
                }
                None => return,
            },
            _ = idle_check.tick() => match arcade.expire_idle(now()) {
                Ok(ends) => {
                    for (principal, update) in ends {
                        if let Err(e) = handle.apply(&principal, update) {
                            tracing::warn!(error = %e, "idle end rejected");
                        }
                    }
                }
                // Nothing was ended; the next tick tries again.
                Err(e) => tracing::warn!(error = %e, "idle games not checked"),
            }
        }
    }
}

/// Makes the bot's move owed by `turn`; the turn reached the worker only after the player's
/// call was committed (see the module doc), so no waiting is needed here.
async fn bot_move(handle: Handle, arcade: Arc<Arcade>, turn: BotTurn) {
    let job = turn.clone();
    let reply = tokio::task::spawn_blocking(move || arcade.bot_turn(&job, now())).await;
    match reply {
        Ok(Ok(Some((principal, update)))) => {
            if let Err(e) = handle.apply(&principal, update) {
                tracing::warn!(error = %e, "bot move rejected");
            }
        }
        Ok(Ok(None)) => {}
        // The game waits for the move and ends by the idle timeout if nobody moves.
        Ok(Err(e)) => tracing::warn!(error = %e, "bot move not made"),
        Err(e) => tracing::error!(error = %e, "bot move failed"),
    }
}
