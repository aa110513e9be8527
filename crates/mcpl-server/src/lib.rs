//! The RFC-014 server SDK: write a toolset server in a page of code, and get every server rule
//! of RFC-014 (Tool Presence, Toolsets and Surfaces) right without thinking about revs,
//! carriers or principals.
//!
//! You declare tools and toolsets, and write app code that says what is true now ("`play` is
//! visible in game `vs-bot`", "this game's legal moves are A1 and B2", "the opponent moved").
//! The SDK keeps each principal's state, answers `tools/list`, `toolsets/open|close|list`
//! and the compatibility tools, gates and validates calls, and turns your changes into hint
//! changes on the right carrier with consecutive revs per connection.
//!
//! # The room
//!
//! The core ([`Session`], one per connection, and [`Server`], shared) is sans-IO: it never
//! reads a clock, spawns a task, opens a socket or calls a store. Messages, `now` and the
//! principal's stored state ([`Versioned`]) come in through `handle_*`; what to write, what
//! app code to run, what to store ([`Effect::Write`], a [`WriteSet`] with the version it was
//! computed from) and what to tell other connections come out of [`Session::poll_effect`].
//! A step whose write conflicts runs again on the state the store returns. It uses
//! `mcpl-protocol` and `jsonschema` only. The tokio [`driver`] (default feature `tokio`) adds
//! `mcpl-rpc`, awaits the [`PrincipalStore`] for each session, and runs sessions over stdio,
//! WebSocket or any other `mcpl_rpc::Transport`.
//!
//! # Writing a server
//!
//! 1. **Declare** with [`Declarations`]: static tools ([`ToolDef::new`]), dynamic tools
//!    ([`ToolDef::dynamic`]), tools in an undeclared group the host gates
//!    ([`ToolDef::group`], §5.4), and toolsets ([`ToolsetDef`]) with a title, summary,
//!    [`default_open`](ToolsetDef::default_open), [`instances`](ToolsetDef::instances) and an
//!    [`options_schema`](ToolsetDef::options_schema). Tools start visible unless
//!    [`hidden`](ToolDef::hidden). [`Declarations::build`] checks names and compiles every
//!    schema (draft 2020-12).
//! 2. **Implement [`driver::App`]**: `call_tool`, and optionally `open` (start a game; return
//!    [`OpenReply`] with a title and content, or [`OpenReply::refuse`]) and `close` (a forfeit;
//!    [`CloseReply`], whose text is also the `ended` record's reason).
//! 3. **Change state through the [`Context`]** each call gets: `ctx.show("play")`,
//!    `ctx.hide("pass")`, `ctx.here().define(tool)` for a per-instance definition (legal
//!    moves as an enum), `ctx.here().retitle(..)`, `ctx.here().end(reason)` when a game is
//!    over, `ctx.update()` for any scope of the caller's principal, and
//!    `ctx.update_for(&other)` for another principal (the opponent in a shared game: they get
//!    it as a push). Attach an [`Event`] to explain a change, and suggest opens with
//!    [`Update::suggest_open`]. Work that must follow the call in rev order (the bot's
//!    reply to a move) starts from [`Context::after_commit`], which runs once the call's
//!    result is queued. A call the host cancelled keeps running unless app code checks
//!    [`Context::is_cancelled`]; its changes then go as `tools/hints`.
//! 4. **Push from the server's own world** (a bot that moves later, an idle timer) with
//!    [`driver::Handle::apply`]: an [`Update`] for a principal, usually with an
//!    [`Event::about`] the instance. Every connection of the principal gets it: on a
//!    `push/event` carrying the hints where `pushEvents` is granted, else as `tools/hints`.
//!    Make the [`driver::Handle`] first and give the app a clone. An idle timeout is
//!    `update.instance(toolset, name).end(reason)`: the instance closes everywhere and an
//!    `ended` record is kept for hosts that were away.
//! 5. **Serve**: [`driver::Runtime::serve_stdio`] (one principal per process), or
//!    [`driver::Runtime::serve`] with a principal the operator's [`Identity`] derived from the
//!    transport (a bearer-token map for WebSocket and HTTP; never from what the client claims).
//!
//! What the SDK does for you, by rule: lists every tool with presence, visibility and toolset
//! to `toolHints` hosts and tailors the list for others (§4.1, §6.3); answers calls to
//! invisible tools or closed toolsets with a tool error saying why (§4.1); routes calls by
//! `mcpl/instance` and names the open instances when it cannot (§4.3); adopts opens of what is
//! already open and reports options not applied (§5.2); refuses bad names without
//! substituting one and chooses names for unnamed opens (§5.2); answers `toolsets/list` with
//! a full statement that always takes a rev, plus `ended` records kept an hour (§5.3); shares
//! state between connections of one principal, each with its own rev counter (§5.6); puts a
//! call's consequences in its result, something else's on a push or `tools/hints`, and a
//! cancelled call's in `tools/hints` (§6.2); offers `toolset_open`, `toolset_choose` and
//! `toolset_close` with a current instance to hosts without `toolHints` (§11); announces
//! `mcpl/manifestChanged` when declarations change, ending instances of removed toolsets
//! (vector 31).
//!
//! # Example
//!
//! A complete server: a Go-like toolset with instances whose bot answers later with a push
//! that carries the hints, and a static tool.
//!
//! ```no_run
//! use mcpl_protocol::mcp::CallToolResult;
//! use mcpl_server::driver::{App, Handle, Runtime};
//! use mcpl_server::{
//!     Context, Declarations, Event, OpenReply, Principal, Server, ServerConfig, ToolDef,
//!     ToolsetDef, Update, WallClock,
//! };
//! use serde_json::{Map, Value, json};
//! use std::time::{Duration, Instant, SystemTime};
//!
//! struct Go {
//!     handle: Handle,
//! }
//!
//! impl App for Go {
//!     async fn open(&self, ctx: &mut Context) -> OpenReply {
//!         let size = ctx.options().get("size").and_then(Value::as_u64).unwrap_or(9);
//!         ctx.show("play"); // tools start visible unless declared hidden; this is explicit
//!         OpenReply::text(format!("New {size}x{size} game; your move."))
//!             .title(format!("Go {size}x{size}"))
//!     }
//!
//!     async fn call_tool(&self, ctx: &mut Context, tool: &str, args: Map<String, Value>) -> CallToolResult {
//!         if tool != "play" {
//!             return CallToolResult::text("Ada is online.");
//!         }
//!         // The call's own consequence rides in its result: `play` is hidden.
//!         ctx.hide("play");
//!         // The bot answers once this result is written (so its push takes the next rev,
//!         // §6.1); its move reaches every connection of the principal on a push that
//!         // carries `play` visible again.
//!         let (handle, who) = (self.handle.clone(), ctx.principal().clone());
//!         let game = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
//!         ctx.after_commit(move || {
//!             tokio::spawn(async move {
//!                 tokio::time::sleep(Duration::from_millis(300)).await; // thinking
//!                 let mut update = Update::new();
//!                 update.instance("go", &game).show("play");
//!                 update.event(Event::text("White played E5.").about("go", Some(&game)));
//!                 let _ = handle.apply(&who, update);
//!             });
//!         });
//!         CallToolResult::text(format!("You played {}.", args["move"]))
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let decls = Declarations::new("go-server", "0.1.0")
//!         .surface("Go", Some("Games of Go"))
//!         .tool(ToolDef::new("who", "List the agents online."))
//!         .toolset(
//!             ToolsetDef::new("go", "Go")
//!                 .summary("A game of Go against the bot")
//!                 .instances()
//!                 .options_schema(json!({"type": "object",
//!                     "properties": {"size": {"enum": [9, 13, 19]}}}))
//!                 .tool(ToolDef::new("play", "Play a move.").input_schema(json!({
//!                     "type": "object", "required": ["move"],
//!                     "properties": {"move": {"type": "string"}}}))),
//!         )
//!         .build()?;
//!     let clock = WallClock::new(Instant::now(), SystemTime::now());
//!     let handle = Handle::new(Server::new(decls, ServerConfig::new(clock)));
//!     let runtime = Runtime::new(handle.clone(), Go { handle });
//!     runtime.serve_stdio(Principal::authenticated("local")).await?;
//!     Ok(())
//! }
//! ```
//!
//! Without the driver, feed a [`Session`] yourself: see its docs for the method kinds and the
//! drain order; answer its [`Effect::Load`] and [`Effect::Write`] from any store (or from a
//! [`MemoryStore`] in place, with [`Session::answer_from`]); and see `tests/common/mod.rs` for
//! an in-memory harness and `tests/steps.rs` for a session driven with no store at all.
//!
//! # Layout
//!
//! Modules depend one way (`scripts/check-cycles` checks it), from the bottom up:
//!
//! - `principal`: [`Principal`], [`ConnectionId`], [`CallId`], [`Identity`], [`TokenMap`].
//! - `error`: [`Error`]. `clock`: [`WallClock`] for timestamps without reading a clock.
//!   `schema`: [`Schema`], argument and option validation with `jsonschema`.
//! - `decl`: [`Declarations`], [`ToolDef`], [`ToolsetDef`] and the compiled [`Catalog`]
//!   (with the manifest and its §17.2 revision), and §11's tool names.
//! - `store`: [`PrincipalState`], [`Versioned`], [`WriteSet`], [`Written`], the async
//!   [`PrincipalStore`] seam (for drivers) and [`MemoryStore`].
//! - `update`: [`Update`], [`Scoped`], [`Event`], [`PrincipalChange`]: changes app code
//!   records, and their pure commit to a state.
//! - `context`: [`Context`], [`Call`], [`CallKind`], [`Reply`], [`OpenReply`],
//!   [`CloseReply`], [`Outcome`], [`AfterCommit`].
//! - `shared`: [`ServerConfig`] and what every session shares (declarations, store,
//!   settings).
//! - `session`: the sans-IO [`Session`] and its [`Effect`]s; inside, `step` (inputs run as
//!   steps on the state copy, writes, reruns on conflict), `carrier` (revs and carriers),
//!   `statement` (hint entries and full statements), `catalog` (`initialize`, `tools/list`,
//!   grants, manifest), `toolsets` (`toolsets/*`), `compat` (§11's tools) and `call`
//!   (`tools/call` routing, gating and validation).
//! - `server`: [`Server`]: makes sessions, and the pure commits ([`Server::apply_to`],
//!   [`Server::end_removed`]) a driver runs between a store read and a write.
//! - `local`: [`Session::answer_from`] and [`Server::apply_now`], for harnesses that
//!   answer a session's store effects in place.
//! - [`driver`] (feature `tokio`): [`driver::App`], [`driver::Handle`] (pushes, catalog
//!   changes on an ordered committer task, a [`driver::Relay`] to other replicas) and
//!   [`driver::Runtime`] (`serve`, `serve_stdio`, `serve_ws` with a token map), awaiting the
//!   store for each session.

mod clock;
mod context;
mod decl;
#[cfg(feature = "tokio")]
pub mod driver;
mod error;
#[cfg(feature = "tokio")]
pub mod listen;
#[cfg(feature = "tokio")]
mod listen_options;
mod local;
#[cfg(feature = "tokio")]
pub mod observe;
mod principal;
mod schema;
mod server;
mod session;
mod shared;
mod store;
mod update;

pub use clock::{WallClock, iso8601};
pub use context::{AfterCommit, Call, CallKind, CloseReply, Context, OpenReply, Outcome, Reply};
pub use decl::{
    Catalog, Declarations, TOOLSET_CHOOSE, TOOLSET_CLOSE, TOOLSET_OPEN, ToolDef, ToolsetDef,
};
pub use error::Error;
pub use principal::{CallId, ConnectionId, Identity, Principal, PrincipalScope, TokenMap};
pub use schema::{Schema, SchemaError};
pub use server::{Removed, Server};
pub use session::{Effect, Session};
pub use shared::{DEFAULT_ENDED_TTL, ServerConfig};
pub use store::{
    MemoryStore, OpenKey, OpenState, Opener, PrincipalState, PrincipalStore, StoreError,
    StoreFuture, StoredEnd, ToolState, Versioned, WriteSet, Written,
};
pub use update::{Event, PrincipalChange, Scoped, Update};
