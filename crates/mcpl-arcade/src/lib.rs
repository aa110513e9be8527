//! The arcade: the example MCPL games server, built on `mcpl-server`.
//!
//! It serves Go as an RFC-014 toolset with instances: each game is an instance of `go`
//! opened with `{size, opponent?, komi?}`, whose `play` tool carries that game's legal moves
//! as an enum in a per-instance definition (§5.5). After your move `play` and `pass` turn
//! invisible; the bot's (or the other agent's) move arrives as a push that shows them again
//! (§6.2). The static tool `challenge` invites another agent, who gets a push with a
//! suggestion to open its side (§7). The default-open `lobby` toolset and the undeclared
//! `tutor` group (§5.4) give every RFC path a real user. Games that end without a close
//! (the bot resigns, the opponent leaves, an idle timeout) end their instances with `ended`
//! records (§5.3).
//!
//! The Go engine ([`go`]) and the handlers ([`Arcade`]) are sans-IO: time comes in as `now`,
//! and changes leave as records in the SDK's `Context` or as `Update`s. Only [`serve`] uses
//! tokio.
//!
//! Every game lives in a [`GameStore`] as one serializable [`Games`] value: in this process
//! ([`MemoryGames`], the default) or shared by several replicas (`RedisGames`, feature
//! `redis`: a key per game), so that any replica can serve a game's next move. Each handler is one re-runnable step over the games ([`with_games`])
//! that returns what to tell; the handler records it in the `Context` after the step.
//!
//! # Running it
//!
//! [`serve_stdio`] builds the arcade with default settings and serves stdin/stdout for the
//! principal `local` (`mcpl arcade`). For anything else, [`start`] returns an
//! [`ArcadeServer`] (call it inside a tokio runtime; [`start_with`] takes a [`Backing`] of
//! other stores); its `runtime()` is the SDK's
//! `Runtime`, with `serve` for any transport and `serve_ws` for WebSocket with a
//! bearer-token identity (`mcpl arcade --listen ADDR`). [`start_conformance`] adds the
//! conformance suite's fixture contract (`mcpl_conformance_fixture`) beside the
//! games, for `mcpl conformance server -- mcpl arcade --conformance`.
//!
//! # Layout
//!
//! - [`go`]: a self-contained Go engine (board, rules with positional superko, area scoring,
//!   text board) and an MCTS bot. It knows nothing of MCPL.
//! - `options`: [`GoOptions`], the `go` toolset's options and their schema.
//! - `table`: [`Table`], one game with its seats, turn and last activity: the game-level API.
//! - `record`: the stored form of a table (options, seats, moves as text), replayed on read.
//! - `seat`: [`Seat`], who sits on one side of a table.
//! - `store`: [`Games`], every table and standing ([`Record`]); [`GameStore`] and
//!   [`MemoryGames`].
//! - `redis_games` (feature `redis`): `RedisGames`, a key per game, and `start_on_redis`.
//! - `tell`: what a step tells the SDK, recorded during the step and applied after it, and
//!   [`BotTurn`], a bot move owed.
//! - `arcade`: [`Arcade`], the handlers: what each open, close and tool does.
//! - `play`: the steps of one game: opening against the bot, a move, leaving.
//! - `challenge`: games between two agents: challenges, suggestions and accepting.
//! - `initiative`: what the server does on its own: the bot's moves and idle timeouts.
//! - `lobby`: the lobby's and tutor's texts, and how moves and instances are named.
//! - `catalog`: [`declarations`], the tools and toolsets the arcade declares.
//! - [`serve`]: the tokio side: [`ArcadeApp`] for the SDK driver, the worker for bot moves
//!   and idle timeouts, [`Backing`] and [`start_with`], and [`serve_stdio`] for `mcpl arcade`.
//! - `error`: [`ArcadeError`].

mod arcade;
mod catalog;
mod challenge;
mod error;
pub mod go;
mod initiative;
mod lobby;
mod options;
mod play;
mod record;
#[cfg(feature = "redis")]
mod redis_games;
mod seat;
pub mod serve;
mod store;
mod table;
mod tell;

pub use arcade::{Arcade, ArcadeConfig};
pub use catalog::{GO, LOBBY, TUTOR, declarations};
pub use error::ArcadeError;
pub use error::GameStoreError;
pub use options::{GoOptions, Opponent, schema as options_schema};
#[cfg(feature = "redis")]
pub use redis_games::{RedisArcade, RedisGames, start_on_redis};
pub use seat::Seat;
pub use serve::{
    ArcadeApp, ArcadeServer, Backing, serve_stdio, start, start_conformance, start_with,
};
pub use store::{GameStore, Games, MemoryGames, Record, with_games};
pub use table::Table;
pub use tell::BotTurn;
