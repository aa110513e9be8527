//! The arcade's handlers: what every open, close and tool call does.
//!
//! This is sans-IO code over the SDK's [`Context`]: each handler reads who calls and where,
//! runs one step over the games in their [`GameStore`] (`play`, `challenge`), and only after
//! the step returned records what became true ("`play` is visible in `vs-bot` with these
//! moves", "your opponent's game ended") in the context. The SDK turns those records into
//! hint changes on the right carrier. Time comes in as `now`; nothing here spawns a task or
//! blocks on I/O beyond the store. The bot's replies and idle timeouts are produced by
//! [`Arcade::bot_turn`] and [`Arcade::expire_idle`] as updates the driver applies.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::{CloseReply, Context, OpenReply, Principal, WallClock};
use serde_json::{Map, Value};

use crate::catalog::GO;
use crate::challenge::{accept_or_challenge, challenge_args, challenge_step};
use crate::error::ArcadeError;
use crate::go::{Bot, BotConfig, Move};
use crate::lobby::{self, Record};
use crate::options::{GoOptions, Opponent};
use crate::play::{Wanted, leave, open_vs_bot, play_move};
use crate::store::{GameStore, GameStoreError, Games, MemoryGames, with_games};
pub use crate::tell::BotTurn;
use crate::tell::Tell;

/// How the arcade plays.
#[derive(Debug, Clone, PartialEq)]
pub struct ArcadeConfig {
    /// The bot's settings (its seed is mixed with each game's number).
    pub bot: BotConfig,
    /// A game nobody moves in for this long ends with no result.
    pub idle_timeout: Duration,
    /// Playouts the `hint` tool spends.
    pub hint_playouts: u32,
    /// The agents that exist (the operator's principals), so `challenge` can refuse a name
    /// nobody has; `None` when the server cannot know (stdio, a connection per principal).
    pub agents: Option<std::collections::BTreeSet<String>>,
}

impl Default for ArcadeConfig {
    fn default() -> Self {
        Self {
            bot: BotConfig {
                playouts: 1500,
                ..BotConfig::default()
            },
            idle_timeout: Duration::from_secs(30 * 60),
            hint_playouts: 400,
            agents: None,
        }
    }
}

/// The arcade: the handlers over a [`GameStore`] that holds every game and standing.
pub struct Arcade {
    config: ArcadeConfig,
    games: Arc<dyn GameStore>,
    /// Turns the driver's `now` into the wall-clock time the games store.
    clock: WallClock,
}

impl std::fmt::Debug for Arcade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arcade")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Arcade {
    /// An arcade with no games yet, keeping them in this process.
    pub fn new(config: ArcadeConfig) -> Self {
        Self::with_store(config, Arc::new(MemoryGames::default()))
    }

    /// An arcade over the games in `games` (shared with other replicas, say). Its wall
    /// clock is anchored when it is built; a driver with its own anchor passes it with
    /// [`with_clock`](Self::with_clock).
    pub fn with_store(config: ArcadeConfig, games: Arc<dyn GameStore>) -> Self {
        Self {
            config,
            games,
            clock: WallClock::new(Instant::now(), SystemTime::now()),
        }
    }

    /// Uses `clock` to turn `now` into wall-clock time (the server's own clock, say).
    pub fn with_clock(mut self, clock: WallClock) -> Self {
        self.clock = clock;
        self
    }

    /// The settings.
    pub fn config(&self) -> &ArcadeConfig {
        &self.config
    }

    /// Where the games live.
    pub fn store(&self) -> &Arc<dyn GameStore> {
        &self.games
    }

    /// The wall-clock time `now` stands for.
    pub(crate) fn wall(&self, now: Instant) -> SystemTime {
        self.clock.wall(now)
    }

    /// Runs one step over the games; a store out of reach is an error that changed nothing.
    pub(crate) fn step<T>(
        &self,
        f: impl FnMut(&mut Games) -> Result<(T, Tell), ArcadeError>,
    ) -> Result<(T, Tell), ArcadeError> {
        with_games(&*self.games, f)?
    }

    /// Edits the games in one step whose value is all it produces.
    pub(crate) fn edit<T>(&self, f: impl FnMut(&mut Games) -> T) -> Result<T, GameStoreError> {
        with_games(&*self.games, f)
    }

    /// Reads the games.
    pub(crate) fn read<T>(&self, mut f: impl FnMut(&Games) -> T) -> Result<T, GameStoreError> {
        with_games(&*self.games, |games| f(games))
    }

    /// How many games are running or waiting for a challenged agent.
    pub fn games(&self) -> Result<usize, GameStoreError> {
        self.read(Games::len)
    }

    /// The text board of `principal`'s game in `instance`, if it has one.
    pub fn board(
        &self,
        principal: &Principal,
        instance: &str,
    ) -> Result<Option<String>, GameStoreError> {
        self.read(|games| {
            let (id, _) = games.seat_of(principal, instance).ok()?;
            Some(games.table(id)?.game().render())
        })
    }

    /// The lobby's standings, by player id.
    pub fn standings(&self) -> Result<BTreeMap<String, Record>, GameStoreError> {
        self.read(|games| games.standings().clone())
    }

    /// The bot's settings for table `table` (its seed mixed with the table's number).
    pub(crate) fn bot_config(&self, table: u64) -> BotConfig {
        BotConfig {
            seed: self.config.bot.seed ^ table.wrapping_mul(0x9e37_79b9),
            ..self.config.bot
        }
    }

    /// A bot for the move after `moves` moves at `table`: a fresh one per turn (bots are not
    /// stored), with the number of moves mixed into its seed so its turns differ.
    pub(crate) fn bot_for(&self, table: u64, moves: usize) -> Bot {
        let config = self.bot_config(table);
        Bot::new(BotConfig {
            seed: config.seed ^ (moves as u64).wrapping_mul(0x85eb_ca6b_27d4_eb4f),
            ..config
        })
    }

    /// Opens a game (`go`) or the lobby. A game against the bot starts at once with the
    /// caller as Black; a game against an agent either accepts that agent's pending challenge
    /// (the caller plays White) or challenges it (the caller plays Black and waits).
    pub fn open(&self, ctx: &mut Context, now: Instant) -> OpenReply {
        if ctx.toolset().map(|t| t.as_str()) != Some(GO) {
            return OpenReply::text("The lobby is open: `standings` and `games`.");
        }
        let Some(instance) = ctx.instance().map(|i| i.as_str().to_owned()) else {
            return OpenReply::refuse("a game of Go needs an instance name");
        };
        let options = match GoOptions::from_json(ctx.options()) {
            Ok(options) => options,
            Err(e) => return OpenReply::refuse(e.to_string()),
        };
        let me = ctx.principal().clone();
        let now = self.wall(now);
        let opened = self.step(|games| {
            if games.has_seat(&me, &instance) {
                return Err(ArcadeError::GameExists(instance.clone()));
            }
            match &options.opponent {
                Opponent::Bot => Ok(open_vs_bot(games, &me, &instance, &options, now)),
                Opponent::Agent(who) => {
                    accept_or_challenge(games, &me, &instance, &options, who, now)
                }
            }
        });
        match opened {
            Ok((reply, tell)) => {
                tell.apply(ctx);
                reply
            }
            Err(e) => OpenReply::refuse(e.to_string()),
        }
    }

    /// Closes the lobby (nothing to do) or leaves a game: a running game is forfeited and the
    /// opponent's instance ends with a record; a challenge nobody accepted is withdrawn.
    pub fn close(&self, ctx: &mut Context, disconnect: bool) -> CloseReply {
        if ctx.toolset().map(|t| t.as_str()) != Some(GO) {
            return CloseReply::text("The lobby is closed.");
        }
        let Some(instance) = ctx.instance().map(|i| i.as_str().to_owned()) else {
            return CloseReply::text("No game was open.");
        };
        let me = ctx.principal().clone();
        match self.step(|games| Ok(leave(games, &me, &instance, disconnect))) {
            Ok((reply, tell)) => {
                tell.apply(ctx);
                reply
            }
            // The instance closes anyway; the game stays until it times out.
            Err(e) => CloseReply::text(format!(
                "You left `{instance}`, but the game could not be ended: {e}."
            )),
        }
    }

    /// Runs a tool. Bad input is a tool error that changes nothing, and so is a call the host
    /// already cancelled or a games store out of reach. The second value is a bot move the
    /// driver owes the caller once this result is committed.
    pub fn call(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: &Map<String, Value>,
        now: Instant,
    ) -> (CallToolResult, Option<BotTurn>) {
        if ctx.is_cancelled() {
            // MCP: the host withdrew the request before we ran it, so nothing is done (and
            // with nothing recorded, no `tools/hints` follow either). The result is not sent.
            return (
                CallToolResult::error(format!("the call to `{tool}` was cancelled")),
                None,
            );
        }
        let result = match tool {
            "play" | "pass" | "resign" => self.move_tool(ctx, tool, args, now),
            other => self
                .text_tool(ctx, other, args, now)
                .map(|text| (text, None)),
        };
        match result {
            Ok((text, turn)) => (CallToolResult::text(text), turn),
            Err(e) => (CallToolResult::error(e.to_string()), None),
        }
    }

    /// Every tool but the moves: its answer is a text.
    fn text_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: &Map<String, Value>,
        now: Instant,
    ) -> Result<String, ArcadeError> {
        let me = ctx.principal().clone();
        match tool {
            "board" => self.board_tool(ctx),
            "challenge" => self.challenge_tool(ctx, args, now),
            "standings" => Ok(self.read(lobby::standings)?),
            "games" => Ok(self.read(|g| lobby::games(g, &me))?),
            "rules" => Ok(lobby::RULES.to_owned()),
            "hint" => self.hint_tool(&me, args),
            other => Err(ArcadeError::UnknownTool(other.to_owned())),
        }
    }

    fn instance_of(ctx: &Context) -> Result<String, ArcadeError> {
        ctx.instance()
            .map(|i| i.as_str().to_owned())
            .ok_or_else(|| ArcadeError::NoSuchGame("(none named)".to_owned()))
    }

    fn board_tool(&self, ctx: &Context) -> Result<String, ArcadeError> {
        let instance = Self::instance_of(ctx)?;
        self.read(|games| {
            let (id, color) = games.seat_of(ctx.principal(), &instance)?;
            let table = games.table(id).expect("a seat names a live table");
            let status = if !table.started() {
                format!(
                    "Waiting for {} to accept.",
                    table.seat(color.opponent()).name()
                )
            } else if table.game().to_move() == color {
                "Your move.".to_owned()
            } else {
                format!("Waiting for {}.", table.seat(color.opponent()).name())
            };
            Ok(format!(
                "You are {color} ({}). {status}\n\n{}",
                color.stone_char(),
                table.game().render()
            ))
        })?
    }

    /// `play`, `pass` and `resign`: the move in one step, then its news for both players.
    fn move_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: &Map<String, Value>,
        now: Instant,
    ) -> Result<(String, Option<BotTurn>), ArcadeError> {
        let instance = Self::instance_of(ctx)?;
        let me = ctx.principal().clone();
        let now = self.wall(now);
        let wanted = match tool {
            "pass" => Wanted::Move(Move::Pass),
            "resign" => Wanted::Move(Move::Resign),
            _ => Wanted::Point(args.get("move").and_then(Value::as_str)),
        };
        let (reply, tell) = self.step(|games| play_move(games, &me, &instance, wanted, now))?;
        tell.apply(ctx);
        Ok(reply)
    }

    /// The `hint` tool for `principal`: what the bot would play in the game `args` names.
    /// It reads no context and records no change, so a driver may run it off the
    /// connection's task (it thinks for `hint_playouts` playouts).
    pub fn hint(&self, principal: &Principal, args: &Map<String, Value>) -> CallToolResult {
        match self.hint_tool(principal, args) {
            Ok(text) => CallToolResult::text(text),
            Err(e) => CallToolResult::error(e.to_string()),
        }
    }

    fn hint_tool(
        &self,
        principal: &Principal,
        args: &Map<String, Value>,
    ) -> Result<String, ArcadeError> {
        let game =
            args.get("game")
                .and_then(Value::as_str)
                .ok_or_else(|| ArcadeError::BadInput {
                    what: "game",
                    why: "name one of your games by its instance, such as \"vs-bot\"".to_owned(),
                })?;
        // Think on a copy, outside any store step.
        let (id, position) = self.read(|games| {
            let (id, color) = games.seat_of(principal, game)?;
            let table = games.table(id).expect("a seat names a live table");
            if table.game().to_move() != color || !table.started() {
                return Err(ArcadeError::NotYourTurn(
                    table.seat(color.opponent()).name(),
                ));
            }
            Ok((id, table.game().clone()))
        })??;
        let mut bot = Bot::new(BotConfig {
            playouts: self.config.hint_playouts,
            resign_below: None,
            ..self.bot_config(id)
        });
        let decision = bot.choose(&position);
        Ok(format!(
            "The bot would {} (it estimates your chances at {:.0}%).",
            match decision.mv {
                Move::Play(point) => format!("play {point}"),
                Move::Pass => "pass".to_owned(),
                Move::Resign => "resign".to_owned(),
            },
            100.0 * decision.win_rate
        ))
    }
}

impl Arcade {
    /// The `challenge` tool: opens the caller's side of a new game against `who` (Black,
    /// waiting) and challenges them.
    pub(crate) fn challenge_tool(
        &self,
        ctx: &mut Context,
        args: &Map<String, Value>,
        now: Instant,
    ) -> Result<String, ArcadeError> {
        let (who, size) = challenge_args(args)?;
        let me = ctx.principal().clone();
        if who == me.id() {
            return Err(ArcadeError::SelfChallenge);
        }
        if let Some(agents) = &self.config.agents
            && !agents.contains(who)
        {
            return Err(ArcadeError::BadInput {
                what: "who",
                why: format!(
                    "no agent `{}` plays here; challenge an agent by its id",
                    mcpl_protocol::clip::clip(who)
                ),
            });
        }
        let now = self.wall(now);
        let (text, tell) = self.step(|games| challenge_step(games, &me, who, size, now))?;
        tell.apply(ctx);
        Ok(text)
    }
}
