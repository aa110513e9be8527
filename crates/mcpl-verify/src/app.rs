//! The app the verification server runs: an instanced toolset `game` (tools `board`, `play`,
//! `pass`), a plain toolset `notes` (tool `note`) and a tool outside toolsets (`clock`) that
//! the schedules move between static and dynamic, with a little app code that changes
//! visibility on open and on `play`.

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    Call, CallKind, CloseReply, Declarations, OpenReply, Reply, ToolDef, ToolsetDef,
};
use serde_json::json;

/// The tools of the instanced toolset, in a fixed order (for seeded choices).
pub const GAME_TOOLS: [&str; 3] = ["board", "play", "pass"];

/// The tool outside toolsets that schedules move between static and dynamic (§4.2).
pub const FREE_TOOL: &str = "clock";

/// The instance names the schedules use.
pub const INSTANCES: [&str; 2] = ["a", "b"];

/// The declarations: `game` (instanced), `notes` (plain) and the free tool `clock`.
pub fn declarations() -> Declarations {
    Declarations::new("verify", "0.1.0")
        .tool(ToolDef::new(FREE_TOOL, "Show the time."))
        .toolset(
            ToolsetDef::new("game", "Go")
                .summary("A game of Go")
                .instances()
                .tool(ToolDef::new("board", "Show the board."))
                .tool(ToolDef::new("play", "Play a move.").input_schema(
                    json!({"type": "object", "properties": {"move": {"type": "string"}}}),
                ))
                .tool(ToolDef::new("pass", "Pass your turn.")),
        )
        .toolset(ToolsetDef::new("notes", "Notes").tool(ToolDef::new("note", "Write a note.")))
}

/// The definition of `play` offering move `n`.
pub fn play_def(n: u8) -> Tool {
    let mut t = Tool::new("play");
    t.description = Some(json!(format!("Play a move (v{n}).")));
    t.input_schema = json!({"type": "object", "properties": {"move": {"enum": [format!("m{n}")]}}});
    t
}

/// What each open, close and tool call does. `serial` numbers the app's replies in the
/// world, so each close's reason (its ended record's reason) is unique: a notice can then be
/// counted by its text.
pub fn run(call: &mut Call, serial: u64) -> Reply {
    let ctx = &mut call.context;
    match &call.kind {
        CallKind::Open => {
            if ctx.toolset().is_some_and(|t| t.as_str() == "game") {
                ctx.here().show("board").show("play").show("pass");
            }
            Reply::Open(OpenReply::text("opened"))
        }
        CallKind::Close { .. } => Reply::Close(CloseReply::text(format!("closed-c{serial}"))),
        CallKind::Tool { tool, .. } => {
            if tool.as_str() == "play" {
                ctx.here().hide("play").hide("pass");
            }
            Reply::Tool(CallToolResult::text(format!("{tool} done")))
        }
        _ => Reply::Tool(CallToolResult::error("unexpected call")),
    }
}
