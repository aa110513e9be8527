//! The arcade's state and what every open, close and tool call does.
//!
//! This is sans-IO code over the SDK's [`Context`]: each handler reads who calls and where,
//! changes the games, and records what became true ("`play` is visible in `vs-bot` with these
//! moves", "your opponent's game ended") in the context. The SDK turns those records into
//! hint changes on the right carrier. Time comes in as `now`; nothing here reads a clock,
//! spawns a task or blocks on I/O. The bot's replies and idle timeouts are produced by
//! [`Arcade::bot_turn`] and [`Arcade::expire_idle`] as updates the driver applies.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcpl_protocol::mcp::CallToolResult;
use mcpl_server::{CloseReply, Context, Event, OpenReply, Principal, Scoped};
use serde_json::{Map, Value};

use crate::catalog::GO;
use crate::error::ArcadeError;
use crate::go::{Bot, BotConfig, Color, Move, Outcome, Played, Point};
use crate::lobby::{self, Record};
use crate::options::{GoOptions, Opponent};
use crate::table::{Seat, Table};

/// How the arcade plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArcadeConfig {
    /// The bot's settings (its seed is mixed with each game's number).
    pub bot: BotConfig,
    /// A game nobody moves in for this long ends with no result.
    pub idle_timeout: Duration,
    /// Playouts the `hint` tool spends.
    pub hint_playouts: u32,
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
        }
    }
}

/// A bot move owed after a player's move. The driver runs [`Arcade::bot_turn`] for it once
/// the player's call result (which hid `play`) is committed, so the bot's push comes after
/// it in rev order (§6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotTurn {
    /// The player the bot answers.
    pub principal: Principal,
    /// The player's instance.
    pub instance: String,
    pub(crate) table: u64,
    pub(crate) moves: usize,
}

/// A challenge that waits for the challenged agent to open its instance.
#[derive(Debug, Clone)]
pub(crate) struct Challenge {
    pub(crate) table: u64,
    pub(crate) from: Principal,
    pub(crate) to: Principal,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) tables: BTreeMap<u64, Table>,
    /// Joined seats: (agent, instance) to table.
    pub(crate) seats: HashMap<(Principal, String), u64>,
    pub(crate) challenges: Vec<Challenge>,
    pub(crate) standings: BTreeMap<String, Record>,
    pub(crate) next_table: u64,
}

impl State {
    pub(crate) fn add(&mut self, table: Table) -> u64 {
        self.next_table += 1;
        let id = self.next_table;
        for color in [Color::Black, Color::White] {
            if let Some((p, i)) = table.seat(color).joined() {
                self.seats.insert((p.clone(), i.to_owned()), id);
            }
        }
        self.tables.insert(id, table);
        id
    }

    /// Removes a table with its seats and challenges; counts the result if there is one.
    pub(crate) fn remove(&mut self, id: u64, outcome: Option<&Outcome>) -> Option<Table> {
        let table = self.tables.remove(&id)?;
        self.seats.retain(|_, t| *t != id);
        self.challenges.retain(|c| c.table != id);
        if let Some(outcome) = outcome {
            for color in [Color::Black, Color::White] {
                let record = self.standings.entry(table.seat(color).name()).or_default();
                match outcome.winner() {
                    None => record.draws += 1,
                    Some(w) if w == color => record.wins += 1,
                    Some(_) => record.losses += 1,
                }
            }
        }
        Some(table)
    }

    /// The caller's table in `instance` and the colour it plays there.
    pub(crate) fn seat_of(
        &self,
        principal: &Principal,
        instance: &str,
    ) -> Result<(u64, Color), ArcadeError> {
        let missing = || ArcadeError::NoSuchGame(instance.to_owned());
        let id = *self
            .seats
            .get(&(principal.clone(), instance.to_owned()))
            .ok_or_else(missing)?;
        let color = self.tables[&id]
            .color_of(principal, instance)
            .ok_or_else(missing)?;
        Ok((id, color))
    }
}

/// The arcade: every game and challenge, the standings, and the handlers.
#[derive(Debug)]
pub struct Arcade {
    config: ArcadeConfig,
    state: Mutex<State>,
}

/// States `play` (with this position's legal moves) and `pass` visible for the player to move.
pub(crate) fn show_turn(scope: &mut Scoped<'_>, table: &Table) {
    match table.play_definition() {
        Some(definition) => scope.define(definition).show("play"),
        None => scope.hide("play"),
    };
    scope.show("pass");
}

/// "You played D4, capturing 2." and the like.
pub(crate) fn describe(who: &str, played: &Played) -> String {
    let mut text = match played.turn.mv {
        Move::Play(point) => format!("{who} played {point}"),
        Move::Pass => format!("{who} passed"),
        Move::Resign => format!("{who} resigned"),
    };
    match played.turn.captured.len() {
        0 => {}
        1 => text.push_str(", capturing 1 stone"),
        n => text.push_str(&format!(", capturing {n} stones")),
    }
    text.push('.');
    text
}

/// An instance name for a game against `id`: `vs-` and the id's name-safe characters.
pub(crate) fn instance_for(id: &str) -> String {
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(28)
        .collect();
    if safe.is_empty() {
        "vs-agent".to_owned()
    } else {
        format!("vs-{safe}")
    }
}

impl Arcade {
    /// An arcade with no games yet.
    pub fn new(config: ArcadeConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::default()),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ArcadeConfig {
        &self.config
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere leaves whole values behind; carry on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many games are running or waiting for a challenged agent.
    pub fn games(&self) -> usize {
        self.lock().tables.len()
    }

    /// The text board of `principal`'s game in `instance`.
    pub fn board(&self, principal: &Principal, instance: &str) -> Option<String> {
        let state = self.lock();
        let (id, _) = state.seat_of(principal, instance).ok()?;
        Some(state.tables[&id].game().render())
    }

    pub(crate) fn bot_config(&self, table: u64) -> BotConfig {
        BotConfig {
            seed: self.config.bot.seed ^ table.wrapping_mul(0x9e37_79b9),
            ..self.config.bot
        }
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
        let mut state = self.lock();
        if state.seats.contains_key(&(me.clone(), instance.clone())) {
            return OpenReply::refuse(format!("you already have a game named `{instance}`"));
        }
        let size = options.size;
        match options.opponent.clone() {
            Opponent::Bot => {
                let id = state.next_table + 1;
                let black = Seat::Agent {
                    principal: me,
                    instance: Some(instance),
                };
                let table = Table::new(options, black, Seat::Bot, self.bot_config(id), now);
                let mut here = ctx.here();
                show_turn(&mut here, &table);
                here.show("board").show("resign");
                let text = format!(
                    "New {size} game against the bot, komi {}. You are Black (X); your move.\n\n{}",
                    table.game().komi(),
                    table.game().render()
                );
                state.add(table);
                OpenReply::text(text).title(format!("Go vs bot ({size})"))
            }
            Opponent::Agent(who) => {
                match self.accept_or_challenge(&mut state, ctx, &instance, options, &who, now) {
                    Ok(reply) => reply,
                    Err(e) => OpenReply::refuse(e.to_string()),
                }
            }
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
        let mut state = self.lock();
        let Ok((id, color)) = state.seat_of(&me, &instance) else {
            return CloseReply::text(format!("No game was running in `{instance}`."));
        };
        let table = &state.tables[&id];
        let opponent = table.seat(color.opponent()).clone();
        if !table.started() {
            state.remove(id, None);
            if let Some(them) = opponent.principal() {
                ctx.update_for(them)
                    .event(Event::text(format!("{} withdrew the challenge.", me.id())));
            }
            return CloseReply::text(format!("Challenge to {} withdrawn.", opponent.name()));
        }
        let outcome = Outcome::Resigned {
            winner: color.opponent(),
        };
        let how = if disconnect {
            "disconnected"
        } else {
            "left the game"
        };
        if let Some((them, their_instance)) = opponent.joined() {
            let reason = format!("{} {how}; you win.", me.id());
            let (them, their_instance) = (them.clone(), their_instance.to_owned());
            let update = ctx.update_for(&them);
            update.instance(GO, &their_instance).end(reason.clone());
            update.event(Event::text(reason).about(GO, Some(&their_instance)));
        }
        state.remove(id, Some(&outcome));
        let you = if disconnect {
            "You disconnected"
        } else {
            "You left"
        };
        CloseReply::text(format!(
            "{you} and forfeit the game; {} wins.",
            opponent.name()
        ))
    }

    /// Runs a tool. Bad input is a tool error that changes nothing, and so is a call the host
    /// already cancelled. The second value is a bot move the driver owes the caller once
    /// this result is committed.
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
            "board" => self.board_tool(ctx),
            "challenge" => self.challenge_tool(ctx, args, now).map(|t| (t, None)),
            "standings" => Ok((lobby::standings(&self.lock()), None)),
            "games" => Ok((lobby::games(&self.lock(), ctx.principal()), None)),
            "rules" => Ok((lobby::RULES.to_owned(), None)),
            "hint" => self.hint_tool(ctx.principal(), args).map(|t| (t, None)),
            other => Err(ArcadeError::UnknownTool(other.to_owned())),
        };
        match result {
            Ok((text, turn)) => (CallToolResult::text(text), turn),
            Err(e) => (CallToolResult::error(e.to_string()), None),
        }
    }

    fn instance_of(ctx: &Context) -> Result<String, ArcadeError> {
        ctx.instance()
            .map(|i| i.as_str().to_owned())
            .ok_or_else(|| ArcadeError::NoSuchGame("(none named)".to_owned()))
    }

    fn board_tool(&self, ctx: &Context) -> Result<(String, Option<BotTurn>), ArcadeError> {
        let instance = Self::instance_of(ctx)?;
        let state = self.lock();
        let (id, color) = state.seat_of(ctx.principal(), &instance)?;
        let table = &state.tables[&id];
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
        Ok((
            format!(
                "You are {color} ({}). {status}\n\n{}",
                color.stone_char(),
                table.game().render()
            ),
            None,
        ))
    }

    fn move_tool(
        &self,
        ctx: &mut Context,
        tool: &str,
        args: &Map<String, Value>,
        now: Instant,
    ) -> Result<(String, Option<BotTurn>), ArcadeError> {
        let instance = Self::instance_of(ctx)?;
        let me = ctx.principal().clone();
        let mut state = self.lock();
        let (id, color) = state.seat_of(&me, &instance)?;
        let table = state
            .tables
            .get_mut(&id)
            .expect("a seat names a live table");
        let mv = match tool {
            "pass" => Move::Pass,
            "resign" => Move::Resign,
            _ => {
                let text = args.get("move").and_then(Value::as_str).ok_or_else(|| {
                    ArcadeError::BadInput {
                        what: "move",
                        why: "`move` must be a point such as \"D4\"".to_owned(),
                    }
                })?;
                Move::Play(Point::parse(text, table.options().size)?)
            }
        };
        let played = table.play(color, mv, now)?;
        let mut text = describe("You", &played);
        let board = table.game().render();
        let opponent = table.seat(color.opponent()).clone();

        if let Some(outcome) = played.outcome {
            let mine = table.result_for(color, &outcome);
            ctx.here().end(mine.clone());
            if let Some((them, their_instance)) = opponent.joined() {
                let theirs = table.result_for(color.opponent(), &outcome);
                let (them, their_instance) = (them.clone(), their_instance.to_owned());
                let update = ctx.update_for(&them);
                update.instance(GO, &their_instance).end(theirs.clone());
                update.event(
                    Event::text(format!(
                        "{} {theirs}\n\n{board}",
                        describe(me.id(), &played)
                    ))
                    .about(GO, Some(&their_instance)),
                );
            }
            state.remove(id, Some(&outcome));
            text = format!("{text} {mine}\n\n{board}");
            return Ok((text, None));
        }

        ctx.here().hide("play").hide("pass");
        let turn = match &opponent {
            Seat::Bot => {
                text.push_str(" The bot is thinking.");
                Some(BotTurn {
                    principal: me.clone(),
                    instance: instance.clone(),
                    table: id,
                    moves: table.game().history().len(),
                })
            }
            Seat::Agent { .. } => {
                if let Some((them, their_instance)) = opponent.joined() {
                    let (them, their_instance) = (them.clone(), their_instance.to_owned());
                    let update = ctx.update_for(&them);
                    show_turn(&mut update.instance(GO, &their_instance), table);
                    update.event(
                        Event::text(format!(
                            "{} Your move.\n\n{board}",
                            describe(me.id(), &played)
                        ))
                        .about(GO, Some(&their_instance)),
                    );
                }
                text.push_str(&format!(" Waiting for {}.", opponent.name()));
                None
            }
        };
        Ok((format!("{text}\n\n{board}"), turn))
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
        // Think on a copy, without holding the arcade.
        let (id, position) = {
            let state = self.lock();
            let (id, color) = state.seat_of(principal, game)?;
            let table = &state.tables[&id];
            if table.game().to_move() != color || !table.started() {
                return Err(ArcadeError::NotYourTurn(
                    table.seat(color.opponent()).name(),
                ));
            }
            (id, table.game().clone())
        };
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

    /// The lobby's standings, by player id.
    pub fn standings(&self) -> BTreeMap<String, Record> {
        self.lock().standings.clone()
    }
}
